"""The sweeps and grids of an ablation, each setting beside the published cell its runs are held against.

A sweep: runs equal but for one setting (ESimCSE arXiv Tables 8-11, MoCoSE's sweeps); a grid: equal but for two
settings whose values form a full grid (MoCoSE Table 4). The published cells are the recipe's, then
``--against``'s (:mod:`stsbench.reports.published_cells`).

Which runs form a sweep or a grid, and at which point each stands, is what their recipe declares
(``recipe_runs.json``: each run's ``sweep_of`` and ``point``, :func:`declared_sweeps`); only without a recipe is
it found from their settings (:mod:`stsbench.reports.run_settings`). Over seeds, one run of each group of seeds
stands for it, its seed left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from stsbench.reports.collect import TaskRecord, TrainRun
from stsbench.reports.models import Model, method_of
from stsbench.reports.published_cells import Cells, cited, published_cell
from stsbench.reports.run_settings import (
    finite,
    option_words,
    other_settings,
    settings,
    sort_value,
    sts_average,
    sts_averages,
    titled,
    without_seed,
)
from stsbench.reports.seeds import SeedGroup, interval, mean_std, seeds_folder
from stsbench.reports.training import kept_dev, run_label, show_value
from stsbench.stats.seeds import seed_summary
from stsbench.tabular import DASH, Table, fmt, make_table

if TYPE_CHECKING:
    from stsbench.results.schema import DeclaredRun

Declared = Mapping[str, "DeclaredRun"]  # a recipe's runs by their seeds' folder (recipe_runs.json)


def declared_sweeps(
    runs: Sequence[TrainRun], declared: Declared
) -> tuple[list[tuple[str, str, list[TrainRun]]], list[tuple[str, list[TrainRun]]]]:
    """The grids and one-field sweeps the recipe declares: its runs by ``sweep_of``, ordered by their ``point``.

    A sweep of one field is a sweep, of two a grid; a run the recipe declares in no sweep is in none.
    """
    buckets: dict[tuple[str, tuple[str, ...]], list[tuple[TrainRun, Mapping[str, object]]]] = {}
    for run in runs:
        found = declared.get(seeds_folder(run))
        if found is not None and found.sweep_of and found.point:
            buckets.setdefault((found.sweep_of, tuple(sorted(found.point))), []).append((run, found.point))
    grids, sweeps = [], []
    for (_, fields), members in buckets.items():
        if len(members) < 2:
            continue
        members.sort(key=lambda m: (tuple(sort_value(m[1][f]) for f in fields), m[0].path))
        ordered = [run for run, _ in members]
        if len(fields) == 1:
            sweeps.append((fields[0], ordered))
        elif len(fields) == 2:
            grids.append((fields[0], fields[1], ordered))
    return grids, sweeps


def sweep_groups(runs: list[TrainRun], declared: Declared | None = None) -> list[tuple[str, list[TrainRun]]]:
    """(field, runs) for each set of runs of the same method and components that differ in one field only.

    With a recipe's runs (``declared``), its sweeps (:func:`declared_sweeps`), not found from the settings.
    """
    if declared:
        return declared_sweeps(runs, declared)[1]
    out = []
    fields = sorted({k for r in runs for k in settings(r)})
    for name in fields:
        buckets: dict[str, list[TrainRun]] = {}
        for r in runs:
            s = settings(r)
            if name not in s:
                continue
            rest = {k: v for k, v in s.items() if k != name}
            buckets.setdefault(repr((method_of(r.config), sorted(rest.items()))), []).append(r)
        for members in buckets.values():
            if len({repr(settings(r)[name]) for r in members}) > 1:
                out.append((name, sorted(members, key=lambda r: (sort_value(settings(r)[name]), r.path))))
    return out


def grid_groups(runs: list[TrainRun]) -> list[tuple[str, str, list[TrainRun]]]:
    """(field, field, runs) for each set of runs equal but for two fields whose values form a full grid.

    At least two values of each field, every pair present once (a recipe's ``grid:``): MoCoSE's projection x
    predictor layers (Table 4).
    """
    out = []
    fields = sorted({k for r in runs for k in settings(r)})
    for i, a in enumerate(fields):
        for b in fields[i + 1 :]:
            buckets: dict[str, list[TrainRun]] = {}
            for r in runs:
                s = settings(r)
                if a in s and b in s:
                    rest = {k: v for k, v in s.items() if k not in (a, b)}
                    buckets.setdefault(repr((method_of(r.config), sorted(rest.items()))), []).append(r)
            for members in buckets.values():
                cells = {(repr(settings(r)[a]), repr(settings(r)[b])) for r in members}
                xs, ys = {x for x, _ in cells}, {y for _, y in cells}
                if len(xs) > 1 and len(ys) > 1 and len(cells) == len(members) == len(xs) * len(ys):
                    out.append((a, b, members))
    return out


def _published_note(found: Iterable[tuple[str, float] | None]) -> str:
    """A sweep's note on its published column: whose cells they are, or why there are none."""
    addresses = [p[0] for p in found if p]
    if not addresses:
        return "Published: none (neither the report's recipe nor --against names a cell for these settings)."
    return f"Published: the cell the recipe (or --against) holds each setting against; {cited(addresses)}."


# the columns of a group of seeds' row after its first (:func:`_seed_cells`)
SEED_CELLS = ("best dev mean ± std (n)", "95% interval", "STS test Avg. mean ± std (n)", "published", "cell")


def sweep_seeds_table(
    name: str, rows: Sequence[SeedGroup], records: list[TaskRecord], n: int, cells: Cells | None = None
) -> Table:
    """One field varied over groups of seeds: a row per setting, mean ± std (n) and the 95% interval over seeds.

    STS-B dev: each seed's kept checkpoint (the training's own best dev score, what a dev sweep table
    reports); STS test Avg.: over the seeds whose checkpoints were evaluated on the seven tasks. Published: the
    cell ``cells`` holds the setting's seeds against (:mod:`stsbench.reports.published_cells`).
    """
    columns = [option_words(name), *SEED_CELLS]
    found = [published_cell(g.runs[0], cells or {}) for g in rows]
    out = [
        [show_value(settings(g.runs[0])[name]), *_seed_cells(g, records, pub)]
        for g, pub in zip(rows, found, strict=True)
    ]
    method = method_of(rows[0].runs[0].config)
    notes = [
        f"{method} groups of seeds identical but for {name}: one row per setting; STS-B dev Spearman x100 of each "
        "seed's kept checkpoint (the training's own best dev score), mean ± std (n seeds) and the 95% t-interval "
        "over seeds.",
        _published_note(found),
        other_settings(without_seed(rows[0].runs[0]), (name,)),
    ]
    title = titled("Sweep over seeds", name, method)
    return make_table(f"ablation_{name}_seeds_{n}", title, columns, out, notes, right=tuple(columns[1:5]))


def _seed_cells(group: SeedGroup, records: list[TaskRecord], pub: tuple[str, float] | None) -> list[str]:
    """A group of seeds' row after its first cell: best dev mean ± std (n) and 95% interval, STS test Avg., the cell."""
    devs = finite(map(kept_dev, group.runs))
    avgs = sts_averages(group, records)
    return [
        mean_std(seed_summary(devs), -1) if devs else DASH,
        interval(seed_summary(devs) if devs else None),
        mean_std(seed_summary(avgs), -1) if avgs else DASH,
        fmt(pub[1]) if pub else DASH,
        pub[0] if pub else DASH,
    ]


def held_table(rows: Sequence[SeedGroup], records: list[TaskRecord], cells: Cells) -> Table:
    """Groups of seeds held against a published dev cell that no sweep, grid or component table shows: a row each.

    What a paper's table sets beside its sweep (SimCSE Table 4's Fixed 0.1 beside its dropout rates), as the recipe
    names it: STS-B dev of each seed's kept checkpoint, mean ± std (n) and the 95% interval, beside the cell.
    """
    columns = ["group", *SEED_CELLS]
    found = [published_cell(g.runs[0], cells) for g in rows]
    out = [[g.name, *_seed_cells(g, records, pub)] for g, pub in zip(rows, found, strict=True)]
    notes = [
        "Groups of seeds the recipe (or --against) holds against a cell, in no sweep above: STS-B dev Spearman x100 "
        "of each seed's kept checkpoint, mean ± std (n seeds) and the 95% t-interval over seeds.",
        _published_note(found),
    ]
    title = "Held against a published cell, in no sweep"
    return make_table("ablation_held_seeds", title, columns, out, notes, right=tuple(columns[1:5]))


def sweep_table(
    name: str,
    group: list[TrainRun],
    models: list[Model],
    records: list[TaskRecord],
    n: int,
    cells: Cells | None = None,
) -> Table:
    """One field varied, everything else equal: STS-B dev per value, beside the cell ``cells`` holds it against."""
    columns = [
        "run",
        option_words(name),
        "best dev",
        "at step",
        "STS test Avg.",
        "published",
        "published key",
    ]
    rows = []
    found = [published_cell(r, cells or {}) for r in group]
    for r, pub in zip(group, found, strict=True):
        v = settings(r)[name]
        rows.append(
            [
                run_label(r, models, group),
                show_value(v),
                fmt(kept_dev(r)),
                show_value(r.best_step),
                fmt(sts_average(r, models, records)),
                fmt(pub[1]) if pub else DASH,
                pub[0] if pub else DASH,
            ]
        )
    method = method_of(group[0].config)
    notes = [
        f"{method} runs identical but for {name}; STS-B dev Spearman x100 of each kept checkpoint.",
        _published_note(found),
        other_settings(group[0], (name,)),
    ]
    title = titled("Ablation", name, method)
    return make_table(f"ablation_{name}_{n}", title, columns, rows, notes)


def grid_table(a: str, b: str, groups: Sequence[SeedGroup], records: list[TaskRecord], n: int) -> Table:
    """A grid of groups of seeds: ``a`` down, ``b`` across, each cell mean ± std (n) of the groups' figure.

    The figure: the STS test Avg. where every group's seeds were evaluated on the seven tasks (MoCoSE's grids
    are STS averages), else each seed's best STS-B dev score.
    """
    avgs = {id(g): sts_averages(g, records) for g in groups}
    on_test = all(avgs[id(g)] for g in groups)
    value = {
        (repr(settings(g.runs[0])[a]), repr(settings(g.runs[0])[b])): (
            avgs[id(g)] if on_test else finite(map(kept_dev, g.runs))
        )
        for g in groups
    }
    xs = sorted({settings(g.runs[0])[a] for g in groups}, key=sort_value)
    ys = sorted({settings(g.runs[0])[b] for g in groups}, key=sort_value)
    columns = [f"{a} ↓ {b} →", *[show_value(y) for y in ys]]
    out = []
    for x in xs:
        cells = []
        for y in ys:
            found = value.get((repr(x), repr(y)), [])
            cells.append(mean_std(seed_summary(found), -1) if found else DASH)
        out.append([show_value(x), *cells])
    method = method_of(groups[0].runs[0].config)
    what = (
        "STS test Avg. (the seven tasks)"
        if on_test
        else "STS-B dev Spearman x100 of each seed's kept checkpoint"
    )
    notes = [
        f"{method} groups of seeds identical but for {a} and {b}: each cell the {what}, mean ± std (n seeds).",
        other_settings(without_seed(groups[0].runs[0]), (a, b)),
    ]
    title = f"Grid over seeds: {a} x {b} ({method})"
    return make_table(f"ablation_{a}_{b}_grid_{n}", title, columns, out, notes, right=tuple(columns[1:]))


Grid = tuple[int, tuple[str, str, list[SeedGroup]]]  # (k, (field, field, groups)): the k-th grid

Sweep = tuple[int, tuple[str, list[SeedGroup]]]  # (k, (field, groups)): the k-th one-field sweep


def seed_sweeps(
    groups: Sequence[SeedGroup], declared: Declared | None = None
) -> tuple[list[Grid], list[Sweep]]:
    """The grids and one-field sweeps of groups of seeds, numbered as their tables.

    With a recipe's runs (``declared``), those it declares (:func:`declared_sweeps`); without, those their settings
    show. A sweep whose settings all lie in a grid is left to the grid's table.
    """
    rows = [g for g in groups if g.runs]
    stand_in = {id(row): without_seed(row.runs[0]) for row in rows}
    back = {id(stand_in[id(row)]): row for row in rows}
    seeded = list(stand_in.values())
    grids, swept = (
        declared_sweeps(seeded, declared) if declared else (grid_groups(seeded), sweep_groups(seeded))
    )
    in_grid = {id(r) for _, _, g in grids for r in g}
    grid_rows = [(k, (a, b, [back[id(r)] for r in g])) for k, (a, b, g) in enumerate(grids, 1)]
    sweeps = [
        (k, (f, [back[id(r)] for r in g]))
        for k, (f, g) in enumerate(swept, 1)
        if f != "seed" and not all(id(r) in in_grid for r in g)  # a grid's rows and columns: in its table
    ]
    return grid_rows, sweeps
