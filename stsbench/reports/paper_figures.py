"""The papers' figures a report regenerates, each under its number and caption, and their own drawings.

``report --figures KEY`` (a recipe's ``figures:``, :mod:`stsbench.published.figures`) names the papers'
figures the results regenerate. Each gets a section (:func:`figure_sections`): the paper's number and caption
(or, for a figure the text only cites, what the text says of it), what it shows, the claim the paper makes
from it and any number its text gives, the verdict of the report's claims read from it (a claim's
``paper_figure``), and the figures of this report that draw it, found by the renderer the registry names and
the tags each figure was drawn with (a sweep's figure against its setting, the spectra, the training
curves...). A figure none of whose drawings is in the report says so: its results are not under the report's
folders.

The drawings of the papers' figures that are neither a sweep nor an analysis' own figure are here, each
written to a CSV beside the figure first and drawn from that file:

- SimCSE Figure 2 (:func:`trajectory_rows`, :func:`draw_trajectories`): each run's (l_uniform, l_align) at
  every dev evaluation, arrows for the training direction. The trainer logs l_align and l_uniform of the STS-B
  dev embeddings each dev evaluation encodes (the numbers ``stsbench align-uniform --split dev`` gives for the
  checkpoint of that step; :mod:`stsbench.train.evaluate`), so the trajectories are drawn from the training
  logs, never from saved checkpoints. A group of seeds is drawn as the mean point over its seeds at each step
  every seed evaluated, each seed's own path faint behind it; arrows follow the steps (at most :data:`ARROWS`
  a line, evenly spaced, so a long run stays readable) and a square marks step 0 (the backbone, when the run
  evaluated before training).
- SimCSE Figure 3's map (:func:`map_rows`, :func:`draw_map`): every checkpoint at its (l_uniform, l_align),
  coloured by its STS Avg. SimCSE draws the models it compares on the alignment-uniformity plane, each
  coloured by its average STS result, to argue that the better models are those that improve uniformity while
  keeping alignment. The report draws the same map for the checkpoints under its results that have both an
  alignment/uniformity result and the seven STS test figures (every seed of a group a point, its group by
  marker): only models stsbench can produce, so the figure says that the paper's others (BERT-flow, whitening,
  SBERT, Next3Sent...) are not on it.
- MoCoSE Figure 7 over seeds (:func:`spectrum_rows`, :func:`draw_spectra`): each group's singular-value curve,
  its seeds' spread, the backbone beside. The spectrum analysis of one checkpoint is drawn by its registry
  figure (``stsbench.analyses.geometry.spectrum_figure``); a group of seeds has one curve per seed, so the
  report draws the group as the geometric mean of its seeds' normalised singular values at each index (the
  mean on the figure's log scale) with the band from the lowest to the highest seed, and every checkpoint
  outside a group (the backbone: BERT-base in MoCoSE's figure) as its own line. Values below
  :data:`~stsbench.analyses.geometry.RANK_TOL` of the largest are float32 round-off and are not written; a
  group's mean runs over the indices every seed has (a row per curve: :data:`FIRST`, then its values).

MoCoSE Figure 4 (the distance to a point against the traceable distance) is drawn with the sweeps it is read
from (:mod:`stsbench.reports.ablations`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from stsbench.analyses.geometry import RANK_TOL
from stsbench.published.figures import PAPER_NAMES, FigureEntry, get_figure
from stsbench.reports.collect import AnalysisRecord, FigureOut, Section, TaskRecord, TrainRun, write_csv
from stsbench.reports.seeds import SeededResults, SeedGroup, figure_axes, labelled_seed_runs, ordered, palette
from stsbench.reports.training import sts_averages


def matches(entry: FigureEntry, figure: FigureOut) -> bool:
    """Whether the report's ``figure`` draws ``entry``: by the tags it was drawn with, never by its file name."""
    r, setting = entry.renderer, entry.setting or ""
    if r in ("sweep", "grid"):
        return figure.kind == r and setting in figure.settings
    if r in ("distance", "align-distance", "dev-curves", "align-map", "trajectory"):
        return figure.kind == r
    if r == "spectrum":  # a checkpoint's spectra and the groups' (not the seeds' headline points)
        return figure.analysis == "spectrum" and figure.kind in ("analysis", "analysis-groups")
    if r == "cosine-density":  # the checkpoints' densities and the seeds' headline figures
        return figure.analysis == "cosine_density" and figure.kind in ("analysis", "analysis-seeds")
    return False


