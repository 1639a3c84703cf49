"""SimCSE Figure 3's map: every checkpoint at its (l_uniform, l_align), coloured by its STS Avg.

SimCSE draws the models it compares on the alignment-uniformity plane, each coloured by its average STS result,
to argue that the better models are those that improve uniformity while keeping alignment. The report draws the
same map for the checkpoints under its results that have both an alignment/uniformity result and the seven STS
test figures (every seed of a group a point, its group by marker): only models stsbench can produce, so the
figure says that the paper's others (BERT-flow, whitening, SBERT, Next3Sent...) are not on it. The rows go to a
CSV beside the figure first (:data:`COLUMNS`) and the figure is drawn from that file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stsbench.reports.collect import AnalysisRecord, TaskRecord
from stsbench.reports.figures import write_csv
from stsbench.reports.run_settings import sts_averages
from stsbench.reports.seeds import SeedGroup

COLUMNS = ("group", "checkpoint", "seed", "l_uniform", "l_align", "sts_avg")
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


def write_rows(rows: Sequence[Sequence[str]], path: Path) -> Path:
    """The rows under :data:`COLUMNS`, atomically."""
    return write_csv(path, COLUMNS, rows)


def draw_map(data: Path, title: str = "") -> Any:
    """The map of the checkpoints in ``data``: x l_uniform, y l_align, colour the STS Avg., a marker per group."""
    import pandas as pd

    from stsbench.analyses import figures as afig

    plt = afig.pyplot()
    frame = pd.read_csv(data, dtype={"group": str, "checkpoint": str, "seed": str}, keep_default_na=False)
    fig, ax = plt.subplots(figsize=(5.6, 4.4))
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
    fig.tight_layout()
    return fig


def map_figure(data: Path, stem: Path, title: str = "") -> list[Path]:
    """Draw ``data`` to ``stem``.png/.svg (:func:`draw_map`)."""
    from stsbench.analyses import figures as afig

    return afig.save(draw_map(data, title), stem)
