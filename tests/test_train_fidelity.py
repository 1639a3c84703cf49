"""Each behaviour where the paper and the official code part, checked against its source.

Each test fails on stsbench's behaviour before this fidelity pass (the clean MoCoSE target, the run-long EMA
ramp, SimCSE's random tanh pooler, the copied momentum encoder with its own MLP, a random MLM head on the anchor
only, additive noise called Gaussian dropout).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from helpers import build_tiny_bert

from stsbench.errors import StsbenchError
from stsbench.train.config import TrainConfig, effective_queue_size, finalize
from stsbench.train.methods import base
from stsbench.train.methods.base import Method, build_method
from stsbench.train.methods.esimcse import ESimCSE
from stsbench.train.methods.mocose import MoCoSE, mocose_decay, official_mocose_decay
from stsbench.train.model import ContrastiveEncoder

ROWS = [("a man plays a guitar .",), ("the cat sleeps on the mat .",), ("stocks fell sharply on monday .",)]

pytestmark = pytest.mark.usefixtures("one_thread")


def build(tokenizer, method: str, dropout: float = 0.1, pooler: str = "cls", **kw):
    cfg = finalize(TrainConfig(method=method, batch_size=3, **kw), False)
    model = ContrastiveEncoder(build_tiny_bert(dropout=dropout), pooler, True)
    model.init_new_layers(torch.Generator().manual_seed(1))
    return cfg, model


# -- MoCoSE ---------------------------------------------------------------------------------------------
def mocose(tokenizer, dropout: float = 0.1, **kw) -> tuple[ContrastiveEncoder, MoCoSE]:
    kw = {"queue_size": 8, "queue_start_size": 2, **kw}
    cfg, model = build(tokenizer, "mocose", dropout, **kw)
    method = build_method(cfg, tokenizer, model, torch.Generator().manual_seed(2))
    assert isinstance(method, MoCoSE)
    return model, method


def test_mocose_augmented_target_view_has_dropout_and_the_clean_one_not(tokenizer):
    # paper Sec. 3 / Alg. 1 line 3 and official mocose.py:507-514: both views come from the augmented encoder
    model, method = mocose(tokenizer, fgsm_epsilon=0.0)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    x = model.backbone.get_input_embeddings()(views.anchor["input_ids"]).detach()
    assert method.target_view == "augmented"  # the default
    k1, k2 = method.keys(views.anchor, x), method.keys(views.anchor, x)
    assert not torch.allclose(k1, k2)  # two target passes differ under dropout
    model, method = mocose(tokenizer, fgsm_epsilon=0.0, target_view="clean")
    assert torch.equal(method.keys(views.anchor, x), method.keys(views.anchor, x))


def test_mocose_augmented_target_reads_the_online_word_embeddings(tokenizer):
    # official: v_target = self.online_embeddings(...) (mocose.py:507); the target has no embeddings of its own
    # The change must survive BERT's embedding LayerNorm: a uniform shift of every entry is subtracted away
    # there (the keys agree to rounding), so the online word-embedding weights get seeded noise instead.
    def online_change(model, ids):
        emb = model.backbone.get_input_embeddings()
        x = emb(ids).detach()
        with torch.no_grad():
            emb.weight.add_(0.5 * torch.randn(emb.weight.shape, generator=torch.Generator().manual_seed(3)))
        return x, emb(ids).detach()

    model, method = mocose(tokenizer, dropout=0.0, fgsm_epsilon=0.0)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    x, changed = online_change(model, views.anchor["input_ids"])
    before = method.keys(views.anchor, x)
    assert torch.equal(method.keys(views.anchor, x), before)  # dropout 0: a difference below is the input's
    assert (method.keys(views.anchor, changed) - before).abs().max() > 1e-2
    model, method = mocose(tokenizer, dropout=0.0, fgsm_epsilon=0.0, target_view="clean")
    x, changed = online_change(model, views.anchor["input_ids"])
    assert torch.equal(method.keys(views.anchor, changed), method.keys(views.anchor, x))


def test_mocose_official_key_gradient_trains_the_target_projection(tokenizer):
    # official: keys undetached (mocose.py:126-131), the notebook freezes only target encoder and pooler
    model, method = mocose(tokenizer, fgsm_epsilon=0.0)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    method.loss(model, views)[0].backward()
    assert all(p.grad is None for p in method.target_projection.parameters())  # paper: stop-gradient
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    model, method = mocose(tokenizer, fgsm_epsilon=0.0, key_gradient="official")
    emb = model.backbone.get_input_embeddings().weight
    loss = method.loss(model, views)[0]
    (through_keys,) = torch.autograd.grad(loss, [method.target_projection[0].weight], retain_graph=True)
    assert float(through_keys.abs().sum()) > 0
    assert all(p.requires_grad for p in method.target_projection.parameters())
    assert not any(p.requires_grad for p in method.target_encoder.parameters())  # frozen, as the notebook
    loss.backward()
    assert emb.grad is not None


def test_official_ema_schedule_reaches_one_at_15000_steps():
    # mocose.py:43: decay_new = 1-(1-d)(cos(pi t/15000)+1)/2
    assert official_mocose_decay(0, 0.75) == pytest.approx(0.75)
    assert official_mocose_decay(15000, 0.75) == pytest.approx(1.0)
    assert official_mocose_decay(3906, 0.75) == pytest.approx(0.79, abs=0.005)  # a 1M epoch at batch 256
    assert official_mocose_decay(3906, 0.75) == pytest.approx(
        1 - 0.25 * (math.cos(math.pi * 3906 / 15000) + 1) / 2, abs=1e-15
    )
    for t in (1, 100, 3906, 15000, 16000):
        steps = mocose_decay(t, schedule="steps", total=3906, start=0.75, end=1.0, length=15000)
        assert steps == pytest.approx(official_mocose_decay(t, 0.75), abs=1e-15)
    # the paper's ramp spans the run; fixed stays
    assert mocose_decay(3906, schedule="run", total=3906, start=0.75, end=0.95, length=15000) == 0.95
    assert mocose_decay(77, schedule="fixed", total=3906, start=0.85, end=0.95, length=15000) == 0.85
    with pytest.raises(ValueError):
        mocose_decay(1, schedule="linear", total=1, start=0.5, end=1.0, length=1)


def test_mocose_dense_pooler_starts_from_the_backbones_pooler(tokenizer):
    # official: PoolerWithoutActive (mocose.py:103-113) loaded from BERT's pooler (notebook training cell)
    backbone = build_tiny_bert(dropout=0.0)
    model = ContrastiveEncoder(backbone, "cls", True, mlp_activation=False)
    model.init_new_layers(torch.Generator().manual_seed(1), from_backbone=True)
    assert torch.equal(model.mlp.dense.weight, backbone.pooler.dense.weight)
    assert torch.equal(model.mlp.dense.bias, backbone.pooler.dense.bias)
    batch = tokenizer(["a man plays a guitar ."], return_tensors="pt")
    with torch.no_grad():
        cls = backbone(**batch).last_hidden_state[:, 0]
        torch.testing.assert_close(model(dict(batch)), backbone.pooler.dense(cls))  # no tanh
    plain = ContrastiveEncoder(build_tiny_bert(), "cls", True)
    plain.init_new_layers(torch.Generator().manual_seed(1))
    assert not torch.equal(plain.mlp.dense.weight, backbone.pooler.dense.weight)
    backbone.pooler = None
    with pytest.raises(StsbenchError, match="no pretrained pooler"):
        ContrastiveEncoder(backbone, "cls", True, mlp_activation=False).init_new_layers(from_backbone=True)


# -- ESimCSE --------------------------------------------------------------------------------------------
def test_esimcse_official_momentum_encoder_is_random_and_keys_use_the_online_mlp(tokenizer):
    # models.py:346-350 + init_weights (log line 62: all momentum_model.* newly initialised), EMA over BERT
    # only (models.py:161-163), keys through cls.mlp (models.py:188-189)
    kw = {"repetition": False, "queue_multiple": 2.0, "momentum_init": "random", "momentum_mlp": "online"}
    cfg, model = build(tokenizer, "esimcse", **kw)
    method = build_method(cfg, tokenizer, model, torch.Generator().manual_seed(2))
    assert isinstance(method, ESimCSE)
    momentum = method.momentum_encoder
    online_w = model.backbone.encoder.layer[0].attention.self.query.weight
    momentum_w = momentum.backbone.encoder.layer[0].attention.self.query.weight
    assert not torch.allclose(online_w, momentum_w)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    own_mlp = [p.clone() for p in momentum.mlp.parameters()]
    method.after_step(model, views)
    assert all(torch.equal(a, b) for a, b in zip(own_mlp, momentum.mlp.parameters(), strict=True))
    with torch.no_grad():
        cls = momentum.eval().backbone(**views.anchor).last_hidden_state[:, 0]
        torch.testing.assert_close(method.queue.negatives(), model.mlp(cls))
        assert not torch.allclose(method.queue.negatives(), momentum.mlp(cls))


# -- SimCSE MLM -----------------------------------------------------------------------------------------
def test_mlm_head_is_the_backbones_and_every_view_is_masked(tokenizer, tmp_path):
    # SimCSE train.py:371-373 (lm_head <- BertForPreTraining cls.predictions) and :484-485 (every view)
    from transformers import BertForPreTraining

    backbone = build_tiny_bert(dropout=0.1)
    torch.manual_seed(3)
    pretraining = BertForPreTraining(backbone.config)
    pretraining.save_pretrained(tmp_path / "bert")
    cfg = finalize(TrainConfig(method="simcse", batch_size=3, mlm_weight=0.1), False)
    model = ContrastiveEncoder(type(backbone).from_pretrained(tmp_path / "bert"), "cls", True)
    method = build_method(cfg, tokenizer, model, torch.Generator().manual_seed(2))
    head, pretrained = method.mlm_loss.lm_head.state_dict(), pretraining.cls.predictions.state_dict()
    assert method.mlm_head_loaded
    assert all(torch.equal(head[k], pretrained[k]) for k in pretrained)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    masked, labels = views.mlm
    assert masked["input_ids"].shape[0] == 2 * 3  # both views of unsup SimCSE, each masked on its own
    # a backbone saved without the head keeps the random one
    backbone.save_pretrained(tmp_path / "no-head")
    assert not base.load_pretrained_lm_head(method.mlm_loss.lm_head, tmp_path / "no-head")


# -- Gaussian dropout -----------------------------------------------------------------------------------
def test_gaussian_dropout_replaces_about_p_of_the_entries_by_draws_of_std():
    torch.manual_seed(0)
    x = torch.full((400, 100), 3.0)
    layer = base.GaussianDropout(p=0.1, std=0.1)
    y = layer(x)
    replaced = y != 3.0
    n = x.numel()
    assert abs(float(replaced.float().sum()) - 0.1 * n) < 5 * math.sqrt(n * 0.1 * 0.9)  # binomial, 5 sigma
    draws = y[replaced]
    assert abs(float(draws.std()) - 0.1) < 0.005 and abs(float(draws.mean())) < 0.005
    assert torch.equal(y[~replaced], x[~replaced])  # the rest unchanged
    assert torch.equal(layer.eval()(x), x)  # removed after training
    additive = base.AdditiveGaussianNoise(0.1)(x)
    assert bool((additive != 3.0).all())  # the old behaviour touches every entry


def test_simcse_gaussian_dropout_applies_to_both_views(tokenizer):
    cfg, model = build(tokenizer, "simcse", dropout=0.0, pooler="avg")
    assert build_method(cfg, tokenizer, model).noise is None
    cfg, model = build(tokenizer, "simcse", dropout=0.0, pooler="avg", gaussian_dropout_p=0.5)
    method = build_method(cfg, tokenizer, model, torch.Generator().manual_seed(2))
    assert isinstance(method, Method) and isinstance(method.noise, base.GaussianDropout)
    assert (method.noise.p, method.noise.std) == (0.5, 0.1)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    with torch.no_grad():
        clean = model(views.anchor)
        h, h_pos = method.pooled(model, [views.anchor, views.anchor])
    for noisy in (h, h_pos):
        changed = noisy != clean
        assert 0 < float(changed.float().mean()) < 1
    assert not torch.equal(h, h_pos)


def test_official_mocose_config_builds_the_dense_pooler_and_accepts_eta_one(tokenizer, tiny_bert, tmp_path):
    # configs/mocose-bert-base-official.yaml's pooler and schedule, through the run's own build
    from stsbench.train.loop import build as build_run

    cfg = TrainConfig(
        method="mocose",
        pooler="cls",
        pooler_activation="none",
        pooler_init="backbone",
        ema_decay_end=1.0,
        ema_schedule="steps",
        queue_size=8,
        queue_start_size=2,
    )
    model, _, method, _ = build_run(finalize(cfg, False), tiny_bert, "cpu")
    backbone_pooler = model.backbone.pooler.dense
    assert torch.equal(model.mlp.dense.weight, backbone_pooler.weight)
    assert isinstance(model.mlp.activation, torch.nn.Identity)
    method.start(3906)
    assert method.decay(3906) == pytest.approx(official_mocose_decay(3906, 0.75))
    assert method.traceable_distance(64)["end"] < float("inf")
    with pytest.raises(StsbenchError, match="mlp-only-train"):
        build_run(finalize(cfg.replace(mlp_only_train=False), False), tiny_bert, "cpu")


def test_train_on_a_sentence_transformers_backbone_records_and_evaluates_its_declared_pooler(tiny_bert):
    # all-MiniLM-L6-v2 declares mean pooling (1_Pooling/config.json); without --pooler it used to train [CLS]
    cfg = finalize(TrainConfig(method="simcse", model="all-MiniLM-L6-v2"), False)
    assert (cfg.pooler, cfg.resolution.eval_pooler, cfg.to_dict()["pooler"]) == ("avg", "avg", "avg")
    assert cfg.config.pooler is None  # the config says "the backbone's"; the resolution says which
    plain = finalize(TrainConfig(method="simcse", model=str(tiny_bert)), False)
    assert (plain.pooler, plain.resolution.eval_pooler) == ("cls", "cls_before_pooler")  # SimCSE's for BERT
    given = finalize(TrainConfig(method="simcse", model="all-MiniLM-L6-v2", pooler="cls"), False)
    assert given.pooler == "cls"


# -- precision and gradients ------------------------------------------------------------------------------
def test_mocose_shared_target_embeddings_read_the_online_embedding_layer(tokenizer):
    # official mocose.py:507-514: v_target = self.online_embeddings(...), position/type/LayerNorm included
    views = None
    keys = {}
    for choice in ("shared", "target"):
        model, method = mocose(tokenizer, dropout=0.0, fgsm_epsilon=0.0, target_embeddings=choice)
        views = views or method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
        x = model.backbone.get_input_embeddings()(views.anchor["input_ids"]).detach()
        before = method.keys(views.anchor, x, model)
        with torch.no_grad():  # the target's own layer drifts from the online one (the EMA lags)
            method.target_encoder.backbone.embeddings.LayerNorm.bias.add_(0.3)
        after_target = method.keys(views.anchor, x, model)
        with torch.no_grad():
            model.backbone.embeddings.LayerNorm.bias.add_(0.3)
        after_online = method.keys(views.anchor, x, model)
        keys[choice] = after_target
        if choice == "shared":  # the target's own layer is bypassed, the online one read
            assert torch.equal(after_target, before) and not torch.allclose(after_online, before)
            assert "embeddings.LayerNorm.bias" in dict(method.target_encoder.backbone.named_parameters())
        else:
            assert not torch.allclose(after_target, before) and torch.equal(after_online, after_target)
    assert not torch.allclose(keys["shared"], keys["target"])


def test_weight_decay_exclude_keeps_bias_and_layernorm_out_as_the_hf_trainer(tokenizer):
    from itertools import chain

    from stsbench.train.step import decay_groups, make_optimizer

    model, method = mocose(tokenizer, weight_decay=0.01)
    every = [p for p in chain(model.parameters(), method.parameters()) if p.requires_grad]
    plain = decay_groups([model, method], 0.01, "none")
    assert [id(p) for p in plain] == [id(p) for p in every]  # as before: one group, every parameter decayed
    kept, exempt = decay_groups([model, method], 0.01, "bias-layernorm")
    assert (kept["weight_decay"], exempt["weight_decay"]) == (0.01, 0.0)
    exempt_ids = {id(p) for p in exempt["params"]}
    # transformers 4.2.1 (SimCSE, ESimCSE): no_decay = ["bias", "LayerNorm.weight"], by name
    hf = {id(p) for n, p in model.named_parameters() if any(nd in n for nd in ("bias", "LayerNorm.weight"))}
    ours = {id(p) for p in model.parameters()} & exempt_ids
    assert ours == hf and len(hf) > 0
    # transformers 4.11.3 (MoCoSE): nn.LayerNorm by type, so the projection's LayerNorm weight too
    assert id(method.projection[1].weight) in exempt_ids
    assert id(method.projection[0].weight) not in exempt_ids
    assert len(kept["params"]) + len(exempt["params"]) == len(every)
    optimizer = make_optimizer(
        decay_groups([model, method], 0.01, "bias-layernorm"), lr=1e-3, weight_decay=0.01, device="cpu"
    )
    assert [g["weight_decay"] for g in optimizer.param_groups] == [0.01, 0.0]


def test_ddp_gradient_and_queue_scope_are_options_with_the_papers_defaults():
    from stsbench.train import distributed

    cfg = TrainConfig(method="esimcse", batch_size=64)
    assert (cfg.ddp_gradient, cfg.queue_scope, cfg.weight_decay_exclude) == ("global", "global", "none")
    assert effective_queue_size(cfg, 4) == 640  # 2.5 x the global batch of 4 x 64
    assert effective_queue_size(cfg.replace(queue_scope="process"), 4) == 160  # official neg_size, per GPU
    assert distributed.loss_scale("global") == distributed.loss_scale("average") == 1.0  # one process
    with pytest.raises(StsbenchError, match="unknown ddp gradient .mean.; choose global or average"):
        TrainConfig(method="simcse", ddp_gradient="mean")
    with pytest.raises(StsbenchError, match="queue-scope"):
        TrainConfig(method="simcse", queue_scope="process")  # ESimCSE's option
