"""Figures that show spread (seaborn): seeds as points with their mean and interval, dev-curve bands, forest plots.

Pure functions: rows of numbers in, ``<stem>.png`` and ``<stem>.svg`` out (written by
``stsbench.analyses.figures.save``: fixed dpi, fixed SVG hash salt, no date or software in the metadata).
Every interval drawn is computed here, never by seaborn's bootstrap (which draws from numpy's global random
state): the mean's t-interval over seeds, as in the tables, so the same results give the same bytes. Styles
are set per figure (``seaborn.axes_style`` as a context), never globally, so other figures keep theirs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from stsbench.analyses import figures as afig
from stsbench.errors import StsbenchError
from stsbench.reports.seeds import LEVEL
from stsbench.stats.seeds import seed_summary

# (label, difference, low, high, significant): one row of a forest plot
Difference = tuple[str, float, float, float, bool]


def seed_interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95% t-interval of the mean over seeds (one seed: the value itself), as seaborn's ``errorbar``."""
    s = seed_summary(list(values), LEVEL)
    return (s.mean, s.mean) if s.low is None else (s.low, s.high)


def seaborn_module():
    """seaborn, imported after matplotlib's set-up (:func:`stsbench.analyses.figures.pyplot`)."""
    afig.pyplot()  # Agg backend and the fixed SVG hash salt
    import seaborn as sns

    return sns


def palette(labels: list[str]) -> dict[str, tuple[float, float, float]]:
    """A colour per label (seaborn's colorblind palette, in the labels' order)."""
    sns = seaborn_module()
    return dict(zip(labels, sns.color_palette("colorblind", len(labels)), strict=False))


def ordered(values: Sequence[str]) -> list[str]:
    """The distinct values, in the order they first appear."""
    return list(dict.fromkeys(values))


def seed_points_figure(points: Sequence[tuple[str, str, float]], stem: Path) -> list[Path]:
    """One panel per task: each seed's figure as a point, the mean (diamond) and its 95% interval over seeds.

    ``points``: (group label, task, value) rows, in the order groups and tasks are to appear.
    """
    import pandas as pd

    sns = seaborn_module()
    plt = afig.pyplot()
    data = pd.DataFrame(list(points), columns=["group", "task", "value"])
    groups, tasks = ordered(data["group"]), ordered(data["task"])
    cols = min(4, len(tasks))
    rows = -(-len(tasks) // cols)
    colours = palette(groups)
    with sns.axes_style("whitegrid"):
        fig, axes = plt.subplots(
            rows,
            cols,
            figsize=(2.4 * cols + 1.2, 0.5 + (0.3 * len(groups) + 0.6) * rows),
            sharey=True,
            squeeze=False,
        )
        for ax, task in zip(axes.flat, tasks, strict=False):
            sub = data[data["task"] == task]
            common = {"data": sub, "x": "value", "y": "group", "order": groups, "ax": ax}
            sns.pointplot(
                **common, estimator="mean", errorbar=seed_interval, color="black", markers="D",
                markersize=4, linestyle="none", linewidth=1.0, capsize=0.3,
            )  # fmt: skip
            sns.stripplot(
                **common, hue="group", hue_order=groups, palette=colours, jitter=False, size=5, alpha=0.7,
                linewidth=0.5, edgecolor="white", legend=False, zorder=3,
            )  # fmt: skip
            ax.set_title(task, fontsize=9)
            ax.set_xlabel("")
            ax.set_ylabel("")
            ax.tick_params(labelsize=7)
        for ax in list(axes.flat)[len(tasks) :]:
            ax.set_visible(False)
        fig.suptitle("Each seed (dots); mean and its 95% t-interval over seeds (black)", fontsize=9)
        fig.tight_layout()
    return afig.save(fig, stem)


def dev_curves_figure(curves: Sequence[tuple[str, int, float]], stem: Path) -> list[Path]:
    """STS-B dev Spearman x100 against the step: the mean over each group's seeds and its 95% t-interval band.

    ``curves``: (group label, step, value) rows, one per evaluation of each seed's run.
    """
    import pandas as pd

    sns = seaborn_module()
    plt = afig.pyplot()
    data = pd.DataFrame(list(curves), columns=["group", "step", "value"])
    groups = ordered(data["group"])
    with sns.axes_style("whitegrid"):
        fig, ax = plt.subplots(figsize=(6.4, 3.8))
        sns.lineplot(
            data=data, x="step", y="value", hue="group", hue_order=groups, palette=palette(groups),
            estimator="mean", errorbar=seed_interval, marker=".", ax=ax,
        )  # fmt: skip
        ax.set_xlabel("training step")
        ax.set_ylabel("STS-B dev Spearman x100")
        ax.set_title(
            "Dev curves: mean over seeds, band: its 95% t-interval (step 0: before training)", fontsize=8
        )
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
        fig.tight_layout()
    return afig.save(fig, stem)


def dev_curves_from_csv(data: Path, stem: Path) -> list[Path]:
    """:func:`dev_curves_figure` of the rows of the CSV beside it (:data:`stsbench.reports.seeds.DEV_COLUMNS`)."""
    import pandas as pd

    frame = pd.read_csv(data, dtype={"group": str, "seed": str}, keep_default_na=False)
    rows = zip(frame["group"], frame["step"].astype(int), frame["dev_spearman_x100"].astype(float), strict=True)
    return dev_curves_figure(list(rows), stem)


def forest_plot(
    differences: Sequence[Difference],
    path: Path,
    xlabel: str = "difference",
    filled: str = "significant after Holm's correction",
) -> list[Path]:
    """A forest plot: one row per (label, difference, low, high, marked), top to bottom, zero marked.

    A marked row is drawn filled, the others hollow; ``filled`` says what the mark means (the title). Writes ``<path>.png`` and ``<path>.svg`` (a
    ``.png``/``.svg`` suffix of ``path`` is replaced) and returns them. ``stsbench compare`` draws its
    intervals with it; the report its differences over seeds.
    """
    rows = list(differences)
    if not rows:
        raise StsbenchError("forest plot: no differences to draw; give at least one (label, diff, low, high)")
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".png", ".svg") else path
    sns = seaborn_module()
    plt = afig.pyplot()
    with sns.axes_style("whitegrid"):
        fig, ax = plt.subplots(figsize=(6.4, 0.8 + 0.28 * len(rows)))
        ys = list(range(len(rows)))[::-1]
        for y, (_, diff, low, high, significant) in zip(ys, rows, strict=True):
            ax.hlines(y, low, high, color="black", linewidth=1.2)
            ax.plot([diff], [y], "o", color="black", markerfacecolor="black" if significant else "white")
        ax.axvline(0, color="grey", linestyle="--", linewidth=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels([r[0] for r in rows], fontsize=7)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlabel(xlabel)
        ax.set_title(f"95% intervals; filled: {filled}", fontsize=8)
        fig.tight_layout()
    return afig.save(fig, stem)
