"""Training runs in a report: a table of runs, their labels and dev figures, and their settings as reports compare them.

A run is named as the tables name its evaluated checkpoint, else by its folder (:func:`run_label`); its
figures are the trainer's STS-B dev evaluations (``train_log.jsonl``, read by :mod:`stsbench.results.runs`),
drawn against the step by :func:`training_curves_figure`.

A run's settings (:func:`settings`) are the fields that change the outcome, by the papers' words. Bookkeeping
(``output``, ``threads``) is no setting; nor are the options of another method than the run's, nor those of an
ESimCSE component the run does not use. The training file is compared by its name and row count, not its path (a
relative and an absolute path, or another machine's, name the same corpus). The Ablations tables and the sweep
figures (:mod:`stsbench.reports.ablations`) read runs here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from stsbench.analyses import figures as afig
from stsbench.metrics import AVG
from stsbench.published.check import result_modes
from stsbench.published.registry import STS_TASKS
from stsbench.reports.collect import Model, TaskRecord, TrainRun, method_of, method_rank
from stsbench.reports.seeds import SeedGroup, compared_config, figure_axes, task_values
from stsbench.results.write import last_part
from stsbench.tabular import DASH, Table, fmt, make_table
from stsbench.train.config import BOOKKEEPING, train_options
from stsbench.train.config.options import find_method


def run_label(run: TrainRun, models: list[Model], runs: list[TrainRun]) -> str:
    """Name a run as the tables name its checkpoint, else by its folder (its path when names clash)."""
    for m in models:
        if m.run is run:
            return m.label
    return run.path if sum(r.name == run.name for r in runs) > 1 else run.name


def labelled_runs(runs: list[TrainRun], models: list[Model]) -> dict[str, TrainRun]:
    """``{label: run}`` in path order, as the training-curves figure names them."""
    return {run_label(r, models, runs): r for r in sorted(runs, key=lambda r: r.path)}


def show_value(v: Any) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    return DASH if v is None else f"{v:g}" if isinstance(v, float) else str(v)


def kept_dev(run: TrainRun) -> float | None:
    """The kept checkpoint's STS-B dev Spearman x100, at the papers' 2 decimals."""
    return None if run.best_dev_spearman is None else round(run.best_dev_spearman * 100, 2)


def dev_at_start(run: TrainRun) -> float | None:
    """The backbone's STS-B dev Spearman x100 before training (the step-0 evaluation), if logged."""
    first = [v for s, v in run.curve if s == 0 and v is not None]
    return round(first[0] * 100, 2) if first else None


def training_table(runs: list[TrainRun], models: list[Model]) -> Table:
    """One row per run: method, data, steps, best STS-B dev Spearman and when, wall time."""
    columns = [
        "run",
        "method",
        "backbone",
        "train rows",
        "steps",
        "batch",
        "lr",
        "best dev",
        "at step",
        "wall (min)",
    ]
    rows = []
    for r in sorted(runs, key=lambda r: (method_rank(method_of(r.config)), run_label(r, models, runs))):
        c = r.config
        steps = (
            f"{r.steps_done}" if r.steps_done is not None else f"unfinished (of {show_value(r.total_steps)})"
        )
        rows.append(
            [
                run_label(r, models, runs),
                method_of(c),
                last_part(str(c.get("model", DASH))),
                show_value(r.train_rows),
                steps,
                show_value(c.get("batch_size")),
                show_value(c.get("lr")),
                fmt(r.best_dev_spearman, 2, 100),
                show_value(r.best_step),
                fmt(r.wall_seconds, 1, 1 / 60),
            ]
        )
    notes = [
        "best dev: the STS-B dev Spearman x100 of the kept checkpoint (the trainer's evaluation every "
        "eval_steps; the step-0 score before training is logged, never kept)."
    ]
    return make_table("training_runs", "Training runs", columns, rows, notes)


# -- a run's settings ----------------------------------------------------------------------------------------


REPETITION_FIELDS = ("repetition_kind", "dup_rate", "repetition_sampling")

