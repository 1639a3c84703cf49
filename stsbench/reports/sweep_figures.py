"""Figures from sweeps: a figure against the swept setting, every seed a point, the mean and its 95% interval.

The papers draw their sweeps (ESimCSE arXiv Figure 2: batch size; MoCoSE Figures 8, 10, 11: EMA decay,
embedding dimension, initial queue size; Figure 13: queue size x initial size) as a curve of one figure against
the setting. Here every group of seeds of a sweep (or of a grid, one line per value of its second field: the
groups the Ablations tables compare, :func:`stsbench.reports.sweep_tables.seed_sweeps`) gives one point per seed:
its kept checkpoint's STS-B dev Spearman x100 (the training's own best, what a dev sweep reports) and, where
the seeds were evaluated on the seven STS test sets, their Avg. The rows go to a CSV first (:data:`COLUMNS`),
and the figure is drawn from that file (:func:`sweep_figure`), so that it re-renders from the data beside it;
the mean is drawn with its 95% t-interval over seeds (:func:`stsbench.reports.seeds.seed_interval`, the
tables' interval), and the paper's cells for the settings, where the registry has them, in a panel of their own:
another model (BERT-base) and often another figure (MoCoSE Table 3 is an STS test Avg.), so never on our axis.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from stsbench.analyses import figures as afig
from stsbench.progress import seeds_a_setting
from stsbench.reports import run_settings
from stsbench.reports.collect import TaskRecord, TrainRun
from stsbench.reports.figures import write_csv
from stsbench.reports.published_cells import Cells, published_cell
from stsbench.reports.seeds import SeedGroup, seaborn_module, seed_interval
from stsbench.reports.training import kept_dev, show_value

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


def _row(
    name: str, group: SeedGroup, records: list[TaskRecord], series: str, cells: Cells
) -> list[list[str]]:
    value = run_settings.settings(group.runs[0])[name]
    pub = published_cell(group.runs[0], cells)
    out = []
    for model, run in zip(group.models, group.runs, strict=True):
        one = SeedGroup(group.name, group.method, (model,))
        avg = run_settings.sts_averages(one, records)
        dev = kept_dev(run)
        distance, ramped = logged_distance(run)
        out.append(
            [
                show_value(value),
                series,
                str(run.config.get("seed", "")),
                "" if dev is None or not math.isfinite(dev) else repr(dev),
                repr(avg[0]) if avg else "",
                repr(pub[1]) if pub else "",
                pub[0] if pub else "",
                "" if distance is None else repr(distance),
                "yes" if ramped else "",
            ]
        )
    return out


def sweep_rows(
    name: str,
    groups: Sequence[SeedGroup],
    records: list[TaskRecord],
    series: str | None = None,
    cells: Cells | None = None,
) -> list[list[str]]:
    """The CSV rows of a one-field sweep over groups of seeds.

    ``series``: a grid's second field, by group; ``cells``: the runs' published cells
    (:func:`stsbench.reports.published_cells.report_cells`).
    """
    rows = []
    for g in sorted(groups, key=lambda g: run_settings.sort_value(run_settings.settings(g.runs[0])[name])):
        label = show_value(run_settings.settings(g.runs[0])[series]) if series else ""
        rows += _row(name, g, records, label, cells or {})
    return rows


def write_rows(rows: Sequence[Sequence[str]], path: Path) -> Path:
    """The rows under :data:`COLUMNS`, atomically."""
    return write_csv(path, COLUMNS, rows)


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
    plt = afig.pyplot()
    with sns.axes_style("whitegrid"):
        fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.8), squeeze=False)
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
            ax.set_xlabel(DISTANCE if x == "traceable_distance" else run_settings.option_words(setting))
            ax.set_ylabel(label)
        n = frame.groupby(["setting", "series"])["seed"].nunique()
        ramped = x == "traceable_distance" and (frame["distance_ramped"] == "yes").any()
        fig.suptitle(
            (f"{title}\n" if title else "")
            + (
                "the EMA weight ramps: each distance is at the final weight, not one the run kept throughout\n"
                if ramped
                else ""
            )
            + f"each seed (dots); mean and its 95% t-interval over seeds ({seeds_a_setting(n.min(), n.max())})",
            fontsize=9,
        )
        fig.tight_layout()
        return fig


def _is_number(value: str) -> bool:
    try:
        float(value)
    except ValueError:
        return False
    return True
