"""A tiny deterministic encoder for tests (users' and ours): no model, no download, no torch.

Each lower-cased word gets a fixed random vector (seeded by a hash of the word); a sentence is the mean of its
words' vectors. Sentences that share words are close, so STS correlations are positive and stable, and every
figure is reproducible on any machine (the vectors depend only on the words, ``dim`` and ``seed``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from stsbench.encoders.base import EncoderInfo


class MockEncoder:
    """Bag of hashed random word vectors; satisfies the :class:`~stsbench.encoders.base.Encoder` protocol."""

    def __init__(self, dim: int = 16, seed: int = 0, name: str = "mock") -> None:
        self.dim = dim
        self.seed = seed
        self.n_encoded = 0
        fp = hashlib.sha256(f"mock:{dim}:{seed}".encode()).hexdigest()[:32]
        self.info = EncoderInfo(name, "(mock)", fp, "mean-of-words", None, "float32", "mock")

    def _word(self, word: str) -> np.ndarray:
        digest = hashlib.blake2b(f"{self.seed}:{word}".encode(), digest_size=8).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        return rng.standard_normal(self.dim).astype(np.float32)

    def encode(self, texts: Sequence[str], batch_size: int = 128, show_progress: bool = True) -> np.ndarray:
        """Return ``(len(texts), dim)`` float32; an empty sentence is the zero vector."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = text.lower().split()
            if words:
                out[i] = np.mean([self._word(w) for w in words], axis=0)
        self.n_encoded += len(texts)
        return out
