"""What a plan costs before it runs: its training steps x the measured time of one step on that backbone.

:data:`STEP_TIMES` holds medians of ``benchmarks/train_speed.py`` (ms per optimizer step, batch 64, max length
32), each with the results file it was read from; ``tests/test_reproduce_plan.py`` checks every row against
that file. A backbone, method and device the table lacks costs "unknown": nothing is extrapolated.
"""

from __future__ import annotations

from dataclasses import dataclass

from stsbench.reproduce.plan import Plan


@dataclass(frozen=True)
class StepTime:
    """One measured step time and where it was measured."""

    models: tuple[str, ...]  # the backbones it holds for (names as configs give them)
    method: str
    device: str  # as the estimate names it
    ms: float
    source: str  # the benchmark's results file and its row


MINILM = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
BERT_BASE = ("bert-base-uncased",)  # the benchmark's BERT-base shape (12 layers, 768 wide)
_CPU = "benchmarks/results/train_speed.md (2026-11-23, fp32 eager)"
_GPU = "benchmarks/results/gpu_train_speed.md (2026-11-23, bf16 eager)"
STEP_TIMES: tuple[StepTime, ...] = (
    StepTime(MINILM, "simcse", "CPU, 1 thread", 3818.01, _CPU),
    StepTime(MINILM, "esimcse", "CPU, 1 thread", 4804.19, _CPU),
    StepTime(MINILM, "mocose", "CPU, 1 thread", 4431.92, _CPU),
    StepTime(BERT_BASE, "simcse", "H100", 43.73, _GPU),
    StepTime(BERT_BASE, "esimcse", "H100", 91.42, _GPU),
    StepTime(BERT_BASE, "mocose", "H100", 82.67, _GPU),
)


@dataclass(frozen=True)
class Estimate:
    """A device's estimate: seconds of training (None: unknown) and the sources it used."""

    device: str
    seconds: float | None
    sources: tuple[str, ...]


def this_device(parallel: int = 1, gpus: int = 0) -> str:
    """The device a local run's trainings would use, named as :data:`STEP_TIMES` names devices.

    ``CPU, N thread(s)`` (the cores shared by ``parallel`` steps), or with ``gpus`` the GPU's model as
    ``nvidia-smi`` names it (``H100``, else its whole name; ``GPU`` without nvidia-smi). No torch is imported.
    """
    if gpus <= 0:
        from stsbench.reproduce.executors import cores

        threads = max(1, cores() // max(1, parallel))
        return f"CPU, {threads} thread{'s' * (threads != 1)}"
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return "GPU"
    try:
        names = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],  # noqa: S607
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.SubprocessError):
        return "GPU"
    name = names[0].strip() or "GPU"
    known = {t.device for t in STEP_TIMES}
    return next((d for d in known if d in name.split()), name)


def step_time(device: str, model: str | None, method: str | None) -> StepTime | None:
    """The measured step time of ``method`` on ``model``'s backbone on ``device``; None where none was measured."""
    return next(
        (t for t in STEP_TIMES if t.device == device and model in t.models and t.method == method), None
    )


def estimates(plan: Plan, here: str | None = None) -> list[Estimate]:
    """Per device the table knows for the plan's backbones: the sum over training steps of steps x step time.

    A device missing a row for one of the plan's runs, or a run whose number of steps is unknown, makes the
    whole estimate for it unknown; ``here`` (the device this run would use, :func:`this_device`) is always
    listed, ``unknown`` where nothing was measured on it; with no row at all and no ``here``, one estimate
    ``(any device, unknown)``.
    """
    trains = [s for s in plan.steps if s.kind == "train"]
    devices = sorted({t.device for t in STEP_TIMES for s in trains if s.model in t.models})
    if here is not None and here not in devices:
        devices.append(here)
    out = []
    for device in devices:
        total, sources = 0.0, set()
        for s in trains:
            row = step_time(device, s.model, s.method)
            if row is None or s.total_steps is None:
                total = None
                break
            total += s.total_steps * row.ms / 1000
            sources.add(row.source)
        out.append(
            Estimate(device + (" (this run)" if device == here else ""), total, tuple(sorted(sources)))
        )
    return out or [Estimate("any device", None, ())]


def duration(seconds: float | None) -> str:
    """``3.2 h``, ``14 min``, ``unknown``."""
    if seconds is None:
        return "unknown"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"
