"""The torch floor pyproject declares is the one the trainer checks, and an older torch is one line.

pyproject said torch>=2.2 while the trainer calls torch.amp.GradScaler("cuda") (2.3) and the CPU kernel of
torch._fused_adamw_ (2.4): a user with torch 2.2 or 2.3 got an AttributeError or a missing-kernel error steps
into training. CI's torch is 2.13, so the floor itself is declared, not run (docs/development.md).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib
import torch
from helpers import run_cli

from stsbench.errors import StsbenchError
from stsbench.train import TORCH_FLOOR, check_torch

ROOT = Path(__file__).resolve().parent.parent


def test_pyproject_declares_the_floor_the_trainer_checks():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (torch_req,) = [d for d in deps if re.match(r"torch\b", d)]
    assert torch_req == "torch>=" + ".".join(map(str, TORCH_FLOOR)) == "torch>=2.4"
    assert "torch>=2.4" in (ROOT / "README.md").read_text() and "torch>=2.2" not in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("version", ["2.4.0", "2.4.1+cu121", "2.13.0+cpu", "3.0.0", "2.5.0a0+git1234"])
def test_a_torch_at_or_above_the_floor_passes(version):
    check_torch(version)  # 2.13 is above 2.4: compared as numbers, not as text


@pytest.mark.parametrize("version", ["2.2.0", "2.3.1+cu121", "1.13.1"])
def test_an_older_torch_is_refused_in_one_line(version):
    with pytest.raises(StsbenchError) as err:
        check_torch(version)
    assert f"torch {version}" in str(err.value) and "torch>=2.4" in str(err.value) and "\n" not in str(err.value)


def test_train_refuses_an_older_torch_before_anything_loads(files, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(torch, "__version__", "2.3.1+cu121")
    out = tmp_path / "run"
    args = ["train", "--method", "simcse", "-m", files / "tiny", "--train-file", files / "train.txt", "-o", out]
    code, _, err = run_cli([*args, "--data-dir", files / "data", "--max-steps", "1", "--optimizer", "hf-adamw"], capsys)
    assert code == 2 and err.strip().splitlines() == [
        "error: stsbench train needs torch >= 2.4 and this is torch 2.3.1+cu121; "
        "pip install 'torch>=2.4' (your CUDA or ROCm build of it)"
    ]
    assert not (out / "train_log.jsonl").exists()
