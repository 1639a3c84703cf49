"""What a plan's steps do, counted from its options and the data alone: no device, no time.

:func:`price` (below) prices the counts. Per training its set-up, optimizer steps, dev evaluations (at the
configured interval, and the sentences each encodes), resumable saves and best checkpoints kept (at most one per evaluation); the models the evaluations load,
the unique sentences they encode (cold cache) and the transfer classifiers they fit; the analyses' runs and the
sentences they encode that the model's evaluation has not (those come from the embedding cache: each analysis
says what it encodes, :meth:`stsbench.analyses.registry.Analysis.encodes`); the report.

What a plan costs before it runs: every part its steps do, counted, times the measured time of one of each.

:func:`stsbench.reproduce.estimate.count` counts every part from the plan's options and the data alone (no device).
:func:`estimates` prices the counts per device from measured unit times: :data:`STEP_TIMES` (ms per optimizer
step, ``benchmarks/train_speed.py``, batch 64 and max length 32, scaled to a run's batch size) and
:data:`UNIT_TIMES` (set-up, encoding, saves, report: ``benchmarks/cost_units.py``), each with the results file it
was read from (``tests/test_reproduce_cost.py`` checks every row against that file). A part with no measured time on
a device is named, and that device's figure is then "at least": nothing is extrapolated.
``benchmarks/cost_estimate.py`` compares a tiny recipe's estimate with its measured wall time.

``stsbench reproduce --list``: every built-in recipe, the published cells it produces, and the ones none can.

A recipe *produces* a cell (``KEY#COLUMN``) when one of its runs is held against it (``published``, or
``also_published``; a row's key stands for each of its cells that has a figure of ours,
:func:`stsbench.published.check.figure_of`), or when it runs the analysis an analysis table of its ``published``
names. Its ``unreproducible`` rows and cells are those no built-in recipe can produce, each with a reason from a
closed set (:data:`stsbench.recipes.UNREPRODUCIBLE`). Every cell of every registry table but MTEB's is in some
recipe's cells or unreproducible: ``tests/test_recipes_list.py`` checks it, and that ``docs/recipes-list.md``
(this module's :func:`markdown`, run as ``python -m stsbench.reproduce.estimate``) is what it prints.

The cost is the training steps the recipe's runs take (``max_steps``, or epochs over the corpus' known size, not
the files here) times the measured step time of each device :mod:`stsbench.reproduce.estimate` knows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from stsbench.analyses.registry import get_analysis
from stsbench.data.corpora import CORPORA
from stsbench.data.sts import load_pairs
from stsbench.errors import StsbenchError
from stsbench.progress import plural
from stsbench.published.check import figure_of
from stsbench.published.figures import load_figures
from stsbench.published.registry import get_cell, get_entry, split_cell
from stsbench.recipes import Recipe, load_recipe, recipe_names
from stsbench.reproduce.executors import cores
from stsbench.reproduce.plan import Plan, Step, run_config
from stsbench.tasks.base import Mode
from stsbench.tasks.registry import STS_TASK_NAMES, get_task, task_names
from stsbench.train.config import make_config
from stsbench.train.schedule import run_steps


@dataclass(frozen=True)
class Training:
    """One training step's counted parts (None: not known before its data is)."""

    model: str | None
    method: str | None
    batch_size: int
    steps: int | None
    dev_evaluations: int | None
    dev_sentences: int | None  # what one dev evaluation encodes
    saves: int | None
    keeps: int | None  # best checkpoints exported: at most one per evaluation after training starts


