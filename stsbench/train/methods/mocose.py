"""MoCoSE (Cao et al., 2022): an EMA target branch, FGSM on the online branch, a queue of target keys."""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Mapping
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from stsbench.errors import StsbenchError
from stsbench.train import distributed
from stsbench.train.data import tokenize
from stsbench.train.methods.base import Method, Tokens, Views, encode_bucketed
from stsbench.train.methods.mocose_options import parse_slices
from stsbench.train.model import ContrastiveEncoder, bert_init_
from stsbench.train.momentum import EmbeddingQueue, ema_update, traceable_distance
from stsbench.train.schedule import rows_before, run_steps

if TYPE_CHECKING:
    from stsbench.train.config import TrainConfig


def cosine_decay(step: int, total: int, start: float, end: float) -> float:
    """MoCoSE's EMA decay eta at ``step`` of ``total``: ``start`` at step 0, ``end`` at the last, a cosine between.

        eta(t) = end - (end - start) * (cos(pi * t / T) + 1) / 2

    Sec. 4.1: 0.75 -> 0.95 over the run (``schedule: run``). The official code's schedule is another one:
    :func:`official_mocose_decay`, whose length is a constant 15,000 steps, not the run.
    """
    t = min(max(step, 0), total) / max(1, total)
    return end - (end - start) * (math.cos(math.pi * t) + 1.0) / 2.0


OFFICIAL_EMA_STEPS = 15000  # xbdxwyh/mocose mocose.py:34, EMA(total_step=15000)


def official_mocose_decay(step: int, start: float, length: int = OFFICIAL_EMA_STEPS) -> float:
    """The official MoCoSE EMA decay after ``step`` updates (xbdxwyh/mocose ``mocose.py:41-43``).

        eta(t) = 1 - (1 - d) * (cos(pi * t / 15000) + 1) / 2

    A cosine from d towards 1 over a fixed 15,000 steps, whatever the run's length (a 1M-sentence epoch at
    batch 256 is 3,906 steps, where eta = 0.79 for d = 0.75). Not clamped, as there: past ``length`` eta
    falls again.
    """
    return 1.0 - (1.0 - start) * (math.cos(math.pi * step / max(1, length)) + 1.0) / 2.0


EMA_SCHEDULES = ("run", "steps", "fixed")


def mocose_decay(step: int, *, schedule: str, total: int, start: float, end: float, length: int) -> float:
    """MoCoSE's eta after optimizer step ``step`` under ``schedule``.

    - ``run``: the paper's cosine from ``start`` to ``end`` over the run's ``total`` steps (Sec. 4.1);
    - ``steps``: a cosine from ``start`` to ``end`` over a fixed ``length`` steps, unclamped; with end = 1
      and length 15,000 this is the official code's schedule (:func:`official_mocose_decay`);
    - ``fixed``: ``start`` throughout (the paper's traceable distance 14.67 = 1/(1-0.85) + 512/64 is a fixed
      0.85).
    """
    if schedule == "run":
        return cosine_decay(step, total, start, end)
    if schedule == "steps":
        return end - (end - start) * (math.cos(math.pi * step / max(1, length)) + 1.0) / 2.0
    if schedule == "fixed":
        return start
    raise ValueError(f"unknown EMA schedule {schedule!r}; choose from {', '.join(EMA_SCHEDULES)}")


def config_decay(cfg, step: int, total: int) -> float:
    """:func:`mocose_decay` after optimizer step ``step`` of a ``total``-step run, by ``cfg``'s options."""
    return mocose_decay(
        step,
        schedule=cfg.ema_schedule,
        total=max(1, total),
        start=cfg.ema_decay_start,
        end=cfg.ema_decay_end,
        length=cfg.ema_schedule_steps,
    )


def negatives_used(cfg, held: int, start_count: int | None, slices: list[tuple[int, int]] | None) -> int:
    """Queued keys that join a step's loss, of ``held`` (the official start: its buffer and its counter)."""
    if start_count is not None:  # the newest counter + K_start, or all held (:meth:`MoCoSE.negatives`)
        n = start_count + cfg.queue_start_size
        return n if n < cfg.queue_size else held
    return held if slices is None else sum(min(b, held) - min(a, held) for a, b in slices)


def fgsm(x: torch.Tensor, grad: torch.Tensor, epsilon: float) -> torch.Tensor:
    """MoCoSE eq. (1): x' = x + epsilon * sign(grad_x L); the step is a constant (no gradient through it)."""
    return x + epsilon * grad.detach().sign()


