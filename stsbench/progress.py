"""Terminal output helpers of the library: one rich progress bar (stderr) and plural nouns for its messages.

Off a terminal (nohup, Slurm, a pipe) the bar becomes plain lines on stderr every
``$STSBENCH_PROGRESS_SECONDS`` seconds (default 15): what, how many, rate, ETA.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from stsbench.errors import StsbenchError

PROGRESS_ENV = "STSBENCH_PROGRESS_SECONDS"
DEFAULT_PROGRESS_SECONDS = 15.0


def duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``1h02m`` (also the reproduction table's)."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class PlainProgress:
    """Progress as log lines, from a timer thread, so a slow batch still gets its line on time."""

    def __init__(self, description: str, total: int, every: float) -> None:
        self.description, self.total, self.every = description, total, every
        self.done = self.lines = 0
        self._start = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="stsbench-progress", daemon=True)

    def advance(self, n: int) -> None:
        """Count ``n`` more items done."""
        self.done += n

    def line(self) -> str:
        """``<what>: done/total (pct), rate/s, ETA`` as of now."""
        elapsed = time.monotonic() - self._start
        done = self.done
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = duration((self.total - done) / rate) if rate > 0 else "unknown"
        pct = 100.0 * done / self.total if self.total else 100.0
        return f"{self.description}: {done}/{self.total} ({pct:.0f}%), {rate:.1f}/s, ETA {eta}"

    def _emit(self, text: str) -> None:
        # a display, like the rich bar it replaces off a terminal: straight to stderr, not a log record
        sys.stderr.write(text + "\n")
        sys.stderr.flush()
        self.lines += 1

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._emit(self.line())

    def __enter__(self) -> PlainProgress:
        self._thread.start()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self._stop.set()
        self._thread.join()
        if exc_type is None and self.lines:  # a log that said "ETA" also says when it ended
            took = duration(time.monotonic() - self._start)
            self._emit(f"{self.description}: {self.done}/{self.total} done in {took}")


def progress_seconds() -> float:
    """Seconds between plain progress lines: ``$STSBENCH_PROGRESS_SECONDS``, default 15."""
    raw = os.environ.get(PROGRESS_ENV)
    try:
        value = float(raw) if raw else DEFAULT_PROGRESS_SECONDS
    except ValueError:
        value = -1.0
    if not value > 0:
        raise StsbenchError(f"${PROGRESS_ENV}={raw!r}: give a number of seconds above 0")
    return value


@contextmanager
def progress_bar(description: str, total: int, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; shows a transient rich bar on stderr when ``enabled``, plain lines off a terminal."""
    if not enabled:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        with PlainProgress(description, total, progress_seconds()) as plain:
            yield plain.advance
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, console=console, transient=True) as prog:
        task = prog.add_task(description, total=total)
        yield lambda n: prog.advance(task, n)


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``1 file``, ``2 files`` (``many`` for irregular plurals)."""
    return f"{n} {noun if n == 1 else many or noun + 's'}"


def seeds_a_setting(least: int, most: int) -> str:
    """``3 seeds a setting``, ``2-3 seeds a setting``, ``1 seed a setting``."""
    n = str(least) if least == most else f"{least}-{most}"
    return f"{n} seed{'s' * (n != '1')} a setting"
