"""Scan a results folder and load everything a report shows into typed records.

What is read, under ``DIR`` (recursively, in sorted path order):

- ``*.json`` with ``"kind": "stsbench.task_result"``: task results (``stsbench run``);
- ``*.json`` with ``"kind": "stsbench.analysis_result"``: analyses (``stsbench length-bias`` ...);
- ``train_log.jsonl`` (with ``stsbench.json`` beside it when the run saved a checkpoint): training runs
  (``stsbench train``). Every other file in a run folder (weights, tokenizer, ``last/``) belongs to the
  checkpoint and is not read.

Tolerant by design: a file that cannot be read, or a JSON file that is not an stsbench result, adds one
warning naming the file, and the scan goes on.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stsbench.analyses.geometry import AlignUniformResult, SpectrumResult
from stsbench.analyses.length_bias import LengthBiasResult
from stsbench.analyses.repetition import RepetitionResult
from stsbench.errors import StsbenchError
from stsbench.results.schema import ModelInfo, Provenance, TaskResult
from stsbench.results.store import read_result

TRAIN_LOG = "train_log.jsonl"
RUN_META = "stsbench.json"
# analysis name in the results file -> the typed result its ``result`` holds
ANALYSIS_TYPES: dict[str, type] = {
    "length_bias": LengthBiasResult,
    "align_uniform": AlignUniformResult,
    "spectrum": SpectrumResult,
    "repetition_probe": RepetitionResult,
}


@dataclass(frozen=True)
class TaskRecord:
    """One task results file."""

    path: str  # relative to the scanned folder, POSIX
    result: TaskResult


@dataclass(frozen=True)
class AnalysisRecord:
    """One analysis results file, its ``result`` rebuilt as the analysis' own dataclass."""

    path: str
    analysis: str  # ``length_bias`` | ``align_uniform`` | ``spectrum`` | ``repetition_probe``
    variant: str  # the file's stem: ``length_bias_words``, ``align_uniform_dev``, ...
    result: Any
    model: ModelInfo
    config: dict[str, Any]
    provenance: Provenance


@dataclass(frozen=True)
class TrainRun:
    """One ``stsbench train`` output folder: its config, its dev curve and how it ended."""

    path: str  # the run folder, relative to the scanned folder
    name: str  # the run folder's name
    config: dict[str, Any]  # TrainConfig as a dict (from stsbench.json, else the log's start record)
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

    @property
    def output(self) -> str:
        """The ``--output`` the run was given (what a task result's ``model.path`` points at)."""
        return str(self.config.get("output") or "")


@dataclass
class Collection:
    """Everything found under one results folder, and what could not be read."""

    root: str  # the folder as given
    tasks: list[TaskRecord] = field(default_factory=list)
    analyses: list[AnalysisRecord] = field(default_factory=list)
    runs: list[TrainRun] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def analyses_of(self, analysis: str) -> list[AnalysisRecord]:
        """Return the records of one analysis, in path order."""
        return [a for a in self.analyses if a.analysis == analysis]


def _is_union(tp: Any) -> bool:
    return typing.get_origin(tp) in (typing.Union, types.UnionType)


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    if _is_union(tp):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        return _convert(options[0], value) if len(options) == 1 else value
    if dataclasses.is_dataclass(tp):
        return build_dataclass(tp, value)
    origin = typing.get_origin(tp)
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return [_convert(arg, v) for v in value]
    if origin is tuple:
        return tuple(value)
    return value


