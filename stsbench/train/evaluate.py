"""Model selection: STS-B dev Spearman of the online encoder, as SimCSE's trainer computes it.

Never the test sets: those are for ``stsbench run`` on the saved checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from stsbench.data.sts import load_pairs
from stsbench.metrics import cosine_pairs, spearman
from stsbench.train.data import pad


@dataclass
class DevSet:
    """STS-B dev, tokenized once: unique sentences in length order, batched, and how pairs index them."""

    batches: list[dict[str, torch.Tensor]]
    order: np.ndarray  # row of each unique sentence in the concatenated batch outputs
    left: np.ndarray  # unique-sentence index of each pair's first sentence
    right: np.ndarray
    gold: np.ndarray

    @classmethod
    def load(cls, data_dir: Path, tokenizer, batch_size: int = 128) -> DevSet:
        """Read ``sts-dev.csv`` with :func:`load_pairs`; no truncation, as SentEval."""
        pairs = load_pairs(data_dir, "STSBenchmark", "dev")
        uniq = list(dict.fromkeys([*pairs.sent1, *pairs.sent2]))
        index = {t: i for i, t in enumerate(uniq)}
        ids = tokenizer(uniq, truncation=False)["input_ids"]
        by_len = np.argsort([len(x) for x in ids], kind="stable")  # less padding, same vectors
        batches = []
        for start in range(0, len(uniq), batch_size):
            rows = by_len[start : start + batch_size]
            batches.append(pad([ids[i] for i in rows], tokenizer.pad_token_id))
        order = np.empty(len(uniq), dtype=np.int64)
        order[by_len] = np.arange(len(uniq))
        left = np.array([index[t] for t in pairs.sent1])
        right = np.array([index[t] for t in pairs.sent2])
        return cls(batches, order, left, right, pairs.gold)


def dev_spearman(model, dev: DevSet, device: torch.device | str) -> float:
    """Return the cosine Spearman on STS-B dev with the eval pooler (eval mode, no gradients)."""
    was_training = model.training
    model.eval()
    chunks = []
    with torch.inference_mode():
        for batch in dev.batches:
            batch = {k: v.to(device) for k, v in batch.items()}
            chunks.append(model.sentence_embedding(batch).float().cpu().numpy())
    model.train(was_training)
    vectors = np.concatenate(chunks)[dev.order]
    return spearman(cosine_pairs(vectors[dev.left], vectors[dev.right]), dev.gold)
