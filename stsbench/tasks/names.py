"""Task names, task sets and the spellings users type, without importing a task (no torch, no scipy).

A command checks ``--tasks`` here before anything heavy loads, so a typo is refused at once, with the nearest
name. The names live in the task registry (:mod:`stsbench.tasks.registry`), which this module reads.
"""

from __future__ import annotations

from stsbench.tasks.registry import (
    SHORT_NAMES,
    STS_TASK_NAMES,
    TASK_NAMES,
    TASK_SETS,
    TRANSFER_TASK_NAMES,
    short_name,
    task_names,
)

__all__ = [
    "SHORT_NAMES",
    "STS_TASK_NAMES",
    "TASK_NAMES",
    "TASK_SETS",
    "TRANSFER_TASK_NAMES",
    "short_name",
    "task_names",
]
