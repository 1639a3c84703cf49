"""``stsbench published check`` on an analysis table: a published analysis row against the seeds' analyses.

The registry's analysis tables (ESimCSE arXiv Table 1, COLING Tables 1, 7 and 8) are judged as score tables
are: each published figure against the seeds' figures by :func:`stsbench.published.check.verdict` (the
95% t-interval over seeds, the one-sample p, the smallest difference the seeds detect), so that "ESimCSE
shrinks the length-bias gap" is held against seeds, not one checkpoint.

The seeds are the analysis results under a results folder of checkpoints ``OUT/seed-<s>`` (the layout
``stsbench train --seeds`` and ``stsbench reproduce`` write; a recipe runs each analysis on every seed); a
checkpoint outside that layout is a group of one (no interval: inconclusive). The measured figure of a
column comes from the analysis' registry entry
(:meth:`~stsbench.analyses.registry.Analysis.published_figures`), which also refuses, in one line, a result
measured otherwise than the paper (ESimCSE counts length differences in tokens, with a threshold of 3).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from stsbench.analyses.registry import all_analyses, get_analysis
from stsbench.errors import StsbenchError
from stsbench.progress import plural
from stsbench.published.check import SeedRow, check_difference, inside_interval
from stsbench.published.registry import Entry, get_entry
from stsbench.results.read import AnalysisRecord, read_folder
from stsbench.results.runs import LEVEL, summary_dict
from stsbench.results.schema import ANALYSIS_KIND
from stsbench.results.write import same_path
from stsbench.stats.decide import CELL_DELTA, REPRODUCED

_SEED = re.compile(r"seed-(\d+)")


@dataclass(frozen=True)
class AnalysisComparison:
    """One group of checkpoints' analyses against one published analysis row: a :class:`SeedRow` per column."""

    entry: Entry
    model: str  # the seeds' folder (or the one checkpoint) as the results record it
    seeds: tuple[int | None, ...]
    files: tuple[str, ...]  # the results files read, relative to the results folder
    rows: tuple[SeedRow, ...]
    # one checkpoint: per column, its bootstrap interval over pairs where the result holds one
    pair_intervals: dict[str, tuple[float, float]] = field(default_factory=dict)

    def outside_pairs(self, row: SeedRow) -> bool | None:
        """One checkpoint: the published figure outside its bootstrap interval over pairs (None: no interval)."""
        iv = self.pair_intervals.get(row.task) if len(self.seeds) == 1 else None
        return None if iv is None else not inside_interval(row.published, *iv)

    @property
    def passed(self) -> bool:
        """Every published figure reproduced."""
        return all(r.verdict.status == REPRODUCED for r in self.rows)

    def summary(self) -> str:
        """One line: how many figures are reproduced, and the others with their verdict."""
        seeds, figures = plural(len(self.seeds), "seed"), plural(len(self.rows), "figure")
        done = [r.task for r in self.rows if r.verdict.status == REPRODUCED]
        others = [f"{r.task} {r.verdict.status}" for r in self.rows if r.verdict.status != REPRODUCED]
        outside = [r.task for r in self.rows if self.outside_pairs(r)]
        line = f"{len(done)} of {figures} of {self.entry.key} reproduced over {seeds}"
        line += f"; {', '.join(others)}" if others else ""
        pairs = "outside the checkpoint's 95% bootstrap interval over pairs"
        return line + (f"; {', '.join(outside)} {pairs}" if outside else "")


def _group(rec: AnalysisRecord) -> tuple[str, int | None]:
    """(the seeds' folder, the seed) of a checkpoint ``OUT/seed-<s>``; (the checkpoint, None) otherwise."""
    path = PurePosixPath(rec.model.path or rec.model.name)
    m = _SEED.fullmatch(path.name)
    return (str(path.parent), int(m.group(1))) if m else (str(path), None)


def check_analysis(
    results_dir: Path,
    key: str,
    model: str | None = None,
    difference: float = CELL_DELTA,
    level: float = LEVEL,
) -> AnalysisComparison:
    """Judge published analysis row ``key`` on the analyses under ``results_dir`` (one group of seeds).

    ``model``: the seeds' folder (or one checkpoint) as the results record it, needed when the folder holds
    several. A folder without this analysis, results not comparable with the paper's, or several groups
    without ``model`` are one line each.
    """
    difference = check_difference(difference)
    entry = get_entry(key)
    if entry.kind != "analysis" or not entry.analysis:
        raise StsbenchError(f"{key} is a table of task scores, not of an analysis")
    analysis = get_analysis(entry.analysis)
    types = {a.name: a.result_class() for a in all_analyses()}
    coll = read_folder(results_dir, kinds=(ANALYSIS_KIND,), result_types=types, strict=False)
    records = [r for r in coll.analyses if r.analysis == analysis.name]
    if not records:
        raise StsbenchError(
            f"no {analysis.name} results under {results_dir}; make them with "
            f"`{analysis.make.replace('RESULTS', str(results_dir))}`"
        )
    groups: dict[str, list[tuple[int | None, AnalysisRecord, dict[str, tuple]]]] = {}
    refused: list[str] = []
    for rec in records:
        figures = analysis.published_figures(rec.result, entry)
        if isinstance(figures, str):
            refused.append(f"{rec.path}: {figures}")
            continue
        folder, seed = _group(rec)
        groups.setdefault(folder, []).append((seed, rec, figures))
    if model is not None:
        groups = {k: v for k, v in groups.items() if _named(k, model, v)}
    if not groups:
        more = f"; and {len(refused) - 1} more" if len(refused) > 1 else ""
        why = f" ({refused[0]}{more})" if refused else ""
        name = f" of {model}" if model else ""
        raise StsbenchError(
            f"no {analysis.name} result{name} under {results_dir} is comparable with {key}{why}"
        )
    if len(groups) > 1:
        raise StsbenchError(
            f"{results_dir} holds {analysis.name} results of {len(groups)} models or seed folders "
            f"({', '.join(sorted(groups))}); pick one with --model"
        )
    folder, found = next(iter(groups.items()))
    found.sort(key=lambda x: (x[0] is None, x[0] or 0, x[1].path))
    intervals = {c: v[2] for c, v in found[0][2].items() if v[2]} if len(found) == 1 else {}
    seeds, recs, figures = zip(*found, strict=True)
    rows = []
    for column, printed in entry.values.items():
        pairs = [s[column] for s in figures if column in s]  # none: missing (the published figure as printed)
        published = pairs[0][1] if pairs else float(printed)
        summary = summary_dict([p[0] for p in pairs]) if pairs else None
        rows.append(SeedRow(column, published, summary, True, difference, level))
    return AnalysisComparison(entry, folder, seeds, tuple(r.path for r in recs), tuple(rows), intervals)


def _named(folder: str, model: str, found: Sequence[tuple[Any, AnalysisRecord, Any]]) -> bool:
    """``model`` names the group: its folder, or (a checkpoint) its model name, as recorded or typed now."""
    rec = found[0][1]
    base = Path(rec.path).parent
    return any(same_path(x, model, base) for x in (folder, rec.model.name)) or folder.endswith(f"/{model}")
