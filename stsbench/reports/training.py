"""Training runs as a table: one row per run, and the labels and dev figures every table of runs uses.

A run is named as the tables name its evaluated checkpoint, else by its folder (:func:`run_label`); its
figures are the trainer's STS-B dev evaluations (``train_log.jsonl``, read by :mod:`stsbench.results.runs`).
"""

from __future__ import annotations

from typing import Any

from stsbench.reports.collect import TrainRun
from stsbench.reports.models import Model, method_of, method_rank
from stsbench.results.write import last_part
from stsbench.tabular import DASH, Table, fmt, make_table


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
