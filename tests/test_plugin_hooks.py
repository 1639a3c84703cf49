"""A method and augmentations from another package, touching no stsbench file.

A temporary package installs, by entry points only, a toy method that uses every hook a built-in method uses
(its own views, a momentum encoder it EMA-updates, a queue of that encoder's keys, the static form a CUDA graph
replays, its frozen encoders, the traceable distance, the queue in checkpoints), and one toy augmentation at each
of the three stages (text, tokens, embeddings). ``stsbench train`` trains two steps of each; a script drives the
toy's static form through the steps a CUDA graph replays (eagerly, on this CPU).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import on_pythonpath, plugin_folder

TOY = '''
"""A toy momentum method: the positive view is the sentence reversed word by word; keys from an EMA copy."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from stsbench.train.config import MethodSpec, option
from stsbench.train.data import tokenize
from stsbench.train.methods.base import Method, Views, encode_bucketed
from stsbench.train.momentum import EmbeddingQueue, ema_update, traceable_distance


class ToyOptions(BaseModel):
    """Toy: a momentum encoder's decay and a queue."""

    toy_decay: float = option(0.9, "Toy: EMA decay of the momentum encoder.", ge=0, lt=1)
    toy_queue: int = option(8, "Toy: queued keys.", ge=0)
    toy_teacher: str | None = option(None, "Toy: a model folder whose config it loads (a stand-in teacher).")


class Toy(Method):
    name = "toy"

    def __init__(self, cfg, tokenizer, hidden_config):
        super().__init__(cfg, tokenizer, hidden_config)
        self.queue = EmbeddingQueue(cfg.toy_queue)
        self.momentum = None
        self.calls = {"views": 0, "after_step": 0, "make_static": 0}
        if cfg.toy_teacher:  # a model it loads beside its backbone: reproduce checks it is here before it starts
            from transformers import AutoConfig

            self.teacher = AutoConfig.from_pretrained(cfg.toy_teacher)

    def attach(self, model, generator=None):
        self.momentum = model.momentum_copy()  # a frozen EMA copy of the online encoder

    def make_views(self, rows, row_ids, rng):
        self.calls["views"] += 1
        texts = [r[0] for r in rows]
        flipped = [" ".join(reversed(t.split())) for t in texts]
        anchor = self.pad(tokenize(self.tokenizer, texts, self.cfg.max_length)["input_ids"])
        positive = self.pad(tokenize(self.tokenizer, flipped, self.cfg.max_length)["input_ids"])
        return Views(anchor, positive)

    def contrastive_loss(self, model, views):
        h, h_pos = self.pooled(model, [views.anchor, views.positive])
        return self.criterion(h, h_pos, self.queue.negatives())

    def loss(self, model, views):
        loss, parts = super().loss(model, views)
        return loss, {**parts, "queued": float(len(self.queue))}

    def after_step(self, model, views):
        self.calls["after_step"] += 1
        ema_update(self.momentum, model, self.cfg.toy_decay)
        self.queue.push(encode_bucketed(self.momentum, views.anchor).detach())

    def frozen_modules(self):
        return [self.momentum]

    def traceable_distance(self, global_batch):
        return traceable_distance(self.cfg.toy_decay, self.queue.size, global_batch)

    def static_ready(self):
        return self.queue.full

    def make_static(self):
        self.calls["make_static"] += 1
        self.queue.make_static()

    def extra_state(self):
        return {"queue": self.queue.state_dict()}

    def load_extra_state(self, state, device):
        self.queue.load_state_dict(state["queue"], device)


SPEC = MethodSpec(
    "toy", "Toy", "toy_plugin:Toy", (ToyOptions,), {"lr": 1e-4}, traceable_distance=True,
    model_options=("toy_teacher",),
)
'''

AUGMENT = '''
"""Toy augmentations, one a stage; each leaves a line in $TOY_AUGMENT_LOG when it runs."""

from __future__ import annotations

import os

import torch
from pydantic import BaseModel

from stsbench.train.augment.base import EmbeddingAugmentation, TextAugmentation, TokenAugmentation
from stsbench.train.config.options import AugmentationSpec
from stsbench.options import option


class CutoffOptions(BaseModel):
    toy_cutoff: float = option(0.1, "Toy: the share of embedding features cut off.", ge=0, lt=1)


def mark(stage):
    with open(os.environ["TOY_AUGMENT_LOG"], "a") as fh:
        fh.write(stage + "\\n")


class Shout(TextAugmentation):
    def texts(self, texts, rng):
        mark("text")
        keep = rng.random(len(texts)) < 0.5
        return [t.upper() if k else t for t, k in zip(texts, keep)]


class DropLast(TokenAugmentation):
    def tokens(self, ids, special, offsets, rng, row):
        mark("tokens")
        content = [i for i, s in enumerate(special) if not s]
        return ids if len(content) < 2 else ids[: content[-1]] + ids[content[-1] + 1 :]


