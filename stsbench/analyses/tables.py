"""Rich tables of the analyses' numbers, for the CLI (x100 where the papers print x100)."""

from __future__ import annotations

from typing import Any

from stsbench.analyses.common import short_name


def _fmt(v: float | None, scale: float = 100.0, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v * scale:.{digits}f}"


def _print(table: Any) -> None:
    from rich.console import Console

    Console(width=200).print(table)


def print_length_bias(results: dict[str, Any]) -> None:
    """Per model: Table 1 / Table 7 view (threshold groups) and the finer buckets."""
    from rich.table import Table

    for label, r in results.items():
        lo, hi = (g.label for g in r.datasets[0].threshold_groups)
        t = Table(title=f"{label}: length bias ({r.unit}; Spearman x100 and mean |cos - g'| x100)")
        for col in [
            "dataset",
            "g' =",
            "n",
            f"n {lo}",
            f"n {hi}",
            "rho all",
            f"rho {lo}",
            f"rho {hi}",
            "|d| all",
            f"|d| {lo}",
            f"|d| {hi}",
        ]:
            t.add_column(col, justify="left" if col in ("dataset", "g' =") else "right")
        for d in r.datasets:
            a, b = d.threshold_groups
            t.add_row(
                short_name(d.task),
                d.gold_normalisation,
                str(d.n_pairs),
                str(a.n_pairs),
                str(b.n_pairs),
                _fmt(d.overall.spearman),
                _fmt(a.spearman),
                _fmt(b.spearman),
                _fmt(d.overall.mean_abs_diff),
                _fmt(a.mean_abs_diff),
                _fmt(b.mean_abs_diff),
            )
        av = r.average
        t.add_row(
            "Avg.", "", "", "", "", *[_fmt(g.spearman) for g in av], *[_fmt(g.mean_abs_diff) for g in av]
        )
        _print(t)
        t = Table(title=f"{label}: Spearman x100 (pairs) by |length difference| in {r.unit}")
        t.add_column("dataset")
        for b in r.buckets:
            t.add_column(b, justify="right")
        for d in r.datasets:
            t.add_row(short_name(d.task), *[f"{_fmt(g.spearman)} ({g.n_pairs})" for g in d.buckets])
        _print(t)
        notes = [
            f"{short_name(d.task)} {g.label}: {g.reason}"
            for d in r.datasets
            for g in [*d.threshold_groups, *d.buckets]
            if g.reason
        ]
        for note in notes:
            _print(f"n/a {note}")


def print_align_uniform(results: dict[str, Any]) -> None:
    """One row per model."""
    from rich.table import Table

    first = next(iter(results.values()))
    t = Table(title=f"alignment / uniformity on {short_name(first.task)} {first.split} (lower is better)")
    for col in ["model", "align", "uniform", "positive pairs", "sentences", "sentence pairs"]:
        t.add_column(col, justify="left" if col == "model" else "right")
    for label, r in results.items():
        t.add_row(
            label,
            f"{r.alignment:.4f}",
            f"{r.uniformity:.4f}",
            str(r.n_positive_pairs),
            str(r.n_sentences),
            str(r.n_uniformity_pairs),
        )
    _print(t)


def print_spectrum(results: dict[str, Any]) -> None:
    """One row per model: effective rank, top-component share (uncentred / centred), mean cosines."""
    from rich.table import Table

    first = next(iter(results.values()))
    t = Table(
        title=f"spectrum of {short_name(first.task)} {first.split} embeddings ({first.n_sentences} sentences)"
    )
    for col in [
        "model",
        "dim",
        "erank raw",
        "erank centred",
        "top share raw",
        "top share centred",
        "rank",
        f"cos {first.n_random_pairs} random pairs",
        "cos all pairs",
    ]:
        t.add_column(col, justify="left" if col == "model" else "right")
    for label, r in results.items():
        t.add_row(
            label,
            str(r.dim),
            f"{r.uncentred.effective_rank:.2f}",
            f"{r.centred.effective_rank:.2f}",
            f"{r.uncentred.top_share:.4f}",
            f"{r.centred.top_share:.4f}",
            str(r.uncentred.numerical_rank),
            f"{r.avg_cosine_random_pairs:.4f}",
            f"{r.avg_cosine_all_pairs:.4f}",
        )
    _print(t)


def print_repetition(results: dict[str, Any]) -> None:
    """One row per model, as ESimCSE Table 8."""
    from rich.table import Table

    first = next(iter(results.values()))
    t = Table(title=f"repetition probe: {first.n_triples} triples (cosine x100)")
    for col in ["model", "sim(q, s1)", "sim(q, s2)", "difference"]:
        t.add_column(col, justify="left" if col == "model" else "right")
    for label, r in results.items():
        t.add_row(label, f"{r.mean_sim_q_s1:.2f}", f"{r.mean_sim_q_s2:.2f}", f"{r.difference:+.2f}")
    _print(t)
