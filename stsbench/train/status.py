"""What a training run's folder holds, read without torch: ``reproduce --dry-run`` and ``--status`` ask it.

The names of a run folder's saved state live here, and :mod:`stsbench.train.checkpoint` (which writes them, and
imports torch) takes them from here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from stsbench.files import visible_entries
from stsbench.results.runs import TRAIN_LOG

LAST = "last"  # DIR/last/: the state a run resumes from
STATE_FILE = "state.pt"

Status = Literal["finished", "resumable", "started", "new"]


def run_status(folder: Path) -> Status:
    """Say what a seed's folder holds.

    ``finished`` (its log ends with the ``end`` record), ``resumable`` (``DIR/last``), ``started`` (files, no
    saved state) or ``new`` (absent or empty).
    """
    if _last_event(folder / TRAIN_LOG) == "end":
        return "finished"
    if (folder / LAST / STATE_FILE).is_file():
        return "resumable"
    if visible_entries(folder):  # a seed's lock file alone is no start
        return "started"
    return "new"


def continue_flags(status: Status) -> tuple[str, ...]:
    """The ``train`` flags that carry on in a folder of ``status``.

    ``--resume`` a saved state, ``--overwrite`` the files of a start that saved none, nothing for a new folder (a
    finished one is the caller's to keep).
    """
    return {"resumable": ("--resume",), "started": ("--overwrite",)}.get(status, ())


def _last_event(log: Path) -> str | None:
    try:
        lines = [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln.strip()]
        record = json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None
    return record.get("event") if isinstance(record, dict) else None
