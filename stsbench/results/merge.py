"""Several results folders read as one: each by :func:`~stsbench.results.folder.read_folder`, then merged.

``stsbench report --results results --results runs`` reads evaluation results and training folders kept apart,
or a reproduction's folders. Each folder is read by the one reader's rules; the merged :class:`Collection`
names every record by its folder and its path in it (``runs/simcse/seed-1``), so two folders' files never take
each other's place. A result found in two folders is one measurement when both copies agree:

- task results are one run's when they share the model fingerprint (the weights and the pooler), the mode and the
  task; analyses when they share the fingerprint and the file (``align_uniform_dev``); an ``average_sts.json`` its
  fingerprint and mode; training runs their ``--output``;
- the copies agree when their figures (every key of the file but its ``model`` and ``provenance``: a result run
  again elsewhere, at another time, by another command, is the same figure) and their data files (the sha256 of
  each file it was computed on) are equal; a training run's copies when their config, dev curve, kept step and end
  are;
- agreeing copies count once (the first folder's); copies that differ are refused, in one line naming both files:
  which one is the measurement is the user's call, never the reader's.

Within one folder nothing changes: a task evaluated twice there is read as :func:`read_folder` reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.results.folder import AnalysisRecord, AverageRecord, Collection, TaskRecord, read_folder
from stsbench.results.runs import TrainRun
from stsbench.results.schema import JsonObject
from stsbench.results.store import read_json

Record = TaskRecord | AverageRecord | AnalysisRecord


def _identity(rec: Record) -> tuple[str, ...]:
    """What makes two records copies of one measurement (see the module docstring)."""
    if isinstance(rec, TaskRecord):
        r = rec.result
        return ("task", r.model.fingerprint, r.mode, r.task)
    if isinstance(rec, AverageRecord):
        return ("average", rec.result.model.fingerprint, rec.result.mode)
    return ("analysis", rec.model.fingerprint, rec.variant)


def _describe(rec: Record) -> str:
    """The run a record belongs to, for the refusal: model [fingerprint], pooler, mode, task."""
    if isinstance(rec, AnalysisRecord):
        model, what = rec.model, rec.variant
    else:
        model, what = rec.result.model, rec.result.mode
        what += f", {rec.result.task}" if isinstance(rec, TaskRecord) else ", Avg."
    return f"model {model.name} [{model.fingerprint[:8]}], pooler {model.pooler}, {what}"


def _content(path: Path) -> tuple[JsonObject, JsonObject]:
    """A result file's figures (every key but ``model`` and ``provenance``) and its data files' checksums."""
    data = read_json(path)
    prov = data.get("provenance") or {}
    files = {"data_files": prov.get("data_files"), "data_modified": prov.get("data_modified")}
    return {k: v for k, v in data.items() if k not in ("model", "provenance")}, files


def _run_figures(run: TrainRun) -> tuple[Any, ...]:
    return (run.config, run.curve, run.best_step, run.best_dev_spearman, run.steps_done, run.total_steps)


def _refuse(first: str, second: str, what: str, differ: str) -> StsbenchError:
    return StsbenchError(
        f"{first} and {second} are two copies of one {what} with different {differ}; keep one: remove the other "
        "or leave its folder out of --results"
    )


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
    seen: dict[tuple[str, ...], tuple[int, Path, Record]] = {}
    seen_runs: dict[str, tuple[int, str, TrainRun]] = {}
    for i, (folder, root) in enumerate(zip(folders, roots, strict=True)):
        coll = read_folder(folder, **read)
        merged.warnings += coll.warnings
        merged.run_dirs += [_prefixed(root, d) for d in coll.run_dirs]
        merged.passed_over += [_prefixed(root, p) for p in coll.passed_over]
        for run in coll.runs:
            run = _moved(run, root)
            first = seen_runs.get(run.output) if run.output else None  # no --output: no identity to share
            if first is None or first[0] == i:
                if run.output:
                    seen_runs.setdefault(run.output, (i, run.path, run))
                merged.runs.append(run)
            elif _run_figures(first[2]) != _run_figures(run):
                raise _refuse(first[1], run.path, f"training run (--output {run.output})", "configs or logs")
        for rec in [*coll.tasks, *coll.averages, *coll.analyses]:
            path = Path(folder) / rec.path
            rec = _moved(rec, root)
            key = _identity(rec)
            first = seen.get(key)
            if first is None or first[0] == i:  # a folder's own records stay as read_folder reads them
                seen.setdefault(key, (i, path, rec))
                _add(merged, rec)
                continue
            (figures_a, files_a), (figures_b, files_b) = _content(first[1]), _content(path)
            if figures_a != figures_b or files_a != files_b:
                differ = "figures" if figures_a != figures_b else "data files (sha256)"
                raise _refuse(str(first[1]), str(path), f"result ({_describe(rec)})", differ)
    return merged


def _moved(rec: Any, root: str) -> Any:
    """``rec`` named by its folder and its path in it."""
    return replace(rec, path=_prefixed(root, rec.path))


def _add(coll: Collection, rec: Record) -> None:
    if isinstance(rec, TaskRecord):
        coll.tasks.append(rec)
    elif isinstance(rec, AverageRecord):
        coll.averages.append(rec)
    else:
        coll.analyses.append(rec)
