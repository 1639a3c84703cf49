"""The jobs of a reproduction as a table: live with rich on a terminal, a plain line per change off one.

A training step shows its step and ETA from its run's ``train_log.jsonl`` (the trainer's own log, the same
wherever it runs); a failed one the first line of its error. ``stsbench reproduce OUT --status`` prints the
same table once from ``OUT/reproduce.json`` (``--history``: with what the orchestration added to each session).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from stsbench.progress import duration
from stsbench.reproduce.state import UNVERIFIED, unverified

ORDER = ("running", "failed", "interrupted", "queued", "not run", "skipped", "done")


def train_progress(record: dict[str, Any], out: str | Path = ".") -> str:
    """``step 120/15625, ETA 1h02m`` from the run's log (its last logged step and the time it took).

    ``out``: the reproduction's folder, which the record's ``folder`` is relative to (an older record's is
    absolute).
    """
    from stsbench.results.portable import resolve

    folder, total = resolve(record.get("folder"), out), record.get("total_steps")
    if not folder:
        return ""
    last = None
    try:
        with (Path(folder) / "train_log.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and isinstance(rec.get("step"), int) and "time" in rec:
                    last = rec
    except OSError:
        return ""
    if last is None:
        return ""
    step, seconds = last["step"], float(last["time"])
    text = f"step {step}" + (f"/{total}" if total else "")
    if total and step > 0 and step < total:
        text += f", ETA {duration((total - step) * seconds / step)}"
    return text


CODE_CHANGED = "changed code"  # shown beside a done step computed by other code than this stsbench's


AGAIN = "done, to run again"  # a done step a rerun would run again (its key changed, its output is gone)


def row(
    step_id: str,
    record: dict[str, Any],
    now: float | None = None,
    changed: bool = False,
    out: str | Path = ".",
    again: str | None = None,
) -> tuple[str, str, str]:
    """(step, status, detail) of one step; ``changed``: it was computed by other code than this stsbench's.

    ``out``: the reproduction's folder (a training's progress is read from its run folder in it). ``again``:
    why a rerun would run this done step again.
    """
    status = record.get("status", "queued")
    if again and status == "done":
        return step_id, AGAIN, again
    if unverified(record) and not changed:
        return (
            step_id,
            f"done, {UNVERIFIED}",
            "finished before stsbench sealed its files: the next run seals them",
        )
    if changed and status == "done":
        return (
            step_id,
            f"done, {CODE_CHANGED}",
            "ran with other stsbench code (--rerun-changed, --keep-changed)",
        )
    detail = ""
    if status == "running":
        since = duration((now or time.time()) - float(record.get("started") or time.time()))
        progress = train_progress(record, out) if record.get("kind") == "train" else ""
        detail = ", ".join(x for x in (progress, f"{since} so far", record.get("where") or "") if x)
    elif status in ("failed", "interrupted", "skipped"):
        detail = record.get("error") or ""
    elif status == "done" and record.get("seconds") is not None:
        detail = duration(record["seconds"])
    return step_id, status, detail


def counts(state: dict[str, Any]) -> str:
    """``3 done, 1 running, 2 queued``."""
    found: dict[str, int] = {}
    for r in state.get("steps", {}).values():
        found[r.get("status", "queued")] = found.get(r.get("status", "queued"), 0) + 1
    return ", ".join(f"{found[s]} {s}" for s in ORDER if s in found)


def status_line(
    state: dict[str, Any],
    changed: list[str] | frozenset[str],
    where: str,
    again: dict[str, str] | None = None,
    check: bool = False,
) -> str:
    """``--status`` as the one line an edition's README carries: how many steps, how many current, which not.

    ``changed``: the done steps whose code is not this stsbench's (:func:`stsbench.reproduce.state.recorded_changed`);
    ``again``: the done steps a rerun would run again, and why; ``check``: replanned (``--status --check``).
    """
    records = state.get("steps", {})
    again = again or {}
    done = [i for i, r in records.items() if r.get("status") == "done" and i not in again]
    current = [i for i in done if i not in changed]
    changed = [i for i in changed if i not in again]
    parts = [
        f"{len(current)} done and current" + (f" ({', '.join(current)})" if 0 < len(current) <= 3 else "")
    ]
    if changed:
        parts.append(f"{len(changed)} done by other stsbench code (done, {CODE_CHANGED})")
    loose = [i for i in done if unverified(records[i])]
    if loose:
        parts.append(f"{len(loose)} of them {UNVERIFIED} (files not sealed yet: the next run seals them)")
    if again:
        first = next(iter(again))
        parts.append(f"{len(again)} to run again ({first}: {again[first]})")
    others: dict[str, int] = {}
    for r in records.values():
        if r.get("status") != "done":
            others[r.get("status", "queued")] = others.get(r.get("status", "queued"), 0) + 1
    parts += [f"{n} {s}" for s, n in others.items()]
    command = f"stsbench reproduce {where} --status" + (" --check" if check else "")
    return f"`{command}` ({len(records)} steps): {'; '.join(parts)}."


def table(
    state: dict[str, Any],
    steps: list[str] | None = None,
    changed: frozenset[str] = frozenset(),
    out: str | Path = ".",
    again: dict[str, str] | None = None,
) -> Any:
    """A rich table of every step (the plan's order when ``steps`` is given); ``changed``: steps of other code.

    ``out``: the reproduction's folder, which its records' paths are relative to.
    """
    from rich.table import Table

    records = state.get("steps", {})
    shown = Table(title=f"{state.get('recipe', '')}: {counts(state)}", title_justify="left")
    for col in ("step", "status", "detail"):
        shown.add_column(col)
    style = {
        "done": "green",
        "failed": "red",
        "running": "cyan",
        "interrupted": "yellow",
        f"done, {CODE_CHANGED}": "yellow",
        AGAIN: "yellow",
        "done, unverified": "yellow",
    }
    for sid in steps or list(records):
        sid_, status, detail = row(
            sid, records[sid], changed=sid in changed, out=out, again=(again or {}).get(sid)
        )
        shown.add_row(sid_, f"[{style.get(status, '')}]{status}" if status in style else status, detail)
    return shown


def session_lines(state: dict[str, Any]) -> list[str]:
    """One line per session: wall time and what the orchestration added (its share of the wall time)."""
    lines = []
    for i, s in enumerate(state.get("sessions", []), start=1):
        share = s.get("orchestration_share")
        lines.append(
            f"session {i}: {s['steps_run']} step(s) run in {duration(s['wall_seconds'])} wall; orchestration "
            f"(planning, bookkeeping, waiting between steps) {s['orchestration_seconds']:.1f} s"
            + (f" = {share * 100:.1f}% of the wall time" if share is not None else "")
            + (" (interrupted)" if s.get("interrupted") else "")
        )
    return lines


class Display:
    """Shows the state as it changes: a live rich table on a terminal, a plain line per change off one.

    Off a terminal (piped, a log file) a running step says again how far it is every ``every`` seconds: a long
    training once printed "running" and then nothing for an hour.
    """

    def __init__(self, console: Any, steps: list[str], out: str | Path = ".", every: float = 60.0) -> None:
        self.console, self.steps, self.out, self.every = console, steps, out, every
        self.live = None
        self.seen: dict[str, str] = {}
        self.said: dict[str, float] = {}  # a running step -> when its line was last printed
        if console.is_terminal:
            from rich.live import Live

            self.live = Live(console=console, refresh_per_second=2, transient=False)

    def __call__(self, state: dict[str, Any]) -> None:
        if self.live is not None:
            if not self.live.is_started:
                self.live.start()
            self.live.update(table(state, self.steps, out=self.out))
            return
        now = time.monotonic()
        for sid in self.steps:
            record = state["steps"][sid]
            again = record.get("status") == "running" and now - self.said.get(sid, now) >= self.every
            if self.seen.get(sid) != record.get("status") or again:
                self.seen[sid] = record.get("status", "")
                self.said[sid] = now
                _, status, detail = row(sid, record, out=self.out)
                self.console.print(f"{sid}: {status}" + (f" ({detail})" if detail else ""), highlight=False)

    def close(self) -> None:
        """Stop the live table (its last frame stays)."""
        if self.live is not None and self.live.is_started:
            self.live.stop()
