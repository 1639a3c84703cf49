"""The one reader of results folders: what ``check``, ``compare``, ``report`` and ``export-mteb`` find under a folder.

One scan, one set of rules, under ``DIR`` (recursively, in sorted path order):

- hidden files and folders (a name starting with ``.`` below ``DIR``: editor backups, ``.ipynb_checkpoints``, a
  copy set aside as ``.old/``, export-mteb's staging folder) are not results. They are skipped by every reader
  alike: a copy of a run kept aside would otherwise be a second measurement of each of its tasks (``check``
  refuses a task measured twice) or a second row of a report;
- a folder holding ``train_log.jsonl`` is a training run (``stsbench train``), read by
  :mod:`stsbench.results.runs` when asked; the files in it that are not stsbench results (the checkpoint's
  ``config.json``, tokenizer, ``stsbench.json``, ``last/``) are passed over without a word;
- ``*.json`` files are read by their ``kind``: each reader reads the kinds it uses (``kinds``); the other
  stsbench kinds are passed over (analysis results are listed in ``passed_over``; a run's ``average_sts.json``
  and the seed files silently); a JSON file that is not an stsbench file is a foreign file.

Every task result is checked against its own per-pair sidecar (:func:`stsbench.results.pairs.verify_result`),
every ``average_sts.json`` read against the task results beside it (:func:`~stsbench.results.pairs.verify_average`).
A file that cannot be read, is malformed, fails that check or is foreign is one line naming it: raised with
``strict`` (the comparisons, ``check``, ``compare`` and ``export-mteb``, never go on without a file), a warning
otherwise (``report`` goes on with the rest).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePath, PurePosixPath
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.progress import plural
from stsbench.results.pairs import verify_average, verify_result
from stsbench.results.portable import output_of, resolve, same_path
from stsbench.results.runs import TRAIN_LOG, TrainRun, load_train_run
from stsbench.results.schema import (
    ANALYSIS_KIND,
    AVERAGE_KIND,
    RECIPE_RUNS_KIND,
    SCALE_KIND,
    SEED_AGGREGATE_KIND,
    SEED_RUNS_KIND,
    TASK_KIND,
    AverageResult,
    JsonObject,
    ModelInfo,
    Provenance,
    TaskResult,
)
from stsbench.results.seeds import SEEDS_FILE, SeedAggregate, read_aggregate
from stsbench.results.store import OtherKind, Unreadable, read_json, result_from_json
from stsbench.tasks.registry import TASKS, task_version

# summaries beside the results, passed over silently: a run's average_sts.json (when not read), the seed files
SUMMARY_KINDS = (AVERAGE_KIND, SEED_RUNS_KIND, SEED_AGGREGATE_KIND, SCALE_KIND, RECIPE_RUNS_KIND)
ALL_KINDS = (TASK_KIND, ANALYSIS_KIND, AVERAGE_KIND)


@dataclass(frozen=True)
class TaskRecord:
    """One task results file."""

    path: str  # relative to the scanned folder, POSIX
    result: TaskResult
    verified: bool = False  # its figure recomputed from its own per-pair sidecar (STS results that have one)


@dataclass(frozen=True)
class AverageRecord:
    """One ``average_sts.json``: the STS Avg. of a run and its interval."""

    path: str
    result: AverageResult


@dataclass(frozen=True)
class AnalysisRecord:
    """One analysis results file, its ``result`` rebuilt as the analysis' own dataclass."""

    path: str
    analysis: str  # ``length_bias`` | ``align_uniform`` | ``spectrum`` | ``repetition_probe``
    variant: str  # the file's stem: ``length_bias_words``, ``align_uniform_dev``, ...
    result: Any
    model: ModelInfo
    config: JsonObject
    provenance: Provenance


