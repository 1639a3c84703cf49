"""Tables of seed groups (:mod:`stsbench.reports.seeds`): mean ± std per task, per-seed values, differences.

- :func:`seed_score_table`: the STS/transfer table with one row per group of seeds (mean ± std, the 95%
  interval over seeds, the published rows, Δ and whether the published figure lies inside the interval);
  a model without seeds keeps its row as in :func:`stsbench.reports.tables.score_table`.
- :func:`per_seed_table`: every seed's figures, the numbers behind the means.
- :func:`seed_differences` / :func:`difference_table`: each group against the baseline group, per task and
  Avg.: difference of the seed means, Welch's 95% interval, ``*`` where Holm's correction across the row's
  tasks keeps p below 0.05 (Avg. outside the family, on its own p, as in ``stsbench compare``:
  :func:`stsbench.stats.tests.holm_over_tasks`).
"""

from __future__ import annotations

from dataclasses import dataclass

from stsbench.analyses.common import short_name
from stsbench.average import AVG
from stsbench.data.integrity import MARK
from stsbench.reports.collect import TaskRecord
from stsbench.reports.models import Model
from stsbench.reports.seeds import (
    ALPHA,
    SeedGroup,
    average_values,
    has_seeds,
    modes_of,
    seed_groups,
    task_values,
)
from stsbench.reports.tables import (
    TASKS_OF,
    modified_data,
    modified_notes,
    published_rows,
    score_notes,
    score_table,
    score_title,
)
from stsbench.stats.seeds import SeedDifference, SeedSummary, seed_difference, seed_summary
from stsbench.stats.tests import FAMILY, FamilyP, holm_over_tasks
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table
from stsbench.tasks.registry import task_columns

SIGNIFICANT = "*"


def mean_std(s: SeedSummary | None, n: int) -> str:
    """``79.97 ± 0.21``; the cell's own n where it has fewer seeds than its row; one value as it is."""
    if s is None:
        return DASH
    text = fmt(s.mean) if s.std is None else f"{fmt(s.mean)} ± {fmt(s.std)}"
    return text if s.n == n else f"{text} (n={s.n})"


def interval(s: SeedSummary | None) -> str:
    """``[79.71, 80.23]``, a dash for one seed."""
    return DASH if s is None or s.low is None else f"[{fmt(s.low)}, {fmt(s.high)}]"


def _present(records: list[TaskRecord], groups: list[SeedGroup], kind: str) -> list[str]:
    keys = {m.key for g in groups for m in g.models}
    found = {
        r.result.task for r in records if r.result.task_type == kind and r.result.model.fingerprint in keys
    }
    return [t for t in task_columns(kind) if t in found]  # plugins' tasks too


def _label(name: str, mode: str) -> str:
    return name if mode == "test" else f"{name} [{mode}]"


def _summaries(
    records: list[TaskRecord], group: SeedGroup, kind: str, mode: str, present: list[str]
) -> list[SeedSummary | None]:
    """Per task of ``present``, then Avg.: the summary over the group's seeds."""
    values = task_values(records, group, kind, mode)
    avgs = average_values(records, group, kind, mode, TASKS_OF[kind])
    return [seed_summary(values[t]) if t in values else None for t in present] + [
        seed_summary(avgs) if avgs else None
    ]


def seed_score_table(records: list[TaskRecord], groups: list[SeedGroup], kind: str) -> Table | None:
    """One row per (group, mode): mean ± std (n) over seeds, the seed interval, published rows; None if empty."""
    present = _present(records, groups, kind)
    if not present:
        return None
    columns = ["model", "method", *[short_name(t) for t in present], AVG]
    rows: list[list[str]] = []
    marked: list[str] = []  # the selection notes of the published rows shown
    modified = modified_data(records, kind)
    for g in groups:
        for mode in modes_of(records, g, kind):
            sums = _summaries(records, g, kind, mode, present)
            n = max(s.n for s in sums if s is not None)
            means = [None if s is None else s.mean for s in sums]
            # a figure over any seed's result on modified data is marked, and so is the Avg. over it
            bad = [any((m.key, mode, t) in modified for m in g.models) for t in present]
            bad.append(any(bad))
            if n == 1:  # one seed (or a model not trained here): the layout of the single-seed table
                label = g.label if g.n == 1 else f"{g.name} (n=1)"
                cells = [fmt(v) + MARK * b for v, b in zip(means, bad, strict=True)]
                rows.append([_label(label, mode), g.method or DASH, *cells])
                rows += published_rows(g.models[0], kind, mode, present, means[:-1], means[-1], marked)
                continue
            cells = [mean_std(s, n) + MARK * b for s, b in zip(sums, bad, strict=True)]
            rows.append([_label(f"{g.name} (n={n})", mode), g.method or DASH, *cells])
            spans = [interval(s) + MARK * b for s, b in zip(sums, bad, strict=True)]
            rows.append(["↳ 95% interval over seeds", "", *spans])
            bounds = [None if s is None or s.low is None else (s.low, s.high) for s in sums]
            rows += published_rows(g.models[0], kind, mode, present, means[:-1], means[-1], marked, bounds)
    notes = score_notes(kind, marked) + modified_notes(modified)
    if any(r[0].startswith("↳ 95% interval over seeds") for r in rows):
        notes.append(
            "A row `NAME (n=k)`: k training runs identical but for the seed, each cell the mean ± sample std over "
            "the seeds (its own n where fewer seeds have that task; Avg.: over the seeds' own Avg.). The 95% "
            "interval is the t-interval of the mean over seeds; Δ is the mean − published, and the last row says "
            "whether the published figure lies inside that interval. Each seed's figures: the Seeds section."
        )
    right = tuple(columns[2:])
    return make_table(kind, score_title(kind), columns, rows, notes, right)


def report_score_table(records: list[TaskRecord], models: list[Model], kind: str) -> Table | None:
    """The STS or transfer table as the report shows it: by groups of seeds where runs have seeds."""
    groups = seed_groups(models)
    if has_seeds(groups):
        return seed_score_table(records, groups, kind)
    return score_table(records, models, kind)


def per_seed_table(records: list[TaskRecord], groups: list[SeedGroup], kind: str) -> Table | None:
    """Every seed's figures, one row per checkpoint of each group of seeds; None without such groups."""
    multi = [g for g in groups if g.n > 1]
    present = _present(records, multi, kind)
    if not present:
        return None
    columns = ["checkpoint", "group", "seed", *[short_name(t) for t in present], AVG]
    rows = []
    for g in multi:
        for model, seed in zip(g.models, g.seeds, strict=True):
            one = SeedGroup(g.name, g.method, (model,))
            for mode in modes_of(records, one, kind):
                sums = _summaries(records, one, kind, mode, present)
                cells = [DASH if s is None else fmt(s.mean) for s in sums]
                rows.append([_label(model.label, mode), g.name, str(seed), *cells])
    noun = "Spearman x100" if kind == "sts" else "accuracy x100"
    notes = [f"{noun} of each seed's kept checkpoint; the groups' rows above are the mean ± std of these."]
    return make_table(f"{kind}_per_seed", f"{kind.upper()}: each seed", columns, rows, notes)


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
    present = _present(records, groups, kind)
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
        label = _label(f"{d.group.label} − {base.label}", d.mode)
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
