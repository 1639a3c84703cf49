"""Batches of training rows: order them by (seed, epoch), tokenize, pad, mask.

The data order is a pure function of ``(seed, epoch)``, so a resumed run only needs the step number to
find its place; no sampler state is saved. The rows come from :mod:`stsbench.data.training`.
"""

from __future__ import annotations

import numpy as np
import torch

from stsbench.data.training import TrainData


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """Return the row order of ``epoch``: a permutation that depends only on ``(seed, epoch)``."""
    return np.random.default_rng([seed, epoch, 0x5EED]).permutation(n)


def batch_rows(
    data: TrainData, seed: int, epoch: int, index: int, batch_size: int, rank: int = 0, world: int = 1
) -> np.ndarray:
    """Row indices of process ``rank``'s slice of batch ``index`` of ``epoch``.

    The global batch is ``batch_size`` x ``world`` rows, in the same order on every process; process ``rank``
    takes its ``rank``-th ``batch_size`` rows (one process: the whole batch).
    """
    order = epoch_order(len(data), seed, epoch)
    start = (index * world + rank) * batch_size
    return order[start : start + batch_size]


def tokenize(tokenizer, texts: list[str], max_length: int | None, offsets: bool = False) -> dict:
    """Token ids per text (unpadded lists), their special-token masks and, if asked, character offsets."""
    enc = tokenizer(
        texts,
        truncation=max_length is not None,
        max_length=max_length,
        return_special_tokens_mask=True,
        return_offsets_mapping=offsets,
    )
    return dict(enc)


def pad(seqs: list[list[int]], pad_id: int, length: int | None = None) -> dict[str, torch.Tensor]:
    """Right-pad id lists to the longest, or to ``length`` if longer.

    Returns ``input_ids``, ``attention_mask`` and ``token_type_ids``. The type ids are zeros; the encoder drops them for models without segments.
    """
    longest = max([len(s) for s in seqs] + [length or 0])
    ids = torch.full((len(seqs), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), longest), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[i, : len(s)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}


def mlm_mask(
    input_ids: torch.Tensor, special: torch.Tensor, tokenizer, probability: float, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mask as BERT (``DataCollatorForLanguageModeling``) and return (masked ids, labels, -100 elsewhere).

    ``probability`` of the real tokens are picked; of those 80% become [MASK], 10% a random token, 10% stay.

    ``special`` is True on special and padding positions, which are never picked.
    """
    shape = tuple(input_ids.shape)
    picked = (rng.random(shape) < probability) & ~special.numpy()
    labels = input_ids.clone()
    labels[~torch.from_numpy(picked)] = -100
    u = rng.random(shape)
    to_mask = picked & (u < 0.8)
    to_random = picked & (u >= 0.8) & (u < 0.9)
    ids = input_ids.clone()
    ids[torch.from_numpy(to_mask)] = tokenizer.mask_token_id
    random_ids = torch.from_numpy(rng.integers(0, len(tokenizer), size=shape))
    ids[torch.from_numpy(to_random)] = random_ids[torch.from_numpy(to_random)]
    return ids, labels
