"""The public Python API: ``stsbench.evaluate`` and ``stsbench.analyze`` on a name, a folder or a live model.

Both return the typed results that ``stsbench run`` / ``stsbench analyze`` write (:class:`~stsbench.evaluate.RunResult`
holding :class:`~stsbench.results.schema.TaskResult` records; :class:`~stsbench.analyses.runner.AnalysisRun`) and
write files only when given ``output``. A live model is turned into an encoder by
:func:`stsbench.encoders.live.as_encoder`; its embeddings are cached under a fingerprint of its weights.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from stsbench.evaluate import RunResult

log = logging.getLogger(__name__)


def evaluate(
    model: Any,
    tasks: str | list[str] = "sts",
    mode: str = "test",
    pooler: str | None = None,
    *,
    tokenizer: Any = None,
    data_dir: Path | None = None,
    output: Path | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    batch_size: int = 128,
    max_length: int | None = None,
    device: str | None = None,
    dtype: str = "float32",
    seed: int = 1111,
    show_progress: bool = False,
    revision: str | None = None,
    bootstrap: int = 1000,
    allow_modified_data: bool = False,
) -> RunResult:
    """Score ``model`` on ``tasks`` exactly as ``stsbench run`` does.

    ``model``: a name, hub id or folder (as ``--model``); a ``transformers`` model with its ``tokenizer``
    (pooler default ``cls``, SimCSE's); a ``SentenceTransformer`` (its own pooling unless ``pooler`` is given);
    or any object with ``encode(list[str]) -> array`` (not cached unless it carries an ``info.fingerprint``).
    ``dtype`` and ``revision`` (branch, tag or commit of a hub id) apply to models loaded by name; a live model
    is run in the dtype it has.
    ``result.results[i].reported`` is the figure of the table (Spearman x 100, 2 decimals), ``.interval`` its
    95% interval (STS: a percentile bootstrap over pairs with ``bootstrap`` resamples seeded by ``seed``, 0 for
    none; ``result.average`` holds the STS Avg.'s); ``result.pairs[task]`` the per-pair cosines and gold scores.
    Data that differs from the canonical files is refused unless ``allow_modified_data`` (then recorded in each
    result's ``provenance.data_modified``).
    """
    from stsbench.encoders import load_encoder
    from stsbench.evaluate import check_task_data, evaluate_encoder
    from stsbench.paths import resolve_data_dir
    from stsbench.tasks.base import Mode
    from stsbench.tasks.intervals import check_bootstrap
    from stsbench.tasks.registry import resolve_tasks

    check_bootstrap(bootstrap)  # before a model loads
    mode = Mode(mode)
    task_list, root = resolve_tasks(tasks), resolve_data_dir(data_dir)
    check_task_data(task_list, mode, root, allow_modified_data)

    load = {"pooler": pooler, "max_length": max_length, "device": device, "tokenizer": tokenizer}
    was_training = getattr(model, "training", False) is True  # before loading: that puts it in eval mode
    encoder = load_encoder(
        model, cache_dir=cache_dir, use_cache=use_cache, dtype=dtype, revision=revision, **load
    )
    try:
        result = evaluate_encoder(
            encoder,
            task_list,
            mode,
            root,
            seed=seed,
            batch_size=batch_size,
            show_progress=show_progress,
            output=Path(output) if output is not None else None,
            command="stsbench.evaluate (Python API)",
            bootstrap=bootstrap,
            allow_modified_data=allow_modified_data,
        )
    finally:  # a live model is run in eval mode (no dropout); hand it back as it came
        if was_training:
            model.train()
    if result.skipped:
        log.info("%s have no %s split; skipped", ", ".join(result.skipped), mode.value)
    return result


def analyze(
    name: str,
    model: Any,
    *,
    tokenizer: Any = None,
    pooler: str | None = None,
    data_dir: Path | None = None,
    output: Path | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    batch_size: int = 128,
    max_length: int | None = None,
    device: str | None = None,
    **options: Any,
):
    """Run analysis ``name`` (``length_bias``, ``align_uniform``, ...) on one model, as ``stsbench analyze`` does.

    ``model`` is anything :func:`evaluate` takes; ``options`` are the analysis' own options. Returns the
    :class:`~stsbench.analyses.runner.AnalysisRun` (``.results[label]`` is the typed result).
    """
    from stsbench.analyses.runner import run_analysis
    from stsbench.encoders import load_encoder

    load = {"pooler": pooler, "max_length": max_length, "device": device, "tokenizer": tokenizer}
    encoder = load_encoder(model, cache_dir=cache_dir, use_cache=use_cache, **load)
    return run_analysis(
        name,
        encoders=[encoder],
        data_dir=data_dir,
        output=Path(output) if output is not None else None,
        batch_size=batch_size,
        command="stsbench.analyze (Python API)",
        **options,
    )
