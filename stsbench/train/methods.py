"""Training methods, plugged into the one loop of :mod:`stsbench.train.loop`.

Each is an augmentation (``make_views``), a loss (``loss``) and optional state (``after_step``: momentum
encoder, queue). Adding a method is a subclass of :class:`Method`.

With several processes (:mod:`stsbench.train.distributed`) every loss is the loss of the global batch: the
embeddings of all processes are gathered (the local slice keeps its gradient) and queues hold the keys of
every process, so each process holds the same queue.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from stsbench.train import distributed
from stsbench.train.augment import Repetition
from stsbench.train.config import TrainConfig, effective_queue_size, parse_slices, traceable_distance
from stsbench.train.data import mlm_mask, pad, tokenize
from stsbench.train.losses import InfoNCE, MLMLoss, SupervisedInfoNCE
from stsbench.train.model import ContrastiveEncoder, bert_init_
from stsbench.train.momentum import EmbeddingQueue, cosine_decay, ema_update, fgsm

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
    def pooled(self, model: ContrastiveEncoder, views: list[Tokens]) -> list[torch.Tensor]:
        """Training embeddings of ``views``, each (B_global, H): Gaussian noise if asked, then gathered."""
        out = encode_views(model, views, self.cfg.length_buckets)
        std = self.cfg.gaussian_noise_std
        if std > 0:  # the Gaussian-dropout variant: noise on the pooled embeddings, training only
            out = [h + std * torch.randn_like(h) for h in out]
        return [distributed.gather_with_grad(h) for h in out]

    def contrastive_loss(self, model: ContrastiveEncoder, views: Views) -> torch.Tensor:
        """Eq. (2) on (h, h+) = two dropout-noised encodings of the batch."""
        positive = views.positive if views.positive is not None else views.anchor
        h, h_pos = self.pooled(model, [views.anchor, positive])
        return self.criterion(h, h_pos)

    def loss(self, model: ContrastiveEncoder, views: Views) -> tuple[torch.Tensor, dict[str, float]]:
        """Return what to back-propagate for one batch, and the parts for the log.

        ``parts["loss"]`` is the loss itself; the returned tensor scales the (global) contrastive loss by
        the number of processes (:func:`stsbench.train.distributed.loss_scale`, 1 for one process).
        """
        contrastive = self.contrastive_loss(model, views)
        parts = {"contrastive": float(contrastive.detach())}
        loss = contrastive * distributed.loss_scale()
        logged = parts["contrastive"]
        if self.mlm_loss is not None and views.mlm is not None:
            masked, labels = views.mlm
            mlm = self.mlm_loss(model.encode_tokens(masked).last_hidden_state, labels)
            parts["mlm"] = float(mlm.detach())
            loss = loss + self.cfg.mlm_weight * mlm
            logged += self.cfg.mlm_weight * parts["mlm"]
        return loss, {"loss": logged, **parts}

    # -- state ----------------------------------------------------------------------------------------
    def start(self, total_steps: int) -> None:
        """Run once before training with the run's number of steps (schedules that span the run)."""

    def traceable_distance(self, global_batch: int) -> float | dict[str, float] | None:
        """MoCoSE eq. (4) for a method with an EMA encoder and a queue; None without them."""
        return None

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
        h = self.pooled(model, batch)
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
        self.queue = EmbeddingQueue(effective_queue_size(cfg, distributed.world_size()))
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
        h, h_pos = self.pooled(model, [views.anchor, positive])
        return self.criterion(h, h_pos, self.queue.negatives())

    def traceable_distance(self, global_batch: int) -> float | None:
        """1 / (1 - lambda) + M / B, when there is a queue (momentum contrast)."""
        if self.queue.size <= 0:
            return None
        return traceable_distance(self.cfg.momentum, self.queue.size, global_batch)

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
        keys = encode_bucketed(momentum, views.anchor, self.cfg.length_buckets)
        self.queue.push(distributed.gather(keys))  # every process's keys: one global queue

    def extra_state(self) -> dict:
        """Return the queue (the momentum encoder is a submodule, in ``state_dict``)."""
        return {"queue": self.queue.state_dict()}

    def load_extra_state(self, state: dict, device: torch.device | str) -> None:
        """Restore the queue."""
        self.queue.load_state_dict(state["queue"], device)