def branch_head(hidden_config, layers: int, last: str, size: int, out: int) -> nn.Sequential:
    """MoCoSE's projection (``last="norm"``) or predictor (``last="tanh"``): ``layers`` dense layers.

    Each but the last is dense ``size`` -> ``size`` + LayerNorm + dropout; the last is dense ``size`` -> ``out``
    + LayerNorm + dropout (projection) or + tanh (predictor), as the official ``ProjectionLayer`` and ``MLP``
    (``mocose.py:51-100``): the projection maps the hidden size H to ``out_size`` D, the predictor keeps D.
    0 layers: the identity.
    """
    eps = getattr(hidden_config, "layer_norm_eps", 1e-12)
    p = getattr(hidden_config, "hidden_dropout_prob", 0.1)
    mods: list[nn.Module] = []
    for i in range(layers):
        width = out if i == layers - 1 else size
        mods.append(nn.Linear(size, width))
        if i < layers - 1 or last == "norm":
            mods += [nn.LayerNorm(width, eps=eps), nn.Dropout(p)]
        else:
            mods.append(nn.Tanh())
    return nn.Sequential(*mods)


@contextlib.contextmanager
def shared_embeddings(target: ContrastiveEncoder, online: ContrastiveEncoder | None):
    """While in the block, ``target``'s backbone embeds through ``online``'s embedding layer (if given).

    The official target branch has no embedding layer of its own: its input is the online
    ``MoCoSEEmbeddings``' output (``mocose.py:507-514``, ``:332`` the target copy commented out). The
    target's own layer stays in its state dict (and EMA'd) untouched; it is only bypassed here.
    """
    if online is None:
        yield
        return
    own = target.backbone.embeddings
    target.backbone.embeddings = online.backbone.embeddings
    try:
        yield
    finally:
        target.backbone.embeddings = own


