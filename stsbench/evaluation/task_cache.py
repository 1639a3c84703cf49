"""STS tasks as parsed, kept beside the embedding cache: a warm run does not read SentEval's files again.

``<cache>/tasks/<key>.parsed``, one file per task and split. The key is a sha256 of all that the parse
depends on: the task's declaration (its :class:`~stsbench.data.sts_spec.STSSpec`), the split, the source of the
readers (``stsbench/data/sts.py`` and ``integrity.py``, whose :func:`~stsbench.data.integrity.read_lines` reads
every line: an edited reader parses again) and the sha256 of each
file read (cached by path, size, mtime_ns, ctime_ns and inode, :func:`stsbench.sources.sha256_files`,
which the data check has computed already). The file is a JSON line (key, task name, scale, subset names, the arrays' types
and lengths), the sha256 of that line and the arrays, then the arrays: the distinct sentences (newline-joined: a
sentence is tokens joined by single spaces, never a newline), the int32 rows of each pair's two sentences, the
float64 gold scores, the subset codes.

A file that is missing, unreadable, of another key or whose digest does not match is never used: the task is
read from its files and the cache file rewritten (atomically). Tasks whose ``load`` is their own (not
:class:`~stsbench.tasks.sts.STSTask`'s) and transfer tasks are read as before.
"""

from __future__ import annotations

import hashlib
import json
import logging
from functools import lru_cache
from pathlib import Path

import numpy as np

from stsbench.data import integrity
from stsbench.data import sts as sts_reader
from stsbench.data.integrity import relative
from stsbench.data.sts import Pairs
from stsbench.sources import sha256_files
from stsbench.tasks.base import Mode, Task
from stsbench.tasks.sts import STSTask

log = logging.getLogger(__name__)
FORMAT = 1  # of the cache file; raise it when its layout changes
FOLDER = "tasks"


@lru_cache(maxsize=1)
def _readers_digest() -> str:
    h = hashlib.sha256()
    for module in (sts_reader, integrity):
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()


def cache_key(task: STSTask, data_dir: Path, mode: Mode) -> str:
    """The sha256 naming ``task``'s cache file for ``mode``'s split (files hashed, or read from the hash cache)."""
    files = task.files(data_dir, mode)
    digests = sha256_files(files)
    material = {
        "format": FORMAT,
        "spec": repr(task.spec),
        "split": task.split(mode),
        "readers": _readers_digest(),
        "files": [[relative(data_dir, f), digests[Path(f)]] for f in files],
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _encode(pairs: Pairs, key: str) -> bytes:
    """The cache file: a JSON line (what the arrays are), the sha256 of that line and the arrays, the arrays."""
    texts = list(dict.fromkeys(pairs.sent1 + pairs.sent2))
    row = {t: i for i, t in enumerate(texts)}
    names = pairs.subsets()
    code = {n: i for i, n in enumerate(names)}
    arrays = {
        "texts": np.frombuffer("\n".join(texts).encode("utf-8"), dtype=np.uint8),
        "a": np.array([row[t] for t in pairs.sent1], dtype="<i4"),
        "b": np.array([row[t] for t in pairs.sent2], dtype="<i4"),
        "gold": np.asarray(pairs.gold, dtype="<f8"),
        "codes": np.array([code[s] for s in pairs.subset], dtype="<i4"),
    }
    meta = {"format": FORMAT, "key": key, "name": pairs.name, "subsets": names, "scale": list(pairs.scale)}
    meta["arrays"] = [[name, a.dtype.str, len(a)] for name, a in arrays.items()]
    line = json.dumps(meta).encode()
    body = b"".join(a.tobytes() for a in arrays.values())
    return b"\n".join([line, hashlib.sha256(line + body).hexdigest().encode(), body])


def _decode(path: Path, key: str) -> Pairs | None:
    """The pairs a cache file holds; None when it is not there, not readable, of another key or corrupt."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        end = data.index(b"\n")
        line, digest, body = data[:end], data[end + 1 : end + 65], memoryview(data)[end + 66 :]
        check = hashlib.sha256(line)
        check.update(body)
        if check.hexdigest().encode() != digest:
            raise ValueError("its sha256 does not match")
        meta = json.loads(line)
        if meta["key"] != key:
            raise ValueError("the file of another task or data")
        arrays, offset = {}, 0
        for name, dtype, count in meta["arrays"]:
            arrays[name] = np.frombuffer(body, dtype=dtype, count=count, offset=offset)
            offset += arrays[name].nbytes
        if offset != len(body):
            raise ValueError("a length that does not match")
        texts = arrays["texts"].tobytes().decode("utf-8").split("\n")
        names = meta["subsets"]
        return Pairs(
            meta["name"],
            [texts[i] for i in arrays["a"].tolist()],
            [texts[i] for i in arrays["b"].tolist()],
            arrays["gold"].astype(np.float64),  # a copy: writable, native order
            [names[c] for c in arrays["codes"].tolist()],
            tuple(meta["scale"]),
        )
    except Exception as exc:  # truncated, damaged, another key: the task's files are read again
        log.debug("task cache file %s is not used (%s); the task's files are read again", path, exc)
        return None


def load_task(task: Task, data_dir: Path, mode: Mode, cache_root: Path | None):
    """``task.load(data_dir, mode)``, from ``<cache_root>/tasks/`` when an STS task's parse is there."""
    if cache_root is None or not isinstance(task, STSTask) or type(task).load is not STSTask.load:
        return task.load(data_dir, mode)
    try:
        key = cache_key(task, data_dir, mode)
    except OSError:  # a missing file: the reader's error names it
        return task.load(data_dir, mode)
    path = Path(cache_root) / FOLDER / f"{key}.parsed"
    pairs = _decode(path, key)
    if pairs is not None:
        return pairs
    pairs = task.load(data_dir, mode)
    try:
        from stsbench.files import atomic_write_bytes

        atomic_write_bytes(path, _encode(pairs, key))
    except OSError as exc:  # a read-only cache: the next run reads the files again, nothing else
        log.debug("task cache file %s not written (%s)", path, exc)
    return pairs
