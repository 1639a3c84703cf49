"""The registry of the seed papers' experimental figures: ``figures.yaml`` beside this module.

Each figure is keyed ``<paper>/<id>`` (``mocose/figure8``, as tables are keyed by paper and table) and holds its
number as the paper prints it, the caption (verbatim; empty where the text only cites the figure: ``ref_only``),
what it shows and its axes, the claim the text makes from it and any number the text gives (MoCoSE's best
traceable distance, 14.67), where it was read (``source``), and how stsbench draws it: a ``renderer`` of the
report (``sweep``: a figure against the swept setting, with ``setting`` the option; ``grid``; ``distance``:
against MoCoSE's maximum traceable distance; ``align-distance``: (l_align, l_uniform)'s distance to a point
against it; ``dev-curves``: STS-B dev during training; ``spectrum``;
``align-map``: SimCSE Figure 3's map; ``cosine-density``: SimCSE Figure 4), or what it still lacks
(``missing``), or why it is out of stsbench's scope (``out_of_scope``). Recipes name the figures they regenerate
(``figures:``, checked against this registry when a recipe loads); ``reproduce --list`` lists them.
"""

from __future__ import annotations

import difflib
from functools import lru_cache
from importlib import resources

from stsbench.errors import StsbenchError
from stsbench.files import parse_yaml
from stsbench.published.records import RENDERERS
from stsbench.published.registry import FIGURES
from stsbench.published.schema import FigureEntry, FiguresSchema, validated

__all__ = ["PAPER_NAMES", "RENDERERS", "FigureEntry", "experimental_figures", "get_figure", "load_figures"]

# a paper's name as a report's heading gives it ("MoCoSE Figure 8")
PAPER_NAMES = {
    "esimcse-arxiv": "ESimCSE (arXiv)",
    "esimcse-coling": "ESimCSE (COLING)",
    "mocose": "MoCoSE",
    "simcse": "SimCSE",
    "gaussian-dropout": "SimCSE with Gaussian dropout (CS224N report)",
}


@lru_cache(maxsize=1)
def load_figures() -> dict[str, FigureEntry]:
    """Every figure, by key, in file order (validated by :class:`stsbench.published.schema.FiguresSchema`)."""
    text = resources.files(__package__).joinpath(FIGURES).read_text(encoding="utf-8")
    where = f"published {FIGURES}"
    data = parse_yaml(text, where, StsbenchError)
    out: dict[str, FigureEntry] = {}
    for entry in validated(FiguresSchema, data, where, StsbenchError).figures:
        if entry.key in out:
            raise StsbenchError(f"{where}: duplicate figure {entry.key}")
        out[entry.key] = entry
    return out


def get_figure(key: str) -> FigureEntry:
    """The figure ``key`` names; an unknown key is one line with the nearest known one."""
    figures = load_figures()
    if key not in figures:
        near = difflib.get_close_matches(key, list(figures), n=1)
        hint = f"; did you mean {near[0]}?" if near else f"; known: {', '.join(figures)}"
        raise StsbenchError(f"unknown figure {key!r}{hint}")
    return figures[key]


def experimental_figures(in_scope: bool = True) -> list[FigureEntry]:
    """The registry's figures (``in_scope``: without those out of stsbench's scope)."""
    return [f for f in load_figures().values() if not (in_scope and f.out_of_scope)]
