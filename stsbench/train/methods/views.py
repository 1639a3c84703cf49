"""A batch as the encoder sees it (:class:`Views`) and how views are encoded in training."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from stsbench.train.model import ContrastiveEncoder

Tokens = dict[str, torch.Tensor]


@dataclass
class Views:
    """One batch as the encoder sees it (padded tensors)."""

    anchor: Tokens  # x_i, (B, T)
    positive: Tokens | None = None  # x_i+, (B, T'); None: x_i again, the dropout noise makes the view
    hard_negative: Tokens | None = None  # sup SimCSE's x_i-, (B, T)
    mlm: tuple[Tokens, torch.Tensor] | None = None  # masked anchor and its labels (B, T)

    def map(self, fn: Callable[[torch.Tensor], torch.Tensor]) -> Views:
        """The views with ``fn`` applied to every tensor (a move, pinning)."""

        def each(t: Tokens | None) -> Tokens | None:
            return None if t is None else {k: fn(v) for k, v in t.items()}

        mlm = None if self.mlm is None else (each(self.mlm[0]), fn(self.mlm[1]))
        return Views(each(self.anchor), each(self.positive), each(self.hard_negative), mlm)

    def to(self, device: torch.device | str, non_blocking: bool = False) -> Views:
        """Move the views to ``device`` (``non_blocking``: from pinned memory, without waiting)."""
        return self.map(lambda v: v.to(device, non_blocking=non_blocking))


def encode_bucketed(model: ContrastiveEncoder, batch: Tokens, buckets: int | None = 1) -> torch.Tensor:
    """Encode a padded batch in ``buckets`` passes of similar-length rows, each cut to its own longest row.

    The embeddings (B, H) come back in batch order. Without dropout they equal one pass over the whole
    batch up to float rounding (padding is masked out either way); in training the dropout masks are other
    draws of the same distribution. Fewer padding tokens make each step cheaper.
    """
    if buckets is None or buckets <= 1:
        return model(batch)
    lengths = batch["attention_mask"].sum(dim=1)
    order = torch.argsort(lengths, stable=True)
    parts = []
    for rows in order.tensor_split(min(buckets, len(order))):
        width = int(lengths[rows].max())
        parts.append(model({k: v[rows, :width] for k, v in batch.items()}))
    return torch.cat(parts)[torch.argsort(order)]


def encode_views(
    model: ContrastiveEncoder, views: list[Tokens], buckets: int | None = 1
) -> list[torch.Tensor]:
    """Encode several views for training.

    Views of one padded length are joined (SimCSE's (B, 2, T) -> (2B, T) trick), others are encoded one
    by one (no padding to the longest); either way in ``buckets`` length groups (:func:`encode_bucketed`).
    """
    sizes = [len(v["attention_mask"]) for v in views]  # a view may come as inputs_embeds (no input_ids)
    if all(v["attention_mask"].shape[1] == views[0]["attention_mask"].shape[1] for v in views):
        joined = {k: torch.cat([v[k] for v in views], dim=0) for k in views[0]}
        return list(encode_bucketed(model, joined, buckets).split(sizes, dim=0))
    return [encode_bucketed(model, v, buckets) for v in views]
