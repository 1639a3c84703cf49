"""MoCoSE and the Gaussian-dropout variant against hand-computed values, mixed-precision options."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from helpers import build_tiny_bert, by_hand, train_config

from stsbench.errors import StsbenchError
from stsbench.train.config import TrainConfig, finalize, make_config
from stsbench.train.methods.base import build_method
from stsbench.train.methods.mocose import MoCoSE, cosine_decay, fgsm
from stsbench.train.methods.mocose_options import parse_slices
from stsbench.train.model import ContrastiveEncoder
from stsbench.train.momentum import traceable_distance

ROWS = [("a man plays a guitar .",), ("the cat sleeps on the mat .",), ("stocks fell sharply on monday .",)]
TAU = 0.05


pytestmark = pytest.mark.usefixtures("one_thread")


def mocose(tokenizer, **kw) -> tuple[ContrastiveEncoder, MoCoSE]:
    opts = {"method": "mocose", "batch_size": 3, "queue_size": 8, "queue_start_size": 2, **kw}
    cfg = finalize(TrainConfig(**opts), False)
    model = ContrastiveEncoder(build_tiny_bert(dropout=0.0), "cls", True)
    model.init_new_layers(torch.Generator().manual_seed(1))
    method = build_method(cfg, tokenizer, model, torch.Generator().manual_seed(2))
    assert isinstance(method, MoCoSE)
    return model, method


def test_mocose_loss_on_three_sentences_equals_eq3_by_hand(tokenizer):
    model, method = mocose(tokenizer, fgsm_epsilon=0.0)
    method.start(100)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    model.train()
    loss, parts = method.loss(model, views)
    # the same pieces, computed separately: q from the online branch (with predictor), k from the target
    with torch.no_grad():
        pooled = model(views.anchor)
        q = method.predictor(method.projection(pooled)).double().numpy()
        k = method.target_projection(method.target_encoder(views.anchor)).double().numpy()
        queue = method.queue.negatives().double().numpy()
    assert queue.shape == (2, 32)  # K_start random entries before the first step
    assert float(loss.detach()) == pytest.approx(by_hand(q, k, queue, tau=TAU), rel=1e-5)
    assert parts["negatives"] == 2.0  # the eta this step's EMA update will use, 1/100 of the way up:
    assert parts["ema_decay"] == pytest.approx(0.95 - 0.2 * (math.cos(math.pi / 100) + 1) / 2, abs=1e-12)


def test_predictor_and_projection_layers_follow_the_options(tokenizer):
    _, method = mocose(tokenizer, projection_layers=1, predictor_layers=2)
    linear = [m for m in method.predictor if isinstance(m, torch.nn.Linear)]
    assert len(linear) == 2 and isinstance(method.predictor[-1], torch.nn.Tanh)
    assert sum(isinstance(m, torch.nn.Linear) for m in method.projection) == 1
    _, bare = mocose(tokenizer, projection_layers=0, predictor_layers=0)
    x = torch.randn(3, 32)
    assert torch.equal(bare.projection(x), x) and torch.equal(bare.predictor(x), x)
    # the target branch has a projection but no predictor, and never trains
    assert not any(p.requires_grad for p in method.target_projection.parameters())
    assert not any(p.requires_grad for p in method.target_encoder.parameters())


def test_ema_schedule_matches_its_formula_at_first_middle_and_last_step(tokenizer):
    def formula(t, total, a=0.75, b=0.95):
        return b - (b - a) * (math.cos(math.pi * t / total) + 1) / 2

    assert cosine_decay(0, 10, 0.75, 0.95) == pytest.approx(0.75)
    assert cosine_decay(5, 10, 0.75, 0.95) == pytest.approx(0.85)
    assert cosine_decay(10, 10, 0.75, 0.95) == pytest.approx(0.95)
    model, method = mocose(tokenizer, fgsm_epsilon=0.0)
    method.start(10)
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.5)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    for step in range(1, 11):
        old = [p.detach().clone() for p in method.target_encoder.parameters()]
        loss, _ = method.loss(model, views)
        loss.backward()
        opt.step()
        opt.zero_grad()
        method.after_step(model, views)
        eta = formula(step, 10)
        if step in (1, 5, 10):  # the first, middle and last update
            assert method.decay(step) == pytest.approx(eta, abs=1e-12)
            for b, p_t, p_o in zip(old, method.target_encoder.parameters(), model.parameters(), strict=True):
                torch.testing.assert_close(p_t, eta * b + (1 - eta) * p_o.detach(), rtol=1e-6, atol=1e-7)
    assert method.updates == 10


def test_fgsm_moves_input_embeddings_by_eps_times_gradient_sign(tokenizer):
    x = torch.tensor([[0.5, -0.25, 0.0]])
    g = torch.tensor([[2.0, -3.0, 0.0]])
    assert torch.equal(fgsm(x, g, 0.1), torch.tensor([[0.6, -0.35, 0.0]]))
    eps = 1e-3
    model, method = mocose(tokenizer, fgsm_epsilon=eps)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    seen = []
    online = method.online

    def spy(m, batch):
        seen.append(batch["inputs_embeds"])
        return online(m, batch)

    method.online = spy
    method.loss(model, views)
    probe, attacked = seen  # the gradient pass, then the step's forward
    # the gradient of the same loss at the clean embeddings, taken independently
    x = model.backbone.get_input_embeddings()(views.anchor["input_ids"]).detach().requires_grad_(True)
    rest = {k: v for k, v in views.anchor.items() if k != "input_ids"}
    method.online = online
    q = method.online(model, {**rest, "inputs_embeds": x})
    (grad,) = torch.autograd.grad(method.criterion(q, method.keys(views.anchor), method.negatives()), x)
    assert torch.equal(probe.detach(), x.detach())
    assert torch.equal(attacked.detach(), x.detach() + eps * grad.sign())
    assert (grad.sign() != 0).float().mean() > 0.5  # a real direction, not zeros
    assert attacked.requires_grad  # the word embeddings still train through the attacked input


def test_queue_starts_random_or_empty_is_fifo_and_sliced_newest_first(tokenizer):
    model, method = mocose(tokenizer, fgsm_epsilon=0.0, queue_size=8, queue_start_size=2)
    start = method.queue.negatives().clone()
    torch.testing.assert_close(start.norm(dim=1), torch.ones(2))
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    pushed = []
    for _ in range(3):
        method.loss(model, views)
        pushed.append(method._keys.clone())
        method.after_step(model, views)
    assert len(method.queue) == 8  # 2 random + 3 x 3 keys, capped at K = 8: the oldest dropped
    torch.testing.assert_close(method.queue.negatives(), torch.cat([start, *pushed])[-8:])
    method.slices = parse_slices("0:3,6:8", 8)
    newest_first = torch.cat([start, *pushed])[-8:].flip(0)
    torch.testing.assert_close(method.negatives(), torch.cat([newest_first[0:3], newest_first[6:8]]))
    _, empty = mocose(tokenizer, queue_start="batches")
    assert empty.negatives() is None


def test_traceable_distance_and_option_errors():
    assert traceable_distance(0.95, 512, 64) == pytest.approx(1 / 0.05 + 8)
    base = {"model": "m", "train_file": "f", "output": "o"}
    cfg = make_config({**base, "method": "mocose"})
    assert (cfg.weight_decay, cfg.eval_steps, cfg.queue_size, cfg.queue_start_size) == (1e-6, 100, 512, 128)
    assert (cfg.ema_decay_start, cfg.ema_decay_end, cfg.fgsm_epsilon) == (0.75, 0.95, 5e-9)
    with pytest.raises(StsbenchError, match="--queue-size: MoCoSE option, not for ESimCSE"):
        make_config({**base, "method": "esimcse", "queue_size": 64})
    with pytest.raises(StsbenchError, match="--gaussian-noise-std: SimCSE or ESimCSE option, not for MoCoSE"):
        make_config({**base, "method": "mocose", "gaussian_noise_std": 0.1})
    with pytest.raises(StsbenchError, match="--queue-slice '768:256': need 0 <= START < END"):
        make_config({**base, "method": "mocose", "queue_slice": "768:256"})
    with pytest.raises(StsbenchError, match="expected START:END"):
        make_config({**base, "method": "mocose", "queue_slice": "middle"})
    with pytest.raises(StsbenchError, match="--queue-start-size 600 must be between 0 and --queue-size 512"):
        make_config({**base, "method": "mocose", "queue_start_size": 600})
    with pytest.raises(StsbenchError, match="unknown precision 'fp8'"):
        make_config({**base, "method": "simcse", "precision": "fp8"})


def test_reduced_precision_needs_cuda(files, tmp_path):
    from stsbench.train.loop import Precision, train

    fp32 = Precision("fp32", "cpu")
    with fp32.autocast():  # no autocast and no scaler: a matmul stays float32 (CPU autocast would give bf16)
        product = torch.ones(2, 3) @ torch.ones(3, 2)
    assert product.dtype == torch.float32 and fp32.dtype is None and fp32.scaler is None
    with pytest.raises(StsbenchError, match="--precision bf16 needs a CUDA device"):
        Precision("bf16", "cpu")
    with pytest.raises(StsbenchError, match="--precision fp16 needs a CUDA device; on cpu train with fp32"):
        train(train_config(files, tmp_path / "run", precision="fp16", device="cpu"), show_progress=False)
    assert not (tmp_path / "run").exists()  # refused before anything is written


def test_mocose_run_logs_traceable_distance_and_saves_an_evaluable_checkpoint(files, tmp_path):
    import json

    from stsbench.train.loop import train

    cfg = train_config(
        files, tmp_path / "run", method="mocose", queue_size=8, queue_start_size=2, max_steps=4
    )
    result = train(cfg, show_progress=False)
    log = [json.loads(x) for x in (tmp_path / "run" / "train_log.jsonl").read_text().splitlines()]
    start = log[0]
    assert start["traceable_distance"] == {"start": 1 / 0.25 + 8 / 4, "end": pytest.approx(1 / 0.05 + 8 / 4)}
    steps = [r for r in log if r["event"] == "train"]
    assert [r["negatives"] for r in steps] == [2, 6, 8, 8]  # K_start, then FIFO up to K
    meta = json.loads((tmp_path / "run" / "stsbench.json").read_text())
    assert meta["method"] == "mocose" and result.best_step is not None


def test_losses_stay_fp32_under_autocast():
    from stsbench.train.losses import InfoNCE

    a, b = torch.randn(4, 8, dtype=torch.bfloat16), torch.randn(4, 8, dtype=torch.bfloat16)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = InfoNCE(TAU)(a, b, torch.randn(3, 8, dtype=torch.bfloat16))
    assert loss.dtype == torch.float32


@pytest.mark.parametrize("method", ["simcse", "esimcse"])
def test_gaussian_noise_on_pooled_embeddings_in_training_only(tokenizer, method):
    def pooled(std):
        cfg = finalize(TrainConfig(method=method, batch_size=3, gaussian_noise_std=std), False)
        model = ContrastiveEncoder(build_tiny_bert(dropout=0.0), "avg", True)
        m = build_method(cfg, tokenizer, model, torch.Generator().manual_seed(2))
        views = m.make_views(ROWS * 40, np.arange(120), np.random.default_rng(0))
        torch.manual_seed(7)
        return model, m.pooled(model, [views.anchor, views.anchor]), views

    _, clean, _ = pooled(0.0)
    model, noisy, views = pooled(0.1)
    diffs = torch.cat([(n - c).detach().flatten() for n, c in zip(noisy, clean, strict=True)])
    assert abs(float(diffs.std()) - 0.1) < 0.005 and abs(float(diffs.mean())) < 0.005
    assert not torch.equal(noisy[0], noisy[1])  # each view draws its own noise
    with torch.no_grad():  # what the dev evaluation and the saved checkpoint see: no noise
        torch.testing.assert_close(model.eval()(views.anchor), clean[0])
