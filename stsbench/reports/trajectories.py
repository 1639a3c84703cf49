"""SimCSE Figure 2: each run's (l_uniform, l_align) at every dev evaluation, arrows for the training direction.

The trainer logs l_align and l_uniform of the STS-B dev embeddings each dev evaluation encodes (the numbers
``stsbench align-uniform --split dev`` gives for the checkpoint of that step; :mod:`stsbench.train.evaluate`),
so the trajectories are drawn from the training logs, never from saved checkpoints. A group of seeds is drawn as
the mean point over its seeds at each step every seed evaluated, each seed's own path faint behind it; arrows
follow the steps (at most :data:`ARROWS` a line, evenly spaced, so a long run stays readable) and a square marks
step 0 (the backbone, when the run evaluated before training). The rows go to a CSV beside the figure first
(:data:`COLUMNS`) and the figure is drawn from that file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stsbench.reports.collect import TrainRun
from stsbench.reports.figures import write_csv
from stsbench.reports.seeds import SeedGroup, labelled_seed_runs

COLUMNS = ("group", "seed", "step", "l_uniform", "l_align")
ARROWS = 12  # arrowheads a line at most
MARKED = 60  # a line of more points is drawn without a marker at each


def trajectory_rows(
    groups: Sequence[SeedGroup], runs: Sequence[TrainRun], labels: Mapping[str, str]
) -> list[list[str]]:
    """(group, seed, step, l_uniform, l_align) of every logged evaluation, groups in report order.

    The runs as :func:`~stsbench.reports.seeds.labelled_seed_runs` orders and names them; a run whose log has no
    trajectory (written before they were logged) gives no rows.
    """
    return [
        [label, seed, str(step), repr(uniform), repr(align)]
        for label, seed, run in labelled_seed_runs(groups, runs, labels)
        for step, align, uniform in run.trajectory
        if align is not None and uniform is not None
    ]


def write_rows(rows: Sequence[Sequence[str]], path: Path) -> Path:
    """The rows under :data:`COLUMNS`, atomically."""
    return write_csv(path, COLUMNS, rows)


def mean_path(frame: Any) -> Any:
    """One group's mean (l_uniform, l_align) per step, over the steps every one of its seeds logged."""
    seeds = frame["seed"].nunique()
    by_step = frame.groupby("step").agg(
        l_uniform=("l_uniform", "mean"), l_align=("l_align", "mean"), n=("seed", "nunique")
    )
    return by_step[by_step["n"] == seeds].sort_index()


def _arrows(ax: Any, xs: Sequence[float], ys: Sequence[float], color: Any) -> None:
    segments = len(xs) - 1
    every = max(1, math.ceil(segments / ARROWS))
    for i in range(0, segments, every):
        ax.annotate(
            "",
            xy=(xs[i + 1], ys[i + 1]),
            xytext=(xs[i], ys[i]),
            arrowprops={"arrowstyle": "-|>", "color": color, "lw": 1.2, "shrinkA": 0, "shrinkB": 0},
        )


def draw_trajectories(data: Path, title: str = "") -> Any:
    """The figure of the trajectories in ``data``: x l_uniform, y l_align, a line per group."""
    import pandas as pd

    from stsbench.analyses import figures as afig
    from stsbench.reports.spread import ordered, palette

    plt = afig.pyplot()
    frame = pd.read_csv(data, dtype={"group": str, "seed": str}, keep_default_na=False)
    groups = ordered(frame["group"])
    colours = palette(groups)
    fig, ax = plt.subplots(figsize=(6.0, 4.6))
    for group in groups:
        mine = frame[frame["group"] == group]
        colour = colours[group]
        seeds = ordered(mine["seed"])
        if len(seeds) > 1:
            for seed in seeds:
                one = mine[mine["seed"] == seed].sort_values("step")
                ax.plot(one["l_uniform"], one["l_align"], color=colour, alpha=0.25, linewidth=0.8)
        path = mean_path(mine)
        xs, ys = path["l_uniform"].tolist(), path["l_align"].tolist()
        name = group if len(seeds) < 2 or "(n=" in group else f"{group} (n={len(seeds)})"
        marker = "o" if len(xs) <= MARKED else None  # a whole epoch every 10 steps: a line, not 1,500 dots
        ax.plot(xs, ys, color=colour, marker=marker, markersize=3, linewidth=1.2, label=name)
        _arrows(ax, xs, ys, colour)
        if path.index[0] == 0:
            ax.scatter([xs[0]], [ys[0]], marker="s", s=40, color=colour, zorder=3)
    ax.set_xlabel(r"$\ell_{uniform}$")
    ax.set_ylabel(r"$\ell_{align}$")
    steps = sorted(frame["step"].unique())
    gap = min((b - a for a, b in zip(steps, steps[1:], strict=False)), default=0)
    every = f"a point every {gap} steps" if gap else "one point"
    ax.set_title(
        (title + "\n" if title else "")
        + f"STS-B dev at each dev evaluation ({every}; square: step 0; arrows: training direction;\n"
        "lower is better on both; a group of seeds: its mean path, each seed faint)",
        fontsize=8,
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    fig.tight_layout()
    return fig


def trajectory_figure(data: Path, stem: Path, title: str = "") -> list[Path]:
    """Draw :func:`draw_trajectories` from the CSV and write ``stem``.png and .svg."""
    from stsbench.analyses import figures as afig

    return afig.save(draw_trajectories(data, title), stem)
