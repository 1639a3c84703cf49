"""STS tasks as parsed, kept beside the embedding cache: a warm run does not read SentEval's files again.

``<cache>/tasks/<key>.parsed``, one file per task and split (an ``.npz``, named apart from the embedding
shards). The key is a sha256 of all that the parse depends on: the task's declaration (its
:class:`~stsbench.data.sts_spec.STSSpec`), the split, the source of the readers (``stsbench/data/sts.py`` and
``textfile.py``: an edited reader parses again) and the sha256 of each file read (cached by path, size and
mtime_ns, :func:`stsbench.data.integrity.file_sha256s`, which the data check has computed already). The file
holds the distinct sentences (newline-joined: a sentence is tokens joined by single spaces, never a newline),
the int32 rows of each pair's two sentences, the float64 gold scores, the subset codes and names, and a sha256
of all of it.

A file that is missing, unreadable, of another key or whose digest does not match is never used: the task is
read from its files and the cache file rewritten (atomically). Tasks whose ``load`` is their own (not
:class:`~stsbench.tasks.sts.STSTask`'s) and transfer tasks are read as before.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
from pathlib import Path

import numpy as np

from stsbench.data import sts as sts_reader
from stsbench.data import textfile
from stsbench.data.integrity import file_sha256s, relative
from stsbench.data.sts import Pairs
from stsbench.tasks.base import Mode, Task
from stsbench.tasks.sts import STSTask

log = logging.getLogger(__name__)
FORMAT = 1  # of the cache file; raise it when its layout changes
FOLDER = "tasks"
_ARRAYS = ("texts", "a", "b", "gold", "codes")


def _readers_digest() -> str:
    h = hashlib.sha256()
    for module in (sts_reader, textfile):
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()


def cache_key(task: STSTask, data_dir: Path, mode: Mode) -> str:
    """The sha256 naming ``task``'s cache file for ``mode``'s split (files hashed, or read from the hash cache)."""
    files = task.files(data_dir, mode)
    digests = file_sha256s(files)
    material = {
        "format": FORMAT,
        "spec": repr(task.spec),
        "split": task.split(mode),
        "readers": _readers_digest(),
        "files": [[relative(data_dir, f), digests[Path(f)]] for f in files],
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _digest(arrays: dict[str, np.ndarray], meta: str) -> str:
    h = hashlib.sha256(meta.encode())
    for name in _ARRAYS:
        h.update(name.encode())
        h.update(str((arrays[name].dtype.str, arrays[name].shape)).encode())
        h.update(memoryview(np.ascontiguousarray(arrays[name])).cast("B"))
    return h.hexdigest()


def _encode(pairs: Pairs, key: str) -> bytes:
    texts = list(dict.fromkeys(pairs.sent1 + pairs.sent2))
    row = {t: i for i, t in enumerate(texts)}
    names = pairs.subsets()
    code = {n: i for i, n in enumerate(names)}
    arrays = {
        "texts": np.frombuffer("\n".join(texts).encode("utf-8"), dtype=np.uint8),
        "a": np.array([row[t] for t in pairs.sent1], dtype=np.int32),
        "b": np.array([row[t] for t in pairs.sent2], dtype=np.int32),
        "gold": np.ascontiguousarray(pairs.gold, dtype=np.float64),
        "codes": np.array([code[s] for s in pairs.subset], dtype=np.int32),
    }
    meta = json.dumps(
        {"key": key, "name": pairs.name, "subsets": names, "scale": list(pairs.scale), "n_texts": len(texts)}
    )
    buf = io.BytesIO()
    np.savez(buf, **arrays, meta=np.array(meta), digest=np.array(_digest(arrays, meta)))
    return buf.getvalue()


def _decode(path: Path, key: str) -> Pairs | None:
    """The pairs a cache file holds; None when it is not there, not readable, of another key or corrupt."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {name: z[name] for name in _ARRAYS}
            meta, digest = str(z["meta"]), str(z["digest"])
        info = json.loads(meta)
        if info["key"] != key or _digest(arrays, meta) != digest:
            raise ValueError("another key or a digest that does not match")
        texts = arrays["texts"].tobytes().decode("utf-8").split("\n")
        if len(texts) != info["n_texts"]:
            raise ValueError("sentence count")
        names = info["subsets"]
        return Pairs(
            info["name"],
            [texts[i] for i in arrays["a"].tolist()],
            [texts[i] for i in arrays["b"].tolist()],
            arrays["gold"],
            [names[c] for c in arrays["codes"].tolist()],
            tuple(info["scale"]),
        )
    except FileNotFoundError:
        return None
    except Exception as exc:  # truncated zip, bad header, missing array, wrong digest: read the files again
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
