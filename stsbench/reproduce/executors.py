"""Where a reproduction's steps run: one :class:`Executor` per engine, each starting existing commands.

A step is a :class:`Job`: the ``stsbench`` command line that does it (``train ...``, ``run ...``, an analysis,
``report ...``), the log file its output goes to, the environment it adds and the resources it asks for. An
executor starts jobs (:meth:`Executor.submit`, or :meth:`Executor.submit_many` for the jobs ready at once: a
Slurm job array), and the scheduler (:mod:`stsbench.reproduce.scheduler`) polls their handles (:class:`Handle`) until
each has an exit status. Nothing here knows what a step does; the scheduler reads a job's progress and error
from its files (``log`` and the run's ``train_log.jsonl``), the same wherever it ran.

The local executor (this module) runs ``slots`` processes at once, each with its share of the CPU threads or
of the GPUs; a job asking for several GPUs starts through ``torchrun``. It is also what ``stsbench train --seeds
--parallel N`` starts its seeds' processes with (:mod:`stsbench.reproduce.seed_runs`), their output read line
by line (:meth:`LocalExecutor.submit`'s ``on_line``) rather than written to a log. Other executors (Slurm through
submitit) register in :data:`EXECUTORS` by ``"module:attr"``, so that choosing one imports it alone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stsbench.errors import StsbenchError
from stsbench.registry import Registry


@dataclass(frozen=True)
class Resources:
    """What one job asks for. The local executor reads ``gpus``; a cluster's executor reads the rest too."""

    gpus: int = 0  # >1: one process per GPU through torchrun (the trainer's torch.distributed)
    cpus: int | None = None  # None: the executor's share
    mem_gb: float | None = None
    time_min: int | None = None


@dataclass(frozen=True)
class Job:
    """One step's process: ``stsbench ARGS`` in ``cwd``, stdout and stderr appended to ``log``."""

    id: str  # the step's id in the plan, e.g. "train/simcse/seed-1"
    args: tuple[str, ...]  # the stsbench command line after "stsbench"
    log: Path | None  # None: no log kept; the local executor hands each line to submit's on_line
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)  # added to the executor's environment
    resources: Resources = Resources()
    distributed: bool = False  # may run as several processes (torchrun) when resources.gpus > 1
    # what to run instead when the job starts again after being stopped (preempted, timed out, requeued):
    # a training step's ``--resume`` from its last saved state; None: ``args`` again
    resume_args: tuple[str, ...] | None = None
    # a training step's run folder: a restart resumes only where it holds a saved state (stopped before its
    # first save, the run starts over: ``restart_args``)
    folder: Path | None = None
    restart_args: tuple[str, ...] | None = None

    def started_again(self) -> tuple[str, ...]:
        """The command line after ``stsbench`` when the job starts again after being stopped."""
        if self.resume_args is None:
            return self.args
        if self.folder is None or self.restart_args is None:
            return self.resume_args
        from stsbench.train.status import continue_flags, run_status

        found = run_status(self.folder)
        if found == "finished":
            return self.resume_args
        # a saved state resumes; without one, a plain start where the folder is empty, else one that clears it
        return (*self.restart_args, *continue_flags(found))

    def command(self, python: str | None = None, *, resumed: bool = False) -> list[str]:
        """The process's command line: ``python -m stsbench ARGS``, through torchrun for several GPUs."""
        python = python or sys.executable
        args = self.started_again() if resumed else self.args
        if self.distributed and self.resources.gpus > 1:
            launch = [
                "-m",
                "stsbench.train.lifeline",  # torchrun ends with this process; its workers follow it
                "torch.distributed.run",
                "--standalone",
                f"--nproc_per_node={self.resources.gpus}",
            ]
            return [python, *launch, "-m", "stsbench", *args]
        return [python, "-m", "stsbench", *args]


class Handle(ABC):
    """A started job."""

    @abstractmethod
    def poll(self) -> int | None:
        """Its exit status once it has ended (0: done; negative: killed by that signal), else None."""

    @abstractmethod
    def cancel(self) -> None:
        """Stop it (its processes end; a training run keeps its last saved state for a rerun to resume)."""

    def describe(self) -> str:
        """Where it runs, for the status table (a PID, a Slurm job id)."""
        return ""


class Executor(ABC):
    """Starts jobs and says how many may run at once (``slots``; None: as many as are ready)."""

    name: str = ""
    slots: int | None = 1

    @abstractmethod
    def submit(self, job: Job) -> Handle:
        """Start ``job`` (its log opened for appending: a rerun's output follows the earlier one's)."""

    def fits(self, job: Job) -> bool:
        """Whether ``job`` can start now beside the running ones (the local executor's free GPUs)."""
        return True

    def never_fits(self, job: Job) -> str | None:
        """Why ``job`` could never start here, even with nothing else running (None: it can)."""
        return None

    def submit_many(self, jobs: Sequence[Job]) -> list[Handle]:
        """Start every job of ``jobs``, ready at once (a cluster's executor submits them as one array)."""
        return [self.submit(job) for job in jobs]

    def close(self) -> None:  # noqa: B027 - most executors hold nothing
        """Release what the executor holds, once every job has ended or been cancelled."""


