"""The on-disk embedding cache: a wrapper that satisfies the Encoder protocol.

Layout: ``<cache>/embeddings/<fingerprint>/<shard>.npz``; each shard holds text keys (blake2b of the
UTF-8 text), float32 vectors and a sha256 of both. Shards are written atomically; one that fails to
load or whose digest does not match is deleted and its texts are encoded again.

Finished batches reach the cache as shards while the encode runs (at least every ``FLUSH_SECONDS``, and
at once on Ctrl-C), so an interrupted run loses at most the batch in flight and the rerun encodes only
what is missing; at the end of a call the shards are merged into one. One process at a time reads and fills the shards of a fingerprint
(``<cache>/embeddings/<fingerprint>.lock``, a ``filelock``): a second run on the same model waits, then
finds the first one's embeddings instead of encoding them again.
"""

from __future__ import annotations

import hashlib
import inspect
import io
import json
import logging
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import numpy as np

from stsbench.encoders.base import Encoder
from stsbench.encoders.resolve import read_json
from stsbench.files import atomic_write_bytes, atomic_write_text, current_umask

log = logging.getLogger(__name__)
_KEY_BYTES = 16
_MAX_SHARDS = 32  # merge into one shard beyond this, to keep warm loads to a few files
FLUSH_SECONDS = 1.0  # finished batches reach the disk at least this often during an encode
VERIFIED = "verified.json"  # beside a fingerprint's shards: those whose sha256 was checked (see _load_shards)


def text_keys(texts: Sequence[str]) -> np.ndarray:
    """Fixed-width keys ``(n,)`` of dtype ``S16`` for texts."""
    return np.array(
        [hashlib.blake2b(t.encode("utf-8"), digest_size=_KEY_BYTES).digest() for t in texts],
        dtype=f"S{_KEY_BYTES}",
    )


def _digest(keys: np.ndarray, vectors: np.ndarray) -> str:
    h = hashlib.sha256(keys.tobytes())
    h.update(memoryview(np.ascontiguousarray(vectors)).cast("B"))  # the bytes tobytes() gives, uncopied
    h.update(str(vectors.shape).encode())
    return h.hexdigest()


