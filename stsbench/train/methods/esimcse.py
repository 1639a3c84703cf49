"""ESimCSE (Wu et al., 2022): repetition as the positive view and momentum contrast with a queue."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from stsbench.encoders.pooling import pool
from stsbench.train import distributed
from stsbench.train.augment.base import Augmentation, build_augmentation
from stsbench.train.methods.base import Method, Views, encode_bucketed
from stsbench.train.methods.esimcse_options import queue_size
from stsbench.train.model import ContrastiveEncoder
from stsbench.train.momentum import EmbeddingQueue, ema_update, traceable_distance

if TYPE_CHECKING:
    from stsbench.train.config import TrainConfig


class OnlineMLPKeys:
    """The official keys: the momentum backbone's [CLS] through the *online* MLP (ESimCSE ``models.py:183-192``).

    A callable for :func:`encode_bucketed`, not a module: the online MLP stays the online encoder's own
    (trained there, never EMA'd).
    """

    def __init__(self, momentum: ContrastiveEncoder, online: ContrastiveEncoder) -> None:
        self.momentum = momentum
        self.online = online

    def __call__(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        if self.online.mlp is None:
            return self.momentum(batch)
        hidden = self.momentum.encode_tokens(batch)
        return self.online.mlp(pool(hidden, batch["attention_mask"], "cls_before_pooler"))


class ESimCSE(Method):
    """ESimCSE: a repeated positive view (Sec. 3.1) and momentum contrast with a queue (Sec. 3.2, eq. 7)."""

    name = "esimcse"

    def __init__(self, cfg: TrainConfig, tokenizer, hidden_config) -> None:
        super().__init__(cfg, tokenizer, hidden_config)
        self.queue = EmbeddingQueue(queue_size(cfg, distributed.world_size()))
        self.momentum_encoder: ContrastiveEncoder | None = None
        # official (caskcsg/sentemb ESimCSE/esimcse/models.py:161-163, 188-189): EMA over the backbone only,
        # keys through the live online MLP; "momentum": EMA over backbone + MLP, keys through the EMA'd MLP

    def own_augmentations(self) -> list[Augmentation]:
        """The positive view repeats words or sub-words (the registry's ``repetition``), unless --no-repetition."""
        return [build_augmentation("repetition", self.cfg, self.tokenizer)] if self.cfg.repetition else []

    def attach(self, model: ContrastiveEncoder, generator: torch.Generator | None = None) -> None:
        """Build the momentum encoder from the online one (only when there is a queue to fill)."""
        if self.queue.size > 0:
            self.momentum_encoder = model.momentum_copy(self.cfg.momentum_init == "random", generator)

    def contrastive_loss(self, model: ContrastiveEncoder, views: Views) -> torch.Tensor:
        """Eq. (7): in-batch positives h_j+ plus the queued momentum embeddings as negatives."""
        h, h_pos = self.pair(model, views)
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

    def before_step(self, model: ContrastiveEncoder, views: Views) -> None:
        """``--momentum-update before-step``: the momentum update and the keys from the pre-step weights."""
        if self.cfg.momentum_update == "before-step":
            self.momentum_step(model, views)

    def after_step(self, model: ContrastiveEncoder, views: Views) -> None:
        """``--momentum-update after-step`` (stsbench's order before): from the stepped weights."""
        if self.cfg.momentum_update == "after-step":
            self.momentum_step(model, views)

    @torch.no_grad()
    def momentum_step(self, model: ContrastiveEncoder, views: Views) -> None:
        """Eq. (6) on the momentum encoder, then enqueue its embeddings of the un-repeated sentences.

        Before the optimizer step (official: the EMA inside the training forward, ``models.py``
        ``cl_forward``; the keys in ``trainers.py`` ``CLTrainer.compute_loss`` through the online MLP as the
        loss saw it, then backward and step) or after it. The loss of this step has read the queue already
        either way: its keys are negatives from the next step on.
        """
        if self.momentum_encoder is None:
            return
        momentum = self.momentum_encoder.eval()  # dropout off, whatever mode the method is in
        if self.cfg.momentum_mlp == "online":
            ema_update(momentum.backbone, model.backbone, self.cfg.momentum)
            keys = encode_bucketed(OnlineMLPKeys(momentum, model), views.anchor, self.cfg.length_buckets)
        else:
            ema_update(momentum, model, self.cfg.momentum)
            keys = encode_bucketed(momentum, views.anchor, self.cfg.length_buckets)
        # global: every process's keys, one queue alike everywhere; process: its own keys (official)
        self.queue.push(distributed.gather(keys) if self.cfg.queue_scope == "global" else keys)

    def frozen_modules(self) -> list[ContrastiveEncoder]:
        """The momentum encoder (when there is a queue to fill)."""
        return [] if self.momentum_encoder is None else [self.momentum_encoder]

    def static_ready(self) -> bool:
        """Static once the queue is full (at once without momentum contrast)."""
        return self.momentum_encoder is None or self.queue.full

    def make_static(self) -> None:
        """The ring queue (the momentum decay is a constant: nothing else changes step to step)."""
        if self.momentum_encoder is not None:
            self.queue.make_static()

    @property
    def state_per_process(self) -> bool:
        """Each process's queue differs (``queue_scope: process``): checkpoints keep every process's."""
        return self.cfg.queue_scope == "process"

    def extra_state(self) -> dict:
        """Return the queue (the momentum encoder is a submodule, in ``state_dict``)."""
        return {"queue": self.queue.state_dict()}

    def load_extra_state(self, state: dict, device: torch.device | str) -> None:
        """Restore the queue."""
        self.queue.load_state_dict(state["queue"], device)
