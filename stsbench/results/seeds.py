"""The multi-seed layout: ``OUT/seed-<s>/`` run folders, ``OUT/seeds.json`` and the seed aggregate of results.

``stsbench train --seeds 1,2,3 --output OUT`` trains ``OUT/seed-1/``... (each an ordinary run folder) and
writes ``OUT/seeds.json`` (kind :data:`~stsbench.results.schema.SEED_RUNS_KIND`); ``stsbench run --model OUT``
evaluates each seed and writes ``<output>/<model_slug(OUT)>/<pooler>/<mode>/seeds.json`` (kind
:data:`~stsbench.results.schema.SEED_AGGREGATE_KIND`). Both are documented in :mod:`stsbench.results.schema`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from typing_extensions import NotRequired, TypedDict

from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_json
from stsbench.results.labels import model_slug
from stsbench.results.portable import portable
from stsbench.results.runs import RUN_META, TRAIN_LOG
from stsbench.results.schema import SCHEMA_VERSION, SEED_AGGREGATE_KIND, SEED_RUNS_KIND, JsonObject
from stsbench.results.store import check_version, read_json
from stsbench.tasks.registry import TASKS, task_version

SEEDS_FILE = "seeds.json"
LEVEL = 0.95
_SEED_DIR = re.compile(r"seed-(\d+)")


class Summary(TypedDict):
    """Values over seeds and their summary (:func:`~stsbench.stats.seeds.seed_summary`): a row of an aggregate."""

    values: list[float]  # per seed, in the order of the seeds (an aggregate: as printed, two decimals)
    mean: float
    std: float | None  # ddof 1; null with one seed
    n: int
    low: float | None  # the 95% t-interval of the mean; null with one seed
    high: float | None
    raw: NotRequired[list[float]]  # an aggregate's unrounded figures, what tests read (absent in older files)


class BestDevSummary(Summary):
    """``seeds.json``'s summary of the finished seeds' best dev Spearman."""

    seeds: list[int]
    level: float


class SeedRunEntry(TypedDict):
    """One seed of ``OUT/seeds.json``."""

    seed: int
    path: str  # ``seed-<s>``, relative to OUT
    status: Literal["finished", "failed"]
    error: str | None  # the failure's one line
    best_step: int | None
    best_dev_spearman: float | None  # raw, in [-1, 1]
    steps: int | None


class SeedRuns(TypedDict):
    """``OUT/seeds.json`` of ``stsbench train --seeds``: every seed's status and the summary of the finished ones."""

    kind: Literal["stsbench.seed_runs"]
    schema_version: NotRequired[int]
    seeds: list[int]
    runs: list[SeedRunEntry]
    failed: list[int]
    best_dev_spearman: BestDevSummary | None  # null when no seed finished
    training: JsonObject  # the options every seed shares (the config less seed and output)


class SeedAggregate(TypedDict):
    """``<output>/<model_slug(OUT)>/<pooler>/<mode>/seeds.json`` of ``stsbench run --model OUT``."""

    kind: Literal["stsbench.seed_aggregate"]
    schema_version: NotRequired[int]
    model: str  # OUT as given (relative to the --output in the file)
    pooler: str
    mode: str
    level: float
    seeds: list[int]
    models: dict[str, str]  # seed -> the model name of its results
    tasks: dict[str, Summary]  # per task and Avg., units of ``reported``
    task_versions: NotRequired[dict[str, int]]  # absent in aggregates written before it: every task version 1
    data_modified: NotRequired[
        dict[str, list[str]]
    ]  # seed -> its data files that differ from the canonical ones


def seed_dir(out: Path, seed: int) -> Path:
    """``OUT/seed-<seed>``."""
    return Path(out) / f"seed-{seed}"


def seed_dirs(out: Path) -> dict[int, Path]:
    """The ``seed-<s>`` folders under ``out``, by seed."""
    found = {}
    if Path(out).is_dir():
        for p in Path(out).iterdir():
            m = _SEED_DIR.fullmatch(p.name)
            if m and p.is_dir():
                found[int(m.group(1))] = p
    return dict(sorted(found.items()))


def is_seeds_folder(path: str | Path) -> bool:
    """``path`` holds ``seeds.json`` of kind seed runs, or ``seed-<s>/`` run folders (and is no run itself)."""
    path = Path(path).expanduser()
    if not path.is_dir() or (path / RUN_META).is_file():
        return False
    if (path / SEEDS_FILE).is_file():
        data = read_json(path / SEEDS_FILE)
        if isinstance(data, dict) and data.get("kind") == SEED_RUNS_KIND:
            return True
    return any((d / TRAIN_LOG).is_file() or (d / RUN_META).is_file() for d in seed_dirs(path).values())


def summary_dict(values: Sequence[float]) -> Summary:
    """``values`` and their :func:`~stsbench.stats.seeds.seed_summary` (mean, std, n, low, high) as JSON."""
    from stsbench.stats.seeds import seed_summary  # scipy.stats: only where seeds are summarised

    s = seed_summary(values, LEVEL)
    return {"values": list(values), **s.to_dict()}  # type: ignore[typeddict-item]


