"""Terminal output helpers: one rich progress bar (stderr) and the console tables are printed on (stdout)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def progress_bar(description: str, total: int, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """Yield ``advance(n)``; shows a transient rich bar on stderr when ``enabled``."""
    if not enabled:
        yield lambda n: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,
    ) as prog:
        task = prog.add_task(description, total=total)
        yield lambda n: prog.advance(task, n)


def table_console():
    """A rich console on stdout; piped or redirected, 200 columns wide instead of rich's 80, so no cell is cut."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)
