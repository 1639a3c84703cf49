"""A mock encoder that counts what it encodes, can be slow and can be interrupted; also a script.

As a script (``python tests/counting_encoder.py CACHE N BATCH DELAY [HOLD]``) it encodes ``N`` sentences through
the embedding cache in ``CACHE`` and prints ``{"encoded": ..., "digest": ...}``: the cross-process tests run it.
With ``HOLD`` (a file's path) it encodes its first batch, writes ``HOLD.held``, and waits until ``HOLD`` exists
before the next.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from stsbench.encoders.base import EncoderInfo
from stsbench.progress import progress_bar

DIM = 8


def vectors_of(texts: Sequence[str]) -> np.ndarray:
    """A fixed vector per text (its blake2b bytes), so any process computes the same embeddings."""
    raw = [
        np.frombuffer(hashlib.blake2b(t.encode(), digest_size=DIM).digest(), dtype=np.uint8) for t in texts
    ]
    return np.asarray(raw, dtype=np.float32).reshape(len(texts), DIM) / 255.0


def sentences(n: int) -> list[str]:
    """``n`` distinct sentences."""
    return [f"sentence number {i} of the counting test" for i in range(n)]


class CountingEncoder:
    """Encodes in batches, reports each (``on_batch``), counts rows; raises KeyboardInterrupt before batch k."""

    def __init__(
        self, delay: float = 0.0, interrupt_before: int | None = None, hold: Path | None = None
    ) -> None:
        self.info = EncoderInfo("counting", "/mock/counting", "c0ffee" * 4, "avg", None, "float32", "mock")
        self.delay = delay
        self.interrupt_before = interrupt_before
        self.hold = hold
        self.n_encoded = 0
        self.batches = 0

    def encode(self, texts, batch_size: int = 128, show_progress: bool = True, on_batch=None) -> np.ndarray:
        out = np.empty((len(texts), DIM), dtype=np.float32)
        with progress_bar(f"encoding {len(texts)} sentences", len(texts), enabled=show_progress) as advance:
            for start in range(0, len(texts), batch_size):
                if self.batches == self.interrupt_before:
                    raise KeyboardInterrupt
                if self.hold is not None and self.batches == 1:
                    self._hold_after_the_first_batch()
                time.sleep(self.delay)
                rows = np.arange(start, min(start + batch_size, len(texts)))
                vecs = vectors_of([texts[i] for i in rows])
                out[rows] = vecs
                self.n_encoded += len(rows)
                self.batches += 1
                if on_batch is not None:
                    on_batch(rows, vecs)
                advance(len(rows))
        return out

    def _hold_after_the_first_batch(self) -> None:
        """Say so (``HOLD.held``), then wait until ``HOLD`` exists."""
        self.hold.with_suffix(".held").touch()
        deadline = time.monotonic() + 300
        while not self.hold.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.hold} never appeared")
            time.sleep(0.02)


def main(cache: str, n: str, batch: str, delay: str, hold: str | None = None) -> None:
    from stsbench.encoders.cache import CachedEncoder

    logging.basicConfig(
        level=logging.INFO, format="%(message)s"
    )  # the library's notes, as the CLI shows them
    inner = CountingEncoder(delay=float(delay), hold=Path(hold) if hold else None)
    vecs = CachedEncoder(inner, Path(cache)).encode(sentences(int(n)), batch_size=int(batch))
    digest = hashlib.sha256(vecs.tobytes()).hexdigest()
    sys.stdout.write(json.dumps({"encoded": inner.n_encoded, "digest": digest}) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
