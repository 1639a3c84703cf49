"""What ``stsbench check`` and the report hold against a published row: its cells, our figures, one verdict.

:func:`check_results` compares a folder of results with a published row within a tolerance (one checkpoint).

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

:func:`verdict` decides whether a published figure is reproduced by a set of seeds; the report's Reproduction
section (:mod:`stsbench.reports.reproduction`) and ``check --tolerance seeds`` both call it, so they cannot
disagree. It is stsbench's one decision rule (:func:`stsbench.stats.decide.reproduction`) on the seeds' unrounded
figures (:func:`stsbench.stats.decide.cell`): the 95% t-interval of ``mean - published`` over ``n`` seeds, widened
for a published figure of few runs (the registry's ``runs``, ``best_of``) and for the figures' resolution, read
against the difference that matters (δ, :data:`CELL_DELTA` points, ``--difference`` or a recipe's ``delta``):

- *reproduced*: the interval lies inside ±δ;
- *not reproduced*: it lies entirely outside ±δ (a difference smaller than δ is never "not reproduced");
- *inconclusive*: otherwise, always with fewer than three seeds (the smallest detectable difference shown), and
  where a seed lies far below the others (:func:`stsbench.stats.decide.departing`);
- ``missing``: no seed has the task; ``not checked``: an Avg. over other tasks than the published row's (an Avg.
  of two tasks is another number than the paper's Avg. of seven).

Each verdict carries its margin, how far the deciding end of the interval lies from ±δ. ``check --tolerance
seeds`` reads the seed aggregate that ``stsbench run --model OUT`` writes for a seeds folder
(:mod:`stsbench.results.runs`), its unrounded figures where it stores them; it passes when every checked row
is reproduced. Pure, no printing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any, Literal

from stsbench.errors import FAILED, Negative, StsbenchError
from stsbench.metrics import AVG, raw_average, simcse_average
from stsbench.progress import plural
from stsbench.published.registry import TASK_REGISTRY, TRANSFER_TASKS, Entry, Paper, get_cell, get_entry
from stsbench.results.mteb_layout import (
    MTEB_RESULTS_PREFIX,
    MTEB_TASKS,
    SPLIT,
    mteb_identity,
    pick_mteb_model,
    read_mteb_results,
)
from stsbench.results.read import TaskRecord as Measured
from stsbench.results.read import load_results, seed_aggregates, select_run
from stsbench.results.runs import LEVEL, SEEDS_FILE, tested_values
from stsbench.results.write import output_of, same_path, shown
from stsbench.stats import decide
from stsbench.stats.seeds import seed_summary
from stsbench.tasks.registry import task_kind

BEST_DEV = "best-dev"
# (task, mode) -> figure, for one seed
TaskFigures = Mapping[tuple[str, str], float]


# How many examples score a transfer task's accuracy: its test set, the whole dataset for the cross-validated MR,
# CR, SUBJ and MPQA (tests/test_verdicts_second.py counts them in the data): its figure moves in steps of 100/N.
SCORED = {"MR": 10662, "CR": 3775, "SUBJ": 10000, "MPQA": 10606, "SST2": 1821, "TREC": 500, "MRPC": 1725}


def task_resolution(tasks: Sequence[str], rounded: bool = False) -> float:
    """The resolution h of a figure over ``tasks`` (one task, or their average), docs/uncertainty.md.

    100/N for a transfer accuracy, 0 for a raw correlation; an average's h² is the mean of its parts' over their
    count; ``rounded``: a figure stored at two decimals (h 0.01 more).
    """
    h = decide.average_resolution([100 / SCORED[t] if t in SCORED else 0.0 for t in tasks])
    return math.hypot(h, decide.STORED) if rounded else h


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


def _scores(entry: Entry) -> Entry:
    """``entry``, refused in one line unless a row of task scores."""
    if entry.kind != "scores":
        raise StsbenchError(
            f"{entry.key} is an analysis table ({entry.metric}), not task scores; pick an STS or transfer row"
        )
    return entry


def cells(address: str) -> list[Cell]:
    """The cells ``address`` names: one for ``KEY#COLUMN``, each of a row's for ``KEY``; one line if none can be judged."""
    entry, column = get_cell(address)
    _scores(entry)
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
            value = raw_average(values) if figure.kind == "avg" else values[0]
            if value is not None:
                out[seed] = value
                break
    return out


