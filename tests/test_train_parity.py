"""Four steps of stsbench under each ``*-official`` packaged config (stsbench/configs/) against the official code's step, re-written.

The reference (``tests/official_reference.py``) is plain torch written from the official sources (SimCSE
``simcse/models.py`` + ``train.py``, ESimCSE ``models.py`` + ``trainers.py``, MoCoSE ``mocose.py``, the HF
Trainer's AdamW of transformers 4.2.1): nothing of ``stsbench.train`` runs in it. Both start from the same
weights and see the same batches; sizes tiny, fp32, dropout 0. Losses, weights, momentum/target encoders
and queue must agree within 1e-5 relative (max |a - b| / max |b| per tensor). With ``--optimizer
torch-adamw`` or ESimCSE's ``--momentum-update after-step`` they do not: those tests check the parity
test can tell.
"""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import SENTENCES, build_tiny_bert
from official_reference import (
    ESimCSEReference,
    MoCoSEReference,
    TrainerAdamW,
    linear_lr,
    mask_tokens,
    simcse_loss,
    trainer_groups,
    trainer_update,
)
from torch import nn

from stsbench.train.config import finalize, make_config
from stsbench.train.loop import build
from stsbench.train.step import train_step

pytestmark = pytest.mark.usefixtures("one_thread")

STEPS, BATCH, TOL = 4, 8, 1e-5


@pytest.fixture(scope="module")
def bert_with_lm_head(tmp_path_factory) -> Path:
    """A tiny BERT with its pretraining heads (the LM head SimCSE's MLM loads), dropout 0, saved with a tokenizer."""
    from transformers import AutoTokenizer, BertForPreTraining

    from stsbench.encoders.resolve import embedded_model_path

    # at BERT's init range 0.02 the sentences' vectors nearly coincide and the gradients are float noise
    config = build_tiny_bert(dropout=0.0, max_positions=64, init_range=0.2).config
    torch.manual_seed(0)
    path = tmp_path_factory.mktemp("parity") / "tiny-bert-pretraining"
    BertForPreTraining(config).save_pretrained(path)
    AutoTokenizer.from_pretrained(embedded_model_path()).save_pretrained(path)
    return path


def official(method: str, bert: Path, **overrides):
    """stsbench built from the packaged ``<method>-bert-base-official`` config, made tiny, fp32, dropout 0."""
    cli = {
        "model": str(bert),
        "train_file": "unused.txt",
        "output": "unused",
        "batch_size": BATCH,
        "max_length": 16,
        "precision": "fp32",
        "dropout": 0.0,
        "length_buckets": 1,
        **overrides,
    }
    cfg = finalize(make_config(cli, f"{method}-bert-base-official"), False)
    model, tokenizer, method_, optimizer = build(cfg, bert, "cpu")
    method_.start(STEPS)
    rows = [(SENTENCES[i % len(SENTENCES)],) for i in range(STEPS * BATCH)]
    rng = np.random.default_rng(0)
    views = [
        method_.make_views(rows[s * BATCH : (s + 1) * BATCH], np.arange(s * BATCH, (s + 1) * BATCH), rng)
        for s in range(STEPS)
    ]
    return cfg, model, method_, optimizer, views


def run_stsbench(cfg, model, method, optimizer, views) -> list[float]:
    losses = []
    for s, v in enumerate(views):
        lr = linear_lr(s, STEPS, cfg.lr)
        loss, _ = train_step(model, method, optimizer, v, lr=lr, max_grad_norm=cfg.max_grad_norm)
        losses.append(float(loss))
    return losses


