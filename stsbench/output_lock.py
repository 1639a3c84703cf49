"""One writer per output folder: ``OUT/.stsbench.lock``, held for a whole run, and who holds it.

The lock is a ``filelock`` (``flock`` on Unix): the operating system releases it when its process ends,
``kill -9`` included, so a lock file left behind never blocks a later run. Its holder writes
``OUT/.stsbench.holder`` (JSON: PID, host, start time) beside it, which a refused run reads for its one
line. Both files stay hidden in ``OUT`` (removing the lock file while held would let a second writer lock a new
file of the same name); code that asks whether ``OUT`` is empty ignores them (:func:`visible_entries`).

A job started again by Slurm (requeued, preempted) may start while its previous attempt's process is still being
killed on the node, or on another node behind a shared filesystem: the Slurm executor sets ``STSBENCH_LOCK_WAIT_S``
in such a job, and a lock that would be refused is then waited for that many seconds first.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_json, current_umask

log = logging.getLogger(__name__)
LOCK_FILE = ".stsbench.lock"
HOLDER_FILE = ".stsbench.holder"  # JSON; not *.json, which model fingerprints read
LOCK_FILES = frozenset({LOCK_FILE, HOLDER_FILE})
WAIT_ENV = "STSBENCH_LOCK_WAIT_S"  # seconds a refused lock is waited for first (a restarted Slurm job's)


def visible_entries(folder: Path) -> list[Path]:
    """What ``folder`` holds besides its lock files (none when it does not exist)."""
    if not folder.is_dir():
        return []
    return [p for p in folder.iterdir() if p.name not in LOCK_FILES]


def describe_holder(folder: Path) -> str:
    """``pid N on HOST since TIME`` from the holder file; a plain phrase when it cannot be read."""
    try:
        holder = json.loads((folder / HOLDER_FILE).read_text(encoding="utf-8"))
        since = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(holder["started"]))
        return f"pid {holder['pid']} on {holder['host']} since {since}"
    except (OSError, ValueError, KeyError, TypeError, OverflowError):
        return "another process (which one it has not written yet)"


def _patience() -> float:
    """``STSBENCH_LOCK_WAIT_S`` in seconds (0 when unset or not a number >= 0)."""
    try:
        return max(0.0, float(os.environ.get(WAIT_ENV) or 0))
    except ValueError:
        return 0.0


def _refused(what: str, folder: Path, waited: str = "") -> StsbenchError:
    return StsbenchError(
        f"{what} {folder} is being written by {describe_holder(folder)}{waited}; wait for it to end or stop it, "
        f"or pass another {what}"
    )


@contextmanager
def output_lock(
    folder: str | os.PathLike[str], what: str = "--output", *, wait: bool = False
) -> Iterator[Path]:
    """Hold ``folder``'s lock for the ``with`` block (creating ``folder``); refuse in one line if another holds it.

    ``what`` names the option in the message (``--output``). ``wait``: wait for the holder instead, saying so
    once (``stsbench run``, whose second writer only replaces the first one's results).
    """
    from filelock import FileLock, Timeout

    folder = Path(folder).expanduser()
    if folder.exists() and not folder.is_dir():
        raise StsbenchError(f"{what} {folder} is a file; pass a folder")
    created = not folder.exists()
    folder.mkdir(parents=True, exist_ok=True)
    # filelock 3.12 fchmods 0644 otherwise
    lock = FileLock(str(folder / LOCK_FILE), mode=0o666 & ~current_umask())
    try:
        lock.acquire(timeout=0)
    except Timeout:
        patience = None if wait else _patience()
        if patience == 0:
            raise _refused(what, folder) from None
        log.info("waiting for %s, which is writing %s", describe_holder(folder), folder)
        try:
            lock.acquire(timeout=-1 if patience is None else patience)
        except Timeout:
            raise _refused(what, folder, f" (waited {patience:g} s)") from None
    holder = folder / HOLDER_FILE
    try:
        atomic_write_json(holder, {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()})
        yield folder
    finally:
        holder.unlink(missing_ok=True)  # while still held: the file is ours
        if created and not visible_entries(folder):  # refused before writing anything: leave no folder
            (folder / LOCK_FILE).unlink(missing_ok=True)
            folder.rmdir()
        lock.release()
