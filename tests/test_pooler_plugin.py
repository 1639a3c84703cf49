"""A pooler from another package (``stsbench.poolers`` entry point) trains, and its checkpoint evaluates with it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from helpers import SENTENCES, on_pythonpath, plugin_folder, run_cli_process

# max pooling: none of the five built-ins (SimCSE's) computes it
MAX_POOL = '''
def max_pool(outputs, attention_mask):
    """Masked max over the last layer's tokens."""
    hidden = outputs.last_hidden_state
    masked = hidden.masked_fill(attention_mask.unsqueeze(-1) == 0, float("-inf"))
    return masked.max(dim=1).values
'''


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """A folder that, on PYTHONPATH, installs the ``max`` pooler: its module and its entry point."""
    entry_points = "[stsbench.poolers]\nmax = max_pooler:max_pool\n"
    return plugin_folder(tmp_path_factory.mktemp("pooler-plugin"), {"max_pooler": MAX_POOL}, entry_points)


def stsbench(plugin: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli_process(list(args), env=on_pythonpath(plugin), timeout=600)


def train_args(files: Path, out: Path, *options: str) -> list[str]:
    args = ["train", "-m", files / "tiny", "--train-file", files / "train.txt", "-o", out]
    args += ["--data-dir", files / "data", "--batch-size", "4", "--max-steps", "2", "--eval-steps", "2"]
    return [*args, "--method", "simcse", "--threads", "1", "--quiet", *options]


def test_a_plugin_pooler_trains_and_its_checkpoint_evaluates_with_it(plugin, files, tmp_path, monkeypatch):
    out = tmp_path / "max"
    trained = stsbench(plugin, *train_args(files, out, "--pooler", "max"))
    assert trained.returncode == 0, trained.stderr
    meta = json.loads((out / "stsbench.json").read_text())
    assert (meta["pooler"], meta["training"]["pooler"]) == ("max", "max")
    # sentence-transformers has no module for it: no modules.json that would give other vectors than stsbench's
    assert not (out / "modules.json").exists() and meta["sentence_transformers"] is False

    data = ["--data-dir", files / "data", "--allow-modified-data", "--cache-dir", tmp_path / "cache"]
    data += ["--output", tmp_path / "results"]  # not ./results: the checkout's, which the README's check then reads
    evaluated = stsbench(plugin, "run", "--model", out, "--tasks", "STS-B", "--mode", "dev", *data, "--format", "json")
    assert evaluated.returncode == 0, evaluated.stderr
    scored = json.loads(evaluated.stdout)
    assert scored["pooler"] == "max"
    # the figure the trainer selected the checkpoint by (its own max pooling), measured again from the saved folder
    assert scored["scores"]["STSBenchmark"] == pytest.approx(meta["best_dev_spearman"] * 100, abs=0.006)

    # the saved model's vectors are the max pooling of its backbone's last layer
    import torch
    from transformers import AutoModel, AutoTokenizer

    from stsbench.encoders import load_encoder
    from stsbench.encoders.pooling import POOLER_REGISTRY

    monkeypatch.syspath_prepend(str(plugin))
    POOLER_REGISTRY.register("max", "max_pooler:max_pool")
    try:
        got = load_encoder(str(out), use_cache=False, device="cpu").encode(SENTENCES[:4])
    finally:
        POOLER_REGISTRY.unregister("max")
    tok, bert = AutoTokenizer.from_pretrained(out), AutoModel.from_pretrained(out).eval()
    batch = tok(SENTENCES[:4], padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = bert(**batch).last_hidden_state
    want = hidden.masked_fill(batch["attention_mask"].unsqueeze(-1) == 0, float("-inf")).max(1).values
    assert np.allclose(got, want.numpy(), atol=1e-5)
    assert not np.allclose(got, hidden[:, 0].numpy(), atol=1e-3)  # not [CLS], the default


def test_an_unknown_pooler_is_refused_in_one_line_naming_the_registered_ones(plugin, files, tmp_path):
    refused = stsbench(plugin, *train_args(files, tmp_path / "o", "--pooler", "maxx"))
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert "unknown pooler 'maxx'" in refused.stderr and "did you mean 'max'" in refused.stderr
    assert "cls, cls_before_pooler, avg, avg_first_last, avg_top2, max" in refused.stderr
    assert not (tmp_path / "o").exists()  # refused before anything was written
