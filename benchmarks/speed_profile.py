"""Where a training step's time goes: train_speed.py's ``--profile-steps``, to explain a missed goal.

After a row's timed steps, ``--profile-steps`` more run under ``torch.profiler``. On CUDA the summary is the
device's view: the wall time of a step against the time the GPU was busy (the union of its kernels'
intervals; a graph replay's kernels are traced one by one), kernels launched a step, and the busy time by kind
of kernel. A step far longer than its busy time waits on the host; a step close to it is GPU work, and the
kinds say which. On a CPU the same table holds the operators' own (self) times instead of kernels.
"""

from __future__ import annotations

import contextlib
import time

import torch

# kinds of kernel or operator, first match wins (lower-cased substrings of the name)
KINDS = (
    ("attention", ("flash", "fmha", "attention", "sdpa", "softmax")),
    (
        "matmul",
        (
            "gemm",
            "cutlass",
            "cublas",
            "sm80_xmma",
            "sm90_xmma",
            "nvjet",
            "aten::mm",
            "aten::bmm",
            "aten::addmm",
            "aten::linear",
            "matmul",
        ),
    ),
    ("optimizer", ("adam", "foreach", "multi_tensor")),
    ("normalisation", ("layer_norm", "layernorm")),
    ("copy", ("copy", "memcpy", "memset", "cat", "fill")),
)
TOP = 5


def kind(name: str) -> str:
    low = name.lower()
    for label, needles in KINDS:
        if any(n in low for n in needles):
            return label
    return "other"


def busy_us(intervals: list[tuple[float, float]]) -> float:
    """The length of the union of ``(start, end)`` intervals: overlapping kernels counted once."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if a > end:
            total += b - a
            end = b
        elif b > end:
            total += b - end
            end = b
    return total


@contextlib.contextmanager
def profiled(device: str, steps: int):
    """Profile the steps run inside the block; the summary is in the yielded dict when it closes."""
    from torch.profiler import ProfilerActivity, profile

    cuda = torch.device(device).type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    out: dict = {}
    if cuda:
        torch.cuda.synchronize()
    with profile(activities=activities) as prof:
        started = time.perf_counter()
        yield out
        if cuda:
            torch.cuda.synchronize()
        wall = time.perf_counter() - started
    out.update(summarize(prof.events(), steps=steps, wall_s=wall, cuda=cuda))


def summarize(events, *, steps: int, wall_s: float, cuda: bool) -> dict:
    """Per step: wall ms, busy ms, kernels (CUDA) or operators (CPU), busy ms by kind, the top names."""
    from torch.autograd import DeviceType

    if cuda:  # (name, microseconds) of each kernel
        kernels = [e for e in events if e.device_type == DeviceType.CUDA]
        work = [(e.name, e.time_range.end - e.time_range.start) for e in kernels]
        busy = busy_us([(e.time_range.start, e.time_range.end) for e in kernels])
    else:  # operators' own time (children excluded), so that nothing is counted twice
        ops = [e for e in events if e.device_type == DeviceType.CPU and not e.is_user_annotation]
        work = [(e.name, e.self_cpu_time_total) for e in ops]
        busy = sum(us for _, us in work)
    by_kind: dict[str, float] = {}
    by_name: dict[str, list[float]] = {}
    for name, us in work:
        label = kind(name)
        by_kind[label] = by_kind.get(label, 0.0) + us
        entry = by_name.setdefault(name, [0.0, 0])
        entry[0] += us
        entry[1] += 1
    top = sorted(by_name.items(), key=lambda item: -item[1][0])[:TOP]
    return {
        "steps": steps,
        "device": "cuda" if cuda else "cpu",
        "wall_ms": 1e3 * wall_s / steps,
        "busy_ms": busy / 1e3 / steps,
        "launches": len(work) / steps,
        "kinds": {k: v / 1e3 / steps for k, v in sorted(by_kind.items(), key=lambda item: -item[1])},
        "top": [[name[:80], us / 1e3 / steps, count / steps] for name, (us, count) in top],
    }


def profile_lines(runs) -> list[str]:
    """The report's profile table, one row per profiled run, and its top kernels (operators) below."""
    failed = [r for r in runs if getattr(r, "profile", None) and "error" in r.profile and not r.error]
    done = [r for r in runs if getattr(r, "profile", None) and "error" not in r.profile and not r.error]
    if not done and not failed:
        return []
    if not done:
        return [
            "",
            *(f"Profile of {r.method} {r.precision} {r.mode} failed: {r.profile['error']}" for r in failed),
        ]
    cuda = done[0].profile["device"] == "cuda"
    unit = "kernels" if cuda else "operator calls"
    busy = "GPU busy (union of kernels)" if cuda else "operators' own time"
    kinds = [label for label, _ in KINDS] + ["other"]
    lines = [
        "",
        f"Profiles: {done[0].profile['steps']} more steps a row under torch.profiler, after its timed ones "
        f"(benchmarks/speed_profile.py); ms a step, the profiler's own overhead in the wall time. A step much "
        "longer than its busy time waits on the host.",
        "",
        f"| method | precision | mode | wall | {busy} | busy share | {unit}/step | "
        + " | ".join(kinds)
        + " |",
        "|---|---|---|---:|---:|---:|---:|" + "---:|" * len(kinds),
    ]
    for r in done:
        p = r.profile
        share = p["busy_ms"] / p["wall_ms"] if p["wall_ms"] else 0.0
        lines.append(
            f"| {r.method} | {r.precision} | {r.mode} | {p['wall_ms']:.2f} | {p['busy_ms']:.2f} | {share:.0%} | "
            f"{p['launches']:.0f} | " + " | ".join(f"{p['kinds'].get(k, 0.0):.2f}" for k in kinds) + " |"
        )
    for r in failed:
        lines.append(f"| {r.method} | {r.precision} | {r.mode} | profile failed: {r.profile['error']} |")
    lines += ["", f"Top {unit} by time a step (ms, calls a step):"]
    for r in done:
        top = "; ".join(f"`{name}` {ms:.2f} ({n:g})" for name, ms, n in r.profile["top"])
        lines.append(f"- {r.method} {r.precision} {r.mode}: {top}")
    return lines
