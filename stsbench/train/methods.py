"""Training methods, plugged into the one loop of :mod:`stsbench.train.loop`.

Each is an augmentation (``make_views``), a loss (``loss``) and optional state (``after_step``: momentum
encoder, queue).

Adding a method (MoCoSE, Gaussian dropout on the pooled embeddings, ...) is a subclass of :class:`Method`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stsbench.train.augment import Repetition
from stsbench.train.config import TrainConfig, queue_size
from stsbench.train.data import mlm_mask, pad, tokenize
from stsbench.train.losses import InfoNCE, MLMLoss, SupervisedInfoNCE
from stsbench.train.model import ContrastiveEncoder, bert_init_
from stsbench.train.momentum import EmbeddingQueue, ema_update

Tokens = dict[str, torch.Tensor]


@dataclass
class Views:
    """One batch as the encoder sees it (padded tensors)."""

    anchor: Tokens  # x_i, (B, T)
    positive: Tokens | None = None  # x_i+, (B, T'); None: x_i again, the dropout noise makes the view
    hard_negative: Tokens | None = None  # sup SimCSE's x_i-, (B, T)
    mlm: tuple[Tokens, torch.Tensor] | None = None  # masked anchor and its labels (B, T)

    def to(self, device: torch.device | str) -> Views:
        """Move the views to ``device``."""

        def move(t: Tokens | None) -> Tokens | None:
            return None if t is None else {k: v.to(device) for k, v in t.items()}

        mlm = None if self.mlm is None else (move(self.mlm[0]), self.mlm[1].to(device))
        return Views(move(self.anchor), move(self.positive), move(self.hard_negative), mlm)


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
    sizes = [len(v["input_ids"]) for v in views]
    if all(v["input_ids"].shape[1] == views[0]["input_ids"].shape[1] for v in views):
        joined = {k: torch.cat([v[k] for v in views], dim=0) for k in views[0]}
        return list(encode_bucketed(model, joined, buckets).split(sizes, dim=0))
    return [encode_bucketed(model, v, buckets) for v in views]


class Method(nn.Module):
    """Base: unsup SimCSE's augmentation (the sentence twice) and InfoNCE; subclasses change either."""

    name = "simcse"

    def __init__(self, cfg: TrainConfig, tokenizer, hidden_config) -> None:
        super().__init__()
        self.cfg = cfg
        self.tokenizer = tokenizer
        self.criterion: nn.Module = InfoNCE(cfg.temperature)
        self.mlm_loss = None
        if cfg.mlm_weight > 0:
            from transformers.models.bert.modeling_bert import BertLMPredictionHead

            self.mlm_loss = MLMLoss(BertLMPredictionHead(hidden_config))

    def init_new_layers(self, generator: torch.Generator | None, std: float) -> None:
        """BERT-initialise the layers the method adds (the MLM head)."""
        if self.mlm_loss is not None:
            bert_init_(self.mlm_loss, std, generator)

    # -- augmentation ------------------------------------------------------------------------------------
    def make_views(self, rows: list[tuple[str, ...]], row_ids: np.ndarray, rng: np.random.Generator) -> Views:
        """Tokenize the batch; the positive view is the anchor itself (dropout does the rest)."""
        enc = tokenize(self.tokenizer, [r[0] for r in rows], self.cfg.max_length)
        anchor = pad(enc["input_ids"], self.tokenizer.pad_token_id)
        return Views(anchor, None, None, self._mlm(anchor, rng))

    def _mlm(self, anchor: Tokens, rng: np.random.Generator) -> tuple[Tokens, torch.Tensor] | None:
        if self.mlm_loss is None:
            return None
        specials = torch.tensor(self.tokenizer.all_special_ids)
        special = (anchor["attention_mask"] == 0) | torch.isin(anchor["input_ids"], specials)
        ids, labels = mlm_mask(anchor["input_ids"], special, self.tokenizer, self.cfg.mlm_probability, rng)
        return {**anchor, "input_ids": ids}, labels

    # -- loss ------------------------------------------------------------------------------------------
    def contrastive_loss(self, model: ContrastiveEncoder, views: Views) -> torch.Tensor:
        """Eq. (2) on (h, h+) = two dropout-noised encodings of the batch."""
        positive = views.positive if views.positive is not None else views.anchor
        h, h_pos = encode_views(model, [views.anchor, positive], self.cfg.length_buckets)
        return self.criterion(h, h_pos)

    def loss(self, model: ContrastiveEncoder, views: Views) -> tuple[torch.Tensor, dict[str, float]]:
        """Return the training loss of one batch (and its parts, for the log)."""
        loss = self.contrastive_loss(model, views)
        parts = {"contrastive": float(loss.detach())}
        if self.mlm_loss is not None and views.mlm is not None:
            masked, labels = views.mlm
            mlm = self.mlm_loss(model.encode_tokens(masked).last_hidden_state, labels)
            parts["mlm"] = float(mlm.detach())
            loss = loss + self.cfg.mlm_weight * mlm
        return loss, parts

    # -- state ----------------------------------------------------------------------------------------
    def on_epoch_start(self, epoch: int) -> None:
        """Run before the first batch of each epoch."""

    def after_step(self, model: ContrastiveEncoder, views: Views) -> None:
        """Run after each optimizer step (EMA and queue updates live here)."""

    def extra_state(self) -> dict:
        """State that is not a parameter or buffer (the queue), for checkpoints."""
        return {}

    def load_extra_state(self, state: dict, device: torch.device | str) -> None:
        """Restore :meth:`extra_state`."""


