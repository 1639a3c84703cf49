"""The published cells a report sets beside its runs: those the recipe declares, then those ``--against`` names.

One fact, one place: a recipe says which row or cell each of its runs (each point of a sweep) is held against,
and its reproduction keeps that with the results (:mod:`stsbench.results.runs`). The Ablations tables and
the sweep figures set that cell beside the setting, the same address the Reproduction section judges; a report of
results without a recipe sets beside a group only what ``--against`` names for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from stsbench.published.registry import get_cell
from stsbench.reports.collect import TrainRun
from stsbench.reports.reproduction import Reproduction
from stsbench.reports.seeds import seeds_folder
from stsbench.results.runs import read_recipe_runs

Cells = Mapping[str, Sequence[str]]  # a run's seeds folder -> the addresses it is held against, in order
# what a row (not a cell) shows beside a setting: its Avg. (MoCoSE's tables), else its STS-B figure (ESimCSE's dev)
ROW_FIGURES = ("Avg.", "STSBenchmark")


def report_cells(
    folders: Iterable[str | Path], reproductions: Sequence[Reproduction] = ()
) -> dict[str, list[str]]:
    """Each run's addresses: its recipe's (``recipe_runs.json`` in ``folders``), then ``--against``'s."""
    cells = {name: list(run.published) for name, run in read_recipe_runs(folders).items() if run.published}
    for rep in reproductions:
        if rep.group.runs:
            found = cells.setdefault(seeds_folder(rep.group.runs[0]), [])
            address = rep.address or rep.entry.key
            if address not in found:
                found.append(address)
    return cells


def published_figure(address: str) -> float | None:
    """The figure a cell holds; a row's :data:`ROW_FIGURES` one (None: a row with neither)."""
    entry, column = get_cell(address)
    if column is not None:
        return entry.values[column]
    return next((entry.values[c] for c in ROW_FIGURES if c in entry.values), None)


def published_cell(run: TrainRun, cells: Cells) -> tuple[str, float] | None:
    """``(address, figure)`` of the first address ``run``'s seeds are held against that has a figure."""
    for address in cells.get(seeds_folder(run), ()):
        value = published_figure(address)
        if value is not None:
            return address, value
    return None


def cited(addresses: Iterable[str]) -> str:
    """Where the rows ``addresses`` name were read: each source (paper and version) once, then its tables.

    :attr:`~stsbench.published.registry.Entry.cite`, grouped by source.
    """
    tables: dict[str, list[str]] = {}
    for address in addresses:
        entry = get_cell(address)[0]
        tables.setdefault(f"{entry.paper.citation}; {entry.version or 'version not stated'}", []).append(
            entry.table
        )
    return "; ".join(f"{source}: {', '.join(dict.fromkeys(t))}" for source, t in tables.items())
