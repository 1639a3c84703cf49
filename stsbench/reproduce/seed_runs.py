"""``stsbench train --seeds 1,2,3 [--parallel N] [--per-gpu K]``: every seed's process through the local executor.

The seeds are planned, their shared options written and their outcome recorded by :mod:`stsbench.train.seeds`;
this module starts their processes with reproduce's :class:`~stsbench.reproduce.executors.LocalExecutor`, the
one local runner. One at a time by default; ``--parallel N`` runs N at once: on CPU each gets cores/N threads
(unless ``--threads`` says otherwise), on CUDA each takes a GPU of its own (``CUDA_VISIBLE_DEVICES``) and a
seed waits while every GPU is taken, unless ``--per-gpu K`` lets K processes share one. A seed is never split
over processes. Each line a seed's process prints is handed on as it comes (``forward(seed, line)``).

This process holds ``OUT``'s lock (:func:`stsbench.files.output_lock`) for the whole run and each seed's process that
of its folder; the seeds' processes end with this one, killed outright included (:mod:`stsbench.train.lifeline`),
and are stopped when it is interrupted (each keeps its state at its last save step).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.files import output_lock
from stsbench.reproduce.executors import Handle, Job, LocalExecutor, Resources, check_counts, visible_gpus
from stsbench.train.config import TrainConfig
from stsbench.train.seeds import Outcome, SeedJob, failure_line, plan, seed_args, write_options, write_records

POLL_SECONDS = 0.1
TAIL = 50  # the last lines of a seed's output kept to say why it failed


def seed_executor(cfg: TrainConfig, *, parallel: int, per_gpu: int, jobs: int) -> LocalExecutor:
    """The local executor for ``jobs`` seeds, ``parallel`` at once (never more processes than seeds).

    It deals GPUs where the training runs on CUDA (``device`` unset or ``cuda``, and CUDA available): those
    visible. On another device (``cpu``, ``cuda:N``, ``mps``) it deals none: every process trains where
    ``device`` says, on CPU with its share of the cores.
    """
    gpus: list[str] = []
    if cfg.device in (None, "cuda"):
        import torch

        if torch.cuda.is_available():
            gpus = visible_gpus()
    return LocalExecutor(parallel=max(1, min(parallel, jobs)), gpus=gpus, per_gpu=per_gpu)


def seed_threads(cfg: TrainConfig, executor: LocalExecutor) -> int | None:
    """The ``--threads`` each seed's process is given: its share of the cores where several train on CPU at once.

    None with one process at a time (torch's own default), with ``--threads`` given (the seeds' options hold
    it), or on a GPU or another device.
    """
    on_cpu = not executor.gpus and cfg.device in (None, "cpu")
    return executor.threads if on_cpu and executor.slots > 1 and cfg.threads is None else None


def run_seed_jobs(
    jobs: Sequence[SeedJob],
    config_file: Path,
    *,
    executor: LocalExecutor,
    cfg: TrainConfig,
    quiet: bool,
    forward: Callable[[int, str], None],
) -> dict[int, Outcome]:
    """Run the jobs' processes through ``executor`` in their order, as many at once as it fits.

    ``forward(seed, line)`` gets each output line as it comes. Interrupted (Ctrl-C), the running processes are
    stopped before this returns.
    """
    threads = seed_threads(cfg, executor)
    resources = Resources(cpus=cfg.threads if not executor.gpus else None)
    waiting = deque(jobs)
    running: dict[int, tuple[Handle, deque[str]]] = {}
    outcomes: dict[int, Outcome] = {}
    try:
        while waiting or running:
            while waiting and len(running) < executor.slots:
                seed_job = waiting[0]
                args = seed_args(seed_job, config_file, threads=threads, quiet=quiet)
                job = Job(f"seed-{seed_job.seed}", args, log=None, cwd=Path.cwd(), resources=resources)
                if not executor.fits(job):
                    if not running:  # cannot happen with GPUs free; a hang if it did
                        raise StsbenchError(
                            f"seed {seed_job.seed} cannot start: no GPU is free with nothing running"
                        )
                    break
                waiting.popleft()
                tail: deque[str] = deque(maxlen=TAIL)
                on_line = partial(_on_line, seed_job.seed, tail, forward)
                running[seed_job.seed] = (executor.submit(job, on_line), tail)
            for seed, (handle, last) in list(running.items()):
                if (code := handle.poll()) is not None:
                    del running[seed]
                    outcomes[seed] = Outcome(seed, code, failure_line(code, list(last)), list(last))
            if running:
                time.sleep(POLL_SECONDS)
        return {j.seed: outcomes[j.seed] for j in jobs}
    finally:  # interrupted: stop what still runs (each saved its state at its last save step)
        for handle, _ in running.values():
            handle.cancel()


def _on_line(seed: int, tail: deque[str], forward: Callable[[int, str], None], line: str) -> None:
    """Keep ``line`` in the seed's ``tail`` and hand it on."""
    tail.append(line)
    forward(seed, line)


def train_seeds(
    cfg: TrainConfig,
    seeds: Sequence[int],
    given: Mapping[str, Any],
    *,
    parallel: int = 1,
    per_gpu: int = 1,
    resume: bool = False,
    overwrite: bool = False,
    quiet: bool = False,
    forward: Callable[[int, str], None] = lambda seed, line: None,
) -> tuple[Path, list[dict[str, Any]]]:
    """Train every seed of ``seeds``, then write ``OUT/seeds.json``.

    ``given``: the options as given (the YAML file's and the flags); ``per_gpu``: the seeds' processes that
    share one GPU (ignored on CPU). Returns the path of ``seeds.json`` and the per-seed records (failed ones
    included).
    """
    check_counts(parallel, per_gpu)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise StsbenchError(
            "--seeds under torchrun: each seed is its own run; launch one torchrun per seed "
            "(--seed s --output OUT/seed-<s>)"
        )
    out = Path(cfg.output).expanduser()
    with output_lock(out):  # the seeds' processes lock their own OUT/seed-<s>
        jobs = plan(out, seeds, cfg, resume=resume, overwrite=overwrite)
        todo = [j for j in jobs if not j.skip]
        for j in (j for j in jobs if j.skip):
            forward(j.seed, f"finished already ({j.folder}); kept")
        config_file = write_options(out, cfg, given)
        executor = seed_executor(cfg, parallel=parallel, per_gpu=per_gpu, jobs=len(todo))
        outcomes = run_seed_jobs(todo, config_file, executor=executor, cfg=cfg, quiet=quiet, forward=forward)
        return write_records(out, cfg, jobs, outcomes)
