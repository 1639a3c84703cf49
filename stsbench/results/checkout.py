"""The stsbench checkout the running code comes from: its commit and the package's files that differ from it.

Results record the commit they were made by, ``<sha>-dirty`` where uncommitted code made them
(:func:`stsbench.results.store.git_commit`), never which files differed. A report made by a dirty checkout names them
in its Provenance section (:func:`stsbench.reports.provenance.code_lines`), and each session of ``stsbench reproduce``
records them in ``reproduce.json`` (:func:`session_code`).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGE = "stsbench"  # only the package's own files: docs, tests and reports change no figure
ROOT = Path(__file__).resolve().parents[2]  # the checkout holding this package, when it is one


@dataclass(frozen=True)
class Checkout:
    """A checkout's commit (the full sha of HEAD) and its package files that differ from it, sorted.

    ``differing``: tracked files changed since the commit (staged or not) and untracked files that git does not
    ignore, under ``stsbench/``, as paths from the checkout's root.
    """

    commit: str
    differing: tuple[str, ...] = ()

    @property
    def dirty(self) -> bool:
        """Whether some file of the package differs from the commit."""
        return bool(self.differing)


def checkout(root: Path = ROOT) -> Checkout | None:
    """The checkout at ``root`` (default: the one this package runs from); None outside a git checkout or without git."""
    if not (root / ".git").exists():
        return None

    def git(*args: str) -> list[str]:
        done = subprocess.run(  # noqa: S603 - git, with arguments of ours
            ["git", "-C", str(root), *args],  # noqa: S607
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        )
        return [line for line in done.stdout.splitlines() if line.strip()]

    try:
        (sha,) = git("rev-parse", "HEAD")
        changed = git("diff", "--name-only", "HEAD", "--", PACKAGE)
        untracked = git("ls-files", "--others", "--exclude-standard", "--", PACKAGE)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return Checkout(sha, tuple(sorted({*changed, *untracked})))


def session_code(found: Checkout | None) -> dict[str, Any]:
    """What a session of ``stsbench reproduce`` records of the code it starts on: nothing when it is clean.

    On a dirty checkout, ``git_commit`` as results record it (``<sha>-dirty``) and ``differing_files``, the
    package's files that differ from that commit when the session started.
    """
    if found is None or not found.dirty:
        return {}
    return {"git_commit": f"{found.commit}-dirty", "differing_files": list(found.differing)}
