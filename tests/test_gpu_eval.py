"""The GPU call's cold STS suite on all-MiniLM-L6-v2's architecture and tokenizer with weights drawn on
the device from a seed (``benchmarks/eval_speed.py --random-weights SEED``), since its 87 MiB of weights cannot
travel in a 64 MiB call. Here on the CPU, with the config shrunk to 2 layers: the machinery, not the speed."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest
from helpers import ROOT

from stsbench.encoders.resolve import embedded_model_path


def weightless(path: Path) -> Path:
    """all-MiniLM-L6-v2's config (cut to 2 layers), tokenizer and sentence-transformers files, no weights."""
    shutil.copytree(
        embedded_model_path(), path, ignore=shutil.ignore_patterns("model.safetensors*", "pytorch_model.bin")
    )
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 2}, indent=2))
    return path


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_random_weights_run_the_suite_against_the_oracle_on_the_same_draw(tmp_path, data_dir):
    """stsbench's rows (CLI cold and warm, in process cold and warm) equal SentEval's on the drawn weights, the
    table says whose weights these are not, and the draw is the same for the same seed (another seed differs)."""
    from eval_speed import draw_weights

    model = weightless(tmp_path / "minilm-no-weights")
    assert not any(p.name.startswith(("model.safetensors", "pytorch_model")) for p in model.iterdir())
    md = tmp_path / "eval_speed.md"
    cmd = [
        sys.executable,
        str(ROOT / "benchmarks" / "eval_speed.py"),
        "--device",
        "cpu",
        "--model",
        str(model),
    ]
    cmd += ["--random-weights", "0", "--data-dir", str(data_dir), "--markdown", str(md)]
    cmd += ["--tasks", "STS16", "--extra-dtype", "", "--no-explain", "--threads", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    text = md.read_text()
    assert (
        "**random weights (seed 0, drawn on cpu), not " in text and "Weights drawn from seed 0 on cpu" in text
    )
    assert "expected (`--expect`" not in text  # the real weights' figures do not apply
    figures = {
        row.split(" | ")[0].lstrip("| "): float(row.rstrip(" |").split(" | ")[-1])
        for row in text.splitlines()
        if row.startswith("| ") and "[random weights, seed 0]" in row
    }
    oracle = figures.pop("SentEval fork (oracle) on cpu [random weights, seed 0]")
    assert len(figures) == 4 and set(figures.values()) == {oracle}, figures
    assert "- every float32 row's figures equal to the oracle's: holds" in text

    drawn = re.search(r"model\.safetensors sha256 ([0-9a-f]{16})", text).group(1)
    draws = [draw_weights(model, seed, "cpu", tmp_path / f"draw-{i}")[1] for i, seed in enumerate((0, 0, 1))]
    assert draws[0] == draws[1] and draws[0].startswith(drawn) and draws[2] != draws[0]
    assert sha256(tmp_path / "draw-0" / "model.safetensors") == draws[0]
    assert sorted(p.name for p in (tmp_path / "draw-0").iterdir()) == sorted(
        [p.name for p in model.iterdir()] + ["model.safetensors"]
    )


def test_a_row_that_differs_from_the_oracle_fails_the_table():
    """With --random-weights the oracle is the one reference: a row off by 0.01 is named and the check fails (main then exits 1)."""
    from eval_speed import table

    args = Namespace(
        tasks=["STS16"], random_weights=3, device="cpu", batch_size=8, model="/tmp/random-seed3-minilm"
    )
    rows = [("stsbench, cold cache (in process)", 1.0, {"STS16": 46.64})]
    oracle = {"STS16": 46.64}
    text, ok = table(args, rows, oracle, 2.0, {"STS16": 80.0}, 10, ("all-MiniLM-L6-v2", 0.5, "ab" * 32))
    assert ok and "not all-MiniLM-L6-v2's" in text and "[random weights, seed 3]" in text
    rows.append(("`stsbench run` CLI, warm cache (new process)", 0.2, {"STS16": 46.65}))
    text, ok = table(args, rows, oracle, 2.0, {"STS16": 80.0}, 10, ("all-MiniLM-L6-v2", 0.5, "ab" * 32))
    assert not ok and "FAILS" in text and "  - differs: `stsbench run` CLI, warm cache (new process)" in text
