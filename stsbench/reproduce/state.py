"""What a reproduction has done, in ``OUT/reproduce.json`` (written atomically after every change).

Per step: its key when it last ran, its status (``queued``, ``running``, ``done``, ``failed``, ``interrupted``,
``skipped`` when a step it needs failed), start and end times, exit status, the first line of its error and its
log. Per session (one ``stsbench reproduce`` process): its wall time, the time some step was running and the
rest, what the orchestration added (planning, bookkeeping, waiting between steps). A rerun compares each
step's key with the recorded one (:func:`decide`): equal and done is skipped, a training run interrupted is
resumed (``--resume``), anything whose key changed runs again, and so does every step after it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_json
from stsbench.reproduce.plan import Plan, Step

STATE_FILE = "reproduce.json"
KIND = "stsbench-reproduce"


def state_path(out: Path) -> Path:
    """``OUT/reproduce.json``."""
    return Path(out) / STATE_FILE


def load_state(out: Path) -> dict[str, Any]:
    """The recorded state of ``out`` (an empty one where none is); one line for a file that is not one."""
    path = state_path(out)
    if not path.is_file():
        return {"kind": KIND, "steps": {}, "sessions": []}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StsbenchError(f"{path} cannot be read ({exc}); remove it to start the plan again") from None
    if not isinstance(state, dict) or state.get("kind") != KIND:
        raise StsbenchError(f"{path} is not the state of stsbench reproduce; pass another --out")
    return state


def save_state(out: Path, state: dict[str, Any]) -> None:
    """Write ``state`` atomically (a reader, or a kill, never sees half a file)."""
    atomic_write_json(state_path(out), state)


def log_path(out: Path, step_id: str) -> Path:
    """``OUT/logs/<step id, / as __>.log``."""
    return Path(out) / "logs" / (step_id.replace("/", "__") + ".log")


def decide(step: Step, record: dict[str, Any] | None) -> tuple[str, tuple[str, ...]]:
    """``("skip", ())`` or ``("run", extra flags)`` for ``step`` given its record of an earlier session.

    A training run's folder says how far it got (:func:`stsbench.train.seeds.run_status`): with the same
    key, finished is kept (a kill after it finished), resumable resumes, started starts again; with another
    key (or none recorded) a used folder is trained again from the start (``--overwrite``).
    """
    same = record is not None and record.get("key") == step.key
    if step.kind != "train":
        return ("skip", ()) if same and record.get("status") == "done" else ("run", ())
    from stsbench.train.seeds import continue_flags, run_status

    assert step.folder is not None
    found = run_status(step.folder)
    if same:
        return ("skip", ()) if found == "finished" else ("run", continue_flags(found))
    return ("run", ()) if found == "new" else ("run", ("--overwrite",))


def initial_actions(plan: Plan, state: dict[str, Any]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each step's action: a step runs when its own decision says so or any step it reads runs."""
    actions: dict[str, tuple[str, tuple[str, ...]]] = {}
    for step in plan.steps:  # in order: a step's deps come before it
        action = decide(step, state["steps"].get(step.id))
        if action[0] == "skip" and any(actions[d][0] == "run" for d in step.deps):
            action = ("run", ())
        actions[step.id] = action
    return actions


def busy_seconds(intervals: Sequence[tuple[float, float]]) -> float:
    """The time covered by at least one of ``intervals`` (their union's length)."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total


def session_record(started: float, intervals: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """The session's wall time and what the orchestration added: the wall time no step was running."""
    ended = time.time()
    wall = ended - started
    busy = busy_seconds(intervals)
    return {
        "started": started,
        "ended": ended,
        "wall_seconds": round(wall, 3),
        "steps_seconds": round(busy, 3),
        "orchestration_seconds": round(wall - busy, 3),
        "orchestration_share": round((wall - busy) / wall, 4) if wall > 0 else None,
        "steps_run": len(intervals),
    }
