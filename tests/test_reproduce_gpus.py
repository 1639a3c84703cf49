"""The local executor's GPUs, for ``reproduce --gpus K`` and for ``train --seeds --parallel N``: a request that can
never fit is refused before anything runs, a job waits for its GPUs and never starts with all of them visible,
``--per-gpu K`` lets K processes share one, and the scheduler never waits forever."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DATA, run_cli, tiny_folder

from stsbench.errors import StsbenchError
from stsbench.reproduce.executors import Job, LocalExecutor, Resources, make_executor


def _job(name: str, gpus: int, tmp_path: Path) -> Job:
    return Job(name, ("--version",), tmp_path / f"{name}.log", tmp_path, resources=Resources(gpus=gpus))


def test_a_job_asking_for_more_gpus_than_visible_never_fits(tmp_path):
    two = LocalExecutor(gpus=["0", "1"])
    assert two.never_fits(_job("a", 2, tmp_path)) is None
    assert "asks for 3 GPUs (--gpus 3) and 2 are visible (0,1); pass --gpus 2" in two.never_fits(_job("b", 3, tmp_path))
    none = LocalExecutor(gpus=[])
    assert "sees none" in none.never_fits(_job("c", 1, tmp_path))
    assert none.never_fits(_job("d", 0, tmp_path)) is None  # CPU: any number of jobs


def test_once_every_gpu_is_taken_the_next_job_waits_and_never_sees_them_all(tmp_path, started):
    ex = LocalExecutor(parallel=3, gpus=["0", "1"])
    first, second, third = (_job(n, 1, tmp_path) for n in ("first", "second", "third"))
    assert ex.fits(first)
    h1 = ex.submit(first)
    assert ex.fits(second)
    h2 = ex.submit(second)
    assert not ex.fits(third)  # every GPU taken: it waits (it used to start with all GPUs visible)
    with pytest.raises(StsbenchError, match="asks for 1 GPUs; 0 are free"):
        ex.submit(third)
    assert [e["CUDA_VISIBLE_DEVICES"] for e in started] == ["0", "1"]
    while h1.poll() is None:
        pass
    assert ex.fits(third)
    h3 = ex.submit(third)
    assert started[-1]["CUDA_VISIBLE_DEVICES"] == "0"  # the GPU the first job gave back
    for h in (h2, h3):
        while h.poll() is None:
            pass
    cpu = LocalExecutor(parallel=2, gpus=[])
    cpu.submit(_job("cpu", 0, tmp_path)).proc.wait()
    assert started[-1]["OMP_NUM_THREADS"] == str(cpu.threads)  # on CPU: threads, no GPU handed out


def test_per_gpu_lets_that_many_processes_share_a_gpu_the_least_shared_first(tmp_path, started):
    ex = LocalExecutor(parallel=5, gpus=["0", "1"], per_gpu=2)
    handles = [ex.submit(_job(n, 1, tmp_path)) for n in ("a", "b", "c")]
    assert [e["CUDA_VISIBLE_DEVICES"] for e in started] == ["0", "1", "0"]
    assert ex.free == ["1"]  # GPU 1 has a place left, GPU 0 none
    assert not ex.fits(_job("two", 2, tmp_path))  # a torchrun job takes two GPUs, never one GPU twice
    handles.append(ex.submit(_job("d", 1, tmp_path)))
    assert not ex.fits(_job("e", 1, tmp_path)) and ex.free == []
    for h in handles:
        while h.poll() is None:
            pass
    assert ex.free == ["0", "1"] and ex.fits(_job("two", 2, tmp_path))
    ex.submit(_job("two", 2, tmp_path)).proc.wait()
    assert started[-1]["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_per_gpu_below_one_or_off_the_local_executor_is_one_line(tmp_path, capsys):
    with pytest.raises(StsbenchError, match="--per-gpu must be at least 1"):
        LocalExecutor(gpus=["0"], per_gpu=0)
    with pytest.raises(StsbenchError, match="--executor slurm places its jobs itself: drop --per-gpu"):
        make_executor("slurm", out=tmp_path, per_gpu=2)
    assert make_executor("local", out=tmp_path, parallel=2, per_gpu=3).per_gpu == 3
    code, _, err = run_cli(["reproduce", "cpu-mini", "--out", tmp_path / "o", "--per-gpu", "0"], capsys)
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("error:")]
    assert code == 2 and len(lines) == 1 and "'--per-gpu': 0 is not in the range x>=1" in lines[0], err


# a seed's process stand-in: says which GPUs it sees, stays a while (so that the seeds overlap), and seed 5 fails
FAKE_SEED = (
    "import os, sys, time\n"
    "seed = sys.argv[sys.argv.index('--seed') + 1]\n"
    "print('sees', os.environ['CUDA_VISIBLE_DEVICES'], flush=True)\n"
    "time.sleep(0.4)\n"
    "if seed == '5':\n"
    "    print('error: seed 5 broke', flush=True)\n"
    "    sys.exit(2)\n"
)


@pytest.mark.parametrize("per_gpu", [1, 2])
def test_train_seeds_processes_take_a_gpu_each_or_share_one_with_per_gpu(tmp_path, monkeypatch, per_gpu):
    """``train --seeds 1,2,3,4,5 --parallel 4`` on two GPUs: each seed's process sees one GPU, and no more than
    ``per_gpu`` run on one GPU at once (a seed waits while every GPU is taken); its lines reach the caller."""
    import torch

    from stsbench.commands.train import run_seed_jobs, seed_executor
    from stsbench.train.config import TrainConfig
    from stsbench.train.seeds import SeedJob

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    starts: list[tuple[str, int, list[str]]] = []  # (GPUs seen, processes still on them, command line)
    live: list[tuple[str, subprocess.Popen]] = []
    real = subprocess.Popen

    def popen(cmd, **kwargs):
        gpu = kwargs["env"]["CUDA_VISIBLE_DEVICES"]
        starts.append((gpu, sum(g == gpu and p.poll() is None for g, p in live), cmd))
        proc = real([sys.executable, "-c", FAKE_SEED, *cmd[3:]], **kwargs)  # cmd: python -m stsbench ARGS
        live.append((gpu, proc))
        return proc

    monkeypatch.setattr(subprocess, "Popen", popen)
    cfg = TrainConfig(method="simcse", model="m", train_file="t.txt", output=str(tmp_path))
    executor = seed_executor(cfg, parallel=4, per_gpu=per_gpu, jobs=5)
    jobs = [SeedJob(s, tmp_path / f"seed-{s}", "new", ()) for s in range(1, 6)]
    lines: list[tuple[int, str]] = []
    outcomes = run_seed_jobs(
        jobs, tmp_path / "o.yaml", executor=executor, cfg=cfg, quiet=True, forward=lambda *a: lines.append(a)
    )
    # each process one GPU of those visible, the least shared first
    assert [gpu for gpu, _, _ in starts[:2]] == ["3", "5"] and {gpu for gpu, _, _ in starts} == {"3", "5"}
    # a GPU exclusive (a seed waits while both are taken), or shared by per_gpu processes: at most, and at once
    assert max(n for _, n, _ in starts) == per_gpu - 1
    seen = {seed: line for seed, line in lines if line.startswith("sees")}
    assert set(seen) == {1, 2, 3, 4, 5} and set(seen.values()) <= {"sees 3", "sees 5"}
    _, _, cmd = starts[0]  # on a GPU, no --threads: no share of the cores
    options, folder = str(tmp_path / "o.yaml"), str(tmp_path / "seed-1")
    assert cmd[3:] == ["train", "--config", options, "--seed", "1", "--output", folder, "--quiet"]
    assert [outcomes[s].returncode for s in range(1, 6)] == [0, 0, 0, 0, 2]
    assert outcomes[5].error == "seed 5 broke" and outcomes[1].error is None


@pytest.mark.parametrize(("visible", "gpus", "words"), [("", "1", "sees none"), ("0", "2", "1 are visible")])
def test_reproduce_refuses_gpus_it_cannot_have_in_one_line_before_anything_runs(
    tmp_path_factory, tmp_path, capsys, monkeypatch, visible, gpus, words
):
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    recipe = tiny_folder(tmp_path_factory) / "tiny.yaml"
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    monkeypatch.setenv("STSBENCH_DATA", str(DATA))
    out = tmp_path / "o"
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--gpus", gpus], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err and "train/simcse/seed-1" in err, err
    assert not (out / "reproduce.json").exists() and not (out / "runs").exists()  # nothing ran


def test_the_scheduler_stops_when_nothing_runs_and_nothing_can_start(tmp_path_factory, tmp_path, monkeypatch):
    """An executor that never fits a job (and does not say so up front) ends the run in one line, not a hang."""
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.executors import run_plan
    from stsbench.reproduce.plan import build_plan
    from stsbench.reproduce.state import load_state

    class Full(LocalExecutor):
        def fits(self, job: Job) -> bool:
            return False

    plan = build_plan(load_recipe(tiny_folder(tmp_path_factory) / "tiny.yaml"), tmp_path / "o", DATA)
    (tmp_path / "o").mkdir()
    with pytest.raises(StsbenchError, match="cannot start: the executor cannot fit it with nothing running"):
        run_plan(plan, load_state(plan.out), Full(gpus=[]), started=0.0)  # a hang would time the test out


def test_where_no_gpu_device_is_present_torch_is_not_asked(monkeypatch):
    """Each reproduce orchestrator imported torch (3 CPU s) only to count no GPU: where no CUDA or ROCm device
    file is present, none is counted without torch; where one is, torch counts them."""
    import os

    from stsbench.reproduce import executors

    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    probe = "import sys; from stsbench.reproduce.executors import visible_gpus as v; print(v(), 'torch' in sys.modules)"
    if executors.gpu_device_files():
        pytest.skip("a GPU driver's device files are here: torch counts the GPUs")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["[]", "False"], done.stdout + done.stderr
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(executors, "gpu_device_files", lambda: True)  # a device file: torch is asked
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert executors.visible_gpus() == ["0", "1"]
