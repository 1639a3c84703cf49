"""Ablations: training runs compared by their settings (ESimCSE's components, sweeps and grids), tables and figures.

Runs are grouped by the settings that differ between them (:func:`stsbench.reports.training.settings`):

- **components** (ESimCSE arXiv Table 6, COLING Table 4): runs identical in every shared setting that
  differ in which of a method's components they use (its spec's ``components``: ESimCSE's word repetition and
  momentum contrast; a method without components uses none: SimCSE), where the settings of a component agree
  between the runs that use it; beside each row the STS-B dev cell its recipe (or ``--against``) names;
- **sweeps** (runs equal but for one setting: ESimCSE arXiv Tables 8-11, MoCoSE's sweeps) and **grids** (equal
  but for two settings whose values form a full grid: MoCoSE Table 4), each setting beside the published cell its
  runs are held against (the recipe's, then ``--against``'s: :mod:`stsbench.reports.reproduction`). Which runs
  form a sweep or a grid, and at which point each stands, is what their recipe declares (``recipe_runs.json``:
  each run's ``sweep_of`` and ``point``, :func:`declared_sweeps`); only without a recipe is it found from their
  settings. Over seeds, one run of each group of seeds stands for it, its seed left out.

Runs that differ only in their seed (:mod:`stsbench.reports.seeds`) are one row of a component table: mean ±
std over the seeds, the gain over the group using no component (SimCSE) with its interval by the one rule;
without seeds each run is a row of its own (a group of one), its gain a plain difference. The sweeps compare runs
one by one and, when runs come in seeds, leave out ``seed`` (the Seeds section shows each seed).

**Sweep figures.** The papers draw their sweeps (ESimCSE arXiv Figure 2: batch size; MoCoSE Figures 8, 10, 11:
EMA decay, embedding dimension, initial queue size; Figure 13: queue size x initial size) as a curve of one figure
against the setting. Here every group of seeds of a sweep (or of a grid, one line per value of its second field:
the groups the tables compare, :func:`seed_sweeps`) gives one point per seed: its kept checkpoint's STS-B dev
Spearman x100 (the training's own best, what a dev sweep reports) and, where the seeds were evaluated on the seven
STS test sets, their Avg. The rows go to a CSV first (:data:`COLUMNS`), and the figure is drawn from that file
(:func:`sweep_figure`), so that it re-renders from the data beside it; the mean is drawn with its 95% t-interval
over seeds (:func:`stsbench.reports.seeds.seed_interval`, the tables' interval), and the paper's cells for the
settings, where the registry has them, in a panel of their own: another model (BERT-base) and often another figure
(MoCoSE Table 3 is an STS test Avg.), so never on our axis. A sweep is drawn against its setting, and against the
traceable distance each setting of a momentum method sets.

**MoCoSE Figure 4** (:func:`draw_distance`): the L1 and L2 distance of (alignment, uniformity) to a fixed
point, against the traceable distance. MoCoSE argues that a proper maximum traceable distance lets alignment and
uniformity reach their best combination, and draws, along the distance, how far each model's (l_align, l_uniform)
lies from a fixed point. The paper does not say which point: the default here is (0, -4), perfect alignment and the
uniformity of points spread evenly over the sphere (l_uniform with t = 2 tends to -4 as the dimension grows), an
option of ``stsbench report`` (``--align-point``) and written on the figure. Every seed of a sweep whose runs log
different traceable distances and that has alignment/uniformity results gives a row (:data:`ALIGN_COLUMNS`),
written to a CSV beside the figure, which is drawn from that file: the mean over seeds of each distance with its
95% t-interval band.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from stsbench.analyses import figures as afig
from stsbench.errors import StsbenchError
from stsbench.progress import seeds_a_setting
from stsbench.published.registry import get_cell
from stsbench.reports.collect import AnalysisRecord, Model, TaskRecord, TrainRun, method_of, method_rank
from stsbench.reports.reproduction import Cells, cited, published_cell
from stsbench.reports.seeds import (
    SIGNIFICANT,
    SeedGroup,
    best_devs,
    figure_axes,
    has_seeds,
    interval,
    mean_std,
    seaborn_module,
    seed_groups,
    seed_interval,
    seeds_folder,
    sort_value,
)
from stsbench.reports.training import (
    components_used,
    dev_at_start,
    finite,
    kept_dev,
    option_words,
    other_settings,
    run_label,
    settings,
    shared,
    show_value,
    sts_average,
    sts_averages,
    titled,
    without_seed,
)
from stsbench.stats import decide
from stsbench.stats.seeds import seed_summary
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table

if TYPE_CHECKING:
    from stsbench.results.schema import DeclaredRun


# -- sweeps and grids ----------------------------------------------------------------------------------------


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


def _equal_but(runs: list[TrainRun], varied: tuple[str, ...]) -> list[list[TrainRun]]:
    """The runs that set every field of ``varied``, by method and their other settings."""
    buckets: dict[str, list[TrainRun]] = {}
    for r in runs:
        s = settings(r)
        if all(k in s for k in varied):
            rest = {k: v for k, v in s.items() if k not in varied}
            buckets.setdefault(repr((method_of(r.config), sorted(rest.items()))), []).append(r)
    return list(buckets.values())


def sweep_groups(runs: list[TrainRun], declared: Declared | None = None) -> list[tuple[str, list[TrainRun]]]:
    """(field, runs) for each set of runs of the same method and components that differ in one field only.

    With a recipe's runs (``declared``), its sweeps (:func:`declared_sweeps`), not found from the settings.
    """
    if declared:
        return declared_sweeps(runs, declared)[1]
    out = []
    fields = sorted({k for r in runs for k in settings(r)})
    for name in fields:
        for members in _equal_but(runs, (name,)):
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
            for members in _equal_but(runs, (a, b)):
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
    cell ``cells`` holds the setting's seeds against (:mod:`stsbench.reports.reproduction`).
    """
    columns = [option_words(name), *SEED_CELLS]
    out = [[show_value(settings(g.runs[0])[name]), *_seed_cells(g, records, cells or {})] for g in rows]
    method = method_of(rows[0].runs[0].config)
    notes = [
        f"{method} groups of seeds identical but for {name}: one row per setting; STS-B dev Spearman x100 of each "
        "seed's kept checkpoint (the training's own best dev score), mean ± std (n seeds) and the 95% t-interval "
        "over seeds.",
        _published_note(published_cell(g.runs[0], cells or {}) for g in rows),
        other_settings(without_seed(rows[0].runs[0]), (name,)),
    ]
    title = titled("Sweep over seeds", name, method)
    return make_table(f"ablation_{name}_seeds_{n}", title, columns, out, notes, right=tuple(columns[1:5]))


