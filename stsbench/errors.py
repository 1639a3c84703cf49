"""The one exception a user can cause, and how the CLI shows it."""

from __future__ import annotations


class StsbenchError(Exception):
    """A problem the user can fix (missing file, bad option, malformed data).

    The message is one line that says what is wrong and how to fix it; the CLI prints it without a
    traceback and exits non-zero.
    """


def where(path: object, line: int | None = None) -> str:
    """Format a file location for error messages: ``path`` or ``path:line``."""
    return f"{path}:{line}" if line is not None else str(path)