# -- a checkpoint within a tolerance of a published row ------------------------------------------------------


EPS = 1e-9  # deltas are differences of 2-decimal figures: keep 0.05 within a 0.05 tolerance


class CheckFailed(Negative):
    """Measured numbers differ from the published ones by more than the tolerance, or some are missing."""


class CheckInconclusive(StsbenchError):
    """Over seeds, no figure is not reproduced but one is inconclusive: more seeds may decide (exit status 3).

    An open question, not an error: the CLI's line starts with its :attr:`word`.
    """

    exit_code = FAILED
    word = "open"


def check_failed(statuses: Iterable[str], what: str) -> StsbenchError:
    """The error a check that did not pass ends with, ``what`` saying which figures and why.

    :class:`CheckInconclusive` (exit 3, "not decided: ...") where every figure not reproduced is inconclusive,
    else :class:`CheckFailed` (exit 1, "check failed: ...": one not reproduced or missing).
    """
    left = set(statuses) - {decide.REPRODUCED, decide.NOT_CHECKED}
    if left == {decide.INCONCLUSIVE}:
        return CheckInconclusive(f"not decided: {what}")
    return CheckFailed(f"check failed: {what}")


@dataclass(frozen=True)
class TaskComparison:
    """One task: the measured ``reported`` figure beside the published one."""

    task: str
    published: float
    measured: Measured | None
    tolerance: float

    @property
    def value(self) -> float | None:
        """The measured figure, None when no result has this task."""
        return None if self.measured is None else self.measured.result.reported

    @property
    def delta(self) -> float | None:
        """Measured minus published (4 decimals)."""
        return None if self.value is None else round(self.value - self.published, 4)

    @property
    def status(self) -> str:
        """``OK``, ``FAIL`` (off by more than the tolerance), ``MISSING`` or ``MODIFIED`` (on non-canonical data)."""
        if self.delta is None:
            return "MISSING"
        if self.measured.result.provenance.data_modified:  # never a PASS: not the data the paper scored
            return "MODIFIED"
        return "OK" if abs(self.delta) <= self.tolerance + EPS else "FAIL"


