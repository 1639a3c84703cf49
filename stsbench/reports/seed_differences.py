"""Groups of seeds against the baseline group (:mod:`stsbench.reports.seeds`), per task and Avg.

- :func:`seed_differences`: each group of two seeds or more against the baseline group: the difference of the
  seed means on unrounded figures with its 95% interval, the design following the seeds (paired on the seeds the
  two groups share, Welch for disjoint ones), read against δ by the one rule's two-sided words
  (:func:`stsbench.stats.decide.two_sided`: a difference that matters, no difference that matters, inconclusive);
- :func:`difference_table`: those differences as a table, ``*`` where the difference matters by its interval and
  by Holm over the tasks of p(|diff| > δ) (:func:`stsbench.stats.decide.family`; the Avg. outside the family).
"""

from __future__ import annotations

from dataclasses import dataclass

from stsbench.analyses.common import short_name
from stsbench.average import AVG
from stsbench.published.cells import resolution
from stsbench.reports.collect import TaskRecord
from stsbench.reports.scores import TASKS_OF, mode_label, present_tasks
from stsbench.reports.seeds import SIGNIFICANT, SeedGroup, average_seed_values, modes_of, task_seed_values
from stsbench.stats import decide
from stsbench.stats.decide import DELTA, Decision
from stsbench.tabular import DASH, Table, fmt, make_table


@dataclass(frozen=True)
class GroupDifference:
    """One group of seeds against the baseline group, per task (and Avg.): the interval and its decision."""

    group: SeedGroup
    mode: str
    cells: dict[str, Decision | None]  # task or Avg. -> group - base, its interval and decision


def significant(cell: Decision | None) -> bool:
    """Whether a difference gets the mark: it matters by its interval and by Holm over the tasks."""
    return cell is not None and decide.marked(cell)


def seed_differences(
    records: list[TaskRecord], groups: list[SeedGroup], base: SeedGroup, kind: str, delta: float = DELTA
) -> list[GroupDifference]:
    """Each other group of two seeds or more against ``base``, in the modes both have."""
    present = present_tasks(records, groups, kind)
    out = []
    for g in groups:
        if g.n < 2 or g is base:
            continue
        for mode in modes_of(records, g, kind):
            a, b = (task_seed_values(records, x, kind, mode) for x in (g, base))
            a[AVG], b[AVG] = (average_seed_values(records, x, kind, mode, TASKS_OF[kind]) for x in (g, base))
            cells: dict[str, Decision | None] = {}
            for t in [*present, AVG]:
                h = resolution(TASKS_OF[kind] if t == AVG else [t])
                iv = (
                    decide.difference(a.get(t, {}), b.get(t, {}), resolution=h)
                    if a.get(t) and b.get(t)
                    else None
                )
                cells[t] = None if iv is None else decide.two_sided(iv, delta, t)
            tasks = [t for t in present if cells.get(t) is not None]
            cells.update(zip(tasks, decide.family([cells[t] for t in tasks]), strict=True))
            if any(c is not None for c in cells.values()):
                out.append(GroupDifference(g, mode, cells))
    return out


def _diff_cell(d: Decision | None) -> str:
    if d is None:
        return DASH
    mark = SIGNIFICANT if significant(d) else ""
    delta = d.delta or decide.DELTA
    return f"{decide.signed(d.diff, delta)} [{decide.signed(d.low, delta)}, {decide.signed(d.high, delta)}]{mark}"


def _decision_cell(dec: Decision | None) -> str:
    if dec is None:
        return DASH
    design = dec.interval.design
    words = dec.outcome + ("" if design == decide.PAIRED else f" ({design})")
    return words + (f", {dec.note}" if dec.note else "")


def p_value(p: float | None) -> str:
    """A p-value at 3 decimals, ``<0.001`` below, a dash for none."""
    return DASH if p is None else "<0.001" if p < 0.001 else f"{p:.3f}"


def difference_table(
    diffs: list[GroupDifference], base: SeedGroup, kind: str, delta: float = DELTA
) -> Table | None:
    """The differences to the baseline group, their 95% intervals and decisions; None when there are none."""
    if not diffs:
        return None
    names = list(diffs[0].cells)
    columns = ["group", "method", *[short_name(t) for t in names]]
    rows = []
    for d in diffs:
        label = mode_label(f"{d.group.label} − {base.label}", d.mode)
        rows.append([label, d.group.method or DASH, *[_diff_cell(d.cells[t]) for t in names]])
        rows.append([f"↳ against δ = {fmt(delta)}", "", *[_decision_cell(c) for c in d.cells.values()]])
        rows.append(
            [
                "↳ p (beyond ±δ), Holm over the tasks",
                "",
                *[
                    DASH if c is None else p_value(c.p_holm if c.p_holm is not None else c.p)
                    for c in d.cells.values()
                ],
            ]
        )
        rows.append(
            [
                "↳ smallest detectable difference (80% power)",
                "",
                *[DASH if c is None else fmt(c.mdd) for c in d.cells.values()],
            ]
        )
    noun = "Spearman x100" if kind == "sts" else "accuracy x100"
    notes = [
        f"Difference of the seed means ({noun}, group − {base.name}, unrounded figures) with its 95% interval over "
        "seeds: paired on the seeds the two groups share, Welch where they share none (said beside the words). "
        f"Read against δ = {fmt(delta)} points, the difference that matters: 'a difference that matters' where "
        "the interval lies entirely beyond ±δ and Holm over the tasks agrees (p (|d| > δ) = 2·sf((|d| - δ)/se, df) "
        f"below 0.05, the Avg. its own p, outside the family; marked {SIGNIFICANT}), 'no difference that matters' "
        "where it lies inside ±δ, 'inconclusive' otherwise; fewer than 3 seeds is inconclusive whatever the "
        "spread; the printed interval is not adjusted (docs/uncertainty.md, One rule). The smallest detectable difference: the true difference these seeds would find with 80% power "
        "at 5%; a difference below it is untested, not absent.",
    ]
    title = f"{kind.upper()}: difference to {base.name} over seeds"
    return make_table(f"{kind}_seed_differences", title, columns, rows, notes, tuple(columns[2:]))