MOMENTUM_FIELDS = (
    "momentum",
    "momentum_init",
    "momentum_mlp",
    "momentum_update",
    "queue_multiple",
    "queue_reset_each_epoch",
    "queue_scope",
)

COMPONENT_FIELDS = ("method", "repetition")


def components_used(run: TrainRun) -> tuple[bool, bool]:
    """(word repetition, momentum contrast) as the run used them: its method's answer (none: both off)."""
    spec = find_method(run.method)
    used = spec.used(run.config) if spec is not None else {}
    return used.get("word repetition", False), used.get("momentum contrast", False)


def option_words(name: str) -> str:
    """A training option as the papers name it (its definition's label: ``EMA decay weight``), else its name."""
    option = train_options().get(name)
    return (option.label if option is not None else None) or name


def titled(kind: str, name: str, method: str) -> str:
    """``Ablation: EMA decay weight (MoCoSE, ema_decay_start)``: the option's label, its name where they differ."""
    words = option_words(name)
    return f"{kind}: {words} ({method}{'' if words == name else f', {name}'})"


def settings(run: TrainRun) -> dict[str, Any]:
    """The fields that change the outcome, without those of a component the run does not use."""
    rep, mom = components_used(run)
    skip = set(BOOKKEEPING) | set(COMPONENT_FIELDS)
    # options of other methods than the run's (its runs carry their defaults, or lack them if older)
    skip |= {n for n, o in train_options().items() if o.methods and run.method not in o.methods}
    if not rep:
        skip |= set(REPETITION_FIELDS)
    if not mom:
        skip |= set(MOMENTUM_FIELDS)
    return compared_config(run, skip)


def shared(run: TrainRun) -> dict[str, Any]:
    """:func:`settings` without any ESimCSE field: what every method has."""
    return {k: v for k, v in settings(run).items() if k not in REPETITION_FIELDS + MOMENTUM_FIELDS}


def sts_averages(group: SeedGroup, records: list[TaskRecord]) -> list[float]:
    """The STS test Avg. (7 tasks, SimCSE's rounding) of each checkpoint of ``group`` measured on every task.

    Test results where any seed has them, else fasttest (the same figures: :func:`result_modes`).
    """
    for mode in result_modes("test", STS_TASKS):
        found = task_values(records, group, "sts", mode).get(AVG)
        if found:
            return list(found.values())
    return []


def sts_average(run: TrainRun, models: list[Model], records: list[TaskRecord]) -> float | None:
    """The STS test Avg. of the run's checkpoint, when every task was measured (:func:`sts_averages`)."""
    found = sts_averages(SeedGroup("", None, tuple(m for m in models if m.run is run)), records)
    return found[0] if found else None


def finite(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def other_settings(run: TrainRun, varied: tuple[str, ...]) -> str:
    """A sweep's or grid's note: every setting of ``run`` but the ``varied`` ones."""
    same = {k: v for k, v in settings(run).items() if k not in varied}
    return "Other settings: " + ", ".join(f"{k}={show_value(v)}" for k, v in same.items()) + "."


def without_seed(run: TrainRun) -> TrainRun:
    return dataclasses.replace(run, config={k: v for k, v in run.config.items() if k != "seed"})


def training_curves_figure(curves: dict[str, TrainRun], stem: Path) -> list[Path]:
    """STS-B dev Spearman x100 against the training step, one line per run; the kept checkpoint circled."""
    with figure_axes(figsize=(6.4, 3.8), style=None) as (fig, ax):
        for label, run in curves.items():
            points = [(s, v * 100) for s, v in run.curve if v is not None]
            if not points:
                continue
            steps, values = zip(*points, strict=True)
            (line,) = ax.plot(steps, values, marker=".", label=label)
            best = [(s, v * 100) for s, v in run.curve if s == run.best_step and v is not None]
            if best:
                (x, y), colour = best[0], line.get_color()
                ax.scatter([x], [y], s=80, facecolors="none", edgecolors=colour, linewidths=1.2)
        ax.set_xlabel("training step")
        ax.set_ylabel("STS-B dev Spearman x100")
        ax.set_title("Dev curves (circled: the kept checkpoint; step 0: before training)", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    return afig.save(fig, stem)
