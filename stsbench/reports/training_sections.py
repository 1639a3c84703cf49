"""The report's sections of training runs: training curves and trajectories, Ablations and sweep figures.

A sweep is drawn against its setting, and against the traceable distance each setting of a momentum method sets.
"""

from __future__ import annotations

from collections.abc import Sequence

from stsbench.reports import (
    ablations,
    align_distance,
    paper_figures,
    run_settings,
    sweep_figures,
    sweep_tables,
    training,
)
from stsbench.reports.collect import Collection
from stsbench.reports.figures import training_curves_figure, write_csv
from stsbench.reports.layout import ABSENT, Figures, Section, missing, under
from stsbench.reports.models import Model
from stsbench.reports.published_cells import Cells
from stsbench.reports.seeds import DEV_COLUMNS, SeedGroup, dev_curves_from_csv, dev_points, has_seeds
from stsbench.results.runs import read_recipe_runs


def training_sections(
    coll: Collection,
    models: list[Model],
    groups: list[SeedGroup],
    results: Sequence[str],
    figs: Figures,
    cells: Cells,
    point: tuple[float, float] = align_distance.POINT,
) -> list[Section]:
    """The training curves and the Ablations (``cells``: the runs' published cells, beside a sweep's settings)."""
    if not coll.runs:
        return [
            Section("training", "Training curves", [missing("training", results)]),
            Section("ablations", "Ablations", [missing("ablations", results)]),
        ]
    curves = Section("training", "Training curves", tables=[training.training_table(coll.runs, models)])
    if has_seeds(groups):
        labels = {r.path: label for label, r in training.labelled_runs(coll.runs, models).items()}
        data = write_csv(
            figs.folder / "dev_curves_seeds.csv", DEV_COLUMNS, dev_points(groups, coll.runs, labels)
        )
        figs.written.append(data)
        figure = dev_curves_from_csv(data, figs.folder / "dev_curves_seeds")
        caption = f"STS-B dev Spearman during training, mean over seeds (data: `{data.name}`)"
        curves.figures.append(figs.add(caption, figure, "dev-curves"))
        curves.paragraphs.append(
            "A group of seeds is drawn as the mean of its seeds' STS-B dev Spearman at each evaluation step, "
            "the band the 95% t-interval of that mean (n seeds, as the tables' intervals); a run without "
            "seeds as its own line."
        )
    else:
        labels = training.labelled_runs(coll.runs, models)
        figure = training_curves_figure(labels, figs.folder / "training_curves")
        curves.figures.append(figs.add("STS-B dev Spearman during training", figure, "dev-curves"))
    _trajectories(coll, models, groups, curves, figs)
    declared = read_recipe_runs(coll.folders)  # the recipe's sweeps and grids (none: found from the settings)
    found = ablations.ablation_tables(coll.runs, models, coll.tasks, groups, cells, declared)
    abl = Section("ablations", "Ablations", tables=found)
    if not found and declared:  # the recipe says what its sweeps are: none, and no component pair
        abl.paragraphs.append(
            f"{ABSENT}no sweep or grid declared by the recipe (`recipe_runs.json` under {under(results, 'or')}: a "
            "run's `sweep:` or `grid:`), no pair of its runs that differ in ESimCSE's components and no run held "
            "against a published cell."
        )
    elif not found:
        abl.paragraphs.append(missing("ablations", results))
    if has_seeds(groups):
        _sweep_figures(coll, groups, abl, figs, cells, declared, point)
    return [curves, abl]


