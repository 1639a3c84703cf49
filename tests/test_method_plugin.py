"""A training method from another package: one module and an entry point, in `stsbench train`'s CLI.

That such a method trains, with every hook a built-in uses, is tests/test_plugin_hooks.py's.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import on_pythonpath, plugin_folder, run_cli_process

# the whole method: its options, its class (SimCSE's loss times --toy-scale) and its spec
TOY = '''
"""A toy method: SimCSE's views and InfoNCE, the loss multiplied by --toy-scale."""

from __future__ import annotations

import os

from pydantic import BaseModel

from stsbench.train.config import MethodSpec, TrainConfig, option
from stsbench.train.methods.base import Method

if os.environ.get("TOY_IMPORTED"):  # the test of when a plugin runs: this module's import leaves a mark
    with open(os.environ["TOY_IMPORTED"], "a") as mark:
        mark.write(f"imported with TrainConfig {TrainConfig.__name__}\\n")


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
    entry_points = "[stsbench.methods]\ntoy = toy_method:SPEC\n"
    return plugin_folder(tmp_path_factory.mktemp("plugin"), {"toy_method": TOY}, entry_points)


def stsbench(plugin: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli_process(list(args), env=on_pythonpath(plugin), timeout=600)


# importing the config, and naming every public name of it, runs no plugin; building a config does
IMPORTS = """
import importlib, pkgutil, sys
import stsbench.train.config as config
for module in pkgutil.iter_modules(config.__path__):
    importlib.import_module(f"stsbench.train.config.{module.name}")
from stsbench.train.config import TrainConfig, MethodSpec, option, make_config, finalize
print("after import:", open(sys.argv[1]).read() if __import__("os").path.exists(sys.argv[1]) else "nothing")
cfg = TrainConfig(method="toy", model="m", toy_scale=2.0)
print("after a config:", open(sys.argv[1]).read().strip(), cfg.toy_scale, cfg.lr)
"""


def test_importing_the_config_runs_no_plugin_and_a_plugin_may_import_the_config(plugin, tmp_path):
    mark = tmp_path / "mark"
    env = on_pythonpath(plugin, TOY_IMPORTED=str(mark))
    out = subprocess.run(
        [sys.executable, "-c", IMPORTS, str(mark)], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr
    assert "after import: nothing" in out.stdout
    # the plugin's module imported TrainConfig at its top, while the config read the plugins
    assert "after a config: imported with TrainConfig TrainConfig 2.0 0.0001" in out.stdout


def test_a_plugin_method_is_in_the_cli_and_its_option_only_for_it(plugin):
    shown = " ".join(stsbench(plugin, "train", "--help").stdout.split())
    assert "ESimCSE, MoCoSE or Toy;" in shown and "|mocose|toy" in shown  # the command's help, --method
    assert "--toy-scale" in shown and "Toy: multiply the contrastive loss by this. (default: 1.0)" in shown
    assert "Toy: 0.0001" in shown  # its default for --lr
    refused = stsbench(plugin, "train", "--method", "simcse", "--toy-scale", "2", "-m", "m", "-o", "o")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "--toy-scale" in refused.stderr and "--method toy" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
