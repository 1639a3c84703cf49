"""The fork server (:mod:`stsbench.reproduce.forkserver`): a step forked from it computes what a plain process does.

The interruption, ``kill -9``, output-lock and lifeline tests of ``reproduce`` (tests/test_reproduce.py,
test_output_lock.py, test_torchrun_lifeline.py) run with it on, as every local reproduction does on Linux.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from stsbench.reproduce import forkserver
from stsbench.reproduce.executors import Job, LocalExecutor, Resources, _Process

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork server runs on Linux")


def _wait(handle, timeout: float = 300) -> int:
    end = time.monotonic() + timeout
    while (code := handle.poll()) is None:
        assert time.monotonic() < end, "the step never ended"
        time.sleep(0.1)
    return code


def _jobs(files: Path, out: Path, threads: int) -> list[Job]:
    """A tiny training (its own thread count left to the job) and an evaluation of what it saved."""
    run = out / "run"
    train = ["train", "--method", "simcse", "--model", files / "tiny", "--train-file", files / "train.txt"]
    train += ["--output", run, "--data-dir", files / "data", "--batch-size", "4", "--max-steps", "6"]
    train += ["--eval-steps", "6", "--log-steps", "1", "-q"]
    evaluate = ["run", "--model", run, "--tasks", "STSBenchmark", "--mode", "dev", "--data-dir", files / "data"]
    evaluate += ["--output", out / "results", "--no-cache", "--bootstrap", "0", "--allow-modified-data"]
    return [
        Job(f"{name}", tuple(map(str, args)), out / f"{name}.log", out, resources=Resources(cpus=threads))
        for name, args in (("train", train), ("evaluate", evaluate))
    ]


@linux
@pytest.mark.slow  # a fork server's imports, two tiny trainings and two evaluations: ~40 s on 2 cores
def test_a_forked_training_logs_a_plain_processs_losses_bit_for_bit_with_its_jobs_threads(files, tmp_path):
    logged, devices = {}, {}
    for fork in (False, True):
        out = tmp_path / ("fork" if fork else "plain")
        out.mkdir()
        executor = LocalExecutor(gpus=[], fork=fork)
        try:
            for job in _jobs(files, out, threads=2):
                handle = executor.submit(job)
                assert isinstance(handle, forkserver.Forked if fork else _Process)
                assert _wait(handle) == 0, job.log.read_text()
        finally:
            executor.close()
        records = [json.loads(line) for line in (out / "run" / "train_log.jsonl").read_text().splitlines()]
        logged[fork] = [(r["step"], r["loss"], r["grad_norm"]) for r in records if r.get("event") == "train"]
        (result,) = (out / "results").rglob("STSBenchmark.json")
        devices[fork] = json.loads(result.read_text())["provenance"]["device"]
    assert len(logged[True]) == 6 and logged[True] == logged[False]  # floats from JSON: equal bit for bit
    assert devices == {False: "cpu (2 threads)", True: "cpu (2 threads)"}  # torch.get_num_threads() in the step


def test_a_job_forks_only_where_its_environment_differs_in_threads_gpus_and_lifeline_alone():
    base = {"PATH": "/bin", "STSBENCH_PARENT_PID": "1", "PYTHONUNBUFFERED": "1"}
    threads = {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "3"}
    assert forkserver.may_fork(base, {**base, **threads, "CUDA_VISIBLE_DEVICES": "1", "STSBENCH_PARENT_PID": "9"})
    assert not forkserver.may_fork(base, base)  # no thread count: the libraries' own default, unseen by a fork
    assert not forkserver.may_fork(base, {**base, "OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "2"})
    assert not forkserver.may_fork(base, {**base, **threads, "STSBENCH_WAIT": "300"})  # any other variable
    assert not forkserver.may_fork(base, {**{k: v for k, v in base.items() if k != "PATH"}, **threads})


def test_the_switch_turns_it_off_and_a_reproduction_of_few_steps_runs_plain_processes(monkeypatch):
    monkeypatch.setenv(forkserver.SWITCH, "0")
    assert not forkserver.enabled() and not LocalExecutor(gpus=[]).fork
    monkeypatch.delenv(forkserver.SWITCH)
    assert forkserver.enabled() == sys.platform.startswith("linux")
    started = []

    class Server:  # started where a job may fork: counted, never run
        def __init__(self, env):
            started.append(env)

        def takes(self, env, distributed):
            return True

    monkeypatch.setattr(forkserver, "ForkServer", Server)
    job = Job("v", ("--version",), Path("v.log"), Path(), resources=Resources(cpus=1))
    executor = LocalExecutor(gpus=[], fork=True)
    # one executor, told each round's count before it starts any (a reused one: a round of few steps once
    # turned forking off for good); a server already running serves a round of few steps too
    few, many = forkserver.MIN_STEPS - 1, forkserver.MIN_STEPS
    for steps, forked in ((few, False), (many, True), (few, True)):
        executor.expect(steps)
        assert (executor._warm({}, job) is not None) == forked, steps
    assert len(started) == 1


@linux
def test_a_server_that_cannot_start_says_why_and_the_steps_run_as_plain_processes(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(forkserver, "SERVER", ("-c", "import sys; sys.exit('no torch here')"))
    executor = LocalExecutor(gpus=[], fork=True)
    job = Job("v", ("--version",), tmp_path / "v.log", tmp_path, resources=Resources(cpus=1))
    handle = executor.submit(job)
    assert isinstance(handle, _Process) and _wait(handle) == 0 and "stsbench" in job.log.read_text()
    assert not executor.fork  # asked once: the next steps start as plain processes at once
    assert "the fork server did not start (no torch here); each step runs as its own process" in caplog.text


def test_the_benchmarks_recipe_plans_twenty_analysis_steps_each_with_a_file_of_its_own(tmp_path):
    from helpers import DATA, ROOT

    from stsbench.recipes import load_recipe
    from stsbench.reproduce.plan import build_plan

    recipe = load_recipe(ROOT / "benchmarks" / "recipes" / "cached-analyses.yaml")
    plan = build_plan(recipe, tmp_path / "o", DATA)
    assert len([s for s in plan.steps if s.kind == "analysis"]) == 20
    # a model's analysis files are named by the analysis and its split or unit alone: ten of them, none shared
    files = {(a.name, a.options.get("split") or a.options.get("unit")) for a in recipe.analyses}
    assert len(files) == len(recipe.analyses) == 10 and all(a.baseline for a in recipe.analyses)
