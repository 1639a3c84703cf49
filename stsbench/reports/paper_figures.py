"""The report's Figures section: each paper figure a recipe regenerates, under its number and caption.

``report --figures KEY`` (a recipe's ``figures:``, :mod:`stsbench.published.figures`) names the papers' figures
the results regenerate. Each gets a block: the paper's number and caption (or, for a figure the text only
cites, what the text says of it), what it shows, the claim the paper makes from it and any number its text
gives, the verdict of the report's claims read from it (a claim's ``paper_figure``), and the figures of this
report that draw it, found by the renderer the registry names and the tags each figure was drawn with (a
sweep's figure against its setting, the spectra, the training curves...). A figure none of whose drawings is in the report says so: its results are
not under the report's folders.
"""

from __future__ import annotations

from collections.abc import Sequence

from stsbench.published.figures import FigureEntry, get_figure
from stsbench.reports.layout import FigureOut


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


def blocks(
    keys: Sequence[str], drawn: Sequence[FigureOut], verdicts: Sequence[tuple[str, str, str]]
) -> list[tuple[FigureEntry, list[str], list[FigureOut]]]:
    """Per key: the registry entry, its paragraphs and the report's figures that draw it.

    ``verdicts``: (paper figure key, claim text, verdict) of the report's claims.
    """
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
        out.append((entry, lines, mine))
    return out
