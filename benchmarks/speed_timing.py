"""Timing helpers of train_speed.py: per-step clocks that do not sync, the views' source, guarded rows."""

from __future__ import annotations

import contextlib
import gc
import sys
import time
import traceback
from dataclasses import dataclass, field

import torch

from stsbench.errors import StsbenchError


@dataclass
class Run:
    """The timings of one (method, precision, mode) row, or of the baseline."""

    method: str
    precision: str
    mode: str
    ms: list[float] = field(default_factory=list)
    first_s: float = 0.0
    tokens: list[int] = field(default_factory=list)  # the batch's non-padding tokens, once per sentence
    flops: list[float] = field(default_factory=list)
    error: str | None = None
    profile: dict | None = None  # --profile-steps: speed_profile.summarize's dict


class Clock:
    """Per-step times: CUDA events on the stream (no sync between steps), else the wall clock.

    An event pair brackets a step on the GPU's timeline: with the host ahead it measures the GPU's work,
    with the host behind it includes the GPU's wait for the host, so the median is the step's real cost
    either way, without the sync a wall clock would need.
    """

    def __init__(self, device: str) -> None:
        self.cuda = torch.device(device).type == "cuda"
        self.marks: list[list] = []

    def _mark(self):
        if not self.cuda:
            return time.perf_counter()
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def start(self) -> None:
        self.marks.append([self._mark()])

    def stop(self) -> None:
        self.marks[-1].append(self._mark())

    def ms(self) -> list[float]:
        if self.cuda:
            torch.cuda.synchronize()
            return [a.elapsed_time(b) for a, b in self.marks]
        return [(b - a) * 1e3 for a, b in self.marks]


def sync(device: str) -> None:
    """Wait for the device's queued work (nothing to wait for on a CPU)."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def set_tf32(on: bool) -> None:
    """TF32 matmuls on CUDA for the tf32 rows only (a process-wide switch, so set before every row)."""
    if torch.cuda.is_available():
        torch.backends.cuda.matmul.allow_tf32 = on
        torch.backends.cudnn.allow_tf32 = on


class _Inline:
    """Each step's views made when asked, on the caller's thread (the loop before its prefetching)."""

    def __init__(self, make, device: str) -> None:
        self.make, self.device = make, device

    def get(self, step: int):
        return self.make(step).to(self.device)


@contextlib.contextmanager
def views_source(make, *, stop: int, device: str, inline: bool = False):
    """The loop's own source of views when it has one (``stsbench.train.loop``: made ahead in a thread
    on CUDA, pinned, copied without blocking), else (or with ``inline``) made per step on this thread.
    """
    try:
        from stsbench.train.loop import Batches, prefetch_depth
    except ImportError:
        inline = True
    if inline:
        yield _Inline(make, device)
        return
    with Batches(make, start=0, stop=stop, device=device, depth=prefetch_depth(device)) as batches:
        yield batches


def progress(run: Run) -> None:
    """One line per finished row on stderr, so a run cut short still leaves its figures in the log."""
    if run.error:
        print(f"[train_speed]   failed: {run.error}", file=sys.stderr, flush=True)
    else:
        ms = sorted(run.ms)[len(run.ms) // 2]
        print(
            f"[train_speed]   median {ms:.2f} ms/step, first step {run.first_s:.2f} s",
            file=sys.stderr,
            flush=True,
        )


def one_line(exc: BaseException) -> str:
    """An exception as a table cell: its type and the first line of its message."""
    return f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:150]}"


def guarded(label: str, fn, *a):
    """Run ``fn``; on failure print the traceback and return the one-line reason (the suite goes on)."""
    print(f"[train_speed] {label} ...", file=sys.stderr, flush=True)
    try:
        return fn(*a), None
    except Exception as exc:  # a failing row (compile, memory) must not cost the rest of the run
        if not isinstance(exc, StsbenchError):  # a refusal says all in its one line
            traceback.print_exc()
        return None, one_line(exc)
    finally:
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        if hasattr(torch, "_dynamo"):
            torch._dynamo.reset()