def _seed_cells(group: SeedGroup, records: list[TaskRecord], cells: Cells) -> list[str]:
    """A group of seeds' row after its first cell: best dev mean ± std (n) and 95% interval, STS test Avg., the cell.

    The cell: the first that ``cells`` holds the group's seeds against (:func:`published_cell`).
    """
    pub = published_cell(group.runs[0], cells)
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
    out = [[g.name, *_seed_cells(g, records, cells)] for g in rows]
    notes = [
        "Groups of seeds the recipe (or --against) holds against a cell, in no sweep above: STS-B dev Spearman x100 "
        "of each seed's kept checkpoint, mean ± std (n seeds) and the 95% t-interval over seeds.",
        _published_note(published_cell(g.runs[0], cells) for g in rows),
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
    found = [published_cell(r, cells or {}) for r in group]
    rows = [
        [
            run_label(r, models, group),
            show_value(settings(r)[name]),
            fmt(kept_dev(r)),
            show_value(r.best_step),
            fmt(sts_average(r, models, records)),
            fmt(pub[1]) if pub else DASH,
            pub[0] if pub else DASH,
        ]
        for r, pub in zip(group, found, strict=True)
    ]
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
    cells = {}  # (a, b) -> mean ± std (n) of the group's figure
    for g in groups:
        found = avgs[id(g)] if on_test else finite(map(kept_dev, g.runs))
        at = (repr(settings(g.runs[0])[a]), repr(settings(g.runs[0])[b]))
        cells[at] = mean_std(seed_summary(found), -1) if found else DASH
    xs = sorted({settings(g.runs[0])[a] for g in groups}, key=sort_value)
    ys = sorted({settings(g.runs[0])[b] for g in groups}, key=sort_value)
    columns = [f"{a} ↓ {b} →", *[show_value(y) for y in ys]]
    out = [[show_value(x), *[cells.get((repr(x), repr(y)), DASH) for y in ys]] for x in xs]
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


# -- sweep figures -------------------------------------------------------------------------------------------


COLUMNS = (
    "setting", "series", "seed", "best_dev", "sts_avg", "published", "published_key", "traceable_distance",
    "distance_ramped",
)  # fmt: skip
DISTANCE = "maximum traceable distance"
DEV = "STS-B dev Spearman x100 (kept checkpoint)"
AVG = "STS test Avg. (7 tasks)"


def logged_distance(run: TrainRun) -> tuple[float | None, bool]:
    """The run's maximum traceable distance as its log's start record gives it (MoCoSE eq. 4), and whether ramped.

    A ramped EMA weight has a distance at each step: the final weight's is returned, flagged (the papers' distance
    needs a fixed weight). None for a method without one, or a log without it.
    """
    value = run.traceable_distance
    if isinstance(value, dict):
        start, end = value.get("start"), value.get("end")
        return (None if end is None else float(end)), start != end
    return (None if value is None else float(value)), False


def sweep_rows(
    name: str,
    groups: Sequence[SeedGroup],
    records: list[TaskRecord],
    series: str | None = None,
    cells: Cells | None = None,
) -> list[list[str]]:
    """The CSV rows of a one-field sweep over groups of seeds (:data:`COLUMNS`): a row per seed.

    ``series``: a grid's second field, by group; ``cells``: the runs' published cells
    (:func:`stsbench.reports.reproduction.report_cells`).
    """
    rows = []
    for g in sorted(groups, key=lambda g: sort_value(settings(g.runs[0])[name])):
        label = show_value(settings(g.runs[0])[series]) if series else ""
        pub = published_cell(g.runs[0], cells or {})
        for model, run in zip(g.models, g.runs, strict=True):
            avg = sts_averages(SeedGroup(g.name, g.method, (model,)), records)
            dev = kept_dev(run)
            distance, ramped = logged_distance(run)
            rows.append(
                [
                    show_value(settings(g.runs[0])[name]),
                    label,
                    str(run.config.get("seed", "")),
                    "" if dev is None or not math.isfinite(dev) else repr(dev),
                    repr(avg[0]) if avg else "",
                    repr(pub[1]) if pub else "",
                    pub[0] if pub else "",
                    "" if distance is None else repr(distance),
                    "yes" if ramped else "",
                ]
            )
    return rows


def sweep_figure(
    data: Path, stem: Path, setting: str, series: str = "", title: str = "", x: str = "setting"
) -> list[Path]:
    """Draw the sweep in ``data`` (a CSV of :data:`COLUMNS`) to ``stem``.png/.svg (:func:`draw_sweep`)."""
    return afig.save(draw_sweep(data, setting, series, title, x), stem)


def varies_in_distance(rows: Sequence[Sequence[str]]) -> bool:
    """Whether the sweep's settings have logged traceable distances that differ (a figure against it means something)."""
    k = COLUMNS.index("traceable_distance")
    return all(r[k] for r in rows) and len({r[k] for r in rows}) > 1


def draw_sweep(data: Path, setting: str, series: str = "", title: str = "", x: str = "setting") -> Any:
    """The matplotlib figure of the sweep in ``data``: one panel per figure measured, the published last.

    x: the setting (or ``x``, another column: ``traceable_distance``), on a numeric axis where every value is a
    number (else in file order); y: STS-B dev
    (and the STS test Avg. where the seeds have it); a line per series (a grid's second field); the paper's
    cells, where the registry has them, in a panel of their own.
    """
    frame = pd.read_csv(data, dtype=str, keep_default_na=False)
    numeric = all(_is_number(v) for v in frame[x])
    frame["x"] = frame[x].astype(float) if numeric else frame[x]
    panels = [(c, label) for c, label in (("best_dev", DEV), ("sts_avg", AVG)) if (frame[c] != "").any()]
    keys = sorted({k.split("#")[0] for k in frame["published_key"] if k})
    if keys:  # the paper's figures on an axis of their own: another model, another scale
        panels.append(("published", f"published: {', '.join(keys)}"))
    sns = seaborn_module()
    with figure_axes(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False) as (fig, axes):
        for ax, (column, label) in zip(axes.flat, panels, strict=True):
            sub = frame[frame[column] != ""].copy()
            sub["y"] = sub[column].astype(float)
            hue = "series" if (sub["series"] != "").any() else None
            order = None if numeric else list(dict.fromkeys(sub["x"]))
            common = {"data": sub, "x": "x", "y": "y", "ax": ax}
            if column == "published":
                pub = sub.drop_duplicates(["setting", "series"])
                sns.lineplot(
                    data=pub, x="x", y="y", hue="series" if (pub["series"] != "").any() else None, ax=ax,
                    marker="X", color="tab:red", linestyle="--", sort=numeric, legend=False,
                )  # fmt: skip
                ax.set_title("the paper's model and setting, as published", fontsize=8)
            elif numeric:
                sns.lineplot(
                    **common, hue=hue, estimator="mean", errorbar=seed_interval, marker="o",
                    err_style="band", palette="colorblind" if hue else None, color=None if hue else "black",
                )  # fmt: skip
                sns.scatterplot(
                    **common, hue=hue, palette="colorblind" if hue else None, color=None if hue else "grey",
                    alpha=0.5, s=14, legend=False,
                )  # fmt: skip
            else:
                sns.pointplot(
                    **common, hue=hue, order=order, estimator="mean", errorbar=seed_interval, markers="o",
                    capsize=0.2, palette="colorblind" if hue else None, color=None if hue else "black",
                    linestyle="none",
                )  # fmt: skip
                sns.stripplot(**common, order=order, color="grey", alpha=0.7, size=4, jitter=False, zorder=3)
            ax.set_xlabel(DISTANCE if x == "traceable_distance" else option_words(setting))
            ax.set_ylabel(label)
        n = frame.groupby(["setting", "series"])["seed"].nunique()
        ramped = x == "traceable_distance" and (frame["distance_ramped"] == "yes").any()
        ramp = "the EMA weight ramps: each distance is at the final weight, not one the run kept throughout\n"
        spread = (
            f"each seed (dots); mean and its 95% t-interval over seeds ({seeds_a_setting(n.min(), n.max())})"
        )
        fig.suptitle((f"{title}\n" if title else "") + (ramp if ramped else "") + spread, fontsize=9)
    return fig


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True


# -- MoCoSE Figure 4: the distance of (alignment, uniformity) to a point -------------------------------------


POINT = (0.0, -4.0)  # (l_align, l_uniform): the default fixed point
ALIGN_COLUMNS = ("setting", "seed", "traceable_distance", "l_align", "l_uniform", "l1", "l2")


def parse_point(text: str) -> tuple[float, float]:
    """``ALIGN,UNIFORM`` (``0,-4``) as two finite numbers; one line otherwise."""
    try:
        point = tuple(float(p) for p in text.split(","))
    except ValueError:
        point = ()
    if len(point) != 2 or not all(math.isfinite(v) for v in point):
        raise StsbenchError(f"--align-point {text!r}: give l_align,l_uniform as two numbers, e.g. 0,-4")
    return point[0], point[1]


def distance_rows(
    name: str, groups: Sequence[SeedGroup], records: Sequence[AnalysisRecord], point: tuple[float, float]
) -> list[list[str]]:
    """One row per seed of the sweep's groups that has an alignment/uniformity result and a logged distance."""
    rows = []
    for g in groups:
        value = settings(g.runs[0])[name]
        for model, run in zip(g.models, g.runs, strict=True):
            mine = [r for r in records if r.model.fingerprint == model.key]
            distance, _ = logged_distance(run)
            if not mine or distance is None:
                continue
            r = mine[-1].result
            da, du = r.alignment - point[0], r.uniformity - point[1]
            l1, l2 = abs(da) + abs(du), math.hypot(da, du)
            seed = str(run.config.get("seed", ""))
            rows.append(
                [show_value(value), seed, *(repr(v) for v in (distance, r.alignment, r.uniformity, l1, l2))]
            )
    return rows


def draw_distance(data: Path, point: tuple[float, float], title: str = "") -> Any:
    """x: the traceable distance; y: the L1 and L2 distance to ``point``, the mean over seeds and its band."""
    frame = pd.read_csv(data)
    long = frame.melt(id_vars=["traceable_distance", "seed"], value_vars=["l1", "l2"], var_name="norm")
    long["norm"] = long["norm"].map({"l1": "L1 distance", "l2": "L2 distance"})
    sns = seaborn_module()
    with figure_axes(figsize=(5.4, 3.6)) as (fig, ax):
        sns.lineplot(
            data=long, x="traceable_distance", y="value", hue="norm", estimator="mean", errorbar=seed_interval,
            marker="o", palette="colorblind", ax=ax,
        )  # fmt: skip
        at = f"({point[0]:g}, {point[1]:g})"
        ax.set_xlabel(DISTANCE)
        ax.set_ylabel(f"distance of (l_align, l_uniform) to {at}")
        ax.legend(title="", fontsize=7)
        ours = f"the point {at} is ours (--align-point): the paper does not give its own"
        ax.set_title((f"{title}\n" if title else "") + ours, fontsize=7)
    return fig


# -- the component tables ------------------------------------------------------------------------------------


# the component table's columns (ESimCSE arXiv Table 6 and the paper's gains beside)
COMPONENT_COLUMNS = (
    "run", "method", "word repetition", "momentum contrast", "dev at step 0", "best dev",
    "gain over the first",  # named for the row using no component (gain over unsup-SimCSE)
    "published dev", "published gain", "STS test Avg.",
)  # fmt: skip


def _compatible(a: TrainRun, b: TrainRun) -> bool:
    sa, sb = settings(a), settings(b)
    return shared(a) == shared(b) and all(sa[k] == sb[k] for k in sa.keys() & sb.keys())


def component_groups(runs: list[TrainRun]) -> list[list[TrainRun]]:
    """Groups of compatible runs that use at least two different combinations of components.

    A component is what a method's spec names (:meth:`~stsbench.train.config.options.MethodSpec.used`); a run of a
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
    base, base_why, base_cap = decide.finite_seeds(best_devs(_runs(simcse)), dev=True)
    gains = {}
    for r in (r for r in rows if r is not simcse):
        values, why, cap = decide.finite_seeds(best_devs(_runs(r)), dev=True)
        iv = decide.difference(values, base)
        if iv is not None:  # a mix of collapsed and trained seeds on either side: at most inconclusive
            d = decide.two_sided(iv, decide.DELTA, _method(r))
            gains[id(r)] = (
                decide.capped(d, why if cap else f"{_method(simcse)}: {base_why}", decide.CAP_NOT_FINITE)
                if cap or base_cap
                else d
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
    (:func:`stsbench.reports.reproduction.report_cells`), set beside a sweep's settings; ``declared``: the
    recipe's runs (``recipe_runs.json``), whose sweeps and grids are the tables' (none: found from the settings).
    """
    groups = list(groups) if groups is not None else seed_groups(models)
    over_seeds = has_seeds(groups)
    if over_seeds:
        rows: list[Row] = [g for g in groups if g.runs]
    else:
        by_run = {id(g.runs[0]): g for g in groups if g.runs}
        rows = [by_run.get(id(r), r) for r in runs]
    stand_in = {id(row): without_seed(_runs(row)[0]) if over_seeds else _runs(row)[0] for row in rows}
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
