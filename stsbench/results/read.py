"""The one reader of results: a file (the one loader), a folder, several as one, the sides of compare.

The files and their keys are documented in :mod:`stsbench.results.schema`. :func:`load_result` reads a task or
analysis result strictly (a malformed file is one line naming it); a file of another kind raises
:class:`OtherKind`, so a caller can skip what it does not want.

:func:`read_folder` is what ``check``, ``compare``, ``report`` and ``export-mteb`` find under a folder. One
scan, one set of rules, under ``DIR`` (recursively, in sorted path order):

- hidden files and folders (a name starting with ``.`` below ``DIR``: editor backups, ``.ipynb_checkpoints``,
  a copy set aside as ``.old/``, export-mteb's staging folder) are not results. They are skipped by every
  reader alike: a copy of a run kept aside would otherwise be a second measurement of each of its tasks
  (``check`` refuses a task measured twice) or a second row of a report;
- a folder holding ``train_log.jsonl`` is a training run (``stsbench train``), read by
  :mod:`stsbench.results.runs` when asked; the files in it that are not stsbench results (the checkpoint's
  ``config.json``, tokenizer, ``stsbench.json``, ``last/``) are passed over without a word;
- ``*.json`` files are read by their ``kind``: each reader reads the kinds it uses (``kinds``); the other
  stsbench kinds are passed over (analysis results are listed in ``passed_over``; a run's ``average_sts.json``
  and the seed files silently); a JSON file that is not an stsbench file is a foreign file.

Every task result is checked against its own per-pair sidecar (:func:`verify_result`: the sidecar holds what
the reported figure is computed from, so intervals and comparisons between models never need the model again;
the results file records its name, sha256 and pair count, and :func:`read_pairs` checks all three and
recomputes the figure, so a sidecar that is missing, edited, replaced or malformed, or a ``reported`` its
pairs do not give, is one line naming it, never a wrong number), every ``average_sts.json`` read against the
task results beside it (:func:`verify_average`). A file that cannot be read, is malformed, fails that check or
is foreign is one line naming it: raised with ``strict`` (the comparisons, ``check``, ``compare`` and
``export-mteb``, never go on without a file), a warning otherwise (``report`` goes on with the rest).

Several results folders read as one (:func:`read_folders`: ``stsbench report --results results --results
runs`` reads evaluation results and training folders kept apart, or a reproduction's folders): each by the
rules above; the merged :class:`Collection` names every record by its folder and its path in it
(``runs/simcse/seed-1``), so two folders' files never take each other's place. A result found in two folders
is one measurement when both copies agree:

- task results are one run's when they share the model fingerprint (the weights and the pooler), the mode and
  the task; analyses when they share the fingerprint and the file (``align_uniform_dev``); an
  ``average_sts.json`` its fingerprint and mode; training runs their ``--output``;
- the copies agree when their figures (every key of the file but its ``model`` and ``provenance``: a result
  run again elsewhere, at another time, by another command, is the same figure) and their data files (the
  sha256 of each file it was computed on) are equal; a training run's copies when their config, dev curve,
  kept step and end are;
- agreeing copies count once (the first folder's); copies that differ are refused, in one line naming both
  files: which one is the measurement is the user's call, never the reader's.

Within one folder nothing changes: a task evaluated twice there is read as :func:`read_folder` reads it.

The sides ``stsbench compare`` compares (the statistics: :mod:`stsbench.stats.compare`): one model's STS
results under a folder (``stsbench run --output``, or a part of it such as
``<output>/<model>/<pooler>/<mode>``) with the per-pair sidecars behind them, or the seed aggregate of several
training seeds (``seeds.json`` of ``stsbench run`` on a ``train --seeds`` folder), read strictly.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import posixpath
import types
import typing
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from operator import attrgetter
from pathlib import Path, PurePath, PurePosixPath
from typing import Any

import numpy as np

from stsbench.encoders.resolve import prompt_suffix
from stsbench.errors import StsbenchError
from stsbench.metrics import as_reported, simcse_average, spearman
from stsbench.progress import plural
from stsbench.results import schema
from stsbench.results.runs import SEEDS_FILE, TRAIN_LOG, TrainRun, load_train_run, read_aggregate
from stsbench.results.schema import JsonObject, check_version, read_json
from stsbench.results.write import StrPath, output_of, resolve, same_path
from stsbench.stats.bootstrap import PairSet
from stsbench.tasks.base import PairScores
from stsbench.tasks.registry import TASKS, task_version


class OtherKind(StsbenchError):
    """A readable JSON file that is not the kind of result asked for; ``kind`` says what it is."""

    def __init__(self, path: Path, kind: Any, wanted: Iterable[str]) -> None:
        self.path, self.kind = Path(path), kind
        names = '"kind": ' + " or ".join(f'"{k}"' for k in wanted)
        what = "task result" if list(wanted) == [schema.TASK_KIND] else "result"
        super().__init__(f"{path}: not an stsbench {what} (no {names})")


def _convert(tp: Any, value: Any) -> Any:
    origin = typing.get_origin(tp)
    if value is None:
        return None
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        return _convert(options[0], value) if len(options) == 1 else value
    if dataclasses.is_dataclass(tp):
        return build_dataclass(tp, value)
    if origin is list:
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return [_convert((typing.get_args(tp) or (Any,))[0], v) for v in value]
    return tuple(value) if origin is tuple else value


def build_dataclass(cls: type, data: Any) -> Any:
    """Rebuild dataclass ``cls`` (nested dataclasses and lists of them) from its ``asdict`` form.

    A missing field without a default raises ``KeyError``; keys the class does not know are ignored (so a
    newer file with extra keys still reads).
    """
    if not isinstance(data, dict):
        raise TypeError(f"expected an object for {cls.__name__}, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in (f for f in dataclasses.fields(cls) if f.init):
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise KeyError(f.name)
    return cls(**kwargs)


# each results kind: what its version line and its malformed line call it
_KINDS = {
    schema.TASK_KIND: ("results", "task result"),
    schema.ANALYSIS_KIND: ("analysis", "analysis result"),
    schema.AVERAGE_KIND: ("STS average", "STS average"),
}
_STRINGS = ("task", "task_type", "mode", "model.name", "model.pooler", "model.fingerprint")


def load_result(
    path: Path,
    kinds: Iterable[str] = (schema.TASK_KIND, schema.ANALYSIS_KIND),
    result_types: Mapping[str, type] | None = None,
) -> schema.TaskResult | schema.AnalysisResult | schema.AverageResult:
    """Read one results file of one of ``kinds``, validated.

    An analysis' ``result`` is rebuilt as its type in ``result_types`` (``{analysis name: result
    dataclass}``, the registry's). A task result's fields that readers index, group or compute on are checked
    too: ``reported`` a number, the names strings.

    Raises :class:`OtherKind` for a readable file of another kind, ``StsbenchError`` (one line naming the
    file) for an unreadable, malformed or other-version one.
    """
    kinds = tuple(kinds)
    data = read_json(path)
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind not in kinds or kind not in _KINDS:
        raise OtherKind(path, kind, kinds)
    name, result_types = data.get("analysis"), result_types or {}
    check_version(path, data, _KINDS[kind][0])
    if kind == schema.ANALYSIS_KIND and name not in result_types:
        raise StsbenchError(f"{path}: unknown analysis {name!r}; known: {', '.join(result_types)}")
    try:
        if kind == schema.AVERAGE_KIND:
            return build_dataclass(schema.AverageResult, data)
        if kind == schema.ANALYSIS_KIND:
            typed = {**data, "result": build_dataclass(result_types[name], data["result"])}
            analysis = build_dataclass(schema.AnalysisResult, typed)
            analysis.config = dict(analysis.config)
            return analysis
        result = schema.TaskResult.from_dict(data)
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        why = exc if kind == schema.TASK_KIND else f"missing or bad {exc}"
        raise StsbenchError(f"{path}: malformed stsbench {_KINDS[kind][1]} ({why})") from None
    number = isinstance(result.reported, (int, float)) and not isinstance(result.reported, bool)
    bad = [] if number else [f"'reported' is {result.reported!r}, not a number"]
    strings = {k: attrgetter(k)(result) for k in _STRINGS}
    bad += [f"'{k}' is {v!r}, not a string" for k, v in strings.items() if not isinstance(v, str)]
    if why := "; ".join(bad):
        raise StsbenchError(f"{path}: {why} (malformed stsbench task result); rerun `stsbench run`")
    return result


def read_result(path: Path) -> schema.TaskResult:
    """Read a task results file; a malformed or foreign file raises a one-line error naming it."""
    return load_result(path, kinds=(schema.TASK_KIND,))  # type: ignore[return-value]


def read_average(path: Path) -> schema.AverageResult:
    """Read an ``average_sts.json``; a malformed or foreign file raises a one-line error naming it."""
    return load_result(path, kinds=(schema.AVERAGE_KIND,))  # type: ignore[return-value]


# array -> dtype as written (``U``: any string array)
_ARRAYS = {"cosine": "f8", "gold": "f8", "subset": "i2", "index": "i4", "subsets": "U"}
_RERUN = "rerun `stsbench run` for this model and task to write both files again"


def _bad(path: Path, what: str) -> StsbenchError:
    return StsbenchError(f"{path}: {what}; {_RERUN}")


def _check_arrays(path: Path, arrays: dict[str, np.ndarray], n: int) -> None:
    problems = []
    for key, dtype in _ARRAYS.items():
        a = arrays.get(key)
        if a is None:
            problems.append(f"no '{key}' array")
        elif key == "subsets":
            if a.dtype.kind != "U" or a.ndim != 1 or not len(a):
                problems.append("'subsets' is not a non-empty string array")
        elif a.dtype != np.dtype(dtype) or a.shape != (n,):
            problems.append(f"'{key}' is {a.dtype}{list(a.shape)}, expected {np.dtype(dtype)}[{n}]")
    if not problems:
        codes = arrays["subset"]
        if codes.min(initial=0) < 0 or codes.max(initial=0) >= len(arrays["subsets"]):
            problems.append("'subset' codes outside 'subsets'")
        elif not np.isfinite(arrays["cosine"]).all() or not np.isfinite(arrays["gold"]).all():
            problems.append("non-finite cosine or gold")
    if problems:
        raise _bad(path, f"malformed per-pair sidecar ({'; '.join(problems)})")


def read_sidecar(result_json: StrPath) -> tuple[schema.TaskResult, PairScores]:
    """The results file and its per-pair sidecar, checked against each other (sha256, pair count, arrays, figure)."""
    result = read_result(Path(result_json))
    return result, _load_sidecar(Path(result_json), result)


def verify_result(result_json: StrPath, result: schema.TaskResult) -> bool:
    """Check a task result's ``reported`` against its own per-pair sidecar; every reader of results calls this.

    True: the sidecar's sha256, pair count and arrays match what the results file records, and the Spearman of
    its cosines against its gold, as reported (x100, 2 decimals), is ``reported``. False: nothing to check it
    against (a transfer result keeps no pairs; an STS result written before sidecars existed). A file whose
    figure its own pairs do not give, or whose sidecar is missing, edited or malformed, raises one line naming it.
    """
    if result.task_type != "sts" or result.pairs is None:
        return False
    _load_sidecar(Path(result_json), result)
    return True


def verify_average(path: StrPath, average: schema.AverageResult) -> None:
    """Check an ``average_sts.json`` against the results it averages: one line naming it when they disagree.

    Its ``reported`` must be the Avg. of its ``figures``, and each figure the ``reported`` of that task's results
    file beside it (a run rewrites or removes the average with its tasks, so anything else is an edit by hand or
    an average left over from results that are gone).
    """
    path = Path(path)
    fix = "rerun `stsbench run` on its tasks to write it again"
    if simcse_average(list(average.figures.values())) != average.reported:
        raise StsbenchError(f"{path}: 'reported' {average.reported} is not the Avg. of its 'figures'; {fix}")
    for task in average.tasks:
        beside = path.with_name(f"{task}.json")
        try:
            figure = read_result(beside).reported
        except StsbenchError:
            figure = None
        if figure is None or figure != average.figures.get(task):
            now = "no readable results file" if figure is None else f"{figure}"
            raise StsbenchError(
                f"{path}: averages {task} {average.figures.get(task)}, but {beside.name} beside it has {now}; {fix}"
            )


def _load_sidecar(json_path: Path, result: schema.TaskResult) -> PairScores:
    """The sidecar of ``result``, checked: its entry, sha256, arrays, and the figure its pairs give."""
    if result.task_type != "sts":
        msg = f"{json_path}: a {result.task_type} task result has no per-pair sidecar (STS only)"
        raise StsbenchError(msg)
    entry = result.pairs
    if entry is None:
        raise _bad(json_path, "no per-pair sidecar recorded (written before sidecars existed)")
    name = entry.get("file") if isinstance(entry, dict) else None
    if not (isinstance(name, str) and name and Path(name).name == name and isinstance(entry.get("n"), int)):
        raise _bad(json_path, f"malformed 'pairs' entry {entry!r}")
    path = json_path.parent / name
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _bad(path, f"missing (the per-pair sidecar {json_path.name} names)") from None
    except OSError as exc:
        raise _bad(path, f"cannot read the per-pair sidecar ({exc.strerror})") from None
    if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        raise _bad(path, f"sha256 differs from the one {json_path.name} records (edited or replaced)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise _bad(path, f"not a readable .npz ({type(exc).__name__})") from None
    _check_arrays(path, arrays, entry["n"])
    cosine, gold = arrays["cosine"], arrays["gold"]
    given = None if np.ptp(cosine) == 0 or np.ptp(gold) == 0 else as_reported(spearman(cosine, gold))
    if given is None or abs(given - result.reported) > 1e-9:
        gives = "no figure (constant scores)" if given is None else f"{given:.2f}"
        msg = (
            f"'reported' {result.reported} is not what its per-pair sidecar gives ({gives}; edited by hand?)"
        )
        raise _bad(json_path, msg)
    return PairScores(cosine, gold, arrays["subset"], [str(s) for s in arrays["subsets"]], arrays["index"])


def read_pairs(result_json: StrPath) -> PairSet:
    """The pairs behind an STS result, as the bootstrap takes them (strata: the subsets); checked, see above."""
    result, pairs = read_sidecar(result_json)
    return PairSet(result.task, pairs.cosine, pairs.gold, pairs.subset, pairs.index)


# summaries beside the results, passed over silently: a run's average_sts.json (when not read), the seed files
SUMMARY_KINDS = (
    schema.AVERAGE_KIND,
    schema.SEED_RUNS_KIND,
    schema.SEED_AGGREGATE_KIND,
    schema.SCALE_KIND,
    schema.RECIPE_RUNS_KIND,
)
ALL_KINDS = (schema.TASK_KIND, schema.ANALYSIS_KIND, schema.AVERAGE_KIND)


@dataclass(frozen=True)
class TaskRecord:
    """One task results file."""

    path: str  # relative to the scanned folder, POSIX
    result: schema.TaskResult
    verified: bool = False  # its figure recomputed from its own per-pair sidecar (STS results that have one)

    @property
    def run(self) -> tuple[str, str, str]:
        """What the results of one run share: model name (with its prompt, if any), pooler, mode."""
        model = self.result.model
        return (model.name + prompt_suffix(model.prompt, model.prompt_name), model.pooler, self.result.mode)


@dataclass(frozen=True)
class AverageRecord:
    """One ``average_sts.json``: the STS Avg. of a run and its interval."""

    path: str
    result: schema.AverageResult


@dataclass(frozen=True)
class AnalysisRecord:
    """One analysis results file, its ``result`` rebuilt as the analysis' own dataclass."""

    path: str
    analysis: str  # ``length_bias`` | ``align_uniform`` | ``spectrum`` | ``repetition_probe``
    variant: str  # the file's stem: ``length_bias_words``, ``align_uniform_dev``, ...
    result: Any
    model: schema.ModelInfo
    config: JsonObject
    provenance: schema.Provenance


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
        msg = f"{root} is a file, not a results folder; pass the folder that holds it: {root.parent}"
        raise StsbenchError(msg)
    if not root.is_dir():
        raise StsbenchError(f"results folder {root} does not exist; pass the --output of {what}")
    return root


