"""The Slurm executor: each step a Slurm job through ``submitit``, the steps ready at once one job array.

Each job runs the step's command (:meth:`Job.command`, the same as the local executor's) on the node, its output
appended to the step's log, with as many threads as Slurm gave it CPUs. What a job asks for comes from the step's
:class:`~stsbench.reproduce.executors.Resources` (GPUs, CPUs, memory, time), then from ``--executor-option
KEY=VALUE``, which wins: KEY is any parameter of submitit's ``AutoExecutor`` (``timeout_min``, ``mem_gb``,
``cpus_per_task``, ``gpus_per_node``, ``slurm_partition``, ``slurm_account``, ``slurm_qos``, ``slurm_setup``,
``slurm_additional_parameters``, ...; ``partition=`` stands for ``slurm_partition=``), VALUE is read as YAML.

A job that is preempted or reaches its time limit is requeued and resumes (submitit's checkpointing): Slurm
signals it (``USR2`` before the limit, through submitit's ``--signal``; a preemption's ``SIGTERM``), the step's
process ignores those signals as submitit's own code does, submitit calls :meth:`StepCommand.checkpoint`, which
stops the process and hands back the step to run again with its resume arguments (a training's ``--resume``
from its last saved state; a training stopped before its first save starts over), and requeues the job. A job
Slurm requeues by itself starts again the same way.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from stsbench.errors import StsbenchError
from stsbench.output_lock import WAIT_ENV
from stsbench.reproduce.executors import Executor, Handle, Job

DEFAULT_TIMEOUT_MIN = 24 * 60  # submitit's own default is 5 minutes; a longer run is requeued at the limit
GENERIC = ("timeout_min", "mem_gb", "gpus_per_node", "cpus_per_task", "name", "stderr_to_stdout")
ONE_PROCESS = ("nodes", "tasks_per_node", "slurm_nodes", "slurm_ntasks_per_node")  # a step is one process
FINAL = {"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL", "OUT_OF_MEMORY", "TIMEOUT"}
RESTART_LOCK_WAIT_S = 300  # a restarted job waits this long for its previous attempt to release its output
RESULT_GRACE_S = 15.0  # how long a job that ended may take to show its result file (shared filesystems lag)
QUEUE_EVERY_S = 5.0


def _stop_signals() -> list[signal.Signals]:
    """SIGTERM and submitit's preemption signal (``SUBMITIT_PREEMPT_SIGNAL``, default USR2)."""
    name = os.environ.get("SUBMITIT_PREEMPT_SIGNAL", "USR2")
    return [signal.SIGTERM, signal.Signals[f"SIG{name}"]]


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
    try:
        for sig in _stop_signals():
            previous[sig] = signal.signal(sig, lambda signum, frame: noted.append(signum))
    except ValueError:  # not the main thread, where no handler can run either
        pass
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

    def __getstate__(self) -> dict[str, Any]:
        return {"job": self.job, "restarted": self.restarted}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.job, self.restarted, self._proc = state["job"], state["restarted"], None

    def __call__(self) -> int:
        job = self.job
        restarts = int(os.environ.get("SLURM_RESTART_COUNT") or 0)
        resumed = self.restarted or restarts > 0  # requeued by submitit after a checkpoint, or by Slurm
        cpus = os.environ.get("SLURM_CPUS_PER_TASK") or os.environ.get("SLURM_CPUS_ON_NODE")
        env = {**os.environ, **job.env, "PYTHONUNBUFFERED": "1"}
        if cpus:  # torch's threads: what Slurm gave the job, not every core of the node
            env.update({"OMP_NUM_THREADS": cpus, "MKL_NUM_THREADS": cpus})
        # started again: the previous attempt's process may still be dying (SIGKILL after KillWait), its lock held
        if resumed:
            env.setdefault(WAIT_ENV, str(RESTART_LOCK_WAIT_S))
        command = job.command(resumed=resumed)
        job.log.parent.mkdir(parents=True, exist_ok=True)
        with job.log.open("ab") as out:
            where = f"slurm job {os.environ.get('SLURM_ARRAY_JOB_ID', os.environ.get('SLURM_JOB_ID', '?'))}"
            if os.environ.get("SLURM_ARRAY_TASK_ID"):
                where += f"_{os.environ['SLURM_ARRAY_TASK_ID']}"
            how = "started over" if job.resume_args is not None and command[-1] != "--resume" else "resumed"
            again = f", restart {max(restarts, 1)}, {how}" if resumed else ""
            out.write(f"[{where} on {socket.gethostname()}{again}: {shlex.join(command)}]\n".encode())
            out.flush()
            with _stop_signals_held():  # checkpoint() must find the process it stops
                self._proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
                    command,
                    cwd=job.cwd,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own group: checkpoint() stops torchrun's workers with it
                    preexec_fn=_ignore_stop_signals,  # noqa: PLW1509 - only signal calls, no threads yet
                )
            return self._proc.wait()

    def checkpoint(self) -> Any:
        """Stop the step's process and give submitit the step to requeue, resumed (a training's ``--resume``)."""
        from submitit.helpers import DelayedSubmission

        proc = self._proc
        if proc is not None and proc.poll() is None:
            # SIGKILL, as it ignores SIGTERM; not waited for: this runs in a signal handler that interrupted
            # proc.wait(), whose lock it would wait on for ever (Slurm ends the job's processes before the restart)
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                proc.kill()
        return DelayedSubmission(StepCommand(self.job, restarted=True))


