"""Figures of the built-in analyses, one or several models each (matplotlib Agg; PNG and SVG).

Pure functions of the typed results: ``{label: result}`` in, files out. SVG ids are salted with a fixed
string and dates are left out, so the same numbers give the same files.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

import numpy as np

from stsbench.analyses.common import short_name
from stsbench.analyses.density import CosineDensityResult
from stsbench.analyses.geometry import RANK_TOL, AlignUniformResult, SpectrumResult
from stsbench.analyses.length_bias import LengthBiasResult
from stsbench.analyses.repetition import RepetitionResult


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


def save(fig, stem: Path) -> list[Path]:
    """Write ``stem.png`` and ``stem.svg`` (atomic) and close the figure; stamped within :func:`stamped`."""
    import io
    import textwrap

    from stsbench.files import atomic_write_bytes

    stamp = _STAMP.get()
    if stamp:
        width = max(
            60, int(fig.get_figwidth() * 14)
        )  # about the characters of a 7-point line across the figure
        lines = "\n".join(textwrap.wrap(stamp, width))
        fig.text(0.5, 0, lines, ha="center", va="top", fontsize=7, color="#b00020")
    described = {"Description": stamp} if stamp else {}
    formats = (
        ("png", {"Software": None, **described}),
        ("svg", {"Date": None, "Creator": None, **described}),
    )
    out = []
    for fmt, meta in formats:
        buf = io.BytesIO()
        fig.savefig(buf, format=fmt, dpi=150, bbox_inches="tight", metadata=meta)
        out.append(atomic_write_bytes(stem.with_name(f"{stem.name}.{fmt}"), buf.getvalue()))
    pyplot().close(fig)
    return out


def _bars(
    ax, labels: list[str], groups: list[str], values: list[list[float | None]], counts: list[list[int]]
):
    """Draw grouped bars: one group per ``groups`` entry, one bar per model; undefined values marked n/a."""
    width = 0.8 / max(len(labels), 1)
    x = np.arange(len(groups))
    same_counts = all(c == counts[0] for c in counts)
    for m, (label, vals) in enumerate(zip(labels, values, strict=True)):
        pos = x - 0.4 + width * (m + 0.5)
        heights = [v if v is not None else 0.0 for v in vals]
        ax.bar(pos, heights, width, label=label)
        for k, v in enumerate(vals):
            if v is None:
                ax.text(pos[k], 0, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
            elif not same_counts:
                ax.text(pos[k], v, f"{counts[m][k]}", ha="center", va="bottom", fontsize=5)
    ticks = [f"{g}\nn={n}" for g, n in zip(groups, counts[0], strict=True)] if same_counts else groups
    ax.set_xticks(x, ticks, fontsize=7)


def _x100(v: float | None) -> float | None:
    return None if v is None else 100.0 * v


def length_bias_figure(results: dict[str, LengthBiasResult], stem: Path) -> list[Path]:
    """One panel per dataset (Spearman x100 by length-difference bucket) and one of Table 7's averages."""
    plt = pyplot()
    labels = list(results)
    first = next(iter(results.values()))
    n = len(first.datasets) + 1
    cols = min(4, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.9 * rows), squeeze=False)
    flat = axes.ravel()
    for d, ax in enumerate(flat[: len(first.datasets)]):
        per_model = [r.datasets[d] for r in results.values()]
        _bars(
            ax,
            labels,
            first.buckets,
            [[_x100(g.spearman) for g in ds.buckets] for ds in per_model],
            [[g.n_pairs for g in ds.buckets] for ds in per_model],
        )
        ax.set_title(short_name(first.datasets[d].task), fontsize=9)
        ax.set_ylabel("Spearman x100", fontsize=7)
    ax = flat[len(first.datasets)]
    groups = [g.label for g in first.average]
    _bars(
        ax,
        labels,
        groups,
        [[_x100(g.mean_abs_diff) for g in r.average] for r in results.values()],
        [[g.n_datasets_mean_abs_diff for g in r.average] for r in results.values()],
    )
    ax.set_xticks(range(len(groups)), groups, fontsize=7)
    ax.set_title("Avg. |cos - normalised gold| x100", fontsize=9)
    for extra in flat[n:]:
        extra.axis("off")
    flat[0].legend(fontsize=6)
    fig.suptitle(
        f"Length bias: |length difference| in {first.unit} (threshold {first.threshold})", fontsize=10
    )
    fig.tight_layout()
    return save(fig, stem)