@dataclass(frozen=True)
class Comparison:
    """A results folder against one published entry."""

    entry: Entry
    results_dir: Path
    run: tuple[str, str, str] | None  # (model, pooler, mode) of the compared results
    tolerance: float
    rows: tuple[TaskComparison, ...]
    extra_tasks: tuple[str, ...]  # measured by the same run, not in the published row
    skipped_files: tuple[Path, ...] = ()  # analysis results found under the folder, not read as scores
    training_runs: tuple[Path, ...] = ()  # `stsbench train` folders under it (checkpoints, logs), not read
    other_runs: tuple[tuple[str, str, str], ...] = ()  # runs (model, pooler, mode) the filters left out
    unverified: tuple[str, ...] = ()  # tasks whose figure no per-pair sidecar backs (see verify_result)

    @property
    def passed(self) -> bool:
        """Every published task measured and within the tolerance."""
        return all(r.status == "OK" for r in self.rows)

    @property
    def measured_average(self) -> float | None:
        """The mean of the measured figures (2 decimals, like the Avg. columns); None if one is missing."""
        return simcse_average([r.value for r in self.rows])

    @property
    def published_average(self) -> float | None:
        """The published Avg., when the entry has one."""
        return self.entry.values.get(AVG)

    def compared(self) -> str:
        """One line: which run's results were compared, and what under the folder was left out."""
        n = sum(r.measured is not None for r in self.rows)  # the row's tasks; the others said apart
        # the model as recorded (relative to the results folder when a local path) shown from the working folder
        run = "/".join((shown(self.run[0], self.results_dir) or "", *self.run[1:])) if self.run else "no run"
        parts = [f"compared {n} task results of {run} (model/pooler/mode) under {self.results_dir}"]
        if self.unverified:
            parts.append(f"not verifiable against pairs (no per-pair sidecar): {', '.join(self.unverified)}")
        if self.skipped_files:
            parts.append(f"skipped {plural(len(self.skipped_files), 'analysis file')}")
        if self.training_runs:
            parts.append(f"skipped {plural(len(self.training_runs), 'training-run folder')}")
        if self.other_runs:
            names = ", ".join("/".join(r) for r in self.other_runs[:3])
            names += f" and {len(self.other_runs) - 3} more" if len(self.other_runs) > 3 else ""
            parts.append(f"left out {plural(len(self.other_runs), 'other run')} ({names})")
        return "; ".join(parts)

    def summary(self) -> str:
        """One line: passed, or which tasks failed or are missing."""
        n = len(self.rows)
        if self.passed:
            return f"all {plural(n, 'task')} within {self.tolerance} of {self.entry.key}"
        parts = []
        failed = [r for r in self.rows if r.status == "FAIL"]
        missing = [r.task for r in self.rows if r.status == "MISSING"]
        if failed:
            offs = ", ".join(f"{r.task} {r.delta:+.2f}" for r in failed)
            off = f"differ from {self.entry.key} by more than {self.tolerance}"
            parts.append(f"{len(failed)} of {plural(n, 'task')} {off} ({offs})")
        if missing:
            parts.append(f"no result under {self.results_dir} for {', '.join(missing)}")
        modified = [r.measured.result for r in self.rows if r.status == "MODIFIED"]
        if modified:
            files = ", ".join(sorted({f for r in modified for f in r.provenance.data_modified}))
            tasks = ", ".join(r.task for r in modified)
            parts.append(
                f"{tasks} computed on data that differs from the canonical files ({files}): not comparable"
            )
        return "; ".join(parts)


def comparable_tasks(entry: Entry) -> dict[str, float]:
    """Return the entry's task columns; ``StsbenchError`` when none can be compared with results."""
    if not _scores(entry).task_values:
        cols = ", ".join(entry.values)
        raise StsbenchError(
            f"{entry.key} has no SentEval task columns ({cols}); pick a row of an STS or transfer table"
        )
    return entry.task_values


def check_split(entry: Entry, mode: str, results_dir: Path) -> None:
    """Refuse results of a ``mode`` the row's figures may not be read from (:func:`.cells.result_modes`).

    Dev numbers against test results, test numbers against dev ones, a transfer test row against fasttest ones.
    """
    tasks = tuple(entry.task_values) or entry.avg_of
    if entry.split is not None and mode not in result_modes(entry.split, tasks):
        raise StsbenchError(
            f"{entry.key} has {entry.split}-split numbers but the results under {results_dir} were run "
            f"in {mode} mode; rerun with --mode {'dev' if entry.split == 'dev' else 'test'} "
            "or pick another row"
        )


def compare(
    entry: Entry, by_task: dict[str, Measured], results_dir: Path, tolerance: float = 0.05
) -> Comparison:
    """Put each published task of ``entry`` beside the ``reported`` figure of one run (see ``select_run``)."""
    if tolerance < 0:
        raise StsbenchError(f"--tolerance must be >= 0, got {tolerance}")
    published = comparable_tasks(entry)
    runs = {m.run for m in by_task.values()}
    if len(runs) > 1:
        raise ValueError("compare() takes the results of one run; use select_run() first")
    run = runs.pop() if runs else None
    if run is not None:
        check_split(entry, run[2], results_dir)
    rows = tuple(TaskComparison(t, v, by_task.get(t), tolerance) for t, v in published.items())
    extra = tuple(sorted(t for t in by_task if t not in published))
    unverified = tuple(t for t, m in by_task.items() if not m.verified)
    return Comparison(entry, Path(results_dir), run, tolerance, rows, extra, unverified=unverified)


