"""A K-GPU training step, started as ``reproduce``'s local executor starts it (torchrun), lives and dies with it.

Every such step once killed itself at start: its workers were told to follow the reproduce process,
whose PID was not their parent's (torchrun's). Here two processes on CPU with gloo (what ``--gpus 2`` starts,
without the GPUs), through :meth:`LocalExecutor.submit` and ``Job.command()``, finish a few steps; and
``kill -9`` of the process that started them still ends torchrun and its workers.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stsbench.reproduce.executors import Job, LocalExecutor, Resources

pytestmark = pytest.mark.slow  # torchrun and two processes importing torch


def train_job(files: Path, out: Path, steps: int) -> Job:
    """``train`` of the tiny BERT as a two-process step (``--gpus 2``), one thread a process."""
    args = ["train", "--method", "simcse", "--model", files / "tiny", "--train-file", files / "train.txt"]
    args += ["--output", out, "--data-dir", files / "data", "--batch-size", "2", "--max-steps", str(steps)]
    args += ["--eval-steps", str(steps), "--no-eval-at-start", "--log-steps", "1", "--threads", "1", "-q"]
    return Job(
        "train/simcse/seed-1",
        tuple(map(str, args)),
        log=out.parent / f"{out.name}.log",
        cwd=out.parent,
        resources=Resources(gpus=2, cpus=1),
        distributed=True,
    )


def events(out: Path) -> list[str]:
    try:
        lines = (out / "train_log.jsonl").read_text().splitlines()
    except FileNotFoundError:
        return []
    return [json.loads(x)["event"] for x in lines if x.strip()]


def wait_for(what, timeout: float, every: float = 0.2) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if what():
            return True
        time.sleep(every)
    return bool(what())


def children(pid: int) -> list[int]:
    """The PIDs whose parent is ``pid``."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie, ended and not yet reaped, is not)."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_two_process_training_started_by_the_local_executor_finishes(files, tmp_path):
    out = tmp_path / "run"
    job = train_job(files, out, steps=3)
    handle = LocalExecutor(gpus=[]).submit(job)  # the executor's environment: its lifeline, threads
    assert wait_for(lambda: handle.poll() is not None, timeout=240, every=0.5)
    log = job.log.read_text()
    assert handle.poll() == 0, log
    assert events(out)[-1] == "end" and events(out).count("train") == 3, log
    assert json.loads((out / "stsbench.json").read_text())["training"]["max_steps"] == 3


# the reproduce process: starts the step as its local executor does, says torchrun's PID, waits to be killed
PARENT = """
import json, sys, time
from pathlib import Path
from stsbench.reproduce.executors import Job, LocalExecutor, Resources
spec = json.loads(sys.argv[1])
job = Job(spec["id"], tuple(spec["args"]), Path(spec["log"]), Path(spec["cwd"]),
          resources=Resources(gpus=2, cpus=1), distributed=True)
print(LocalExecutor(gpus=[]).submit(job).proc.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_the_process_that_started_it_ends_torchrun_and_its_workers(files, tmp_path):
    out = tmp_path / "run"
    job = train_job(files, out, steps=100_000)
    spec = {"id": job.id, "args": job.args, "log": str(job.log), "cwd": str(job.cwd)}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, json.dumps(spec)], stdout=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    workers: list[int] = []
    torchrun = 0
    try:
        assert parent.stdout is not None
        torchrun = int(parent.stdout.readline())
        # both workers past their start (the lifeline is set first thing), training
        assert wait_for(lambda: events(out).count("train") >= 2, timeout=240), job.log.read_text()
        workers = children(torchrun)
        assert len(workers) == 2 and all(map(alive, workers)), job.log.read_text()
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert wait_for(lambda: not any(map(alive, [torchrun, *workers])), timeout=60), job.log.read_text()
    finally:
        for pid in [*workers, torchrun]:  # a failed check leaves nothing training
            if pid and alive(pid):
                os.kill(pid, signal.SIGKILL)
        if parent.poll() is None:
            parent.kill()
            parent.wait()