def rel(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| / max |b|."""
    return float((a.detach() - b.detach()).abs().max() / b.detach().abs().max().clamp_min(1e-30))


def worst(pairs: dict[str, tuple[nn.Module | torch.Tensor, nn.Module | torch.Tensor]]) -> dict[str, float]:
    """Each pair's relative difference: a tensor's by :func:`rel`; a module's over all its parameters at once.

    A module's: max |a - b| over its parameters (matched by name) / max |b| over them. Not tensor by tensor:
    a tensor whose gradient is zero in exact arithmetic (attention key biases: softmax ignores a shift)
    gets rounding noise as gradient, which Adam turns into steps of about lr in either code, so its own
    scale says nothing; against the module's scale those steps are within float noise.
    """
    out = {}
    for label, (ours, theirs) in pairs.items():
        if isinstance(ours, torch.Tensor):
            out[label] = rel(ours, theirs)
            continue
        mine, ref = dict(ours.named_parameters()), dict(theirs.named_parameters())
        assert mine.keys() == ref.keys(), label
        diff = max(float((mine[n] - ref[n]).detach().abs().max()) for n in mine)
        out[label] = diff / max(float(ref[n].detach().abs().max()) for n in mine)
    return out


def loss_errors(ours: list[float], theirs: list[float]) -> dict[str, float]:
    return {f"loss {i + 1}": abs(a - b) / abs(b) for i, (a, b) in enumerate(zip(ours, theirs, strict=True))}


def linear(source: nn.Linear) -> nn.Linear:
    fresh = nn.Linear(source.in_features, source.out_features)
    fresh.load_state_dict(source.state_dict())
    return fresh


def sequential(source: nn.Sequential, layers: list[nn.Module]) -> nn.Sequential:
    """A fresh head of ``layers`` with ``source``'s weights (same layout: dense, LayerNorm, dropout, ...)."""
    fresh = nn.Sequential(*layers)
    fresh.load_state_dict(source.state_dict())
    return fresh


# -- SimCSE --------------------------------------------------------------------------------------------
def simcse_errors(bert: Path, mlm: bool, **overrides) -> dict[str, float]:
    from transformers import BertForPreTraining
    from transformers.models.bert.modeling_bert import BertLMPredictionHead

    extra = {"mlm_weight": 0.1} if mlm else {}
    cfg, model, method, optimizer, views = official("simcse", bert, **extra, **overrides)
    ref_bert, ref_mlp = copy.deepcopy(model.backbone), linear(model.mlp.dense)
    lm_head, modules = None, [ref_bert, ref_mlp]
    if mlm:  # train.py: lm_head.load_state_dict(BertForPreTraining...cls.predictions.state_dict())
        pretrained = BertForPreTraining.from_pretrained(bert)
        lm_head = BertLMPredictionHead(pretrained.config)
        lm_head.load_state_dict(pretrained.cls.predictions.state_dict())
        modules.append(lm_head)
    ours = run_stsbench(cfg, model, method, optimizer, views)
    opt = TrainerAdamW(trainer_groups(modules, cfg.weight_decay), lr=cfg.lr)
    theirs = []
    for s, v in enumerate(views):
        loss = simcse_loss(
            ref_bert, ref_mlp, [v.anchor, v.anchor], cfg.temperature, lm_head, v.mlm, cfg.mlm_weight
        )
        trainer_update(opt, loss, linear_lr(s, STEPS, cfg.lr), cfg.max_grad_norm)
        theirs.append(loss.item())
    pairs = {"backbone": (model.backbone, ref_bert), "mlp": (model.mlp.dense, ref_mlp)}
    if mlm:
        pairs["lm head"] = (method.mlm_loss.lm_head, lm_head)
    return {**loss_errors(ours, theirs), **worst(pairs)}


@pytest.mark.parametrize("mlm", [False, True], ids=["plain", "mlm"])
def test_simcse_official_config_steps_as_the_official_code(bert_with_lm_head, mlm):
    errors = simcse_errors(bert_with_lm_head, mlm)
    assert max(errors.values()) < TOL, errors


def test_simcse_parity_fails_with_torch_adamw(bert_with_lm_head):
    errors = simcse_errors(bert_with_lm_head, False, optimizer="torch-adamw")
    assert max(errors.values()) > TOL, errors  # weights 2e-5 to 4e-5 apart, the losses still 1e-6


def test_simcse_mlm_masks_every_view_as_the_official_collator(bert_with_lm_head):
    # train.py mask_tokens on the flattened (bs * num_sent) batch: every view masked on its own, 15% of the
    # real tokens, 80% [MASK] / 10% random / 10% kept; stsbench's draws against the reference's, 5 sigma
    cfg, _, method, _, _ = official("simcse", bert_with_lm_head, mlm_weight=0.1, batch_size=400)
    rows = [(f"{SENTENCES[i % 12]} {SENTENCES[(i * 7) % 12]}",) for i in range(400)]
    views = method.make_views(rows, np.arange(400), np.random.default_rng(1))
    masked, labels = views.mlm
    tok = method.tokenizer
    assert len(masked["input_ids"]) == 2 * len(views.anchor["input_ids"])  # both views
    original = torch.cat([views.anchor["input_ids"]] * 2)
    assert not torch.equal(labels[:400], labels[400:])  # each view masked on its own
    special = (torch.cat([views.anchor["attention_mask"]] * 2) == 0) | torch.isin(
        original, torch.tensor(tok.all_special_ids)
    )
    ref_ids, ref_labels = mask_tokens(
        original, special, tok.mask_token_id, len(tok), 0.15, torch.Generator().manual_seed(0)
    )

    def shares(ids, labs):
        picked = labs != -100
        assert not (picked & special).any() and torch.equal(labs[picked], original[picked])
        n = int(picked.sum())
        return n, {
            "picked": n / int((~special).sum()),
            "mask": float((ids[picked] == tok.mask_token_id).float().mean()),
            "kept": float((ids[picked] == original[picked]).float().mean()),
        }

    (n, ours), (_, theirs) = shares(masked["input_ids"], labels), shares(ref_ids, ref_labels)
    real = int((~special).sum())
    for key, p in (("picked", 0.15), ("mask", 0.8), ("kept", 0.1)):
        count = real if key == "picked" else n
        sigma = (p * (1 - p) / count) ** 0.5
        assert abs(ours[key] - p) < 5 * sigma and abs(theirs[key] - p) < 5 * sigma, (key, ours, theirs)


# -- ESimCSE -------------------------------------------------------------------------------------------
def esimcse_errors(bert: Path, **overrides) -> dict[str, float]:
    cfg, model, method, optimizer, views = official("esimcse", bert, **overrides)
    ref = ESimCSEReference(
        copy.deepcopy(model.backbone),
        linear(model.mlp.dense),
        copy.deepcopy(method.momentum_encoder.backbone),
        momentum=cfg.momentum,
        neg_size=int(cfg.queue_multiple * cfg.batch_size),
        temp=cfg.temperature,
        lr=cfg.lr,
        weight_decay=cfg.weight_decay,
    )
    ours = run_stsbench(cfg, model, method, optimizer, views)
    theirs = [
        ref.step(v.anchor, v.positive, linear_lr(s, STEPS, cfg.lr), cfg.max_grad_norm)
        for s, v in enumerate(views)
    ]
    pairs = {
        "backbone": (model.backbone, ref.bert),
        "mlp": (model.mlp.dense, ref.mlp),
        "momentum encoder": (method.momentum_encoder.backbone, ref.momentum_bert),
        "queue": (method.queue.negatives(), ref.pre_z1),
    }
    return {**loss_errors(ours, theirs), **worst(pairs)}


def test_esimcse_official_config_steps_as_the_official_code(bert_with_lm_head):
    errors = esimcse_errors(bert_with_lm_head)
    assert max(errors.values()) < TOL, errors


@pytest.mark.parametrize(
    ("option", "value"), [("optimizer", "torch-adamw"), ("momentum_update", "after-step")]
)
def test_esimcse_parity_fails_with_either_non_official_value(bert_with_lm_head, option, value):
    errors = esimcse_errors(bert_with_lm_head, **{option: value})
    assert max(errors.values()) > TOL, errors  # torch-adamw: the weights; after-step: the queue (1e-4)


# -- MoCoSE --------------------------------------------------------------------------------------------
def mocose_errors(bert: Path, k: int = BATCH, k_start: int = BATCH // 2, **overrides) -> dict[str, float]:
    """``k`` = batch by default (the notebook's proportions, 256 = 256: the official queue trims from the first push)."""
    sizes = {"queue_size": k, "queue_start_size": k_start, "max_length": 16, "pad_to_max_length": True}
    cfg, model, method, optimizer, views = official("mocose", bert, **{**sizes, **overrides})
    h = model.backbone.config.hidden_size
    eps = model.backbone.config.layer_norm_eps
    if method.start_items is not None:  # queue_start official: its K random entries
        start = method.start_items.flip(0)  # newest first, as the official queue
    else:  # another start: its entries first, random ones after them up to the official K
        held = method.queue.negatives().flip(0)
        more = torch.randn(k - len(held), h, generator=torch.Generator().manual_seed(5))
        start = torch.cat([held, nn.functional.normalize(more, dim=1)])

    def dense_norm_drop():
        return [nn.Linear(h, h), nn.LayerNorm(h, eps=eps), nn.Dropout(0.0)]

    ref = MoCoSEReference(
        copy.deepcopy(model.backbone),
        linear(model.mlp.dense),
        sequential(method.projection, dense_norm_drop()),
        sequential(method.predictor, [*dense_norm_drop(), nn.Linear(h, h), nn.Tanh()]),
        start,
        k=k,
        k_start=k_start,
        decay=cfg.ema_decay_start,
        fgsm=cfg.fgsm_epsilon,
        temp=cfg.temperature,
        lr=cfg.lr,
        weight_decay=cfg.weight_decay,
    )
    ours = run_stsbench(cfg, model, method, optimizer, views)
    theirs = [ref.step(v.anchor, linear_lr(s, STEPS, cfg.lr), cfg.max_grad_norm) for s, v in enumerate(views)]
    ref.ema()  # what the official fifth forward reads; stsbench's target after step 4 is the one its fifth reads
    target = method.target_encoder
    pairs = {
        "online encoder": (model.backbone, ref.online_bert),
        "pooler": (model.mlp.dense, ref.pooler),
        "projection": (method.projection, ref.projection),
        "predictor": (method.predictor, ref.prediction),
        "target encoder": (target.backbone.encoder, ref.target_bert.encoder),
        "target pooler": (target.mlp.dense, ref.target_pooler),
        "target projection": (method.target_projection, ref.target_projection),
        # the official queue is newest first by batch, each batch in its order; stsbench's oldest first
        "queue": (torch.cat(method.queue.negatives().split(BATCH)[::-1]), ref.queue),
    }
    return {**loss_errors(ours, theirs), **worst(pairs)}


def test_mocose_official_config_steps_as_the_official_code(bert_with_lm_head):
    errors = mocose_errors(bert_with_lm_head)
    assert max(errors.values()) < TOL, errors


def test_mocose_parity_fails_with_torch_adamw(bert_with_lm_head):
    errors = mocose_errors(bert_with_lm_head, optimizer="torch-adamw")
    assert max(errors.values()) > TOL, errors


def test_mocose_official_queue_start_reads_more_than_k_as_the_official_code(bert_with_lm_head):
    # K 16, K_start 4, batch 8: the official loss reads 8 random negatives at step 1, 24 at step 2, then 16
    errors = mocose_errors(bert_with_lm_head, k=2 * BATCH, k_start=BATCH // 2)
    assert max(errors.values()) < TOL, errors


def test_mocose_parity_fails_with_a_fifo_queue_start(bert_with_lm_head):
    # 8 random entries then a FIFO of 16: step 1 alike, 16 negatives instead of 24 at step 2
    errors = mocose_errors(
        bert_with_lm_head, k=2 * BATCH, k_start=BATCH // 2, queue_start="random", queue_start_size=BATCH
    )
    assert max(errors.values()) > TOL, errors


def test_mocose_official_queue_start_survives_a_checkpoint(bert_with_lm_head):
    sizes = {"queue_size": 2 * BATCH, "queue_start_size": BATCH // 2, "pad_to_max_length": True}
    cfg, model, method, optimizer, views = official("mocose", bert_with_lm_head, **sizes)
    run_stsbench(cfg, model, method, optimizer, views[:1])
    assert method.start_count == 12 and method.host_parts()["negatives"] == 24  # 16 random + 8 keys, all read
    fresh = official("mocose", bert_with_lm_head, **sizes)[2]
    fresh.load_extra_state(method.extra_state(), "cpu")
    assert fresh.start_count == 12 and torch.equal(fresh.negatives(), method.negatives())
    assert not fresh.static_ready()  # no ring (--cuda-graph) while the official start holds more than K
