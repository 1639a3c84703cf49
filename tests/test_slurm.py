"""``stsbench reproduce --executor slurm`` on a real one-node Slurm cluster.

The cluster is ``scripts/slurm-local.sh``'s: CI starts it before the tests (``.ci/run``, which stops it at the
end); otherwise, opted in with ``STSBENCH_SLURM_TESTS=1`` (the script apt-installs slurm-wlm and munge as root, so
a plain ``pytest`` never does), the fixture starts one in a temporary folder and stops it; without either the test
skips and says how to opt in. Where it cannot start (no root, no apt, no Slurm), the test skips with the script's
reason. The other tests here need no cluster.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from helpers import (
    DATA,
    ROOT,
    reproduce_status,
    reproduce_step,
    reproduction_figures,
    tiny_folder,
    tiny_reproduction,
)

SCRIPT = ROOT / "scripts" / "slurm-local.sh"
CLUSTER = "stsbench-local"  # the script's ClusterName: a cluster the tests may submit to
OPT_IN = "STSBENCH_SLURM_TESTS"  # =1: the fixture may start a cluster (.ci/run sets it)


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
    """SLURM_CONF of a running local cluster: CI's, else one started here (and stopped after the tests), opted in
    with STSBENCH_SLURM_TESTS=1."""
    pytest.importorskip(
        "submitit", reason="the Slurm executor needs submitit (pip install 'stsbench[slurm]')"
    )
    if _ours(dict(os.environ)):
        yield os.environ["SLURM_CONF"]
        return
    if os.environ.get(OPT_IN) != "1":
        pytest.skip(
            f"no local Slurm cluster running: set {OPT_IN}=1 to start a local Slurm cluster (apt-installs "
            "slurm-wlm and munge as root), or run .ci/run"
        )
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
def recipe(tmp_path_factory) -> Path:
    """The reproduce tests' tiny recipe: two seeds, 6 steps saved every 2 (a job stopped after step 2 has a state
    to resume), an analysis and the verdict (:data:`helpers.TINY`)."""
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    return tiny_folder(tmp_path_factory) / "tiny.yaml"


def _reproduce(recipe: Path, out: Path, env: dict[str, str], *options: str) -> subprocess.Popen:
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "stsbench", "reproduce", str(recipe), "--out", str(out), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )


def _starts(out: Path, seed: str) -> list[tuple[str, str, str]]:
    """Each start of a seed's Slurm job, from its log: (job id, how it started again or "", command line)."""
    log = out / "logs" / f"train__simcse__{seed}.log"
    text = log.read_text() if log.is_file() else ""
    return re.findall(
        r"^\[slurm job (\S+) on \S+(?:, restart \d+, (resumed|started over))?: (.*)\]$", text, re.M
    )


def _running(
    out: Path, seed: str, proc: subprocess.Popen, *, saved: bool, starts: int, timeout: float = 240
) -> str:
    """The Slurm job of a seed's training once its ``starts``-th start runs (and, if ``saved``, has saved a
    resumable state since: the first save is at step 2), the training not finished."""
    state = out / "runs" / "simcse" / seed / "last" / "state.pt"
    end = time.time() + timeout
    while time.time() < end:
        assert proc.poll() is None, proc.stdout.read()
        rec = reproduce_step(out, f"train/simcse/{seed}")
        if len(_starts(out, seed)) == starts and state.is_file() == saved and rec.get("status") == "running":
            return rec["where"].removeprefix("slurm job ")
        time.sleep(0.05)
    raise AssertionError(f"{seed}: start {starts} never ran {'with' if saved else 'without'} a saved state")


def _local_reproduction(tmp_path_factory, found: dict[str, object]) -> None:
    try:
        found["out"] = tiny_reproduction(tmp_path_factory)
    except BaseException as exc:  # noqa: BLE001 - raised again in the test's thread
        found["error"] = exc