def mteb_entry(
    key: str, models: dict[tuple[str, str], dict[str, float]], by_task: dict[str, Measured]
) -> Entry:
    """The MTEB folder's row (an ``Entry``) for the run in ``by_task``: the model with the run's MTEB name.

    That is ``export-mteb``'s name; for a local model, whose MTEB name only ``--model-name`` gave, the folder's
    only model.
    """
    name = None
    if by_task:
        with suppress(StsbenchError):  # a local model
            name = mteb_identity(next(iter(by_task.values())).result.model)[0]
    scores = pick_mteb_model(Path(key[len(MTEB_RESULTS_PREFIX) :]).expanduser(), models, name)
    paper = Paper(
        slug=MTEB_RESULTS_PREFIX.rstrip(":"),
        title="MTEB results folder",
        citation="read through mteb.ResultCache",
        source=str(scores.folder),
    )
    return Entry(
        key=key,
        paper=paper,
        table=f"{scores.name}@{scores.revision}",
        caption="",
        row=scores.name,
        metric="MTEB main score (cosine Spearman, test split) x100",
        split=SPLIT,
        kind="scores",
        decimals=2,
        values=scores.values,
    )


def check_results(
    results_dir: Path,
    key: str,
    tolerance: float = 0.05,
    model: str | None = None,
    pooler: str | None = None,
    mode: str | None = None,
) -> Comparison:
    """Load every result under ``results_dir`` and compare the chosen run with the published entry ``key``.

    ``key`` ``mteb-results:DIR`` compares with a local MTEB results folder instead (see ``mteb_entry``).
    """
    mteb_models = None
    if key.startswith(MTEB_RESULTS_PREFIX):
        mteb_models = read_mteb_results(Path(key[len(MTEB_RESULTS_PREFIX) :]))
        tasks: Iterable[str] = MTEB_TASKS
    else:
        entry = get_entry(key)
        tasks = comparable_tasks(entry)
    skipped: list[Path] = []
    training_runs: list[Path] = []
    measured = load_results(results_dir, skipped, training_runs)
    by_task = select_run(measured, tasks, results_dir, model=model, pooler=pooler, mode=mode)
    if mteb_models is not None:
        entry = mteb_entry(key, mteb_models, by_task)
    comparison = compare(entry, by_task, results_dir, tolerance)
    others = tuple(sorted({m.run for m in measured} - {comparison.run}))
    return replace(
        comparison, skipped_files=tuple(skipped), training_runs=tuple(training_runs), other_runs=others
    )


# -- the seeds' verdict --------------------------------------------------------------------------------------


def inside_interval(published: float, low: float, high: float) -> bool:
    """``low <= published <= high``: a figure inside an interval (described beside a verdict, never deciding it)."""
    return low <= published <= high


def check_difference(difference: float) -> float:
    """The difference that matters, refused in one line unless a positive finite number."""
    return decide.check_delta(difference, "--difference")


