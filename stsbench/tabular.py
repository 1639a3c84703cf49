"""The :class:`Table` type (a pandas frame of display strings, with title and notes) and its Markdown/HTML forms.

Every table of stsbench is one: the report's (:mod:`stsbench.reports`) and the analyses' own (each in its
analysis' module, which the analysis commands print). It lives below both, so the analyses never import the
reports; pandas is imported when a table is made, so importing an analysis (as building the CLI does) costs none. Formatting lives here so the report, the notebooks and the CLI print the same
strings: a notebook's ``to_markdown(table)`` is byte-equal to the table in ``report.md``.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stsbench.data.integrity import MARK

if TYPE_CHECKING:
    import pandas as pd

DASH = "–"  # a value the table has no number for


@dataclass(frozen=True)
class Table:
    """One table: ``frame`` holds the cells as displayed; ``align`` is ``l``/``r`` per column."""

    key: str  # stable id (anchors, tests)
    title: str
    frame: pd.DataFrame
    align: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _numeric(cell: str) -> bool:
    try:
        float(str(cell).replace("−", "-").removesuffix(MARK))  # a figure on modified data is still a number
    except ValueError:
        return False
    return True


def make_table(
    key: str,
    title: str,
    columns: list[str],
    rows: list[list[str]],
    notes: list[str] | None = None,
    right: tuple[str, ...] = (),
) -> Table:
    """Build a :class:`Table`; columns of numbers (or dashes) and those named in ``right`` are right-aligned."""
    import pandas as pd

    frame = pd.DataFrame(rows, columns=columns, dtype=object)
    cells = [[r[i] for r in rows] for i in range(len(columns))]
    numeric = [all(_numeric(c) or c in (DASH, "") for c in col) and any(map(_numeric, col)) for col in cells]
    align = tuple("r" if name in right or num else "l" for name, num in zip(columns, numeric, strict=True))
    return Table(key, title, frame, align, tuple(notes or ()))


def fmt(value: float | None, digits: int = 2, scale: float = 1.0) -> str:
    """Render a number with ``digits`` decimals (x ``scale``); a dash for a missing or non-finite one."""
    if value is None or not math.isfinite(value):
        return DASH
    return f"{value * scale:.{digits}f}"


def fmt_delta(value: float | None, digits: int = 2) -> str:
    """Render a difference with its sign (``+0.12``, ``-1.05``); a dash when missing."""
    if value is None or not math.isfinite(value):
        return DASH
    out = f"{value:+.{digits}f}"
    return out.replace("-0.00", "+0.00") if digits == 2 else out


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(table: Table) -> str:
    """GitHub Markdown: the table alone (no title, no notes), one line a row, ending without a newline."""
    head = "| " + " | ".join(_md_cell(c) for c in table.frame.columns) + " |"
    rule = "|" + "|".join(":---" if a == "l" else "---:" for a in table.align) + "|"
    body = ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in table.frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def _html_cells(tag: str, values, align: tuple[str, ...]) -> str:  # noqa: ANN001
    return "".join(
        f'<{tag} class="{a}">{html.escape(str(v))}</{tag}>' for v, a in zip(values, align, strict=True)
    )


def to_html(table: Table) -> str:
    """Return an HTML ``<table>`` (escaped cells, alignment as classes; no title, no notes)."""
    head = _html_cells("th", table.frame.columns, table.align)
    rows = (f"<tr>{_html_cells('td', row, table.align)}</tr>" for row in table.frame.itertuples(index=False))
    body = "\n".join(rows)
    return f'<table id="{html.escape(table.key)}">\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody>\n</table>'
