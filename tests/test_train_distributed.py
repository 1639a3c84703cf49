"""Several processes (torchrun, gloo on CPU): one step of N x B equals one process with batch N*B; resume.

Starting torchrun and importing torch in each process costs more than these tiny runs, so one launch of two
processes (:mod:`distributed_worker`) trains every two-process run of this module, one after another; each test
checks its own run's outcome and outputs, against one-process runs it trains in its own process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import torch
from helpers import run_cli, shared_once

HERE = Path(__file__).resolve().parent
WORKER = HERE / "distributed_worker.py"
pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("one_thread")]  # torchrun process groups

METHODS = {
    "simcse": (),
    "esimcse": ("--no-repetition", "--queue-multiple", "1"),  # momentum encoder and global queue
    "mocose": ("--queue-size", "16", "--queue-start-size", "4", "--fgsm-epsilon", "1e-3"),
}
STEPS = ("--max-steps", "2", "--eval-steps", "2")  # two steps: the second sees the first's queue
# official ESimCSE under DDP: each process queues its own keys; one step
OFFICIAL = ("--no-repetition", "--queue-multiple", "1", "--queue-scope", "process", "--max-steps", "1")
OFFICIAL += ("--eval-steps", "1")


def torchrun(nproc: int, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
    return subprocess.run(
        [*cmd, *args], capture_output=True, text=True, timeout=600, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )


def train_args(files: Path, out: Path, method: str, batch: int, *extra: str) -> list[str]:
    return [
        "train",
        "--method",
        method,
        "--model",
        str(files / "tiny"),
        "--train-file",
        str(files / "train.txt"),
        "--output",
        str(out),
        "--data-dir",
        str(files / "data"),
        "--batch-size",
        str(batch),
        "--dropout",
        "0",  # the comparison needs the same function in every process: dropout off
        "--length-buckets",
        "1",
        "--log-steps",
        "1",
        "--eval-batch-size",
        "16",
        "--threads",
        "1",
        "-q",
        *extra,
    ]


def kill_options(files: Path, out: Path) -> dict:
    """30 rows, global batch 6: 5 steps an epoch, 10 in all; dropout on, every process its own masks."""
    return {
        "method": "mocose",
        "model": str(files / "tiny"),
        "train_file": str(files / "train.txt"),
        "data_dir": str(files / "data"),
        "output": str(out),
        "batch_size": 3,
        "queue_size": 12,
        "queue_start_size": 3,
        "epochs": 2,
        "eval_steps": 3,
        "save_steps": 2,
        "eval_batch_size": 16,
        "threads": 1,
    }


def run_worker(root: Path, name: str, jobs: list[dict]) -> subprocess.CompletedProcess:
    """One torchrun launch of two :mod:`distributed_worker` processes running ``jobs``."""
    (root / "status").mkdir(parents=True, exist_ok=True)
    spec = root / f"{name}.json"
    spec.write_text(json.dumps({"status": str(root / "status"), "jobs": jobs}))
    return torchrun(2, str(WORKER), str(spec))


@dataclass(frozen=True)
class Launch:
    """The module's shared launch: its folder (one output folder per job) and how it ended."""

    root: Path
    files: Path

    def outcomes(self, name: str) -> list[dict]:
        """Both processes' status of job ``name``; fails the test, with the launch's stderr, where one is missing."""
        found = [self.root / "status" / f"{name}.{rank}.json" for rank in (0, 1)]
        if not all(f.is_file() for f in found):
            ended = json.loads((self.root / "launched.json").read_text())
            pytest.fail(
                f"{name} did not run: the launch stopped before it (exit {ended['rc']}): {ended['stderr']}"
            )
        return [json.loads(f.read_text()) for f in found]

    def finished(self, name: str) -> Path:
        """The output folder of job ``name``, which both processes finished."""
        for outcome in self.outcomes(name):
            assert outcome["ok"], f"{name}: {outcome['message']}; {self.stderr()}"
        return self.root / name

    def stderr(self) -> str:
        return json.loads((self.root / "launched.json").read_text())["stderr"]


@pytest.fixture(scope="module")
def launch(files, tmp_path_factory) -> Launch:
    """Every two-process run of the module, in one torchrun launch (under xdist, once for all workers)."""

    def make(root: Path) -> None:
        jobs = [{"name": m, "cli": train_args(files, root / m, m, 4, *x, *STEPS)} for m, x in METHODS.items()]
        official = train_args(files, root / "official", "esimcse", 4, *OFFICIAL, "--ddp-gradient", "average")
        jobs.append({"name": "official", "cli": official})
        jobs.append({"name": "full", "train": kill_options(files, root / "full")})
        jobs.append({"name": "cut", "train": kill_options(files, root / "cut"), "kill_at": 5})
        done = run_worker(root, "launch", jobs)
        ended = {"rc": done.returncode, "stderr": done.stderr[-6000:], "files": str(files)}
        (root / "launched.json").write_text(json.dumps(ended))

    root = shared_once(tmp_path_factory, "torchrun-runs", make)
    # the launching worker's fixture files: the kill test resumes on them
    return Launch(root, Path(json.loads((root / "launched.json").read_text())["files"]))


