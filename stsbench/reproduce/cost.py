"""What a plan costs before it runs: every part its steps do, counted, times the measured time of one of each.

:func:`stsbench.reproduce.counts.count` counts every part from the plan's options and the data alone (no device).
:func:`estimates` prices the counts per device from measured unit times: :data:`STEP_TIMES` (ms per optimizer
step, ``benchmarks/train_speed.py``, batch 64 and max length 32, scaled to a run's batch size) and
:data:`UNIT_TIMES` (set-up, encoding, saves, report: ``benchmarks/cost_units.py``), each with the results file it
was read from (``tests/test_reproduce_cost.py`` checks every row against that file). A part with no measured time on
a device is named, and that device's figure is then "at least": nothing is extrapolated.
``benchmarks/cost_estimate.py`` compares a tiny recipe's estimate with its measured wall time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stsbench.reproduce.counts import Counts, count
from stsbench.reproduce.plan import Plan

__all__ = ["STEP_TIMES", "UNIT_TIMES", "Estimate", "duration", "estimates", "price", "this_device"]


@dataclass(frozen=True)
class StepTime:
    """One measured step time and where it was measured."""

    models: tuple[str, ...]  # the backbones it holds for (names as configs give them)
    method: str
    device: str  # as the estimate names it
    ms: float
    source: str  # the benchmark's results file and its row


@dataclass(frozen=True)
class UnitTimes:
    """The measured time of one of each part but optimizer steps, for a backbone on a device."""

    models: tuple[str, ...]
    device: str
    train_setup_s: float  # a training process to its first step: imports, model, corpus read, dev set read
    setup_s: float  # an evaluation's or analysis' model: process start, imports, model loaded
    cached_setup_s: float  # an analysis whose every sentence is cached: process start, no model loaded
    encode_ms: float  # one unique sentence encoded (STS sentences, batch 128, no cache)
    save_s: float  # one resumable state written (model, optimizer, schedule)
    keep_s: float  # one best checkpoint exported
    report_s: float  # one report, its figures included
    transfer_s: dict[str, float]  # ``task@mode`` -> seconds of its classifiers on one model's embeddings
    source: str


MINILM = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
BERT_BASE = ("bert-base-uncased",)  # the benchmark's BERT-base shape (12 layers, 768 wide)
_CPU = "benchmarks/results/train_speed.md (2026-11-23, fp32 eager)"
_GPU = "benchmarks/results/gpu_train_speed.md (2026-11-23, bf16 eager)"
STEP_BATCH = 64  # the batch the step times were measured at
STEP_TIMES: tuple[StepTime, ...] = (
    StepTime(MINILM, "simcse", "CPU, 1 thread", 3818.01, _CPU),
    StepTime(MINILM, "esimcse", "CPU, 1 thread", 4804.19, _CPU),
    StepTime(MINILM, "mocose", "CPU, 1 thread", 4431.92, _CPU),
    StepTime(BERT_BASE, "simcse", "H100", 43.73, _GPU),
    StepTime(BERT_BASE, "esimcse", "H100", 91.42, _GPU),
    StepTime(BERT_BASE, "mocose", "H100", 82.67, _GPU),
)
UNIT_TIMES: tuple[UnitTimes, ...] = (
    UnitTimes(
        MINILM,
        "CPU, 1 thread",
        train_setup_s=9.946,
        setup_s=14.663,
        cached_setup_s=5.536,
        encode_ms=4.776,
        save_s=0.368,
        keep_s=9.565,
        report_s=16.304,
        transfer_s={  # the classifiers' seconds of transfer_speed.md (embeddings shared, 1 thread)
            "MR@test": 26.4,
            "CR@test": 9.8,
            "SUBJ@test": 40.0,
            "MPQA@test": 48.1,
            "SST2@test": 3.1,
            "TREC@test": 5.0,
            "MRPC@test": 2.3,
        },
        source="benchmarks/results/cost_units.md (2026-11-26)",
    ),
)


@dataclass(frozen=True)
class Estimate:
    """A device's estimate: seconds of the parts it could price, the parts it could not, and its sources."""

    device: str
    seconds: float | None  # None: nothing could be priced
    sources: tuple[str, ...]
    parts: dict[str, float] = field(default_factory=dict)  # part -> seconds
    missing: tuple[str, ...] = ()  # parts with no measured time on this device: the figure is "at least"


def step_time(device: str, model: str | None, method: str | None) -> StepTime | None:
    """The measured step time of ``method`` on ``model``'s backbone on ``device``; None where none was measured."""
    return next(
        (t for t in STEP_TIMES if t.device == device and model in t.models and t.method == method), None
    )


def unit_times(device: str, models: set[str | None]) -> UnitTimes | None:
    """The measured unit times on ``device`` that hold for every one of ``models``; None where none do."""
    rows = [u for u in UNIT_TIMES if u.device == device and models <= set(u.models)]
    return rows[0] if rows else None