@pytest.mark.slow  # a tiny reproduction on Slurm, against the reproduce tests' local one (shared): ~1 min
@pytest.mark.slurm  # starts a Slurm cluster (apt-installing slurm-wlm and munge as root) with STSBENCH_SLURM_TESTS=1
def test_slurm_executor_equals_local_and_resumes_requeued_jobs(slurm, recipe, tmp_path_factory, tmp_path):
    env = {**os.environ, "SLURM_CONF": slurm, "STSBENCH_DATA": str(DATA)}
    out = tmp_path / "slurm"
    proc = _reproduce(recipe, out, env, "--executor", "slurm", "--executor-option", "cpus_per_task=1")
    # meanwhile, the same recipe by the local executor (--parallel 2), unless the reproduce tests made it already
    local: dict[str, object] = {}
    thread = threading.Thread(target=_local_reproduction, args=(tmp_path_factory, local))
    thread.start()
    # seed 1: preempted as submitit's own test does it (SIGTERM, then USR2) after its first save: submitit
    # checkpoints (the step's process is killed at once) and requeues, and the training resumes; seed 2: at its
    # time limit (USR2) before its first save (nothing to resume: it starts over), then requeued by Slurm itself
    # (as PreemptMode=REQUEUE does) after a save: it resumes
    second = _running(out, "seed-2", proc, saved=False, starts=1)  # the seeds start at once: seed 2 first
    subprocess.run(["scancel", "--signal=USR2", second], env=env, check=True)  # noqa: S603, S607
    first = _running(out, "seed-1", proc, saved=True, starts=1)
    subprocess.run(["scancel", "--signal=TERM", first], env=env, check=True)  # noqa: S603, S607
    subprocess.run(["scancel", "--signal=USR2", first], env=env, check=True)  # noqa: S603, S607
    assert _running(out, "seed-2", proc, saved=True, starts=2) == second
    subprocess.run(["scontrol", "requeue", second], env=env, check=True)  # noqa: S603, S607
    text = proc.communicate(timeout=600)[0]
    assert proc.returncode == reproduce_status(out), text
    thread.join(timeout=900)
    if "error" in local:
        raise local["error"]  # type: ignore[misc]

    state = json.loads((out / "reproduce.json").read_text())
    assert {r["status"] for r in state["steps"].values()} == {"done"}
    # the two seeds were one job array
    array = {r["where"].split("_")[0] for s, r in state["steps"].items() if s.startswith("train/")}
    assert first.split("_")[0] == second.split("_")[0] and len(array) == 1, state["steps"]
    for seed, job, again in (("seed-1", first, ["resumed"]), ("seed-2", second, ["started over", "resumed"])):
        starts = _starts(out, seed)
        assert [(j, how) for j, how, _ in starts] == [(job, ""), *((job, how) for how in again)], starts
        assert not starts[0][2].endswith("--resume") and starts[-1][2].endswith(f"/{seed} --resume")
        assert all(" --quiet" not in line for _, _, line in starts)  # each log holds its step's output (36.10)
        if seed == "seed-2":  # started over: no --resume, which would fail on a run with no saved state
            assert starts[1][2].endswith((f"/{seed}", f"/{seed} --overwrite")), starts[1]
    # the requeued trainings resumed or started over and gave every figure of the local executor's run
    assert reproduction_figures(out, logs=True) == reproduction_figures(local["out"], logs=True)
    assert reproduction_figures(out, logs=True)


