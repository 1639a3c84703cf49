"""The evaluation run: load every task's data, encode all their sentences once, score, write results."""

from __future__ import annotations

import logging
import sys
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

from stsbench.encoders import Encoder, load_encoder
from stsbench.encoders.base import EmbeddingTable, unique_texts
from stsbench.paths import resolve_data_dir
from stsbench.results.schema import TaskResult
from stsbench.results.store import make_provenance, model_info, write_result
from stsbench.tasks.base import Mode, Task
from stsbench.tasks.registry import resolve_tasks

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    """What one ``stsbench run`` produced."""

    model: str
    mode: str
    pooler: str
    results: list[TaskResult]
    paths: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # tasks without a split for this mode
    timings: dict[str, float] = field(default_factory=dict)


def evaluate_encoder(
    encoder: Encoder,
    tasks: list[Task],
    mode: Mode,
    data_dir: Path,
    *,
    seed: int = 1111,
    batch_size: int = 128,
    show_progress: bool = True,
    output: Path | None = None,
    command: str | None = None,
) -> RunResult:
    """Score ``encoder`` on ``tasks``; with ``output``, write one results file per task as it completes.

    All data is read and validated before anything is encoded, so bad data fails before any cost and
    before any file is written.
    """
    mode = Mode(mode)
    kept = [t for t in tasks if t.supports(mode)]
    skipped = [t.name for t in tasks if not t.supports(mode)]
    t0 = time.perf_counter()
    loaded = [(t, t.load(data_dir, mode)) for t in kept]
    texts = unique_texts(t.texts(d) for t, d in loaded)
    t1 = time.perf_counter()
    vectors = encoder.encode(texts, batch_size=batch_size, show_progress=show_progress)
    table = EmbeddingTable(texts, vectors)
    t2 = time.perf_counter()
    run = RunResult(
        encoder.info.name,
        mode.value,
        encoder.info.pooler,
        [],
        skipped=skipped,
        timings={"load": t1 - t0, "encode": t2 - t1},
    )
    config = {"seed": seed, "batch_size": batch_size, "n_sentences": len(texts)}
    for task, data in loaded:
        start = time.perf_counter()
        scores = task.evaluate(data, table, mode, seed)
        elapsed = time.perf_counter() - start
        prov = make_provenance(
            data_dir,
            task.files(data_dir, mode),
            {"encode_all_tasks": t2 - t1, "evaluate": elapsed},
            command,
            encoder,
        )
        result = TaskResult(
            task.name,
            task.kind,
            mode.value,
            scores.reported,
            scores.metric,
            scores.details,
            model_info(encoder),
            {**config, "task_sentences": len(unique_texts([task.texts(data)]))},
            prov,
            scores.n_pairs,
        )
        run.results.append(result)
        if output is not None:
            run.paths.append(write_result(output, result))
    run.timings["evaluate"] = time.perf_counter() - t2
    return run


def run(
    model: str,
    tasks: str | list[str] = "sts",
    mode: str = "test",
    *,
    data_dir: Path | None = None,
    pooler: str | None = None,
    max_length: int | None = None,
    batch_size: int = 128,
    device: str | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    output: Path | None = None,
    seed: int = 1111,
    show_progress: bool = True,
    command: str | None = None,
    dtype: str = "float32",
    revision: str | None = None,
) -> RunResult:
    """``stsbench run`` as a library call (``revision``: of a hub id, a branch, tag or commit)."""
    task_list = resolve_tasks(tasks)
    mode = Mode(mode)
    root = resolve_data_dir(data_dir)
    encoder = load_encoder(
        model,
        pooler=pooler,
        max_length=max_length,
        device=device,
        cache_dir=cache_dir,
        use_cache=use_cache,
        dtype=dtype,
        revision=revision,
    )
    result = evaluate_encoder(
        encoder,
        task_list,
        mode,
        root,
        seed=seed,
        batch_size=batch_size,
        show_progress=show_progress,
        output=output,
        command=command,
    )
    if result.skipped and show_progress:
        log.info("%s have no %s split; skipped", ", ".join(result.skipped), mode.value)
    return result


class _CallableModule(types.ModuleType):
    """The module is also the public function: ``stsbench.evaluate(model, ...)`` is :func:`stsbench.api.evaluate`.

    Python sets ``stsbench.evaluate`` to this submodule when it is imported, so the package cannot hold a
    function of the same name; the module answers the call instead, and ``stsbench.evaluate.run`` still works.
    """

    def __call__(self, *args, **kwargs) -> RunResult:
        from stsbench.api import evaluate

        return evaluate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
