"""The report's layout: sections of paragraphs, tables and figures, and the line a section without results shows.

:func:`stsbench.reports.build.build_report` fills a :class:`Report`; the templates only loop over it.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from stsbench.analyses.registry import find_analysis
from stsbench.tabular import Table

if TYPE_CHECKING:
    from stsbench.reports.reproduction import Reproduction
    from stsbench.stats.claims import ClaimResult

# what makes the results of each section (RESULTS: the folder given to `stsbench report --results`); an
# analysis' section says it with its registry entry's ``make`` and ``describe``
MAKE = {
    "sts": "stsbench run --model MODEL --tasks sts --output RESULTS",
    "transfer": "stsbench run --model MODEL --tasks transfer --output RESULTS",
    "training": "stsbench train --config configs/simcse-minilm-cpu.yaml --output RESULTS/train/NAME",
    "ablations": "stsbench train --config configs/esimcse-minilm-cpu.yaml --queue-multiple 0 --output RESULTS/train/NAME",
}


@dataclass
class FigureOut:
    """A figure as the report shows it: SVG beside report.md, PNG inlined in report.html.

    Tagged when drawn with what it is (``kind``: ``sweep``, ``grid``, ``distance``, ``dev-curves``, ``analysis``...),
    the analysis it draws and the settings it is drawn against: what a paper figure's renderer is found by
    (:func:`stsbench.reports.paper_figures.matches`).
    """

    title: str
    svg: str  # path relative to the report folder
    png_base64: str
    kind: str = ""
    analysis: str = ""
    settings: tuple[str, ...] = ()


@dataclass
class Section:
    """One ``##`` section."""

    key: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[FigureOut] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        """GitHub's heading anchor for the title."""
        return anchor(self.title)


@dataclass
class Report:
    """Everything report.md and report.html show."""

    title: str
    paragraphs: list[str]
    sections: list[Section]
    warnings: list[str]
    figures: list[Path]  # files written
    reproduction: list[Reproduction] = field(default_factory=list)  # the --against rows' verdicts
    claims: list[ClaimResult] = field(default_factory=list)  # the --claims verdicts


def anchor(title: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


DESCRIBE = {
    "sts": "STS results",
    "transfer": "transfer results",
    "training": "training runs (train_log.jsonl)",
    "ablations": "pair of training runs that differ in one setting or in ESimCSE's components",
}


def under(folders: str | Sequence[str], joiner: str = "and") -> str:
    """The results folders as the report names them: `results`, `results` and `runs`, `a`, `b` and `c`."""
    names = [f"`{f}`" for f in ([folders] if isinstance(folders, str) else folders)]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {joiner} {names[-1]}"


def missing(key: str, results: str | Sequence[str]) -> str:
    """The line a section without results shows: what is missing and the command that makes it.

    ``results``: the folder (or folders) given to ``--results``; the command writes into the first.
    """
    analysis = find_analysis(key)
    make, describe = (analysis.make, analysis.describe) if analysis else (MAKE[key], DESCRIBE[key])
    first = results if isinstance(results, str) else results[0]
    command = make.replace("RESULTS", first.rstrip("/") or ".")
    return f"{ABSENT}no {describe} under {under(results, 'or')}. Make them with `{command}`."


ABSENT = "Not in this report: "  # a section of nothing but this line is listed at the end, not shown


def absent_last(sections: list[Section]) -> list[Section]:
    """Sections with nothing in them left out, each named in one closing "Not in this report" section."""
    empty = [
        s
        for s in sections
        if not s.tables and not s.figures and [p[: len(ABSENT)] for p in s.paragraphs] == [ABSENT]
    ]
    if not empty:
        return sections
    shown = [s for s in sections if all(s is not e for e in empty)]
    lines = [f"{s.title}: {s.paragraphs[0][len(ABSENT) :]}" for s in empty]
    return [*shown, Section("absent", "Not in this report", lines)]


class Figures:
    """Write figures under ``folder`` and remember them for the report."""

    def __init__(self, folder: Path, prefix: str) -> None:
        self.folder, self.prefix, self.written = folder, prefix, []

    def add(
        self, title: str, paths: list[Path], kind: str, analysis: str = "", settings: tuple[str, ...] = ()
    ) -> FigureOut:
        """The figure drawn to ``paths``, tagged with what it is (:class:`FigureOut`)."""
        self.written += paths
        svg = next(p for p in paths if p.suffix == ".svg")
        png = next(p for p in paths if p.suffix == ".png")
        png_base64 = base64.b64encode(png.read_bytes()).decode("ascii")
        return FigureOut(title, f"{self.prefix}/{svg.name}", png_base64, kind, analysis, tuple(settings))
