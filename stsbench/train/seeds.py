"""``stsbench train --seeds 1,2,3 [--parallel N]``: one ordinary run per seed into ``OUT/seed-<s>/``.

Every seed is its own ``python -m stsbench train --seed s --output OUT/seed-<s>`` process, so a seed that fails
(an error, a NaN, a kill) loses nothing of the others. One at a time by default; ``--parallel N`` runs N at
once: on CPU each gets cores/N threads, on CUDA the GPUs are dealt round robin through
``CUDA_VISIBLE_DEVICES`` (each process trains on one GPU; a seed is never split over processes). With
``--resume`` a finished seed (its log ends with the ``end`` record) is kept, one with ``DIR/last`` resumes,
one that died before its first save starts again, and one never started starts. ``OUT/seeds.json``
(:func:`stsbench.results.seeds.write_seed_runs`) records the outcome.

This process holds ``OUT``'s lock (:mod:`stsbench.output_lock`) for the whole run and each seed's process that
of its folder; the seeds' processes end with this one, killed outright included (:mod:`stsbench.train.lifeline`).
The options they share are ``OUT/seed-options.yaml``, kept there rather than in a temporary folder, which a
killed process could not remove.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_text
from stsbench.output_lock import output_lock
from stsbench.results.runs import TRAIN_LOG, load_train_run
from stsbench.results.seeds import seed_dir, write_seed_runs
from stsbench.train.checkpoint import is_run_dir
from stsbench.train.config import TrainConfig, finalize, resume_conflicts
from stsbench.train.lifeline import child_environment
from stsbench.train.status import Status, continue_flags, run_status

SHARED_ONLY = ("seed", "output")  # what differs between the seeds' configs
OPTIONS_FILE = "seed-options.yaml"  # OUT/seed-options.yaml: the options every seed trains with (--config)


def parse_seeds(text: str) -> list[int]:
    """``"1,2,3"`` -> ``[1, 2, 3]``; an empty entry, a non-integer, a negative or a repeat is one line."""
    seeds: list[int] = []
    for part in text.split(","):
        item = part.strip()
        if not item:
            raise StsbenchError(f"--seeds {text!r} has an empty entry; give seeds as 1,2,3")
        if not item.lstrip("-").isdigit():
            raise StsbenchError(f"--seeds {text!r}: {item!r} is not an integer; give seeds as 1,2,3")
        if int(item) < 0:
            raise StsbenchError(f"--seeds {text!r}: seed {item} is negative; seeds are integers >= 0")
        if int(item) in seeds:
            raise StsbenchError(f"--seeds {text!r}: seed {int(item)} is given twice; list each seed once")
        seeds.append(int(item))
    return seeds


@dataclass(frozen=True)
class SeedJob:
    """One seed's run: where, what it was found as, and how its process is started."""

    seed: int
    folder: Path
    found: Status
    flags: tuple[str, ...]  # --resume / --overwrite; None of them for a new folder

    @property
    def skip(self) -> bool:
        """A finished seed is not run again."""
        return self.found == "finished"


def plan(
    out: Path, seeds: Sequence[int], cfg: TrainConfig, *, resume: bool, overwrite: bool
) -> list[SeedJob]:
    """What each seed does.

    Refuses (one line) a used folder without --resume/--overwrite, or a finished seed trained with other
    options than asked.
    """
    if is_run_dir(out):
        raise StsbenchError(
            f"--output {out} holds one training run; --seeds trains into {out}/seed-<s>/: pass another --output"
        )
    jobs = []
    for s in seeds:
        folder = seed_dir(out, s)
        found = run_status(folder)
        if found != "new" and not (resume or overwrite):
            raise StsbenchError(
                f"{folder} is not empty ({found}); pass --resume to finish the unfinished seeds, --overwrite "
                "to train every seed again, or another --output"
            )
        if overwrite:
            flags: tuple[str, ...] = ("--overwrite",)
            found = "new" if found == "new" else "started"
        else:  # a saved state resumes; a start without one starts again (a folder of foreign files is refused)
            flags = continue_flags(found)
        if found == "finished":
            _check_same_options(folder, cfg.replace(seed=s, output=str(folder)))
        jobs.append(SeedJob(s, folder, found, flags))
    return jobs


def _check_same_options(folder: Path, cfg: TrainConfig) -> None:
    run, _ = load_train_run(folder, folder.name)
    saved = run.config if run is not None else {}
    changed = resume_conflicts(saved, finalize(cfg, bool(saved.get("supervised"))))
    if changed:
        diffs = ", ".join(f"{k}: {saved.get(k)!r} (asked {cfg.to_dict().get(k)!r})" for k in changed[:3])
        raise StsbenchError(
            f"{folder} finished with other options than asked ({diffs}); use its options, "
            "--overwrite, or another --output"
        )


