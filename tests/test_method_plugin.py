"""A training method from another package: one module and an entry point, in `stsbench train`'s CLI.

That such a method trains, with every hook a built-in uses, is tests/test_plugin_hooks.py's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_a_plugin_method_is_in_the_cli_and_its_option_only_for_it(plugin):
    shown = " ".join(stsbench(plugin, "train", "--help").stdout.split())
    assert "ESimCSE, MoCoSE or Toy;" in shown and "|mocose|toy" in shown  # the command's help, --method
    assert "--toy-scale" in shown and "Toy: multiply the contrastive loss by this. (default: 1.0)" in shown
    assert "Toy: 0.0001" in shown  # its default for --lr
    refused = stsbench(plugin, "train", "--method", "simcse", "--toy-scale", "2", "-m", "m", "-o", "o")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "--toy-scale" in refused.stderr and "--method toy" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
