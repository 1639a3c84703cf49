"""Every checked-in train log's non-loss values, recomputed without a model by the methods' ``schedule``.

lr, epoch (every method) and MoCoSE's ema_decay and negatives, bit for bit (``==`` on the floats), from the
start record's config and train_rows alone: the same pure functions the training loop logged them with.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from stsbench.train.methods import base, mocose
from stsbench.train.methods.base import method_schedule

REPORTS = Path(__file__).resolve().parents[1] / "reports"
LOGS = sorted(REPORTS.glob("*/results/train/*/seed-*/train_log.jsonl"))
MEASURED = {"event", "step", "loss", "grad_norm", "time"}  # the record's frame, the loss and the step's own
LOSS_PARTS = {"contrastive", "mlm"}  # Method.loss's parts (mlm with mlm_weight > 0); host_parts are schedule


def runs() -> list[tuple[Path, dict, list[dict]]]:
    out = []
    for path in LOGS:
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        start = next(r for r in records if r.get("event") == "start")
        out.append((path, start, [r for r in records if r.get("event") == "train"]))
    return out


def mismatches(logs) -> list[str]:
    bad = []
    for path, start, trains in logs:
        for r in trains:
            got = method_schedule(r["step"], start["config"], start["train_rows"])
            want = {k: v for k, v in r.items() if k not in MEASURED | LOSS_PARTS}
            same = all(got[k] == v and type(got[k]) is type(v) for k, v in want.items())
            if got.keys() != want.keys() or not same:
                where = f"{start['config']['method']}: {path.relative_to(REPORTS)} step {r['step']}"
                bad.append(f"{where}: {got} != {want}")
    return bad


@pytest.fixture(scope="module")
def logs():
    found = runs()
    assert len(found) >= 100, f"expected the checked-in train logs under {REPORTS}, found {len(found)}"
    return found


def test_every_train_record_is_its_schedule(logs):
    assert sum(len(t) for _, _, t in logs) > 500
    assert {s["config"]["method"] for _, s, _ in logs} >= {"simcse", "esimcse", "mocose"}
    assert mismatches(logs) == []


def test_a_perturbed_lr_is_caught(logs, monkeypatch):
    real = base.linear_lr
    monkeypatch.setattr(base, "linear_lr", lambda *a, **k: real(*a, **k) * (1 + 2**-50))
    assert mismatches(logs)


def test_a_perturbed_ema_decay_is_caught(logs, monkeypatch):
    real = mocose.mocose_decay
    monkeypatch.setattr(mocose, "mocose_decay", lambda *a, **k: real(*a, **k) + 1e-15)
    bad = mismatches(logs)
    assert bad and all(b.startswith("mocose: ") for b in bad)


@pytest.mark.parametrize("start", ["random", "batches", "official"])
def test_mocose_negatives_follow_the_queue_as_it_fills(start):
    """The logs hold full queues only: here the real push and host_parts, step by step, as it fills."""
    import torch
    from torch import nn

    from stsbench.train.methods.mocose_options import parse_slices
    from stsbench.train.momentum import EmbeddingQueue

    cases = [(40, 5, None, 37), (200, 6, "2:9,30:150", 41), (16, 16, None, 40), (0, 0, None, 37)]
    for k, k_start, spec, rows in cases:
        config = {"method": "mocose", "queue_size": k, "queue_start_size": k_start, "queue_start": start}
        config |= {"queue_slice": spec, "ema_schedule": "run", "ema_decay_start": 0.75, "ema_decay_end": 0.95}
        config |= {"ema_schedule_steps": 100, "max_steps": None, "epochs": 3, "batch_size": 8, "lr": 3e-5}
        m = object.__new__(mocose.MoCoSE)
        nn.Module.__init__(m)
        m.cfg, m.queue = SimpleNamespace(**config, warmup_steps=0), EmbeddingQueue(k)
        m.start_items = m.start_count = None
        m.slices, m.updates, m.total_steps = parse_slices(spec, k) if spec else None, 0, 15
        if start == "official" and k > 0:  # as MoCoSE.init_new_layers starts it
            m.start_items, m.start_count = torch.zeros(k, 2), k_start
        elif start == "random" and k_start > 0:
            m.queue.push(torch.zeros(k_start, 2))
        for step in range(1, 16):  # 5 batches an epoch: 37 rows, the last of 5; 41, one row dropped
            got = method_schedule(step, {**config, "warmup_steps": 0}, rows)
            assert {n: got[n] for n in ("ema_decay", "negatives")} == m.host_parts(), (config, rows, step)
            m.updates += 1
            m.push(torch.zeros(min(8, rows - 8 * ((step - 1) % 5)), 2))
