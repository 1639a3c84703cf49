"""A training method from another package: one module and an entry point, and `stsbench train` runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import run_cli

# the whole method: its options, its class (SimCSE's loss times --toy-scale) and its spec
TOY = '''
"""A toy method: SimCSE's views and InfoNCE, the loss multiplied by --toy-scale."""

from __future__ import annotations

from pydantic import BaseModel

from stsbench.train.config import MethodSpec, option
from stsbench.train.methods.base import Method


class ToyOptions(BaseModel):
    """Toy: a scaled loss."""

    toy_scale: float = option(1.0, "Toy: multiply the contrastive loss by this.", gt=0)


class Toy(Method):
    name = "toy"

    def contrastive_loss(self, model, views):
        return self.cfg.toy_scale * super().contrastive_loss(model, views)


SPEC = MethodSpec("toy", "Toy", "toy_method:Toy", (ToyOptions,), {"lr": 1e-4})
'''


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """A folder that, on PYTHONPATH, installs the toy method: its module and its entry point."""
    root = tmp_path_factory.mktemp("plugin")
    (root / "toy_method.py").write_text(TOY)
    (root / "toy_method-0.1.dist-info").mkdir()
    (root / "toy_method-0.1.dist-info" / "entry_points.txt").write_text(
        "[stsbench.methods]\ntoy = toy_method:SPEC\n"
    )
    return root


def stsbench(plugin: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "stsbench", *args], env=env, capture_output=True, text=True, timeout=600
    )


def two_step_args(files: Path, out: Path, *options: str) -> list[str]:
    """``stsbench train`` for two steps on the tiny BERT, each step's loss logged."""
    args = ["train", "-m", str(files / "tiny"), "--train-file", str(files / "train.txt"), "-o", str(out)]
    args += ["--data-dir", str(files / "data"), "--batch-size", "4", "--max-steps", "2", "--eval-steps", "2"]
    return [*args, "--log-steps", "1", "--threads", "1", "--quiet", *options]


def losses(out: Path) -> list[float]:
    log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    return [r["loss"] for r in log if r["event"] == "train"]


@pytest.mark.usefixtures("one_thread")
def test_a_plugin_method_trains_with_its_own_option(plugin, files, tmp_path, capsys):
    # SimCSE in this process (the plugin is not needed), the toy in a process that finds its entry point
    code, _, err = run_cli(two_step_args(files, tmp_path / "simcse", "--method", "simcse"), capsys)
    assert code == 0, err
    result = stsbench(plugin, *two_step_args(files, tmp_path / "toy", "--method", "toy", "--toy-scale", "3"))
    assert result.returncode == 0, result.stderr
    simcse, toy = losses(tmp_path / "simcse"), losses(tmp_path / "toy")
    assert len(toy) == len(simcse) == 2
    # the same first batch and dropout: the toy's own loss, three times SimCSE's (its option reached it)
    assert toy[0] == pytest.approx(3 * simcse[0], rel=1e-6)
    saved = json.loads((tmp_path / "toy" / "stsbench.json").read_text())["training"]
    assert (saved["method"], saved["toy_scale"], saved["lr"]) == ("toy", 3.0, 1e-4)  # its option, its default


def test_a_plugin_method_is_in_the_cli_and_its_option_only_for_it(plugin):
    shown = " ".join(stsbench(plugin, "train", "--help").stdout.split())
    assert "ESimCSE, MoCoSE or Toy;" in shown and "|mocose|toy" in shown  # the command's help, --method
    assert "--toy-scale" in shown and "Toy: multiply the contrastive loss by this. (default: 1.0)" in shown
    assert "Toy: 0.0001" in shown  # its default for --lr
    refused = stsbench(plugin, "train", "--method", "simcse", "--toy-scale", "2", "-m", "m", "-o", "o")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "--toy-scale" in refused.stderr and "--method toy" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
