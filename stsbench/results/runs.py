"""Training runs and seeds as results: run folders, seeds, and what a recipe and its scale declare.

- one ``stsbench train --output DIR`` folder read into a :class:`TrainRun`: ``DIR/train_log.jsonl`` and, when
  the run saved a checkpoint, ``DIR/stsbench.json``. Records and files carry ``kind`` and ``schema_version``
  since those keys were added; older ones without them read as version 1. Every other file in a run folder
  (weights, tokenizer, ``last/``) belongs to the checkpoint and is not read. Tolerant like the report: a bad
  line or a bad ``stsbench.json`` is a warning naming it, and the rest of the run is used;
- the multi-seed layout: ``stsbench train --seeds 1,2,3 --output OUT`` trains ``OUT/seed-1/``... (each an
  ordinary run folder) and writes ``OUT/seeds.json`` (kind :data:`~stsbench.results.schema.SEED_RUNS_KIND`);
  ``stsbench run --model OUT`` evaluates each seed and writes
  ``<output>/<model_slug(OUT)>/<pooler>/<mode>/seeds.json`` (kind
  :data:`~stsbench.results.schema.SEED_AGGREGATE_KIND`);
- the runs a recipe declares, kept with their results (``<results>/recipe_runs.json``): which runs a sweep's
  points are, the setting of each point and the published row or cell each is held against. A report reads
  that here rather than working it out again from the runs' configs, so that its Ablations tables and sweep
  figures set beside each setting the cell the recipe names (the one its Reproduction section judges).
  ``stsbench reproduce`` writes the file before its report step (:func:`stsbench.reproduce.plan.prepare`); a
  report of results without one finds sweeps by their configs alone and sets beside them only what
  ``--against`` names;
- the scale results were made at (``<results>/scale.json``): a mini recipe's results are not the paper's
  setting (another backbone, fewer steps, a corpus slice). What says so belongs to the results, not to the
  command that happens to render them: ``stsbench reproduce`` writes the recipe's banner here
  (:func:`stsbench.reproduce.plan.mini_banner`), and every report of these results, by reproduce or by hand,
  sets it on each table and figure and in the images themselves.

Every file is documented in :mod:`stsbench.results.schema`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_json, atomic_write_text
from stsbench.results import schema
from stsbench.results.schema import JsonObject, Malformed, check_version, read_json, validated
from stsbench.results.write import model_slug, portable, resolve
from stsbench.tasks.registry import TASKS, task_version

T = TypeVar("T")
TRAIN_LOG = "train_log.jsonl"
RUN_META = "stsbench.json"
SEEDS_FILE = "seeds.json"
LEVEL = 0.95
_SEED_DIR = re.compile(r"seed-(\d+)")
RECIPE_RUNS_FILE = "recipe_runs.json"
SCALE_FILE = "scale.json"


@dataclass(frozen=True)
class TrainRun:
    """One ``stsbench train`` output folder: its config, its dev curve and how it ended."""

    path: str  # the run folder, relative to the scanned folder
    name: str  # the run folder's name
    config: JsonObject  # TrainConfig as a dict (from stsbench.json, else the log's start record)
    method: str  # ``simcse`` | ``esimcse``
    curve: tuple[tuple[int, float | None], ...]  # (step, STS-B dev Spearman in [-1, 1]) per evaluation
    best_step: int | None
    best_dev_spearman: float | None
    total_steps: int | None
    steps_done: int | None  # the ``end`` record's step; None while a run is unfinished
    wall_seconds: float | None
    train_rows: int | None
    queue_size: int | None
    eval_pooler: str | None  # from stsbench.json: what ``stsbench run --model DIR`` evaluates with
    has_checkpoint: bool
    folder: str = ""  # the run folder as read (what a relative ``output`` is relative to)
    # the hidden dropout the backbone trained with (``dropout``, else the backbone's own; None: not recorded)
    backbone_dropout: float | None = None
    # MoCoSE's maximum traceable distance (eq. 4) as the start record gives it: a number, or for a ramped EMA
    # weight ``{"start": d0, "end": d1}``; None for a method without one
    traceable_distance: float | schema.RampedDistance | None = None
    # (step, l_align, l_uniform) of each dev evaluation's STS-B dev embeddings (logs before they were kept: none)
    trajectory: tuple[tuple[int, float | None, float | None], ...] = ()

    @property
    def resolved_config(self) -> JsonObject:
        """The config with what the run resolved where it left an option unset: ``dropout``, the backbone's own.

        What runs are grouped by: an unset dropout and the backbone's value spelt out are one setting.
        """
        if self.config.get("dropout") is None and self.backbone_dropout is not None:
            return {**self.config, "dropout": self.backbone_dropout}
        return self.config

    @property
    def output(self) -> str:
        """The ``--output`` the run was given (what a task result's ``model.path`` points at), absolute.

        A copy of a run's files records it relative to the copy's folder (:mod:`stsbench.results.write`);
        files written before record it absolute.
        """
        given = self.config.get("output")
        return str(Path(resolve(str(given), self.folder or ".") or "").absolute()) if given else ""


def _as(
    path: Path, data: Any, tp: Any, kind: str, what: str | None, first: int | None = None, old: bool = False
) -> Any:
    """``data`` (``path`` parsed) as ``tp``: the one check of a file or record of one of the kinds above.

    None when it is not an object of ``kind`` (``old``: one without ``kind``, written before it, is).
    ``what`` names it in the line another schema version raises (``first``: the version of one without the
    key; None: not checked); raises :class:`~stsbench.results.schema.Malformed` when it does not match ``tp``
    (None: the data as it is, an event this stsbench does not know).
    """
    if not isinstance(data, dict) or data.get("kind", kind if old else None) != kind:
        return None
    if what:
        check_version(path, data, what, default=first)
    return validated(tp, data) if tp else data


def read_log(path: Path) -> tuple[list[schema.LogRecord], list[str]]:
    """The records of a ``train_log.jsonl``, each as its type; a line that is not one is a warning, skipped.

    A record of an ``event`` this stsbench does not know (a newer trainer's) is passed over without a word.
    """
    records, bad = [], []
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            bad.append(f"{path}:{no}: not a JSON line; skipped it")
            continue
        event = data.get("event") if isinstance(data, dict) else None
        tp = schema.RECORDS.get(event)  # type: ignore[arg-type]
        try:
            rec = _as(path, data, tp, schema.TRAIN_LOG_KIND, "training log", schema.FIRST_VERSION, True)
        except StsbenchError as exc:
            bad.append(f"{exc} (line {no}); skipped it")
        except Malformed as exc:
            bad.append(f"{path}:{no}: malformed {event!r} record ({exc}); skipped it")
        else:
            if rec is None:
                kind = isinstance(data, dict) and f"a training-log record ({data.get('kind')!r})"
                bad.append(f"{path}:{no}: not {kind or 'a JSON object'}; skipped it")
            elif tp:
                records.append(rec)
    return records, bad


def read_run_meta(path: Path) -> tuple[schema.RunMeta | None, str | None]:
    """A run's ``stsbench.json`` as :class:`RunMeta`, or None and the warning saying why it is not used."""
    what = "checkpoint description"
    try:
        meta = _as(path, read_json(path), schema.RunMeta, schema.RUN_KIND, what, schema.FIRST_VERSION, True)
    except StsbenchError as exc:  # unreadable, or another version
        return None, f"{exc}; the run's log is used alone"
    except Malformed as exc:
        return None, f"{path}: malformed {what} ({exc}); the run's log is used alone"
    return (meta, None) if meta else (None, f"{path}: not a {what} (a JSON object); ignored")


def load_train_run(folder: Path, rel: str) -> tuple[TrainRun | None, list[str]]:
    """Read one run folder (``train_log.jsonl``, and ``stsbench.json`` when there is a checkpoint)."""
    log = folder / TRAIN_LOG
    records, warnings = read_log(log)
    meta: schema.RunMeta | None = None
    if (folder / RUN_META).is_file():
        meta, warning = read_run_meta(folder / RUN_META)
        warnings += [warning] if warning else []
    start = next((r for r in records if isinstance(r, schema.StartRecord)), None)
    end = next((r for r in reversed(records) if isinstance(r, schema.EndRecord)), None)
    config = getattr(meta, "training", None) or getattr(start, "config", None)
    if not isinstance(config, dict) or "method" not in config:
        warnings.append(f"{log}: no training config (no 'start' record, no {RUN_META}); run skipped")
        return None, warnings
    evals = [r for r in records if isinstance(r, schema.EvalRecord)]
    selected = [(r.step, r.dev_spearman) for r in evals if r.best]
    best_step, best_dev = selected[-1] if selected else (None, None)
    if end is not None and end.best_step is not None:
        best_step, best_dev = end.best_step, end.best_dev_spearman
    resolved = getattr(getattr(meta, "resolution", None), "backbone_dropout", None)
    return TrainRun(
        path=rel,
        name=folder.name,
        config=config,
        method=str(config["method"]),
        curve=tuple((r.step, r.dev_spearman) for r in evals),
        best_step=best_step,
        best_dev_spearman=best_dev,
        total_steps=getattr(start, "total_steps", None),
        steps_done=getattr(end, "step", None),
        wall_seconds=getattr(end, "wall_seconds", None),
        train_rows=getattr(start, "train_rows", None),
        queue_size=getattr(meta, "queue_size", None),
        eval_pooler=getattr(meta, "pooler", None),
        has_checkpoint=meta is not None,
        folder=str(folder),
        backbone_dropout=resolved if resolved is not None else getattr(start, "backbone_dropout", None),
        traceable_distance=getattr(start, "traceable_distance", None),
        trajectory=tuple(
            (r.step, r.alignment, r.uniformity) for r in evals if (r.alignment, r.uniformity) != (None, None)
        ),
    ), warnings


def seed_dir(out: Path, seed: int) -> Path:
    """``OUT/seed-<seed>``."""
    return Path(out) / f"seed-{seed}"


def seed_dirs(out: Path) -> dict[int, Path]:
    """The ``seed-<s>`` folders under ``out``, by seed."""
    folders = Path(out).iterdir() if Path(out).is_dir() else ()
    found = {int(m.group(1)): p for p in folders if (m := _SEED_DIR.fullmatch(p.name)) and p.is_dir()}
    return dict(sorted(found.items()))


def is_seeds_folder(path: str | Path) -> bool:
    """``path`` holds ``seeds.json`` of kind seed runs, or ``seed-<s>/`` run folders (and is no run itself)."""
    path = Path(path).expanduser()
    if not path.is_dir() or (path / RUN_META).is_file():
        return False
    data = read_json(path / SEEDS_FILE) if (path / SEEDS_FILE).is_file() else None
    if isinstance(data, dict) and data.get("kind") == schema.SEED_RUNS_KIND:
        return True
    return any((d / TRAIN_LOG).is_file() or (d / RUN_META).is_file() for d in seed_dirs(path).values())


def summary_dict(values: Sequence[float]) -> schema.Summary:
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
    data = {
        "kind": schema.SEED_RUNS_KIND,
        "schema_version": schema.SCHEMA_VERSION,
        "seeds": [r["seed"] for r in runs],
        "runs": [{"path": seed_dir(Path(), r["seed"]).as_posix(), **r} for r in runs],
        "failed": [r["seed"] for r in runs if r["status"] != "finished"],
        "best_dev_spearman": best and {**best, "seeds": [r["seed"] for r in done], "level": LEVEL},
        "training": dict(training),
    }
    return atomic_write_json(Path(out) / SEEDS_FILE, data)


def build_aggregate(
    model: str, pooler: str, mode: str, per_seed: Mapping[int, Mapping[str, Any]]
) -> schema.SeedAggregate:
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
        "kind": schema.SEED_AGGREGATE_KIND,
        "schema_version": schema.SCHEMA_VERSION,
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


def tested_values(row: schema.Summary | Mapping[str, Any]) -> list[float]:
    """The figures a test over seeds reads from an aggregate's row: ``raw`` (unrounded), else ``values``."""
    return list(row.get("raw") or row["values"])


def write_aggregate(output: Path, aggregate: schema.SeedAggregate) -> Path:
    """Write the aggregate atomically; returns its path.

    ``<output>/<model_slug(model)>/<pooler>/<mode>/seeds.json``.
    """
    path = Path(output, model_slug(aggregate["model"]), aggregate["pooler"], aggregate["mode"], SEEDS_FILE)
    return atomic_write_json(path, portable_aggregate(aggregate, output))


def portable_aggregate(aggregate: schema.SeedAggregate, output: Path) -> schema.SeedAggregate:
    """The aggregate as its file holds it: the seeds folder and each seed's model name relative to ``output``."""
    data = schema.SeedAggregate(**aggregate)
    data["model"] = portable(data["model"], output)
    data["models"] = {s: portable(name, output) for s, name in data["models"].items()}
    return data


def _read_seeds(
    path: Path, kind: str, tp: type[T], what: str, fix: str, first: int | None = None
) -> T | None:
    try:
        return _as(path, read_json(path), tp, kind, what, first)  # type: ignore[no-any-return]
    except Malformed as exc:
        raise StsbenchError(f"{path}: malformed stsbench {what} ({exc}); {fix}") from None


def read_aggregate(path: Path) -> schema.SeedAggregate | None:
    """A seed aggregate file, validated; None for a JSON file of another kind (one line for a bad one)."""
    fix = "rerun `stsbench run --model OUT` on the seeds folder"
    return _read_seeds(path, schema.SEED_AGGREGATE_KIND, schema.SeedAggregate, "seed aggregate", fix)


def read_seed_runs(path: Path) -> schema.SeedRuns | None:
    """``OUT/seeds.json`` of a training's seeds, validated; None for a JSON file of another kind."""
    return _read_seeds(path, schema.SEED_RUNS_KIND, schema.SeedRuns, "seed runs", "train the seeds again", 1)


def declared_runs(recipe: Any) -> list[schema.DeclaredRun]:
    """A recipe's runs (a :class:`stsbench.recipes.Recipe`, which sits above this layer) as the file keeps them."""
    return [
        schema.DeclaredRun(r.name, r.label, r.method, r.sweep_of, dict(r.point), tuple(r.addresses))
        for r in recipe.runs
    ]


def write_recipe_runs(results_dir: Path, recipe: Any) -> Path:
    """Record ``recipe``'s runs with the results under ``results_dir`` (atomic), the file written whole.

    What the report reads is the recipe's runs as they are now (a subset's, ``reproduce --runs``, its own): a run
    dropped from the recipe, or left out of this subset, leaves the file.
    """
    runs = [{**asdict(r), "published": list(r.published)} for r in declared_runs(recipe)]
    path = Path(results_dir) / RECIPE_RUNS_FILE
    return _write_declared(path, schema.RECIPE_RUNS_KIND, recipe=recipe.name, runs=runs)


def _write_declared(path: Path, kind: str, **fields: Any) -> Path:
    """A file a recipe writes: ``kind``, ``schema_version``, then ``fields`` in this order (the bytes)."""
    data = {"kind": kind, "schema_version": schema.SCHEMA_VERSION, **fields}
    return atomic_write_text(path, json.dumps(data, indent=2) + "\n")


# each file a recipe writes, by its type: its kind, what it is, what it holds, how to write it again
_DECLARED = {
    schema.Scale: (schema.SCALE_KIND, "a scale file", "a banner", "write it again"),
    schema.RecipeRuns: (schema.RECIPE_RUNS_KIND, "a recipe's runs file", "its runs", "run reproduce again"),
}


def _read_declared(path: Path, tp: type[T]) -> T:
    """A file a recipe writes as ``tp``; one line when it is not readable JSON, not of its kind or not ``tp``.

    A scale file's banner must not be blank either.
    """
    kind, what, holding, again = _DECLARED[tp]
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StsbenchError(f"{path}: not readable JSON ({exc}); remove it or {again}") from None
    try:
        found = _as(path, data, tp, kind, None)
    except Malformed:
        found = None
    if found is None or not getattr(found, "banner", "-").strip():
        raise StsbenchError(f"{path}: not {what} (kind {kind!r} with {holding}); remove it")
    return found  # type: ignore[no-any-return]


def read_recipe_runs(folders: Iterable[str | Path]) -> dict[str, schema.DeclaredRun]:
    """The declared runs of ``folders`` by name (a name declared twice: the first folder's); malformed: one line."""
    found: dict[str, schema.DeclaredRun] = {}
    for folder in folders:
        path = Path(folder) / RECIPE_RUNS_FILE
        if path.is_file():
            declared = _read_declared(path, schema.RecipeRuns)
            for run in declared.runs:
                found.setdefault(run.name, run)
    return found


def write_scale(results_dir: Path, banner: str) -> Path:
    """Record ``banner`` as the scale of the results under ``results_dir`` (atomic)."""
    return _write_declared(Path(results_dir) / SCALE_FILE, schema.SCALE_KIND, banner=banner)


def read_scale(path: Path) -> schema.Scale:
    """One ``scale.json``, validated; a malformed file is a one-line error."""
    return _read_declared(path, schema.Scale)


def read_banners(folders: Iterable[str | Path]) -> list[str]:
    """The banners recorded in ``folders`` (each once, in folder order); a malformed file is a one-line error."""
    paths = [Path(folder) / SCALE_FILE for folder in folders]
    return list(dict.fromkeys(read_scale(path).banner for path in paths if path.is_file()))


def report_banner(folders: Iterable[str | Path], given: str | None = None) -> str | None:
    """The banner a report of ``folders`` carries: theirs, then ``given`` (``--banner``) where it adds to them."""
    return "; ".join(dict.fromkeys([*read_banners(folders), *([given] if given else [])])) or None
