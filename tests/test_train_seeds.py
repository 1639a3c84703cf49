"""``stsbench train --seeds``: one run per seed in its own process, failures kept apart, resume, seeds.json."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import one_error_line, run_cli, train_args

from stsbench.commands.train import seed_executor, seed_threads, train_seeds
from stsbench.train.config import TrainConfig
from stsbench.train.seeds import failure_line, parse_seeds


def killing_python(tmp_path: Path, seed: int) -> str:
    """An interpreter stand-in that kills itself (SIGKILL) when started for ``--seed seed``."""
    script = tmp_path / "python-killing-one-seed"
    script.write_text(
        f'#!/bin/sh\ncase " $* " in *" --seed {seed} "*) kill -KILL $$;; esac\nexec {sys.executable} "$@"\n'
    )
    script.chmod(0o755)
    return str(script)


@pytest.mark.slow  # five training processes: about 50 s on the shared 2-core machine
def test_failed_and_killed_seeds_lose_nothing_and_resume_finishes_them(files, tmp_path, capsys, monkeypatch):
    out = tmp_path / "seeds"
    (out / "seed-2").mkdir(parents=True)
    (out / "seed-2" / "notes.txt").write_text("not a run")  # seed 2's process will refuse this folder
    code, _, err = run_cli(train_args(files, out, "--seeds", "1,2,3"), capsys)
    assert "seed-2 is not empty (started); pass --resume" in one_error_line(code, err)
    assert not (out / "seed-1").exists()  # refused before anything ran

    monkeypatch.setattr(sys, "executable", killing_python(tmp_path, 1))
    args = train_args(files, out, "--seeds", "1,2,3", "--parallel", "2", "--resume")
    code, printed, err = run_cli(args, capsys)
    monkeypatch.undo()
    line = one_error_line(code, err, 3)  # seeds that failed: exit status 3, not bad usage's 2
    assert "seed(s) 1, 2 failed" in line and "--resume" in line
    assert "seed 2: error: --output" in err and "no stsbench run wrote" in err  # the seed's own line
    runs = json.loads((out / "seeds.json").read_text())
    assert runs["kind"] == "stsbench.seed_runs" and runs["failed"] == [1, 2]
    one, two, three = runs["runs"]
    assert one["status"] == "failed" and one["error"] == "killed by SIGKILL"
    assert two["status"] == "failed" and "no stsbench run wrote" in two["error"]
    assert three["status"] == "finished" and three["best_step"] == 2 and three["path"] == "seed-3"
    assert runs["best_dev_spearman"]["n"] == 1 and runs["best_dev_spearman"]["low"] is None
    assert "seed" not in runs["training"] and runs["training"]["max_steps"] == 2
    assert "killed by SIGKILL" in printed
    log_three = (out / "seed-3" / "train_log.jsonl").read_text()

    (out / "seed-2" / "notes.txt").unlink()
    code, printed, err = run_cli(
        train_args(files, out, "--seeds", "1,2,3", "--parallel", "2", "--resume"), capsys
    )
    assert code == 0, err
    assert "seed 3: finished already" in err
    assert (out / "seed-3" / "train_log.jsonl").read_text() == log_three  # kept, not trained again
    runs = json.loads((out / "seeds.json").read_text())
    assert [r["status"] for r in runs["runs"]] == ["finished"] * 3 and runs["failed"] == []
    devs = [r["best_dev_spearman"] for r in runs["runs"]]
    best = runs["best_dev_spearman"]
    assert best["values"] == devs and best["mean"] == pytest.approx(np.mean(devs))
    assert best["std"] == pytest.approx(np.std(devs, ddof=1)) and best["seeds"] == [1, 2, 3]
    assert len(set(devs)) == 3  # each seed trained with its own --seed
    for s in (1, 2, 3):
        meta = json.loads((out / f"seed-{s}" / "stsbench.json").read_text())
        assert meta["training"]["seed"] == s
    assert "best STS-B dev Spearman over 3 finished seed(s)" in printed

    # a finished seed trained with other options than asked is refused, before anything runs
    code, _, err = run_cli(train_args(files, out, "--seeds", "1,2", "--resume", "--lr", "1e-4"), capsys)
    assert "seed-1 finished with other options than asked (lr:" in one_error_line(code, err)


@pytest.mark.parametrize(
    ("seeds", "message"),
    [
        ("1,,2", "has an empty entry"),
        ("a", "'a' is not an integer"),
        ("1,2,1", "seed 1 is given twice"),
        ("1,-2", "seed -2 is negative"),
    ],
)
def test_malformed_seeds_are_one_line(files, tmp_path, capsys, seeds, message):
    code, _, err = run_cli(train_args(files, tmp_path / "o", f"--seeds={seeds}"), capsys)
    assert message in one_error_line(code, err)
    assert not (tmp_path / "o").exists()


def test_seeds_refuses_seed_torchrun_and_lone_parallel(files, tmp_path, capsys, monkeypatch):
    out = tmp_path / "o"
    code, _, err = run_cli(train_args(files, out, "--seeds", "1,2", "--seed", "3"), capsys)
    assert "--seeds and --seed" in one_error_line(code, err)
    code, _, err = run_cli(train_args(files, out, "--parallel", "2"), capsys)
    assert "give them with --seeds" in one_error_line(code, err)
    monkeypatch.setenv("WORLD_SIZE", "2")
    code, _, err = run_cli(train_args(files, out, "--seeds", "1,2"), capsys)
    assert "launch one torchrun per seed" in one_error_line(code, err)
    assert not out.exists()


def test_parse_seeds_and_failure_lines():
    assert parse_seeds("5, 1,3") == [5, 1, 3]
    assert failure_line(0, ["error: no"]) is None
    assert failure_line(2, ["step 3", "error: the loss is nan at step 3"]) == "the loss is nan at step 3"
    assert failure_line(-signal.SIGKILL, ["step 3"]) == "killed by SIGKILL"
    assert failure_line(1, ["Traceback", "RuntimeError: boom"]) == "exited with status 1 (RuntimeError: boom)"


def test_parallel_processes_share_the_cores_on_cpu_and_are_dealt_the_gpus_on_cuda(monkeypatch):
    """On CPU each of the seeds' processes running at once gets cores / their number threads (``--threads``); on
    CUDA the executor deals the GPUs visible (tests/test_reproduce_gpus.py: how)."""
    import os

    import torch

    def settings(cfg: TrainConfig, parallel: int, jobs: int) -> tuple[int, int | None]:
        ex = seed_executor(cfg, parallel=parallel, per_gpu=1, jobs=jobs)
        assert ex.gpus == []  # on CPU no GPU is handed out
        return ex.slots, seed_threads(cfg, ex)

    cfg = TrainConfig(method="simcse", model="m", train_file="t.txt", output="o")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")  # visible, but no CUDA: the seeds train on CPU
    cpu = cfg.replace(device="cpu")
    assert settings(cpu, parallel=4, jobs=5) == (4, 2)
    assert settings(cfg, parallel=4, jobs=5) == (4, 2)  # no --device, no CUDA: CPU
    assert settings(cpu, parallel=4, jobs=2) == (2, 4)  # two seeds left: two processes, 4 threads each
    assert settings(cpu, parallel=1, jobs=5) == (1, None)  # one process: torch's own default
    assert settings(cpu.replace(threads=3), parallel=2, jobs=2) == (2, None)  # --threads given: theirs
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert settings(cfg.replace(device="cuda:1"), parallel=2, jobs=2) == (2, None)  # every process on cuda:1
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 3)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    from stsbench.reproduce import executors

    monkeypatch.setattr(executors, "gpu_device_files", lambda: True)  # a GPU driver's devices: torch asked
    ex = seed_executor(cfg.replace(device="cuda"), parallel=4, per_gpu=1, jobs=4)
    assert ex.gpus == ["0", "1", "2"] and seed_threads(cfg, ex) is None  # CUDA: the GPUs torch counts


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--seeds", "1,2", "--per-gpu", "0"), "Invalid value for '--per-gpu': 0 is not in the range x>=1"),
        (("--per-gpu", "2"), "--per-gpu shares a GPU among several seeds' processes; give them with --seeds"),
    ],
)
def test_bad_per_gpu_is_one_line(files, tmp_path, capsys, extra, message):
    code, _, err = run_cli(train_args(files, tmp_path / "o", *extra), capsys)
    assert message in one_error_line(code, err)
    assert not (tmp_path / "o").exists()


def test_train_seeds_refuses_per_gpu_below_one(tmp_path):
    from stsbench.errors import StsbenchError

    cfg = TrainConfig(method="simcse", model="m", train_file="t.txt", output=str(tmp_path / "o"))
    with pytest.raises(StsbenchError, match="--per-gpu must be at least 1"):
        train_seeds(cfg, [1, 2], {}, per_gpu=0)
    assert not (tmp_path / "o").exists()


def test_the_train_key_covers_the_code_that_starts_the_seeds_processes_not_where_they_run():
    from stsbench import sources

    train = {p.relative_to(sources.ROOT).as_posix() for p in sources.closure(sources.ENTRIES["train"])}
    assert {"train/seeds.py", "commands/train.py"} <= train
    # the executors say where a step runs, never what it computes: in no key
    assert "reproduce/executors.py" not in train