@dataclass(frozen=True)
class Verdict:
    """One published figure against its seeds' figures: their summary and the one record of the verdict."""

    task: str
    published: float
    decision: decide.Decision
    values: tuple[float, ...] = ()  # one per seed
    mean: float | None = None
    std: float | None = None  # sample std (ddof 1); None for one seed
    mean_low: float | None = None  # the 95% t-interval of the seeds' mean (a description); None for one seed
    mean_high: float | None = None
    level: float = LEVEL
    # each value's seed, where the caller knows them
    seeds: tuple[int, ...] = field(default=(), compare=False)

    status = property(lambda self: self.decision.outcome, doc="The verdict's word.")
    diff = property(
        lambda self: self.decision.diff if self.decision.interval else self._raw_diff,
        doc="m - P (against a best-of-K figure: m + s·e_K - P, the decision's).",
    )
    p = property(
        lambda self: None if self.decision.interval is None else self.decision.interval.p,
        doc="The two-sided p of m = P (a description: the verdict rests on the interval).",
    )
    mde = property(
        lambda self: self.decision.mdd, doc="The smallest difference the seeds detect (80% power)."
    )
    margin = property(lambda self: self.decision.margin, doc="How far the deciding end lies from ±δ.")
    nearest = property(lambda self: self.decision.nearest, doc="Inconclusive: the outcome it is nearest to.")
    note = property(lambda self: self.decision.note, doc="Fewer than 3 seeds, one run, no spread, ...")
    difference = property(lambda self: self.decision.delta or decide.CELL_DELTA, doc="δ.")
    _raw_diff = property(lambda self: None if self.mean is None else self.mean - self.published)
    low = property(lambda self: self.decision.low, doc="The decision's interval's lower end (None: none).")
    high = property(lambda self: self.decision.high, doc="The decision's interval's upper end.")
    n = property(lambda self: len(self.values), doc="How many seeds have the task.")

    @property
    def inside(self) -> bool | None:
        """The published figure inside the interval of the seeds' mean (a description); None without one."""
        if self.mean_low is None or self.mean_high is None:
            return None
        return inside_interval(self.published, self.mean_low, self.mean_high)

    def with_status(self, status: str) -> Verdict:
        """The same figures under another word (not comparable: computed on modified data)."""
        return replace(self, decision=replace(self.decision, outcome=status))

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON: the cell, its seeds' summary, and the decision's fields."""
        out = self.decision.to_dict()
        out.update(task=self.task, published=self.published, verdict=self.status, values=list(self.values))
        out.update(n=self.n, mean=self.mean, std=self.std, mean_low=self.mean_low, mean_high=self.mean_high)
        return {**out, "diff": self.diff, "difference": self.difference, "power": decide.POWER}


def verdict(
    task: str,
    published: float,
    values: Sequence[float],
    difference: float = decide.CELL_DELTA,
    level: float = LEVEL,
    checked: bool = True,
    *,
    runs: int = 1,
    best_of: int | None = None,
    resolution: float | None = None,
    seeds: Sequence[int] = (),
) -> Verdict:
    """Decide whether the seeds' ``values`` (one unrounded figure per seed, units of ``published``) reproduce it.

    ``runs``/``best_of``: how many runs the published figure is (the registry's); ``resolution``: the figures'
    h, by default the task's (:func:`stsbench.published.check.resolution`).
    """
    difference = check_difference(difference)
    h = task_resolution([task]) if resolution is None else resolution
    values = tuple(float(v) for v in values)
    finite = tuple(v for v in values if math.isfinite(v))
    if not values or not checked:  # missing, or an Avg. over other tasks than the published one's
        dec = decide.unmeasured(decide.NOT_CHECKED if not checked else decide.MISSING, task, delta=difference)
    else:
        dec = decide.cell(
            finite, published, difference, runs=runs, best_of=best_of, resolution=h, what=task, level=level
        )
        if len(finite) < len(values):
            dec = decide.capped(
                dec, f"{len(values) - len(finite)} seed figures not finite", decide.CAP_NOT_FINITE
            )
    s = seed_summary(finite, level) if finite else None
    described = (s.mean, s.std, s.low, s.high) if s else (None, None, None, None)
    return Verdict(task, published, dec, values, *described, level=level, seeds=tuple(seeds))


@dataclass(frozen=True)
class SeedRow:
    """One published task (or Avg.) beside the seeds' summary of it (None when they lack it), and its verdict."""

    task: str
    published: float
    seeds: dict[str, Any] | None  # the aggregate's row: values, mean, std, n, low, high (and raw: unrounded)
    checked: bool = True  # False: an Avg. over other tasks than the published one's
    difference: float = decide.CELL_DELTA
    level: float = LEVEL
    runs: int = 1  # how many runs the published figure is (the registry's)
    best_of: int | None = None
    over: tuple[str, ...] = ()  # the tasks an Avg. averages (its resolution's)
    verdict: Verdict = field(init=False, compare=False)

    def __post_init__(self) -> None:
        values = [] if self.seeds is None else tested_values(self.seeds)
        rounded = self.seeds is not None and not self.seeds.get("raw")  # written before raw figures were kept
        h = task_resolution(self.over or (self.task,), rounded)
        kw = {"runs": self.runs, "best_of": self.best_of, "resolution": h}
        v = verdict(self.task, self.published, values, self.difference, self.level, self.checked, **kw)
        if rounded and v.decision.interval is not None:
            v = replace(v, decision=decide.noted(v.decision, decide.ROUNDED))
        object.__setattr__(self, "verdict", v)

    @property
    def status(self) -> str:
        """Where the published figure lies: ``inside``, ``outside``, ``no interval`` (one seed), ``missing``, ``not checked``."""
        v = self.verdict
        if v.status in (decide.MISSING, decide.NOT_CHECKED):
            return v.status
        if v.inside is None:
            return "no interval"
        return "inside" if v.inside else "outside"


@dataclass(frozen=True)
class SeedComparison:
    """One seed aggregate against one published entry."""

    entry: Entry
    path: Path  # the aggregate's file
    aggregate: dict[str, Any]
    rows: tuple[SeedRow, ...]

    @property
    def passed(self) -> bool:
        """Every published figure reproduced (an Avg. over other tasks is not checked)."""
        return all(r.verdict.status in (decide.REPRODUCED, decide.NOT_CHECKED) for r in self.rows)

    def summary(self) -> str:
        """One line: passed, or which rows are not reproduced, inconclusive or missing (never a δ to choose after)."""
        n = sum(r.checked for r in self.rows)
        seeds = plural(len(self.aggregate["seeds"]), "seed")
        difference = self.rows[0].difference if self.rows else decide.CELL_DELTA
        if self.passed:
            return (
                f"all {plural(n, 'figure')} of {self.entry.key} reproduced over {seeds}: each 95% interval of "
                f"the difference from the published figure inside ±{difference:.2f} points"
            )
        parts, verdicts, sg = [], [r.verdict for r in self.rows], partial(decide.signed, delta=difference)
        outside = [v for v in verdicts if v.status == decide.NOT_REPRODUCED]
        if outside:
            diffs = "; ".join(f"{v.task} {sg(v.diff)}" for v in outside)
            parts.append(
                f"{', '.join(v.task for v in outside)} not reproduced: the 95% interval over {seeds} lies beyond "
                f"±{difference:.2f} points ({diffs})"
            )
        ids = self.aggregate["seeds"]
        parts += [
            f"{v.task} inconclusive over {seeds}: {open_question(v, ids)}"
            for v in verdicts
            if v.status == decide.INCONCLUSIVE and v.low is not None
        ]
        for status, what in (
            ("no interval", "without an interval (one seed: train more)"),
            ("missing", f"not evaluated in {self.path}"),
        ):
            names = [r.task for r in self.rows if r.status == status]
            if names:
                parts.append(f"{', '.join(names)} {what}")
        return "; ".join(parts)


def open_question(v: Verdict, seeds: Sequence[int] = ()) -> str:
    """Why an inconclusive figure is open, and what would decide it (one clause of ``check``'s line).

    A seed far below the others that changes the word (named with its figure: ``seeds``, else ``v.seeds``, in the
    order of ``v.values``), seeds not finite, too few seeds, or the decision's interval reaching across ±δ.
    """
    seeds = seeds or v.seeds
    d, sg, delta = v.decision, partial(decide.signed, delta=v.difference), v.difference
    span = "" if v.low is None else f" [{sg(v.low)}, {sg(v.high)}]"
    interval = f"its {d.interval_name} of the difference from the published figure{span}"
    if d.cap == decide.CAP_DEPARTING:
        ids = dict(zip(v.values, seeds, strict=False))
        far = ", ".join(f"seed {ids[x]} ({x:.2f})" if x in ids else f"a seed at {x:.2f}" for x in d.departing)
        return (
            f"{far} far below the others, and judged without it the figure reads another word: look at that "
            "run's training log (a run that trained badly?), or train more seeds"
        )
    if d.cap == decide.CAP_NOT_FINITE:
        return f"{d.note}: look at those runs, or train more seeds"
    if d.interval is None or decide.few(d.interval):
        return f"{v.n} seeds, fewer than {decide.MIN_SEEDS}: train more seeds"
    return f"{interval} reaches across ±{delta:.2f} points: train more seeds (docs/uncertainty.md)"


def verdict_cells(v: Verdict, dash: str = "-") -> tuple[str, str]:
    """``mean - published [its decision's 95% interval]`` and MDE, as the check table and the report print them.

    At δ's decimals (:func:`stsbench.stats.decide.decimals`); ``dash`` where none.
    """
    sg = partial(decide.signed, delta=v.difference)
    diff = dash if v.diff is None else sg(v.diff) + ("" if v.low is None else f" [{sg(v.low)}, {sg(v.high)}]")
    return diff, dash if v.mde is None else f"{v.mde:.{decide.decimals(v.difference)}f}"


def check_seeds(
    results_dir: Path,
    key: str,
    model: str | None = None,
    pooler: str | None = None,
    mode: str | None = None,
    difference: float = decide.CELL_DELTA,
) -> SeedComparison:
    """Compare the one seed aggregate under ``results_dir`` (after the filters) with published entry ``key``.

    Each row's verdict is :func:`verdict` with ``difference``, the difference that matters.
    """
    difference = check_difference(difference)
    entry = get_entry(key)
    published = dict(comparable_tasks(entry))
    wanted = {"pooler": pooler, "mode": mode}  # every seed aggregate under it that matches the filters
    found = [
        (path, agg)
        for path, agg in seed_aggregates(results_dir)
        if all(v is None or agg[k] == v for k, v in wanted.items())
        and (model is None or same_path(agg["model"], model, output_of(path.absolute())))
    ]
    if not found:
        raise StsbenchError(
            f"no seed aggregate ({SEEDS_FILE}) under {results_dir} matches; --tolerance seeds needs the results "
            "of `stsbench run --model OUT` on a `stsbench train --seeds` folder, or give a numeric --tolerance"
        )
    if len(found) > 1:
        names = "; ".join(f"{a['model']}/{a['pooler']}/{a['mode']}" for _, a in found)
        raise StsbenchError(
            f"{results_dir} holds {len(found)} seed aggregates (model/pooler/mode: {names}); "
            "narrow with --model/--pooler/--mode"
        )
    path, agg = found[0]
    if agg.get("data_modified"):  # never inside a published interval: not the data the paper scored
        seeds = ", ".join(f"seed {s}: {', '.join(f)}" for s, f in agg["data_modified"].items())
        raise StsbenchError(
            f"{path}: computed on data that differs from the canonical files ({seeds}); not comparable with "
            f"{key}: rerun the seeds on the canonical data (`stsbench data verify`)"
        )
    check_split(entry, agg["mode"], results_dir)
    level = float(agg.get("level", LEVEL))
    runs = {"runs": entry.runs, "best_of": entry.best_of}
    rows = [SeedRow(t, v, agg["tasks"].get(t), True, difference, level, **runs) for t, v in published.items()]
    if AVG in entry.values and AVG in agg["tasks"]:
        # the tasks beside "Avg.", "STS Avg.", "Transfer Avg."
        over = tuple(t for t in agg["tasks"] if not t.endswith(AVG))
        same = set(over) == set(published)
        rows.append(
            SeedRow(AVG, entry.values[AVG], agg["tasks"][AVG], same, difference, level, **runs, over=over)
        )
    return SeedComparison(entry, path, agg, tuple(rows))
