"""Several processes (torchrun, gloo on CPU): one step of N x B equals one process with batch N*B; resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent
pytestmark = pytest.mark.slow  # every test starts torchrun process groups


def torchrun(nproc: int, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}"]
    return subprocess.run(
        [*cmd, *args],
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, "OMP_NUM_THREADS": "1"},
    )


def train_args(files: Path, out: Path, method: str, batch: int, *extra: str) -> list[str]:
    return [
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


def state(out: Path) -> dict:
    return torch.load(out / "last" / "state.pt", weights_only=True)


def logged(out: Path, step: int, key: str) -> float:
    log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    return next(r[key] for r in log if r["event"] == "train" and r["step"] == step)


@pytest.mark.parametrize(
    ("method", "extra"),
    [
        ("simcse", ()),
        ("esimcse", ("--no-repetition", "--queue-multiple", "1")),  # momentum encoder and global queue
        ("mocose", ("--queue-size", "16", "--queue-start-size", "4", "--fgsm-epsilon", "1e-3")),
    ],
)
def test_two_processes_with_batch_b_step_like_one_with_batch_2b(files, tmp_path, method, extra):
    steps = ("--max-steps", "2", "--eval-steps", "2")  # two steps: the second sees the first's queue
    one = subprocess.run(
        [
            sys.executable,
            "-m",
            "stsbench",
            "train",
            *train_args(files, tmp_path / "one", method, 8, *extra, *steps),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert one.returncode == 0, one.stderr[-2000:]
    two = torchrun(
        2, "-m", "stsbench", "train", *train_args(files, tmp_path / "two", method, 4, *extra, *steps)
    )
    assert two.returncode == 0, two.stderr[-3000:]
    for step in (1, 2):
        for key in ("loss", "grad_norm"):  # AdamW hides a wrongly scaled gradient; the norm does not
            want = logged(tmp_path / "one", step, key)
            # (float32 sums in another order: 1e-4 apart at most here; a mis-scaled gradient is 2x off)
            assert logged(tmp_path / "two", step, key) == pytest.approx(want, rel=1e-3, abs=1e-7), key
    a, b = state(tmp_path / "one"), state(tmp_path / "two")
    assert b["processes"] == 2 and len(b["rng_per_rank"]) == 2
    for part in ("model", "method"):
        assert a[part].keys() == b[part].keys()
        for k in a[part]:
            torch.testing.assert_close(b[part][k], a[part][k], rtol=1e-4, atol=1e-6, msg=f"{part}.{k}")
    qa, qb = (s["method_extra"].get("queue", {}).get("items") for s in (a, b))
    if qa is not None:  # the queue is global: the keys of both processes, in rank order
        torch.testing.assert_close(qb, qa, rtol=1e-4, atol=1e-6)
    meta = json.loads((tmp_path / "two" / "stsbench.json").read_text())
    assert meta["processes"] == 2 and meta["global_batch_size"] == 8
    if method == "mocose":
        assert meta["traceable_distance"]["end"] == pytest.approx(1 / 0.05 + 16 / 8)


def test_two_process_run_killed_and_resumed_ends_with_the_same_weights(files, tmp_path):
    """Bit-equal weights after a kill and a resume of a two-process run.

    Relies only on what holds on any machine: every run here is launched the same way (1 thread a process,
    gloo), so the full and the resumed run use the same kernels and reduction order on this machine.
    """
    worker = [str(HERE / "distributed_worker.py")]
    opts = {
        "method": "mocose",
        "model": str(files / "tiny"),
        "train_file": str(files / "train.txt"),
        "data_dir": str(files / "data"),
        "batch_size": 3,
        "queue_size": 12,
        "queue_start_size": 3,
        "epochs": 2,
        "eval_steps": 3,
        "save_steps": 2,
        "eval_batch_size": 16,
        "threads": 1,
    }  # 30 rows, global batch 6: 5 steps an epoch, 10 in all; dropout on, every process its own masks
    full = torchrun(2, *worker, json.dumps({**opts, "output": str(tmp_path / "full")}), "0")
    assert full.returncode == 0, full.stderr[-3000:]
    cut_opts = json.dumps({**opts, "output": str(tmp_path / "cut")})
    killed = torchrun(2, *worker, cut_opts, "5")  # killed after step 5, state saved at step 4
    assert killed.returncode != 0 and "killed at step 5" in killed.stderr
    assert json.loads((tmp_path / "cut" / "last" / "progress.json").read_text())["step"] == 4
    resumed = torchrun(2, *worker, cut_opts, "0", "resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    a, b = state(tmp_path / "full"), state(tmp_path / "cut")
    assert a["step"] == b["step"] == 10
    for part in ("model", "method"):
        for k in a[part]:
            assert torch.equal(a[part][k], b[part][k]), f"{part}.{k}"
    assert torch.equal(a["method_extra"]["queue"]["items"], b["method_extra"]["queue"]["items"])
    one = torchrun(1, *worker, cut_opts, "0", "resume")  # another number of processes: refused
    assert one.returncode != 0 and "saved by 2" in one.stderr


def test_official_ddp_average_halves_the_gradient_and_each_process_queues_its_own_keys(files, tmp_path):
    """``--ddp-gradient average`` (official SimCSE/ESimCSE under DDP) and ``--queue-scope process`` (official ESimCSE).

    Two processes of batch 4 against one of batch 8: the same global loss at step 1, half its gradient
    norm (DDP averages what each process back-propagates through its own slice), and each process's queue
    holds its own 4 keys, which together are the 8 keys of the one-process run.
    """
    extra = ("--no-repetition", "--queue-multiple", "1", "--queue-scope", "process", "--max-steps", "1")
    extra += ("--eval-steps", "1")
    one = torchrun(1, "-m", "stsbench", "train", *train_args(files, tmp_path / "one", "esimcse", 8, *extra))
    assert one.returncode == 0, one.stderr[-2000:]
    args = train_args(files, tmp_path / "two", "esimcse", 4, *extra, "--ddp-gradient", "average")
    two = torchrun(2, "-m", "stsbench", "train", *args)
    assert two.returncode == 0, two.stderr[-3000:]
    want_loss = logged(tmp_path / "one", 1, "loss")
    assert logged(tmp_path / "two", 1, "loss") == pytest.approx(want_loss, rel=1e-3, abs=1e-7)
    want_norm = logged(tmp_path / "one", 1, "grad_norm")
    assert logged(tmp_path / "two", 1, "grad_norm") == pytest.approx(want_norm / 2, rel=1e-3)
    a, b = state(tmp_path / "one"), state(tmp_path / "two")
    queues = [extra_state["queue"]["items"] for extra_state in b["method_extra_per_rank"]]
    assert [q.shape[0] for q in queues] == [4, 4]  # 1 x the process's batch, its own keys
    # the momentum encoder moved by 0.005 x one AdamW step, equal up to Adam's eps on a halved gradient
    torch.testing.assert_close(torch.cat(queues), a["method_extra"]["queue"]["items"], rtol=1e-3, atol=1e-5)