def test_a_training_stopped_before_its_first_save_starts_over_and_one_saved_resumes(
    tmp_path_factory, tmp_path
):
    """What a training's job runs when it starts again (requeued, preempted): ``--resume`` needs a saved state."""
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.executors import make_job
    from stsbench.reproduce.plan import build_plan

    plan = build_plan(load_recipe(tiny_folder(tmp_path_factory) / "tiny.yaml"), tmp_path / "o")
    step = plan.step("train/simcse/seed-1")
    job = make_job(plan, step, ("--resume",), 0)  # a rerun's job: this session resumed it
    after = job.command(resumed=True)[3:]  # after "python -m stsbench"
    assert job.command()[3:] == [*step.args, "--resume"] and after == list(step.args)  # no folder yet
    step.folder.mkdir(parents=True)
    (step.folder / "train_log.jsonl").write_text('{"event": "start", "step": 0}\n')  # started, nothing saved
    assert job.command(resumed=True)[3:] == [*step.args, "--overwrite"]
    (step.folder / "last").mkdir()
    (step.folder / "last" / "state.pt").write_bytes(b"saved")
    assert job.command(resumed=True)[3:] == [*step.args, "--resume"]
    assert make_job(plan, plan.step("evaluate/simcse"), (), 0).command(resumed=True)[3:] == list(
        plan.step("evaluate/simcse").args
    )  # a step that is no training runs again as it ran


def test_executor_options_are_submitits_parameters_or_one_line(tmp_path):
    pytest.importorskip("submitit")
    from stsbench.errors import StsbenchError
    from stsbench.reproduce.executors import parse_options

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


def test_a_restarted_jobs_process_waits_for_its_previous_attempts_lock(tmp_path, monkeypatch):
    """Slurm may start a requeued job while its previous attempt's process is still being killed (KillWait)."""
    from stsbench.reproduce.executors import RESTART_LOCK_WAIT_S, Job, StepCommand

    monkeypatch.delenv("STSBENCH_LOCK_WAIT_S", raising=False)
    code = "import os; print('wait=' + os.environ.get('STSBENCH_LOCK_WAIT_S', 'none'))"
    job = Job("x", ("-c", code), tmp_path / "log.txt", tmp_path)
    monkeypatch.setattr(Job, "command", lambda self, resumed=False: [sys.executable, *self.args])
    assert StepCommand(job)() == 0
    assert StepCommand(job, restarted=True)() == 0
    monkeypatch.setenv("SLURM_RESTART_COUNT", "1")  # requeued by Slurm itself
    assert StepCommand(job)() == 0
    lines = [ln for ln in job.log.read_text().splitlines() if ln.startswith("wait=")]
    assert lines == ["wait=none", f"wait={RESTART_LOCK_WAIT_S}", f"wait={RESTART_LOCK_WAIT_S}"]


def test_a_stop_signal_while_the_steps_process_starts_still_stops_it(tmp_path, monkeypatch):
    """submitit's USR2 (or SIGTERM) handler calls checkpoint(); a signal that came while ``Popen`` ran found no
    process to kill, and the step's process, in a session of its own, trained on after its job was requeued."""
    import signal

    from stsbench.reproduce.executors import Job, StepCommand

    code = "print([ln for ln in open('/proc/self/status') if ln.startswith('SigBlk')][0]); import time; time.sleep(20)"
    job = Job("x", ("-c", code), tmp_path / "log.txt", tmp_path)
    monkeypatch.setattr(Job, "command", lambda self, resumed=False: [sys.executable, *self.args])
    step = StepCommand(job)
    real_popen = subprocess.Popen

    def popen_then_signalled(*args, **kwargs):  # the signal comes before Popen has returned
        proc = real_popen(*args, **kwargs)
        deadline = time.monotonic() + 60
        while "SigBlk:" not in job.log.read_text() and time.monotonic() < deadline:  # the child has started
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGUSR2)
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen_then_signalled)
    checkpoints = []
    previous = signal.signal(signal.SIGUSR2, lambda *_: checkpoints.append(step.checkpoint()))
    try:
        assert step() == -signal.SIGKILL  # stopped, not slept through
    finally:
        signal.signal(signal.SIGUSR2, previous)
    assert len(checkpoints) == 1 and checkpoints[0].function.restarted
    blocked = int(job.log.read_text().split("SigBlk:")[-1].split()[0], 16)
    assert not blocked & (
        1 << (signal.SIGUSR2 - 1) | 1 << (signal.SIGTERM - 1)
    )  # the process's own mask: clear
