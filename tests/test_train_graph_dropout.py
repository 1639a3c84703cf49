"""Dropout under ``--cuda-graph``, written for a GPU: skipped without one, required by the GPU suite.

SimCSE's positive pair is dropout noise, so a replayed graph must draw fresh masks every replay, different ones
for the two views, at the rate p; and a replay must compute what an eager step computes from the same generator
state: a CUDA graph reads the generator's (seed, offset) at each replay and moves the offset on by what its
captured dropouts take, as eager dropouts do one by one. Tolerance: 1e-5 on fp32 losses, as the dropout-free
comparison of tests/test_train_graph.py.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from helpers import train_config

from stsbench.train.config import make_config
from stsbench.train.graph import GraphedStep, StaticSteps
from stsbench.train.loop import build, seed_everything, train
from stsbench.train.step import FiniteWatch, Precision

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("one_thread")]

P, BATCH, STEPS = 0.1, 8, 8
TOL = 1e-5  # fp32 losses, as without dropout


def _setup(files, tmp_path):
    cfg = make_config(
        {
            "method": "simcse",
            "model": str(files / "tiny"),
            "train_file": str(files / "train.txt"),
            "output": str(tmp_path / "out"),
            "data_dir": str(files / "data"),
            "batch_size": BATCH,
            "max_length": 16,
            "pad_to_max_length": True,
            "length_buckets": 1,
            "dropout": P,
            "device": "cuda",
        }
    )
    seed_everything(cfg.seed)
    model, _, method, optimizer = build(cfg, files / "tiny", "cuda")
    lines = [line for line in (files / "train.txt").read_text().splitlines() if line.strip()]
    rows = [[(lines[(i * BATCH + j) % len(lines)],) for j in range(BATCH)] for i in range(STEPS)]
    views = [method.make_views(r, np.arange(BATCH), np.random.default_rng(i)) for i, r in enumerate(rows)]
    return model.train(), method, optimizer, [v.to("cuda") for v in views]


def _masks(model):
    """The embedding dropout's zeros, written by the forward (a copy captured into the graph replays with it)."""
    box: dict[str, torch.Tensor] = {}

    def hook(module, inputs, out):
        if "mask" not in box:
            box["mask"] = torch.zeros(out.shape, dtype=torch.bool, device=out.device)
        box["mask"].copy_(out == 0)

    model.backbone.embeddings.dropout.register_forward_hook(hook)
    return box


def test_replays_draw_fresh_masks_at_rate_p_and_equal_eager_steps_from_the_same_state(files, tmp_path):
    model, method, optimizer, views = _setup(files, tmp_path / "graph")
    box = _masks(model)
    steps = GraphedStep(
        model, method, optimizer, max_grad_norm=1.0, precision=Precision(), watch=FiniteWatch("cuda")
    )
    states, losses, masks = [], [], []
    for i, v in enumerate(views):
        states.append(torch.cuda.get_rng_state())
        loss, _ = steps(v, lr=1e-5, step=i + 1)
        torch.cuda.synchronize()
        losses.append(float(loss))
        masks.append(box["mask"].clone())
    assert steps.graph is not None  # the steps after the warm-up were replays
    for mask in masks:
        anchor, positive = mask[:BATCH], mask[BATCH:]  # SimCSE encodes (x, x+) in one pass of 2B rows
        assert abs(float(mask.float().mean()) - P) < 0.02  # the rate is p
        assert float((anchor != positive).float().mean()) > P  # the two views' masks differ
    replays = masks[GraphedStep.EAGER :]
    assert all(not torch.equal(a, b) for a, b in zip(replays, replays[1:], strict=False))  # fresh every replay

    model, method, optimizer, views = _setup(files, tmp_path / "eager")
    eager = StaticSteps(
        model, method, optimizer, max_grad_norm=1.0, precision=Precision(), watch=FiniteWatch("cuda")
    )
    for i, v in enumerate(views):
        torch.cuda.set_rng_state(states[i])  # the (seed, offset) the graphed step started from
        loss, _ = eager(v, lr=1e-5, step=i + 1)
        assert abs(float(loss) - losses[i]) < TOL, (i, float(loss), losses[i])


def test_a_run_resumed_under_capture_continues_as_the_uninterrupted_one(files, tmp_path):
    """Kill at step 7 (saved at 6), resume: steps 7-12 replay from a new capture, from the saved generator."""

    class Killed(Exception):
        pass

    def config(out):
        return train_config(
            files,
            out,
            method="simcse",
            max_steps=12,
            save_steps=6,
            eval_steps=100,
            pad_to_max_length=True,
            cuda_graph=True,
            device="cuda",
            dropout=P,
        )

    def losses(out):
        log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
        return {r["step"]: r["loss"] for r in log if r["event"] == "train"}

    train(config(tmp_path / "full"), show_progress=False)

    def kill(step):
        if step == 7:
            raise Killed

    with pytest.raises(Killed):
        train(config(tmp_path / "cut"), show_progress=False, on_step=kill)
    train(config(tmp_path / "cut"), resume=True, show_progress=False)
    full, cut = losses(tmp_path / "full"), losses(tmp_path / "cut")
    assert sorted(cut) == list(range(1, 13))
    assert max(abs(full[s] - cut[s]) for s in range(7, 13)) < TOL