def results_files(root: Path) -> list[Path]:
    """Every file under a results folder but the hidden ones, in sorted path order: what every reader scans."""
    files = (p for p in Path(root).rglob("*") if p.is_file())
    return sorted(p for p in files if not any(part.startswith(".") for part in p.relative_to(root).parts))


def model_location(coll: Collection, rec: TaskRecord | AverageRecord | AnalysisRecord) -> str:
    """The folder a record's ``model.path`` names, absolute on this machine.

    A path recorded relative (:mod:`stsbench.results.write`) is relative to the ``--output`` the file was
    written under: ``<output>/<model>/<pooler>/<mode>/<task>.json``, ``<output>/<model>/<pooler>/<analysis>.json``.
    """
    model = rec.model if isinstance(rec, AnalysisRecord) else rec.result.model
    if Path(model.path).is_absolute():
        return model.path
    file = (Path(rec.path) if coll.roots else Path(coll.root) / rec.path).absolute()
    return str(Path(resolve(model.path, _output(file, rec)) or "").absolute())


def _output(file: PurePath, rec: TaskRecord | AverageRecord | AnalysisRecord) -> PurePath:
    """The ``--output`` a results file was written under (:func:`~stsbench.results.write.output_of`)."""
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
    stsbench's is such a file too (the comparisons). ``what``: what writes such
    folders, for the line saying the folder does not exist.
    """
    root = require_folder(results_dir, what)
    kinds = tuple(kinds)
    out = Collection(str(results_dir))
    files = results_files(root)
    run_dirs = sorted({p.parent for p in files if p.name == TRAIN_LOG})
    out.run_dirs = [d.relative_to(root).as_posix() for d in run_dirs]
    if runs:
        for folder, rel in zip(run_dirs, out.run_dirs, strict=True):
            run, warnings = load_train_run(folder, rel)
            out.warnings += warnings
            if run is not None:
                out.runs.append(run)
    for path in (p for p in files if p.suffix == ".json"):
        rel = path.relative_to(root).as_posix()
        try:
            try:
                result = load_result(path, kinds, result_types)
            except (schema.Unreadable, OtherKind) as exc:
                kind = getattr(exc, "kind", None)
                if kind in SUMMARY_KINDS or any(d in path.parents for d in run_dirs):
                    continue  # a summary beside the results, or a checkpoint's own file
                if kind != schema.ANALYSIS_KIND:
                    raise
                out.passed_over.append(rel)
                continue
            if isinstance(result, schema.TaskResult):
                rec = TaskRecord(rel, result, verify_result(path, result))
                # a task's ``version`` changes when what its figure means changes (its pairs, splits or
                # aggregation): two versions' figures are not the same measurement
                if current_versions:
                    _check_task_version(path, result.task, result.task_version, "`stsbench run` on the model")
                out.tasks.append(rec)
            elif isinstance(result, schema.AverageResult):
                verify_average(path, result)
                out.averages.append(AverageRecord(rel, result))
            else:
                r = result
                record = AnalysisRecord(rel, r.analysis, path.stem, r.result, r.model, r.config, r.provenance)
                out.analyses.append(record)
        except StsbenchError as exc:
            if strict:
                raise
            out.warnings.append(f"{exc}; skipped it")
    return out


def check_aggregate_versions(path: Path, aggregate: Mapping[str, Any]) -> None:
    """Refuse a seed aggregate scored by another version of a task than this stsbench's, in one line.

    Its ``task_versions``; an aggregate written before it: every task version 1.
    """
    versions = aggregate.get("task_versions") or {}
    for t in aggregate["tasks"]:
        _check_task_version(path, t, versions.get(t, 1), "`stsbench run --model OUT` on the seeds folder")


def _check_task_version(path: Path, task: str, version: int, rerun: str) -> None:
    """Refuse a result scored by another version of ``task`` than this stsbench's, in one line.

    Another package's task, not installed here: no version to hold it to.
    """
    current = task_version(task) if task in TASKS else version
    if version != current:
        raise StsbenchError(
            f"{path}: scored by version {version} of {task}, this stsbench's {task} is version {current}; "
            f"rerun {rerun} to score it again"
        )


def load_results(
    results_dir: Path, skipped: list[Path] | None = None, training_runs: list[Path] | None = None
) -> list[TaskRecord]:
    """Every task result under ``results_dir``, read strictly, of the current task versions; none is one line.

    The analysis results found (not scores) are appended to ``skipped`` and the training-run folders to
    ``training_runs``, when given.
    """
    found = read_folder(results_dir, kinds=(schema.TASK_KIND,), strict=True, current_versions=True)
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
    return [replace(r, path=str(root / r.path)) for r in found.tasks]


def select_run(
    measured: Iterable[TaskRecord],
    tasks: Iterable[str],
    results_dir: Path,
    model: str | None = None,
    pooler: str | None = None,
    mode: str | None = None,
) -> dict[str, TaskRecord]:
    """Pick the results of one run (model, pooler, mode) by task; refuse a mix of runs or a task twice."""
    tasks = set(tasks)
    measured = list(measured)
    chosen = [
        m
        for m in measured
        if (model is None or same_path(m.result.model.name, model, output_of(Path(m.path).absolute())))
        and (pooler is None or m.result.model.pooler == pooler)
        and (mode is None or m.result.mode == mode)
    ]
    if not chosen:
        there = "; ".join(sorted({"/".join(m.run) for m in measured}))
        msg = f"no results under {results_dir} match the filters (model/pooler/mode there: {there})"
        raise StsbenchError(msg)
    runs = sorted({m.run for m in chosen if m.result.task in tasks})
    if len(runs) > 1:
        names = "; ".join("/".join(r) for r in runs)
        raise StsbenchError(
            f"{results_dir} holds results of {len(runs)} runs (model/pooler/mode: {names}); "
            "point --results at one run's folder or narrow with --model/--pooler/--mode"
        )
    by_task: dict[str, TaskRecord] = {}
    for m in (m for m in chosen if runs and m.run == runs[0]):
        if m.result.task in by_task:
            twice = f"{by_task[m.result.task].path} and {m.path}"
            msg = f"{m.result.task} is measured twice under {results_dir} ({twice}); remove one"
            raise StsbenchError(msg)
        by_task[m.result.task] = m
    return by_task


def seed_aggregates(results_dir: Path) -> list[tuple[Path, schema.SeedAggregate]]:
    """Every seed aggregate (``seeds.json`` of ``stsbench run`` on a seeds folder) under ``results_dir``.

    The same scan as :func:`read_folder` (hidden files are not read); a malformed aggregate, or one scored by
    another version of a task (:func:`check_aggregate_versions`), is one line.
    """
    root = require_folder(results_dir)
    found = []
    for path in (p for p in results_files(root) if p.name == SEEDS_FILE):
        # None: OUT/seeds.json of a training folder, or another file of that name
        if (agg := read_aggregate(path)) is not None:
            check_aggregate_versions(path, agg)
            found.append((path, agg))
    return found


Record = TaskRecord | AverageRecord | AnalysisRecord | TrainRun


def _identity(rec: Record) -> tuple[tuple[str, ...] | None, str]:
    """What makes two records copies of one measurement (see the module docstring), and what that is.

    The key is None where there is nothing to share; the words are for the refusal: a training run, or model
    [fingerprint], pooler, mode...
    """
    if isinstance(rec, TrainRun):  # no --output: no identity to share
        return (("run", rec.output) if rec.output else None), f"training run (--output {rec.output})"
    if isinstance(rec, AnalysisRecord):
        model, what, key = rec.model, rec.variant, ("analysis", rec.model.fingerprint, rec.variant)
    elif isinstance(rec, TaskRecord):
        model, what = rec.result.model, f"{rec.result.mode}, {rec.result.task}"
        key = ("task", model.fingerprint, rec.result.mode, rec.result.task)
    else:
        model, what = rec.result.model, f"{rec.result.mode}, Avg."
        key = ("average", model.fingerprint, rec.result.mode)
    return key, f"result (model {model.name} [{model.fingerprint[:8]}], pooler {model.pooler}, {what})"


def _content(rec: Record) -> tuple[Any, JsonObject | None]:
    """A record's figures and its data files' checksums (a training run: config, curve, kept step and end).

    A result file's figures: every key but ``model`` and ``provenance``.
    """
    if isinstance(rec, TrainRun):
        r = rec
        return (r.config, r.curve, r.best_step, r.best_dev_spearman, r.steps_done, r.total_steps), None
    data = read_json(Path(rec.path))
    prov = data.get("provenance") or {}
    files = {"data_files": prov.get("data_files"), "data_modified": prov.get("data_modified")}
    return {k: v for k, v in data.items() if k not in ("model", "provenance")}, files


def _prefixed(root: str, rel: str) -> str:
    return root if rel == "." else f"{root}/{rel}"


def read_folders(folders: Sequence[str | Path], **read: Any) -> Collection:
    """Read each folder with :func:`read_folder` (``read``: its keyword arguments) and merge them as above.

    One folder is :func:`read_folder` itself, its paths relative to it. Raises ``StsbenchError`` for a folder that
    does not exist and for two copies of one measurement that differ.
    """
    if not folders:
        raise StsbenchError("no results folder given; pass --results DIR (several: --results A --results B)")
    if len(folders) == 1:
        return read_folder(folders[0], **read)
    roots = [Path(f).as_posix() for f in folders]
    merged = Collection(str(folders[0]), roots=tuple(roots))
    seen: dict[tuple[str, ...], tuple[int, Record]] = {}
    for i, (folder, root) in enumerate(zip(folders, roots, strict=True)):
        coll = read_folder(folder, **read)
        merged.warnings += coll.warnings
        merged.run_dirs += [_prefixed(root, d) for d in coll.run_dirs]
        merged.passed_over += [_prefixed(root, p) for p in coll.passed_over]
        for rec in [*coll.runs, *coll.tasks, *coll.averages, *coll.analyses]:
            rec = replace(rec, path=_prefixed(root, rec.path))
            key, what = _identity(rec)
            first = seen.get(key) if key else None
            if first is None or first[0] == i:  # a folder's own records stay as read_folder reads them
                if key:
                    seen.setdefault(key, (i, rec))
                lists = {TrainRun: merged.runs, TaskRecord: merged.tasks, AverageRecord: merged.averages}
                lists.get(type(rec), merged.analyses).append(rec)  # type: ignore[attr-defined]
                continue
            (figures_a, files_a), (figures_b, files_b) = _content(first[1]), _content(rec)
            if figures_a != figures_b or files_a != files_b:
                differ = "figures" if figures_a != figures_b else "data files (sha256)"
                differ = "configs or logs" if isinstance(rec, TrainRun) else differ
                raise StsbenchError(
                    f"{first[1].path} and {rec.path} are two copies of one {what} with different "
                    f"{differ}; keep one: remove the other or leave its folder out of --results"
                )
    return merged
