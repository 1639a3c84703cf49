"""The first 20 fp32 CPU losses of every built-in method and config, pinned before the methods refactor (#38).

Each packaged BERT-base config (SimCSE, ESimCSE and MoCoSE in their paper and official flavours, supervised
SimCSE) trains 20 steps of batch 4 on the tiny BERT of the trainer tests, one thread; its logged losses must equal
``fixtures/golden_losses.json`` to 1e-6. The file was written by this module's ``record`` (``python
tests/test_golden_losses.py``) on main at the commit that added it, before any method moved; a refactor that
changes a number fails here. Slow: the main CI job only (the floors' torch may round differently).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parent / "fixtures" / "golden_losses.json"
CONFIGS = (
    "simcse-bert-base-paper",
    "simcse-bert-base-official",
    "esimcse-bert-base-paper",
    "esimcse-bert-base-official",
    "mocose-bert-base-paper",
    "mocose-bert-base-official",
    "simcse-sup-bert-base",
)
STEPS = 20


def losses(config: str, files: Path, out: Path) -> list[float]:
    """The first :data:`STEPS` losses of ``config`` on the tiny BERT (batch 4, queues cut to fit, one thread)."""
    import torch

    from stsbench.configs import config_path
    from stsbench.train.config import make_config
    from stsbench.train.loop import train

    sup = "sup" in config
    options = {
        "model": str(files / "tiny"),
        "train_file": str(files / ("nli.csv" if sup else "train.txt")),
        "data_dir": str(files / "data"),
        "output": str(out),
        "batch_size": 4,
        "max_steps": STEPS,
        "eval_steps": 1000,  # one dev check, at the end
        "eval_at_start": False,
        "log_steps": 1,
        "threads": 1,
        "seed": 42,
        "precision": "fp32",  # the official configs' fp16 needs a GPU: the pinned losses are fp32 CPU ones
        "device": "cpu",
    }
    if config.startswith("mocose"):  # the queue and its random start, cut to the tiny run
        options.update(queue_size=16, queue_start_size=8)
    torch.set_num_threads(1)
    train(make_config(options, config_path(config)), show_progress=False)
    records = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    return [r["loss"] for r in records if r.get("event") == "train"]


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS)
def test_the_first_losses_are_the_recorded_ones(config, files, tmp_path):
    golden = json.loads(GOLDEN.read_text())["losses"][config]
    got = losses(config, files, tmp_path / "run")
    assert len(got) == len(golden) == STEPS
    assert got == pytest.approx(golden, abs=1e-6, rel=0)


def record(root: Path) -> dict:
    """Train every config once and return the file's content (``python tests/test_golden_losses.py``)."""
    import tempfile

    import torch
    import transformers
    from conftest import (
        files as files_fixture,  # the trainer tests' tiny BERT and files, as pytest builds them
    )

    class _Factory:  # what the fixture asks of pytest's tmp_path_factory
        def mktemp(self, name: str) -> Path:
            return Path(tempfile.mkdtemp(prefix=name, dir=root))

    folder = files_fixture.__wrapped__(_Factory())
    return {
        "recorded_with": {"torch": torch.__version__, "transformers": transformers.__version__},
        "losses": {c: losses(c, folder, Path(tempfile.mkdtemp(dir=root)) / "run") for c in CONFIGS},
    }


if (
    __name__ == "__main__"
):  # python tests/test_golden_losses.py  (from the repository root, with the dev venv)
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    with tempfile.TemporaryDirectory() as tmp:
        GOLDEN.write_text(json.dumps(record(Path(tmp)), indent=1) + "\n")