def _rows_of(shard_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The row of each of ``keys`` in ``shard_keys`` (its first row, for a key stored twice); -1 where absent."""
    if not len(shard_keys):
        return np.full(len(keys), -1, dtype=np.int64)
    order = np.argsort(shard_keys, kind="stable")  # stable: equal keys keep their rows' order
    ordered = shard_keys[order]
    at = np.minimum(np.searchsorted(ordered, keys), len(ordered) - 1)
    return np.where(ordered[at] == keys, order[at], -1)


class EmbeddingCache:
    """The shards of one fingerprint."""

    def __init__(self, root: Path, fingerprint: str) -> None:
        self.dir = Path(root) / "embeddings" / fingerprint
        self.hits = 0
        self.misses = 0

    def _load_shards(self) -> list[tuple[Path, np.ndarray, np.ndarray]]:
        shards = []
        # {shard name: [size, mtime_ns, digest]} of the shards whose digest was computed and matched
        memo = read_json(self.dir / VERIFIED)
        seen: dict[str, list] = {}
        for f in sorted(self.dir.glob("*.npz")) if self.dir.is_dir() else []:
            try:
                st = f.stat()
                # reading a member checks the zip's CRC-32 of its bytes: a damaged file fails here
                with np.load(f, allow_pickle=False) as z:
                    keys, vecs, digest = z["keys"], z["vectors"], str(z["digest"])
                stamp = [st.st_size, st.st_mtime_ns, digest]
                ok = (
                    keys.dtype == np.dtype(f"S{_KEY_BYTES}")
                    and vecs.dtype == np.float32
                    and vecs.ndim == 2
                    and len(keys) == len(vecs)
                    # the sha256 of 40 MB is a tenth of a warm run: computed once for a shard (which is never
                    # rewritten in place), then trusted while its size, mtime and recorded digest are the same
                    and (memo.get(f.name) == stamp or _digest(keys, vecs) == digest)
                )
            except Exception:  # truncated zip, bad CRC, bad header, missing array: all mean corrupt
                ok = False
            if not ok:
                log.warning("embedding cache file %s is corrupt; it is removed and recomputed", f)
                f.unlink(missing_ok=True)
                continue
            seen[f.name] = stamp
            shards.append((f, keys, vecs))
        if seen != memo:  # a read-only cache (OSError): the next load computes the digests again
            with suppress(OSError):
                atomic_write_text(self.dir / VERIFIED, json.dumps(seen))
        return shards

    def lookup(self, keys: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """Vectors for the cached keys (rows of missing keys left 0) and a mask of which were found."""
        shards = self._load_shards()
        found = np.zeros(len(keys), dtype=bool)
        out: np.ndarray | None = None
        for _, skeys, svecs in shards:  # in file-name order; a key found in an earlier shard keeps its vector
            if out is None and np.array_equal(skeys, keys):
                # the shard an encode of these very texts wrote (a warm rerun's case): its vectors, as they are
                out = svecs
                found[:] = True
                break
            rows = _rows_of(skeys, keys)
            if out is None and (rows >= 0).all():
                out = svecs[rows]  # one shard holds every key: one gather
                found[:] = True
                break
            take = np.flatnonzero((rows >= 0) & ~found)
            if len(take):
                if out is None:
                    out = np.zeros((len(keys), svecs.shape[1]), dtype=np.float32)
                out[take] = svecs[rows[take]]
                found[take] = True
                if found.all():
                    break
        if len(shards) > _MAX_SHARDS:
            self._compact(shards)
        return out, found

    def store(self, keys: np.ndarray, vecs: np.ndarray) -> Path | None:
        """Add a shard (atomic); returns its path (None when there is nothing to store)."""
        if not len(keys):
            return None
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        buf = io.BytesIO()
        np.savez(buf, keys=keys, vectors=vecs, digest=np.array(_digest(keys, vecs)))
        return atomic_write_bytes(self.dir / f"{uuid.uuid4().hex}.npz", buf.getvalue())

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold this fingerprint's lock; say so once when another process holds it."""
        from filelock import FileLock, Timeout

        self.dir.parent.mkdir(parents=True, exist_ok=True)
        # the umask's mode: filelock 3.12 fchmods its lock file to 0644 otherwise
        lock = FileLock(str(self.dir) + ".lock", mode=0o666 & ~current_umask())
        try:
            lock.acquire(timeout=0)
        except Timeout:
            log.info(
                "waiting for another stsbench process encoding with this model (lock %s)", lock.lock_file
            )
            lock.acquire()
        try:
            yield
        finally:
            lock.release()

    def _compact(self, shards: list[tuple[Path, np.ndarray, np.ndarray]]) -> None:
        keys = np.concatenate([k for _, k, _ in shards])
        vecs = np.concatenate([v for _, _, v in shards])
        _, first = np.unique(keys, return_index=True)
        self.store(keys[np.sort(first)], vecs[np.sort(first)])
        for f, _, _ in shards:
            f.unlink(missing_ok=True)


class CachedEncoder:
    """Wraps an encoder: texts already embedded under the same fingerprint are read, not encoded."""

    def __init__(self, inner: Encoder, cache_dir: Path) -> None:
        self.inner = inner
        self.info = inner.info
        self.cache = EmbeddingCache(cache_dir, inner.info.fingerprint)
        meta = self.cache.dir / "model.json"
        if not meta.is_file():
            info = {"name": self.info.name, "path": self.info.path, "pooler": self.info.pooler}
            atomic_write_text(meta, json.dumps(info, indent=2))

    def encode(self, texts: Sequence[str], batch_size: int = 128, show_progress: bool = True) -> np.ndarray:
        """Read what the cache has, encode the rest once (deduplicated), store it batch by batch."""
        uniq = list(dict.fromkeys(texts))
        if not uniq:
            return np.zeros((0, 0), dtype=np.float32)
        keys = text_keys(uniq)
        with self.cache.locked():
            vecs, found = self.cache.lookup(keys)
            missing = np.flatnonzero(~found).tolist()
            self.cache.hits += len(uniq) - len(missing)
            self.cache.misses += len(missing)
            if missing:
                # an encoder that reports its batches (``on_batch``) has them stored as they end
                writer = BatchWriter(self.cache, keys[missing])
                batched = "on_batch" in inspect.signature(self.inner.encode).parameters
                extra = {"on_batch": writer.add} if batched else {}
                todo = [uniq[i] for i in missing]
                try:
                    new = self.inner.encode(todo, batch_size=batch_size, show_progress=show_progress, **extra)
                # Ctrl-C (KeyboardInterrupt) or an error: keep every batch that finished
                except BaseException:
                    writer.flush()
                    raise
                writer.finish(new)
                if vecs is None:
                    vecs = np.zeros((len(uniq), new.shape[1]), dtype=np.float32)
                vecs[missing] = new
        if len(uniq) == len(texts):
            return vecs
        pos = {t: i for i, t in enumerate(uniq)}
        return vecs[[pos[t] for t in texts]]


class BatchWriter:
    """Finished batches on their way to the cache.

    A shard at most every ``FLUSH_SECONDS`` (a GPU finishes a batch every few milliseconds: a shard for each
    would cost more than it saves), at once when the encode stops early, and at the end one shard for the
    whole call. So Ctrl-C loses only the batch in flight, and a hard kill at most the last second of work.
    """

    def __init__(self, cache: EmbeddingCache, keys: np.ndarray, every: float = FLUSH_SECONDS) -> None:
        self.cache, self.keys, self.every = cache, keys, every
        self.parts: list[tuple[Path, int]] = []  # shards written so far, with their row counts
        self.pending: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, vectors) not on disk yet
        self.last = time.monotonic()

    def add(self, rows: np.ndarray, vectors: np.ndarray) -> None:
        """A finished batch: ``rows`` index ``keys``."""
        self.pending.append((rows, vectors))
        if time.monotonic() - self.last >= self.every:
            self.flush()

    def flush(self) -> None:
        """Write the pending batches as one shard."""
        if self.pending:
            rows = np.concatenate([r for r, _ in self.pending])
            part = self.cache.store(self.keys[rows], np.concatenate([v for _, v in self.pending]))
            self.pending = []
            if part is not None:
                self.parts.append((part, len(rows)))
        self.last = time.monotonic()

    def finish(self, vectors: np.ndarray) -> None:
        """Everything encoded: one shard of all ``vectors`` replaces the parts (or is the only write).

        The merged shard is written before the parts are removed: interrupted in between, the cache holds
        the same vectors twice, which lookups and compaction tolerate.
        """
        self.pending = []
        if len(self.parts) == 1 and self.parts[0][1] == len(self.keys):
            return  # one batch held everything: it is the shard
        self.cache.store(self.keys, vectors)
        for f, _ in self.parts:
            f.unlink(missing_ok=True)
