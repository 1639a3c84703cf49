"""A published cell, what figure of ours it is compared with, and its verdict: one rule for ``check`` and the report.

A cell is addressed ``KEY#COLUMN`` (:func:`stsbench.published.registry.split_cell`); a row's key alone stands for
each of its cells. What a cell's figure is, per seed (:func:`figure_of`):

- a task column (``STS12``): that task's reported figure, in the row's split (test, or dev);
- on a dev-split table (every one in the registry is STS-B dev), ``STSBenchmark`` and each setting column of a
  sweep (``p=0.1``, ``dup_rate=0.32``, ``64``): the training's own best STS-B dev Spearman x100, what the papers
  report for a dev-selected checkpoint (no extra evaluation step); a model not trained here: its dev result;
- ``Avg.``: the mean of the row's task figures (unrounded: a verdict is tested on raw figures), or, for an Avg.-only row or a sweep's setting
  column on a test table, of the tasks the registry's ``avg_of`` names (an *assumption* where
  ``avg_of_assumed``: the paper does not say what it averaged);
- ``Avg. transfer`` (SimCSE's Table 9): the mean of the seven transfer tasks' dev accuracy (SentEval's devacc);
- anything else: no figure of ours; the cell is ``not checked``.

The seeds' figures of a cell go to :func:`stsbench.published.seed_check.verdict`, the function ``check
--tolerance seeds`` and the report's Reproduction section share, so the two cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from stsbench.errors import StsbenchError
from stsbench.metrics import AVG, raw_average
from stsbench.published.registry import TASK_REGISTRY, TRANSFER_TASKS, Entry, get_cell
from stsbench.tasks.registry import task_kind

BEST_DEV = "best-dev"
# (task, mode) -> figure, for one seed
TaskFigures = Mapping[tuple[str, str], float]


# How many examples score a transfer task's accuracy: its test set, the whole dataset for the cross-validated MR,
# CR, SUBJ and MPQA (tests/test_verdicts_second.py counts them in the data): its figure moves in steps of 100/N.
SCORED = {"MR": 10662, "CR": 3775, "SUBJ": 10000, "MPQA": 10606, "SST2": 1821, "TREC": 500, "MRPC": 1725}


def resolution(tasks: Sequence[str], rounded: bool = False) -> float:
    """The resolution h of a figure over ``tasks`` (one task, or their average), docs/uncertainty.md.

    100/N for a transfer accuracy, 0 for a raw correlation; an average's h² is the mean of its parts' over their
    count; ``rounded``: a figure stored at two decimals (h 0.01 more).
    """
    from stsbench.stats.decide import STORED, average_resolution

    h = average_resolution([100 / SCORED[t] if t in SCORED else 0.0 for t in tasks])
    return math.hypot(h, STORED) if rounded else h


@dataclass(frozen=True)
class Figure:
    """What of ours a published cell is compared with (see the module docstring)."""

    kind: Literal["task", "avg", "best-dev"]
    tasks: tuple[str, ...] = ()  # the task, or the tasks averaged
    mode: Literal["test", "dev"] = "test"
    assumed: bool = False  # the tasks an average covers are the registry's reading, not the paper's words

    def describe(self) -> str:
        """In words, for tables and notes."""
        if self.kind == BEST_DEV:
            return "the training's own best STS-B dev Spearman x100"
        if self.kind == "task":
            return f"{self.tasks[0]} ({self.mode})"
        what = f"the mean of {len(self.tasks)} tasks ({', '.join(self.tasks)}; {self.mode})"
        return what + (" - assumed: the paper does not say what its average covers" if self.assumed else "")

    @property
    def modes(self) -> tuple[str, ...]:
        """The result modes that give this figure (:func:`result_modes`)."""
        return result_modes(self.mode, self.tasks)


def result_modes(split: str | None, tasks: Iterable[str]) -> tuple[str, ...]:
    """The result modes a published figure over ``tasks`` on ``split`` may be read from, preferred first.

    ``dev``: dev results. ``test``: test results, and for STS tasks fasttest ones too (fasttest changes only
    the transfer classifier's settings: an STS figure is the same in both); a transfer task, or an average over
    one, test only (its fasttest figure is another protocol's). The modes given are one protocol, so the seeds of a
    cell read from several of them are comparable. Any other split: none.
    """
    if split == "dev":
        return ("dev",)
    if split != "test":
        return ()
    sts = all(t in TASK_REGISTRY and task_kind(t) == "sts" for t in tasks)
    return ("test", "fasttest") if sts else ("test",)


# the training's own best STS-B dev Spearman x100 (falling back to STS-B dev results for a model not trained here)
BEST_DEV_FIGURE = Figure(BEST_DEV, ("STSBenchmark",), "dev")


@dataclass(frozen=True)
class Cell:
    """One published cell and the figure of ours it is judged on (None: none, ``not checked``)."""

    entry: Entry
    column: str
    published: float
    figure: Figure | None


def figure_of(entry: Entry, column: str) -> Figure | None:
    """The figure a cell of ``entry`` is compared with (module docstring), None when stsbench has none."""
    mode: Literal["test", "dev"] = "dev" if entry.split == "dev" else "test"
    if column in TASK_REGISTRY.names():
        if mode == "dev" and column == "STSBenchmark":
            return BEST_DEV_FIGURE
        return Figure("task", (column,), mode)
    if column.startswith(f"{AVG} transfer"):  # SimCSE Table 9 (v1): the transfer tasks' mean beside STS-B dev
        return Figure("avg", TRANSFER_TASKS, "dev")  # "the average transfer-task dev accuracy"
    if column == AVG:
        tasks = tuple(entry.task_values) or entry.avg_of
        assumed = entry.avg_of_assumed and not entry.task_values
        return Figure("avg", tasks, mode, assumed) if tasks else None
    if mode == "dev" and not column.startswith(AVG):  # a sweep's setting on STS-B dev
        return BEST_DEV_FIGURE
    if entry.avg_of and not column.startswith(AVG):  # a sweep's setting on the average of tasks
        return Figure("avg", entry.avg_of, mode, entry.avg_of_assumed)
    return None


def cells(address: str) -> list[Cell]:
    """The cells ``address`` names: one for ``KEY#COLUMN``, each of a row's for ``KEY``; one line if none can be judged."""
    entry, column = get_cell(address)
    if entry.kind != "scores":
        raise StsbenchError(
            f"{entry.key} is an analysis table ({entry.metric}), not task scores; pick an STS or transfer row"
        )
    columns = [column] if column is not None else list(entry.values)
    found = [Cell(entry, c, entry.values[c], figure_of(entry, c)) for c in columns]
    if all(c.figure is None for c in found):
        raise StsbenchError(
            f"{address}: stsbench computes no figure for {', '.join(columns)}; pick a task column or an Avg."
        )
    return found


def is_cell_check(address: str) -> bool:
    """Whether ``address`` needs the cell rule: a column named, or a row without task columns (Avg.-only, a sweep)."""
    entry, column = get_cell(address)
    return column is not None or not entry.task_values


def seed_values(
    figure: Figure, tasks: Mapping[int, TaskFigures], best_devs: Mapping[int, float]
) -> dict[int, float]:
    """``{seed: figure}``: each seed's figure for ``figure`` from its task figures and its training's best dev.

    ``best_devs``: x100. Figures unrounded (what tests read): an average is the plain mean of its tasks' figures
    (printed tables round, as SimCSE does; a test never reads the rounded one). A seed lacking a task of an
    average has no figure. A best-dev figure falls back to the
    seeds' STS-B dev results where no training is known (a model not trained here). Each seed's figure is read
    from the first of :attr:`Figure.modes` it has: one protocol for every seed (a transfer test figure never
    from fasttest results).
    """
    if figure.kind == BEST_DEV and best_devs:
        return dict(best_devs)
    out: dict[int, float] = {}
    for seed, found in tasks.items():
        for mode in figure.modes:
            values = [found.get((t, mode)) for t in figure.tasks]
            if figure.kind == "avg":
                avg = raw_average(values)
                if avg is not None:
                    out[seed] = avg
                    break
            elif values[0] is not None:
                out[seed] = values[0]
                break
    return out


def as_reported(best_dev_spearman: float) -> float:
    """A training's best dev Spearman (a fraction) as the papers print it: x100, two decimals."""
    return round(best_dev_spearman * 100, 2)