@dataclass
class Collection:
    """Everything found under one results folder, and what could not be read."""

    root: str  # the folder as given (several merged by :func:`read_folders`: the first)
    tasks: list[TaskRecord] = field(default_factory=list)
    analyses: list[AnalysisRecord] = field(default_factory=list)
    runs: list[TrainRun] = field(default_factory=list)
    averages: list[AverageRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    run_dirs: list[str] = field(default_factory=list)  # every training-run folder, read or not
    passed_over: list[str] = field(default_factory=list)  # analysis files, when analyses were not read
    roots: tuple[str, ...] = ()  # every folder read, as given (:func:`read_folders`); empty: ``(root,)``

    @property
    def folders(self) -> tuple[str, ...]:
        """Every folder read, as given."""
        return self.roots or (self.root,)

    @property
    def empty(self) -> bool:
        """Nothing was read: no task, average or analysis result and no training run."""
        return not (self.tasks or self.averages or self.analyses or self.runs)

    def analyses_of(self, analysis: str) -> list[AnalysisRecord]:
        """Return the records of one analysis, in path order."""
        return [a for a in self.analyses if a.analysis == analysis]


def require_folder(root: str | Path, what: str = "`stsbench run`") -> Path:
    """The folder as a ``Path``; one line when it does not exist."""
    root = Path(root)
    if root.is_file():
        raise StsbenchError(f"{root} is a file, not a results folder; pass the folder that holds it: {root.parent}")
    if not root.is_dir():
        raise StsbenchError(f"results folder {root} does not exist; pass the --output of {what}")
    return root


def results_files(root: Path) -> list[Path]:
    """Every file under a results folder but the hidden ones, in sorted path order: what every reader scans."""
    root = Path(root)
    return sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def _record(path: Path, rel: str, result: Any, verified: bool) -> TaskRecord | AnalysisRecord | AverageRecord:
    if isinstance(result, TaskResult):
        return TaskRecord(rel, result, verified)
    if isinstance(result, AverageResult):
        return AverageRecord(rel, result)
    return AnalysisRecord(
        rel, result.analysis, path.stem, result.result, result.model, result.config, result.provenance
    )


def model_location(coll: Collection, rec: TaskRecord | AverageRecord | AnalysisRecord) -> str:
    """The folder a record's ``model.path`` names, absolute on this machine.

    A path recorded relative (:mod:`stsbench.results.portable`) is relative to the ``--output`` the file was
    written under: ``<output>/<model>/<pooler>/<mode>/<task>.json``, ``<output>/<model>/<pooler>/<analysis>.json``.
    """
    model = rec.model if isinstance(rec, AnalysisRecord) else rec.result.model
    if Path(model.path).is_absolute():
        return model.path
    file = (Path(rec.path) if coll.roots else Path(coll.root) / rec.path).absolute()
    return str(Path(resolve(model.path, _output(file, rec)) or "").absolute())


def _output(file: PurePath, rec: TaskRecord | AverageRecord | AnalysisRecord) -> PurePath:
    """The ``--output`` a results file was written under (:func:`~stsbench.results.portable.output_of`)."""
    return output_of(file, 2 if isinstance(rec, AnalysisRecord) else 3)


def name_in_folder(rec: TaskRecord | AverageRecord | AnalysisRecord) -> str:
    """A record's ``model.name``, relative to the scanned folder when it was recorded relative to its ``--output``.

    ``../../runs/simcse/seed-1`` in a file under ``analyses/`` is ``../runs/simcse/seed-1``, as the task results
    name it: a model's results name it alike.
    """
    model = rec.model if isinstance(rec, AnalysisRecord) else rec.result.model
    if not model.name.startswith(("./", "../")):
        return model.name
    return posixpath.normpath((_output(PurePosixPath(rec.path), rec) / model.name).as_posix())


def read_folder(
    results_dir: str | Path,
    *,
    kinds: Iterable[str] = ALL_KINDS,
    result_types: Mapping[str, type] | None = None,
    runs: bool = False,
    strict: bool = False,
    current_versions: bool = False,
    what: str = "`stsbench run`",
) -> Collection:
    """Read the results of ``kinds`` under ``results_dir`` by the rules above; ``runs``: the training runs too.

    ``result_types``: ``{analysis name: result dataclass}`` (the analysis registry's), to read analysis results
    (``kinds`` holding :data:`ANALYSIS_KIND`). ``strict``: a bad or foreign file raises its one line instead of
    adding a warning. ``current_versions``: a task result scored by another version of its task than this
    stsbench's is such a file too (:func:`check_task_version`; the comparisons). ``what``: what writes such
    folders, for the line saying the folder does not exist.
    """
    root = require_folder(results_dir, what)
    kinds = tuple(kinds)
    out = Collection(str(results_dir))
    files = results_files(root)
    run_dirs = sorted({p.parent for p in files if p.name == TRAIN_LOG})
    out.run_dirs = [_rel(d, root) if d != root else "." for d in run_dirs]
    if runs:
        for folder, rel in zip(run_dirs, out.run_dirs, strict=True):
            run, warnings = load_train_run(folder, rel)
            out.warnings += warnings
            if run is not None:
                out.runs.append(run)
    for path in files:
        if path.suffix != ".json":
            continue
        in_run = any(d == path.parent or d in path.parents for d in run_dirs)
        try:
            rec = _read(path, root, kinds, result_types, in_run, out)
            if current_versions and isinstance(rec, TaskRecord):
                check_task_version(path, rec.result)
        except StsbenchError as exc:
            if strict:
                raise
            out.warnings.append(f"{exc}; skipped it")
            continue
        if isinstance(rec, TaskRecord):
            out.tasks.append(rec)
        elif isinstance(rec, AverageRecord):
            out.averages.append(rec)
        elif rec is not None:
            out.analyses.append(rec)
    return out


def check_task_version(path: Path, result: TaskResult) -> None:
    """Refuse, in one line, a result scored by another version of its task than the task registry's.

    A task's ``version`` changes when what its figure means changes (its pairs, splits or aggregation): two
    versions' figures are not the same measurement. Files written before versions existed read as version 1.
    """
    if result.task not in TASKS:
        return  # another package's task, not installed here: no version to hold it to
    current = task_version(result.task)
    if result.task_version != current:
        raise StsbenchError(
            f"{path}: scored by version {result.task_version} of {result.task}, this stsbench's {result.task} is "
            f"version {current}; rerun `stsbench run` on the model to score it again"
        )


def check_aggregate_versions(path: Path, aggregate: Mapping[str, Any]) -> None:
    """:func:`check_task_version` for a seed aggregate (``task_versions``; written before it: every task 1)."""
    versions = aggregate.get("task_versions") or {}
    for task in aggregate["tasks"]:
        if task in TASKS and versions.get(task, 1) != task_version(task):
            raise StsbenchError(
                f"{path}: scored by version {versions.get(task, 1)} of {task}, this stsbench's {task} is version "
                f"{task_version(task)}; rerun `stsbench run --model OUT` on the seeds folder to score it again"
            )


def _read(
    path: Path,
    root: Path,
    kinds: tuple[str, ...],
    result_types: Mapping[str, type] | None,
    in_run: bool,
    out: Collection,
) -> TaskRecord | AnalysisRecord | AverageRecord | None:
    """One JSON file by the rules above: its record, None when it is passed over, or a one-line error."""
    try:
        data = read_json(path)
    except Unreadable:
        if in_run:
            return None  # a checkpoint's own file
        raise
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind not in kinds:
        if in_run or kind in SUMMARY_KINDS:
            return None  # a checkpoint's own file, or a summary beside the results
        if kind == ANALYSIS_KIND:
            out.passed_over.append(_rel(path, root))
            return None
        raise OtherKind(path, kind, kinds)
    result = result_from_json(path, data, result_types or {})
    verified = False
    if isinstance(result, TaskResult):
        verified = verify_result(path, result)
    elif isinstance(result, AverageResult):
        verify_average(path, result)
    return _record(path, _rel(path, root), result, verified)


@dataclass(frozen=True)
class Measured:
    """One task results file, as the comparisons see it (``check``, ``export-mteb``)."""

    path: Path
    result: TaskResult
    verified: bool = False  # its figure recomputed from its own per-pair sidecar (STS results that have one)

    @property
    def run(self) -> tuple[str, str, str]:
        """What the results of one run share: model name (with its prompt, if any), pooler, mode."""
        from stsbench.encoders.resolve import prompt_suffix

        model = self.result.model
        return (model.name + prompt_suffix(model.prompt, model.prompt_name), model.pooler, self.result.mode)


def load_results(
    results_dir: Path, skipped: list[Path] | None = None, training_runs: list[Path] | None = None
) -> list[Measured]:
    """Every task result under ``results_dir``, read strictly, of the current task versions; none is one line.

    The analysis results found (not scores) are appended to ``skipped`` and the training-run folders to
    ``training_runs``, when given.
    """
    found = read_folder(results_dir, kinds=(TASK_KIND,), strict=True, current_versions=True)
    root = Path(results_dir)
    if skipped is not None:
        skipped.extend(root / p for p in found.passed_over)
    if training_runs is not None:
        training_runs.extend(root / d for d in found.run_dirs)
    if not found.tasks:
        n = len(found.passed_over)
        also = f" (only {plural(n, 'analysis file')})" if n else ""
        raise StsbenchError(
            f"no results JSON under {results_dir}{also}; run `stsbench run ... --output {results_dir}` first"
        )
    return [Measured(root / r.path, r.result, r.verified) for r in found.tasks]


def select_run(
    measured: Iterable[Measured],
    tasks: Iterable[str],
    results_dir: Path,
    model: str | None = None,
    pooler: str | None = None,
    mode: str | None = None,
) -> dict[str, Measured]:
    """Pick the results of one run (model, pooler, mode) by task; refuse a mix of runs or a task twice."""
    tasks = set(tasks)
    measured = list(measured)
    chosen = [
        m
        for m in measured
        if (model is None or same_path(m.result.model.name, model, output_of(m.path.absolute())))
        and (pooler is None or m.result.model.pooler == pooler)
        and (mode is None or m.result.mode == mode)
    ]
    if not chosen:
        there = "; ".join(sorted({"/".join(m.run) for m in measured}))
        raise StsbenchError(
            f"no results under {results_dir} match the filters (model/pooler/mode there: {there})"
        )
    runs = sorted({m.run for m in chosen if m.result.task in tasks})
    if len(runs) > 1:
        names = "; ".join("/".join(r) for r in runs)
        raise StsbenchError(
            f"{results_dir} holds results of {len(runs)} runs (model/pooler/mode: {names}); "
            "point --results at one run's folder or narrow with --model/--pooler/--mode"
        )
    by_task: dict[str, Measured] = {}
    for m in chosen:
        if not runs or m.run != runs[0]:
            continue
        if m.result.task in by_task:
            twice = f"{by_task[m.result.task].path} and {m.path}"
            raise StsbenchError(
                f"{m.result.task} is measured twice under {results_dir} ({twice}); remove one"
            )
        by_task[m.result.task] = m
    return by_task


def seed_aggregates(results_dir: Path) -> list[tuple[Path, SeedAggregate]]:
    """Every seed aggregate (``seeds.json`` of ``stsbench run`` on a seeds folder) under ``results_dir``.

    The same scan as :func:`read_folder` (hidden files are not read); a malformed aggregate, or one scored by
    another version of a task (:func:`check_aggregate_versions`), is one line.
    """
    root = require_folder(results_dir)
    found = []
    for path in results_files(root):
        if path.name == SEEDS_FILE:
            agg = read_aggregate(path)
            if agg is not None:  # OUT/seeds.json of a training folder, or another file of that name
                check_aggregate_versions(path, agg)
                found.append((path, agg))
    return found