def price(counts: Counts, device: str) -> Estimate:
    """``counts`` priced on ``device``: each part's seconds, and the parts with no measured time there."""
    parts: dict[str, float] = {}
    missing: list[str] = []
    sources: set[str] = set()
    seconds = 0.0
    for t in counts.trainings:
        row = step_time(device, t.model, t.method)
        if row is None or t.steps is None:
            missing.append("optimizer steps")
            break
        seconds += t.steps * row.ms / 1000 * t.batch_size / STEP_BATCH
        sources.add(row.source)
    else:
        if counts.trainings:
            parts["optimizer steps"] = seconds
    units = unit_times(device, set(counts.backbones))
    for name, priced in _OTHERS.items():
        if not _DONE[name](counts):
            continue  # nothing of that part in this plan: nothing to price or to miss
        value = None if units is None else priced(counts, units)
        if value is None:
            missing.append(name)
        else:
            parts[name] = value
    if units is not None:
        sources.add(units.source)
    missing += [f"{u} (not countable)" for u in counts.unknown]
    total = sum(parts.values()) if parts else None
    return Estimate(device, total, tuple(sorted(sources)), parts, tuple(dict.fromkeys(missing)))


def _encoding(sentences: int | None, units: UnitTimes) -> float | None:
    return None if sentences is None else sentences * units.encode_ms / 1000


def _set_up(counts: Counts, units: UnitTimes) -> float:
    loads = counts.models_evaluated + counts.analysis_runs - counts.cached_analysis_runs
    trainings = len(counts.trainings) * units.train_setup_s
    return trainings + loads * units.setup_s + counts.cached_analysis_runs * units.cached_setup_s


def _saves(counts: Counts, units: UnitTimes) -> float | None:
    saves, keeps = counts.total("saves"), counts.total("keeps")
    return None if saves is None or keeps is None else saves * units.save_s + keeps * units.keep_s


def _evaluations(counts: Counts, units: UnitTimes) -> float | None:
    if counts.evaluation_sentences is None:
        return None
    fits = [units.transfer_s.get(task) for task, n in counts.transfer.items() for _ in range(n)]
    if None in fits:
        return None
    return counts.evaluation_sentences * units.encode_ms / 1000 + sum(fits)  # type: ignore[arg-type]


# the parts priced from UNIT_TIMES, in the order the estimate lists them
_OTHERS = {
    "set-up": _set_up,
    "dev evaluations": lambda c, u: _encoding(c.dev_sentences, u),
    "saves": _saves,
    "test evaluations": _evaluations,
    "analyses": lambda c, u: _encoding(c.analysis_sentences, u),
    "report": lambda c, u: c.reports * u.report_s,
}
# whether the plan does any of each part
_DONE = {
    "set-up": lambda c: bool(c.trainings or c.models_evaluated or c.analysis_runs),
    "dev evaluations": lambda c: c.total("dev_evaluations") != 0,
    "saves": lambda c: bool(c.trainings),
    "test evaluations": lambda c: c.models_evaluated > 0,
    "analyses": lambda c: c.analysis_runs > 0,
    "report": lambda c: c.reports > 0,
}


def estimates(plan: Plan, here: str | None = None, counts: Counts | None = None) -> list[Estimate]:
    """:func:`price` of :func:`count` per device with a measured time for the plan's backbones.

    ``here`` (the device this run would use, :func:`this_device`) is always listed. With no device at all, one
    estimate ``(any device, unknown)``.
    """
    counts = counts or count(plan)
    rows = [*STEP_TIMES, *UNIT_TIMES]
    devices = sorted({r.device for r in rows if counts.backbones & set(r.models)})
    if here is not None and here not in devices:
        devices.append(here)
    out = []
    for device in devices:
        e = price(counts, device)
        name = device + (" (this run)" if device == here else "")
        out.append(Estimate(name, e.seconds, e.sources, e.parts, e.missing))
    return out or [Estimate("any device", None, ())]


def this_device(parallel: int = 1, gpus: int = 0, threads: int | None = None) -> str:
    """The device a local run's trainings would use, named as :data:`STEP_TIMES` names devices.

    ``CPU, N thread(s)`` (``threads``, else the cores shared by ``parallel`` steps), or with ``gpus`` the GPU's
    model as ``nvidia-smi`` names it (``H100``, else its whole name; ``GPU`` without nvidia-smi). No torch is
    imported.
    """
    if gpus <= 0:
        from stsbench.reproduce.executors import cores

        threads = threads or max(1, cores() // max(1, parallel))
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


def duration(seconds: float | None) -> str:
    """``3.2 h``, ``14 min``, ``unknown``."""
    if seconds is None:
        return "unknown"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"
