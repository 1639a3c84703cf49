"""Scan a results folder and load everything a report shows into typed records.

What is read, under ``DIR`` (recursively, in sorted path order):

- ``*.json`` with ``"kind": "stsbench.task_result"``: task results (``stsbench run``);
- ``*.json`` with ``"kind": "stsbench.analysis_result"``: analyses (``stsbench length-bias`` ...), their
  ``result`` rebuilt as the type the analysis registry names;
- ``average_sts.json`` (``"kind": "stsbench.sts_average"``): a run's STS Avg. with its interval, skipped with a
  warning unless it agrees with the task results beside it (:func:`stsbench.results.pairs.verify_average`).
  The per-pair sidecars (``<task>.pairs.npz``) are not collected, but each STS task result's figure is
  checked against its own (:func:`stsbench.results.pairs.verify_result`): a result whose pairs do not give it
  is skipped with a warning;
- ``train_log.jsonl`` (with ``stsbench.json`` beside it when the run saved a checkpoint): training runs
  (``stsbench train``), read by :mod:`stsbench.results.runs`. Every other file in a run folder (weights,
  tokenizer, ``last/``) belongs to the checkpoint and is not read.

The seed files (``seeds.json`` of ``stsbench train --seeds``, kinds :data:`SEED_KINDS`) are not read: the report
computes its statistics over seeds from each seed's own results.

Each file is read by the results module's one loader (:func:`stsbench.results.store.load_result`), which
is strict; the scan is tolerant: a file that cannot be read, or a JSON file that is not an stsbench result,
adds one warning naming the file, and the scan goes on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stsbench.analyses.registry import all_analyses
from stsbench.errors import StsbenchError
from stsbench.results.pairs import verify_average, verify_result
from stsbench.results.runs import RUN_META, TRAIN_LOG, TrainRun, load_train_run
from stsbench.results.schema import (
    ANALYSIS_KIND,
    AVERAGE_KIND,
    SEED_AGGREGATE_KIND,
    SEED_RUNS_KIND,
    TASK_KIND,
    AnalysisResult,
    AverageResult,
    ModelInfo,
    Provenance,
    TaskResult,
)
from stsbench.results.store import OtherKind, Unreadable, load_result, results_files

SEED_KINDS = (SEED_RUNS_KIND, SEED_AGGREGATE_KIND)  # seeds.json: what groups the seeds, not results


@dataclass(frozen=True)
class TaskRecord:
    """One task results file."""

    path: str  # relative to the scanned folder, POSIX
    result: TaskResult


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
    config: dict[str, Any]
    provenance: Provenance


@dataclass
class Collection:
    """Everything found under one results folder, and what could not be read."""

    root: str  # the folder as given
    tasks: list[TaskRecord] = field(default_factory=list)
    analyses: list[AnalysisRecord] = field(default_factory=list)
    runs: list[TrainRun] = field(default_factory=list)
    averages: list[AverageRecord] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def analyses_of(self, analysis: str) -> list[AnalysisRecord]:
        """Return the records of one analysis, in path order."""
        return [a for a in self.analyses if a.analysis == analysis]


KINDS = (TASK_KIND, ANALYSIS_KIND, AVERAGE_KIND)


def analysis_types() -> dict[str, type]:
    """``{analysis name: result type}`` from the analysis registry."""
    return {a.name: a.result_class() for a in all_analyses()}


def _record(
    path: Path, rel: str, result: TaskResult | AnalysisResult | AverageResult
) -> TaskRecord | AnalysisRecord | AverageRecord:
    if isinstance(result, TaskResult):
        return TaskRecord(rel, result)
    if isinstance(result, AverageResult):
        return AverageRecord(rel, result)
    return AnalysisRecord(
        rel, result.analysis, path.stem, result.result, result.model, result.config, result.provenance
    )


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def collect(results_dir: str | Path, strict: bool = False) -> Collection:
    """Load every result under ``results_dir``; what cannot be read becomes a warning naming the file.

    A task result whose figure its own per-pair sidecar does not give is such a file
    (:func:`stsbench.results.pairs.verify_result`). Raises ``StsbenchError`` when the folder itself does not
    exist, and with ``strict`` (a comparison, which must not go on without a file) for the first results file
    that cannot be read, is malformed or fails that check.
    """
    root = Path(results_dir)
    if not root.is_dir():
        raise StsbenchError(
            f"results folder {root} does not exist; pass the --output of `stsbench run` / the analyses"
        )
    out = Collection(str(results_dir))
    files = results_files(root)
    run_dirs = sorted({p.parent for p in files if p.name == TRAIN_LOG})
    for folder in run_dirs:
        run, warnings = load_train_run(folder, _rel(folder, root) if folder != root else ".")
        out.warnings += warnings
        if run is not None:
            out.runs.append(run)
    types = analysis_types()
    for path in files:
        if path.suffix != ".json" or path.name == RUN_META and path.parent in run_dirs:
            continue
        in_run = any(d == path.parent or d in path.parents for d in run_dirs)
        try:
            result = load_result(path, KINDS, result_types=types)
            if isinstance(result, TaskResult):
                verify_result(path, result)
            elif isinstance(result, AverageResult):
                verify_average(path, result)
            rec = _record(path, _rel(path, root), result)
        except (OtherKind, Unreadable) as exc:
            if in_run or getattr(exc, "kind", None) in SEED_KINDS:
                continue  # a checkpoint's own files are none of the report's business
            if strict and not isinstance(exc, OtherKind):
                raise
            out.warnings.append(f"{exc}; skipped it")
            continue
        except StsbenchError as exc:
            if strict:
                raise
            out.warnings.append(f"{exc}; skipped it")
            continue
        if isinstance(rec, AverageRecord):
            out.averages.append(rec)
        else:
            (out.tasks if isinstance(rec, TaskRecord) else out.analyses).append(rec)
    return out