def head(hidden_config, layers: int, last: str) -> nn.Sequential:
    """MoCoSE's projection (``last="norm"``) or predictor (``last="tanh"``): ``layers`` dense layers of size H.

    Each but the last is dense + LayerNorm + dropout; the last is dense + LayerNorm + dropout (projection)
    or dense + tanh (predictor), as in the official code. 0 layers: the identity.
    """
    size = hidden_config.hidden_size
    eps = getattr(hidden_config, "layer_norm_eps", 1e-12)
    p = getattr(hidden_config, "hidden_dropout_prob", 0.1)
    mods: list[nn.Module] = []
    for i in range(layers):
        mods.append(nn.Linear(size, size))
        if i < layers - 1 or last == "norm":
            mods += [nn.LayerNorm(size, eps=eps), nn.Dropout(p)]
        else:
            mods.append(nn.Tanh())
    return nn.Sequential(*mods)


class MoCoSE(Method):
    """MoCoSE (Cao et al., 2022): online and EMA target branches, FGSM, a queue of target keys.

    Online branch: encoder + pooler + projection + predictor gives the queries q; target branch: an EMA
    copy of encoder + pooler + projection (no predictor, no gradient, dropout off) gives the keys k of the
    same sentences. Loss (eq. 3): InfoNCE of q against the in-batch keys and the queued keys, tau 0.05.
    FGSM (eq. 1): the online branch's input embeddings move by eps * sign of the loss's gradient before
    the step's forward. After each step the target follows eq. (2) with eta ramped by a cosine from
    ``ema_decay_start`` to ``ema_decay_end`` over the run, and the step's keys enter the queue.
    """

    name = "mocose"

    def __init__(self, cfg: TrainConfig, tokenizer, hidden_config) -> None:
        super().__init__(cfg, tokenizer, hidden_config)
        self.projection = head(hidden_config, cfg.projection_layers, "norm")
        self.predictor = head(hidden_config, cfg.predictor_layers, "tanh")
        self.queue = EmbeddingQueue(cfg.queue_size)
        self.hidden = hidden_config.hidden_size  # projection and predictor keep the size H
        self.slices = parse_slices(cfg.queue_slice, cfg.queue_size) if cfg.queue_slice else None
        self.target_encoder: ContrastiveEncoder | None = None
        self.target_projection: nn.Module | None = None
        self.total_steps = 1
        self.updates = 0  # EMA updates done (= optimizer steps)
        self._keys: torch.Tensor | None = None  # this step's keys, enqueued after the step
        self._negatives_used = 0  # queued keys in this step's loss, for the log

    def init_new_layers(self, generator: torch.Generator | None, std: float) -> None:
        """BERT-initialise projection and predictor; fill the queue's K_start random entries."""
        super().init_new_layers(generator, std)
        bert_init_(self.projection, std, generator)
        bert_init_(self.predictor, std, generator)
        if self.cfg.queue_start == "random" and self.cfg.queue_start_size > 0:
            noise = torch.randn(self.cfg.queue_start_size, self.hidden, generator=generator)
            self.queue.push(torch.nn.functional.normalize(noise, dim=1))

    def attach(self, model: ContrastiveEncoder) -> None:
        """Make the target branch: copies of the online encoder and projection that never train."""
        self.target_encoder = model.momentum_copy()
        self.target_projection = copy.deepcopy(self.projection).requires_grad_(False).eval()
        if self.queue.items is not None:
            self.queue.items = self.queue.items.to(next(model.parameters()).device)

    def start(self, total_steps: int) -> None:
        """Set the span of the EMA schedule."""
        self.total_steps = max(1, total_steps)

    def traceable_distance(self, global_batch: int) -> dict[str, float]:
        """Eq. (4) at the first and the last eta of the schedule."""
        k = self.cfg.queue_size
        return {
            "start": traceable_distance(self.cfg.ema_decay_start, k, global_batch),
            "end": traceable_distance(self.cfg.ema_decay_end, k, global_batch),
        }

    def decay(self, step: int) -> float:
        """Return eta after optimizer step ``step`` (1-based) of the run: the cosine ramp of Sec. 4.1."""
        return cosine_decay(step, self.total_steps, self.cfg.ema_decay_start, self.cfg.ema_decay_end)

    def negatives(self) -> torch.Tensor | None:
        """The queued keys that join the loss: all, or the ``queue_slice`` positions (newest first)."""
        items = self.queue.negatives()
        if items is None or self.slices is None:
            return items
        newest_first = items.flip(0)
        return torch.cat([newest_first[a:b] for a, b in self.slices])

    def online(self, model: ContrastiveEncoder, batch: Tokens) -> torch.Tensor:
        """Queries q = predictor(projection(pooled)) of a batch given as ``inputs_embeds``: (B, H)."""
        return self.predictor(self.projection(encode_bucketed(model, batch, self.cfg.length_buckets)))

    @torch.no_grad()
    def keys(self, anchor: Tokens) -> torch.Tensor:
        """Keys k of the target branch (dropout off) for every process's sentences: (B_global, H)."""
        target, projection = self.target_encoder.eval(), self.target_projection.eval()
        return distributed.gather(projection(encode_bucketed(target, anchor, self.cfg.length_buckets)))

    def contrastive_loss(self, model: ContrastiveEncoder, views: Views) -> torch.Tensor:
        """Eq. (3) with the FGSM view of eq. (1) on the online branch."""
        anchor = views.anchor
        keys = self.keys(anchor)
        negatives = self.negatives()
        rest = {k: v for k, v in anchor.items() if k != "input_ids"}
        x = model.backbone.get_input_embeddings()(anchor["input_ids"])  # (B, T, H)
        if self.cfg.fgsm_epsilon > 0:
            probe = x.detach().requires_grad_(True)
            q = distributed.gather_with_grad(self.online(model, {**rest, "inputs_embeds": probe}))
            (grad,) = torch.autograd.grad(self.criterion(q, keys, negatives), probe)
            x = fgsm(x, grad, self.cfg.fgsm_epsilon)
        q = distributed.gather_with_grad(self.online(model, {**rest, "inputs_embeds": x}))
        self._keys = keys
        self._negatives_used = 0 if negatives is None else len(negatives)
        return self.criterion(q, keys, negatives)

    def loss(self, model: ContrastiveEncoder, views: Views) -> tuple[torch.Tensor, dict[str, float]]:
        """The base loss, with the step's eta and the number of queued negatives in the log."""
        loss, parts = super().loss(model, views)
        parts["ema_decay"] = self.decay(self.updates + 1)
        parts["negatives"] = float(self._negatives_used)
        return loss, parts

    @torch.no_grad()
    def after_step(self, model: ContrastiveEncoder, views: Views) -> None:
        """Eq. (2) on the target branch, then enqueue the step's keys (FIFO, K at most)."""
        self.updates += 1
        eta = self.decay(self.updates)
        ema_update(self.target_encoder, model, eta)
        ema_update(self.target_projection, self.projection, eta)
        if self._keys is not None:
            self.queue.push(self._keys)
            self._keys = None

    def extra_state(self) -> dict:
        """The queue and the number of EMA updates (the targets are submodules, in ``state_dict``)."""
        return {"queue": self.queue.state_dict(), "updates": self.updates}

    def load_extra_state(self, state: dict, device: torch.device | str) -> None:
        """Restore :meth:`extra_state`."""
        self.queue.load_state_dict(state["queue"], device)
        self.updates = int(state["updates"])


def build_method(
    cfg: TrainConfig, tokenizer, model: ContrastiveEncoder, generator: torch.Generator | None = None
) -> Method:
    """Build the method ``cfg`` names, its new layers initialised and its state attached to ``model``."""
    config = model.backbone.config
    if cfg.method == "mocose":
        mocose = MoCoSE(cfg, tokenizer, config)
        mocose.init_new_layers(generator, config.initializer_range)
        mocose.attach(model)
        return mocose.to(next(model.parameters()).device)
    if cfg.method == "esimcse":
        method: Method = ESimCSE(cfg, tokenizer, config)
        method.attach(model, generator)
    elif cfg.supervised:
        method = SupSimCSE(cfg, tokenizer, config)
    else:
        method = Method(cfg, tokenizer, config)
    method.init_new_layers(generator, config.initializer_range)
    return method.to(next(model.parameters()).device)