def state(out: Path) -> dict:
    return torch.load(out / "last" / "state.pt", weights_only=True)


def logged(out: Path, step: int, key: str) -> float:
    log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    return next(r[key] for r in log if r["event"] == "train" and r["step"] == step)


def train_one_process(files: Path, out: Path, method: str, *extra: str, capsys) -> Path:
    code, _, err = run_cli(train_args(files, out, method, 8, *extra), capsys)
    assert code == 0, err[-2000:]
    return out


@pytest.mark.parametrize("method", list(METHODS))
def test_two_processes_with_batch_b_step_like_one_with_batch_2b(launch, files, tmp_path, method, capsys):
    two = launch.finished(method)
    one = train_one_process(files, tmp_path / "one", method, *METHODS[method], *STEPS, capsys=capsys)
    for step in (1, 2):
        for key in ("loss", "grad_norm"):  # AdamW hides a wrongly scaled gradient; the norm does not
            want = logged(one, step, key)
            # (float32 sums in another order: 1e-4 apart at most here; a mis-scaled gradient is 2x off)
            assert logged(two, step, key) == pytest.approx(want, rel=1e-3, abs=1e-7), key
    a, b = state(one), state(two)
    assert b["processes"] == 2 and len(b["rng_per_rank"]) == 2
    for part in ("model", "method"):
        assert a[part].keys() == b[part].keys()
        for k in a[part]:
            torch.testing.assert_close(b[part][k], a[part][k], rtol=1e-4, atol=1e-6, msg=f"{part}.{k}")
    qa, qb = (s["method_extra"].get("queue", {}).get("items") for s in (a, b))
    if qa is not None:  # the queue is global: the keys of both processes, in rank order
        torch.testing.assert_close(qb, qa, rtol=1e-4, atol=1e-6)
    meta = json.loads((two / "stsbench.json").read_text())
    assert meta["processes"] == 2 and meta["global_batch_size"] == 8
    if method == "mocose":
        assert meta["traceable_distance"]["end"] == pytest.approx(1 / 0.05 + 16 / 8)


def test_two_process_run_killed_and_resumed_ends_with_the_same_weights(launch):
    """Bit-equal weights after a kill and a resume (in fresh processes) of a two-process run.

    Relies only on what holds on any machine: every run here is launched the same way (1 thread a process,
    gloo), so the full and the resumed run use the same kernels and reduction order on this machine.
    """
    from stsbench.errors import StsbenchError
    from stsbench.train.config import make_config
    from stsbench.train.loop import train

    full = launch.finished("full")
    cut_opts = kill_options(launch.files, launch.root / "cut")
    # killed after step 5, state saved at step 4
    assert [o["message"] for o in launch.outcomes("cut")] == ["killed at step 5"] * 2
    assert json.loads((launch.root / "cut" / "last" / "progress.json").read_text())["step"] == 4
    resumed = run_worker(launch.root, "resumed", [{"name": "resumed", "train": cut_opts, "resume": True}])
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    a, b = state(full), state(launch.root / "cut")
    assert a["step"] == b["step"] == 10
    for part in ("model", "method"):
        for k in a[part]:
            assert torch.equal(a[part][k], b[part][k]), f"{part}.{k}"
    assert torch.equal(a["method_extra"]["queue"]["items"], b["method_extra"]["queue"]["items"])
    with pytest.raises(StsbenchError, match="saved by 2"):  # another number of processes (one): refused
        train(make_config(cut_opts), resume=True, show_progress=False)


def test_official_ddp_average_halves_the_gradient_and_each_process_queues_its_own_keys(
    launch, files, tmp_path, capsys
):
    """``--ddp-gradient average`` (official SimCSE/ESimCSE under DDP) and ``--queue-scope process`` (official ESimCSE).

    Two processes of batch 4 against one of batch 8: the same global loss at step 1, half its gradient
    norm (DDP averages what each process back-propagates through its own slice), and each process's queue
    holds its own 4 keys, which together are the 8 keys of the one-process run.
    """
    two = launch.finished("official")
    one = train_one_process(files, tmp_path / "one", "esimcse", *OFFICIAL, capsys=capsys)
    assert logged(two, 1, "loss") == pytest.approx(logged(one, 1, "loss"), rel=1e-3, abs=1e-7)
    assert logged(two, 1, "grad_norm") == pytest.approx(logged(one, 1, "grad_norm") / 2, rel=1e-3)
    a, b = state(one), state(two)
    queues = [extra_state["queue"]["items"] for extra_state in b["method_extra_per_rank"]]
    assert [q.shape[0] for q in queues] == [4, 4]  # 1 x the process's batch, its own keys
    # the momentum encoder moved by 0.005 x one AdamW step, equal up to Adam's eps on a halved gradient
    torch.testing.assert_close(torch.cat(queues), a["method_extra"]["queue"]["items"], rtol=1e-3, atol=1e-5)
