"""MoCoSE Figure 7 over seeds: each group's singular-value curve, its seeds' spread, the backbone beside.

The spectrum analysis of one checkpoint is drawn by its registry figure (``stsbench.analyses.figures.
spectrum_figure``); a group of seeds has one curve per seed, so the report draws the group as the geometric mean
of its seeds' normalised singular values at each index (the mean on the figure's log scale) with the band from the
lowest to the highest seed, and every checkpoint outside a group (the backbone: BERT-base in MoCoSE's figure) as
its own line. Values below :data:`~stsbench.analyses.geometry.RANK_TOL` of the largest are float32 round-off and
are not written; a group's mean runs over the indices every seed has. The curves go to a CSV beside the figure
first (a row per curve: :data:`FIRST`, then its values) and the figure is drawn from that file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stsbench.analyses.geometry import RANK_TOL
from stsbench.reports.analysis_seeds import SeededResults
from stsbench.reports.figures import write_csv

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


def write_rows(rows: Sequence[Sequence[str]], path: Path) -> Path:
    """The rows under :data:`FIRST` and ``s1``.. ``sN`` (N the longest curve), padded with empty cells, atomically."""
    width = max((len(r) - len(FIRST) for r in rows), default=0)
    columns = [*FIRST, *(f"s{k}" for k in range(1, width + 1))]
    return write_csv(path, columns, [[*r, *[""] * (len(columns) - len(r))] for r in rows])


def read_curves(data: Path) -> Any:
    """The CSV as a long table: group, seed, spectrum, index (from 1), value."""
    import pandas as pd

    wide = pd.read_csv(data, dtype={"group": str, "seed": str}, keep_default_na=False, na_values=[""])
    wide["seed"] = wide["seed"].fillna("")
    long = wide.melt(id_vars=list(FIRST), var_name="index", value_name="value").dropna(subset=["value"])
    long["index"] = long["index"].str[1:].astype(int)
    return long


def draw_spectra(data: Path, title: str = "") -> Any:
    """Two panels (uncentred, centred): a line per group (geometric mean over seeds, min-max band) on a log scale."""
    import numpy as np

    from stsbench.analyses import figures as afig
    from stsbench.reports.spread import ordered, palette

    plt = afig.pyplot()
    frame = read_curves(data)
    groups = ordered(frame["group"])
    colours = palette(groups)
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.6), sharey=True)
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
    fig.suptitle(
        (title + ": " if title else "") + "band: lowest to highest seed; dashed: a checkpoint without seeds",
        fontsize=9,
    )
    fig.tight_layout()
    return fig


def spectra_figure(data: Path, stem: Path, title: str = "") -> list[Path]:
    """Draw :func:`draw_spectra` from the CSV and write ``stem``.png and .svg."""
    from stsbench.analyses import figures as afig

    return afig.save(draw_spectra(data, title), stem)
