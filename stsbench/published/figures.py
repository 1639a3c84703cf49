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
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.files import parse_yaml

FIGURES_FILE = "figures.yaml"
# a paper's name as a report's heading gives it ("MoCoSE Figure 8")
PAPER_NAMES = {
    "esimcse-arxiv": "ESimCSE (arXiv)",
    "esimcse-coling": "ESimCSE (COLING)",
    "mocose": "MoCoSE",
    "simcse": "SimCSE",
    "gaussian-dropout": "SimCSE with Gaussian dropout (CS224N report)",
}
RENDERERS = (
    "sweep", "grid", "distance", "align-distance", "dev-curves", "spectrum", "align-map", "cosine-density",
    "trajectory",
)  # fmt: skip
_KEYS = {
    "paper", "id", "figure", "caption", "shows", "x", "y", "claim", "numbers", "source", "ref_only",
    "out_of_scope", "renderer", "setting", "missing", "notes",
}  # fmt: skip


@dataclass(frozen=True)
class FigureEntry:
    """One experimental figure of a seed paper."""

    key: str  # <paper>/<id>
    paper: str
    figure: str  # "Figure 8"
    caption: str
    shows: str
    x: str
    y: str
    claim: str
    numbers: dict[str, Any]
    source: str
    ref_only: bool = False
    out_of_scope: str | None = None
    renderer: str | None = None
    setting: str | None = None  # a sweep's or grid's option
    missing: str | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def drawn(self) -> bool:
        """Whether stsbench has a renderer for it."""
        return self.renderer is not None


def _entry(item: Any, where: str) -> FigureEntry:
    if not isinstance(item, dict):
        raise StsbenchError(f"{where}: a figure is a mapping, got {type(item).__name__}")
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise StsbenchError(f"{where}: unknown key(s) {', '.join(unknown)}")
    for key in ("paper", "id", "figure", "shows", "x", "y", "source"):
        if not item.get(key):
            raise StsbenchError(f"{where}: missing {key}")
    renderer = item.get("renderer")
    if renderer is not None and renderer not in RENDERERS:
        raise StsbenchError(f"{where}: renderer {renderer!r} is none of {', '.join(RENDERERS)}")
    if renderer in ("sweep", "grid") and not item.get("setting"):
        raise StsbenchError(f"{where}: a {renderer} figure names its setting")
    if renderer is None and not (item.get("missing") or item.get("out_of_scope")):
        raise StsbenchError(f"{where}: without a renderer, say what is missing or why it is out of scope")
    return FigureEntry(
        key=f"{item['paper']}/{item['id']}",
        paper=str(item["paper"]),
        figure=str(item["figure"]),
        caption=str(item.get("caption") or ""),
        shows=str(item["shows"]),
        x=str(item["x"]),
        y=str(item["y"]),
        claim=str(item.get("claim") or ""),
        numbers=dict(item.get("numbers") or {}),
        source=str(item["source"]),
        ref_only=bool(item.get("ref_only", False)),
        out_of_scope=item.get("out_of_scope"),
        renderer=renderer,
        setting=item.get("setting"),
        missing=item.get("missing"),
        notes=tuple(item.get("notes") or ()),
    )


@lru_cache(maxsize=1)
def load_figures() -> dict[str, FigureEntry]:
    """Every figure, by key, in file order."""
    text = resources.files(__package__).joinpath(FIGURES_FILE).read_text(encoding="utf-8")
    data = parse_yaml(text, f"published {FIGURES_FILE}", StsbenchError)
    if not isinstance(data, dict) or not isinstance(data.get("figures"), list):
        raise StsbenchError(f"published {FIGURES_FILE}: expected a mapping with a list under 'figures'")
    out: dict[str, FigureEntry] = {}
    for i, item in enumerate(data["figures"], start=1):
        entry = _entry(item, f"published {FIGURES_FILE}: figure {i}")
        if entry.key in out:
            raise StsbenchError(f"published {FIGURES_FILE}: duplicate figure {entry.key}")
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