@dataclass
class Outcome:
    """How a seed's process ended: its exit status and, when it failed, one line saying why."""

    seed: int
    returncode: int
    error: str | None = None
    lines: list[str] = field(default_factory=list)


_RANK = re.compile(r"^\[rank(\d+)\]: ?")  # torch's prefix of a worker's stderr once its process group is up
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(:|$)")  # "RuntimeError: ...", "KeyboardInterrupt"
_TORCHRUN = re.compile(r"ChildFailedError|^[=-]{20,}$")  # torchrun's own traceback's end and its summary's rules
# torchrun's summary of a failed rank: "rank      : 1 (local_rank: 1)", "exitcode  : -9 (pid: 15285)  (SIGKILL)"
_SUMMARY = re.compile(r"^\s+(rank|exitcode)\s+: (-?\d+)")


def failure_line(returncode: int, lines: Sequence[str]) -> str | None:
    """The one line a failed process is reported with; None when it succeeded.

    Its first ``error:`` line, else the signal that killed it, else its exit status and the first exception
    of its first traceback (where there is none, its last line). Under torchrun the lines are its workers'
    (``[rankN]:`` prefixes read, the rank named) and never torchrun's own traceback or summary; where no
    worker said why, the summary's root cause: the rank and its signal or status.
    """
    if returncode == 0:
        return None
    found = _first_error(lines)
    if found is not None and found[0] == "error":
        return found[1]
    if returncode < 0:
        return f"killed by {_signal_name(-returncode)}"
    if found is None:
        found = ("", _root_cause(lines) or "")
    if not found[1]:
        last = next((ln.strip() for ln in reversed(lines) if ln.strip() and not _TORCHRUN.search(ln)), "")
        found = ("", last[:200])
    return f"exited with status {returncode}" + (f" ({found[1]})" if found[1] else "")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _first_error(lines: Sequence[str]) -> tuple[str, str] | None:
    """("error", its text) for the first ``error:`` line, or ("exception", the first traceback's exception).

    The lines of each ``[rankN]:`` prefix (and of none) are read apart, as their writes interleave; a traceback
    ending in torchrun's ``ChildFailedError`` is torchrun's own and skipped.
    """
    open_tracebacks: set[str] = set()  # the prefixes whose traceback has begun and not yet said its exception
    for raw in lines:
        match = _RANK.match(raw)
        prefix, body = (match.group(0), raw[match.end() :]) if match else ("", raw)
        label = f"rank {match.group(1)}: " if match else ""
        if body.startswith("error: "):
            return "error", body[len("error: ") :]
        if body.startswith("Traceback (most recent call last):"):
            open_tracebacks.add(prefix)
        elif prefix in open_tracebacks and _EXCEPTION.match(body):
            open_tracebacks.discard(prefix)
            if "ChildFailedError" not in body:
                return "exception", f"{label}{body.strip()}"[:200]
    return None


def _root_cause(lines: Sequence[str]) -> str | None:
    """The root cause of torchrun's summary (its last failure listed): ``rank 1 killed by SIGKILL``, or None."""
    rank = code = None
    for line in lines:
        match = _SUMMARY.match(line)
        if match and match.group(1) == "rank":
            rank, code = match.group(2), None
        elif match:
            code = int(match.group(2))
    if rank is None or code is None:
        return None
    return f"rank {rank} " + (f"killed by {_signal_name(-code)}" if code < 0 else f"exited with status {code}")


def process_settings(cfg: TrainConfig, parallel: int, jobs: int) -> tuple[list[dict[str, str]], int | None]:
    """Per slot the environment to add (``CUDA_VISIBLE_DEVICES`` on CUDA), and the threads per process on CPU.

    Slot ``k`` of ``parallel`` takes GPU ``k mod #GPUs``; on CPU each of the processes running at once gets
    cores / their number threads (none set with one process, or when ``--threads`` is given).
    """
    slots = max(1, min(parallel, jobs))
    device = cfg.device
    if device is None or device == "cuda":
        import torch

        if torch.cuda.is_available():
            visible = os.environ.get("CUDA_VISIBLE_DEVICES")
            gpus = visible.split(",") if visible else [str(i) for i in range(torch.cuda.device_count())]
            return [{"CUDA_VISIBLE_DEVICES": gpus[k % len(gpus)]} for k in range(slots)], None
    if device is not None and device != "cpu":  # cuda:N, mps: every process on that device
        return [{} for _ in range(slots)], None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    threads = None if slots == 1 or cfg.threads is not None else max(1, cores // slots)
    env = {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)} if threads else {}
    return [dict(env) for _ in range(slots)], threads


