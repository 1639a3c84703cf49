"""Geometry of the embedding space: alignment/uniformity and singular-value spectra.

Alignment and uniformity as Wang & Isola (2020) define them and SimCSE (Fig. 2, 3) and MoCoSE (Fig. 4)
use them on STS-B: alignment over the pairs with gold > 4, uniformity over all pairs of distinct
sentences, here the unique sentences (both columns) of the chosen split. Spectra as SimCSE's appendix
and MoCoSE Fig. 7: singular values of the matrix of the unique STS-B sentence embeddings, divided by
the largest, raw and after centring. The alignment/uniformity computation itself is
:mod:`stsbench.tasks.align_uniform`, shared with the trainer's dev evaluations (their logged trajectories).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stsbench import metrics
from stsbench.data.sts import load_pairs
from stsbench.encoders.base import Encoder, embed_table, unique_texts
from stsbench.errors import StsbenchError
from stsbench.tasks.align_uniform import SENTENCE_SET, AlignUniformResult, align_uniform_from_table

# singular values below this share of the largest are float32 round-off, not directions the model uses
RANK_TOL = 1e-6


def align_uniform(
    encoder: Encoder,
    data_dir: Path,
    split: str = "dev",
    task: str = "STSBenchmark",
    positive_threshold: float = 4.0,
    batch_size: int = 128,
    show_progress: bool = True,
) -> AlignUniformResult:
    """Alignment and uniformity of ``encoder`` on STS-B ``split`` (through the cache)."""
    pairs = load_pairs(data_dir, task, split)
    table = embed_table(encoder, [*pairs.sent1, *pairs.sent2], batch_size, show_progress)
    return align_uniform_from_table(pairs, table, split, positive_threshold)


@dataclass
class Spectrum:
    """One singular-value curve and the numbers that summarise its anisotropy."""

    centered: bool
    label: str  # ``uncentred`` or ``centred`` (mean embedding removed)
    largest: float  # the largest singular value, that the curve is divided by
    normalized: list[float]  # s_k / s_1, descending
    effective_rank: float  # Roy & Vetterli: exp(entropy of s / sum s)
    top_share: float  # s_1^2 / sum s^2 (for the centred matrix: variance in the top principal component)
    numerical_rank: int  # singular values above RANK_TOL x the largest


@dataclass
class SpectrumResult:
    """Both spectra of one model plus average cosines between sentences."""

    task: str
    split: str
    n_sentences: int
    dim: int
    uncentred: Spectrum
    centred: Spectrum
    avg_cosine_random_pairs: (
        float  # mean cosine of ``n_random_pairs`` seeded random pairs of distinct sentences
    )
    n_random_pairs: int
    seed: int
    avg_cosine_all_pairs: float  # the same mean over every pair of distinct sentences, exactly
    sentence_set: str = SENTENCE_SET

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


def _spectrum(x: np.ndarray, centered: bool) -> Spectrum:
    sv = metrics.singular_values(x, center=centered)
    top = float(sv[0])
    norm = (sv / top).tolist() if top > 0 else [0.0] * len(sv)
    return Spectrum(
        centered,
        "centred" if centered else "uncentred",
        top,
        norm,
        metrics.effective_rank(sv),
        metrics.top_share(sv),
        int(np.sum(sv > RANK_TOL * top)) if top > 0 else 0,
    )


def spectrum_from_vectors(
    x: np.ndarray, task: str, split: str, n_random_pairs: int = 10000, seed: int = 1111
) -> SpectrumResult:
    """Spectra and anisotropy numbers of the embedding matrix ``x`` (one row per distinct sentence)."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        raise StsbenchError(f"{task} {split} has fewer than 2 distinct sentences; a spectrum needs more")
    i, j = metrics.random_distinct_pairs(len(x), n_random_pairs, seed)
    rand = float(np.mean(metrics.cosine_pairs(x[i], x[j])))
    return SpectrumResult(
        task,
        split,
        len(x),
        int(x.shape[1]),
        _spectrum(x, False),
        _spectrum(x, True),
        rand,
        n_random_pairs,
        seed,
        metrics.mean_cosine_all_pairs(x),
    )


def spectrum(
    encoder: Encoder,
    data_dir: Path,
    split: str = "test",
    task: str = "STSBenchmark",
    n_random_pairs: int = 10000,
    seed: int = 1111,
    batch_size: int = 128,
    show_progress: bool = True,
) -> SpectrumResult:
    """Spectra of ``encoder``'s embeddings of the unique sentences of STS-B ``split`` (through the cache)."""
    if n_random_pairs < 1:
        raise StsbenchError(f"--random-pairs must be at least 1 (got {n_random_pairs})")
    pairs = load_pairs(data_dir, task, split)
    sents: Sequence[str] = unique_texts([pairs.sent1, pairs.sent2])
    table = embed_table(encoder, sents, batch_size, show_progress)
    return spectrum_from_vectors(table[sents], pairs.name, split, n_random_pairs, seed)
