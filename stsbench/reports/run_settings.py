"""A training run's settings as reports compare them: the fields that change the outcome, by the papers' words.

Bookkeeping (``output``, ``threads``) is no setting; nor are the options of another method than the run's, nor
those of an ESimCSE component the run does not use. The training file is compared by its name and row count, not
its path (a relative and an absolute path, or another machine's, name the same corpus). The Ablations tables
(:mod:`stsbench.reports.ablations`, :mod:`stsbench.reports.sweep_tables`) and the sweep figures read runs here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any

from stsbench.published.cells import result_modes
from stsbench.published.registry import STS_TASKS
from stsbench.reports.collect import TaskRecord, TrainRun
from stsbench.reports.models import Model
from stsbench.reports.seeds import SeedGroup, average_values
from stsbench.reports.training import show_value
from stsbench.results.write import last_part
from stsbench.train.config import BOOKKEEPING, train_options
from stsbench.train.config.methods import find_method

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


def _other_methods_fields(method: str) -> set[str]:
    """Options of other methods than ``method`` (its runs carry their defaults, or lack them if older)."""
    return {n for n, o in train_options().items() if o.methods and method not in o.methods}


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
    skip |= _other_methods_fields(run.method)
    if not rep:
        skip |= set(REPETITION_FIELDS)
    if not mom:
        skip |= set(MOMENTUM_FIELDS)
    out = {k: v for k, v in sorted(run.resolved_config.items()) if k not in skip}
    if out.get("train_file"):  # by name and size: the same corpus has other paths on other machines
        out["train_file"] = f"{last_part(str(out['train_file']))} ({run.train_rows} rows)"
    return out


def shared(run: TrainRun) -> dict[str, Any]:
    """:func:`settings` without any ESimCSE field: what every method has."""
    return {k: v for k, v in settings(run).items() if k not in REPETITION_FIELDS + MOMENTUM_FIELDS}


def sort_value(v: Any) -> tuple[int, Any]:
    """A setting's sort key: numbers by value before every other value, by its text."""
    return (0, v) if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, str(v))


def sts_averages(group: SeedGroup, records: list[TaskRecord]) -> list[float]:
    """The STS test Avg. (7 tasks, SimCSE's rounding) of each checkpoint of ``group`` measured on every task.

    Test results where any seed has them, else fasttest (the same figures: :func:`result_modes`).
    """
    for mode in result_modes("test", STS_TASKS):
        found = average_values(records, group, "sts", mode, STS_TASKS)
        if found:
            return found
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