def run_jobs(
    jobs: Sequence[SeedJob],
    config_file: Path,
    *,
    parallel: int,
    cfg: TrainConfig,
    quiet: bool,
    forward: Callable[[int, str], None],
) -> dict[int, Outcome]:
    """Run the jobs' processes, ``parallel`` at once; ``forward(seed, line)`` gets each output line."""
    envs, threads = process_settings(cfg, parallel, len(jobs))
    slots: queue.Queue[int] = queue.Queue()
    for k in range(len(envs)):
        slots.put(k)
    live: dict[int, subprocess.Popen] = {}
    lock = threading.Lock()

    def one(job: SeedJob) -> Outcome:
        slot = slots.get()
        try:
            args = [sys.executable, "-m", "stsbench", "train", "--config", str(config_file)]
            args += ["--seed", str(job.seed), "--output", str(job.folder), *job.flags]
            args += [*(["--threads", str(threads)] if threads else []), *(["--quiet"] if quiet else [])]
            env = {**os.environ, **envs[slot], **child_environment(), "PYTHONUNBUFFERED": "1"}
            proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, bufsize=1
            )
            with lock:
                live[job.seed] = proc
            tail: deque[str] = deque(maxlen=50)
            assert proc.stdout is not None
            for raw in proc.stdout:
                line = raw.rstrip("\n")
                tail.append(line)
                forward(job.seed, line)
            code = proc.wait()
            return Outcome(job.seed, code, failure_line(code, list(tail)), list(tail))
        finally:
            with lock:
                live.pop(job.seed, None)
            slots.put(slot)

    try:
        with ThreadPoolExecutor(max_workers=len(envs)) as pool:
            futures = [pool.submit(one, job) for job in jobs]
            return {o.seed: o for o in (f.result() for f in futures)}
    finally:  # interrupted: stop what still runs (each saved its state at its last save step)
        with lock:
            for proc in live.values():
                if proc.poll() is None:
                    proc.terminate()


def seed_record(job: SeedJob, outcome: Outcome | None) -> dict[str, Any]:
    """One seed's entry of ``seeds.json``, read from its run folder."""
    run, _ = load_train_run(job.folder, job.folder.name) if (job.folder / TRAIN_LOG).is_file() else (None, [])
    finished = run_status(job.folder) == "finished" and (outcome is None or outcome.error is None)
    error = None if finished else (outcome.error if outcome else "not finished")
    return {
        "seed": job.seed,
        "status": "finished" if finished else "failed",
        "error": error,
        "best_step": run.best_step if run else None,
        "best_dev_spearman": run.best_dev_spearman if run else None,
        "steps": run.steps_done if run else None,
    }


def train_seeds(
    cfg: TrainConfig,
    seeds: Sequence[int],
    given: Mapping[str, Any],
    *,
    parallel: int = 1,
    resume: bool = False,
    overwrite: bool = False,
    quiet: bool = False,
    forward: Callable[[int, str], None] = lambda seed, line: None,
) -> tuple[Path, list[dict[str, Any]]]:
    """Train every seed of ``seeds``, then write ``OUT/seeds.json``.

    ``given``: the options as given (the YAML file's and the flags). Returns the path of ``seeds.json`` and
    the per-seed records (failed ones included).
    """
    import yaml

    if parallel < 1:
        raise StsbenchError(f"--parallel must be at least 1, got {parallel}")
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise StsbenchError(
            "--seeds under torchrun: each seed is its own run; launch one torchrun per seed "
            "(--seed s --output OUT/seed-<s>)"
        )
    out = Path(cfg.output).expanduser()
    with output_lock(out):  # the seeds' processes lock their own OUT/seed-<s>
        jobs = plan(out, seeds, cfg, resume=resume, overwrite=overwrite)
        todo = [j for j in jobs if not j.skip]
        for j in jobs:
            if j.skip:
                forward(j.seed, f"finished already ({j.folder}); kept")
        # in OUT, not a temporary folder: nothing is left behind when this process is killed outright
        config_file = out / OPTIONS_FILE
        options = {k: str(v) if isinstance(v, Path) else v for k, v in given.items() if k not in SHARED_ONLY}
        if cfg.report_to != "none" and cfg.run_group is None:  # the seeds as one group in W&B and trackio
            options["run_group"] = f"{out.name}/{cfg.method}"
        atomic_write_text(config_file, yaml.safe_dump(options, sort_keys=True))
        outcomes = run_jobs(todo, config_file, parallel=parallel, cfg=cfg, quiet=quiet, forward=forward)
        records = [seed_record(j, outcomes.get(j.seed)) for j in jobs]
        training = {k: v for k, v in cfg.to_dict().items() if k not in SHARED_ONLY}
        return write_seed_runs(out, records, training), records
