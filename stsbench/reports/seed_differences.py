"""Groups of seeds against the baseline group (:mod:`stsbench.reports.seeds`), per task and Avg.

- :func:`seed_differences`: each group of two seeds or more against the baseline group: the difference of the
  seed means, Welch's 95% interval, and Holm's correction across the row's tasks (Avg. outside the family, on
  its own p, as in ``stsbench compare``: :func:`stsbench.stats.tests.holm_over_tasks`);
- :func:`difference_table`: those differences as a table, ``*`` where the corrected p stays below 0.05.
"""

from __future__ import annotations

from dataclasses import dataclass

from stsbench.analyses.common import short_name
from stsbench.average import AVG
from stsbench.reports.collect import TaskRecord
from stsbench.reports.scores import TASKS_OF, mode_label, present_tasks
from stsbench.reports.seeds import ALPHA, SIGNIFICANT, SeedGroup, average_values, modes_of, task_values
from stsbench.stats.seeds import SeedDifference, seed_difference
from stsbench.stats.tests import FAMILY, FamilyP, holm_over_tasks
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table


@dataclass(frozen=True)
class GroupDifference:
    """One group of seeds against the baseline group, per task (and Avg.): the difference, Holm's p."""

    group: SeedGroup
    mode: str
    cells: dict[str, tuple[SeedDifference, FamilyP] | None]  # task or Avg. -> (Welch difference, its p)


def significant(cell: tuple[SeedDifference, FamilyP] | None) -> bool:
    """Whether a difference gets the mark: Holm-adjusted p (Avg.: its own p) <= :data:`ALPHA`."""
    return cell is not None and cell[1].deciding <= ALPHA


def seed_differences(
    records: list[TaskRecord], groups: list[SeedGroup], base: SeedGroup, kind: str
) -> list[GroupDifference]:
    """Each other group of two seeds or more against ``base``, in the modes both have."""
    present = present_tasks(records, groups, kind)
    out = []
    for g in groups:
        if g.n < 2 or g is base:
            continue
        for mode in modes_of(records, g, kind):
            a, b = (task_values(records, x, kind, mode) for x in (g, base))
            a[AVG], b[AVG] = (average_values(records, x, kind, mode, TASKS_OF[kind]) for x in (g, base))
            names = [t for t in [*present, AVG] if len(a.get(t, [])) > 1 and len(b.get(t, [])) > 1]
            if not names:
                continue
            diffs = {t: seed_difference(a[t], b[t]) for t in names}
            family = holm_over_tasks({t: d.p for t, d in diffs.items()}, AVG)
            found = {t: (diffs[t], family[t]) for t in names}
            out.append(GroupDifference(g, mode, {t: found.get(t) for t in [*present, AVG]}))
    return out


def _diff_cell(cell: tuple[SeedDifference, FamilyP] | None) -> str:
    if cell is None:
        return DASH
    d, mark = cell[0], SIGNIFICANT if significant(cell) else ""
    return f"{fmt_delta(d.diff)} [{fmt_delta(d.low)}, {fmt_delta(d.high)}]{mark}"


def _p_cell(cell: tuple[SeedDifference, FamilyP] | None) -> str:
    if cell is None:
        return DASH
    p = cell[1]
    return p_value(p.deciding) + ("" if p.holm is not None else " (uncorrected)")


def p_value(p: float) -> str:
    """A p-value at 3 decimals, ``<0.001`` below."""
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def difference_table(diffs: list[GroupDifference], base: SeedGroup, kind: str) -> Table | None:
    """The differences to the baseline group with Welch's interval and Holm's mark; None when there are none."""
    if not diffs:
        return None
    names = list(diffs[0].cells)
    columns = ["group", "method", *[short_name(t) for t in names]]
    rows = []
    for d in diffs:
        label = mode_label(f"{d.group.label} − {base.label}", d.mode)
        rows.append([label, d.group.method or DASH, *[_diff_cell(d.cells[t]) for t in names]])
        rows.append(
            [
                "↳ p (Welch, Holm-adjusted)",
                "",
                *[_p_cell(c) for c in d.cells.values()],
            ]
        )
        rows.append(
            [
                "↳ smallest detectable difference (80% power)",
                "",
                *[DASH if c is None else fmt(c[0].min_detectable) for c in d.cells.values()],
            ]
        )
    noun = "Spearman x100" if kind == "sts" else "accuracy x100"
    notes = [
        f"Difference of the seed means ({noun}, group − {base.name}) with Welch's 95% interval over seeds "
        "(unequal variances, t with Welch-Satterthwaite df). "
        f"{SIGNIFICANT}: significant at 5% (two-sided Welch p, as in the p row) after Holm's correction "
        f"{FAMILY}; without the mark the difference is within what the seeds alone move. The smallest detectable "
        "difference: the true difference these seeds would find with 80% power at 5% (before the "
        "correction); a difference below it is untested, not absent.",
    ]
    title = f"{kind.upper()}: difference to {base.name} over seeds"
    return make_table(f"{kind}_seed_differences", title, columns, rows, notes, tuple(columns[2:]))
