"""What every analysis shares: the seven length-bias tasks, their short names and pair-data loading."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stsbench.data.sts import Pairs, load_pairs
from stsbench.tasks.registry import STS_TASK_NAMES
from stsbench.tasks.registry import short_name as _registry_short_name

# ESimCSE COLING Table 7's seven test sets, in its column order
LENGTH_TASKS = list(STS_TASK_NAMES)


def short_name(task: str) -> str:
    """Name a task as the papers' columns do (STS-B, SICK-R): its first alias, else its name."""
    return _registry_short_name(task)


def load_many(data_dir: Path, tasks: list[str], split: str) -> list[Pairs]:
    """``load_pairs`` for each task (STS12-16 only have test)."""
    return [load_pairs(data_dir, t, split) for t in tasks]


Interval = tuple[float, float] | None  # one checkpoint's bootstrap interval over pairs, in points; None: none


def published_pairs(
    measured: dict[str, float | None],
    entry: Any,
    scale: float = 1.0,
    intervals: dict[str, Interval] | None = None,
) -> dict[str, tuple[float, float, Interval]]:
    """``{column: (measured x scale, published x scale, interval)}`` for the entry's columns measured here."""
    intervals = intervals or {}
    return {
        c: (v * scale, float(entry.values[c]) * scale, intervals.get(c))
        for c, v in measured.items()
        if v is not None and c in entry.values
    }
