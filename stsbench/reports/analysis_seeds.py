"""An analysis over the seeds of a run: each figure's mean ± std and 95% interval, every seed's value beside.

A recipe runs every analysis on every seed (:func:`stsbench.reproduce.plan.analysis_steps`); the report then
shows one row per group of seeds (:class:`stsbench.reports.seeds.SeedGroup`) instead of one per checkpoint.
Each figure of the analysis (its registry entry's :meth:`~stsbench.analyses.registry.Analysis.numbers`, laid
out as the paper's table) is summarised over the group's seeds by :func:`stsbench.stats.seeds.seed_summary`,
the function behind the score tables' ``mean ± std`` and their 95% interval, so an analysis and a score are
read one way. Every seed's value goes to a CSV beside the figures (the data the seed figure is drawn from),
and the headline figures are drawn seed by seed with their mean and interval
(:func:`stsbench.reports.spread.seed_points_figure`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stsbench.analyses.registry import Analysis, Number
from stsbench.reports.collect import AnalysisRecord
from stsbench.reports.figures import write_csv
from stsbench.reports.seeds import LEVEL, TEST_SELECTED, SeedGroup
from stsbench.stats.seeds import SeedSummary, seed_summary
from stsbench.tabular import DASH, Table, fmt, make_table

INTERVAL_ROW = "↳ 95% interval over seeds"
CSV_COLUMNS = ("group", "seed", "checkpoint", "figure", "column", "value")


@dataclass(frozen=True)
class SeededResults:
    """One group's results of one analysis variant: ``(seed, checkpoint label, result)`` in seed order."""

    group: SeedGroup
    seeds: tuple[tuple[Any, str, Any], ...]
    # each seed's ``Analysis.numbers``, in the order of ``seeds``, read once (:func:`seeded`)
    numbers: tuple[tuple[Number, ...], ...] = ()

    @property
    def label(self) -> str:
        """The group as the tables name it, with the number of seeds this analysis ran on."""
        return f"{self.group.name} (n={len(self.seeds)})" + (
            TEST_SELECTED if self.group.test_selected else ""
        )


def seeded(
    records: Sequence[AnalysisRecord], groups: Sequence[SeedGroup], analysis: Analysis
) -> list[SeededResults]:
    """The groups with two or more analysed seeds among ``records`` (one analysis, one variant), in group order.

    Each seed's figures (``analysis.numbers``) are read here, once, for the table, the CSV and the figure.
    """
    found = []
    for g in groups:
        keys = [m.key for m in g.models]
        mine = sorted(
            (r for r in records if r.model.fingerprint in keys),
            key=lambda r: (keys.index(r.model.fingerprint), r.path),
        )
        by_model: dict[str, AnalysisRecord] = {r.model.fingerprint: r for r in mine}  # a rerun: the last
        if len(by_model) > 1:
            seeds = tuple(
                (g.seeds[keys.index(k)], g.models[keys.index(k)].label, r.result) for k, r in by_model.items()
            )
            found.append(SeededResults(g, seeds, tuple(tuple(analysis.numbers(r)) for _, _, r in seeds)))
    return found


def _numbers(found: SeededResults) -> dict[tuple[str, str], tuple[Number, list[float]]]:
    """``(row, column) -> (its first Number, one value per seed that has it)``, in the analysis' order."""
    out: dict[tuple[str, str], tuple[Number, list[float]]] = {}
    for numbers in found.numbers:
        for n in numbers:
            first, values = out.setdefault((n.row, n.column), (n, []))
            if n.value is not None:
                values.append(n.value)
    return out


def _mean_std(s: SeedSummary | None, digits: int, n: int) -> str:
    if s is None:
        return DASH
    text = fmt(s.mean, digits) if s.std is None else f"{fmt(s.mean, digits)} ± {fmt(s.std, digits)}"
    return text if s.n == n else f"{text} (n={s.n})"


def _interval(s: SeedSummary | None, digits: int) -> str:
    return DASH if s is None or s.low is None else f"[{fmt(s.low, digits)}, {fmt(s.high, digits)}]"


def seeds_table(analysis: Analysis, variant: str, found: Sequence[SeededResults]) -> Table | None:
    """Per group and figure row: mean ± std over the seeds per column, then the 95% interval row."""
    if not found:
        return None
    blocks = [(f, _numbers(f)) for f in found]
    columns = list(dict.fromkeys(c for _, nums in blocks for _, c in nums))
    rows = []
    for f, nums in blocks:
        for row in dict.fromkeys(r for r, _ in nums):
            sums = {}
            for column in columns:
                number, values = nums.get((row, column), (None, []))
                sums[column] = (
                    seed_summary(values, LEVEL) if values else None,
                    number.decimals if number else 2,
                )
            n = len(f.seeds)
            rows.append([f.label, row, *[_mean_std(s, d, n) for s, d in sums.values()]])
            rows.append([INTERVAL_ROW, "", *[_interval(s, d) for s, d in sums.values()]])
    notes = [
        f"A row `NAME (n=k)`: the {analysis.title.lower()} figures of k checkpoints trained identically but for "
        "the seed, each cell the mean ± sample std over the seeds (its own n where fewer seeds have it); the 95% "
        "interval is the t-interval of the mean over seeds, as the score tables' (stsbench.stats.seeds). "
        f"Every seed's value: `{csv_name(variant)}` beside the figures.",
    ]
    title = f"{analysis.title} over seeds ({variant})"
    return make_table(
        f"{variant}_seeds", title, ["model", "figure", *columns], rows, notes, right=tuple(columns)
    )


def csv_name(variant: str) -> str:
    """The file every seed's values go to, in the report's figures folder."""
    return f"{variant}_seeds.csv"


def write_seed_values(found: Sequence[SeededResults], path: Path) -> Path:
    """Every seed's value of every figure (:data:`CSV_COLUMNS`), unrounded; atomically."""
    rows = (
        [f.label, seed, checkpoint, n.row, n.column, "" if n.value is None else repr(n.value)]
        for f in found
        for (seed, checkpoint, _), numbers in zip(f.seeds, f.numbers, strict=True)
        for n in numbers
    )
    return write_csv(path, CSV_COLUMNS, rows)


def headline_points(found: Sequence[SeededResults]) -> list[tuple[str, str, float]]:
    """(group label, figure, value) of every seed's headline figures: the seed figure's points."""
    points = []
    for f in found:
        for numbers in f.numbers:
            points += [
                (f.label, f"{n.row}: {n.column}", n.value)
                for n in numbers
                if n.headline and n.value is not None
            ]
    return points
