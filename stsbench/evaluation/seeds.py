"""``stsbench run --model OUT`` on a seeds folder: evaluate every finished seed, then the seed aggregate.

Each ``OUT/seed-<s>`` checkpoint is evaluated as its own model (:func:`stsbench.evaluation.run.evaluate_model`,
its results written as usual under ``<output>/<model_slug(OUT/seed-<s>)>/``); then per task and Avg. the seeds'
values, mean, std, n and 95% t-interval go to ``<output>/<model_slug(OUT)>/<pooler>/<mode>/seeds.json``
(:mod:`stsbench.results.runs`). A seed that has not finished training is left out, and named.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stsbench.encoders.base import EncodeOptions
from stsbench.errors import StsbenchError
from stsbench.evaluation.run import RunResult, evaluate_model
from stsbench.metrics import AVG, raw_average, simcse_average
from stsbench.results.runs import RUN_META, SEEDS_FILE, build_aggregate, seed_dir, seed_dirs, write_aggregate
from stsbench.results.schema import SEED_RUNS_KIND, read_json

log = logging.getLogger(__name__)


@dataclass
class SeedsRun:
    """What ``stsbench run`` on a seeds folder produced."""

    aggregate: dict[str, Any]  # the seed aggregate, as written
    path: Path | None  # where it was written (None without an output folder)
    results: dict[int, RunResult]  # each seed's own run
    left_out: list[str] = field(default_factory=list)  # unfinished seeds, one note each


def seed_scores(result: RunResult, raw: bool = False) -> dict[str, float]:
    """A seed's figures by task, with ``Avg.`` (``STS Avg.`` and ``Transfer Avg.`` when both kinds ran).

    ``raw``: the unrounded figures (:attr:`TaskResult.raw`), the Avg. their plain mean: what tests read.
    """
    figure = (lambda r: r.raw) if raw else (lambda r: r.reported)
    scores: dict[str, float] = {r.task: figure(r) for r in result.results}
    kinds = [k for k in ("sts", "transfer") if any(r.task_type == k for r in result.results)]
    for kind in kinds:
        values = [figure(r) for r in result.results if r.task_type == kind]
        avg = raw_average(values) if raw else simcse_average(values)
        label = AVG if len(kinds) == 1 else f"{'STS' if kind == 'sts' else 'Transfer'} {AVG}"
        if avg is not None:
            scores[label] = avg
    return scores


def _not_trained(folder: Path) -> str | None:
    """Why a seed's run folder has no kept checkpoint to evaluate; None when it has one."""
    from stsbench.train.log import run_status

    status = run_status(folder)
    if status == "finished" and (folder / RUN_META).is_file():
        return None
    return "finished without a checkpoint" if status == "finished" else f"not finished ({status})"


def finished_seeds(folder: str) -> tuple[dict[int, str], list[str]]:
    """The seeds of ``folder`` whose training finished with a checkpoint, and a note for each one left out.

    A seed's model name is ``folder/seed-<s>``, ``folder`` as given (its results folder is named from it).
    """
    chosen, left_out = {}, []
    for s, d in seed_dirs(Path(folder).expanduser()).items():
        why = _not_trained(d)
        if why is None:
            chosen[s] = f"{folder.rstrip('/')}/{d.name}"
        else:
            left_out.append(f"seed {s} left out: {d} is {why}")
    return chosen, left_out


def require_every_seed(folder: str) -> None:
    """Refuse, in one line, a seeds folder with a seed not trained to its kept checkpoint yet.

    The seeds are those of ``OUT/seeds.json`` and the ``seed-<s>`` folders. ``stsbench compare`` compares a
    method over all the seeds it was trained with: leaving a failed one out would pick the seeds that worked.
    """
    out = Path(folder).expanduser()
    records = _seed_records(out)
    seeds = sorted(set(seed_dirs(out)) | set(records))
    for s in seeds:
        d = seed_dir(out, s)
        why = _not_trained(d) if d.is_dir() else f"not started (no {d.name} folder)"
        if why is None:
            continue
        error = records.get(s, {}).get("error")
        if error:
            why += f"; it failed: {error}"
        if why.startswith("finished"):  # --resume keeps a finished seed: only training it again helps
            fix = f"train it again with `stsbench train ... --seed {s} --output {d} --overwrite`"
        else:
            listed = ",".join(map(str, seeds))
            fix = f"finish it with `stsbench train ... --seeds {listed} --output {folder} --resume`"
        raise StsbenchError(f"{folder}: seed {s} has no kept checkpoint ({why}); {fix}")


def _seed_records(out: Path) -> dict[int, dict[str, Any]]:
    """The per-seed records of ``OUT/seeds.json`` (none without that file), by seed."""
    path = out / SEEDS_FILE
    data = read_json(path) if path.is_file() else None
    runs = data.get("runs") if isinstance(data, dict) and data.get("kind") == SEED_RUNS_KIND else None
    if not isinstance(runs, list):
        return {}
    return {r["seed"]: r for r in runs if isinstance(r, dict) and isinstance(r.get("seed"), int)}


def run_seeds(
    folder: str, tasks: str | list[str], mode: str, encode: EncodeOptions, **options: Any
) -> SeedsRun:
    """Evaluate every finished seed of ``folder`` and aggregate.

    ``encode`` and ``options`` are :func:`stsbench.evaluation.run.evaluate_model`'s, the same for every seed.
    """
    seeds, left_out = finished_seeds(folder)
    for note in left_out:
        log.warning("%s (finish it with stsbench train ... --seeds ... --resume)", note)
    if not seeds:
        raise StsbenchError(
            f"{folder} holds no seed that finished training; finish them with "
            f"`stsbench train ... --seeds ... --output {folder} --resume`"
        )
    results = {s: evaluate_model(name, tasks, mode, encode, **options) for s, name in seeds.items()}
    poolers = sorted({r.pooler for r in results.values()})
    if len(poolers) > 1:
        raise StsbenchError(
            f"the seeds of {folder} evaluate with different poolers ({', '.join(poolers)}); pass --pooler"
        )
    first = next(iter(results.values()))
    per_seed = {
        s: {"model": r.model, "scores": seed_scores(r), "raw": seed_scores(r, raw=True)}
        for s, r in results.items()
    }
    aggregate = build_aggregate(folder, first.pooler, first.mode, per_seed)
    modified = {
        str(s): sorted({f for t in r.results for f in t.provenance.data_modified or ()})
        for s, r in results.items()
    }
    if any(modified.values()):  # the seeds whose figures are on data that differs from the canonical files
        aggregate["data_modified"] = {s: files for s, files in modified.items() if files}
    output = options.get("output")
    path = write_aggregate(output, aggregate) if output is not None else None
    return SeedsRun(aggregate, path, results, left_out)