class SupSimCSE(Method):
    """Sup SimCSE: (sent0, sent1[, hard_neg]) rows, all views in one forward, hard negatives weighted."""

    name = "sup-simcse"

    def __init__(self, cfg: TrainConfig, tokenizer, hidden_config) -> None:
        super().__init__(cfg, tokenizer, hidden_config)
        self.criterion = SupervisedInfoNCE(cfg.temperature, cfg.hard_negative_weight)

    def make_views(self, rows: list[tuple[str, ...]], row_ids: np.ndarray, rng: np.random.Generator) -> Views:
        """Tokenize and pad every column to one length (SimCSE's collator), split back into views."""
        b, cols = len(rows), len(rows[0])
        texts = [r[c] for c in range(cols) for r in rows]
        enc = tokenize(self.tokenizer, texts, self.cfg.max_length)
        joined = pad(enc["input_ids"], self.tokenizer.pad_token_id)
        parts = [{k: v[c * b : (c + 1) * b] for k, v in joined.items()} for c in range(cols)]
        return Views(parts[0], parts[1], parts[2] if cols == 3 else None, self._mlm(parts[0], rng))

    def contrastive_loss(self, model: ContrastiveEncoder, views: Views) -> torch.Tensor:
        """SimCSE eq. (5) with the hard-negative weight."""
        batch = [views.anchor, views.positive] + (
            [views.hard_negative] if views.hard_negative is not None else []
        )
        h = encode_views(model, batch, self.cfg.length_buckets)
        return self.criterion(h[0], h[1], h[2] if len(h) == 3 else None)


class ESimCSE(Method):
    """ESimCSE: a repeated positive view (Sec. 3.1) and momentum contrast with a queue (Sec. 3.2, eq. 7)."""

    name = "esimcse"

    def __init__(self, cfg: TrainConfig, tokenizer, hidden_config) -> None:
        super().__init__(cfg, tokenizer, hidden_config)
        self.repetition = None
        if cfg.repetition:
            self.repetition = Repetition.for_tokenizer(
                tokenizer, cfg.repetition_kind, cfg.dup_rate, cfg.repetition_sampling
            )
        self.queue = EmbeddingQueue(queue_size(cfg))
        self.momentum_encoder: ContrastiveEncoder | None = None

    def attach(self, model: ContrastiveEncoder, generator: torch.Generator | None = None) -> None:
        """Build the momentum encoder from the online one (only when there is a queue to fill)."""
        if self.queue.size > 0:
            self.momentum_encoder = model.momentum_copy(self.cfg.momentum_init == "random", generator)

    def make_views(self, rows: list[tuple[str, ...]], row_ids: np.ndarray, rng: np.random.Generator) -> Views:
        """Anchor x_i as tokenized; positive x_i+ with repeated (or inserted) tokens."""
        if self.repetition is None:
            return super().make_views(rows, row_ids, rng)
        texts = [r[0] for r in rows]
        enc = tokenize(self.tokenizer, texts, self.cfg.max_length, offsets=self.repetition.needs_offsets)
        offsets = enc.get("offset_mapping") or [None] * len(texts)
        repeated = []
        for i, (ids, special) in enumerate(zip(enc["input_ids"], enc["special_tokens_mask"], strict=True)):
            # official: one fixed draw per sentence for the whole run; paper: a fresh draw each batch
            r = (
                np.random.default_rng([self.cfg.seed, int(row_ids[i]), 2])
                if self.cfg.repetition_sampling == "official"
                else rng
            )
            repeated.append(self.repetition.apply(ids, special, offsets[i], r))
        anchor = pad(enc["input_ids"], self.tokenizer.pad_token_id)
        positive = pad(repeated, self.tokenizer.pad_token_id)
        return Views(anchor, positive, None, self._mlm(anchor, rng))

    def contrastive_loss(self, model: ContrastiveEncoder, views: Views) -> torch.Tensor:
        """Eq. (7): in-batch positives h_j+ plus the queued momentum embeddings as negatives."""
        positive = views.positive if views.positive is not None else views.anchor
        h, h_pos = encode_views(model, [views.anchor, positive], self.cfg.length_buckets)
        return self.criterion(h, h_pos, self.queue.negatives())

    def on_epoch_start(self, epoch: int) -> None:
        """Empty the queue if asked (the official code does each epoch; the paper does not say)."""
        if self.cfg.queue_reset_each_epoch:
            self.queue.clear()

    @torch.no_grad()
    def after_step(self, model: ContrastiveEncoder, views: Views) -> None:
        """Eq. (6) on the momentum encoder, then enqueue its embeddings of the un-repeated sentences."""
        if self.momentum_encoder is None:
            return
        ema_update(self.momentum_encoder, model, self.cfg.momentum)
        momentum = self.momentum_encoder.eval()  # dropout off, whatever mode the method is in
        self.queue.push(encode_bucketed(momentum, views.anchor, self.cfg.length_buckets))

    def extra_state(self) -> dict:
        """Return the queue (the momentum encoder is a submodule, in ``state_dict``)."""
        return {"queue": self.queue.state_dict()}

    def load_extra_state(self, state: dict, device: torch.device | str) -> None:
        """Restore the queue."""
        self.queue.load_state_dict(state["queue"], device)


def build_method(
    cfg: TrainConfig, tokenizer, model: ContrastiveEncoder, generator: torch.Generator | None = None
) -> Method:
    """Build the method ``cfg`` names, its new layers initialised and its state attached to ``model``."""
    config = model.backbone.config
    if cfg.method == "esimcse":
        method: Method = ESimCSE(cfg, tokenizer, config)
        method.attach(model, generator)
    elif cfg.supervised:
        method = SupSimCSE(cfg, tokenizer, config)
    else:
        method = Method(cfg, tokenizer, config)
    method.init_new_layers(generator, config.initializer_range)
    return method.to(next(model.parameters()).device)
