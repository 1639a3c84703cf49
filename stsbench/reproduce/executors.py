"""Where a reproduction's steps run (one :class:`Executor` per engine), and the scheduler that runs them.

A step is a :class:`Job`: the ``stsbench`` command line that does it, the log its output goes to, the
environment it adds and the resources it asks for. An executor starts jobs (:meth:`Executor.submit`, or
:meth:`Executor.submit_many` for those ready at once: a Slurm job array); executors register in
:data:`EXECUTORS` by ``"module:attr"``, so that choosing one imports it alone. Nothing here knows what a step
does: the scheduler (:func:`run_plan`) polls the jobs' :class:`Handle` and reads a job's progress and error
from its files (``log`` and the run's ``train_log.jsonl``), the same wherever it ran.

:class:`LocalExecutor` runs processes on this machine (several GPUs: through ``torchrun``), on Linux forks of a
warm server (:mod:`stsbench.reproduce.forkserver`); ``stsbench train --seeds --parallel N`` starts its seeds
with it too, as plain processes, their output read line by line (``on_line``).

:class:`SlurmExecutor` makes each step a Slurm job through ``submitit``: :class:`StepCommand` runs
:meth:`Job.command` on the node, its output appended to the step's log, with as many threads as Slurm gave it
CPUs. A job asks for its step's :class:`Resources`, then ``--executor-option KEY=VALUE``, which wins: KEY is
any parameter of submitit's ``AutoExecutor`` (``timeout_min``, ``mem_gb``, ``cpus_per_task``,
``gpus_per_node``, ``slurm_partition``, ``slurm_account``, ``slurm_qos``, ``slurm_setup``,
``slurm_additional_parameters``, ...; ``partition=`` stands for ``slurm_partition=``), VALUE read as YAML. A
job preempted or at its time limit is requeued and resumes (submitit's checkpointing): Slurm signals it
(``USR2`` before the limit, through submitit's ``--signal``; a preemption's ``SIGTERM``), the step's process
ignores those signals as submitit's own code does, and submitit calls :meth:`StepCommand.checkpoint`, which
stops the process and hands back the step to run again (:meth:`Job.started_again`). A job Slurm requeues by
itself starts again the same way.

:func:`run_plan` runs each step once the steps it reads are done: a step done (its key and record say so) is
skipped; a failed step's dependants are ``skipped`` while the others go on; Ctrl-C (or SIGTERM) stops the
running steps (a training keeps its last saved state), marks them ``interrupted`` and leaves a state that the
same command resumes. Every change is written to ``OUT/reproduce.json`` at once, so that ``stsbench reproduce
OUT --status`` (another process) and a rerun after ``kill -9`` read where it stood.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from stsbench.errors import Interrupted, StsbenchError
from stsbench.files import WAIT_ENV
from stsbench.registry import Registry
from stsbench.reproduce import forkserver
from stsbench.reproduce.state import initial_actions, log_path, save_state, seal, session_record
from stsbench.results.write import portable
from stsbench.train.lifeline import child_environment
from stsbench.train.log import continue_flags, run_status

# the plan is imported where it runs (run_plan): --status imports this module, never the plan
if TYPE_CHECKING:
    from stsbench.reproduce.plan import Plan, Step


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
        found = run_status(self.folder)
        # a saved state resumes; without one, a plain start where the folder is empty, else one that clears it
        return self.resume_args if found == "finished" else (*self.restart_args, *continue_flags(found))

    def command(self, *, resumed: bool = False) -> list[str]:
        """The process's command line: ``python -m stsbench ARGS``, through torchrun for several GPUs."""
        python, args = sys.executable, self.started_again() if resumed else self.args
        if self.distributed and self.resources.gpus > 1:
            # through stsbench.train.lifeline: torchrun ends with this process; its workers follow it
            launch = ["-m", "stsbench.train.lifeline", "torch.distributed.run", "--standalone"]
            return [python, *launch, f"--nproc_per_node={self.resources.gpus}", "-m", "stsbench", *args]
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

    def expect(self, steps: int) -> None:  # noqa: B027 - most executors prepare nothing
        """How many steps the scheduler is about to start (the local executor forks its steps only for several)."""

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
    if not gpu_device_files():  # no GPU driver's device here: torch (3 s of imports) is not asked
        return []
    import torch

    return [str(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []


def gpu_device_files() -> bool:
    """Whether a CUDA or ROCm device file is here (``/dev/nvidia0``..., ``/dev/kfd``); off Linux, True but on macOS."""
    if not sys.platform.startswith("linux"):
        return sys.platform != "darwin"
    return Path("/dev/kfd").exists() or any(Path("/dev").glob("nvidia[0-9]*"))


class _Process(Handle):
    """A local process; with ``on_line``, a thread of its own hands it each line of the process's output.

    The thread reads to the end whatever ``on_line`` does, so that the process never blocks on a full pipe;
    the first exception ``on_line`` raised is raised by :meth:`poll` once the process has ended.
    """

    def __init__(self, proc: subprocess.Popen, on_end: Callable[[], Any], on_line: Callable | None) -> None:
        self.proc, self._on_end, self._ended = proc, on_end, False
        self._error: BaseException | None = None
        reader = threading.Thread(target=self._read, args=(on_line,), name="stsbench-output", daemon=True)
        self._reader = None if on_line is None else reader
        if self._reader is not None:
            self._reader.start()

    def _read(self, on_line: Callable[[str], None]) -> None:
        with self.proc.stdout as stream:  # type: ignore[union-attr]
            for raw in stream:
                if self._error is None:
                    try:
                        on_line(raw.rstrip("\n"))
                    except Exception as exc:  # noqa: BLE001 - kept and raised by poll, in the caller's thread
                        self._error = exc

    def poll(self) -> int | None:
        if self._reader is not None and self._reader.is_alive():  # its last lines not yet handed on
            return None
        code = self.proc.poll()
        if code is not None and not self._ended:
            self._ended = True
            self._on_end()
            if self._error is not None:
                raise self._error
        return code

    def cancel(self) -> None:
        if self.proc.poll() is None:
            _signal_group(self.proc, signal.SIGTERM)
        try:
            self.proc.wait(timeout=forkserver.STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        if self._reader is not None:
            self._reader.join(timeout=5)
        self.poll()

    def describe(self) -> str:
        return f"pid {self.proc.pid}"


def _start(command: list[str], job: Job, env: Mapping[str, str], out: Any, **extra: Any) -> subprocess.Popen:
    """``command`` in ``job.cwd``, its output (stderr too) to ``out``, in a process group of its own.

    Its own group: a terminal's Ctrl-C reaches this process alone, and a stop ends torchrun's workers with it.
    """
    return subprocess.Popen(  # noqa: S603 - our own interpreter and module
        command, cwd=job.cwd, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True, **extra
    )


def _signal_group(proc: subprocess.Popen, sig: signal.Signals) -> None:
    """``sig`` to ``proc``'s process group (torchrun's workers too), or to ``proc`` alone where that fails."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        proc.send_signal(sig)  # what Popen.terminate() and kill() send


def _environment() -> dict[str, str]:
    """A local step's environment before its own: this process's, its lifeline's PID, output unbuffered."""
    return {**os.environ, **child_environment(), "PYTHONUNBUFFERED": "1"}


def check_counts(parallel: int, per_gpu: int) -> None:
    """One line where ``--parallel`` or ``--per-gpu`` is below 1."""
    if parallel < 1:
        raise StsbenchError(f"--parallel must be at least 1, got {parallel}")
    if per_gpu < 1:
        raise StsbenchError(f"--per-gpu must be at least 1 (processes sharing one GPU), got {per_gpu}")


class LocalExecutor(Executor):
    """Processes on this machine, ``parallel`` at once.

    On CPU each gets cores/parallel threads (``OMP_NUM_THREADS``, which torch follows); with GPUs, each job
    takes the free ones of those visible (``CUDA_VISIBLE_DEVICES``), as many as it asks for (one when it asks
    for none), and a job asking for more than are free waits; one asking for more than are visible is refused
    before anything runs (:meth:`never_fits`). A GPU is a job's own unless ``per_gpu`` lets that many processes
    share it (on CPU ``per_gpu`` is ignored); a job takes the least shared GPUs first, in the order visible. Each
    process is its own process group, so that a terminal's Ctrl-C reaches this process alone and the caller
    stops the jobs in order; each job follows this process (:mod:`stsbench.train.lifeline`), so that ``kill
    -9`` of it ends them too. On Linux a job with a log (a reproduction's step) is a fork of a server that
    imported the heavy libraries once (:mod:`stsbench.reproduce.forkserver`; ``fork=False`` or
    ``STSBENCH_FORK_SERVER=0``: plain processes), started on the first such job and ended by :meth:`close`.
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
        fork: bool | None = None,
    ) -> None:
        if options:
            raise StsbenchError(
                f"the local executor takes no --executor-option (got {', '.join(options)}); use --parallel"
            )
        check_counts(parallel, per_gpu)
        self.slots, self.per_gpu = parallel, per_gpu
        self.gpus = list(visible_gpus() if gpus is None else gpus)  # every GPU this executor may hand out
        self.held = Counter(dict.fromkeys(self.gpus, 0))  # GPU -> the running processes it is handed to
        self.threads = max(1, cores() // parallel)
        self.fork = forkserver.enabled() if fork is None else fork  # steps with a log fork from a warm server
        self._few = False  # the scheduler said too few steps to start a server for (a running one serves)
        self._server: forkserver.ForkServer | None = None

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
        if (job.log is None) == (on_line is None):
            raise ValueError(f"{job.id}: give a job either a log or an on_line to read its output")
        env, taken = {**_environment(), **job.env}, []
        if self.gpus:  # a GPU machine: the job takes its GPUs from the free ones (never all of them)
            want, free = max(1, job.resources.gpus), self.free
            if want > len(free):
                raise StsbenchError(f"{job.id} asks for {want} GPUs; {len(free)} are free")
            taken = free[:want]
            env["CUDA_VISIBLE_DEVICES"] = ",".join(taken)
        else:
            threads = str(job.resources.cpus or self.threads)
            env.update({"OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads})
        if job.log is not None:
            job.log.parent.mkdir(parents=True, exist_ok=True)
            server = self._warm(env, job)
            pid = server and server.submit(job.id, list(job.args), str(job.cwd), env, str(job.log))
            if server and pid:
                self.held.update(taken)
                return forkserver.Forked(server, pid, lambda: self.held.subtract(taken))
        # without a log: text, line by line, as the child flushes them (PYTHONUNBUFFERED)
        with job.log.open("ab") if job.log is not None else nullcontext(subprocess.PIPE) as out:
            proc = _start(job.command(), job, env, out, text=True, errors="replace", bufsize=1)
        self.held.update(taken)
        return _Process(proc, lambda: self.held.subtract(taken), on_line)

    def expect(self, steps: int) -> None:
        """Plain processes below :data:`~stsbench.reproduce.forkserver.MIN_STEPS` steps (few steps save less).

        The server imports what every kind of step needs, which costs more than a few steps save. Said again
        for each round of an executor that is reused: a round of few steps starts no server, a later round of
        many still does, and a server already running serves a round of any size (it costs nothing more).
        """
        self._few = steps < forkserver.MIN_STEPS

    def _warm(self, env: Mapping[str, str], job: Job) -> forkserver.ForkServer | None:
        """The fork server where ``job`` may be a fork of it (started on first use), else None: a plain process."""
        if not self.fork or (self._server is None and self._few):
            return None
        if self._server is None:
            try:
                self._server = forkserver.ForkServer(_environment())
            except StsbenchError as exc:  # the steps run as plain processes, as they did before
                logging.getLogger("stsbench").warning(f"{exc}; each step runs as its own process")
                self.fork = False
                return None
        distributed = job.distributed and job.resources.gpus > 1
        return self._server if self._server.takes(env, distributed) else None

    def close(self) -> None:
        """End the fork server, once every step has ended or been stopped."""
        if self._server is not None:
            self._server.close()
            self._server = None


# name -> "module:attr" of an Executor class, built as cls(out=OUT, parallel=N, options={KEY: VALUE}): the
# reproduce folder (where a cluster's executor keeps its own files), --parallel, and each --executor-option
# KEY=VALUE (a cluster's parameters: partition, account, ...; an executor refuses a key it does not know)
EXECUTORS: Registry[type[Executor]] = Registry("executor", normalise=str.lower)
EXECUTORS.register("local", "stsbench.reproduce.executors:LocalExecutor")
EXECUTORS.register("slurm", "stsbench.reproduce.executors:SlurmExecutor")


def make_executor(
    name: str, *, out: Path, parallel: int = 1, options: Mapping[str, str] | None = None, per_gpu: int = 1
) -> Executor:
    """The executor registered as ``name`` (one line naming the known ones if none).

    ``per_gpu`` (processes sharing a GPU) is the local executor's alone: other executors are built without it,
    and refuse it in one line where it is not 1.
    """
    cls, shared = EXECUTORS.get(name), {} if per_gpu == 1 else {"per_gpu": per_gpu}
    if shared and not issubclass(cls, LocalExecutor):
        raise StsbenchError(
            f"--per-gpu shares this machine's GPUs (the local executor); --executor {name} places its jobs "
            "itself: drop --per-gpu"
        )
    return cls(out=out, parallel=parallel, options=dict(options or {}), **shared)


def step_threads(given: int | None, executor: str) -> int | None:
    """The CPU threads each step gets: ``--threads``, else (local) the user's ``OMP_NUM_THREADS``, else None.

    None leaves it to the executor: the local one gives each step cores/--parallel, Slurm's what it allocated.
    On Slurm ``OMP_NUM_THREADS`` is not read: the login shell's setting would become each job's CPU request.
    A value that is not a positive whole number is one line (exit 2) rather than a share made up.
    """
    text = os.environ.get("OMP_NUM_THREADS", "").strip()
    if given is not None or executor.lower() != "local" or not text:
        return given
    if not text.isdigit() or int(text) < 1:
        raise StsbenchError(
            f"OMP_NUM_THREADS={text!r}: not a positive whole number; set it to the CPU threads each step "
            "should use (e.g. OMP_NUM_THREADS=1), unset it, or pass --threads N"
        )
    return int(text)


DEFAULT_TIMEOUT_MIN = 24 * 60  # submitit's own default is 5 minutes; a longer run is requeued at the limit
GENERIC = ("timeout_min", "mem_gb", "gpus_per_node", "cpus_per_task", "name", "stderr_to_stdout")
ONE_PROCESS = ("nodes", "tasks_per_node", "slurm_nodes", "slurm_ntasks_per_node")  # a step is one process
FINAL = {"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "TIMEOUT"}
GONE = "no longer in the queue"  # a job squeue no longer lists (it ended long ago)
RESTART_LOCK_WAIT_S = 300  # a restarted job waits this long for its previous attempt to release its output
RESULT_GRACE_S = 15.0  # how long a job that ended may take to show its result file (shared filesystems lag)
QUEUE_EVERY_S = 5.0
POLL_SECONDS = 0.2  # how often the scheduler polls the running jobs


def _stop_signals() -> list[signal.Signals]:
    """SIGTERM and submitit's preemption signal (``SUBMITIT_PREEMPT_SIGNAL``, default USR2)."""
    return [signal.SIGTERM, signal.Signals[f"SIG{os.environ.get('SUBMITIT_PREEMPT_SIGNAL', 'USR2')}"]]


def _ignore_stop_signals() -> None:  # pragma: no cover - runs in the child between fork and exec
    for sig in _stop_signals():
        signal.signal(sig, signal.SIG_IGN)


@contextmanager
def _stop_signals_held() -> Iterator[None]:
    """The stop signals' handlers (submitit's checkpoint and requeue) run when the block ends, not in it.

    A stop signal that came while the step's process was being started found no process to stop in
    :meth:`StepCommand.checkpoint`, and the process, in a session of its own, outlived its job and held its run
    folder against the job started again. Python runs signal handlers in the main thread whichever thread the
    signal reached (a signal mask would not hold it in a process with other threads), so the handlers are swapped
    for one that notes the signal, and the noted signals are raised again once the process is known.
    """
    noted: list[int] = []
    previous: dict[signal.Signals, Any] = {}
    with suppress(ValueError):  # not the main thread, where no handler can run either
        for sig in _stop_signals():
            previous[sig] = signal.signal(sig, lambda signum, frame: noted.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        for sig in dict.fromkeys(noted):
            signal.raise_signal(sig)


class StepCommand:
    """What a Slurm job runs: the step's process, its output appended to the step's log; returns its status.

    submitit checkpoints an object that has a ``checkpoint`` method (``submitit.helpers.Checkpointable``'s
    protocol); this one needs no submitit to be built, so that the package imports without it.
    """

    def __init__(self, job: Job, restarted: bool = False) -> None:
        self.job, self.restarted = job, restarted
        self._proc: subprocess.Popen | None = None

    def __reduce__(self) -> tuple[Any, ...]:  # pickled without its process
        return StepCommand, (self.job, self.restarted)

    def __call__(self) -> int:
        job, environ = self.job, os.environ
        restarts = int(environ.get("SLURM_RESTART_COUNT") or 0)
        resumed = self.restarted or restarts > 0  # requeued by submitit after a checkpoint, or by Slurm
        cpus = environ.get("SLURM_CPUS_PER_TASK") or environ.get("SLURM_CPUS_ON_NODE")
        env = {**environ, **job.env, "PYTHONUNBUFFERED": "1"}
        if cpus:  # torch's threads: what Slurm gave the job, not every core of the node
            env.update({"OMP_NUM_THREADS": cpus, "MKL_NUM_THREADS": cpus})
        # started again: the previous attempt's process may still be dying (SIGKILL after KillWait), its lock held
        if resumed:
            env.setdefault(WAIT_ENV, str(RESTART_LOCK_WAIT_S))
        command = job.command(resumed=resumed)
        task = f"_{environ['SLURM_ARRAY_TASK_ID']}" if environ.get("SLURM_ARRAY_TASK_ID") else ""
        where = f"slurm job {environ.get('SLURM_ARRAY_JOB_ID', environ.get('SLURM_JOB_ID', '?'))}{task}"
        how = "started over" if job.resume_args is not None and command[-1] != "--resume" else "resumed"
        again = f", restart {max(restarts, 1)}, {how}" if resumed else ""
        job.log.parent.mkdir(parents=True, exist_ok=True)
        with job.log.open("ab") as out:
            out.write(f"[{where} on {socket.gethostname()}{again}: {shlex.join(command)}]\n".encode())
            out.flush()
            with _stop_signals_held():  # checkpoint() must find the process it stops
                # only signal calls between fork and exec, no threads yet
                self._proc = _start(command, job, env, out, preexec_fn=_ignore_stop_signals)
            return self._proc.wait()

    def checkpoint(self) -> Any:
        """Stop the step's process and give submitit the step to requeue, resumed (a training's ``--resume``)."""
        from submitit.helpers import DelayedSubmission

        proc = self._proc
        if proc is not None and proc.poll() is None:
            # SIGKILL, as it ignores SIGTERM; not waited for: this runs in a signal handler that interrupted
            # proc.wait(), whose lock it would wait on for ever (Slurm ends the job's processes before the restart)
            _signal_group(proc, signal.SIGKILL)
        return DelayedSubmission(StepCommand(self.job, restarted=True))


def _parameters(job: Job) -> dict[str, Any]:
    """The submitit parameters for what ``job`` asks for."""
    res = job.resources
    params = {"timeout_min": res.time_min or DEFAULT_TIMEOUT_MIN, "name": f"stsbench-{job.id.split('/')[0]}"}
    asked = {"gpus_per_node": res.gpus, "cpus_per_task": res.cpus, "mem_gb": res.mem_gb}
    return {**params, **{k: v for k, v in asked.items() if v}}


def parse_options(options: Mapping[str, str]) -> dict[str, Any]:
    """``--executor-option`` KEY=VALUE pairs as submitit ``AutoExecutor`` parameters (values read as YAML)."""
    from submitit.slurm.slurm import SlurmExecutor as _Slurm

    slurm = sorted(_Slurm._valid_parameters())
    known = [*GENERIC, "max_num_timeout", *(f"slurm_{k}" for k in slurm)]
    parsed: dict[str, Any] = {}
    for key, text in options.items():
        name = key.strip().replace("-", "_")
        if name in slurm and name not in GENERIC:
            name = f"slurm_{name}"  # partition=gpu: slurm_partition=gpu
        if name in ONE_PROCESS:
            raise StsbenchError(
                f"--executor-option {key}: a step is one process on one node (several GPUs: --gpus N, "
                "through torchrun); multi-node steps are not supported"
            )
        if name not in known:
            near = difflib.get_close_matches(name, [*known, *slurm], n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise StsbenchError(
                f"--executor-option {key}: not a parameter of submitit's Slurm executor{hint}; "
                "docs/reproduce.md lists them"
            )
        try:
            parsed[name] = yaml.safe_load(text) if text.strip() else None
        except yaml.YAMLError:
            parsed[name] = text
    return parsed


def _first_line(exc: object) -> str:
    return next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)


class SlurmHandle(Handle):
    """A step's Slurm job (a submitit ``Job``)."""

    def __init__(self, job: Job, sjob: Any, executor: SlurmExecutor) -> None:
        self.job, self.sjob, self.executor = job, sjob, executor
        self.code: int | None = None
        self._ended_at: float | None = None

    def poll(self) -> int | None:
        if self.code is not None:
            return self.code
        if self.sjob.paths.result_pickle.exists():
            exc = self.sjob.exception()  # None, or submitit's error (its trace, or why it was not requeued)
            if exc is None:
                self.code = int(self.sjob.result())
            else:
                self._fail(f"Slurm job {self.sjob.job_id}: {_first_line(exc)}")
            return self.code
        # submitit's state from sacct; where the cluster keeps no accounting, squeue's
        state = self.sjob.state if self.executor.accounting else self.executor.state(self.sjob.job_id)
        if state == GONE or (state.split() or [""])[0].upper() in FINAL:  # sacct's "CANCELLED by 0": an end
            # its result file may lag on a shared filesystem: wait, then report the end
            self._ended_at = self._ended_at or time.time()
            if time.time() - self._ended_at >= RESULT_GRACE_S:
                self._fail(f"Slurm job {self.sjob.job_id} ended without finishing the step ({state})")
        return self.code

    def _fail(self, message: str) -> None:
        with self.job.log.open("a", encoding="utf-8") as log:  # the scheduler shows a log's error: line
            log.write(f"error: {message}; submitit's log: {self.sjob.paths.stderr}\n")
        self.code = 1

    def cancel(self) -> None:
        job_id = self.sjob.job_id
        # SIGKILL first: the step and submitit ignore SIGTERM (see the module's docstring), so a plain scancel
        # would leave them running for the cluster's KillWait; the training keeps its last saved state
        for cmd in (["scancel", "--full", "--signal=KILL", job_id], ["scancel", job_id]):
            subprocess.run(cmd, capture_output=True, check=False, timeout=60)  # noqa: S603
        if self.code is None:
            self.code = -signal.SIGKILL

    def describe(self) -> str:
        return f"slurm job {self.sjob.job_id}"


class SlurmExecutor(Executor):
    """Steps as Slurm jobs through submitit; those ready at once, asking for the same, as one job array.

    ``out``: the reproduction's folder; submitit keeps its files (the jobs' pickles, sbatch scripts and logs)
    in ``out/slurm/<session>/<job id>``, which must be on a filesystem the nodes share, as ``out`` must.
    ``options``: ``--executor-option`` pairs (:func:`parse_options`). Every ready step is submitted (the
    cluster queues them); ``slurm_array_parallelism`` caps how many of an array run at once.

    Where the cluster keeps no accounting (``sacct`` fails), the jobs' states come from ``squeue``
    (:meth:`state`): there a job that ended without a result file (cancelled, killed by the node, out of
    memory) would look queued for ever, and every ``sacct`` call would print its error.
    """

    name = "slurm"
    slots = None

    def __init__(self, *, out: Path, parallel: int = 1, options: Mapping[str, str] | None = None) -> None:
        if parallel != 1:
            raise StsbenchError(
                "--parallel is the local executor's; on Slurm the cluster schedules the jobs "
                "(--executor-option slurm_array_parallelism=N caps an array)"
            )
        try:
            import submitit  # noqa: F401
        except ImportError:
            raise StsbenchError("the Slurm executor needs submitit: pip install 'stsbench[slurm]'") from None
        self.options = parse_options(options or {})
        self.max_num_timeout = int(self.options.pop("max_num_timeout", 3))
        # one folder per session: a cluster whose job ids start again (a restarted test cluster) must not find
        # an earlier session's result files under the same ids
        session = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        self.folder = Path(out) / "slurm" / session / "%j"
        self._executor(dict(self.options))  # no srun, or a refused option: say so before anything runs
        self.accounting = _accounting()
        # squeue's states (without accounting), the base job ids watched (an array's tasks share one), those
        # the last squeue call listed or would have, and when it ran
        self.states, self.watched, self.asked, self.checked = {}, set(), set(), 0.0

    def _executor(self, params: dict[str, Any]) -> Any:
        import submitit

        where = {"folder": self.folder, "cluster": "slurm", "slurm_max_num_timeout": self.max_num_timeout}
        try:
            ex = submitit.AutoExecutor(**where)
        except RuntimeError as exc:  # submitit: 'Could not detect "srun"'
            why = _first_line(exc)
            raise StsbenchError(f"--executor slurm: {why} (no Slurm client on this machine)") from None
        try:
            ex.update_parameters(**params)
        except (AssertionError, NameError, ValueError, TypeError) as exc:
            raise StsbenchError(f"--executor-option: {_first_line(exc)}") from None
        return ex

    def submit(self, job: Job) -> Handle:
        return self.submit_many([job])[0]

    def submit_many(self, jobs: Sequence[Job]) -> list[Handle]:
        groups: dict[str, list[int]] = {}
        params = [{**_parameters(job), **self.options} for job in jobs]
        for i, p in enumerate(params):
            groups.setdefault(repr(sorted(p.items())), []).append(i)
        handles: list[Any] = [None] * len(jobs)
        for members in groups.values():
            ex = self._executor(params[members[0]])
            try:
                with ex.batch():  # one sbatch: a job array when there are several
                    sjobs = [ex.submit(StepCommand(jobs[i])) for i in members]
            except Exception as exc:  # noqa: BLE001 - sbatch's refusal, in whichever form submitit raises it
                detail = getattr(exc, "stderr", None) or getattr(exc, "output", None) or exc
                if isinstance(detail, bytes):
                    detail = detail.decode("utf-8", "replace")
                raise StsbenchError(f"sbatch refused {jobs[members[0]].id}: {_first_line(detail)}") from None
            for i, sjob in zip(members, sjobs, strict=True):
                handles[i] = SlurmHandle(jobs[i], sjob, self)
        return handles

    def state(self, job_id: str) -> str:
        """A job's state from ``squeue``: :data:`GONE` where it is no longer known, ``UNKNOWN`` not yet asked.

        One ``squeue`` call for every job watched, at most every ``QUEUE_EVERY_S`` seconds.
        """
        base = job_id.split("_")[0]
        self.watched.add(base)
        if time.time() - self.checked >= QUEUE_EVERY_S:
            self.checked = time.time()
            ids = sorted(self.watched)
            cmd = ["squeue", "-h", "-r", "-t", "all", "-o", "%i|%T", "-j", ",".join(ids)]
            with suppress(OSError, subprocess.TimeoutExpired):  # no answer: keep what it said before
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603
                if done.returncode == 0:  # else keep what it said before
                    self.states = dict(ln.split("|", 1) for ln in done.stdout.splitlines() if "|" in ln)
                    self.asked = set(ids)
        found = self.states.get(job_id) if base in self.asked else ""
        return GONE if found is None else found or "UNKNOWN"


def _accounting() -> bool:
    """Whether the cluster keeps accounting (``sacct`` answers); refuses an unreachable controller."""
    try:
        cmd = ["scontrol", "show", "config"]
        shown = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603
    except (OSError, subprocess.TimeoutExpired) as e:
        raise StsbenchError(f"--executor slurm: scontrol failed ({e}); is this a Slurm login node?") from None
    if shown.returncode != 0:
        why = _first_line(Exception(shown.stderr or shown.stdout))
        raise StsbenchError(f"--executor slurm: the Slurm controller does not answer ({why})")
    found = re.search(r"^AccountingStorageType\s*=\s*(\S+)", shown.stdout, re.M)
    return found is None or not found[1].endswith("/none")


def first_error(log: Path, offset: int, returncode: int) -> str:
    """The one line a failed step is shown with: its ``error:`` line, the signal, or its last line.

    The whole of this session's output is read (from ``offset``): a step's log holds its progress, and under
    torchrun every rank's traceback, the first of which is the one to show.
    """
    from stsbench.train.seeds import failure_line

    lines: list[str] = []
    with suppress(OSError), log.open("rb") as fh:  # an unreadable log: the signal or the status alone
        fh.seek(offset)
        lines = fh.read().decode("utf-8", "replace").splitlines()
    return failure_line(returncode, lines) or f"exited with status {returncode}"


def make_job(
    plan: Plan,
    step: Step,
    flags: tuple[str, ...],
    gpus: int,
    allow_modified: bool = False,
    threads: int | None = None,
) -> Job:
    """The executor's job of ``step``, its flags added.

    ``allow_modified``: an evaluation's and an analysis' ``--allow-modified-data`` (they mark what they score).
    ``threads``: the CPU threads the step's process gets (``reproduce --threads``, else the user's
    ``OMP_NUM_THREADS``): its ``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` and the CPUs it asks for (the local executor's
    share otherwise; a Slurm job's ``cpus_per_task``); None: the executor's own. Never in the step's key or command
    line: where and how fast a step runs is no input of what it computes.
    A training step resumes when started again (preempted, requeued), or starts over when stopped before its
    first save (:meth:`Job.started_again`).
    """
    train = step.kind == "train"
    if allow_modified and step.kind in ("evaluate", "analysis"):
        flags = (*flags, "--allow-modified-data")
    env = {} if threads is None else {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    again = {"resume_args": (*step.args, "--resume"), "folder": step.folder, "restart_args": step.args}
    asks = Resources(gpus=gpus if train else min(gpus, 1), cpus=threads)
    log = log_path(plan.out, step.id)
    return Job(step.id, (*step.args, *flags), log, Path.cwd(), env, asks, train, **(again if train else {}))


class _Interrupted(Exception):
    """SIGINT or SIGTERM reached the scheduler."""


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise _Interrupted(signal.Signals(signum).name)


def run_plan(
    plan: Plan,
    state: dict[str, Any],
    executor: Executor,
    *,
    started: float,
    gpus: int = 0,
    changed: str = "rerun",
    show: Callable[[dict[str, Any]], None] = lambda state: None,
    allow_modified: bool = False,
    threads: int | None = None,
    checkout: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run every step not done; return the state (its ``sessions`` gains this one). Raises on interruption.

    ``changed``: what to do with a step done by other code (:func:`stsbench.reproduce.state.decide`): run it
    again (``rerun``) or keep it (``keep``: its record keeps the code it ran with). ``threads``: each step's
    CPU threads (:func:`make_job`). ``checkout``: what the session's record adds about the code it runs (a dirty
    checkout's commit and the files that differ from it: :func:`stsbench.results.write.session_code`).
    A step the executor could never start (more GPUs than it has) is one line before anything runs.
    """
    from stsbench.reproduce.plan import prepare  # here: --status imports this module, never the plan

    steps, records = {s.id: s for s in plan.steps}, state["steps"]
    actions = initial_actions(plan, state, changed)
    executor.expect(sum(action == "run" for action, _ in actions.values()))
    for step in (s for s in plan.steps if actions[s.id][0] == "run"):
        if why := executor.never_fits(make_job(plan, step, (), gpus, threads=threads)):
            raise StsbenchError(f"{step.id}: {why}")
    for step in plan.steps:
        rec = records.setdefault(step.id, {})
        # paths relative to the reproduction's folder, which may be moved or copied
        rec.update(kind=step.kind, deps=list(step.deps), log=portable(log_path(plan.out, step.id), plan.out))
        if step.folder is not None:
            rec.update(folder=portable(step.folder, plan.out), total_steps=step.total_steps)
        queued = actions[step.id][0] == "run"
        rec.update(status="queued" if queued else "done", key=step.key, parts=step.parts)
        if queued:  # a step run again is this code's, no longer one carried over to it
            rec.update(error=None, progress=None)
            rec.pop("carried", None)
        elif "files" not in rec:  # finished before its files were sealed: sealed once, as they are
            seal(rec, step, plan.out)
    state["order"] = [s.id for s in plan.steps]  # --status shows the plan's order
    running: dict[str, tuple[Handle, float, int]] = {}  # a step -> its handle, start and log offset
    intervals: list[tuple[float, float]] = []

    def not_run() -> None:  # the steps never started
        for r in (r for r in records.values() if r.get("status") == "queued"):
            r["status"] = "not run"

    save_state(plan.out, state)
    show(state)
    old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    stopped = None  # what interrupted the session
    try:
        while True:
            free = None if executor.slots is None else executor.slots - len(running)
            batch, idle, unfit = [], not running, []  # idle: no running job will free anything
            for step in [steps[i] for i, r in records.items() if i in steps and r["status"] == "queued"]:
                if any(records[d]["status"] in ("failed", "skipped") for d in step.deps):  # its input failed
                    records[step.id].update(status="skipped", error="a step it needs failed")
                    continue
                ready = all(records[d]["status"] == "done" for d in step.deps)
                if not ready or (free is not None and len(batch) >= free):
                    continue
                job = make_job(plan, step, actions[step.id][1], gpus, allow_modified, threads)
                if not executor.fits(job):
                    unfit.append(step.id)
                    continue
                prepare(plan, step)  # a training's options file, the report's copies of the training logs
                if step.kind == "report":  # the copies the report reads, sealed in each training's record
                    for train in (s for s in plan.steps if s.folder is not None):
                        seal(records[train.id], train, plan.out, copies_only=True)
                job.log.parent.mkdir(parents=True, exist_ok=True)
                batch.append((job, job.log.stat().st_size if job.log.is_file() else 0))
            if batch:
                handles, now = executor.submit_many([job for job, _ in batch]), time.time()
                for (job, offset), handle in zip(batch, handles, strict=True):
                    running[job.id] = (handle, now, offset)
                    rec, where = records[job.id], handle.describe()
                    rec.update(status="running", started=now, ended=None, returncode=None, where=where)
                    rec.update(code=steps[job.id].code, attempts=rec.get("attempts", 0) + 1)
                save_state(plan.out, state)
            ended = False
            for sid, (handle, t0, offset) in list(running.items()):
                if (code := handle.poll()) is None:
                    continue
                now, ended, rec = time.time(), True, records[sid]
                intervals.append((t0, now))
                del running[sid]
                rec.update(ended=now, returncode=code, seconds=round(now - t0, 3))
                if code == 0:
                    rec.update(status="done", error=None)
                    seal(rec, steps[sid], plan.out)  # what it wrote, sealed as it finished
                else:
                    rec.update(status="failed", error=first_error(log_path(plan.out, sid), offset, code))
            if ended:
                save_state(plan.out, state)
            show(state)
            if not running and not any(r["status"] == "queued" for i, r in records.items() if i in steps):
                break
            if idle and unfit and not batch:  # nothing ran, and what is ready did not fit: it never will
                not_run()
                save_state(plan.out, state)
                raise StsbenchError(
                    f"{unfit[0]} cannot start: the executor cannot fit it with nothing running "
                    f"({executor.name}); ask for fewer GPUs (--gpus)"
                )
            time.sleep(POLL_SECONDS)
    except (_Interrupted, KeyboardInterrupt) as exc:
        stopped = exc or "SIGINT"
        for sid, (handle, t0, _) in running.items():
            handle.cancel()
            intervals.append((t0, time.time()))
            records[sid].update(status="interrupted", ended=time.time(), error=f"stopped by {stopped}")
        not_run()
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        executor.close()
    session = {**session_record(started, intervals), **(checkout or {})}
    state.setdefault("sessions", []).append(session if stopped is None else {**session, "interrupted": True})
    save_state(plan.out, state)
    show(state)
    if stopped is not None:
        raise Interrupted(
            f"interrupted ({stopped}); {len(running)} running step(s) stopped; "
            f"run the same command again to resume (stsbench reproduce {plan.out} --status shows where it stands)"
        )
    return state
