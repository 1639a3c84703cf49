"""The first 20 fp32 CPU losses of every built-in method and config, pinned before the methods refactor.

Each packaged BERT-base config (SimCSE, ESimCSE and MoCoSE in their paper and official flavours, supervised
SimCSE) trains 20 steps of batch 4 on the tiny BERT of the trainer tests, one thread; its logged losses must equal
``fixtures/golden_losses.json`` to 1e-6. The file was written by this module's ``record`` (``python
tests/test_golden_losses.py``) on main before any method moved (32eb15c; a second CPU's entry at 487860b); a
refactor that changes a number fails here. Slow: the main CI job only (the floors' torch may round differently).
A case added later (``python tests/test_golden_losses.py --add CASE``, one machine) names its commit in ``added``.

fp32 losses depend on the CPU: the same code, torch and seed gave losses up to 2.9e-6 apart after 20 steps on two
machines of this project (MKL and oneDNN pick their kernels, and so their order of additions, by CPU vendor and
instruction set). The file holds one set of losses per machine kind (:func:`machine`); the losses must equal
those of this machine's kind, or of any recorded kind. On a kind with none recorded, losses within
:data:`OTHER_CPU` of a recorded set skip with the difference named (rounding of another CPU; a refactor that
draws or adds differently moves losses by 1e-3 and more), and further off fail.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

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
# a packaged config with an augmentation (``CONFIG+AUGMENT``): what the editions train beside the configs above
# (cpu-mini's SimCSE with word deletion), so that every method x augmentation x precision an edition trains has
# golden losses before a carry-over of the editions' trainings; added later than the rest, its losses carry the commit they were
# recorded at in the file's ``added``
AUGMENTED = ("simcse-bert-base-paper+delete-one-word",)
CASES = CONFIGS + AUGMENTED
STEPS = 20
OTHER_CPU = (
    1e-4  # another CPU's rounding after 20 steps (measured: 2.9e-6), far below a changed computation's
)


def machine() -> str:
    """The kind of CPU the losses were computed on: its vendor and torch's instruction set for it."""

    vendor = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("vendor_id"):
                vendor = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{vendor} {torch.backends.cpu.get_cpu_capability()}"


def losses(config: str, files: Path, out: Path) -> list[float]:
    """The first :data:`STEPS` losses of ``config`` on the tiny BERT (batch 4, queues cut to fit, one thread)."""

    from stsbench.configs import config_path
    from stsbench.train.config import make_config
    from stsbench.train.loop import train

    config, _, augment = config.partition("+")
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
    if augment:
        options["augment"] = augment
    torch.set_num_threads(1)
    train(make_config(options, config_path(config)), show_progress=False)
    records = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    return [r["loss"] for r in records if r.get("event") == "train"]


@pytest.mark.slow
@pytest.mark.parametrize("config", CASES)
def test_the_first_losses_are_the_recorded_ones(config, files, tmp_path):
    machines = json.loads(GOLDEN.read_text())["machines"]
    recorded = {kind: entry for kind, entry in machines.items() if config in entry["losses"]}
    assert recorded, f"no losses recorded for {config}: python tests/test_golden_losses.py --add {config}"
    got = losses(config, files, tmp_path / "run")
    assert len(got) == STEPS
    off = {
        kind: max(abs(a - b) for a, b in zip(got, entry["losses"][config], strict=True))
        for kind, entry in recorded.items()
    }
    kind = machine()
    if kind in recorded:
        assert off[kind] <= 1e-6, f"{config} on {kind}: losses {off[kind]:.2g} from the recorded ones"
        return
    closest = min(off, key=off.get)
    if off[closest] <= 1e-6:
        return
    assert off[closest] <= OTHER_CPU, (
        f"{config}: losses {off[closest]:.2g} from the recorded ones ({closest})"
    )
    pytest.skip(f"no losses recorded on a {kind} CPU; {off[closest]:.1e} from those of {closest} (rounding)")


def record(root: Path, cases: tuple[str, ...] = CASES) -> dict:
    """Train each case once and return this machine's entry (``python tests/test_golden_losses.py``)."""
    import tempfile

    import transformers
    from helpers import make_train_files  # the trainer tests' tiny BERT and files, as the fixture builds them

    folder = make_train_files(Path(tempfile.mkdtemp(prefix="train", dir=root)))
    return {
        "recorded_with": {"torch": torch.__version__, "transformers": transformers.__version__},
        "losses": {c: losses(c, folder, Path(tempfile.mkdtemp(dir=root)) / "run") for c in cases},
    }


def add_case(content: dict, case: str, root: Path, commit: str) -> dict:
    """``content`` (the file) with ``case``'s losses added to this machine's entry, recorded at ``commit``."""
    machines = dict(content["machines"])
    entry = machines[machine()]
    entry["losses"][case] = record(root, (case,))["losses"][case]
    entry.setdefault("added", {})[case] = commit
    return {"machines": machines}


def add_machine(content: dict, entry: dict, commit: str) -> dict:
    """``content`` (the file) with ``entry`` (:func:`record`'s) as this machine's losses, recorded at ``commit``."""
    machines = dict(content.get("machines", {}))
    machines[machine()] = {**entry, "commit": commit}
    return {"machines": machines}


if (
    __name__ == "__main__"
):  # python tests/test_golden_losses.py  (from the repository root, with the dev venv)
    import tempfile

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import subprocess

    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        content = json.loads(GOLDEN.read_text()) if GOLDEN.exists() else {}
        if sys.argv[1:2] == ["--add"]:  # python tests/test_golden_losses.py --add CASE: one case, this machine
            content = add_case(content, sys.argv[2], Path(tmp), commit)
        else:
            content = add_machine(content, record(Path(tmp)), commit)
        GOLDEN.write_text(json.dumps(content, indent=1) + "\n")
