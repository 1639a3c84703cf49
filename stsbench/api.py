"""The public Python API: ``stsbench.evaluate`` and ``stsbench.analyze`` on a name, a folder or a live model.

:func:`evaluate` is :func:`stsbench.evaluation.run.evaluate`, the function ``stsbench run`` calls (one entry
point for one job). Both return the typed results that ``stsbench run`` / ``stsbench analyze`` write
(:class:`~stsbench.evaluation.run.RunResult` holding :class:`~stsbench.results.schema.TaskResult` records;
:class:`~stsbench.analyses.runner.AnalysisRun`) and write files only when given ``output``. A live model is turned into an encoder by
:func:`stsbench.encoders.load.as_encoder`; its embeddings are cached under a fingerprint of its weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stsbench.encoders.base import EncodeOptions
from stsbench.encoders.load import build_encoder
from stsbench.evaluation.run import evaluate

__all__ = ["analyze", "evaluate"]


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
    prompt: str | None = None,
    prompt_name: str | None = None,
    **options: Any,
):
    """Run analysis ``name`` (``length_bias``, ``align_uniform``, ...) on one model, as ``stsbench analyze`` does.

    ``model`` is anything :func:`evaluate` takes; ``options`` are the analysis' own options. Returns the
    :class:`~stsbench.analyses.runner.AnalysisRun` (``.results[label]`` is the typed result). ``prompt`` /
    ``prompt_name``: as :func:`evaluate`'s (prepended to every text; recorded in each result's ``model``).
    """
    from stsbench.analyses.runner import run_analysis

    encode = EncodeOptions(
        pooler=pooler, max_length=max_length, device=device, prompt=prompt, prompt_name=prompt_name,
        batch_size=batch_size, cache_dir=cache_dir, use_cache=use_cache,
    )  # fmt: skip
    encoders = [build_encoder(model, encode, tokenizer=tokenizer)]
    where = dict(data_dir=data_dir, output=Path(output) if output is not None else None)
    # the encoder is built: encode= lets the run record the batch size and the maximum length asked for
    command = "stsbench.analyze (Python API)"
    return run_analysis(name, encoders=encoders, encode=encode, command=command, **where, **options)
