"""``reproduce --gpus K`` on the local executor: a request that can never fit is refused before anything
runs, a job waits for its GPUs and never starts with all of them visible, and the scheduler never waits forever."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers import DATA, run_cli, tiny_folder

from stsbench.errors import StsbenchError
from stsbench.reproduce.executors import Job, LocalExecutor, Resources


def _job(name: str, gpus: int, tmp_path: Path) -> Job:
    return Job(name, ("--version",), tmp_path / f"{name}.log", tmp_path, resources=Resources(gpus=gpus))


@pytest.fixture
def started(monkeypatch) -> list[dict[str, str]]:
    """The environment of each process the executor starts (the process itself: `stsbench --version`)."""
    envs: list[dict[str, str]] = []
    real = subprocess.Popen

    def popen(cmd, **kwargs):
        envs.append(kwargs["env"])
        return real(cmd, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen)
    return envs


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
    from stsbench.reproduce.plan import build_plan
    from stsbench.reproduce.scheduler import run_plan
    from stsbench.reproduce.state import load_state

    class Full(LocalExecutor):
        def fits(self, job: Job) -> bool:
            return False

    plan = build_plan(load_recipe(tiny_folder(tmp_path_factory) / "tiny.yaml"), tmp_path / "o", DATA)
    (tmp_path / "o").mkdir()
    with pytest.raises(StsbenchError, match="cannot start: the executor cannot fit it with nothing running"):
        run_plan(plan, load_state(plan.out), Full(gpus=[]), started=0.0)  # a hang would time the test out
