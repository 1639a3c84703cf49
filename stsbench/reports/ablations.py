"""Ablation tables: training runs compared by their settings (ESimCSE's components, then sweeps and grids).

Runs are grouped by the settings that differ between them (:mod:`stsbench.reports.run_settings`):

- **components** (ESimCSE arXiv Table 6, COLING Table 4): runs identical in every shared setting that
  differ in which of a method's components they use (its spec's ``components``: ESimCSE's word repetition and
  momentum contrast; a method without components uses none: SimCSE), where the settings of a component agree
  between the runs that use it; beside each row the STS-B dev cell its recipe (or ``--against``) names;
- **sweeps and grids** (arXiv Tables 8-11, MoCoSE's tables): :mod:`stsbench.reports.sweep_tables`.

Runs that differ only in their seed (:mod:`stsbench.reports.seeds`) are one row of a component table: mean ±
std over the seeds, the gain over the group using no component (SimCSE) with its interval by the one rule;
without seeds each run is a row of its own (a group of one), its gain a plain difference. The sweeps compare runs one by one and, when runs
come in seeds, leave out ``seed`` (the Seeds section shows each seed).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from stsbench.published.registry import get_cell
from stsbench.reports.collect import TaskRecord, TrainRun
from stsbench.reports.models import Model, method_of, method_rank
from stsbench.reports.published_cells import Cells, cited, published_cell
from stsbench.reports.run_settings import (
    components_used,
    finite,
    settings,
    shared,
    sts_averages,
    without_seed,
)
from stsbench.reports.seeds import (
    SIGNIFICANT,
    SeedGroup,
    has_seeds,
    interval,
    mean_std,
    seed_groups,
    seed_ids,
    seeds_folder,
)
from stsbench.reports.sweep_tables import (
    Declared,
    grid_table,
    held_table,
    seed_sweeps,
    sweep_groups,
    sweep_seeds_table,
    sweep_table,
)
from stsbench.reports.training import dev_at_start, kept_dev, run_label, show_value
from stsbench.stats import decide
from stsbench.stats.seeds import seed_summary
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table

# the component table's columns (ESimCSE arXiv Table 6 and the paper's gains beside)
COMPONENT_COLUMNS = (
    "run",
    "method",
    "word repetition",
    "momentum contrast",
    "dev at step 0",
    "best dev",
    "gain over the first",  # named for the row using no component (gain over unsup-SimCSE)
    "published dev",
    "published gain",
    "STS test Avg.",
)


def _compatible(a: TrainRun, b: TrainRun) -> bool:
    sa, sb = settings(a), settings(b)
    return shared(a) == shared(b) and all(sa[k] == sb[k] for k in sa.keys() & sb.keys())


def component_groups(runs: list[TrainRun]) -> list[list[TrainRun]]:
    """Groups of compatible runs that use at least two different combinations of components.

    A component is what a method's spec names (:meth:`~stsbench.train.config.methods.MethodSpec.used`); a run of a
    method without any uses none, and joins the runs whose settings it shares (SimCSE beside ESimCSE's).
    """
    groups: list[list[TrainRun]] = []
    for run in sorted(runs, key=lambda r: (method_rank(method_of(r.config)), r.path)):
        for g in groups:
            if all(_compatible(run, other) for other in g):
                g.append(run)
                break
        else:
            groups.append([run])
    return [g for g in groups if len({components_used(r) for r in g}) > 1]


def _gain(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


# a component table's row: a group of seeds, or a run whose checkpoint was not evaluated
Row = SeedGroup | TrainRun


def _runs(row: Row) -> list[TrainRun]:
    return row.runs if isinstance(row, SeedGroup) else [row]


def _method(row: Row) -> str:
    return method_of(_runs(row)[0].config)


def _summary(values: Iterable[float | None], n: int) -> str:
    """Mean ± std of the finite ``values`` (one value as it is), or a dash."""
    kept = finite(values)
    return mean_std(seed_summary(kept), n) if kept else DASH


def _raw_devs(row: Row) -> dict[int, float]:
    """``{seed: the kept checkpoint's STS-B dev Spearman x100, unrounded}`` of a row's runs (what tests read)."""
    runs = _runs(row)
    out = {}
    for seed, run in zip(seed_ids([r.config.get("seed") for r in runs]), runs, strict=True):
        if run.best_dev_spearman is not None or run.curve:  # NaN: collapsed (0 for the rule, named)
            out[seed] = math.nan if run.best_dev_spearman is None else run.best_dev_spearman * 100
    return out


def _published_dev(row: Row, cells: Cells) -> tuple[str, float] | None:
    """``(address, figure)``: the first STS-B dev cell the row's runs are held against (a dev row's STS-B figure)."""
    for address in cells.get(seeds_folder(_runs(row)[0]), ()):
        entry, column = get_cell(address)
        if entry.split == "dev" and column in (None, "STSBenchmark") and "STSBenchmark" in entry.values:
            return address, entry.values["STSBenchmark"]
    return None


def _dev_cell(row: Row, cells: Cells) -> bool:
    """Whether the first cell the row's runs are held against is a dev one (its best dev compares with it)."""
    found = published_cell(_runs(row)[0], cells)
    return found is not None and get_cell(found[0])[0].split == "dev"


def _baseline(rows: Sequence[Row]) -> Row | None:
    """The row the gains are over: the first using no component (SimCSE beside ESimCSE's), else none."""
    return next((r for r in rows if not any(components_used(_runs(r)[0]))), None)


def _gains(rows: Sequence[Row], over_seeds: bool) -> dict[int, str]:
    """Each row's gain over the :func:`_baseline` row: its interval over seeds by the one rule, else a difference.

    ``*``: the interval says the gain matters.
    """
    simcse = _baseline(rows)
    if simcse is None:
        return {}
    if not over_seeds:
        return {id(r): fmt_delta(_gain(kept_dev(_runs(r)[0]), kept_dev(_runs(simcse)[0]))) for r in rows}
    base, base_why, base_cap = decide.finite_seeds(_raw_devs(simcse), dev=True)
    gains = {}
    for r in (r for r in rows if r is not simcse):
        values, why, cap = decide.finite_seeds(_raw_devs(r), dev=True)
        iv = decide.difference(values, base)
        if iv is not None:  # a mix of collapsed and trained seeds on either side: at most inconclusive
            d = decide.two_sided(iv, decide.DELTA, _method(r))
            gains[id(r)] = (
                decide.capped(d, why if cap else f"{_method(simcse)}: {base_why}") if cap or base_cap else d
            )
    # one family: the gains of one table, Holm over them (docs/uncertainty.md, Families)
    marked = dict(zip(gains, decide.family(list(gains.values())), strict=True))
    return {
        k: f"{fmt_delta(d.diff)} [{fmt_delta(d.low)}, {fmt_delta(d.high)}]{SIGNIFICANT * decide.marked(d)}"
        for k, d in marked.items()
    }


def component_table(
    rows: Sequence[Row], records: list[TaskRecord], n: int, cells: Cells | None = None
) -> Table:
    """ESimCSE arXiv Table 6 / COLING Table 4 layout: STS-B dev by component, gains beside the paper's.

    Gains are over the row using no component (SimCSE); the published STS-B dev figures are the cells ``cells``
    names (a recipe's, ``--against``'s), none where it names none.
    One row per group of seeds (a run without seeds, or whose checkpoint was not evaluated, is a group of one).
    With a group of several seeds the cells are mean ± std over the seeds, each row is followed by its 95%
    interval, and a gain is the difference of the seed means with its interval by the one rule (between groups of two
    seeds or more); without, each cell is the run's own figure and a gain the plain difference.
    """
    over_seeds = any(isinstance(r, SeedGroup) and r.n > 1 for r in rows)
    base_row = _baseline(rows)
    first = _method(base_row) if base_row is not None else "a run using no component"
    columns = ["group" if over_seeds else "run", *COMPONENT_COLUMNS[1:]]
    columns[COMPONENT_COLUMNS.index("gain over the first")] = f"gain over {first}"
    published = {id(row): _published_dev(row, cells or {}) for row in rows}
    pub_first = (published.get(id(base_row)) or (None, None))[1]
    gains = _gains(rows, over_seeds)
    runs = [r for row in rows for r in _runs(row)]
    out = []
    for row in rows:
        seeds = _runs(row)
        size = row.n if isinstance(row, SeedGroup) else 1
        rep, mom = components_used(seeds[0])
        pub = (published[id(row)] or (None, None))[1]
        out.append(
            [
                row.label if isinstance(row, SeedGroup) else run_label(row, [], runs),
                _method(row),
                "on" if rep else "off",
                "on" if mom else "off",
                _summary(map(dev_at_start, seeds), size),
                _summary(map(kept_dev, seeds), size),
                gains.get(id(row), DASH),
                fmt(pub),
                fmt_delta(_gain(pub, pub_first)),
                _summary(sts_averages(row, records) if isinstance(row, SeedGroup) else [], size),
            ]
        )
        if over_seeds:
            devs = finite(map(kept_dev, seeds))
            span = interval(seed_summary(devs) if devs else None)
            out.append(["↳ 95% interval over seeds", "", "", "", "", span, "", "", "", ""])
    base = _runs(base_row or rows[0])[0]
    same = shared(without_seed(base) if over_seeds else base)  # over seeds, the rows differ in the seed
    settings_note = "Shared settings: " + ", ".join(f"{k}={show_value(v)}" for k, v in same.items()) + "."
    addresses = [p[0] for p in published.values() if p]
    published_note = (
        f"Published: the STS-B dev cell the recipe (or --against) holds each row against; {cited(addresses)}."
        if addresses
        else "Published: none (neither the report's recipe nor --against names an STS-B dev cell for these runs)."
    )
    if not over_seeds:
        notes = [
            "STS-B dev Spearman x100: before training (the backbone) and of each run's kept checkpoint; gains are "
            f"over the {first} run of the same settings. {published_note} STS test Avg.: the run's checkpoint on "
            "the 7 STS tasks, when measured.",
            settings_note,
        ]
        return make_table(f"ablation_components_{n}", "Ablation: ESimCSE's components", columns, out, notes)
    notes = [
        "STS-B dev Spearman x100, mean ± std over each group's seeds: before training (the backbone) and of "
        "each seed's kept checkpoint. Gain: the difference of the seed means to the SimCSE group on unrounded "
        "figures with its 95% interval (paired on shared seeds, Welch for disjoint ones); "
        f"{SIGNIFICANT}: the interval lies beyond ±{decide.DELTA:g} points, a difference that matters, and Holm "
        f"over the table's gains agrees (docs/uncertainty.md, One rule). {published_note} STS test Avg.: over "
        "the seeds' checkpoints.",
        settings_note,
    ]
    title = "Ablation over seeds: ESimCSE's components"
    return make_table(f"ablation_components_seeds_{n}", title, columns, out, notes, right=tuple(columns[4:]))


def ablation_tables(
    runs: list[TrainRun],
    models: list[Model],
    records: list[TaskRecord],
    groups: Sequence[SeedGroup] | None = None,
    cells: Cells | None = None,
    declared: Declared | None = None,
) -> list[Table]:
    """Every component ablation and every one-field sweep the runs allow, in that order.

    Where runs come in seeds (:func:`~stsbench.reports.seeds.has_seeds`), the component tables and the sweeps
    compare the groups of seeds (one run of each stands for it, its seed left out, so that groups of other seeds
    compare; a sweep: a row per setting over its seeds); without, every run is a row of its own. ``groups``: the
    report's groups of seeds (default: those of ``models``); ``cells``: the published cells of the runs
    (:func:`stsbench.reports.published_cells.report_cells`), set beside a sweep's settings; ``declared``: the
    recipe's runs (``recipe_runs.json``), whose sweeps and grids are the tables' (none: found from the settings).
    """
    groups = list(groups) if groups is not None else seed_groups(models)
    over_seeds = has_seeds(groups)
    if over_seeds:
        rows: list[Row] = [g for g in groups if g.runs]
        stand_in = {id(row): without_seed(_runs(row)[0]) for row in rows}
    else:
        by_run = {id(g.runs[0]): g for g in groups if g.runs}
        rows = [by_run.get(id(r), r) for r in runs]
        stand_in = {id(row): _runs(row)[0] for row in rows}
    back = {id(stand_in[id(row)]): row for row in rows}
    found = component_groups([stand_in[id(row)] for row in rows])
    tables = [component_table([back[id(r)] for r in g], records, k, cells) for k, g in enumerate(found, 1)]
    if over_seeds:
        grids, swept = seed_sweeps(groups, declared)
        tables += [grid_table(a, b, g, records, k) for k, (a, b, g) in grids]
        tables += [sweep_seeds_table(f, g, records, k, cells) for k, (f, g) in swept]
        # the component tables' rows, then the grids' and sweeps'
        shown = {id(back[id(r)]) for g in found for r in g}
        shown |= {id(x) for _, (*_, g) in grids for x in g} | {id(x) for _, (_, g) in swept for x in g}
        left = [g for g in rows if id(g) not in shown and _dev_cell(g, cells or {})]
        order = list(declared or ())  # the recipe's order of its runs, where it declares them
        left.sort(key=lambda g: order.index(f) if (f := seeds_folder(_runs(g)[0])) in order else len(order))
        if left:  # held against a dev cell, in no table above (SimCSE's Fixed 0.1 beside its dropout sweep)
            tables.append(held_table(left, records, cells or {}))
        return tables
    tables += [
        sweep_table(f, g, models, records, k, cells)
        for k, (f, g) in enumerate(sweep_groups(runs, declared), 1)
    ]
    return tables
