"""Steps that start warm: one process imports the heavy libraries once, and each step is a fork of it (Linux).

A plain step process spends seconds importing torch, transformers, sentence-transformers, pandas, scipy and
matplotlib before it does anything (half a tiny training's CPU). The local executor starts this server once per
reproduction (``python -m stsbench.reproduce.forkserver``, on the first step it runs) with the orchestrator's
environment, one thread for every library (no thread pool, CUDA or MPS is started in it), and it imports those
libraries and the step commands' modules (:data:`PRELOAD`, :data:`stsbench.sources.ENTRIES`). Each step is then a
fork: a session of its own, its log as stdout and stderr, ``/dev/null`` as stdin, the job's folder and
environment, and the command line a plain process would run (``python -m stsbench ARGS``: the same
``__main__``), so that it ends as that process would, its exit status reported back.

A job may differ from the server's environment only in :data:`MAY_DIFFER`: the thread counts, applied in the
child through the libraries' own calls (``torch.set_num_threads``, ``threadpoolctl`` for BLAS and OpenMP),
``CUDA_VISIBLE_DEVICES`` (read when CUDA starts, which is in the child), and the lifeline's parent PID. Any other
difference, a job without a thread count (the libraries' own default, which a fork cannot see), and a
distributed (torchrun) job run as plain processes (:meth:`ForkServer.takes`).

Lifelines: the server follows the orchestrator (:func:`stsbench.train.lifeline.follow_parent`) and each step
follows the server, so that ``kill -9`` of the orchestrator ends the server and its steps with it, as it ends
plain steps. ``STSBENCH_FORK_SERVER=0`` turns it off (docs/speed.md).

The protocol is JSON lines: the orchestrator writes ``{"id", "args", "cwd", "env", "log"}`` to the server's
stdin; the server answers ``{"ready": pid}`` once, ``{"id", "pid"}`` (or ``{"id", "error"}``) per job, and
``{"pid", "code"}`` when a step ends (negative: killed by that signal, as :class:`subprocess.Popen` says). The
server ends once its stdin is closed and its steps have ended.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.train.lifeline import PARENT_ENV, follow_parent

SWITCH = "STSBENCH_FORK_SERVER"  # "0": every step a plain process
THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
MAY_DIFFER = (*THREADS, "CUDA_VISIBLE_DEVICES", PARENT_ENV)
# one thread in the server while it imports: no BLAS or OpenMP pool is started before the forks
_ONE_THREAD = dict.fromkeys((*THREADS, "OPENBLAS_NUM_THREADS"), "1")
# the libraries a step imports before it runs (measured with -X importtime on each kind of step)
PRELOAD = (
    "numpy",
    "torch",
    "transformers",
    "sentence_transformers",
    "scipy.special",
    "scipy.stats",
    "pandas",
    "matplotlib",
    "matplotlib.pyplot",
    "seaborn",
    "pydantic",
    "rich.console",
    "rich.table",
    "filelock",
    "threadpoolctl",
)
SERVER = ("-m", "stsbench.reproduce.forkserver")  # the server's command line after the interpreter
# a reproduction starting fewer steps runs them as plain processes: the server imports what every kind of step
# needs (about 14 CPU seconds on a 2-core machine), a step forked from it saves what its kind imports (a tiny
# training about 8, an analysis reading cached embeddings 1 to 3; benchmarks/fork_server.py, docs/speed.md)
MIN_STEPS = 5
READY_TIMEOUT_S = 300.0  # the imports, on a loaded machine
STOP_WAIT_S = 30.0  # a stopped step, forked or plain: SIGTERM, then SIGKILL after this long


def enabled() -> bool:
    """Whether the local executor forks its steps: Linux, unless ``STSBENCH_FORK_SERVER=0``."""
    return sys.platform.startswith("linux") and os.environ.get(SWITCH, "1").strip() != "0"


def may_fork(base: Mapping[str, str], env: Mapping[str, str]) -> bool:
    """Whether a job's ``env`` differs from the server's ``base`` only in :data:`MAY_DIFFER`, its threads given."""
    if any(not env.get(name, "").isdigit() or env[name] != env[THREADS[0]] for name in THREADS):
        return False
    return all(base.get(k) == env.get(k) for k in (base.keys() | env.keys()) - set(MAY_DIFFER))


class ForkServer:
    """The orchestrator's side: starts the server, sends it jobs, and hears their ends (a thread reads them)."""

    def __init__(self, base: Mapping[str, str]) -> None:
        # the environment a job is compared with: the orchestrator's, as a plain step gets it
        self.base = dict(base)
        self.errors = tempfile.TemporaryFile()  # the server's own output: its first lines say why it failed
        self.proc = subprocess.Popen(  # noqa: S603 - our own interpreter and module
            [sys.executable, *SERVER],
            env={**self.base, **_ONE_THREAD},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.errors,
            start_new_session=True,  # a terminal's Ctrl-C reaches the orchestrator alone, as with plain steps
        )
        self.pids: dict[str, int | str] = {}  # job id -> its pid, or why the server could not fork it
        self.codes: dict[int, int] = {}  # pid -> exit status
        self.alive = True
        self._changed = threading.Condition()
        self._ready: int | None = None
        threading.Thread(target=self._read, name="stsbench-fork-server", daemon=True).start()
        try:
            with self._changed:
                self._changed.wait_for(lambda: self._ready is not None or not self.alive, READY_TIMEOUT_S)
        except BaseException:  # a Ctrl-C while it imports: it ends with the start
            self.close()
            raise
        if self._ready is None:
            why = self._why()
            self.close()
            raise StsbenchError(f"the fork server did not start ({why})")

    def _read(self) -> None:
        for raw in self.proc.stdout:  # type: ignore[union-attr]
            message = json.loads(raw)
            with self._changed:
                if "ready" in message:
                    self._ready = message["ready"]
                elif "code" in message:
                    self.codes[message["pid"]] = message["code"]
                else:
                    self.pids[message["id"]] = message.get("pid") or message.get("error", "no answer")
                self._changed.notify_all()
        with self._changed:  # the server ended: its steps followed it (their lifeline)
            self.alive = False
            self._changed.notify_all()

    def _why(self) -> str:
        self.errors.seek(0)
        lines = [ln for ln in self.errors.read().decode("utf-8", "replace").splitlines() if ln.strip()]
        return lines[-1].strip() if lines else f"exit status {self.proc.poll()}"

    def takes(self, env: Mapping[str, str], distributed: bool) -> bool:
        """Whether a job with this environment can be a fork of this server (:func:`may_fork`), still running."""
        return self.alive and not distributed and may_fork(self.base, env)

    def submit(self, job_id: str, args: list[str], cwd: str, env: Mapping[str, str], log: str) -> int | None:
        """Fork the step; its pid, or None where the server could not (the caller starts a plain process)."""
        request = {"id": job_id, "args": args, "cwd": cwd, "env": dict(env), "log": log}
        with self._changed:
            self.pids.pop(job_id, None)
            try:
                self.proc.stdin.write(json.dumps(request).encode() + b"\n")  # type: ignore[union-attr]
                self.proc.stdin.flush()  # type: ignore[union-attr]
            except OSError:
                return None
            # the server answers each request (a pid or why not) or ends: no timeout, after which a late
            # answer would leave the step forked and started again as a plain process
            self._changed.wait_for(lambda: job_id in self.pids or not self.alive)
            pid = self.pids.get(job_id)
        return pid if isinstance(pid, int) else None

    def wait(self, pid: int, timeout: float) -> int | None:
        """``pid``'s exit status once the server reports it (within ``timeout``), else None."""
        with self._changed:
            self._changed.wait_for(lambda: pid in self.codes or not self.alive, timeout)
            return self.codes.get(pid, None if self.alive else -signal.SIGTERM)

    def close(self) -> None:
        """End the server: its stdin closed, it ends once its steps have (they have, or were stopped)."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close()  # type: ignore[union-attr]
        if self._ready is None:  # still importing (a Ctrl-C while it started): nothing of it to wait for
            self.proc.terminate()
        try:
            self.proc.wait(timeout=STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.terminate()  # its steps follow it
            self.proc.wait()
        self.errors.close()


class Forked:
    """A step forked by the server (a :class:`~stsbench.reproduce.executors.Handle`)."""

    def __init__(self, server: ForkServer, pid: int, on_end: Callable[[], Any]) -> None:
        self.server, self.pid, self._on_end, self._ended = server, pid, on_end, False

    def poll(self) -> int | None:
        code = self.server.wait(self.pid, 0)
        if code is not None and not self._ended:
            self._ended = True
            self._on_end()
        return code

    def cancel(self) -> None:
        """SIGTERM to its process group, SIGKILL after :data:`STOP_WAIT_S`, as a plain step is stopped."""
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGTERM)
            if self.server.wait(self.pid, STOP_WAIT_S) is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.pid, signal.SIGKILL)
                self.server.wait(self.pid, STOP_WAIT_S)
        self.poll()

    def describe(self) -> str:
        return f"pid {self.pid}"


# the server's side


def _send(out: int, message: dict[str, Any]) -> None:
    os.write(out, json.dumps(message).encode() + b"\n")


def _preload() -> None:
    """Import what the steps import (an optional library that is missing is left to the step)."""
    from stsbench.sources import ENTRIES

    entries = [m for kind in ("train", "evaluate", "analysis", "report") for m in ENTRIES[kind]]
    for name in (*PRELOAD, "stsbench.cli", *entries):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def serve(inp: int, out: int) -> dict[str, Any] | None:
    """Fork a step per request until ``inp`` ends and every step has ended (None); in a child, its request."""
    children: set[int] = set()
    pending, reading = b"", True
    while reading or children:
        ready = select.select([inp], [], [], 0.05)[0] if reading else time.sleep(0.05)
        if ready:
            data = os.read(inp, 1 << 16)
            reading, pending = bool(data), pending + data
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                sys.stdout.flush()
                sys.stderr.flush()
                try:
                    pid = os.fork()
                except OSError as exc:  # no memory or process left: the orchestrator starts a plain process
                    _send(out, {"id": request["id"], "error": str(exc)})
                    continue
                if pid == 0:
                    os.close(inp)
                    os.close(out)
                    return request
                children.add(pid)
                _send(out, {"id": request["id"], "pid": pid})
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            children.discard(pid)
            _send(out, {"pid": pid, "code": os.waitstatus_to_exitcode(status)})
    return None


def become(request: Mapping[str, Any]) -> None:
    """In the forked child: the step's session, output, folder, environment and threads; then its argv."""
    os.setsid()  # its own process group: a stop reaches it and what it starts
    log = os.open(request["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    os.close(null)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.environ[PARENT_ENV] = str(os.getppid())
    follow_parent()  # the step ends with the server (and the server with the orchestrator)
    threads = int(request["env"]["OMP_NUM_THREADS"])
    import threadpoolctl
    import torch

    torch.set_num_threads(threads)
    threadpoolctl.threadpool_limits(threads)
    # numpy's global generator was seeded once, in the server; a plain process seeds its own
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    sys.argv = ["stsbench", *request["args"]]


def main() -> None:
    """The server: its protocol on fds of its own, its imports, then :func:`serve`; a child runs its step."""
    follow_parent()  # the orchestrator's: the server ends with it
    inp, out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)  # what an import prints goes with the server's errors, never into the protocol
    os.close(null)
    _preload()
    _send(out, {"ready": os.getpid()})
    request = serve(inp, out)
    if request is None:
        return
    become(request)
    import runpy

    runpy.run_module("stsbench", run_name="__main__", alter_sys=True)  # what `python -m stsbench` runs


if __name__ == "__main__":
    main()