def figure_sections(
    keys: Sequence[str], sections: Sequence[Section], verdicts: Sequence[tuple[str | None, str, str]]
) -> list[Section]:
    """A section per key: the paper's number, caption, claim and verdict, and the report's figures drawing it.

    ``sections``: the report's, whose figures are searched; ``verdicts``: (paper figure key, claim text,
    verdict) of the report's claims.
    """
    drawn = [f for section in sections for f in section.figures]
    out = []
    for key in keys:
        entry = get_figure(key)
        lines = [
            f"*{entry.caption}*" if entry.caption else "*(The text cites this figure without printing it.)*"
        ]
        lines.append(f"Shows: {entry.shows}.")
        if entry.claim:
            lines.append(f'The paper\'s claim: "{entry.claim}"')
        if entry.numbers:
            lines.append(
                "Numbers its text gives: " + "; ".join(f"{k} {v}" for k, v in entry.numbers.items()) + "."
            )
        for figure_key, text, verdict in verdicts:
            if figure_key == key:
                lines.append(f"Judged here: {text} — **{verdict}** (Claims).")
        mine = [f for f in drawn if matches(entry, f)]
        if not mine:
            lines.append("Not drawn in this report: none of its results are under the report's folders.")
        title = f"{PAPER_NAMES.get(entry.paper, entry.paper)} {entry.figure}"
        out.append(Section(f"paper-{entry.key.replace('/', '-')}", title, lines, figures=mine))
    return out


# --- SimCSE Figure 2: the alignment-uniformity trajectories ------------------------------------------------

TRAJECTORY_COLUMNS = ("group", "seed", "step", "l_uniform", "l_align")
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
    arrow = {"arrowstyle": "-|>", "color": color, "lw": 1.2, "shrinkA": 0, "shrinkB": 0}
    for i in range(0, segments, every):
        ax.annotate("", xy=(xs[i + 1], ys[i + 1]), xytext=(xs[i], ys[i]), arrowprops=arrow)


