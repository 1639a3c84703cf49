"""Alignment and uniformity of an STS split's embeddings: the one computation the analysis and the trainer share.

Wang & Isola (2020) as SimCSE (Fig. 2, 3) and MoCoSE (Fig. 4) use them on STS-B: alignment over the pairs with
gold > 4, uniformity over every pair of distinct sentences, here the unique sentences (both columns) of the
split. ``stsbench align-uniform`` (:mod:`stsbench.analyses.geometry`) runs it on a checkpoint's embeddings; the
trainer (:mod:`stsbench.train.evaluate`) on the STS-B dev embeddings each dev evaluation already encodes, so a
logged trajectory point is the analysis of the checkpoint at that step, from the same function.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from stsbench import metrics
from stsbench.data.sts import Pairs
from stsbench.encoders.base import EmbeddingTable, unique_texts
from stsbench.errors import StsbenchError

SENTENCE_SET = "the unique sentences of both columns of the split, in file order"


@dataclass
class AlignUniformResult:
    """l_align and l_uniform (lower is better for both) and the pairs behind them."""

    task: str
    split: str
    alignment: float  # mean ||f(x) - f(x+)||^2 over positive pairs, f L2-normalised
    uniformity: float  # log mean exp(-2 ||f(x) - f(y)||^2) over distinct sentence pairs
    positive_threshold: float  # a pair is positive when gold > this
    n_positive_pairs: int
    n_sentences: int
    n_uniformity_pairs: int  # n (n - 1) / 2
    sentence_set: str = SENTENCE_SET
    alpha: float = 2.0
    t: float = 2.0

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


def align_uniform_from_table(
    pairs: Pairs, table: EmbeddingTable, split: str, positive_threshold: float = 4.0
) -> AlignUniformResult:
    """Alignment over ``gold > positive_threshold`` pairs, uniformity over the split's unique sentences."""
    pos = np.flatnonzero(pairs.gold > positive_threshold)
    if len(pos) == 0:
        raise StsbenchError(
            f"{pairs.name} {split} has no pair with gold > {positive_threshold:g} for alignment; "
            "lower --positive-threshold or pick another split"
        )
    sents = unique_texts([pairs.sent1, pairs.sent2])
    if len(sents) < 2:
        raise StsbenchError(
            f"{pairs.name} {split} has fewer than 2 distinct sentences; uniformity needs pairs"
        )
    a = table[[pairs.sent1[i] for i in pos]]
    b = table[[pairs.sent2[i] for i in pos]]
    n = len(sents)
    return AlignUniformResult(
        pairs.name,
        split,
        metrics.alignment(a, b),
        metrics.uniformity(table[sents]),
        positive_threshold,
        len(pos),
        n,
        n * (n - 1) // 2,
    )
