"""Results -> the papers' tables and figures as Markdown/HTML (``stsbench report``), next to published numbers.

``collect`` scans a results folder into typed records; ``models`` tells the models apart and ``seeds`` groups
runs that differ only in their seed (a run without seeds is a group of one), with their differences to the
baseline group and the figures of their spread; ``scores`` (STS and transfer), ``ablations`` and
``provenance`` turn them into :class:`~stsbench.tabular.Table` objects (pure functions), the analyses' tables
coming from their registry entries; ``reproduction`` sets published rows beside the groups that reproduce
them, a verdict per figure (``--against``); ``figures``, ``seeds`` and ``paper_figures`` draw; ``build`` lays
out the sections and ``render`` writes ``report.md`` and a self-contained ``report.html``. Notebooks call the
same functions.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stsbench.reports.collect import Collection, collect

if TYPE_CHECKING:
    from stsbench.tabular import Table, to_html, to_markdown

__all__ = ["Collection", "Table", "collect", "to_html", "to_markdown"]


def __getattr__(name: str) -> Any:
    """The tables (:mod:`stsbench.tabular`, which loads pandas) on first use: a recipe's check reads this package."""
    if name in ("Table", "to_html", "to_markdown"):
        from stsbench import tabular

        return getattr(tabular, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