@dataclass(frozen=True)
class Counts:
    """Everything a plan's steps do, counted; no time in it."""

    trainings: tuple[Training, ...]
    backbones: frozenset[str]  # every model the plan loads: the trainings' backbones and the baseline
    models_evaluated: int  # models an evaluation step loads (each seed, the baseline)
    evaluation_sentences: int | None  # unique sentences each model's evaluation encodes, summed
    transfer: dict[str, int]  # ``task@mode`` -> models whose classifiers it fits
    analysis_runs: int
    cached_analysis_runs: int  # those whose every sentence the model's evaluation encoded (no model loaded)
    analysis_sentences: int | None  # sentences the analyses encode that the model's evaluation did not
    reports: int
    unknown: tuple[str, ...] = ()  # what could not be counted (a plugin analysis, data not found)

    def total(self, name: str) -> int | None:
        """The sum of a :class:`Training` field over the trainings; None if any is unknown."""
        values = [getattr(t, name) for t in self.trainings]
        return None if None in values else sum(values)

    @property
    def dev_sentences(self) -> int | None:
        """Sentences encoded by every dev evaluation of every training."""
        each = [(t.dev_evaluations, t.dev_sentences) for t in self.trainings]
        return None if any(None in p for p in each) else sum(e * s for e, s in each)  # type: ignore[operator]

    def line(self) -> str:
        """The counts in words, one line."""

        def n(value: int | None) -> str:
            return "?" if value is None else f"{value:,}"

        fits = sum(self.transfer.values())
        fitted = f", {fits} transfer tasks fitted" if fits else ""
        return (
            f"{plural(len(self.trainings), 'training')}: {n(self.total('steps'))} optimizer steps, "
            f"{n(self.total('dev_evaluations'))} dev evaluations ({n(self.dev_sentences)} sentences), "
            f"{n(self.total('saves'))} resumable saves, up to {n(self.total('keeps'))} best checkpoints "
            f"kept; {plural(self.models_evaluated, 'model')} evaluated "
            f"({n(self.evaluation_sentences)} sentences{fitted}); "
            f"{plural(self.analysis_runs, 'analysis run')} ({self.cached_analysis_runs} on cached sentences "
            f"alone, {n(self.analysis_sentences)} sentences not cached); {plural(self.reports, 'report')}"
        )


def dev_evaluations(steps: int, every: int, at_start: bool) -> int:
    """The trainer's dev evaluations: before training (``eval_at_start``), every ``every`` steps, after the last."""
    return int(at_start) + steps // every + int(steps % every != 0)


@lru_cache(maxsize=256)
def task_texts(data_dir: Path, task: str, mode: str, pairs: bool) -> frozenset[str] | None:
    """The unique texts of a task in a mode (``pairs``: an analysis' STS split), None where its data is absent."""
    try:
        if pairs:
            found = load_pairs(data_dir, task, mode)
            return frozenset([*found.sent1, *found.sent2])
        t = get_task(task)
        return frozenset(t.texts(t.load(data_dir, Mode(mode))))
    except (StsbenchError, OSError, ValueError):
        return None


def union_of(parts: list[frozenset[str] | None]) -> frozenset[str] | None:
    """Every text of ``parts``, each once; None where one of them is unknown."""
    return None if any(p is None for p in parts) else frozenset().union(*parts)  # type: ignore[arg-type]


def _training(step: Step, data_dir: Path) -> Training:
    cfg = make_config({**step.config, "seed": 1, "output": str(step.folder)})
    total = step.total_steps
    dev = task_texts(data_dir, "STSBenchmark", "dev", False)
    if cfg.select_on == "sts-test":  # the seven STS test sets at every evaluation too
        dev = union_of([dev, *(task_texts(data_dir, t, "test", False) for t in STS_TASK_NAMES)])
    sentences = None if dev is None else len(dev)
    if total is None:
        return Training(step.model, step.method, cfg.batch_size, total, None, sentences, None, None)
    evaluations = dev_evaluations(total, cfg.eval_steps, cfg.eval_at_start)
    saves = dev_evaluations(total, cfg.save_steps or cfg.eval_steps, False)  # every N steps and the last
    keeps = dev_evaluations(total, cfg.eval_steps, False)
    return Training(step.model, step.method, cfg.batch_size, total, evaluations, sentences, saves, keeps)