class MoCoSE(Method):
    """MoCoSE (Cao et al., 2022): online and EMA target branches, FGSM, a queue of target keys.

    Online branch: encoder + pooler + projection + predictor gives the queries q; target branch: an EMA
    copy of encoder + pooler + projection (no predictor, no gradient, dropout off) gives the keys k of the
    same sentences. Loss (eq. 3): InfoNCE of q against the in-batch keys and the queued keys, tau 0.05.
    FGSM (eq. 1): the online branch's input embeddings move by eps * sign of the loss's gradient before
    the step's forward. After each step the target follows eq. (2) with eta ramped by a cosine from
    ``ema_decay_start`` to ``ema_decay_end`` over the run, and the step's keys enter the queue.

    Where the paper and the official code (xbdxwyh/mocose) part, the choice is an option:

    - ``target_view``: ``augmented`` (paper Sec. 3 and Alg. 1 line 3, and the official ``mocose.py:507-514``:
      the target sees the online word embeddings after FGSM, with dropout on) or ``clean`` (eval mode, the
      sentence's own tokens through the target's embeddings: stsbench before the view options);
    - ``key_gradient``: ``stop`` (paper: the target branch truncates the gradient) or ``official`` (keys
      enter the loss undetached, the target projection trains and is EMA'd, the gradient through the frozen
      target encoder reaches the online word embeddings: ``mocose.py:126-131`` with the notebook's freezing
      of target encoder and pooler only);
    - ``ema_schedule``: ``run``, ``steps`` or ``fixed`` (:func:`mocose_decay`).
    """

    name = "mocose"
    augmentable_views: tuple[str, ...] = ("online", "target", "both")  # embeddings-stage ones (its spec)

    def __init__(self, cfg: TrainConfig, tokenizer, hidden_config) -> None:
        super().__init__(cfg, tokenizer, hidden_config)
        hidden = hidden_config.hidden_size
        # D: the projection's output, the predictor's width and the queue's (official config.out_size)
        self.hidden = cfg.out_size or hidden
        if cfg.projection_layers == 0 and self.hidden != hidden:
            raise StsbenchError(
                f"--out-size {self.hidden}: the projection maps the hidden size {hidden} to it, and "
                "--projection-layers is 0; give the projection a layer, or drop --out-size"
            )
        self.projection = branch_head(hidden_config, cfg.projection_layers, "norm", hidden, self.hidden)
        self.predictor = branch_head(hidden_config, cfg.predictor_layers, "tanh", self.hidden, self.hidden)
        self.queue = EmbeddingQueue(cfg.queue_size)
        # queue_start official (mocose.py): K random entries and a counter from K_start until it passes K;
        # meanwhile the negatives come from this buffer, which may hold more than K (:meth:`negatives`)
        self.start_items: torch.Tensor | None = None
        self.start_count: int | None = None
        self.slices = parse_slices(cfg.queue_slice, cfg.queue_size) if cfg.queue_slice else None
        self.target_encoder: ContrastiveEncoder | None = None
        self.target_projection: nn.Module | None = None
        self.total_steps = 1
        self.updates = 0  # EMA updates done (= optimizer steps)
        self.eta: torch.Tensor | None = None  # static form: this step's eta on the device
        self._keys: torch.Tensor | None = None  # this step's keys, enqueued after the step
        self.target_view = cfg.target_view
        if self.target_view == "clean" and self.augments("target"):
            raise StsbenchError(
                f"--augment {next(a.name for a in self.augmentations if a.targets('target'))}: it augments the "
                "target branch, and --target-view clean gives that branch the sentence unaugmented; use "
                "--target-view augmented, or --augment-views online"
            )

    @classmethod
    def build(
        cls, cfg: TrainConfig, tokenizer, model: ContrastiveEncoder, generator: torch.Generator | None = None
    ) -> MoCoSE:
        """The new layers first, then the target branch (a copy of them); no pretrained MLM head."""
        config = model.backbone.config
        mocose = cls(cfg, tokenizer, config)
        mocose.init_new_layers(generator, config.initializer_range)
        mocose.attach(model)
        return mocose.to(next(model.parameters()).device)

    def init_new_layers(self, generator: torch.Generator | None, std: float) -> None:
        """BERT-initialise projection and predictor; fill the queue's K_start random entries."""
        super().init_new_layers(generator, std)
        bert_init_(self.projection, std, generator)
        bert_init_(self.predictor, std, generator)
        if self.cfg.queue_start == "official" and self.cfg.queue_size > 0:
            noise = torch.randn(self.cfg.queue_size, self.hidden, generator=generator)
            self.start_items = torch.nn.functional.normalize(noise, dim=1)
            self.start_count = self.cfg.queue_start_size  # K_start
        elif self.cfg.queue_start == "random" and self.cfg.queue_start_size > 0:
            noise = torch.randn(self.cfg.queue_start_size, self.hidden, generator=generator)
            self.queue.push(torch.nn.functional.normalize(noise, dim=1))

    def attach(self, model: ContrastiveEncoder, generator: torch.Generator | None = None) -> None:
        """Make the target branch: copies of the online encoder and projection that never train (no draws)."""
        self.target_encoder = model.momentum_copy()
        self.target_projection = copy.deepcopy(self.projection).eval()
        # official: the target projection is in the optimizer as well as EMA'd (only encoder + pooler frozen)
        self.target_projection.requires_grad_(self.cfg.key_gradient == "official")
        if self.queue.items is not None:
            self.queue.items = self.queue.items.to(next(model.parameters()).device)
        if self.start_items is not None:
            self.start_items = self.start_items.to(next(model.parameters()).device)

    def start(self, total_steps: int) -> None:
        """Set the span of the EMA schedule."""
        self.total_steps = max(1, total_steps)

    def traceable_distance(self, global_batch: int) -> dict[str, float]:
        """Eq. (4) at the run's first and last eta (infinite where eta reaches 1)."""
        k = self.cfg.queue_size

        def distance(eta: float) -> float:
            return float("inf") if eta >= 1.0 else traceable_distance(eta, k, global_batch)

        return {"start": distance(self.decay(0)), "end": distance(self.decay(self.total_steps))}

    def decay(self, step: int) -> float:
        """Return eta after optimizer step ``step`` (1-based) of the run under ``ema_schedule``."""
        return config_decay(self.cfg, step, self.total_steps)

    def negatives(self) -> torch.Tensor | None:
        """The queued keys that join the loss: all, or the ``queue_slice`` positions (newest first).

        During the official queue start (``queue_start: official``) the official rule instead, slices unapplied.
        """
        if self.start_count is not None:  # official start: the newest queue_size + K_start, or all held
            n = self.start_count + self.cfg.queue_start_size
            held = len(self.start_items)
            return self.start_items[held - n :] if n < self.cfg.queue_size else self.start_items
        items = self.queue.negatives()
        if items is None or self.slices is None:
            return items
        newest_first = items.flip(0)
        return torch.cat([newest_first[a:b] for a, b in self.slices])

    def online(self, model: ContrastiveEncoder, batch: Tokens) -> torch.Tensor:
        """Queries q = predictor(projection(pooled)) of a batch given as ``inputs_embeds``: (B, H)."""
        return self.predictor(self.projection(encode_bucketed(model, batch, self.cfg.length_buckets)))

    def keys(
        self, anchor: Tokens, x: torch.Tensor | None = None, model: ContrastiveEncoder | None = None
    ) -> torch.Tensor:
        """Keys k of the target branch for every process's sentences: (B_global, H).

        ``clean``: eval mode (dropout off) on the sentence's tokens. ``augmented``: train mode (dropout on)
        on ``x``, the online branch's word embeddings (after FGSM), or on the tokens when ``x`` is None;
        with ``target_embeddings: shared`` through ``model``'s (the online) embedding layer, position, type,
        LayerNorm and its dropout included, else through the target's own EMA'd copy of that layer.
        With ``key_gradient: official`` the keys keep their graph (the loss trains through them).
        """
        augmented = self.target_view == "augmented"
        target = self.target_encoder.train(augmented)
        projection = self.target_projection.train(augmented)
        batch = anchor
        if augmented and x is not None:  # with the embeddings-stage augmentations of the target branch
            batch = self.embed(model or target, anchor, "target", words=x)
        shared = augmented and model is not None and self.cfg.target_embeddings == "shared"
        with shared_embeddings(target, model if shared else None):
            if self.cfg.key_gradient == "official":
                return distributed.gather_with_grad(
                    projection(encode_bucketed(target, batch, self.cfg.length_buckets))
                )
            with torch.no_grad():
                k = projection(encode_bucketed(target, batch, self.cfg.length_buckets))
        return distributed.gather(k)

    def make_views(self, rows: list[tuple[str, ...]], row_ids: np.ndarray, rng: np.random.Generator) -> Views:
        """The online branch's tokens, and the target's own where a text- or tokens-stage augmentation targets it.

        Official ``mocose.py:393-402``: the nlpaug augmentations rewrite the target branch's input only; the
        target then encodes its own tokens (through the online embedding layer, as ever). Without one, the
        target reads the online branch's word embeddings (after FGSM): ``views.positive`` is None.
        """
        texts = [r[0] for r in rows]
        needs_offsets = any(a.stage == "tokens" and a.needs_offsets for a in self.augmentations)
        tokens = tokenize(self.tokenizer, texts, self.cfg.max_length, offsets=needs_offsets)
        online = self.view(texts, "online", row_ids, rng, tokens)
        own = any(a.stage in ("text", "tokens") and a.targets("target") for a in self.augmentations)
        return Views(online, self.view(texts, "target", row_ids, rng, tokens) if own else None, None, None)

    def contrastive_loss(self, model: ContrastiveEncoder, views: Views) -> torch.Tensor:
        """Eq. (3) with the FGSM view of eq. (1) on the online branch (and on the augmented target view).

        The embeddings-stage augmentations (``--augment token-cutoff`` ...) act on each branch's input
        embeddings after the FGSM step, drawn afresh for each branch, as the official embedding layer does on
        each of its calls; the FGSM gradient is that of the unaugmented views. A target with tokens of its own
        (a text- or tokens-stage augmentation) is not attacked: the gradient is the online view's, of other
        tokens (the official code adds it position by position all the same; at 5e-9 it is inert either way).
        """
        anchor, own = views.anchor, views.positive
        negatives = self.negatives()
        rest = {k: v for k, v in anchor.items() if k != "input_ids"}
        words = model.backbone.get_input_embeddings()
        x = words(anchor["input_ids"])  # (B, T, H)

        def target_keys(attacked: torch.Tensor) -> torch.Tensor:
            """The keys: of the online view (after FGSM), or of the target's own tokens, never attacked."""
            if own is None:
                return self.keys(anchor, attacked, model)
            return self.keys(own, words(own["input_ids"]), model)

        keys = None
        if self.cfg.fgsm_epsilon > 0:
            keys = target_keys(x.detach())
            probe = x.detach().requires_grad_(True)
            q = distributed.gather_with_grad(self.online(model, {**rest, "inputs_embeds": probe}))
            (grad,) = torch.autograd.grad(self.criterion(q, keys.detach(), negatives), probe)
            x = fgsm(x, grad, self.cfg.fgsm_epsilon)
            if self.target_view == "augmented" or self.cfg.key_gradient == "official":
                keys = None  # both views are attacked (Alg. 1 line 3); official keys keep their graph
        if keys is None:
            keys = target_keys(x)
        q = distributed.gather_with_grad(self.online(model, self.embed(model, anchor, "online", words=x)))
        self._keys = keys.detach()
        return self.criterion(q, keys, negatives)

    def loss(
        self, model: ContrastiveEncoder, views: Views
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor | float]]:
        """The base loss, with the step's eta and the number of queued negatives in the log."""
        loss, parts = super().loss(model, views)
        return loss, {**parts, **self.host_parts()}

    def host_parts(self) -> dict[str, float]:
        """The log parts known on the host: the step's eta and how many queued keys join its loss."""
        held = len(self.queue) if self.start_count is None else len(self.start_items)
        used = negatives_used(self.cfg, held, self.start_count, self.slices)
        return {"ema_decay": self.decay(self.updates + 1), "negatives": float(used)}

    @classmethod
    def schedule(cls, step: int, config: Mapping[str, Any], rows: int) -> dict[str, float | int]:
        """The base schedule, eta (:meth:`decay`) and the negatives of the queue after ``step - 1`` pushes."""
        cfg, k = SimpleNamespace(**config), config["queue_size"]
        total = run_steps(cfg.max_steps, cfg.epochs, rows, cfg.batch_size)
        pushed = rows_before(step - 1, rows, cfg.batch_size)  # the keys of every earlier step
        first = cfg.queue_start_size if cfg.queue_start in ("random", "official") else 0
        count = first + pushed if cfg.queue_start == "official" and k > 0 and first + pushed <= k else None
        held = k + pushed if count is not None else min(max(k, 0), first + pushed)
        slices = parse_slices(cfg.queue_slice, k) if cfg.queue_slice else None
        used = negatives_used(cfg, held, count, slices)
        eta = config_decay(cfg, step, total)
        return {**super().schedule(step, config, rows), "ema_decay": eta, "negatives": float(used)}

    @torch.no_grad()
    def after_step(self, model: ContrastiveEncoder, views: Views) -> None:
        """Eq. (2) on the target branch, then enqueue the step's keys (FIFO, K at most).

        In the static form eta is the device tensor :meth:`static_step_begin` filled, and the count of
        updates moves on in :meth:`static_step_end`.
        """
        if self.eta is None:
            self.updates += 1
            eta: float | torch.Tensor = self.decay(self.updates)
        else:
            eta = self.eta
        ema_update(self.target_encoder, model, eta)
        ema_update(self.target_projection, self.projection, eta)
        if self._keys is not None:
            self.push(self._keys)
            self._keys = None

    def push(self, keys: torch.Tensor) -> None:
        """Enqueue the step's keys; in the official start, into its buffer until the counter passes K.

        ``dequeue_and_enqueue`` (``mocose.py``): the counter grows by the batch each push and the buffer is cut
        to the newest K only once the counter exceeds K; from there on a FIFO of K.
        """
        if self.start_count is None:
            self.queue.push(keys)
            return
        self.start_items = torch.cat([self.start_items, keys.detach()])
        self.start_count += len(keys)
        if self.start_count > self.cfg.queue_size:
            self.queue.push(self.start_items[-self.cfg.queue_size :])
            self.start_items, self.start_count = None, None

    def frozen_modules(self) -> list[ContrastiveEncoder]:
        """The target encoder."""
        return [self.target_encoder]

    def static_ready(self) -> bool:
        """Static once the queue is full (K_start random keys and each step's keys fill it)."""
        return self.queue.size <= 0 or self.queue.full

    def make_static(self) -> None:
        """The ring queue, and eta as a device tensor filled before each step."""
        if self.queue.size > 0:
            self.queue.make_static()
        if self.eta is None:
            device = next(self.target_encoder.parameters()).device  # the projection may have no layer
            self.eta = torch.zeros((), dtype=torch.float32, device=device)

    def static_step_begin(self) -> dict[str, float]:
        """Fill the device eta of the coming step; return its log parts (before the update count moves on)."""
        parts = self.host_parts()
        self.eta.fill_(self.decay(self.updates + 1))
        return parts

    def static_step_end(self) -> None:
        """One more EMA update done."""
        self.updates += 1

    def extra_state(self) -> dict:
        """The queue and the number of EMA updates (the targets are submodules, in ``state_dict``)."""
        start = (
            None if self.start_count is None else {"count": self.start_count, "items": self.start_items.cpu()}
        )
        return {"queue": self.queue.state_dict(), "updates": self.updates, "start": start}

    def load_extra_state(self, state: dict, device: torch.device | str) -> None:
        """Restore :meth:`extra_state`."""
        self.queue.load_state_dict(state["queue"], device)
        start = state.get("start")  # absent from checkpoints before the official queue start
        self.start_count = None if start is None else int(start["count"])
        self.start_items = None if start is None else start["items"].to(device)
        self.updates = int(state["updates"])
