"""The static form of a method's state (what ``--cuda-graph`` replays), checked on CPU against the growing form.

A CUDA graph replays fixed kernels on fixed memory, so ESimCSE's and MoCoSE's queues turn into rings
once full and MoCoSE's eta into a device tensor (:mod:`stsbench.train.graph`). The capture itself needs
a GPU (tests/test_train_graph.py); everything it replays runs here eagerly, step for step against the
loop's own steps.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import loop_or_static_steps

from stsbench.train.augment.repetition import Repetition
from stsbench.train.momentum import EmbeddingQueue, ema_update

pytestmark = pytest.mark.usefixtures("one_thread")


def test_a_ring_queue_holds_the_rows_of_the_growing_queue_in_order():
    growing, ring = EmbeddingQueue(5), EmbeddingQueue(5)
    rows = torch.arange(40, dtype=torch.float32).reshape(20, 2)
    for q in (growing, ring):
        q.push(rows[:3])
        q.push(rows[3:6])
    assert ring.full and not ring.static
    ring.make_static()
    kept = ring.ring
    for a, b in [(6, 8), (8, 9), (9, 14), (14, 20)]:  # shorter, one, equal to and longer than the queue
        growing.push(rows[a:b])
        ring.push(rows[a:b])
        assert len(ring) == len(growing) == 5
        assert torch.equal(ring.negatives(), growing.negatives())
    assert ring.ring is kept  # written in place: a captured graph keeps pointing at it
    assert torch.equal(ring.state_dict()["items"], growing.state_dict()["items"])
    ring.clear()  # the official ESimCSE's epoch reset: growing again, the ring's memory kept
    assert len(ring) == 0 and not ring.full
    ring.push(rows[:5])
    ring.make_static()
    assert ring.ring is kept and torch.equal(ring.negatives(), rows[:5])


def test_only_a_full_queue_turns_static():
    q = EmbeddingQueue(4)
    q.push(torch.zeros(3, 2))
    with pytest.raises(ValueError, match="3 of 4"):
        q.make_static()


def test_ema_with_a_tensor_decay_is_the_ema_with_a_number():
    torch.manual_seed(0)
    online, by_number = torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)
    by_tensor = torch.nn.Linear(8, 8)
    by_tensor.load_state_dict(by_number.state_dict())
    ema_update(by_number, online, 0.85)
    ema_update(by_tensor, online, torch.tensor(0.85))
    for a, b in zip(by_number.parameters(), by_tensor.parameters(), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("sampling", ["paper", "official"])
@pytest.mark.parametrize("kind", ["subword", "word", "mask", "stopword"])
def test_no_repeated_view_is_longer_than_the_padded_length(tokenizer, kind, sampling):
    repetition = Repetition.for_tokenizer(tokenizer, kind, 0.32, sampling)
    rng = np.random.default_rng(0)
    words = "the quick brown fox jumps over a lazy dog while unbelievably tall giraffes watch".split()
    for max_length in (8, 16, 32):
        for _ in range(60):
            text = " ".join(rng.choice(words, size=int(rng.integers(1, 30))))
            enc = tokenizer(
                text,
                truncation=True,
                max_length=max_length,
                return_special_tokens_mask=True,
                return_offsets_mapping=True,
            )
            out = repetition.apply(enc["input_ids"], enc["special_tokens_mask"], enc["offset_mapping"], rng)
            assert len(out) <= repetition.longest(max_length)


@pytest.mark.parametrize(
    "opts",
    [
        {"method": "esimcse", "queue_multiple": 2.0},
        {
            "method": "esimcse",
            "queue_multiple": 1.5,
            "momentum_mlp": "online",
            "repetition_sampling": "official",
        },
        {"method": "esimcse", "queue_multiple": 2.0, "queue_reset_each_epoch": True},
    ],
    ids=["momentum-mlp", "official", "reset-each-epoch"],
)
def test_esimcse_static_steps_are_the_loops_steps_bit_for_bit(tiny_bert, data_dir, tmp_path, opts):
    """The ring queue and the fixed-length repeated view change nothing: the same losses, queue and weights."""
    growing = loop_or_static_steps(tiny_bert, data_dir, tmp_path / "growing", False, 12, **opts)
    static = loop_or_static_steps(tiny_bert, data_dir, tmp_path / "static", True, 12, **opts)
    assert static[0] == growing[0]
    assert static[1] == growing[1]
    assert (
        len(static[2]) == 1
    )  # one shape every step: anchor at --max-length, positive at the longest repetition
    assert torch.equal(static[3], growing[3])
    assert static[4].queue.static  # a ring again after the reset: filled in two steps, static for four
    for a, b in zip(static[5].parameters(), growing[5].parameters(), strict=True):
        assert torch.equal(a, b)
    for a, b in zip(
        static[4].momentum_encoder.parameters(), growing[4].momentum_encoder.parameters(), strict=True
    ):
        assert torch.equal(a, b)


@pytest.mark.parametrize(
    "opts",
    [
        {"ema_schedule": "run"},
        {
            "ema_schedule": "steps",
            "ema_schedule_steps": 20,
            "queue_slice": "2:10",
            "key_gradient": "official",
        },
        {"ema_schedule": "fixed", "projection_layers": 0, "predictor_layers": 0},
    ],
    ids=["paper", "official-slices", "no-heads"],
)
def test_mocose_static_steps_follow_the_loopsloop_or_static_steps(tiny_bert, data_dir, tmp_path, opts):
    """Ring queue and a device-tensor eta: the loop's losses, log parts and queue up to EMA rounding."""
    opts = {"method": "mocose", "queue_size": 12, "queue_start_size": 4, **opts}
    growing = loop_or_static_steps(tiny_bert, data_dir, tmp_path / "growing", False, 10, **opts)
    static = loop_or_static_steps(tiny_bert, data_dir, tmp_path / "static", True, 10, **opts)
    assert static[0][:3] == growing[0][:3]  # the queue fills in two steps: identical until the ring starts
    np.testing.assert_allclose(static[0], growing[0], rtol=1e-5)
    for a, b in zip(static[1], growing[1], strict=True):
        assert a["ema_decay"] == b["ema_decay"] and a["negatives"] == b["negatives"]
    assert static[4].queue.static and static[4].updates == growing[4].updates == 10
    torch.testing.assert_close(static[3], growing[3], rtol=1e-4, atol=1e-5)