def build_dataclass(cls: type, data: Any) -> Any:
    """Rebuild dataclass ``cls`` (nested dataclasses and lists of them) from its ``asdict`` form.

    A missing field without a default raises ``KeyError``; keys the class does not know are ignored (so a
    newer file with extra keys still reads).
    """
    if not isinstance(data, dict):
        raise TypeError(f"expected an object for {cls.__name__}, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise KeyError(f.name)
    return cls(**kwargs)


def _analysis(path: Path, rel: str, data: dict[str, Any]) -> AnalysisRecord:
    if data.get("schema_version") != 1:
        raise StsbenchError(
            f"{path}: analysis schema version {data.get('schema_version')!r}, this stsbench reads 1"
        )
    name = data.get("analysis")
    if name not in ANALYSIS_TYPES:
        raise StsbenchError(f"{path}: unknown analysis {name!r}; known: {', '.join(ANALYSIS_TYPES)}")
    try:
        return AnalysisRecord(
            rel,
            name,
            path.stem,
            build_dataclass(ANALYSIS_TYPES[name], data["result"]),
            build_dataclass(ModelInfo, data["model"]),
            dict(data["config"]),
            build_dataclass(Provenance, data["provenance"]),
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise StsbenchError(f"{path}: malformed stsbench analysis result (missing or bad {exc})") from None


def _read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    records, bad = [], []
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            bad.append(f"{path}:{no}: not a JSON line; skipped it")
            continue
        if isinstance(rec, dict):
            records.append(rec)
        else:
            bad.append(f"{path}:{no}: not a JSON object; skipped it")
    return records, bad


def load_train_run(folder: Path, rel: str) -> tuple[TrainRun | None, list[str]]:
    """Read one run folder (``train_log.jsonl``, and ``stsbench.json`` when there is a checkpoint)."""
    log = folder / TRAIN_LOG
    records, warnings = _read_jsonl(log)
    meta: dict[str, Any] = {}
    meta_path = folder / RUN_META
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            warnings.append(f"{meta_path}: not a readable JSON file ({exc}); the run's log is used alone")
            meta = {}
        if not isinstance(meta, dict):
            warnings.append(f"{meta_path}: not a checkpoint description (a JSON object); ignored")
            meta = {}
    start = next((r for r in records if r.get("event") == "start"), None)
    end = next((r for r in reversed(records) if r.get("event") == "end"), None)
    config = meta.get("training") or (start or {}).get("config")
    if not isinstance(config, dict) or "method" not in config:
        warnings.append(f"{log}: no training config (no 'start' record, no {RUN_META}); run skipped")
        return None, warnings
    curve = tuple(
        (int(r["step"]), r.get("dev_spearman"))
        for r in records
        if r.get("event") == "eval" and isinstance(r.get("step"), int)
    )
    selected = [
        (int(r["step"]), r.get("dev_spearman"))
        for r in records
        if r.get("event") == "eval" and r.get("best") and isinstance(r.get("step"), int)
    ]
    best_step, best_dev = selected[-1] if selected else (None, None)
    if end is not None and end.get("best_step") is not None:
        best_step, best_dev = end.get("best_step"), end.get("best_dev_spearman")
    run = TrainRun(
        path=rel,
        name=folder.name,
        config=config,
        method=str(config["method"]),
        curve=curve,
        best_step=best_step,
        best_dev_spearman=best_dev,
        total_steps=(start or {}).get("total_steps"),
        steps_done=(end or {}).get("step"),
        wall_seconds=(end or {}).get("wall_seconds"),
        train_rows=(start or {}).get("train_rows"),
        queue_size=meta.get("queue_size"),
        eval_pooler=meta.get("pooler"),
        has_checkpoint=bool(meta),
    )
    return run, warnings


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def collect(results_dir: str | Path) -> Collection:
    """Load every result under ``results_dir``; what cannot be read becomes a warning naming the file.

    Raises ``StsbenchError`` only when the folder itself does not exist.
    """
    root = Path(results_dir)
    if not root.is_dir():
        raise StsbenchError(
            f"results folder {root} does not exist; pass the --output of `stsbench run` / the analyses"
        )
    out = Collection(str(results_dir))
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)
    )
    run_dirs = sorted({p.parent for p in files if p.name == TRAIN_LOG})
    for folder in run_dirs:
        run, warnings = load_train_run(folder, _rel(folder, root) if folder != root else ".")
        out.warnings += warnings
        if run is not None:
            out.runs.append(run)
    for path in files:
        if path.suffix != ".json" or path.name == RUN_META and path.parent in run_dirs:
            continue
        in_run = any(d == path.parent or d in path.parents for d in run_dirs)
        rel = _rel(path, root)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            if not in_run:  # a checkpoint's own files are none of the report's business
                out.warnings.append(f"{path}: not a readable JSON file ({exc}); skipped it")
            continue
        kind = data.get("kind") if isinstance(data, dict) else None
        try:
            if kind == "stsbench.task_result":
                out.tasks.append(TaskRecord(rel, read_result(path)))
            elif kind == "stsbench.analysis_result":
                out.analyses.append(_analysis(path, rel, data))
            elif not in_run:
                out.warnings.append(
                    f'{path}: not an stsbench result (no "kind": "stsbench.task_result" or '
                    '"stsbench.analysis_result"); skipped it'
                )
        except StsbenchError as exc:
            out.warnings.append(f"{exc}; skipped it")
    return out