def _parameters(job: Job) -> dict[str, Any]:
    """The submitit parameters for what ``job`` asks for."""
    res = job.resources
    params: dict[str, Any] = {
        "timeout_min": res.time_min or DEFAULT_TIMEOUT_MIN,
        "name": f"stsbench-{job.id.split('/')[0]}",
    }
    if res.gpus:
        params["gpus_per_node"] = res.gpus
    if res.cpus:
        params["cpus_per_task"] = res.cpus
    if res.mem_gb:
        params["mem_gb"] = res.mem_gb
    return params


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


def found_final(state: str) -> bool:
    """Whether a Slurm state (sacct's ``CANCELLED by 0``, squeue's ``TIMEOUT``) is a job's end."""
    return state == "no longer in the queue" or (state.split() or [""])[0].upper() in FINAL


def _first_line(exc: object) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    return lines[0] if lines else type(exc).__name__


def _accounting() -> bool:
    """Whether the cluster keeps accounting (``sacct`` answers); refuses an unreachable controller."""
    try:
        shown = subprocess.run(  # noqa: S603
            ["scontrol", "show", "config"], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StsbenchError(
            f"--executor slurm: scontrol failed ({exc}); is this a Slurm login node?"
        ) from None
    if shown.returncode != 0:
        why = _first_line(Exception(shown.stderr or shown.stdout))
        raise StsbenchError(f"--executor slurm: the Slurm controller does not answer ({why})")
    found = re.search(r"^AccountingStorageType\s*=\s*(\S+)", shown.stdout, re.M)
    return found is None or not found[1].endswith("/none")


class _Queue:
    """Job states from ``squeue``, for clusters without accounting, where submitit's ``sacct`` calls fail.

    There a job that ended without a result file (cancelled, killed by the node, out of memory) would look
    queued for ever, and every ``sacct`` call would print its error. One ``squeue`` call for every job
    watched, at most every ``QUEUE_EVERY_S`` seconds.
    """

    def __init__(self, accounting: bool) -> None:
        self.accounting = accounting
        self.states: dict[str, str] = {}
        self.watched: set[str] = set()  # base job ids (an array's tasks share one)
        self.asked: set[str] = set()  # those the last squeue call listed or would have
        self.checked = 0.0

    def state(self, job_id: str) -> str | None:
        """The job's state; None when Slurm no longer knows it (ended long ago); "" when not known yet."""
        base = job_id.split("_")[0]
        self.watched.add(base)
        if time.time() - self.checked >= QUEUE_EVERY_S:
            self.checked = time.time()
            ids = sorted(self.watched)
            cmd = ["squeue", "-h", "-r", "-t", "all", "-o", "%i|%T", "-j", ",".join(ids)]
            try:
                done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603
            except (OSError, subprocess.TimeoutExpired):
                done = None
            if done is not None and done.returncode == 0:  # else keep what it said before
                self.states = dict(ln.split("|", 1) for ln in done.stdout.splitlines() if "|" in ln)
                self.asked = set(ids)
        if base not in self.asked:
            return ""
        return self.states.get(job_id)


class SlurmHandle(Handle):
    """A step's Slurm job (a submitit ``Job``)."""

    def __init__(self, job: Job, sjob: Any, queue: _Queue) -> None:
        self.job, self.sjob, self.queue = job, sjob, queue
        self.code: int | None = None
        self._ended_at: float | None = None

    def poll(self) -> int | None:
        if self.code is not None:
            return self.code
        if self.sjob.paths.result_pickle.exists():
            return self._finish()
        state = self._state()
        if found_final(state):  # its result file may lag on a shared filesystem: wait, then report the end
            self._ended_at = self._ended_at or time.time()
            if time.time() - self._ended_at >= RESULT_GRACE_S:
                self._fail(f"Slurm job {self.sjob.job_id} ended without finishing the step ({state})")
        return self.code

    def _state(self) -> str:
        if self.queue.accounting:
            return self.sjob.state  # submitit's, from sacct
        found = self.queue.state(self.sjob.job_id)
        return "no longer in the queue" if found is None else found or "UNKNOWN"

    def _finish(self) -> int:
        exc = self.sjob.exception()  # None, or submitit's error (its trace, or why it was not requeued)
        if exc is None:
            self.code = int(self.sjob.result())
            return self.code
        self._fail(f"Slurm job {self.sjob.job_id}: {_first_line(exc)}")
        return 1

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

    ``out``: the reproduction's folder; submitit keeps its files (the jobs' pickles, sbatch scripts and logs) in
    ``out/slurm/<session>/<job id>``, which must be on a filesystem the nodes share, as ``out`` must. ``options``: ``--executor-option`` pairs (:func:`parse_options`). Every ready step is submitted
    (the cluster queues them); ``slurm_array_parallelism`` caps how many of an array run at once.
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
        self.queue = _Queue(accounting=_accounting())

    def _executor(self, params: dict[str, Any]) -> Any:
        import submitit

        try:
            ex = submitit.AutoExecutor(
                folder=self.folder, cluster="slurm", slurm_max_num_timeout=self.max_num_timeout
            )
        except RuntimeError as exc:  # submitit: 'Could not detect "srun"'
            raise StsbenchError(
                f"--executor slurm: {_first_line(exc)} (no Slurm client on this machine)"
            ) from None
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
        handles: list[Handle | None] = [None] * len(jobs)
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
                handles[i] = SlurmHandle(jobs[i], sjob, self.queue)
        return [h for h in handles if h is not None]
