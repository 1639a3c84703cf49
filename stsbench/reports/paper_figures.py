"""The report's Figures section: each paper figure a recipe regenerates, under its number and caption.

``report --figures KEY`` (a recipe's ``figures:``, :mod:`stsbench.published.figures`) names the papers' figures
the results regenerate. Each gets a block: the paper's number and caption (or, for a figure the text only
cites, what the text says of it), what it shows, the claim the paper makes from it and any number its text
gives, the verdict of the report's claims read from it (a claim's ``paper_figure``), and the figures of this
report that draw it, found by the renderer the registry names (a sweep's figure against its setting, the
spectra, the training curves...). A figure none of whose drawings is in the report says so: its results are
not under the report's folders.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from stsbench.published.figures import FigureEntry, get_figure


@dataclass(frozen=True)
class Drawn:
    """A figure of the report: its caption and its SVG's file name (the key it is found by)."""

    title: str
    name: str
    figure: Any  # the section's FigureOut


def matches(entry: FigureEntry, name: str) -> bool:
    """Whether the report's figure file ``name`` (``sweep_ema_decay_start_1.svg``) draws ``entry``."""
    stem = name.rsplit(".", 1)[0]
    r, setting = entry.renderer, entry.setting or ""
    if r == "sweep":
        return stem.startswith(f"sweep_{setting}_") and not stem.endswith("_distance")
    if r == "grid":
        return stem.startswith("grid_") and setting in stem and not stem.endswith("_distance")
    if r == "distance":
        return stem.endswith("_distance") and not stem.endswith("_align_distance")
    if r == "align-distance":
        return stem.endswith("_align_distance")
    if r == "dev-curves":
        return stem in ("dev_curves_seeds", "training_curves")
    if r == "spectrum":
        return stem.startswith("spectrum_") and not stem.endswith("_seeds")
    if r == "align-map":
        return stem.startswith("align_uniform_") and stem.endswith("_map")
    if r == "cosine-density":
        return stem.startswith("cosine_density_")
    if r == "trajectory":
        return stem == "align_uniform_trajectories"
    return False


def blocks(
    keys: Sequence[str], drawn: Sequence[Drawn], verdicts: Sequence[tuple[str, str, str]]
) -> list[tuple[FigureEntry, list[str], list[Any]]]:
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
        mine = [d.figure for d in drawn if matches(entry, d.name)]
        if not mine:
            lines.append("Not drawn in this report: none of its results are under the report's folders.")
        out.append((entry, lines, mine))
    return out
