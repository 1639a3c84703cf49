"""The encoder protocol every task and analysis sees, and the table of embeddings they read from."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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
    prompt: str | None = None  # the text prepended to every sentence (stsbench.encoders.prompts)
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
        rows = [self._index[t] for t in texts]
        return self.vectors[rows]


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
