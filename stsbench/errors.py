"""The exceptions the CLI shows as one line, and the exit status each ends a command with.

Every command exits with one of (docs/commands.md, "Exit codes"):

- 0: success;
- 1: the answer is negative: a check or a verdict disagrees (:class:`Negative`), ``report --strict`` skipped
  a file or found nothing;
- 2: bad usage or input: an unknown name or option, a missing or malformed file (:class:`StsbenchError`);
- 3: a step or a run failed: a training run stopped (a non-finite loss), a seed or a reproduction's step
  failed (:class:`RunFailed`);
- 130: interrupted (Ctrl-C, SIGINT).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import Any

_OS_ERRORS = {
    errno.ENOSPC: ("no space left on device", "free space in {folder}"),
    errno.EDQUOT: ("disk quota exceeded", "free space in {folder}"),
    errno.EROFS: ("read-only file system", "make {folder} writable"),
    errno.EACCES: ("permission denied", "give this user access to {folder}"),
    errno.EPERM: ("operation not permitted", "give this user access to {folder}"),
}


SUCCESS, NEGATIVE, USAGE, FAILED, INTERRUPTED = 0, 1, 2, 3, 130


class StsbenchError(Exception):
    """A problem the user can fix (missing file, bad option, malformed data).

    The message is one line that says what is wrong and how to fix it; the CLI prints it without a
    traceback and exits with :attr:`exit_code` (2, bad usage or input; subclasses say otherwise).
    """

    exit_code: int = USAGE


class Negative(StsbenchError):
    """The command did its work and the answer is no: a check or a verdict disagrees (exit status 1)."""

    exit_code = NEGATIVE


class RunFailed(StsbenchError):
    """A training run, a seed or a reproduction's step failed while running (exit status 3)."""

    exit_code = FAILED


class Interrupted(StsbenchError):
    """Stopped by SIGINT or SIGTERM after saving where it stood (exit status 130, as the shell's for Ctrl-C)."""

    exit_code = INTERRUPTED


def where(path: object, line: int | None = None) -> str:
    """Format a file location for error messages: ``path`` or ``path:line``."""
    return f"{path}:{line}" if line is not None else str(path)


def os_error_line(exc: OSError) -> str | None:
    """One line for a full disk, a read-only or a forbidden folder (errno 28, 122, 30, 13, 1) naming the folder.

    None for any other ``OSError`` (a bug, shown with its traceback).
    """
    known = _OS_ERRORS.get(exc.errno) if exc.errno is not None else None
    if known is None:
        return None
    what, fix = known
    if exc.filename is None:
        return f"{what}; free space or make the output and cache folders writable, or pass others"
    path = Path(os.fsdecode(exc.filename))
    folder = path if path.is_dir() else path.parent
    return f"{what}: {path}; {fix.format(folder=folder)}, or pass another folder (--output, --cache-dir)"


def validation_line(exc: Any) -> str:
    """A pydantic ``ValidationError`` as one line: its first error, ``loc.of.it: message``, in stsbench's words.

    An unknown key and a missing one are said as such (pydantic's "Extra inputs are not permitted" and "Field
    required" name neither), and a validator's own message loses pydantic's "Value error, " prefix.
    """
    err = exc.errors()[0]
    parts = [str(p) for p in err["loc"]]
    loc = ".".join(parts)
    kind, msg = err.get("type"), str(err["msg"]).removeprefix("Value error, ")
    if kind == "extra_forbidden" and parts:
        where = ".".join(parts[:-1])
        return f"{where + ': ' if where else ''}unknown key {parts[-1]!r}; remove it or check its spelling"
    if kind == "missing" and parts:
        return f"{loc}: missing; this key is required"
    return f"{loc + ': ' if loc else ''}{msg}"
