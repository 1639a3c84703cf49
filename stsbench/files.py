"""Atomic file writes (a reader never sees a half-written file), user YAML in one-line errors, the output lock.

The output lock, ``OUT/.stsbench.lock``, held for a whole run, and who holds it.

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

import io
import json
import logging
import os
import socket
import tempfile
import time
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stsbench.errors import StsbenchError
from stsbench.paths import default_cache_dir

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)
LOCK_FILE = ".stsbench.lock"
HOLDER_FILE = ".stsbench.holder"  # JSON; not *.json, which model fingerprints read
LOCK_FILES = frozenset({LOCK_FILE, HOLDER_FILE})
WAIT_ENV = "STSBENCH_LOCK_WAIT_S"  # seconds a refused lock is waited for first (a restarted Slurm job's)


def current_umask() -> int:
    """The process's umask (read by setting it and setting it back: the only portable way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    The file gets the mode a plain ``open(path, "w")`` would give (0666 less the umask): ``mkstemp`` creates
    its file 0600, which would hide results from colleagues on a shared machine.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk: name the file (write() does not)
            exc.filename = str(path)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write UTF-8 text atomically."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def to_json(obj: Any) -> str:
    """Serialise to pretty, key-sorted JSON; refuse (never ``str()``) what JSON does not know."""
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as JSON atomically (see :func:`to_json`)."""
    return atomic_write_text(path, to_json(obj))


def npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    """``arrays`` as the bytes of a compressed ``.npz``, the same bytes for the same arrays.

    ``numpy.savez_compressed`` stamps each member with the current time, so two runs would write different
    files (and checksums); here every member has the zip epoch. ``numpy.load`` reads it (no pickles).
    """
    import numpy as np

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, array in arrays.items():
            member = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            member.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(member, "w") as fh:
                np.lib.format.write_array(fh, np.ascontiguousarray(array), allow_pickle=False)
    return buf.getvalue()


def atomic_write_npz(path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray]) -> bytes:
    """Write ``arrays`` as a compressed ``.npz`` atomically (see :func:`npz_bytes`); returns the bytes written."""
    data = npz_bytes(arrays)
    atomic_write_bytes(path, data)
    return data


def check_writable_dir(path: str | os.PathLike[str], what: str) -> Path:
    """Refuse, before any model loads, an output folder that is a file or that cannot be written.

    ``path`` need not exist: its nearest existing ancestor must be a folder in which a file can be created
    (probed by creating and removing an empty temporary file, which also holds for root and read-only
    mounts, where ``os.access`` says yes). Raises ``StsbenchError`` naming ``what`` (e.g. ``--output``).
    """
    path = Path(path).expanduser()
    probe = path
    while not probe.exists() and probe != probe.parent:
        if probe.is_symlink():  # a dangling link: mkdir would fail on it
            raise StsbenchError(
                f"{what} {path}: {probe} is a broken symbolic link; remove it or pick another folder"
            )
        probe = probe.parent
    if not probe.is_dir():
        where = "is a file" if probe == path else f"is inside {probe}, which is a file"
        raise StsbenchError(f"{what} {path} {where}; pass a folder")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".stsbench-write-check.", dir=probe)
        os.close(fd)
        Path(tmp).unlink()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise StsbenchError(
            f"{what} {path}: cannot write in {probe} ({reason}); pick a folder you can write"
        ) from None
    return path


def check_outputs(
    *, output: str | os.PathLike[str] | None, cache_dir: str | os.PathLike[str] | None, use_cache: bool
) -> None:
    """Preflight of a command that encodes: its ``--output`` and, when used, its embedding cache folder."""
    if output is not None:
        check_writable_dir(output, "--output")
    if use_cache:
        check_writable_dir(cache_dir if cache_dir is not None else default_cache_dir(), "--cache-dir")


def parse_yaml(text: str, where: str, error: type[Exception] | None = None) -> Any:
    """``text`` parsed as YAML; else ``error`` (a ``StsbenchError`` class) ``{where}: not valid YAML at line N: why``."""
    import yaml

    try:  # safe_load, in C where built
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark is not None else ""
        why = getattr(exc, "problem", exc)
        raise (error or StsbenchError)(f"{where}: not valid YAML{at}: {why}") from None


def read_yaml(
    path: str | os.PathLike[str], where: str, expected: str, error: type[Exception] | None = None
) -> Any:
    """The YAML file ``path`` a user named, parsed (:func:`parse_yaml`).

    A missing file, a folder or an unreadable one is one ``StsbenchError`` line naming ``where`` and, where it
    helps, what to give instead (``expected``: "a YAML list of claims").
    """
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except FileNotFoundError:
        raise StsbenchError(f"{where}: no such file; give {expected}") from None
    except IsADirectoryError:
        raise StsbenchError(f"{where} is a folder; give {expected}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise StsbenchError(f"{where} cannot be read: {exc}") from None
    return parse_yaml(text, where, error)


def visible_entries(folder: Path) -> list[Path]:
    """What ``folder`` holds besides its lock files (none when it does not exist)."""
    return [p for p in folder.iterdir() if p.name not in LOCK_FILES] if folder.is_dir() else []


def describe_holder(folder: Path) -> str:
    """``pid N on HOST since TIME`` from the holder file; a plain phrase when it cannot be read."""
    try:
        holder = json.loads((folder / HOLDER_FILE).read_text(encoding="utf-8"))
        since = time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(holder["started"]))
        return f"pid {holder['pid']} on {holder['host']} since {since}"
    except (OSError, ValueError, KeyError, TypeError, OverflowError):
        return "another process (which one it has not written yet)"


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
        try:  # STSBENCH_LOCK_WAIT_S in seconds (0 when unset or not a number >= 0)
            patience = None if wait else max(0.0, float(os.environ.get(WAIT_ENV) or 0))
        except ValueError:
            patience = 0.0
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
