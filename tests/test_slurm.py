"""``stsbench reproduce --executor slurm`` on a real one-node Slurm cluster (#25 acceptance 3).

The cluster is ``scripts/slurm-local.sh``'s: CI starts it before the tests (``.ci/run``, which stops it at the
end); otherwise the fixture starts one in a temporary folder and stops it. Where it cannot start (no root, no
apt, no Slurm), the test skips with the script's reason.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from helpers import DATA, ROOT, reproduce_step, reproduction_figures, tiny_recipes

SCRIPT = ROOT / "scripts" / "slurm-local.sh"
CLUSTER = "stsbench-local"  # the script's ClusterName: a cluster the tests may submit to


def _ours(env: dict[str, str]) -> bool:
    """Whether SLURM_CONF in ``env`` names a running cluster of the script's (not a real cluster)."""
    if not env.get("SLURM_CONF"):
        return False
    try:
        shown = subprocess.run(  # noqa: S603
            ["scontrol", "show", "config"], capture_output=True, text=True, env=env, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return (
        shown.returncode == 0 and re.search(rf"^ClusterName\s*=\s*{CLUSTER}$", shown.stdout, re.M) is not None
    )


@pytest.fixture(scope="session")
def slurm():
    """SLURM_CONF of a running local cluster: CI's, else one started here (and stopped after the tests)."""
    pytest.importorskip(
        "submitit", reason="the Slurm executor needs submitit (pip install 'stsbench[slurm]')"
    )
    if _ours(dict(os.environ)):
        yield os.environ["SLURM_CONF"]
        return
    # not under pytest's temporary folders, which are private: munged runs as the munge user
    folder = Path(tempfile.gettempdir()) / f"stsbench-slurm-test-{os.getpid()}"
    env = {**os.environ, "SLURM_LOCAL_DIR": str(folder)}
    started = subprocess.run(  # noqa: S603
        ["bash", str(SCRIPT), "start"], capture_output=True, text=True, env=env, timeout=900, check=False
    )
    if started.returncode != 0:
        lines = started.stderr.strip().splitlines() or [f"exit status {started.returncode}"]
        pytest.skip(f"no local Slurm cluster: {lines[-1]}")
    try:
        yield started.stdout.strip().removeprefix("export SLURM_CONF=")
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop"], capture_output=True, env=env, timeout=300, check=False)  # noqa: S603


@pytest.fixture
def recipe(tmp_path) -> Path:
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    # two seeds, 6 steps, saved every 2: a job interrupted after step 2 has a state to resume
    recipe = {"name": "tiny-slurm", "title": "A tiny reproduction on Slurm", "steps": 6, "eval_steps": 6}
    tiny_recipes(tmp_path, {"tiny.yaml": {**recipe, "save_steps": 2, "analyses": False}})
    return tmp_path / "tiny.yaml"


def _reproduce(recipe: Path, out: Path, env: dict[str, str], *options: str) -> subprocess.Popen:
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "stsbench", "reproduce", str(recipe), "--out", str(out), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def _saved_and_running(out: Path, step: str, proc: subprocess.Popen, timeout: float = 240) -> str:
    """The Slurm job of a training step once it has saved a resumable state and not finished."""
    state = out / "runs" / "simcse" / step.rsplit("/", 1)[1] / "last" / "state.pt"
    end = time.time() + timeout
    while time.time() < end:
        assert proc.poll() is None, proc.stdout.read()
        rec = reproduce_step(out, f"train/simcse/{step.rsplit('/', 1)[1]}")
        if state.is_file() and rec.get("status") == "running":
            return rec["where"].removeprefix("slurm job ")
        time.sleep(0.05)
    raise AssertionError(f"{step} never saved a state while running")


@pytest.mark.slow  # a tiny reproduction on each executor, at once: ~1.5 min on a shared 2-core machine
def test_slurm_executor_equals_local_and_resumes_requeued_jobs(slurm, recipe, tmp_path):
    env = {**os.environ, "SLURM_CONF": slurm, "STSBENCH_DATA": str(DATA)}
    local = _reproduce(recipe, tmp_path / "local", env, "--parallel", "2")
    out = tmp_path / "slurm"
    proc = _reproduce(recipe, out, env, "--executor", "slurm", "--executor-option", "cpus_per_task=1")
    # seed 1: preempted as submitit's own test does it (SIGTERM, then USR2): submitit checkpoints and requeues;
    # seed 2: requeued by Slurm itself (as PreemptMode=REQUEUE does): started again from the top
    first = _saved_and_running(out, "train/simcse/seed-1", proc)
    subprocess.run(["scancel", "--signal=TERM", first], env=env, check=True)  # noqa: S603, S607
    subprocess.run(["scancel", "--signal=USR2", first], env=env, check=True)  # noqa: S603, S607
    second = _saved_and_running(out, "train/simcse/seed-2", proc)
    subprocess.run(["scontrol", "requeue", second], env=env, check=True)  # noqa: S603, S607
    text = proc.communicate(timeout=600)[0]
    assert proc.returncode == 0, text
    local_text = local.communicate(timeout=600)[0]
    assert local.returncode == 0, local_text

    state = json.loads((out / "reproduce.json").read_text())
    assert {r["status"] for r in state["steps"].values()} == {"done"}
    # the two seeds were one job array
    array = {r["where"].split("_")[0] for s, r in state["steps"].items() if s.startswith("train/")}
    assert first.split("_")[0] == second.split("_")[0] and len(array) == 1, state["steps"]
    for seed, job in (("seed-1", first), ("seed-2", second)):
        log = (out / "logs" / f"train__simcse__{seed}.log").read_text()
        starts = re.findall(r"^\[slurm job (\S+) on \S+(, restart \d+, resumed)?: (.*)\]$", log, re.M)
        assert [(j, bool(r)) for j, r, _ in starts] == [(job, False), (job, True)], log
        assert not starts[0][2].endswith("--resume") and starts[1][2].endswith(" --quiet --resume")
    # the requeued trainings resumed and gave every figure of the local executor's run
    assert reproduction_figures(out, logs=True) == reproduction_figures(tmp_path / "local", logs=True)
    assert reproduction_figures(out, logs=True)


def test_executor_options_are_submitits_parameters_or_one_line(tmp_path):
    pytest.importorskip("submitit")
    from stsbench.errors import StsbenchError
    from stsbench.reproduce.slurm import parse_options

    parsed = parse_options(
        {"partition": "gpu", "slurm_account": "lab", "timeout_min": "90", "mem_gb": "7.5", "setup": "[a, b]"}
    )
    assert parsed == {
        "slurm_partition": "gpu",
        "slurm_account": "lab",
        "timeout_min": 90,
        "mem_gb": 7.5,
        "slurm_setup": ["a", "b"],
    }
    with pytest.raises(StsbenchError, match=r"partiton: not a parameter .*did you mean partition"):
        parse_options({"partiton": "gpu"})
    with pytest.raises(StsbenchError, match="one process on one node"):
        parse_options({"nodes": "2"})