def count(plan: Plan) -> Counts:
    """Count what ``plan``'s steps do (:class:`Counts`), from their options and the data folder.

    ``plan`` may hold some of its recipe's steps (what is left to run): an evaluation done is not counted, and
    what it encoded is in the cache for the analyses after it.
    """
    data, recipe = plan.data_dir, plan.recipe
    trainings = tuple(_training(s, data) for s in plan.steps if s.kind == "train")
    specs = [("baseline", recipe.baseline.evaluate, 1)] if recipe.baseline is not None else []
    specs += [(r.name, r.evaluate, len(r.seeds)) for r in recipe.runs if r.evaluate is not None]
    # model label -> what its evaluation encoded: a done one's are cached for the analyses
    encoded = {
        label: union_of([task_texts(data, t, spec.mode, False) for t in task_names(list(spec.tasks))])
        for label, spec, _ in specs
    }
    ids = {s.id for s in plan.steps}
    specs = [s for s in specs if f"evaluate/{s[0]}" in ids]  # those left to run
    transfer, sentences = {}, 0  # transfer: ``task@mode`` -> the models whose classifiers it fits
    for label, spec, models in specs:
        for t in task_names(list(spec.tasks)):
            if getattr(get_task(t), "kind", "sts") != "sts":
                transfer[f"{t}@{spec.mode}"] = transfer.get(f"{t}@{spec.mode}", 0) + models
        texts = encoded[label]
        sentences = None if texts is None or sentences is None else sentences + models * len(texts)
    analyses = [s for s in plan.steps if s.kind == "analysis"]
    cached, fresh, unknown = 0, 0, []
    for step in analyses:
        number, model = step.id.split("/", 2)[1:]
        entry = recipe.analyses[int(number.split("-", 1)[0]) - 1]
        analysis = get_analysis(entry.name)
        what = analysis.encodes(analysis.make_config(**entry.options))
        texts = None if what is None else union_of([task_texts(data, t, s, True) for t, s in what.splits])
        if what is None or texts is None:
            fresh = None
            why = f"what {entry.name} encodes" if what is None else f"{entry.name}'s data (not found)"
            unknown.append(why)
            continue
        new = len(texts - (encoded.get(model.split("/")[0]) or frozenset())) + what.sentences
        cached += new == 0
        fresh = None if fresh is None else fresh + new
    baseline = {recipe.baseline.model} if recipe.baseline is not None else set()
    backbones = frozenset({t.model for t in trainings if t.model is not None} | baseline)
    evaluated, reports = sum(n for _, _, n in specs), sum(s.kind == "report" for s in plan.steps)
    missed = tuple(dict.fromkeys(unknown))
    return Counts(
        trainings, backbones, evaluated, sentences, transfer, len(analyses), cached, fresh, reports, missed
    )


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
    found = (t for t in STEP_TIMES if t.device == device and model in t.models and t.method == method)
    return next(found, None)


def price(counts: Counts, device: str) -> Estimate:
    """``counts`` priced on ``device``: each part's seconds, and the parts with no measured time there."""
    parts, missing, sources, seconds = {}, [], set(), 0.0
    for t in counts.trainings:
        row = step_time(device, t.model, t.method)
        if row is None or t.steps is None:
            missing.append("optimizer steps")
            break
        seconds += t.steps * row.ms / 1000 * t.batch_size / STEP_BATCH
        sources.add(row.source)
    if counts.trainings and not missing:  # every training priced
        parts["optimizer steps"] = seconds
    # the measured unit times on the device that hold for every backbone; None where none do
    units = next((u for u in UNIT_TIMES if u.device == device and counts.backbones <= set(u.models)), None)

    priced = {} if units is None else _unit_parts(counts, units)
    # the parts this plan does: a part not in it has nothing to price or to miss
    done = [name for name, does in _DONE.items() if does(counts)]
    missing += [name for name in done if priced.get(name) is None]
    parts.update({name: seconds for name in done if (seconds := priced.get(name)) is not None})
    if units is not None:
        sources.add(units.source)
    missing += [f"{u} (not countable)" for u in counts.unknown]
    total = sum(parts.values()) if parts else None
    return Estimate(device, total, tuple(sorted(sources)), parts, tuple(dict.fromkeys(missing)))


def _unit_parts(c: Counts, u: UnitTimes) -> dict[str, float | None]:
    """The parts priced from :data:`UNIT_TIMES`, in the order the estimate lists them (None: not known)."""

    def encoding(sentences: int | None) -> float | None:
        return None if sentences is None else sentences * u.encode_ms / 1000

    loads = c.models_evaluated + c.analysis_runs - c.cached_analysis_runs
    saves, keeps = c.total("saves"), c.total("keeps")
    fits = [u.transfer_s.get(task) for task, n in c.transfer.items() for _ in range(n)]
    tests = encoding(c.evaluation_sentences)
    setup = len(c.trainings) * u.train_setup_s + loads * u.setup_s + c.cached_analysis_runs * u.cached_setup_s
    return {
        "set-up": setup,
        "dev evaluations": encoding(c.dev_sentences),
        "saves": None if saves is None or keeps is None else saves * u.save_s + keeps * u.keep_s,
        # the transfer tasks' classifiers beside the encoding (None: a task with no measured time)
        "test evaluations": None if tests is None or None in fits else tests + sum(fits),  # type: ignore
        "analyses": encoding(c.analysis_sentences),
        "report": c.reports * u.report_s,
    }


