"""SimCSE (Gao et al., 2021): unsup SimCSE (the base method's views and loss) and sup SimCSE."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from stsbench.train.data import tokenize
from stsbench.train.losses import SupervisedInfoNCE
from stsbench.train.methods.base import Method, Views

if TYPE_CHECKING:
    import torch

    from stsbench.train.config import TrainConfig
    from stsbench.train.model import ContrastiveEncoder


class SimCSE(Method):
    """Unsup SimCSE: each sentence twice through the encoder, dropout the only noise, InfoNCE (eq. 2)."""

    name = "simcse"


class SupSimCSE(SimCSE):
    """Sup SimCSE: (sent0, sent1[, hard_neg]) rows, all views in one forward, hard negatives weighted."""

    name = "sup-simcse"
    augmentable_views: tuple[str, ...] = ()  # sentence pairs: its views are the rows' columns

    def __init__(self, cfg: TrainConfig, tokenizer, hidden_config) -> None:
        super().__init__(cfg, tokenizer, hidden_config)
        self.criterion = SupervisedInfoNCE(cfg.temperature, cfg.hard_negative_weight)

    def make_views(self, rows: list[tuple[str, ...]], row_ids: np.ndarray, rng: np.random.Generator) -> Views:
        """Tokenize and pad every column to one length (SimCSE's collator), split back into views."""
        b, cols = len(rows), len(rows[0])
        texts = [r[c] for c in range(cols) for r in rows]
        enc = tokenize(self.tokenizer, texts, self.cfg.max_length)
        joined = self.pad(enc["input_ids"])
        parts = [{k: v[c * b : (c + 1) * b] for k, v in joined.items()} for c in range(cols)]
        return Views(parts[0], parts[1], parts[2] if cols == 3 else None, self._mlm(parts[0], rng, parts[1:]))

    def contrastive_loss(self, model: ContrastiveEncoder, views: Views) -> torch.Tensor:
        """SimCSE eq. (5) with the hard-negative weight."""
        columns = [v for v in (views.anchor, views.positive, views.hard_negative) if v is not None]
        return self.criterion(*self.pooled(model, columns))  # (h, h+[, h-])
