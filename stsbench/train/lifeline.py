"""A seed's process dies with the ``train --seeds`` process that started it, ``kill -9`` of that one included.

The parent puts its PID in the child's environment (:func:`child_environment`); the child, first thing, asks
the kernel for SIGTERM when its parent ends (Linux ``prctl(PR_SET_PDEATHSIG)``), or elsewhere watches its parent
PID from a thread. A parent killed outright runs no cleanup, so this is what stops its children from training on
(reparented to PID 1) beside a later ``--resume``; each child's output lock goes with it.

Each process follows its own parent, so a chain of them ends from the top down. A step of several processes
(``reproduce --gpus K``) runs ``torchrun``, whose workers' parent is torchrun, not the process that started it:
it is started as ``python -m stsbench.train.lifeline torch.distributed.run ARGS`` (:func:`launch`), which follows
that process and has its own children (the workers) follow it. Told to follow a PID that was not their
parent, the workers would end at once.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import time

PARENT_ENV = "STSBENCH_PARENT_PID"
_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def child_environment() -> dict[str, str]:
    """What a child's environment gets so that it follows this process (:func:`follow_parent`)."""
    return {PARENT_ENV: str(os.getpid())}


def _ask_kernel() -> bool:
    """Linux: SIGTERM to this process when its parent ends; False where the kernel cannot be asked."""
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int, every: float) -> None:
    while os.getppid() == parent:
        time.sleep(every)
    os.kill(os.getpid(), signal.SIGTERM)


def follow_parent(every: float = 1.0) -> None:
    """In a process started with :func:`child_environment`: end (SIGTERM) when the parent does; else nothing."""
    given = os.environ.pop(PARENT_ENV, None)  # popped: this process's own children do not inherit it
    if not given or not given.isdigit():
        return
    parent = int(given)
    if not _ask_kernel():
        threading.Thread(target=_watch, args=(parent, every), daemon=True, name="stsbench-lifeline").start()
    if os.getppid() != parent:  # the parent ended before the kernel was asked
        os.kill(os.getpid(), signal.SIGTERM)


def launch(argv: list[str]) -> None:
    """``python -m stsbench.train.lifeline MODULE ARGS``: ``python -m MODULE ARGS``, followed and following.

    This process follows its parent (:func:`follow_parent`) and its children (``torchrun``'s workers) follow it.
    """
    if not argv:
        raise SystemExit("usage: python -m stsbench.train.lifeline MODULE [ARGS...]")
    follow_parent()
    os.environ.update(child_environment())
    sys.argv = list(argv)  # run_module sets argv[0] to the module's file; the rest are its arguments
    runpy.run_module(argv[0], run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    launch(sys.argv[1:])
