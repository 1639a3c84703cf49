"""The base of every training method (:class:`Method`) and :func:`build_method`.

A method is one module under ``stsbench/train/methods/`` (its class: views, loss, momentum parts, queue, the
static form graph capture replays) and its options module beside it (``<name>_options.py``: its option groups,
defaults and :class:`~stsbench.train.config.options.MethodSpec`, without torch, so that configs are read and
checked without importing it), named in the method registry by one line
(:data:`~stsbench.train.config.options.METHODS`); another package adds one by an entry point.

With several processes (:mod:`stsbench.train.distributed`) every loss is the loss of the global batch: the
embeddings of all processes are gathered (the local slice keeps its gradient) and queues hold the keys of
every process, so each process holds the same queue.

The views a method makes (:class:`Views`) and the noise it may put on the training embeddings are here too:
the report's Gaussian dropout and plain additive Gaussian noise (:class:`GaussianDropout`). Hristov,
McLaughlin, Healy, "Enhanced Sentence Embeddings with SimCSE" (Stanford CS224N report, seed 001), Sec. 2.2 and
4.2: "instead of setting certain activations to zero with a given probability, it assigns these activations to
a Gaussian random variable with a mean of 0 and a chosen standard deviation"; p = 0.1, mean 0, std 0.1, on
both views and on the in-batch negatives, in training only, removed afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from torch import nn

from stsbench.errors import StsbenchError
from stsbench.train import distributed
from stsbench.train.augment.base import Augmentation, build_augmentations
from stsbench.train.config.options import METHODS
from stsbench.train.data import mlm_mask, pad, tokenize
from stsbench.train.losses import InfoNCE, MLMLoss
from stsbench.train.model import ContrastiveEncoder, bert_init_
from stsbench.train.schedule import batches_per_epoch, epoch_of, linear_lr, run_steps

if TYPE_CHECKING:  # the config is built from every method's options: a method module must not need it
    from stsbench.train.config.options import TrainConfig
    from stsbench.train.config.resolve import ResolvedConfig


# -- views ---------------------------------------------------------------------------------------------------


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


# -- noise on the training embeddings --------------------------------------------------------------------


class GaussianDropout(nn.Module):
    """The report's layer: each entry is, with probability ``p``, replaced by a draw from N(0, ``std``^2).

        y_i = x_i            with probability 1 - p
        y_i = e_i ~ N(0, s^2) with probability p

    ``p=None``: what stsbench called Gaussian dropout before, x + N(0, ``std``^2) on every entry. The identity
    in eval mode. The replaced entries carry no gradient to ``x`` (like dropped ones).
    """

    def __init__(self, p: float | None = 0.1, std: float = 0.1) -> None:
        super().__init__()
        if not (p is None or 0.0 <= p <= 1.0) or std < 0:
            raise ValueError("GaussianDropout needs 0 <= p <= 1 and std >= 0")
        self.p = None if p is None else float(p)
        self.std = float(std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if not self.training or self.p == 0.0 or (self.p is None and self.std == 0.0):
            return x
        if self.p is None:
            return x + self.std * torch.randn_like(x)
        replace = torch.rand_like(x) < self.p
        return torch.where(replace, self.std * torch.randn_like(x), x)

    def extra_repr(self) -> str:
        return f"p={self.p}, std={self.std}"


AdditiveGaussianNoise = partial(GaussianDropout, None)  # x + N(0, std^2) on every entry, training only


# -- base ----------------------------------------------------------------------------------------------------


def truncate(ids: list[int], length: int | None, specials: set[int]) -> list[int]:
    """Cut a tokenized sentence to ``length`` as the tokenizer does: its closing special token kept."""
    if length is None or len(ids) <= length:
        return ids
    return ids[: length - 1] + ids[-1:] if ids[-1] in specials else ids[:length]


def build_method(
    cfg: ResolvedConfig, tokenizer, model: ContrastiveEncoder, generator: torch.Generator | None = None
) -> Method:
    """Build the method ``cfg`` names (its spec's class; sentence pairs: its ``supervised`` one) for ``model``."""
    cls = METHODS[cfg.method].method_class(cfg.supervised)
    if not (isinstance(cls, type) and issubclass(cls, Method)):
        raise StsbenchError(f"method {cfg.method!r}: its class {cls!r} is not a subclass of Method")
    method = cls.build(cfg, tokenizer, model, generator)
    # e.g. the MLM augmentations' frozen masked LM (refused without its head)
    for aug in method.augmentations:
        aug.prepare(model)
    return method


def method_schedule(step: int, config: Mapping[str, Any], rows: int) -> dict[str, float | int]:
    """:meth:`Method.schedule` of the class that ``config`` (a start record's) trains."""
    return METHODS[config["method"]].method_class(bool(config.get("supervised"))).schedule(step, config, rows)


def join_views(views: list[Tokens], pad_id: int) -> Tokens:
    """Stack padded views (B_i, T_i) into one batch (sum B_i, max T_i), padding the shorter ones."""
    width = max(v["input_ids"].shape[1] for v in views)

    def widen(t: torch.Tensor, fill: int) -> torch.Tensor:
        return torch.nn.functional.pad(t, (0, width - t.shape[1]), value=fill)

    return {k: torch.cat([widen(v[k], pad_id if k == "input_ids" else 0) for v in views]) for k in views[0]}


# SimCSE's MLM head by backbone type (official simcse/models.py:284, 343), and where a pretraining checkpoint
# holds it: BERT's under cls.predictions (train.py:371-373 loads it by hand), RoBERTa's under lm_head (loaded by
# name: RobertaForCL's attribute is the checkpoint's); other types take BERT's head, as stsbench did before
LM_HEADS = {
    "bert": ("transformers.models.bert.modeling_bert:BertLMPredictionHead", "cls.predictions"),
    "roberta": ("transformers.models.roberta.modeling_roberta:RobertaLMHead", "lm_head"),
}


def lm_head_kind(hidden_config) -> str:
    """``roberta`` for a RoBERTa backbone, else ``bert``."""
    return "roberta" if getattr(hidden_config, "model_type", "") == "roberta" else "bert"


def make_lm_head(hidden_config) -> nn.Module:
    """A new MLM head of the backbone's kind (BERT's, or RoBERTa's for a RoBERTa)."""
    from stsbench.registry import load_target

    return load_target(LM_HEADS[lm_head_kind(hidden_config)][0])(hidden_config)


def load_pretrained_lm_head(lm_head: nn.Module, backbone_path, kind: str = "bert") -> bool:
    """Load the backbone's pretrained MLM head into ``lm_head``, as official SimCSE does (:data:`LM_HEADS`).

    Returns False (and leaves ``lm_head`` as it is) when the checkpoint has no MLM head weights.
    """
    from transformers import AutoModelForMaskedLM

    where = LM_HEADS[kind][1]
    try:
        pretrained, info = AutoModelForMaskedLM.from_pretrained(backbone_path, output_loading_info=True)
        head = pretrained.get_submodule(where)
    except Exception:  # no masked-LM class for this checkpoint, or no head of this kind in it
        return False
    if any(k.startswith(where) for k in info["missing_keys"]):
        return False
    lm_head.load_state_dict(head.state_dict())
    return True


class Method(nn.Module):
    """Base of every method: the sentence twice (dropout makes the views) and InfoNCE; subclasses change either.

    A method is built by :meth:`build` (what :func:`build_method` calls for the config's ``method``); the
    loop asks it for everything that differs between methods and never tests which one it is:

    - views: :meth:`make_views` (tokenize, the augmentations, pad): the method's own
      (:meth:`own_augmentations`, ESimCSE's repetition) and the run's (``--augment``, the registry of
      :mod:`stsbench.train.config.options`), text and tokens stages in :meth:`view`, embeddings stage in
      :meth:`view_inputs`;
    - loss: :meth:`loss` (the contrastive part: :meth:`contrastive_loss`);
    - momentum parts and queues: :meth:`attach` (an EMA copy, :meth:`~stsbench.train.model.ContrastiveEncoder.momentum_copy`),
      :meth:`before_step`, :meth:`after_step` (:func:`~stsbench.train.momentum.ema_update`,
      :class:`~stsbench.train.momentum.EmbeddingQueue`), :meth:`traceable_distance`, :meth:`frozen_modules`;
    - graph capture (``--cuda-graph``): the static form of its state (:meth:`static_ready`,
      :meth:`make_static`, :meth:`static_step_begin`, :meth:`static_step_end`) and the longest a view it
      makes can be (:meth:`pad`'s ``static_length``);
    - checkpoints: :meth:`extra_state`, :meth:`load_extra_state`, :attr:`state_per_process`.
    """

    name = "method"  # a subclass's registry name (run metadata)
    augmentable_views: tuple[str, ...] = ("anchor", "positive", "both")  # --augment's (its spec's, at most)
    state_per_process = False  # True where each process's extra_state differs (checkpoints keep them all)

    def __init__(self, cfg: TrainConfig, tokenizer, hidden_config) -> None:
        super().__init__()
        self.cfg = cfg
        self.tokenizer = tokenizer
        self.criterion: nn.Module = InfoNCE(cfg.temperature)
        self.mlm_loss = MLMLoss(make_lm_head(hidden_config)) if cfg.mlm_weight > 0 else None
        # official SimCSE (train.py:484-485): every view masked; "anchor": only the first (stsbench before)
        self.noise: nn.Module | None = None
        if cfg.gaussian_dropout_p > 0:
            self.noise = GaussianDropout(cfg.gaussian_dropout_p, cfg.gaussian_dropout_std)
        elif cfg.gaussian_noise_std > 0:
            self.noise = AdditiveGaussianNoise(cfg.gaussian_noise_std)
        self.augmentations = [*self.own_augmentations(), *build_augmentations(cfg, tokenizer)]
        self.fixed_mask = bool(getattr(cfg, "fixed_dropout_mask", False))
        if self.fixed_mask and (self.augmentations or not self.augmentable_views):
            made = ", ".join(a.name for a in self.augmentations) or "its rows' columns"
            raise StsbenchError(
                f"--fixed-dropout-mask: one mask for both views needs them to be the same tokens, and {self.name}'s "
                f"differ ({made}); drop --fixed-dropout-mask, or the augmentation (ESimCSE: --no-repetition)"
            )
        refused = [a for a in self.augmentations if a.views not in self.augmentable_views]
        if refused:  # the config checked the method's spec; here a class that takes fewer (sentence pairs)
            can = ", ".join(self.augmentable_views) or "no view"
            raise StsbenchError(
                f"--augment {refused[0].name}: it augments the {refused[0].views} view(s), and {self.name} "
                f"takes augmentations of {can}; drop it, or train a method that takes it"
            )

    @classmethod
    def build(
        cls, cfg: TrainConfig, tokenizer, model: ContrastiveEncoder, generator: torch.Generator | None = None
    ) -> Method:
        """The method for ``cfg``: its state attached to ``model``, its new layers initialised, on ``model``'s device.

        ``generator`` draws every initialisation, in this order: :meth:`attach`, then :meth:`init_new_layers`.
        """
        config = model.backbone.config
        method = cls(cfg, tokenizer, config)
        method.attach(model, generator)
        method.init_new_layers(generator, config.initializer_range)
        if method.mlm_loss is not None and cfg.mlm_head_init == "pretrained":
            method.mlm_head_loaded = load_pretrained_lm_head(
                method.mlm_loss.lm_head, model.backbone.name_or_path, lm_head_kind(config)
            )
        return method.to(next(model.parameters()).device)

    def attach(self, model: ContrastiveEncoder, generator: torch.Generator | None = None) -> None:
        """Make the state built from the online encoder (a momentum encoder), before the new layers' initialisation."""

    def init_new_layers(self, generator: torch.Generator | None, std: float) -> None:
        """BERT-initialise the layers the method adds (the MLM head)."""
        if self.mlm_loss is not None:
            bert_init_(self.mlm_loss, std, generator)

    # -- augmentation ------------------------------------------------------------------------------------
    def pad(self, seqs: list[list[int]], static_length: int | None = None) -> Tokens:
        """Pad a view: to its longest row by default, or to a fixed length with ``--pad-to-max-length``.

        The longest row is SimCSE's collator, and the default: fewer padded tokens a step. A fixed length
        with ``--pad-to-max-length``: one shape every step, which ``--compile`` and CUDA graphs need. That
        length is ``max_length``, or ``static_length`` for a view that can be longer (a tokens-stage
        augmentation's :meth:`~stsbench.train.augment.base.TokenAugmentation.longest`).
        """
        fixed = (static_length or self.cfg.max_length) if self.cfg.pad_to_max_length else None
        return pad(seqs, self.tokenizer.pad_token_id, fixed)

    def own_augmentations(self) -> list[Augmentation]:
        """The augmentations the method itself makes its views with (ESimCSE: repetition), before ``--augment``'s."""
        return []

    def augments(self, view: str) -> bool:
        """Whether any augmentation of the run targets ``view`` (``anchor`` or ``positive``)."""
        return any(a.targets(view) for a in self.augmentations)

    def view(
        self, texts: list[str], view: str, row_ids: np.ndarray, rng: np.random.Generator, tokens: dict | None
    ) -> Tokens:
        """``view``'s padded tokens: the text and tokens stages of the augmentations that target it, in order.

        Tokens-stage augmentations that act on the whole sentence (``before_truncation``: crop, word deletion) run
        first, on the sentence tokenized without a length limit, which is then cut to ``--max-length`` as the
        tokenizer cuts (its closing special token kept); the others run after, in their order. ``tokens``: the
        batch's tokenization, reused where no augmentation needs another.
        """
        augs = [a for a in self.augmentations if a.targets(view)]
        for aug in augs:
            if aug.stage == "text":
                texts = aug.texts(texts, rng)
        on_tokens = sorted((a for a in augs if a.stage == "tokens"), key=lambda a: not a.before_truncation)
        whole = any(a.before_truncation for a in on_tokens)
        if tokens is None or whole or any(a.stage == "text" for a in augs):
            offsets = any(a.needs_offsets for a in on_tokens)
            tokens = tokenize(self.tokenizer, texts, None if whole else self.cfg.max_length, offsets=offsets)
        if not on_tokens:
            return self.pad(tokens["input_ids"])
        where = tokens.get("offset_mapping") or [None] * len(texts)
        marks = set(self.tokenizer.all_special_ids)
        seqs, specials, cut = list(tokens["input_ids"]), list(tokens["special_tokens_mask"]), not whole
        rows = [int(r) for r in row_ids]
        for aug in on_tokens:  # on the whole batch; a later one sees the ids an earlier one made (no offsets)
            if not cut and not aug.before_truncation:
                seqs, cut = [truncate(ids, self.cfg.max_length, marks) for ids in seqs], True
                specials = [[int(t in marks) for t in ids] for ids in seqs]
            seqs, where = aug.batch(seqs, specials, where, rng, rows), [None] * len(seqs)
            specials = [[int(t in marks) for t in ids] for ids in seqs]
        out = seqs if cut else [truncate(ids, self.cfg.max_length, marks) for ids in seqs]
        longest = self.cfg.max_length
        for aug in on_tokens:
            longest = aug.longest(longest)
        return self.pad(out, longest)

    def make_views(self, rows: list[tuple[str, ...]], row_ids: np.ndarray, rng: np.random.Generator) -> Views:
        """Tokenize the batch; the positive view is the anchor itself (dropout does the rest) unless augmented."""
        texts = [r[0] for r in rows]
        needs_offsets = any(a.stage == "tokens" and a.needs_offsets for a in self.augmentations)
        tokens = tokenize(self.tokenizer, texts, self.cfg.max_length, offsets=needs_offsets)
        anchor = self.view(texts, "anchor", row_ids, rng, tokens)
        if not self.augments("positive"):
            return Views(anchor, None, None, self._mlm(anchor, rng))
        positive = self.view(texts, "positive", row_ids, rng, tokens)
        return Views(anchor, positive, None, self._mlm(anchor, rng, [positive]))

    def _mlm(
        self, anchor: Tokens, rng: np.random.Generator, others: list[Tokens] | None = None
    ) -> tuple[Tokens, torch.Tensor] | None:
        """The masked input and its labels: every view (``others``; unsup SimCSE: the anchor twice) or the anchor."""
        if self.mlm_loss is None:
            return None
        if self.cfg.mlm_views == "all":
            anchor = join_views([anchor, *(others or [anchor])], self.tokenizer.pad_token_id)
        specials = torch.tensor(self.tokenizer.all_special_ids)
        special = (anchor["attention_mask"] == 0) | torch.isin(anchor["input_ids"], specials)
        ids, labels = mlm_mask(anchor["input_ids"], special, self.tokenizer, self.cfg.mlm_probability, rng)
        return {**anchor, "input_ids": ids}, labels

    # -- loss ------------------------------------------------------------------------------------------
    def pooled(self, model: ContrastiveEncoder, views: list[Tokens]) -> list[torch.Tensor]:
        """Training embeddings of ``views``, each (B_global, H): Gaussian dropout or noise if asked, then gathered."""
        out = encode_views(model, views, self.cfg.length_buckets)
        if self.noise is not None:  # the Gaussian-dropout variant: on every view's embeddings, training only
            out = [self.noise(h) for h in out]
        return [distributed.gather_with_grad(h) for h in out]

    def view_inputs(self, model: ContrastiveEncoder, views: Views) -> list[Tokens]:
        """The model inputs of (anchor, positive): the embeddings-stage augmentations applied to those they target.

        With one, both views go in as ``inputs_embeds`` (the word embeddings of their ids: the same numbers as
        the ids), so that views of one shape still join in one forward pass.
        """
        anchor = views.anchor
        positive = views.positive if views.positive is not None else views.anchor
        if not any(a.stage == "embeddings" for a in self.augmentations):
            return [anchor, positive]
        out = [self.embed(model, anchor, "anchor"), self.embed(model, positive, "positive")]
        if any("position_ids" in b for b in out):  # one view's shuffled positions: the other's in order
            for b in out:
                if "position_ids" not in b:
                    rows, width = b["attention_mask"].shape
                    b["position_ids"] = model.position_ids(rows, width, b["attention_mask"].device)
        return out

    def embed(
        self, model: ContrastiveEncoder, tokens: Tokens, view: str, words: torch.Tensor | None = None
    ) -> Tokens:
        """``view``'s model inputs as ``inputs_embeds``, with the embeddings-stage augmentations that target it.

        ``words``: its word embeddings where the method made them (MoCoSE: after FGSM); else those of its ids.
        """
        ids = tokens["input_ids"]
        if words is None:
            words = model.backbone.get_input_embeddings()(ids)
        batch = {**{k: v for k, v in tokens.items() if k != "input_ids"}, "inputs_embeds": words}
        augs = [a for a in self.augmentations if a.stage == "embeddings" and a.targets(view)]
        if augs:
            marks = torch.tensor(self.tokenizer.all_special_ids, device=ids.device)
            special = (tokens["attention_mask"] == 0) | torch.isin(ids, marks)
            for aug in augs:
                batch = aug.embeddings(model, batch, special)
        return batch

    def contrastive_loss(self, model: ContrastiveEncoder, views: Views) -> torch.Tensor:
        """Eq. (2) on (h, h+) = two dropout-noised encodings of the batch (one, used twice: ``fixed_dropout_mask``)."""
        return self.criterion(*self.pair(model, views))

    def pair(self, model: ContrastiveEncoder, views: Views) -> list[torch.Tensor]:
        """(h, h+): the two views' training embeddings; with ``fixed_dropout_mask`` the one encoding, twice.

        Encoding once and using the output twice is one dropout mask for both views, exactly (SimCSE Table 4's
        "Fixed 0.1"), at half the cost.
        """
        if self.fixed_mask:
            (h,) = self.pooled(model, self.view_inputs(model, views)[:1])
            return [h, h]
        return self.pooled(model, self.view_inputs(model, views))

    def loss(
        self, model: ContrastiveEncoder, views: Views
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor | float]]:
        """Return what to back-propagate for one batch, and the parts for the log.

        The parts are detached tensors on the device (no host sync in the step; the loop reads them once a
        log interval). ``parts["loss"]`` is the loss itself in float64: contrastive + w * mlm, the same
        arithmetic as on Python floats, so the logged figure is what it was when the parts were synced each
        step. The returned tensor scales the (global) contrastive loss by the number of processes under
        ``ddp_gradient: global`` (:func:`stsbench.train.distributed.loss_scale`, 1 for one process).
        """
        contrastive = self.contrastive_loss(model, views)
        parts: dict[str, torch.Tensor | float] = {"contrastive": contrastive.detach()}
        loss = contrastive * distributed.loss_scale(self.cfg.ddp_gradient)
        logged = contrastive.detach().double()
        if self.mlm_loss is not None and views.mlm is not None:
            masked, labels = views.mlm
            mlm = self.mlm_loss(model.encode_tokens(masked).last_hidden_state, labels)
            parts["mlm"] = mlm.detach()
            loss = loss + self.cfg.mlm_weight * mlm
            logged = logged + self.cfg.mlm_weight * mlm.detach().double()
        return loss, {"loss": logged, **parts}

    # -- state ----------------------------------------------------------------------------------------
    @classmethod
    def schedule(cls, step: int, config: Mapping[str, Any], rows: int) -> dict[str, float | int]:
        """A train record's values at 1-based ``step`` that need no model: lr, epoch and the method's own.

        ``config`` and ``rows``: the start record's ``config`` and ``train_rows``. One process, no length
        buckets (whose epoch length is the tokenizer's); the same functions as the loop, so the same floats.
        """
        total = run_steps(config["max_steps"], config["epochs"], rows, config["batch_size"])
        lr = linear_lr(step - 1, total, peak=config["lr"], warmup_steps=config["warmup_steps"])
        return {"lr": lr, "epoch": epoch_of(step, batches_per_epoch(rows, config["batch_size"]))}

    def start(self, total_steps: int) -> None:
        """Run once before training with the run's number of steps (schedules that span the run)."""

    def traceable_distance(self, global_batch: int) -> float | dict[str, float] | None:
        """MoCoSE eq. (4) for a method with an EMA encoder and a queue; None without them."""
        return None

    def on_epoch_start(self, epoch: int) -> None:
        """Run before the first batch of each epoch."""

    def before_step(self, model: ContrastiveEncoder, views: Views) -> None:
        """Run after the backward pass, before the optimizer step: the weights are still those the loss saw."""

    def after_step(self, model: ContrastiveEncoder, views: Views) -> None:
        """Run after each optimizer step (EMA and queue updates live here)."""

    # -- static state (--cuda-graph: a step replayed from a graph runs no Python) ------------------
    def static_ready(self) -> bool:
        """Whether the state can take its static form now (a queue must be full first)."""
        return True

    def make_static(self) -> None:
        """Hold the state in fixed tensors updated in place, so that one captured step serves every step.

        From here on :meth:`after_step` writes into those tensors and reads what changes step to step
        from device tensors that :meth:`static_step_begin` fills on the host, outside the graph.
        """

    def static_step_begin(self) -> dict[str, float]:
        """Before a static step (replayed or eager): fill its device inputs; return its host-known log parts."""
        return {}

    def static_step_end(self) -> None:
        """After a static step: the host-side bookkeeping that :meth:`after_step` does in the growing form."""

    def extra_state(self) -> dict:
        """State that is not a parameter or buffer (the queue), for checkpoints."""
        return {}

    def load_extra_state(self, state: dict, device: torch.device | str) -> None:
        """Restore :meth:`extra_state`."""

    def frozen_modules(self) -> list[ContrastiveEncoder]:
        """The encoders the method runs without training them (a momentum encoder): ``--compile`` compiles them too."""
        return []
