"""What a report reads from a results folder: every result, tolerantly, through the results layer's one reader.

:func:`collect` is :func:`stsbench.results.folder.read_folder` (its rules: what is read, what is passed over,
hidden files) with what only the report wants: every results kind (task results, analyses rebuilt as the types
the analysis registry names, ``average_sts.json``), the training runs, and a warning naming each file that
cannot be read where the comparisons would stop. The record types are the results layer's, named here too for
the report modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stsbench.analyses.registry import all_analyses
from stsbench.results.folder import (
    ALL_KINDS,
    AnalysisRecord,
    AverageRecord,
    Collection,
    TaskRecord,
)
from stsbench.results.merge import read_folders
from stsbench.results.runs import TrainRun

__all__ = ["AnalysisRecord", "AverageRecord", "Collection", "TaskRecord", "TrainRun", "collect"]


def analysis_types() -> dict[str, type]:
    """``{analysis name: result type}`` from the analysis registry."""
    return {a.name: a.result_class() for a in all_analyses()}


def collect(results_dir: str | Path | Sequence[str | Path], strict: bool = False) -> Collection:
    """Load every result and training run under ``results_dir``; what cannot be read becomes a warning.

    Several folders are merged (:func:`stsbench.results.merge.read_folders`: one measurement found in two of
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
