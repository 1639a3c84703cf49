"""Trainer pieces against hand-computed values: losses, repetition, queue, EMA, schedule, config."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import build_tiny_bert, by_hand
from torch import nn

from stsbench.errors import StsbenchError
from stsbench.train.augment import repetition as A
from stsbench.train.config import TrainConfig, effective_queue_size, finalize, make_config
from stsbench.train.losses import InfoNCE, MLMLoss, SupervisedInfoNCE
from stsbench.train.methods.base import build_method
from stsbench.train.methods.esimcse import ESimCSE
from stsbench.train.methods.simcse import SimCSE
from stsbench.train.model import ContrastiveEncoder
from stsbench.train.momentum import EmbeddingQueue, ema_update
from stsbench.train.schedule import batches_per_epoch, linear_lr

pytestmark = pytest.mark.usefixtures("one_thread")


# -- losses: explicit loops over a 3-sentence batch --
H = np.array([[1.0, 0.0, 2.0, -1.0], [0.5, 1.5, -0.5, 0.0], [-1.0, 1.0, 1.0, 1.0]])
HP = np.array([[0.9, 0.1, 1.8, -1.2], [0.0, 2.0, -1.0, 0.5], [-0.5, 0.5, 1.5, 1.0]])
Q = np.array([[1.0, 1.0, 0.0, 0.0], [0.0, -1.0, 1.0, 2.0]])
HN = np.array([[1.0, 0.2, 1.0, -1.0], [2.0, 0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 3.0]])
TAU = 0.05


def t(x):
    return torch.tensor(x, dtype=torch.float64)


def test_infonce_equals_eq2_by_hand():
    assert float(InfoNCE(TAU)(t(H), t(HP))) == pytest.approx(by_hand(H, HP), rel=1e-10)


def test_infonce_with_queue_equals_eq7_by_hand():
    assert float(InfoNCE(TAU)(t(H), t(HP), t(Q))) == pytest.approx(by_hand(H, HP, Q), rel=1e-10)
    # an empty queue is eq. (2)
    assert float(InfoNCE(TAU)(t(H), t(HP), t(np.zeros((0, 4))))) == pytest.approx(
        float(InfoNCE(TAU)(t(H), t(HP)))
    )


def test_supervised_loss_with_hard_negative_weight_by_hand():
    got = SupervisedInfoNCE(TAU, 0.7)(t(H), t(HP), t(HN))
    assert float(got) == pytest.approx(by_hand(H, HP, hard=HN, w=0.7), rel=1e-10)


def test_mlm_loss_by_hand():
    head = nn.Linear(4, 5, bias=False).double()
    weight = np.arange(20, dtype=np.float64).reshape(5, 4) / 10.0 - 1.0
    with torch.no_grad():
        head.weight.copy_(t(weight))
    hidden = H[None]  # (1, 3 tokens, 4)
    labels = [[2, -100, 4]]
    terms = []
    for pos, label in enumerate(labels[0]):
        if label == -100:
            continue
        logits = [sum(weight[v][k] * hidden[0][pos][k] for k in range(4)) for v in range(5)]
        log_z = math.log(sum(math.exp(x) for x in logits))
        terms.append(-(logits[label] - log_z))
    got = MLMLoss(head)(t(hidden), torch.tensor(labels)).detach()
    assert float(got) == pytest.approx(sum(terms) / len(terms), rel=1e-10)
    assert float(MLMLoss(head)(t(hidden), torch.full((1, 3), -100))) == 0.0  # nothing masked: 0, not NaN


# -- repetition (eq. 4-5 and the official rule) --
def encode(tokenizer, text, offsets=True):
    enc = tokenizer(text, return_special_tokens_mask=True, return_offsets_mapping=offsets)
    return enc["input_ids"], enc["special_tokens_mask"], enc.get("offset_mapping")


def test_paper_dup_len_range_and_uniform_positions(tokenizer):
    rng = np.random.default_rng(0)
    for n in (1, 2, 5, 10, 30):
        high = max(2, int(0.32 * n))
        draws = [A.paper_dup_len(n, 0.32, rng) for _ in range(3000)]
        assert set(draws) == set(range(min(high, n) + 1))  # every value of [0, max(2, int(0.32 N))] (<= N)
    ids, special, _ = encode(tokenizer, "the quick brown fox jumps over the lazy dog again and again")
    rep = A.Repetition("subword", 0.32, "paper")
    units = A.group_units(special, None, words=False)
    counts = np.zeros(len(ids))
    for _ in range(4000):
        for u in rep.dup_set(units, len(ids), rng):
            counts[units[u][0]] += 1
    assert counts[0] == 0 and counts[-1] == 0  # [CLS], [SEP] never drawn
    content = counts[1:-1]
    assert content.min() > 0.8 * content.mean() and content.max() < 1.2 * content.mean()  # uniform positions


def test_official_dup_len_rule():
    rng = np.random.default_rng(1)
    for length in (3, 4, 10, 20, 40, 60):
        high = min(10, int(0.32 * length))
        draws = {A.official_dup_len(length - 2, length, 0.32, rng) for _ in range(2000)}
        assert draws == (set(range(high)) if high > 0 else {0})  # randrange(high): 0..high-1


@pytest.mark.parametrize("sampling", ["paper", "official"])
def test_subword_repetition_structure(tokenizer, sampling):
    ids, special, _ = encode(tokenizer, "microbiology is a fascinating subject , isn't it ?")
    rep = A.Repetition("subword", 0.32, sampling)
    seen_longer = False
    for seed in range(300):
        out = rep.apply(ids, special, None, np.random.default_rng(seed))
        assert out[0] == ids[0] and out[-1] == ids[-1]  # special tokens untouched, still at the ends
        assert sum(tok in tokenizer.all_special_ids for tok in out) == 2
        # removing each token equal to its predecessor where one was inserted gives the sentence back
        extra = len(out) - len(ids)
        assert 0 <= extra <= (max(2, int(0.32 * (len(ids) - 2))) if sampling == "paper" else 9)
        i = j = 0
        inserted = 0
        while i < len(out):
            if j < len(ids) and out[i] == ids[j]:
                i, j = i + 1, j + 1
            else:
                assert out[i] == out[i - 1]  # a repeated sub-word follows its original
                i, inserted = i + 1, inserted + 1
        assert j == len(ids) and inserted == extra
        seen_longer |= extra > 0
    assert seen_longer


def test_word_mask_and_stopword_kinds(tokenizer):
    text = "microbiology is fun"
    ids, special, offsets = encode(tokenizer, text)
    toks = tokenizer.convert_ids_to_tokens(ids)
    assert toks == ["[CLS]", "micro", "##biology", "is", "fun", "[SEP]"]
    assert A.group_units(special, offsets, words=True) == [[1, 2], [3], [4]]
    word = A.Repetition("word", 1.0, "paper")
    outs = {
        tuple(tokenizer.convert_ids_to_tokens(word.apply(ids, special, offsets, np.random.default_rng(s))))
        for s in range(200)
    }
    assert ("[CLS]", "micro", "##biology", "micro", "##biology", "is", "fun", "[SEP]") in outs
    for out in outs:  # whole words only: a sub-word piece is never repeated alone
        assert "micro ##biology ##biology" not in " ".join(out) and out.count("micro") == out.count(
            "##biology"
        )
    mask = A.Repetition.for_tokenizer(tokenizer, "mask", 1.0, "paper")
    out = tokenizer.convert_ids_to_tokens(mask.apply(ids, special, offsets, np.random.default_rng(3)))
    assert [x for x in out if x != "[MASK]"] == toks
    for i, x in enumerate(out):  # [MASK] only right after a word's last piece
        if x == "[MASK]":
            assert out[i - 1] in ("##biology", "is", "fun", "[MASK]") and out[i + 1] != "##biology"
    stop = A.Repetition.for_tokenizer(tokenizer, "stopword", 1.0, "paper")
    stop_ids = {tuple(s) for s in stop.stop_ids}
    assert len(stop_ids) > 100 and all(len(s) == 1 for s in stop_ids)  # BERT's vocab has them as one token
    for s in range(50):
        out = stop.apply(ids, special, offsets, np.random.default_rng(s))
        j, inserted = 0, []
        for tok in out:  # the sentence in order; everything else is a stop-word right after a word's end
            if j < len(ids) and tok == ids[j]:
                j += 1
            else:
                assert (tok,) in stop_ids and ids[j - 1] != tokenizer.convert_tokens_to_ids("micro")
                inserted.append(tok)
        assert j == len(ids) and len(inserted) <= 3


def test_official_view_is_fixed_per_sentence_paper_view_is_not(tokenizer):
    rows = [("the quick brown fox jumps over the lazy dog near the river bank today",)] * 2
    views = {}
    for sampling in ("paper", "official"):
        cfg = finalize(TrainConfig(method="esimcse", repetition_sampling=sampling, queue_multiple=0), False)
        m = ESimCSE(cfg, tokenizer, build_tiny_bert().config)
        a = [
            m.make_views(rows, np.array([7, 8]), np.random.default_rng(s)).positive["input_ids"]
            for s in range(8)
        ]
        views[sampling] = {tuple(x[0].tolist()) for x in a}
    assert len(views["official"]) == 1  # the same sentence (row 7) gets the same view in every batch
    assert len(views["paper"]) > 1


# -- momentum contrast --
def test_queue_is_fifo_with_size_from_batch_multiple():
    cfg = TrainConfig(method="esimcse", batch_size=64)
    assert effective_queue_size(cfg) == 160 and effective_queue_size(TrainConfig(method="simcse")) == 0
    q = EmbeddingQueue(int(2.5 * 4))
    for step in range(5):
        q.push(torch.arange(step * 4, step * 4 + 4, dtype=torch.float32)[:, None].repeat(1, 3))
        assert len(q) == min(4 * (step + 1), 10)
    assert q.negatives()[:, 0].tolist() == list(range(10, 20))  # the 10 newest, oldest first
    q.clear()
    assert q.negatives() is None and len(q) == 0


def test_ema_update_equals_eq6():
    torch.manual_seed(0)
    online, target = nn.Linear(3, 2), nn.Linear(3, 2)
    before = [p.detach().clone() for p in target.parameters()]
    ema_update(target, online, 0.9)
    for b, p_m, p_e in zip(before, target.parameters(), online.parameters(), strict=True):
        np.testing.assert_allclose(
            p_m.detach().numpy(), 0.9 * b.numpy() + 0.1 * p_e.detach().numpy(), rtol=1e-6
        )
    ema_update(target, online, 0.0)
    for p_m, p_e in zip(target.parameters(), online.parameters(), strict=True):
        assert torch.equal(p_m, p_e)


def test_esimcse_step_updates_momentum_encoder_and_enqueues_eval_embeddings(tokenizer):
    cfg = finalize(TrainConfig(method="esimcse", batch_size=3, momentum=0.995), False)
    model = ContrastiveEncoder(build_tiny_bert(), "cls", True)
    model.init_new_layers(torch.Generator().manual_seed(1))
    method = build_method(cfg, tokenizer, model, torch.Generator().manual_seed(2))
    assert method.queue.size == 7 and not method.momentum_encoder.training
    rows = [("a man plays a guitar .",), ("the cat sleeps .",), ("stocks fell sharply on monday .",)]
    views = method.make_views(rows, np.arange(3), np.random.default_rng(0))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    old_m = [p.detach().clone() for p in method.momentum_encoder.parameters()]
    loss, _ = method.loss(model, views)
    loss.backward()
    opt.step()
    method.after_step(model, views)
    for b, p_m, p_e in zip(old_m, method.momentum_encoder.parameters(), model.parameters(), strict=True):
        torch.testing.assert_close(p_m, 0.995 * b + 0.005 * p_e.detach(), rtol=1e-6, atol=1e-7)
    with torch.no_grad():
        expected = method.momentum_encoder.eval()(views.anchor)  # un-repeated sentences, dropout off
    torch.testing.assert_close(method.queue.negatives(), expected)


def test_esimcse_without_momentum_and_queue_equals_simcse_on_same_views(tokenizer):
    rows = [("a man plays a guitar .",), ("the cat sleeps on the mat .",), ("stocks fell on monday .",)]
    e_cfg = finalize(TrainConfig(method="esimcse", batch_size=3, momentum=0.0, queue_multiple=0), False)
    s_cfg = finalize(TrainConfig(method="simcse", batch_size=3), False)
    model = ContrastiveEncoder(build_tiny_bert(), "cls", True)
    model.init_new_layers(torch.Generator().manual_seed(1))
    esim = build_method(e_cfg, tokenizer, model)
    sim = build_method(s_cfg, tokenizer, model)
    assert esim.momentum_encoder is None  # no queue: no momentum forward at all
    views = esim.make_views(rows, np.arange(3), np.random.default_rng(5))  # repeated positives
    assert views.positive["input_ids"].shape != views.anchor["input_ids"].shape
    torch.manual_seed(11)
    e_loss, _ = esim.loss(model, views)
    torch.manual_seed(11)
    s_loss, _ = sim.loss(model, views)  # SimCSE's InfoNCE on the very same (h, h+)
    assert float(e_loss.detach()) == float(s_loss.detach())
    # and with --no-repetition it is SimCSE's dropout-view step, bit for bit
    e_cfg.repetition = False
    esim = build_method(e_cfg, tokenizer, model)
    v_e = esim.make_views(rows, np.arange(3), np.random.default_rng(5))
    v_s = sim.make_views(rows, np.arange(3), np.random.default_rng(5))
    torch.manual_seed(3)
    a, _ = esim.loss(model, v_e)
    torch.manual_seed(3)
    b, _ = sim.loss(model, v_s)
    assert float(a) == float(b)
    assert type(sim) is SimCSE


def test_length_buckets_give_one_pass_embeddings_in_batch_order(tokenizer):
    from stsbench.train.data import pad
    from stsbench.train.methods.base import encode_bucketed

    model = ContrastiveEncoder(build_tiny_bert(), "avg", True).eval()
    texts = ["a b c d e f g h i j", "hi", "the cat sat on the mat", "ok then", "one two three four five"]
    batch = pad(tokenizer(texts)["input_ids"], tokenizer.pad_token_id)
    whole = model(batch)
    for k in (2, 3, 5, 9):
        parts = encode_bucketed(model, batch, k)
        torch.testing.assert_close(parts, whole, rtol=1e-5, atol=1e-6)
    seen = []
    real = model.forward
    model.forward = lambda b: (seen.append(tuple(b["input_ids"].shape)), real(b))[1]
    encode_bucketed(model, batch, 2)
    assert seen == [(3, 7), (2, 12)]  # lengths 3, 4, 7 | 8, 12: each group cut to its own longest


def test_global_batches_split_by_rank_and_drop_the_incomplete_one():
    from stsbench.train.data import batch_rows

    rows = list(range(30))  # batch_rows reads only len()
    assert batches_per_epoch(30, 4) == 8 and batches_per_epoch(29, 4) == 7  # a 1-row batch has no negative
    assert batches_per_epoch(30, 4, world=2) == 3  # 3 global batches of 8; the last 6 rows wait
    for index in range(3):
        whole = batch_rows(rows, 0, 1, index, 8)
        slices = [batch_rows(rows, 0, 1, index, 4, rank, 2) for rank in range(2)]
        assert np.array_equal(np.concatenate(slices), whole)
    with pytest.raises(StsbenchError, match="30 training rows fill no global batch of 16 x 2 processes"):
        batches_per_epoch(30, 16, world=2)


# -- schedule and config --
def test_linear_lr_equals_hf_schedule():
    from transformers import get_linear_schedule_with_warmup

    p = nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=3e-5)
    sched = get_linear_schedule_with_warmup(opt, 3, 10)
    for step in range(12):
        assert opt.param_groups[0]["lr"] == pytest.approx(linear_lr(step, 10, 3e-5, 3), abs=1e-15)
        opt.step()
        sched.step()
    assert linear_lr(0, 186, 3e-5) == 3e-5 and linear_lr(186, 186, 3e-5) == 0.0


def test_config_yaml_then_cli_override(tmp_path):
    y = tmp_path / "c.yaml"
    y.write_text("method: esimcse\ndup-rate: 0.2\nbatch_size: 32\nmodel: m\ntrain_file: f\noutput: o\n")
    cfg = make_config({"batch_size": 16, "lr": None}, y)
    assert (cfg.method, cfg.dup_rate, cfg.batch_size, cfg.lr) == ("esimcse", 0.2, 16, 3e-5)
    y.write_text("method: esimcse\nbogus: 1\n")
    with pytest.raises(StsbenchError, match="unknown option 'bogus'"):
        make_config({}, y)
    y.write_text("method: esimcse\nbatch_size: many\n")
    with pytest.raises(StsbenchError, match="batch_size must be int"):
        make_config({}, y)
    base = {"model": "m", "train_file": "f", "output": "o"}
    with pytest.raises(StsbenchError, match="unknown method 'moco'"):
        make_config({**base, "method": "moco"})
    with pytest.raises(StsbenchError, match="--batch-size 1 leaves no in-batch negatives"):
        make_config({**base, "method": "simcse", "batch_size": 1})
    with pytest.raises(
        StsbenchError, match="--dup-rate: ESimCSE option, not for SimCSE; use with --method esimcse"
    ):
        make_config({**base, "method": "simcse", "dup_rate": 0.1})
    with pytest.raises(StsbenchError, match="missing --train-file"):
        make_config({"method": "simcse", "model": "m", "output": "o"})


def test_shipped_configs_load_with_the_paper_settings():
    packaged = Path(__file__).resolve().parents[1] / "stsbench" / "configs"  # package data
    configs = sorted(packaged.glob("*.yaml"))
    assert len(configs) >= 3
    for path in configs:
        cfg = make_config({"output": "runs/x"}, path)
        assert cfg.max_length == 32 and cfg.temperature == 0.05
    esim = make_config({"output": "o"}, packaged / "esimcse-bert-base-paper.yaml")
    assert (esim.batch_size, esim.lr, esim.dup_rate, esim.epochs, esim.eval_steps) == (64, 3e-5, 0.32, 1, 125)
    assert (esim.momentum, esim.queue_multiple, esim.repetition_kind) == (0.995, 2.5, "subword")
    moco = make_config({"output": "o"}, packaged / "mocose-bert-base-paper.yaml")
    assert (moco.batch_size, moco.lr, moco.weight_decay, moco.eval_steps) == (64, 3e-5, 1e-6, 100)
    assert (moco.ema_decay_start, moco.ema_decay_end, moco.fgsm_epsilon) == (0.75, 0.95, 5e-9)
    assert (moco.queue_size, moco.queue_start_size, moco.projection_layers, moco.predictor_layers) == (
        512,
        128,
        1,
        2,
    )
