"""MoCoSE Figure 4: the L1 and L2 distance of (alignment, uniformity) to a fixed point, against the traceable distance.

MoCoSE argues that a proper maximum traceable distance lets alignment and uniformity reach their best combination,
and draws, along the distance, how far each model's (l_align, l_uniform) lies from a fixed point. The paper does not
say which point: the default here is (0, -4), perfect alignment and the uniformity of points spread evenly over the
sphere (l_uniform with t = 2 tends to -4 as the dimension grows), an option of ``stsbench report``
(``--align-point``) and written on the figure. Every seed of a sweep whose runs log different traceable distances
and that has alignment/uniformity results gives a row (:data:`COLUMNS`), written to a CSV beside the figure, which
is drawn from that file: the mean over seeds of each distance with its 95% t-interval band.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from stsbench.analyses import figures as afig
from stsbench.errors import StsbenchError
from stsbench.reports import run_settings
from stsbench.reports.collect import AnalysisRecord
from stsbench.reports.figures import write_csv
from stsbench.reports.seeds import SeedGroup, seaborn_module, seed_interval
from stsbench.reports.sweep_figures import DISTANCE, logged_distance
from stsbench.reports.training import show_value

POINT = (0.0, -4.0)  # (l_align, l_uniform): the default fixed point
COLUMNS = ("setting", "seed", "traceable_distance", "l_align", "l_uniform", "l1", "l2")


def parse_point(text: str) -> tuple[float, float]:
    """``ALIGN,UNIFORM`` (``0,-4``) as two finite numbers; one line otherwise."""
    parts = text.split(",")
    try:
        point = tuple(float(p) for p in parts)
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
        value = run_settings.settings(g.runs[0])[name]
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


def write_rows(rows: Sequence[Sequence[str]], path: Path) -> Path:
    """The rows under :data:`COLUMNS`, atomically."""
    return write_csv(path, COLUMNS, rows)


def draw_distance(data: Path, point: tuple[float, float], title: str = "") -> Any:
    """x: the traceable distance; y: the L1 and L2 distance to ``point``, the mean over seeds and its band."""
    frame = pd.read_csv(data)
    long = frame.melt(id_vars=["traceable_distance", "seed"], value_vars=["l1", "l2"], var_name="norm")
    long["norm"] = long["norm"].map({"l1": "L1 distance", "l2": "L2 distance"})
    sns = seaborn_module()
    plt = afig.pyplot()
    with sns.axes_style("whitegrid"):
        fig, ax = plt.subplots(figsize=(5.4, 3.6))
        sns.lineplot(
            data=long, x="traceable_distance", y="value", hue="norm", estimator="mean", errorbar=seed_interval,
            marker="o", palette="colorblind", ax=ax,
        )  # fmt: skip
        ax.set_xlabel(DISTANCE)
        ax.set_ylabel(f"distance of (l_align, l_uniform) to ({point[0]:g}, {point[1]:g})")
        ax.legend(title="", fontsize=7)
        ax.set_title(
            (f"{title}\n" if title else "")
            + f"the point ({point[0]:g}, {point[1]:g}) is ours (--align-point): the paper does not give its own",
            fontsize=7,
        )
        fig.tight_layout()
    return fig


def distance_figure(data: Path, stem: Path, point: tuple[float, float], title: str = "") -> list[Path]:
    """Draw ``data`` to ``stem``.png/.svg (:func:`draw_distance`)."""
    return afig.save(draw_distance(data, point, title), stem)