def cores() -> int:
    """The CPU cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def visible_gpus() -> list[str]:
    """The CUDA devices this process sees (``CUDA_VISIBLE_DEVICES``, else every device torch counts)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [g for g in visible.split(",") if g.strip()]
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency
        return []
    return [str(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []


class _Process(Handle):
    def __init__(self, proc: subprocess.Popen, on_end, reader: _Reader | None = None) -> None:
        self.proc, self._on_end, self._ended, self._reader = proc, on_end, False, reader

    def poll(self) -> int | None:
        if self._reader is not None and self._reader.is_alive():  # its last lines not yet handed on
            return None
        code = self.proc.poll()
        if code is not None and not self._ended:
            self._ended = True
            self._on_end()
            if self._reader is not None and self._reader.error is not None:
                raise self._reader.error
        return code

    def cancel(self) -> None:
        if self.proc.poll() is None:
            try:  # the job's whole process group: torchrun's workers too
                os.killpg(self.proc.pid, signal.SIGTERM)
            except (ProcessLookupError, PermissionError):
                self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)
        self.poll()

    def describe(self) -> str:
        return f"pid {self.proc.pid}"


class _Reader(threading.Thread):
    """Hands each line of a process's output to ``on_line``, from a thread of its own.

    It reads to the end whatever ``on_line`` does, so that the process never blocks on a full pipe; the first
    exception ``on_line`` raised is kept for :meth:`_Process.poll` to raise once the process has ended.
    """

    def __init__(self, stream, on_line: Callable[[str], None]) -> None:  # noqa: ANN001
        super().__init__(daemon=True, name="stsbench-output")
        self.stream, self.on_line = stream, on_line
        self.error: BaseException | None = None

    def run(self) -> None:
        with self.stream:
            for raw in self.stream:
                if self.error is None:
                    try:
                        self.on_line(raw.rstrip("\n"))
                    except Exception as exc:  # noqa: BLE001 - kept and raised by poll, in the caller's thread
                        self.error = exc


class LocalExecutor(Executor):
    """Processes on this machine, ``parallel`` at once.

    On CPU each gets cores/parallel threads (``OMP_NUM_THREADS``, which torch follows); with GPUs, each job
    takes the free ones of those visible (``CUDA_VISIBLE_DEVICES``), as many as it asks for (one when it asks
    for none), and a job asking for more than are free waits; one asking for more than are visible is refused
    before anything runs (:meth:`never_fits`). A GPU is a job's own unless ``per_gpu`` lets that many processes
    share it (on CPU ``per_gpu`` is ignored); a job takes the least shared GPUs first, in the order visible. Each
    process is its own process group, so that a terminal's Ctrl-C reaches this process alone and the caller
    stops the jobs in order; each job follows this process (:mod:`stsbench.train.lifeline`), so that ``kill
    -9`` of it ends them too.
    """

    name = "local"

    def __init__(
        self,
        *,
        out: Path | None = None,
        parallel: int = 1,
        options: Mapping[str, str] | None = None,
        gpus: Sequence[str] | None = None,
        per_gpu: int = 1,
    ) -> None:
        if options:
            raise StsbenchError(
                f"the local executor takes no --executor-option (got {', '.join(options)}); use --parallel"
            )
        if parallel < 1:
            raise StsbenchError(f"--parallel must be at least 1, got {parallel}")
        if per_gpu < 1:
            raise StsbenchError(f"--per-gpu must be at least 1 (processes sharing one GPU), got {per_gpu}")
        self.slots = parallel
        self.per_gpu = per_gpu
        self.gpus = list(visible_gpus() if gpus is None else gpus)  # every GPU this executor may hand out
        self.held = dict.fromkeys(self.gpus, 0)  # GPU -> the running processes it is handed to
        self.threads = max(1, cores() // parallel)

    @property
    def free(self) -> list[str]:
        """The GPUs a job may take now (fewer than ``per_gpu`` processes on them), the least shared first."""
        return sorted((g for g in self.held if self.held[g] < self.per_gpu), key=self.held.__getitem__)

    def never_fits(self, job: Job) -> str | None:
        """A job asking for GPUs where none is visible, or for more than are visible."""
        want = job.resources.gpus
        if want and not self.gpus:
            return (
                f"asks for {want} GPU(s) (--gpus {want}) and this process sees none (CUDA_VISIBLE_DEVICES, "
                "torch.cuda); drop --gpus to train on the CPU, or run where GPUs are visible"
            )
        if want > len(self.gpus):
            return (
                f"asks for {want} GPUs (--gpus {want}) and {len(self.gpus)} are visible "
                f"({','.join(self.gpus)}); pass --gpus {len(self.gpus)} or fewer"
            )
        return None

    def fits(self, job: Job) -> bool:
        """Whether the GPUs ``job`` asks for are free now (one for a job asking for none); always on CPU."""
        return not self.gpus or len(self.free) >= max(1, job.resources.gpus)

    def submit(self, job: Job, on_line: Callable[[str], None] | None = None) -> Handle:
        """Start ``job``, its output appended to its log, or handed line by line to ``on_line``.

        A job has one of them: a log (reproduce's steps) or, without one, ``on_line`` (``train --seeds``' processes),
        called from a thread of its own as each line comes; the handle then reports the exit status once every
        line has been handed on.
        """
        from stsbench.train.lifeline import child_environment

        if (job.log is None) == (on_line is None):
            raise ValueError(f"{job.id}: give a job either a log or an on_line to read its output")
        env = {**os.environ, **job.env, **child_environment(), "PYTHONUNBUFFERED": "1"}
        taken: list[str] = []
        if self.gpus:  # a GPU machine: the job takes its GPUs from the free ones (never all of them)
            want = max(1, job.resources.gpus)
            free = self.free
            if want > len(free):
                raise StsbenchError(f"{job.id} asks for {want} GPUs; {len(free)} are free")
            taken = free[:want]
            env["CUDA_VISIBLE_DEVICES"] = ",".join(taken)
        else:
            threads = str(job.resources.cpus or self.threads)
            env.update({"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads})
        reader = None
        if job.log is not None:
            job.log.parent.mkdir(parents=True, exist_ok=True)
            with job.log.open("ab") as out:
                proc = self._start(job, env, stdout=out)
        else:  # text, line by line, as the child flushes them (PYTHONUNBUFFERED)
            proc = self._start(job, env, stdout=subprocess.PIPE, text=True, errors="replace", bufsize=1)
            reader = _Reader(proc.stdout, on_line)
            reader.start()
        for g in taken:
            self.held[g] += 1
        return _Process(proc, lambda: self._release(taken), reader)

    def _start(self, job: Job, env: dict[str, str], **output) -> subprocess.Popen:  # noqa: ANN003
        return subprocess.Popen(  # noqa: S603 - our own interpreter and module
            job.command(), cwd=job.cwd, env=env, stderr=subprocess.STDOUT, start_new_session=True, **output
        )

    def _release(self, gpus: Sequence[str]) -> None:
        for g in gpus:
            self.held[g] -= 1


# name -> "module:attr" of an Executor class, built as cls(out=OUT, parallel=N, options={KEY: VALUE}): the
# reproduce folder (where a cluster's executor keeps its own files), --parallel, and each --executor-option
# KEY=VALUE (a cluster's parameters: partition, account, ...; an executor refuses a key it does not know)
EXECUTORS: Registry[type[Executor]] = Registry("executor", normalise=str.lower)
EXECUTORS.register("local", "stsbench.reproduce.executors:LocalExecutor")
EXECUTORS.register("slurm", "stsbench.reproduce.slurm:SlurmExecutor")


def make_executor(
    name: str,
    *,
    out: Path,
    parallel: int = 1,
    options: Mapping[str, str] | None = None,
    per_gpu: int = 1,
) -> Executor:
    """The executor registered as ``name`` (one line naming the known ones if none).

    ``per_gpu`` (processes sharing a GPU) is the local executor's alone: other executors are built without it,
    and refuse it in one line where it is not 1.
    """
    cls = EXECUTORS.get(name)
    if per_gpu == 1:
        return cls(out=out, parallel=parallel, options=dict(options or {}))
    if not issubclass(cls, LocalExecutor):
        raise StsbenchError(
            f"--per-gpu shares this machine's GPUs (the local executor); --executor {name} places its jobs "
            "itself: drop --per-gpu"
        )
    return cls(out=out, parallel=parallel, options=dict(options or {}), per_gpu=per_gpu)


def step_threads(given: int | None, executor: str) -> int | None:
    """The CPU threads each step gets: ``--threads``, else (local) the user's ``OMP_NUM_THREADS``, else None.

    None leaves it to the executor: the local one gives each step cores/--parallel, Slurm's what it allocated.
    On Slurm ``OMP_NUM_THREADS`` is not read: the login shell's setting would become each job's CPU request.
    A value that is not a positive whole number is one line (exit 2) rather than a share made up.
    """
    if given is not None or executor.lower() != "local":
        return given
    text = os.environ.get("OMP_NUM_THREADS", "").strip()
    if not text:
        return None
    if not text.isdigit() or int(text) < 1:
        raise StsbenchError(
            f"OMP_NUM_THREADS={text!r}: not a positive whole number; set it to the CPU threads each step "
            "should use (e.g. OMP_NUM_THREADS=1), unset it, or pass --threads N"
        )
    return int(text)
