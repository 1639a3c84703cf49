"""Batches of training rows: order them by (seed, epoch), tokenize, pad, mask.

The data order is a pure function of ``(seed, epoch)``, so a resumed run only needs the step number to
find its place; no sampler state is saved. The rows come from :mod:`stsbench.data.training`.
"""

from __future__ import annotations

import numpy as np
import torch

from stsbench.data.training import TrainData
from stsbench.errors import StsbenchError
from stsbench.train.schedule import batches_per_epoch, parse_buckets


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """Return the row order of ``epoch``: a permutation that depends only on ``(seed, epoch)``."""
    return np.random.default_rng([seed, epoch, 0x5EED]).permutation(n)


def batch_rows(
    data: TrainData, seed: int, epoch: int, index: int, batch_size: int, rank: int = 0, world: int = 1
) -> np.ndarray:
    """Row indices of process ``rank``'s slice of batch ``index`` of ``epoch``, unbucketed.

    The global batch is ``batch_size`` x ``world`` rows, in the same order on every process; process ``rank``
    takes its ``rank``-th ``batch_size`` rows (one process: the whole batch).
    """
    return BatchOrder(len(data), batch_size, world).rows(seed, epoch, index, rank)


class BatchOrder:
    """Which rows make each batch: shuffled once an epoch (the default), or within buckets of sentence length.

    ``edges`` (ESimCSE COLING Table 6's ``buc_len``, :func:`stsbench.train.schedule.parse_buckets`): a sentence
    of length L goes to bucket ``#(edges < L)``. Bucketed, every global batch of ``batch_size`` x ``world``
    rows comes from one bucket: each bucket shuffled by ``(seed, epoch)`` and cut into batches, its last partial
    batch kept as the unbucketed epoch keeps its own (one process, two rows or more: HF's
    ``dataloader_drop_last=False``, SimCSE's and ESimCSE's setting) or dropped (several processes), then all
    the epoch's batches shuffled together, so that each bucket's batches come in random order, in proportion to
    its size. ESimCSE does not say its sampler; this is our reading. Still a pure function of ``(seed, epoch)``.
    """

    def __init__(self, n: int, batch_size: int, world: int = 1, buckets: np.ndarray | None = None) -> None:
        self.n, self.batch_size, self.world, self.buckets = n, batch_size, world, buckets
        self._epoch: tuple[int, int, list[np.ndarray]] | None = None
        self._order: tuple[int, int, np.ndarray] | None = None  # the last epoch's permutation, unbucketed
        self.per_epoch = batches_per_epoch(n, batch_size, world)
        if buckets is not None:
            self.per_epoch = len(self._bucketed(0, 0))
            if self.per_epoch == 0:
                raise StsbenchError(
                    f"no length bucket of the {n} training rows fills a batch of {batch_size} x {world} "
                    "process(es); lower --batch-size, or use fewer buckets"
                )

    def sizes(self) -> list[int]:
        """Rows in each bucket (one: every row)."""
        if self.buckets is None:
            return [self.n]
        return np.bincount(self.buckets, minlength=int(self.buckets.max()) + 1).tolist()

    def _shuffled(self, seed: int, epoch: int) -> np.ndarray:
        """The epoch's permutation, drawn once an epoch: a step reads its slice (a draw of wiki1m's 1M rows: 15 ms)."""
        kept = self._order  # one read: the batch prefetch thread may call this too
        if kept is not None and kept[:2] == (seed, epoch):
            return kept[2]
        order = epoch_order(self.n, seed, epoch)
        self._order = (seed, epoch, order)
        return order

    def _bucketed(self, seed: int, epoch: int) -> list[np.ndarray]:
        if self._epoch is not None and self._epoch[:2] == (seed, epoch):
            return self._epoch[2]
        rng = np.random.default_rng([seed, epoch, 0xB0C])
        size = self.batch_size * self.world
        batches: list[np.ndarray] = []
        for bucket in range(len(self.sizes())):
            rows = np.flatnonzero(self.buckets == bucket)
            rows = rows[rng.permutation(len(rows))]
            full, rest = divmod(len(rows), size)
            keep = full + (1 if self.world == 1 and rest >= 2 else 0)
            batches += [rows[i * size : (i + 1) * size] for i in range(keep)]
        batches = [batches[i] for i in rng.permutation(len(batches))]
        self._epoch = (seed, epoch, batches)
        return batches

    def rows(self, seed: int, epoch: int, index: int, rank: int = 0) -> np.ndarray:
        """Row indices of process ``rank``'s slice of batch ``index`` of ``epoch``."""
        if self.buckets is None:
            order = self._shuffled(seed, epoch)
            start = (index * self.world + rank) * self.batch_size
            return order[start : start + self.batch_size]
        batch = self._bucketed(seed, epoch)[index]
        return batch[rank * self.batch_size : (rank + 1) * self.batch_size]


def sentence_lengths(texts: list[str], unit: str, tokenizer=None) -> np.ndarray:
    """Each text's length in ``unit``: whitespace ``words``, or ``tokens`` (word-pieces, special tokens excluded)."""
    if unit == "words":
        return np.array([len(t.split()) for t in texts], dtype=np.int64)
    out: list[int] = []
    for start in range(0, len(texts), 4096):
        ids = tokenizer(texts[start : start + 4096], add_special_tokens=False)["input_ids"]
        out += [len(i) for i in ids]
    return np.array(out, dtype=np.int64)


def length_buckets_of(texts: list[str], spec: str, unit: str, tokenizer=None) -> np.ndarray:
    """Each text's bucket under ``--batch-buckets spec``: the number of edges below its length."""
    return np.searchsorted(
        np.array(parse_buckets(spec)), sentence_lengths(texts, unit, tokenizer), side="left"
    )


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
