"""Figures of the built-in analyses, one or several models each (matplotlib Agg; PNG and SVG).

Pure functions of the typed results: ``{label: result}`` in, files out. SVG ids are salted with a fixed
string and dates are left out, so the same numbers give the same files.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import numpy as np

from stsbench.files import atomic_write_bytes


def pyplot():
    """Matplotlib's pyplot on the Agg backend, with the fixed SVG hash salt that makes figures the same bytes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "stsbench"
    return plt


_STAMP: ContextVar[str | None] = ContextVar("stsbench_figure_stamp", default=None)


@contextmanager
def stamped(text: str | None) -> Iterator[None]:
    """Every figure :func:`save` writes in this block carries ``text`` (a mini edition's banner).

    It is printed under the figure and set in the files' metadata (PNG ``Description``, SVG ``dc:description``),
    so that the image keeps it on its own.
    """
    token = _STAMP.set(text or None)
    try:
        yield
    finally:
        _STAMP.reset(token)


def laid_out(fig, stem: Path) -> list[Path]:
    """Lay ``fig`` out (matplotlib's ``tight_layout``), then :func:`save` it."""
    fig.tight_layout()
    return save(fig, stem)


def save(fig, stem: Path) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg`` (atomic) and close the figure; stamped within :func:`stamped`."""
    stamp = _STAMP.get()
    if stamp:
        # wrapped at about the characters of a 7-point line across the figure
        lines = "\n".join(textwrap.wrap(stamp, max(60, int(fig.get_figwidth() * 14))))
        fig.text(0.5, 0, lines, ha="center", va="top", fontsize=7, color="#b00020")
    described = {"Description": stamp} if stamp else {}
    metadata = {"png": {"Software": None, **described}, "svg": {"Date": None, "Creator": None, **described}}
    out = []
    for fmt, meta in metadata.items():
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=150, bbox_inches="tight", metadata=meta)
        out.append(atomic_write_bytes(stem.with_name(f"{stem.name}.{fmt}"), buf.getvalue()))
    pyplot().close(fig)
    return out


def bars(ax, labels: list[str], groups: list[str], values: list[list[float | None]], counts: list[list[int]]):
    """Draw grouped bars: one group per ``groups`` entry, one bar per model; undefined values marked n/a."""
    width = 0.8 / max(len(labels), 1)
    x = np.arange(len(groups))
    same_counts = all(c == counts[0] for c in counts)
    for m, (label, vals) in enumerate(zip(labels, values, strict=True)):
        pos = x - 0.4 + width * (m + 0.5)
        ax.bar(pos, [v if v is not None else 0.0 for v in vals], width, label=label)
        for k, v in enumerate(vals):
            if v is None:
                ax.text(pos[k], 0, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
            elif not same_counts:
                ax.text(pos[k], v, f"{counts[m][k]}", ha="center", va="bottom", fontsize=5)
    ticks = [f"{g}\nn={n}" for g, n in zip(groups, counts[0], strict=True)] if same_counts else groups
    ax.set_xticks(x, ticks, fontsize=7)


def x100(v: float | None) -> float | None:
    return None if v is None else v * 100
