"""What every analysis shares: the seven length-bias tasks, their short names and pair-data loading."""

from __future__ import annotations

from pathlib import Path

from stsbench.data.sts import Pairs, load_pairs, pair_files  # noqa: F401 - pair_files: the analyses import it here
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