def draw_trajectories(data: Path, title: str = "") -> Any:
    """The figure of the trajectories in ``data``: x l_uniform, y l_align, a line per group."""
    frame = pd.read_csv(data, dtype={"group": str, "seed": str}, keep_default_na=False)
    groups = ordered(frame["group"])
    colours = palette(groups)
    with figure_axes(figsize=(6.0, 4.6), style=None) as (fig, ax):
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
            # a whole epoch every 10 steps: a line, not 1,500 dots
            marker = "o" if len(xs) <= MARKED else None
            ax.plot(xs, ys, color=colour, marker=marker, markersize=3, linewidth=1.2, label=name)
            _arrows(ax, xs, ys, colour)
            if path.index[0] == 0:
                ax.scatter([xs[0]], [ys[0]], marker="s", s=40, color=colour, zorder=3)
        ax.set_xlabel(r"$\ell_{uniform}$")
        ax.set_ylabel(r"$\ell_{align}$")
        steps = sorted(frame["step"].unique())
        gap = min((b - a for a, b in zip(steps, steps[1:], strict=False)), default=0)
        every = f"a point every {gap} steps" if gap else "one point"
        what = (
            f"STS-B dev at each dev evaluation ({every}; square: step 0; arrows: training direction;\n"
            "lower is better on both; a group of seeds: its mean path, each seed faint)"
        )
        ax.set_title((title + "\n" if title else "") + what, fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    return fig


# --- SimCSE Figure 3: the alignment-uniformity map ---------------------------------------------------------

MAP_COLUMNS = ("group", "checkpoint", "seed", "l_uniform", "l_align", "sts_avg")
NOT_SHOWN = "the paper's other models (BERT-flow, BERT-whitening, SBERT, Next3Sent...) are not produced here"


def map_rows(
    records: Sequence[AnalysisRecord], tasks: list[TaskRecord], groups: Sequence[SeedGroup]
) -> list[list[str]]:
    """One row per checkpoint with an alignment/uniformity result (of one variant) and an STS test Avg."""
    rows = []
    for g in groups:
        for model, seed in zip(g.models, g.seeds, strict=True):
            mine = [r for r in records if r.model.fingerprint == model.key]
            avg = sts_averages(SeedGroup(g.name, g.method, (model,)), tasks)
            if not mine or not avg:
                continue
            r = mine[-1].result
            label = g.label if g.n > 1 else model.label
            seed_text = "" if seed is None else str(seed)
            rows.append([label, model.label, seed_text, repr(r.uniformity), repr(r.alignment), repr(avg[0])])
    return rows


def draw_map(data: Path, title: str = "") -> Any:
    """The map of the checkpoints in ``data``: x l_uniform, y l_align, colour the STS Avg., a marker per group."""
    frame = pd.read_csv(data, dtype={"group": str, "checkpoint": str, "seed": str}, keep_default_na=False)
    with figure_axes(figsize=(5.6, 4.4), style=None) as (fig, ax):
        low, high = frame["sts_avg"].min(), frame["sts_avg"].max()
        markers = "osD^vP*Xhp<>"
        scatter = None
        for k, (group, sub) in enumerate(frame.groupby("group", sort=False)):
            scatter = ax.scatter(
                sub["l_uniform"], sub["l_align"], c=sub["sts_avg"], cmap="viridis", vmin=low, vmax=high,
                marker=markers[k % len(markers)], s=36, edgecolors="black", linewidths=0.4, label=group,
            )  # fmt: skip
        fig.colorbar(scatter, ax=ax, label="STS Avg. (7 test sets)")
        ax.set_xlabel(r"$\ell_{uniform}$")
        ax.set_ylabel(r"$\ell_{align}$")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
        ax.set_title((f"{title}\n" if title else "") + NOT_SHOWN, fontsize=7)
        ax.margins(0.15)
    return fig


# --- MoCoSE Figure 7 over seeds: the groups' spectra -------------------------------------------------------

FIRST = ("group", "seed", "spectrum")  # then one column per index: s1, s2, ... (empty past a curve's rank)
WHICH = ("uncentred", "centred")


def spectrum_rows(found: Sequence[SeededResults], singles: Mapping[str, Any]) -> list[list[str]]:
    """A row per curve: the groups' seeds (``found``), then ``singles`` (label -> result); values above round-off.

    Four significant digits: the figure is on a log scale over decades (the analyses' JSON keep every digit).
    """
    curves = [(f.label, "" if seed is None else str(seed), r) for f in found for seed, _, r in f.seeds]
    curves += [(label, "", r) for label, r in singles.items()]
    rows = []
    for label, seed, result in curves:
        for which in WHICH:
            s = getattr(result, which)
            rows.append([label, seed, which, *(f"{v:.4g}" for v in s.normalized[: s.numerical_rank])])
    return rows


def write_spectrum_rows(rows: Sequence[Sequence[str]], path: Path) -> Path:
    """The rows under :data:`FIRST` and ``s1``.. ``sN`` (N the longest curve), padded with empty cells, atomically."""
    width = max((len(r) - len(FIRST) for r in rows), default=0)
    columns = [*FIRST, *(f"s{k}" for k in range(1, width + 1))]
    return write_csv(path, columns, [[*r, *[""] * (len(columns) - len(r))] for r in rows])


def read_curves(data: Path) -> Any:
    """The CSV as a long table: group, seed, spectrum, index (from 1), value."""
    wide = pd.read_csv(data, dtype={"group": str, "seed": str}, keep_default_na=False, na_values=[""])
    wide["seed"] = wide["seed"].fillna("")
    long = wide.melt(id_vars=list(FIRST), var_name="index", value_name="value").dropna(subset=["value"])
    long["index"] = long["index"].str[1:].astype(int)
    return long


def draw_spectra(data: Path, title: str = "") -> Any:
    """Two panels (uncentred, centred): a line per group (geometric mean over seeds, min-max band) on a log scale."""
    frame = read_curves(data)
    groups = ordered(frame["group"])
    colours = palette(groups)
    with figure_axes(1, 2, figsize=(8.5, 3.6), sharey=True, style=None) as (fig, axes):
        for ax, which in zip(axes, WHICH, strict=True):
            for group in groups:
                mine = frame[(frame["group"] == group) & (frame["spectrum"] == which)]
                table = mine.pivot(index="index", columns="seed", values="value").dropna().sort_index()
                if table.empty:
                    continue
                seeds = table.shape[1]
                mean = np.exp(np.log(table).mean(axis=1))
                style = "-" if seeds > 1 else "--"
                name = f"{group}: geometric mean of {seeds} seeds" if seeds > 1 else group
                ax.plot(table.index, mean, style, color=colours[group], linewidth=1.2, label=name)
                if seeds > 1:
                    ax.fill_between(
                        table.index, table.min(axis=1), table.max(axis=1), color=colours[group], alpha=0.2
                    )
            ax.set_yscale("log")
            ax.set_xlabel(f"index (below {RANK_TOL:g} x largest: round-off, not drawn)", fontsize=8)
            ax.set_title(f"{which} embeddings", fontsize=9)
            ax.legend(fontsize=6)
        axes[0].set_ylabel("singular value / largest")
        band = "band: lowest to highest seed; dashed: a checkpoint without seeds"
        fig.suptitle((title + ": " if title else "") + band, fontsize=9)
    return fig
