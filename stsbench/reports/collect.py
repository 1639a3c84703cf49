"""What a report reads from a results folder: every result, tolerantly, through the results layer's one reader.

:func:`collect` is :func:`stsbench.results.folder.read_folder` (its rules: what is read, what is passed over,
hidden files) with what only the report wants: every results kind (task results, analyses rebuilt as the types
the analysis registry names, ``average_sts.json``), the training runs, and a warning naming each file that
cannot be read where the comparisons would stop. The record types are the results layer's, named here too for
the report modules.
"""

from __future__ import annotations

from pathlib import Path

from stsbench.analyses.registry import all_analyses
from stsbench.results.folder import (
    ALL_KINDS,
    AnalysisRecord,
    AverageRecord,
    Collection,
    TaskRecord,
    read_folder,
)
from stsbench.results.runs import TrainRun

__all__ = ["AnalysisRecord", "AverageRecord", "Collection", "TaskRecord", "TrainRun", "collect"]


def analysis_types() -> dict[str, type]:
    """``{analysis name: result type}`` from the analysis registry."""
    return {a.name: a.result_class() for a in all_analyses()}


def collect(results_dir: str | Path, strict: bool = False) -> Collection:
    """Load every result and training run under ``results_dir``; what cannot be read becomes a warning.

    ``strict``: raise that file's one line instead. Raises ``StsbenchError`` when the folder does not exist.
    """
    return read_folder(
        results_dir,
        kinds=ALL_KINDS,
        result_types=analysis_types(),
        runs=True,
        strict=strict,
        what="`stsbench run` / the analyses",
    )
