"""What a report reads from a results folder: every result, tolerantly, through the results layer's one reader.

:func:`collect` is :func:`stsbench.results.read.read_folder` (its rules: what is read, what is passed over,
hidden files) with what only the report wants: every results kind (task results, analyses rebuilt as the types
the analysis registry names, ``average_sts.json``), the training runs, and a warning naming each file that
cannot be read where the comparisons would stop. The record types are the results layer's, named here too for
the report modules.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path

from stsbench.analyses.registry import all_analyses
from stsbench.results.read import (
    ALL_KINDS,
    AnalysisRecord,
    AverageRecord,
    Collection,
    TaskRecord,
    read_folders,
)
from stsbench.results.runs import TrainRun

__all__ = ["AnalysisRecord", "AverageRecord", "Collection", "TaskRecord", "TrainRun", "collect"]


def analysis_types() -> dict[str, type]:
    """``{analysis name: result type}`` from the analysis registry."""
    return {a.name: a.result_class() for a in all_analyses()}


_SEED_FOLDER = re.compile(r"^(?P<run>.+)__seed-(?P<seed>\d+)$")


def _run_and_seed(path: str) -> tuple[str, int | None] | None:
    """The training run (and seed) a results path belongs to, None for one of no training (a baseline).

    ``<run>__seed-<s>/...`` (a seed's results), ``analyses/<run>__seed-<s>/...``, ``train/<run>/seed-<s>/...``
    (the report's copies of a training's logs) and ``runs__<run>/...`` (a run's seed aggregate: no one seed).
    """
    parts = path.split("/")
    if parts[0] == "analyses" and len(parts) > 1:
        parts = parts[1:]
    if parts[0] == "train" and len(parts) > 2 and parts[2].startswith("seed-") and parts[2][5:].isdigit():
        return parts[1], int(parts[2][5:])
    if parts[0].startswith("runs__"):
        return parts[0][len("runs__") :], None
    found = _SEED_FOLDER.match(parts[0])
    return (found["run"], int(found["seed"])) if found else None


def only(coll: Collection, runs: Sequence[str] | None, seeds: Sequence[int] | None) -> Collection:
    """``coll`` with only the training runs ``runs`` and their seeds ``seeds`` (None: all).

    Results of no training (a baseline) are kept; a run's seed aggregate goes with a seed filter (it pools
    every seed).

    ``report --runs/--seeds``: a report of a subset judges and shows that subset, every table and figure
    (never "not run" for the runs it leaves out, nor drawn).
    """
    if runs is None and seeds is None:
        return coll

    def kept(path: str) -> bool:
        found = _run_and_seed(path)
        if found is None:
            return True
        run, seed = found
        if runs is not None and run not in runs:
            return False
        return seeds is None or (seed is not None and seed in seeds)

    return dataclasses.replace(
        coll,
        tasks=[r for r in coll.tasks if kept(r.path)],
        analyses=[r for r in coll.analyses if kept(r.path)],
        runs=[r for r in coll.runs if kept(r.path)],
        averages=[r for r in coll.averages if kept(r.path)],
        run_dirs=[d for d in coll.run_dirs if kept(d)],
    )


def collect(results_dir: str | Path | Sequence[str | Path], strict: bool = False) -> Collection:
    """Load every result and training run under ``results_dir``; what cannot be read becomes a warning.

    Several folders are merged (:func:`stsbench.results.read.read_folders`: one measurement found in two of
    them counts once, two copies that differ are refused). ``strict``: raise a bad file's one line instead of a
    warning. Raises ``StsbenchError`` when a folder does not exist.
    """
    folders = [results_dir] if isinstance(results_dir, (str, Path)) else list(results_dir)
    return read_folders(
        folders,
        kinds=ALL_KINDS,
        result_types=analysis_types(),
        runs=True,
        strict=strict,
        what="`stsbench run` / the analyses",
    )