def write_seed_runs(out: Path, runs: Sequence[Mapping[str, Any]], training: Mapping[str, Any]) -> Path:
    """``OUT/seeds.json``: every seed's status and best dev score, and the summary over finished seeds.

    ``runs``: per seed ``seed``, ``status`` (``finished`` | ``failed``), ``error``, ``best_step``,
    ``best_dev_spearman`` (raw, in [-1, 1]), ``steps``; ``training``: the options every seed shares.
    """
    done = [r for r in runs if r["status"] == "finished" and r.get("best_dev_spearman") is not None]
    best = summary_dict([r["best_dev_spearman"] for r in done]) if done else None
    return atomic_write_json(
        Path(out) / SEEDS_FILE,
        {
            "kind": SEED_RUNS_KIND,
            "schema_version": SCHEMA_VERSION,
            "seeds": [r["seed"] for r in runs],
            "runs": [{"path": seed_dir(Path(), r["seed"]).as_posix(), **r} for r in runs],
            "failed": [r["seed"] for r in runs if r["status"] != "finished"],
            "best_dev_spearman": best and {**best, "seeds": [r["seed"] for r in done], "level": LEVEL},
            "training": dict(training),
        },
    )


def aggregate_path(output: Path, model: str, pooler: str, mode: str) -> Path:
    """``<output>/<model_slug(model)>/<pooler>/<mode>/seeds.json``."""
    return Path(output) / model_slug(model) / pooler / mode / SEEDS_FILE


def build_aggregate(
    model: str, pooler: str, mode: str, per_seed: Mapping[int, Mapping[str, Any]]
) -> SeedAggregate:
    """The seed aggregate: per task (and Avg.) the seeds' values, mean, std, n, low, high (units of ``reported``).

    ``per_seed``: seed -> ``{"model": name, "scores": {task: reported}, "raw": {task: unrounded}}``. A task every
    seed has is summarised (``values``: the figures as printed, two decimals, with their mean, std and interval;
    ``raw``: the unrounded ones, which tests read); the seeds must have the same tasks.
    """
    seeds = sorted(per_seed)
    names = list(per_seed[seeds[0]]["scores"])
    for s in seeds:
        if list(per_seed[s]["scores"]) != names:
            raise StsbenchError(
                f"seed {s} has tasks {', '.join(per_seed[s]['scores'])}, seed {seeds[0]} {', '.join(names)}; "
                "evaluate every seed on the same tasks"
            )
    tasks = {t: summary_dict([per_seed[s]["scores"][t] for s in seeds]) for t in names}
    for t, row in tasks.items():  # the unrounded figures beside the displayed ones: what tests read
        if all(t in per_seed[s].get("raw", {}) for s in seeds):
            row["raw"] = [per_seed[s]["raw"][t] for s in seeds]
    return {
        "kind": SEED_AGGREGATE_KIND,
        "schema_version": SCHEMA_VERSION,
        "model": model,
        "pooler": pooler,
        "mode": mode,
        "level": LEVEL,
        "seeds": seeds,
        "models": {str(s): per_seed[s]["model"] for s in seeds},
        "tasks": tasks,
        # the version of each task that scored the seeds (this stsbench's: they were just evaluated)
        "task_versions": {t: task_version(t) for t in names if t in TASKS},
    }


def tested_values(row: Summary | Mapping[str, Any]) -> list[float]:
    """The figures a test over seeds reads from an aggregate's row: ``raw`` (unrounded), else ``values``."""
    return list(row.get("raw") or row["values"])


def write_aggregate(output: Path, aggregate: SeedAggregate) -> Path:
    """Write the aggregate atomically at :func:`aggregate_path`; returns the path."""
    path = aggregate_path(output, aggregate["model"], aggregate["pooler"], aggregate["mode"])
    return atomic_write_json(path, portable_aggregate(aggregate, output))


def portable_aggregate(aggregate: SeedAggregate, output: Path) -> SeedAggregate:
    """The aggregate as its file holds it: the seeds folder and each seed's model name relative to ``output``."""
    data = SeedAggregate(**aggregate)
    data["model"] = portable(data["model"], output)
    if isinstance(data.get("models"), Mapping):
        data["models"] = {s: portable(name, output) for s, name in data["models"].items()}
    return data


def read_aggregate(path: Path) -> SeedAggregate | None:
    """A seed aggregate file, validated; None for a JSON file of another kind (one line for a bad one)."""
    from stsbench.results.validation import Malformed, validated

    data = read_json(path)
    if not isinstance(data, dict) or data.get("kind") != SEED_AGGREGATE_KIND:
        return None
    check_version(path, data, "seed aggregate")
    try:
        return validated(SeedAggregate, data)
    except Malformed as exc:
        raise StsbenchError(
            f"{path}: malformed stsbench seed aggregate ({exc}); rerun `stsbench run --model OUT` on the seeds folder"
        ) from None


def read_seed_runs(path: Path) -> SeedRuns | None:
    """``OUT/seeds.json`` of a training's seeds, validated; None for a JSON file of another kind."""
    from stsbench.results.validation import Malformed, validated

    data = read_json(path)
    if not isinstance(data, dict) or data.get("kind") != SEED_RUNS_KIND:
        return None
    check_version(path, data, "seed runs", default=1)
    try:
        return validated(SeedRuns, data)
    except Malformed as exc:
        raise StsbenchError(f"{path}: malformed stsbench seed runs ({exc}); train the seeds again") from None