def _trajectories(
    coll: Collection, models: list[Model], groups: list[SeedGroup], section: Section, figs: Figures
) -> None:
    """SimCSE Figure 2: (l_uniform, l_align) at each dev evaluation the runs logged, from a CSV beside it."""
    labels = {r.path: label for label, r in training.labelled_runs(coll.runs, models).items()}
    rows = paper_figures.trajectory_rows(groups, coll.runs, labels)
    if not rows:
        return
    data = paper_figures.write_trajectory_rows(rows, figs.folder / "align_uniform_trajectories.csv")
    figs.written.append(data)
    paths = paper_figures.trajectory_figure(data, figs.folder / "align_uniform_trajectories")
    caption = (
        "Alignment and uniformity of the STS-B dev embeddings at each dev evaluation, as SimCSE Figure 2 "
        f"(logged by the trainer; data: `{data.name}`)"
    )
    section.figures.append(figs.add(caption, paths, "trajectory"))
    section.paragraphs.append(
        "The trajectories are the trainer's own: at each dev evaluation it measures l_align (pairs with gold > 4) "
        "and l_uniform (the unique sentences) on the STS-B dev embeddings it has just encoded, the numbers "
        "`stsbench align-uniform --split dev` gives for the checkpoint of that step. A group of seeds is drawn "
        "as its mean point at each step, each seed's path faint behind it."
    )


def _sweep_figures(
    coll: Collection,
    groups: list[SeedGroup],
    section: Section,
    figs: Figures,
    cells: Cells,
    declared: sweep_tables.Declared,
    point: tuple[float, float] = align_distance.POINT,
) -> None:
    """Each sweep and grid over seeds drawn against its setting, from the CSV written beside the figure.

    ``declared``: the recipe's runs, whose sweeps and grids these are (none: those the settings show).
    """
    grids, sweeps = sweep_tables.seed_sweeps(groups, declared)
    drawn = [(f"sweep_{name}_{k}", name, "", gs) for k, (name, gs) in sweeps]
    drawn += [(f"grid_{a}_{b}_{k}", a, b, gs) for k, (a, b, gs) in grids]
    for stem, name, series, gs in drawn:
        axes = (name, series) if series else (name,)
        rows = sweep_figures.sweep_rows(name, gs, coll.tasks, series or None, cells)
        data = sweep_figures.write_rows(rows, figs.folder / f"{stem}.csv")
        figs.written.append(data)
        method = gs[0].method or gs[0].name
        words = run_settings.option_words(name)
        title = f"{method}: against {words}" + (
            f", a line per {run_settings.option_words(series)}" if series else ""
        )
        if sweep_figures.varies_in_distance(rows):  # MoCoSE Figures 2, 3, 12: against the distance it sets
            what = f"{method}: against the maximum traceable distance each {words} sets"
            paths = sweep_figures.sweep_figure(
                data, figs.folder / f"{stem}_distance", name, series, what, x="traceable_distance"
            )
            caption = f"{what}, each seed, the mean and its 95% interval (data: `{data.name}`)"
            section.figures.append(figs.add(caption, paths, "distance", settings=axes))
            _align_distance(coll, name, gs, stem, section, figs, point)
        paths = sweep_figures.sweep_figure(data, figs.folder / stem, name, series, title)
        section.figures.append(
            figs.add(
                f"{title}, each seed, the mean and its 95% interval (data: `{data.name}`)",
                paths,
                "grid" if series else "sweep",
                settings=axes,
            )
        )


def _align_distance(
    coll: Collection,
    name: str,
    groups: list[SeedGroup],
    stem: str,
    section: Section,
    figs: Figures,
    point: tuple[float, float],
) -> None:
    """MoCoSE Figure 4: the sweep's (l_align, l_uniform) distance to ``point`` against its traceable distance."""
    records = coll.analyses_of("align_uniform")
    variants = sorted({r.variant for r in records})
    if not variants:
        return
    ours = [r for r in records if r.variant == variants[0]]
    rows = align_distance.distance_rows(name, groups, ours, point)
    if not rows:
        return
    data = align_distance.write_rows(rows, figs.folder / f"{stem}_align_distance.csv")
    figs.written.append(data)
    title = (
        f"{groups[0].method or groups[0].name}: {variants[0]} against the traceable distance each {name} sets"
    )
    paths = align_distance.distance_figure(data, figs.folder / f"{stem}_align_distance", point, title)
    caption = f"{title}: distance to ({point[0]:g}, {point[1]:g}), as MoCoSE Figure 4 (data: `{data.name}`)"
    section.figures.append(figs.add(caption, paths, "align-distance", "align_uniform", (name,)))