# whether the plan does any of each part priced from UNIT_TIMES
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
    devices = sorted({r.device for r in (*STEP_TIMES, *UNIT_TIMES) if counts.backbones & set(r.models)})
    if here is not None and here not in devices:
        devices.append(here)
    out = [replace(price(counts, d), device=d + (" (this run)" if d == here else "")) for d in devices]
    return out or [Estimate("any device", None, ())]


def this_device(parallel: int = 1, gpus: int = 0, threads: int | None = None) -> str:
    """The device a local run's trainings would use, named as :data:`STEP_TIMES` names devices.

    ``CPU, N thread(s)`` (``threads``, else the cores shared by ``parallel`` steps), or with ``gpus`` the GPU's
    model as ``nvidia-smi`` names it (``H100``, else its whole name; ``GPU`` without nvidia-smi). No torch is
    imported.
    """
    if gpus <= 0:
        threads = threads or max(1, cores() // max(1, parallel))
        return f"CPU, {threads} thread{'s' * (threads != 1)}"
    import subprocess

    try:  # no nvidia-smi: FileNotFoundError, an OSError
        query = ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"]  # noqa: S607
        names = subprocess.run(query, capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return "GPU"
    name = names.split("\n")[0].strip() or "GPU"
    return next((t.device for t in STEP_TIMES if t.device in name.split()), name)


def duration(seconds: float | None) -> str:
    """``3.2 h``, ``14 min``, ``unknown``."""
    if seconds is None:
        return "unknown"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


MTEB_PREFIX = "mteb"


def cells_of(address: str, figured: bool = False) -> list[str]:
    """The cells an address names, ``KEY#COLUMN`` (a row: each column; ``figured``: those with a figure)."""
    entry, column = get_cell(address)
    columns = [column] if column is not None else entry.values
    return [f"{entry.key}#{c}" for c in columns if not figured or figure_of(entry, c) is not None]


def produced(recipe: Recipe) -> list[str]:
    """The cells ``recipe`` produces (module docstring), in recipe order, each once."""
    found = dict.fromkeys(c for run in recipe.runs for a in run.addresses for c in cells_of(a, figured=True))
    analyses = {a.name for a in recipe.analyses}
    for key in recipe.published:
        entry = get_entry(key)
        if entry.kind == "analysis" and entry.analysis in analyses:
            found.update(dict.fromkeys(cells_of(key)))
    return list(found)


def unreproducible(recipe: Recipe) -> dict[str, str]:
    """``{cell: reason}`` of the recipe's ``unreproducible``, a row's reason given to each of its cells."""
    return {cell: reason for address, reason in recipe.unreproducible.items() for cell in cells_of(address)}


def cost(recipe: Recipe) -> dict[str, float | None]:
    """Hours of training per device with a measured step time for every run's backbone and method (None: unknown).

    A run's optimizer steps are one seed's as the plan counts them, from the corpus' known size (None: unknown).
    """
    runs = []
    for run in recipe.runs:
        config = run_config(run, None)
        lines = config.get("train_lines")
        if lines is None:
            name = CORPORA.canonical(str(config.get("train_file", "")))
            lines = getattr(CORPORA.get(name), "lines", None) if name else None
        epochs, batch = int(config.get("epochs", 1)), int(config.get("batch_size", 64))
        runs.append((run, config.get("model"), run_steps(config.get("max_steps"), epochs, lines, batch)))
    out: dict[str, float | None] = {}
    for device in sorted({t.device for t in STEP_TIMES for _, model, _ in runs if model in t.models}):
        rows = [(step_time(device, model, run.method), steps, len(run.seeds)) for run, model, steps in runs]
        known = all(row is not None and steps is not None for row, steps, _ in rows)
        out[device] = round(sum(s * n * r.ms / 1000 for r, s, n in rows) / 3600, 2) if known else None
    return out


def summary(recipe: Recipe) -> dict[str, Any]:
    """One recipe as ``--list --format json`` gives it."""
    made = produced(recipe)
    tables = sorted({split_cell(c)[0].rsplit("/", 1)[0] for c in [*made, *unreproducible(recipe)]})
    return {
        "name": recipe.name,
        "title": recipe.title,
        "flavour": recipe.flavour,
        "tables": tables,
        "cells": made,
        "unreproducible": unreproducible(recipe),
        "figures": list(recipe.figures),
        "analyses": sorted({a.name for a in recipe.analyses}),
        "claims": [c.text or c.kind for c in recipe.claims],
        "trainings": sum(len(r.seeds) for r in recipe.runs),
        "cost_hours": cost(recipe),
    }


def summaries(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """:func:`summary` of each built-in recipe (or of ``names``), in name order."""
    return [summary(load_recipe(n)) for n in (names if names is not None else recipe_names())]


def hours_text(value: float | None) -> str:
    """A cost as the list shows it: hours, minutes below a tenth of an hour, or unknown."""
    return (
        "unknown" if value is None else f"{value:,.1f} h" if value >= 0.1 else f"{math.ceil(value * 60)} min"
    )


def list_row(s: dict[str, Any]) -> tuple[str, ...]:
    """A recipe's row in ``--list`` and docs/recipes-list.md: name, flavour, tables, four counts, cost."""
    hours = "; ".join(f"{d}: {hours_text(h)}" for d, h in s["cost_hours"].items()) or "unknown"
    counts = [str(len(s[k])) for k in ("cells", "unreproducible", "claims")] + [str(s["trainings"])]
    return (s["name"], s["flavour"], ", ".join(s["tables"]), *counts, hours)


def markdown(found: list[dict[str, Any]] | None = None) -> str:
    """``docs/recipes-list.md``: the recipes' table, the papers' figures, then every unreproducible cell with its reason.

    The papers' experimental figures (stsbench.published.figures): the recipes that draw each, or what is missing.
    """
    found = summaries() if found is None else found
    lines = [
        "# The built-in recipes and the published cells they produce\n",
        "Generated by `python -m stsbench.reproduce.estimate > docs/recipes-list.md` from `stsbench reproduce --list "
        "--format json` (`tests/test_recipes_list.py` keeps it true). Cells: the published cells a recipe's runs "
        "are held against or its analyses compute; unreproducible: the cells of its tables no built-in recipe can "
        "produce, with the reason ([Recipes](recipes.md)). Cost: training hours on one device of the measured step "
        "times (`benchmarks/results/`), unknown where a backbone or method was not measured.\n",
        "| recipe | flavour | tables | cells | unreproducible | claims | trainings | cost |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    every: dict[str, tuple[str, list[str]]] = {}  # a cell no recipe produces -> its reason, the recipes
    for s in found:
        name, *cells = list_row(s)
        lines.append(f"| `{name}` | {' | '.join(cells)} |")
        for cell, reason in s["unreproducible"].items():
            every.setdefault(cell, (reason, []))[1].append(s["name"])
    lines += ["\n## The papers' figures\n", "| figure | shows | drawn by | recipes |", "|---|---|---|---|"]
    for key, f in load_figures().items():
        setting = f" ({f.setting})" if f.setting else ""
        drawn = f"`{f.renderer}`{setting}" if f.drawn else f"missing: {f.missing}"
        drawn = f"out of scope: {f.out_of_scope}" if f.out_of_scope else drawn
        recipes = ", ".join(f"`{s['name']}`" for s in found if key in s["figures"]) or "none"
        lines.append(f"| `{key}`{' (cited only)' if f.ref_only else ''} | {f.shows} | {drawn} | {recipes} |")
    lines += ["\n## Cells no built-in recipe produces\n", "| cell | reason | listed by |", "|---|---|---|"]
    lines += [f"| `{cell}` | {every[cell][0]} | {', '.join(every[cell][1])} |" for cell in sorted(every)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m stsbench.reproduce.estimate > docs/recipes-list.md
    import sys

    sys.stdout.write(markdown())