class Cutoff(EmbeddingAugmentation):
    def embeddings(self, model, batch, special):
        mark("embeddings")
        x = batch["inputs_embeds"]
        keep = (torch.rand(x.shape[-1], device=x.device) >= self.cfg.toy_cutoff).to(x.dtype)
        return {**batch, "inputs_embeds": x * keep}


TEXT = AugmentationSpec("toy-text", "text", "toy_augment:Shout", views="positive")
TOKENS = AugmentationSpec("toy-tokens", "tokens", "toy_augment:DropLast", views="positive")
EMBEDDINGS = AugmentationSpec(
    "toy-embeddings", "embeddings", "toy_augment:Cutoff", views="both", options=(CutoffOptions,)
)
'''

STATIC = """
import json, sys
import numpy as np, torch
from stsbench.data.training import read_train_file
from stsbench.train.config import make_config
from stsbench.train.data import batch_rows
from stsbench.train.graph import StaticSteps
from stsbench.train.loop import build, seed_everything
from stsbench.train.step import FiniteWatch, Precision

files, out = sys.argv[1], sys.argv[2]
torch.set_num_threads(1)
cfg = make_config({"method": "toy", "model": files + "/tiny", "train_file": files + "/train.txt", "output": out,
                   "data_dir": files + "/data", "batch_size": 4, "toy_queue": 8, "pad_to_max_length": True,
                   "length_buckets": 1, "max_length": 16})
seed_everything(cfg.seed)
model, _, method, optimizer = build(cfg, files + "/tiny", "cpu")
steps = StaticSteps(model, method, optimizer, max_grad_norm=1.0, precision=Precision(), watch=FiniteWatch("cpu"))
data = read_train_file(cfg.train_file)
losses = []
for step in range(4):
    rows = batch_rows(data, seed=cfg.seed, epoch=0, index=step, batch_size=4)
    views = method.make_views([data.rows[i] for i in rows], rows, np.random.default_rng(step))
    loss, parts = steps(views, lr=1e-5, step=step + 1)
    losses.append(float(loss))
print(json.dumps({"calls": method.calls, "static": method.queue.static, "losses": losses}))
"""


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """A folder that, on PYTHONPATH, installs the toy method and the three toy augmentations by entry points."""
    entry_points = (
        "[stsbench.methods]\ntoy = toy_plugin:SPEC\n\n[stsbench.augmentations]\n"
        "toy-text = toy_augment:TEXT\ntoy-tokens = toy_augment:TOKENS\ntoy-embeddings = toy_augment:EMBEDDINGS\n"
    )
    modules = {"toy_plugin": TOY, "toy_augment": AUGMENT}
    return plugin_folder(tmp_path_factory.mktemp("plugin"), modules, entry_points)


def run(plugin: Path, args: list[str], log: Path | None = None) -> subprocess.CompletedProcess:
    env = on_pythonpath(plugin, OMP_NUM_THREADS="1", TOY_AUGMENT_LOG=str(log or plugin / "unused.log"))
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True, timeout=600)


def two_steps(files: Path, out: Path, *options: str) -> list[str]:
    args = ["-m", "stsbench", "train", "-m", str(files / "tiny"), "--train-file", str(files / "train.txt")]
    args += ["-o", str(out), "--data-dir", str(files / "data"), "--batch-size", "4", "--max-steps", "2"]
    return [*args, "--eval-steps", "2", "--log-steps", "1", "--threads", "1", "--quiet", *options]


def train_log(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]


def test_a_toy_momentum_method_trains_two_steps(plugin, files, tmp_path):
    done = run(plugin, two_steps(files, tmp_path / "toy", "--method", "toy", "--toy-queue", "4"))
    assert done.returncode == 0, done.stderr
    log = train_log(tmp_path / "toy")
    start = next(r for r in log if r["event"] == "start")
    assert start["traceable_distance"] == pytest.approx(1 / (1 - 0.9) + 4 / 4)  # its own eq. 4
    steps = [r for r in log if r["event"] == "train"]
    assert [r["queued"] for r in steps] == [0.0, 4.0]  # the first step's keys are the second's negatives
    assert all(r["loss"] == r["loss"] for r in steps)  # finite
    saved = json.loads((tmp_path / "toy" / "stsbench.json").read_text())["training"]
    assert (saved["method"], saved["toy_queue"], saved["lr"]) == ("toy", 4, 1e-4)  # its option, its default


def test_the_toy_methods_static_form_runs_the_steps_a_graph_replays(plugin, files, tmp_path):
    script = tmp_path / "static.py"
    script.write_text(STATIC)
    done = run(plugin, [str(script), str(files), str(tmp_path / "out")])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    # 4 keys a step, a queue of 8: two growing steps, then the ring (made static once) for the next two
    assert result["static"] is True and result["calls"]["make_static"] >= 1
    assert result["calls"]["after_step"] == 4 and result["calls"]["views"] == 4 and len(result["losses"]) == 4


def test_a_toy_augmentation_at_each_stage_trains_two_steps(plugin, files, tmp_path):
    """All three in one run, the embeddings one with an option of its own."""
    names = "toy-text,toy-tokens,toy-embeddings"
    log = tmp_path / "augment.log"
    args = ("--method", "simcse", "--augment", names, "--toy-cutoff", "0.5")
    done = run(plugin, two_steps(files, tmp_path / "aug", *args), log)
    assert done.returncode == 0, done.stderr
    assert set(log.read_text().split()) == {"text", "tokens", "embeddings"}  # each stage ran
    saved = json.loads((tmp_path / "aug" / "stsbench.json").read_text())["training"]
    assert (saved["augment"], saved["toy_cutoff"]) == (names, 0.5)
    assert len([r for r in train_log(tmp_path / "aug") if r["event"] == "train"]) == 2


def test_augmentations_are_refused_in_one_line(plugin, files, tmp_path):
    unknown = run(plugin, two_steps(files, tmp_path / "a", "--augment", "toy-txt"))
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert "unknown augmentation 'toy-txt'" in unknown.stderr and "toy-text" in unknown.stderr
    views = run(plugin, two_steps(files, tmp_path / "b", "--method", "mocose", "--augment", "toy-text"))
    assert views.returncode == 2 and "Traceback" not in views.stderr
    assert "--augment toy-text" in views.stderr and len(views.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "b" / "stsbench.json").exists()
    alone = run(plugin, two_steps(files, tmp_path / "c", "--method", "simcse", "--toy-cutoff", "0.5"))
    assert alone.returncode == 2 and "Traceback" not in alone.stderr
    assert "--toy-cutoff is an option of the augmentation toy-embeddings" in alone.stderr
    assert len(alone.stderr.strip().splitlines()) == 1 and not (tmp_path / "c").exists()
    shown = " ".join(run(plugin, ["-m", "stsbench", "train", "--help"]).stdout.split())
    assert "--toy-cutoff" in shown and "--augment" in shown


RECIPE = """name: toy-reproduction
title: "A toy method and a toy augmentation, reproduced"
flavour: mini
verdict: false
verdict_reason: a plugin's run, no published row
runs:
  - name: toy
    method: toy
    config: {config}
    overrides: {{model: {files}/tiny, train_file: {files}/train.txt, train_lines: null, max_steps: 2, eval_steps: 2,
                batch_size: 4, eval_batch_size: 64, lr: 1.0e-3, eval_at_start: false, toy_queue: 4,
                toy_teacher: {teacher}}}
    seeds: [1]
    evaluate: null
  - name: shout
    method: simcse
    config: simcse-minilm-cpu
    overrides: {{model: {files}/tiny, train_file: {files}/train.txt, train_lines: null, max_steps: 2, eval_steps: 2,
                batch_size: 4, eval_batch_size: 64, lr: 1.0e-3, eval_at_start: false, augment: toy-text}}
    seeds: [1]
    evaluate: null
report:
  title: "A toy method and a toy augmentation, reproduced"
"""


@pytest.mark.slow  # reproduce's processes (two trainings, a report): ~40 s; the floors job leaves orchestration out
def test_a_toy_method_and_augmentation_are_reproduced_and_reported_under_their_own_names(plugin, files, tmp_path):
    """A one-run recipe of the plugins': the dry run checks the model the method loads, the report names both."""
    recipe, out, config = tmp_path / "toy.yaml", tmp_path / "out", tmp_path / "toy-config.yaml"
    config.write_text("method: toy\nmax_length: 32\n")  # the plugin's config of its own, by its path
    recipe.write_text(RECIPE.format(files=files, teacher=tmp_path / "no-teacher", config=config))
    # the toy data folder's STS-B dev is a few pairs, not the canonical file: asked for, as a user would
    data = ["--data-dir", str(files / "data"), "--allow-modified-data"]
    args = ["-m", "stsbench", "reproduce", str(recipe), "--out", str(out), *data]
    dry = run(plugin, [*args, "--dry-run"])
    assert dry.returncode == 0 and "no-teacher is not a model folder" in dry.stdout, dry.stdout  # before a run
    refused = run(plugin, args)
    assert refused.returncode == 2 and "no-teacher" in refused.stderr and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not (out / "runs").exists()
    recipe.write_text(RECIPE.format(files=files, teacher=files / "tiny", config=config))
    log = tmp_path / "augment.log"
    done = run(plugin, args, log)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    saved = json.loads((out / "runs" / "toy" / "seed-1" / "stsbench.json").read_text())["training"]
    assert (saved["method"], saved["toy_teacher"]) == ("toy", str(files / "tiny"))
    assert set(log.read_text().split()) == {"text"}  # the augmentation ran in the other run's training
    report = (out / "report.md").read_text()
    row = next(line for line in report.splitlines() if line.startswith("| train/toy/seed-1 | "))  # training table
    assert row.split(" | ")[1] == "Toy", report  # its own name, not another method's (ESimCSE, as it was)
    assert not [line for line in report.splitlines() if "| ESimCSE |" in line or "| toy |" in line]
    (command,) = [line for line in report.splitlines() if line.startswith("| train/shout/seed-1 | stsbench train")]
    assert "--augment toy-text" in command  # the augmentation under its own name, in the run's command
