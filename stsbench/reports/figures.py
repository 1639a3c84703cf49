"""The report's figures: the analyses' own figures (each registry entry's ``figure``) and training curves.

Every figure is written as ``<stem>.png`` and ``<stem>.svg`` by ``stsbench.analyses.figures.save``: fixed
dpi, ``svg.hashsalt`` fixed, no date or software in the metadata, so the same results give the same bytes.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path

from stsbench.analyses import figures as afig
from stsbench.files import atomic_write_text
from stsbench.reports.collect import TrainRun


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    """A figure's data beside it: ``columns`` then ``rows``, one line each, written atomically."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return atomic_write_text(path, buffer.getvalue())


def training_curves_figure(curves: dict[str, TrainRun], stem: Path) -> list[Path]:
    """STS-B dev Spearman x100 against the training step, one line per run; the kept checkpoint circled."""
    plt = afig.pyplot()  # Agg backend and the fixed SVG hash salt
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for label, run in curves.items():
        points = [(s, v * 100) for s, v in run.curve if v is not None]
        if not points:
            continue
        steps, values = zip(*points, strict=True)
        (line,) = ax.plot(steps, values, marker=".", label=label)
        best = [(s, v * 100) for s, v in run.curve if s == run.best_step and v is not None]
        if best:
            ax.scatter(
                [best[0][0]],
                [best[0][1]],
                s=80,
                facecolors="none",
                edgecolors=line.get_color(),
                linewidths=1.2,
            )
    ax.set_xlabel("training step")
    ax.set_ylabel("STS-B dev Spearman x100")
    ax.set_title("Dev curves (circled: the kept checkpoint; step 0: before training)", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    fig.tight_layout()
    return afig.save(fig, stem)
