"""The encoder protocol every task and analysis sees, the embeddings they read, the options, a mock encoder.

:class:`Encoder` and :class:`EncoderInfo`: what every encoder is; :class:`EmbeddingTable`: the table of
embeddings the tasks look texts up in.

:class:`EncodeOptions`: ``stsbench run``'s options and ``stsbench.evaluate``'s keywords become one value where
they are read (the commands, the public functions); the evaluation, the analyses and the loader pass it on
whole. A plain frozen dataclass: the warm ``stsbench run`` imports it, and neither pydantic nor anything
heavy.

:class:`MockEncoder`: a tiny deterministic encoder for tests (users' and ours): no model, no download, no
torch. Each lower-cased word gets a fixed random vector (seeded by a hash of the word); a sentence is the mean
of its words' vectors. Sentences that share words are close, so STS correlations are positive and stable, and
every figure is reproducible on any machine (the vectors depend only on the words, ``dim`` and ``seed``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np


@dataclass(frozen=True)
class EncoderInfo:
    """What identifies an encoder's embeddings: results and the cache key on it."""

    name: str  # what the user asked for (``all-MiniLM-L6-v2``, a path, a hub id)
    path: str  # where the weights were loaded from
    fingerprint: str  # hash of everything that changes an embedding (weights, config, tokenizer, pooler, ...)
    pooler: str
    max_length: int | None
    dtype: str
    kind: str  # ``hf`` or ``sentence-transformers`` or another loader's name
    extra: dict = field(default_factory=dict)
    prompt: str | None = None  # the text prepended to every sentence (resolve.choose_prompt)
    prompt_name: str | None = None  # its name in the model's stored prompts, when chosen by name


@runtime_checkable
class Encoder(Protocol):
    """``encode(texts) -> float32 (n, d)`` plus metadata; tasks never see where embeddings come from.

    An encoder may also take ``on_batch(rows, vectors)`` (see ``stsbench.encoders.hf.OnBatch``): the cache
    then stores each batch as it finishes, so an interrupt loses at most the batch in flight.
    """

    info: EncoderInfo

    def encode(self, texts: Sequence[str], batch_size: int = 128, show_progress: bool = True) -> np.ndarray:
        """Embed ``texts`` in order; returns a float32 array of shape ``(len(texts), dim)``."""
        ...


class EmbeddingTable:
    """Embeddings of a deduplicated set of texts, looked up by text.

    The runner encodes every sentence of every requested task once and hands this table to each task.
    """

    def __init__(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        self._index = {t: i for i, t in enumerate(texts)}
        self.vectors = np.asarray(vectors, dtype=np.float32)

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, text: object) -> bool:
        return text in self._index

    @property
    def dim(self) -> int:
        """Embedding dimension."""
        return int(self.vectors.shape[1])

    def __getitem__(self, texts: Sequence[str]) -> np.ndarray:
        """Rows for ``texts`` (a list; repeated texts give repeated rows)."""
        return self.vectors[[self._index[t] for t in texts]]


def unique_texts(groups: Iterable[Iterable[str]]) -> list[str]:
    """All texts of all groups, first occurrence order, no duplicates."""
    return list(dict.fromkeys(t for g in groups for t in g))


def embed_table(
    encoder: Encoder, texts: Iterable[str], batch_size: int = 128, show_progress: bool = True
) -> EmbeddingTable:
    """Encode the unique ``texts`` once and return the lookup table."""
    uniq = unique_texts([texts])
    vecs = encoder.encode(uniq, batch_size=batch_size, show_progress=show_progress)
    return EmbeddingTable(uniq, vecs)


@dataclass(frozen=True)
class EncodeOptions:
    """What the user asked for; the loader resolves it per model (pooler, length and prompt it declares)."""

    pooler: str | None = None  # None: as the model declares (else SimCSE's cls)
    max_length: int | None = None  # None: no truncation (sentence-transformers models: their max_seq_length)
    device: str | None = None  # None: cuda when available, else cpu
    dtype: str = "float32"  # models loaded by name; a live model runs in the dtype it has
    prompt: str | None = None  # prepended to every text (resolve.choose_prompt)
    prompt_name: str | None = None  # a prompt the model stores, by name
    revision: str | None = None  # branch, tag or commit of a hub id
    batch_size: int = 128
    cache_dir: Path | None = None  # the embedding cache's folder (None: $STSBENCH_CACHE, else the user cache)
    use_cache: bool = True  # False: neither read nor write the embedding cache

    @property
    def prompted(self) -> bool:
        """Whether a prompt or a stored prompt's name was asked for."""
        return self.prompt is not None or self.prompt_name is not None


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
