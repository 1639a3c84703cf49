"""The reproduction verdict over seeds, and ``stsbench check --tolerance seeds``, which applies it to a seed aggregate.

:func:`verdict` decides whether a published figure is reproduced by a set of seeds; the report's Reproduction
section (:mod:`stsbench.reports.reproduction`) and ``check --tolerance seeds`` both call it, so they cannot
disagree. It is stsbench's one decision rule (:func:`stsbench.stats.decide.reproduction`) on the seeds' unrounded
figures (:func:`stsbench.stats.decide.cell`): the 95% t-interval of ``mean - published`` over ``n`` seeds, widened
for a published figure of few runs (the registry's ``runs``, ``best_of``) and for the figures' resolution, read
against the difference that matters (δ, :data:`CELL_DELTA` points, ``--difference`` or a recipe's ``delta``):

- *reproduced*: the interval lies inside ±δ;
- *not reproduced*: it lies entirely outside ±δ (a difference smaller than δ is never "not reproduced");
- *inconclusive*: otherwise, and always with fewer than three seeds (the smallest detectable difference shown);
- ``missing``: no seed has the task; ``not checked``: an Avg. over other tasks than the published row's (an Avg.
  of two tasks is another number than the paper's Avg. of seven).

Each verdict carries its margin, how far the deciding end of the interval lies from ±δ. ``check --tolerance
seeds`` reads the seed aggregate that ``stsbench run --model OUT`` writes for a seeds folder
(:mod:`stsbench.results.runs`), its unrounded figures where it stores them; it passes when every checked row
is reproduced. Pure, no printing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.metrics import AVG
from stsbench.progress import plural
from stsbench.published.cells import resolution as task_resolution
from stsbench.published.check import check_split, comparable_tasks
from stsbench.published.registry import Entry, get_entry
from stsbench.results.read import seed_aggregates
from stsbench.results.runs import LEVEL, SEEDS_FILE, tested_values
from stsbench.results.write import output_of, same_path
from stsbench.stats import decide


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

    @property
    def _raw_diff(self) -> float | None:
        return None if self.mean is None else self.mean - self.published

    @property
    def low(self) -> float | None:
        """The decision's interval of the difference from the published figure: its lower end (None: none)."""
        return self.decision.low

    @property
    def high(self) -> float | None:
        """The decision's interval's upper end."""
        return self.decision.high

    @property
    def n(self) -> int:
        """How many seeds have the task."""
        return len(self.values)

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
) -> Verdict:
    """Decide whether the seeds' ``values`` (one unrounded figure per seed, units of ``published``) reproduce it.

    ``runs``/``best_of``: how many runs the published figure is (the registry's); ``resolution``: the figures'
    h, by default the task's (:func:`stsbench.published.cells.resolution`).
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
            dec = decide.capped(dec, f"{len(values) - len(finite)} seed figures not finite")
    return Verdict(task, published, dec, values, **_described(finite, level), level=level)


def _described(values: Sequence[float], level: float) -> dict[str, Any]:
    from stsbench.stats.seeds import seed_summary

    if not values:
        return {}
    s = seed_summary(values, level)
    return dict(mean=s.mean, std=s.std, mean_low=s.low, mean_high=s.high)


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
        wide = [v for v in verdicts if v.status == decide.INCONCLUSIVE and v.low is not None]
        if wide:
            spans = ", ".join(f"{v.task} [{sg(v.low)}, {sg(v.high)}]" for v in wide)
            parts.append(
                f"{', '.join(v.task for v in wide)} inconclusive: the decision's 95% interval of the difference "
                f"from the published figure over {seeds} reaches across ±{difference:.2f} points ({spans}), or "
                "fewer than 3 seeds: train more seeds"
            )
        for status, what in (
            ("no interval", "without an interval (one seed: train more)"),
            ("missing", f"not evaluated in {self.path}"),
        ):
            names = [r.task for r in self.rows if r.status == status]
            if names:
                parts.append(f"{', '.join(names)} {what}")
        return "; ".join(parts)


def verdict_cells(v: Verdict, dash: str = "-") -> tuple[str, str]:
    """``mean - published [its decision's 95% interval]`` and MDE, as the check table and the report print them.

    At δ's decimals (:func:`stsbench.stats.decide.decimals`); ``dash`` where none.
    """
    sg = partial(decide.signed, delta=v.difference)
    diff = dash if v.diff is None else sg(v.diff) + ("" if v.low is None else f" [{sg(v.low)}, {sg(v.high)}]")
    return diff, dash if v.mde is None else f"{v.mde:.{decide.decimals(v.difference)}f}"


def find_aggregates(
    results_dir: Path, model: str | None = None, pooler: str | None = None, mode: str | None = None
) -> list[tuple[Path, dict[str, Any]]]:
    """Every seed aggregate under ``results_dir`` that matches the filters (the one reader's scan)."""
    found = []
    for path, agg in seed_aggregates(results_dir):
        wanted = {"pooler": pooler, "mode": mode}
        if any(v is not None and agg[k] != v for k, v in wanted.items()):
            continue
        if model is not None and not same_path(agg["model"], model, output_of(path.absolute())):
            continue
        found.append((path, agg))
    return found


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
    found = find_aggregates(results_dir, model, pooler, mode)
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
        averaged = tuple(
            t for t in agg["tasks"] if not t.endswith(AVG)
        )  # "Avg.", "STS Avg.", "Transfer Avg."
        same = set(averaged) == set(published)
        rows.append(
            SeedRow(AVG, entry.values[AVG], agg["tasks"][AVG], same, difference, level, **runs, over=averaged)
        )
    return SeedComparison(entry, path, agg, tuple(rows))
