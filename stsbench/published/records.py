"""What the published registry hands out: a paper's row (:class:`Entry`).

Plain frozen dataclasses, so that code reading the registry imports no pydantic: the files are validated by the
models of :mod:`stsbench.published.schema`, which build these (a paper's figure is the schema's own model).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from stsbench.errors import StsbenchError
from stsbench.tasks.registry import TASKS

Kind = Literal["scores", "analysis"]
Split = Literal["test", "dev"]
Selection = Literal["test-sets"]
# how a published row's checkpoint was chosen, where it was not on a dev set: the mark a report shows
SELECTIONS: dict[str, str] = {"test-sets": "selected on the test sets by the official code"}
# how stsbench draws a paper's figure (stsbench.published.figures' docstring says what each is)
Renderer = Literal[
    "sweep", "grid", "distance", "align-distance", "dev-curves", "spectrum", "align-map", "cosine-density",
    "trajectory",
]  # fmt: skip
RENDERERS: tuple[str, ...] = get_args(Renderer)


class RegistryError(StsbenchError, ValueError):
    """A published-numbers file that cannot be read: one line naming the file, the table or row, and the key."""


@dataclass(frozen=True)
class Paper:
    """Where a table comes from."""

    slug: str  # the first part of every key, e.g. ``esimcse-arxiv``
    title: str
    citation: str  # authors, title, venue, year, arXiv id
    source: str  # the text the numbers were read from (a publication's text, never a local file)
    notes: tuple[str, ...] = ()
    arxiv: str | None = None  # e.g. ``2104.08821``
    venue: str | None = None  # e.g. ``EMNLP 2021``
    year: int | None = None
    version: str | None = None  # the version the tables were read from, e.g. ``arXiv:2104.08821v1``


@dataclass(frozen=True)
class Entry:
    """One published row: a model or method's numbers in one table of one paper."""

    key: str
    paper: Paper
    table: str  # as the paper numbers it, e.g. ``Table 5``
    caption: str
    row: str  # the row label (model/method)
    metric: str  # what the numbers are
    split: Split | None  # the evaluation split, where the paper says
    kind: Kind
    decimals: int
    values: dict[str, float]  # column -> value, in the paper's order
    notes: tuple[str, ...] = ()  # the paper's, then the table's, then the row's
    printed_as: tuple[tuple[str, str], ...] = ()  # (column, the source text's rendering) where garbled
    selection: Selection | None = None  # how the checkpoint was chosen, where not on a dev set
    # the publication's version the row was read from (the row's or table's, else the paper's)
    version: str = ""
    source: str = ""  # where its numbers were read (the table's, else the paper's)
    avg_of: tuple[
        str, ...
    ] = ()  # the tasks an Avg.-only row's or a sweep's figures average (see the docstring)
    avg_of_assumed: bool = False  # the paper does not say what its average covers: avg_of is our reading
    analysis: str | None = None  # an analysis table's: the stsbench analysis that computes its figures
    runs: int = 1  # the published figure is the mean of this many runs (1: a single run, the default)
    best_of: int | None = None  # the published figure is the best (or dev-selected) of this many runs

    @property
    def cite(self) -> str:
        """The row's citation: paper, version, table."""
        return f"{self.paper.citation}; {self.version or 'version not stated'}; {self.table}"

    @property
    def selection_note(self) -> str | None:
        """The mark for :attr:`selection`, e.g. "selected on the test sets by the official code"."""
        return None if self.selection is None else SELECTIONS[self.selection]

    @property
    def task_values(self) -> dict[str, float]:
        """The columns that are task scores (what ``stsbench check`` compares)."""
        return {c: v for c, v in self.values.items() if TASKS.canonical(c) == c}

    def printed(self, column: str) -> str:
        """Render a value as the source text shows it."""
        return dict(self.printed_as).get(column) or self.format(self.values[column])

    def format(self, value: float) -> str:
        """Render a number at this table's precision."""
        return f"{value:.{self.decimals}f}"