def align_uniform_figure(results: dict[str, AlignUniformResult], stem: Path) -> list[Path]:
    """Place models on the l_align-l_uniform plane (SimCSE Fig. 2/3); lower-left is better."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4.5, 3.6 + 0.15 * len(results)))
    markers = "osD^vP*Xhp<>"
    for k, (label, r) in enumerate(results.items()):
        # a legend, not labels beside the points: models close on the plane would print over each other
        ax.scatter([r.uniformity], [r.alignment], s=30, marker=markers[k % len(markers)], label=label)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    first = next(iter(results.values()))
    ax.set_xlabel(r"$\ell_{uniform}$")
    ax.set_ylabel(r"$\ell_{align}$")
    ax.set_title(
        f"{short_name(first.task)} {first.split}: {first.n_positive_pairs} positive pairs (gold > "
        f"{first.positive_threshold:g}), {first.n_sentences} sentences",
        fontsize=8,
    )
    ax.margins(0.25)
    fig.tight_layout()
    return save(fig, stem)


def spectrum_figure(results: dict[str, SpectrumResult], stem: Path) -> list[Path]:
    """Singular values / largest on a log scale, uncentred and centred (MoCoSE Fig. 7)."""
    plt = pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.4), sharey=True)
    for ax, which in zip(axes, ("uncentred", "centred"), strict=True):
        for label, r in results.items():
            s = getattr(r, which)
            k = s.numerical_rank  # values past it are round-off (below RANK_TOL): not drawn
            ax.plot(
                np.arange(1, k + 1),
                s.normalized[:k],
                label=f"{label} (erank {s.effective_rank:.0f}, rank {k}/{len(s.normalized)})",
            )
        ax.set_yscale("log")
        ax.set_xlabel(f"index (below {RANK_TOL:g} x largest: round-off, not drawn)", fontsize=8)
        ax.set_title(f"{which} embeddings", fontsize=9)
        ax.legend(fontsize=6)
    first = next(iter(results.values()))
    axes[0].set_ylabel("singular value / largest")
    fig.suptitle(f"{short_name(first.task)} {first.split}: {first.n_sentences} unique sentences", fontsize=9)
    fig.tight_layout()
    return save(fig, stem)


def repetition_figure(results: dict[str, RepetitionResult], stem: Path) -> list[Path]:
    """Mean sim(q, s1) and sim(q, s2) x100 per model (ESimCSE Table 8), the difference written above."""
    plt = pyplot()
    labels = list(results)
    fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(labels), 3.4))
    x = np.arange(len(labels))
    a = [r.mean_sim_q_s1 for r in results.values()]
    b = [r.mean_sim_q_s2 for r in results.values()]
    ax.bar(x - 0.18, a, 0.36, label="sim(q, s1)")
    ax.bar(x + 0.18, b, 0.36, label="sim(q, s2): overlap repeated")
    for k, r in enumerate(results.values()):
        ax.text(x[k], max(a[k], b[k]), f"{r.difference:+.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel("mean cosine x100")
    first = next(iter(results.values()))
    ax.set_title(
        f"Repetition probe: {first.n_triples} triples, {first.min_overlap:.0%}-{first.max_overlap:.0%} "
        f"{first.overlap_measure} overlap",
        fontsize=8,
    )
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    fig.tight_layout()
    return save(fig, stem)


def density_figure(results: dict[str, CosineDensityResult], stem: Path) -> list[Path]:
    """SimCSE Fig. 4: per model, the density of cosine by gold-score group, the groups stacked up the y-axis."""
    plt = pyplot()
    n = len(results)
    fig, axes = plt.subplots(1, n, figsize=(3.2 * n + 0.6, 3.4), sharex=True, squeeze=False)
    first = next(iter(results.values()))
    for ax, (label, r) in zip(axes.flat, results.items(), strict=True):
        top = max((max(g.density) for g in r.groups if g.density), default=1.0)
        for k, g in enumerate(r.groups):
            if g.density is None:
                continue
            curve = [k + 0.9 * v / top for v in g.density]
            ax.fill_between(r.grid, k, curve, alpha=0.6)
            ax.plot(r.grid, curve, color="black", linewidth=0.6)
        ax.set_yticks(range(len(r.groups)), [g.label for g in r.groups])
        ax.set_title(label, fontsize=8)
        ax.set_xlabel("cosine similarity")
        ax.set_xlim(-1.0, 1.0)
    axes.flat[0].set_ylabel("gold score group")
    fig.suptitle(
        f"{short_name(first.task)} {first.split} ({first.n_pairs} pairs): cosine density by gold score",
        fontsize=9,
    )
    fig.tight_layout()
    return save(fig, stem)
