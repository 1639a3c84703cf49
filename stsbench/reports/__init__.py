"""Results -> the papers' tables and figures as Markdown/HTML (``stsbench report``), next to published numbers.

``collect`` scans a results folder into typed records; ``tables``/``ablations``/``provenance`` turn them
into :class:`Table` objects (pure functions); ``figures`` draws; ``build`` lays out the sections and
``render`` writes ``report.md`` and a self-contained ``report.html``. Notebooks call the same functions.
"""

from __future__ import annotations

from stsbench.reports.collect import Collection, collect
from stsbench.tabular import Table, to_html, to_markdown

__all__ = ["Collection", "Table", "collect", "to_html", "to_markdown"]
