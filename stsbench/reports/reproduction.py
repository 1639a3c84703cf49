"""The Reproduction section: published rows beside the groups of seeds that reproduce them, cell by cell.

A target names one published registry row (``stsbench published list``) and, optionally, the report's group
that reproduces it (:class:`Target`; on the command line ``--against KEY`` or ``--against GROUP=KEY``). A group
is named as :func:`~stsbench.reports.seeds.baseline_group` names one (its method, e.g. ``ESimCSE``, its name, or
its seeds' folder, e.g. ``esimcse``) or, for a model not trained here, by its label or a name its results were run
with (``all-MiniLM-L6-v2``). A target without a group takes the one group the score tables set that row beside
(:func:`~stsbench.reports.scores.published_for`: a model's own rows by name: a released checkpoint's); none or several
is a one-line error asking for ``GROUP=KEY``.

Each published task (and the Avg., where the seeds' Avg. is over the row's tasks) gets the verdict of
:func:`stsbench.published.seed_check.verdict`, the function ``stsbench check --tolerance seeds`` calls, on the
group's figures (one per seed) in the first mode comparable with the row (test, then STS's fasttest; or dev).
A cell whose figures were computed on modified data is ``not comparable``, as ``check`` refuses such seeds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.metrics import AVG
from stsbench.published.cells import BEST_DEV, TaskFigures, is_cell_check, resolution, seed_values
from stsbench.published.cells import cells as published_cells
from stsbench.published.check import comparable_tasks
from stsbench.published.registry import Entry, get_cell, split_cell
from stsbench.published.seed_check import Verdict, check_difference, verdict, verdict_cells
from stsbench.reports.collect import TaskRecord, collect
from stsbench.reports.models import find_models
from stsbench.reports.scores import SELECTION_MARK, TASKS_OF, comparable, modified_data, published_for
from stsbench.reports.seeds import (
    SeedGroup,
    average_values,
    modes_of,
    report_groups,
    seeds_folder,
    task_values,
)
from stsbench.results.write import last_part
from stsbench.stats import decide
from stsbench.stats.seeds import SeedSummary
from stsbench.tabular import DASH, Table, fmt, make_table
from stsbench.tasks.registry import short_name, task_kind

VERDICTS = tuple(v for v in decide.CELL_VERDICTS if v != decide.NOT_CHECKED)  # the summary's columns
REPRODUCTION_KIND = "stsbench.reproduction"


@dataclass(frozen=True)
class Target:
    """A published row to reproduce and the report's group that reproduces it (None: the one set beside it)."""

    key: str
    group: str | None = None


def parse_against(specs: Iterable[str]) -> list[Target]:
    """``KEY`` or ``GROUP=KEY`` per ``--against`` (KEY a row or a cell, ``KEY#COLUMN``); unknown: one line.

    A column may hold ``=`` (``dup_rate=0.32``): ``GROUP=`` is what comes before the first ``=`` when no ``#`` does.
    """
    targets = []
    for spec in specs:
        head, sep, tail = spec.partition("=")
        group, key = (head, tail) if sep and "#" not in head else ("", spec)
        if sep and "#" not in head and not (group.strip() and key.strip()):
            raise StsbenchError(f"--against {spec!r}: write KEY or GROUP=KEY (e.g. ESimCSE=KEY)")
        entry, column = get_cell(key.strip())
        targets.append(Target(entry.key + (f"#{column}" if column else ""), group.strip() or None))
    return targets


@dataclass(frozen=True)
class Reproduction:
    """One published row against one group: a verdict per published task, then the Avg."""

    entry: Entry
    group: SeedGroup
    mode: str | None  # the group's results compared; None when it has none comparable with the row
    verdicts: tuple[Verdict, ...]
    difference: float
    address: str = ""  # the cell or row asked for (``KEY#COLUMN``); empty: the row
    compared_with: str = ""  # what the cells were compared with, where the cell rule judged them

    def counts(self) -> dict[str, int]:
        """How many cells have each verdict (``not checked`` left out)."""
        return {s: sum(v.status == s for v in self.verdicts) for s in VERDICTS}

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        e, g = self.entry, self.group
        return {
            "key": e.key,
            **({"address": self.address, "compared_with": self.compared_with} if self.address else {}),
            "paper": e.paper.title,
            "citation": e.cite,
            "table": e.table,
            "row": e.row,
            "split": e.split,
            "selection": e.selection_note,
            "group": g.name,
            "label": g.label,
            "method": g.method,
            "models": [m.label for m in g.models],
            "seeds": g.seeds,
            "mode": self.mode,
            "cells": [v.to_dict() for v in self.verdicts],
            "counts": self.counts(),
        }


def group_names(group: SeedGroup) -> set[str]:
    """Every name a target may give ``group`` by."""
    names = {group.name, group.label}
    if group.method:
        names.add(group.method)
    if group.runs:
        names.add(seeds_folder(group.runs[0]))
    if group.n == 1:
        m = group.models[0]
        names |= {m.label, *m.names, *(last_part(n) for n in m.names)}
    return names


def named_group(groups: Sequence[SeedGroup], name: str, asked: str) -> SeedGroup:
    """The one group called ``name`` (:func:`group_names`); else one line starting with ``asked``, the request."""
    found = [g for g in groups if name in group_names(g)]
    if len(found) == 1:
        return found[0]
    what = "no group" if not found else f"{len(found)} groups ({', '.join(g.name for g in found)})"
    everyone = ", ".join(g.name for g in groups) or "none"
    raise StsbenchError(f"{asked}: {what} of this report named {name!r}; groups: {everyone}")


def find_group(groups: Sequence[SeedGroup], target: Target) -> SeedGroup:
    """The group ``target`` names, else the one the score tables set its row beside; one line otherwise."""
    if target.group is not None:
        return named_group(groups, target.group, f"--against {target.group}={target.key}")
    everyone = ", ".join(g.name for g in groups) or "none"
    row = split_cell(target.key)[0]
    beside = [g for g in groups if any(row == e.key for k in TASKS_OF for e in published_for(g.models[0], k))]
    if len(beside) == 1:
        return beside[0]
    what = "no group of this report is set beside it" if not beside else f"{len(beside)} groups could be"
    raise StsbenchError(
        f"--against {target.key}: {what}; name the group as GROUP={target.key} (groups: {everyone})"
    )


def _kind(entry: Entry) -> str:
    kinds = {task_kind(t) for t in comparable_tasks(entry)}
    if len(kinds) != 1:
        raise StsbenchError(f"{entry.key} mixes STS and transfer tasks; compare it with `stsbench check`")
    return kinds.pop()


def reproduce(
    records: list[TaskRecord], group: SeedGroup, entry: Entry, difference: float = decide.CELL_DELTA
) -> Reproduction:
    """Every published figure of ``entry`` against ``group``'s seeds (see the module docstring)."""
    difference = check_difference(difference)
    kind = _kind(entry)
    published = comparable_tasks(entry)
    mode = next((m for m in modes_of(records, group, kind) if comparable(entry, kind, m)), None)
    values = task_values(records, group, kind, mode, raw=True) if mode else {}
    modified = {
        (t, m) for (key, m, t) in modified_data(records, kind) if key in {x.key for x in group.models}
    }
    cells = []
    runs = {"runs": entry.runs, "best_of": entry.best_of}
    for task, pub in published.items():
        v = verdict(task, pub, values.get(task, []), difference, **runs)
        cells.append(v.with_status(decide.NOT_COMPARABLE) if (task, mode) in modified and v.values else v)
    if AVG in entry.values:
        averaged = TASKS_OF[kind]
        avgs = average_values(records, group, kind, mode, averaged, raw=True) if mode else []
        checked = set(published) == set(averaged)
        v = verdict(
            AVG, entry.values[AVG], avgs, difference, checked=checked, resolution=resolution(averaged), **runs
        )
        bad = any(t in averaged for t, m in modified if m == mode)
        cells.append(
            v.with_status(decide.NOT_COMPARABLE) if bad and v.values and v.status != decide.NOT_CHECKED else v
        )
    return Reproduction(entry, group, mode, tuple(cells), difference)


def group_figures(
    records: Sequence[TaskRecord], group: SeedGroup
) -> tuple[dict[int, TaskFigures], dict[int, float]]:
    """Each seed's unrounded task figures ``{(task, mode): raw}`` and its training's best dev x100, unrounded.

    Seeds keyed by :attr:`SeedGroup.seed_ids` (a model not trained here: 0); a result run twice counts with its
    last, in path order.
    """
    seeds = group.seed_ids
    by_model = {m.key: seed for seed, m in zip(seeds, group.models, strict=True)}
    tasks: dict[int, dict[tuple[str, str], float]] = {}
    for rec in records:
        r = rec.result
        if r.model.fingerprint in by_model:
            tasks.setdefault(by_model[r.model.fingerprint], {})[(r.task, r.mode)] = r.raw
    best = {  # a run whose every evaluation was NaN (collapsed from the start) has no best: NaN
        seed: math.nan if m.run.best_dev_spearman is None else m.run.best_dev_spearman * 100
        for seed, m in zip(seeds, group.models, strict=True)
        if m.run is not None and (m.run.best_dev_spearman is not None or m.run.curve)
    }
    return dict(tasks), best


def reproduce_cells(
    records: Sequence[TaskRecord], group: SeedGroup, address: str, difference: float = decide.CELL_DELTA
) -> Reproduction:
    """The cells ``address`` names against ``group``'s seeds, by the cell rule (:mod:`stsbench.published.cells`).

    ``stsbench check`` calls this too, on the one group its results hold.
    """
    difference = check_difference(difference)
    found = published_cells(address)
    tasks, best = group_figures(records, group)
    verdicts = []
    for c in found:
        values = seed_values(c.figure, tasks, best) if c.figure is not None else {}
        note, cap = None, False
        if c.figure is not None and c.figure.kind == BEST_DEV:  # a collapsed training's NaN dev Spearman: 0
            values, note, cap = decide.finite_seeds(values, dev=True)
        h = resolution(c.figure.tasks) if c.figure is not None else 0.0
        runs = {"runs": c.entry.runs, "best_of": c.entry.best_of, "resolution": h}
        v = verdict(
            c.column, c.published, list(values.values()), difference, checked=c.figure is not None, **runs
        )
        verdicts.append(replace(v, decision=(decide.capped if cap else decide.noted)(v.decision, note)))
    figures = [c.figure for c in found if c.figure is not None]
    mode = "training's best dev" if figures and all(f.kind == BEST_DEV and best for f in figures) else None
    if mode is None and figures:
        mode = figures[0].mode
    described = "; ".join(dict.fromkeys(f.describe() for f in figures))
    return Reproduction(found[0].entry, group, mode, tuple(verdicts), difference, address, described)


def reproductions(
    records: list[TaskRecord],
    groups: Sequence[SeedGroup],
    targets: Sequence[Target],
    difference: float = decide.CELL_DELTA,
) -> list[Reproduction]:
    """:func:`reproduce` for each target, in the order given (its group found by :func:`find_group`).

    A cell (``KEY#COLUMN``) or a row without task columns (Avg.-only, a sweep) goes by the cell rule
    (:func:`reproduce_cells`); a score row by :func:`reproduce`.
    """
    check_difference(difference)
    out = []
    for t in targets:
        group = find_group(groups, t)
        if is_cell_check(t.key):
            out.append(reproduce_cells(records, group, t.key, difference))
        else:
            out.append(reproduce(records, group, get_cell(t.key)[0], difference))
    return out


def _summary(v: Verdict) -> SeedSummary | None:
    return None if v.mean is None else SeedSummary(v.mean, v.std, v.n, v.mean_low, v.mean_high)


def spread(v: Verdict) -> str:
    """``76.02 ± 0.41 (5)``, ``76.02 (1)`` for one seed, as ``check --tolerance seeds`` prints it."""
    if v.mean is None:
        return DASH
    return f"{fmt(v.mean)}{'' if v.std is None else f' ± {fmt(v.std)}'} ({v.n})"


def reproduction_table(rep: Reproduction) -> Table:
    """One row per published task and Avg.: mean ± std (n), published, difference [decision's interval], MDE, verdict."""
    e = rep.entry
    rows = []
    for v in rep.verdicts:
        published = e.format(v.published) + (SELECTION_MARK if e.selection else "")
        cells = verdict_cells(v, DASH)
        margin = DASH if v.margin is None else decide.signed(v.margin, rep.difference)
        status = v.status + (f" ({v.note})" if v.note else "")
        rows.append([short_name(v.task), spread(v), published, *cells, margin, status])
    columns = [
        "cell" if rep.address else "task",
        "mean ± std (n)",
        "published",
        "mean − published [95%]",
        "MDE 80%",
        "margin",
        "verdict",
    ]
    mode = f"{rep.mode} results" if rep.mode else f"no results comparable with its {e.split} split"
    notes = [f"{e.cite}, row '{e.row}'; {rep.group.label}: {mode}."]
    if e.selection_note:
        notes.append(
            f"{SELECTION_MARK} {e.selection_note}: the checkpoint that scored best on the test sets "
            "themselves; stsbench selects on STS-B dev."
        )
    if rep.compared_with:
        notes.append(f"Compared with {rep.compared_with}.")
    asked = rep.address or e.key
    title = f"{rep.group.label} vs {asked}"
    right = tuple(columns[1:6])
    return make_table(f"reproduction_{asked}", title, columns, rows, notes, right)


def summary_table(reps: Sequence[Reproduction]) -> Table:
    """One row per target: how many of its cells have each verdict."""
    columns = ["group", "published row", *VERDICTS]
    rows = [[r.group.label, r.address or r.entry.key, *[str(c) for c in r.counts().values()]] for r in reps]
    return make_table("reproduction", "Verdicts", columns, rows)


def rule(difference: float) -> str:
    """The verdicts in words, for the section's paragraph."""
    return (
        "Each published figure beside the mean over seeds of the group that reproduces it, and the verdict "
        "`stsbench check --tolerance seeds` gives (one function, `stsbench.published.seed_check.verdict`, on the "
        "one rule of docs/uncertainty.md): the 95% t-interval of mean − published over the seeds' unrounded "
        "figures, widened for a published figure of k runs ((m − P) ± t·s·√(1/n + 1/k), k = 1 unless the registry "
        "says how many runs it is, assuming the paper's seed spread equals ours; a best-of-K figure by the exact "
        "law of (m − P − Δ)/s, its quantiles a committed table) and for the figures' resolution (a transfer "
        "accuracy moves in steps of 100/N: s² + h²/12), "
        f"read against the difference that matters, δ = {difference:.2f} points. *reproduced*: the "
        "interval lies inside ±δ; *not reproduced*: it lies entirely outside ±δ; *inconclusive*: otherwise, and "
        "with fewer than 3 seeds whatever the spread (MDE 80%: the smallest difference the seeds detect); *not "
        "comparable*: computed on modified data. Margin: how far the deciding end of the interval lies from ±δ "
        "(negative: how far an inconclusive one is from a verdict). An Avg. is judged only where the seeds' Avg. "
        "is over the row's tasks."
    )


def reproduction_json(
    reps: Sequence[Reproduction], difference: float, claims: Sequence[Any] = ()
) -> dict[str, Any]:
    """The section as JSON: the settings, one object per target with every cell's numbers and verdict.

    ``claims``: the report's judged claims (:class:`stsbench.stats.claims.ClaimResult`), with their statements.
    """
    from stsbench.results.runs import LEVEL

    out = {
        "kind": REPRODUCTION_KIND,
        "schema_version": 2,  # 2: rule 3; a cell's low/high its decision's, the mean's as mean_low/mean_high
        "rule": decide.RULE_VERSION,  # stsbench.stats.decide's: what a verdict meant when it was made
        "difference": difference,
        "level": LEVEL,
        "power": decide.POWER,
        "targets": [r.to_dict() for r in reps],
    }
    if claims:
        out["claims"] = [c.to_dict() for c in claims]
    out["deltas"] = {"cells": difference, "claims": sorted({c.delta for c in claims if c.delta is not None})}
    return out


def check_cells(
    results_dir: Any, address: str, difference: float = decide.CELL_DELTA, group: str | None = None
) -> Reproduction:
    """``stsbench check`` of a cell, or a row without task columns: the one group of seeds under ``results_dir``.

    The report's reading of the folder (models, training runs, seed groups) and :func:`reproduce_cells`, so that
    ``check`` and the report's Reproduction section give one verdict. ``group``: which, where the folder holds
    several (``check --model``: a group's name, its method or its seeds' folder).
    """
    coll = collect(results_dir)
    models = find_models(coll)
    groups = report_groups(coll, models)
    if group is not None:
        chosen = named_group(groups, group, f"--model {group}")
    elif len(groups) == 1:
        chosen = groups[0]
    else:
        names = ", ".join(g.name for g in groups) or "none"
        raise StsbenchError(
            f"{results_dir} holds {len(groups)} groups of seeds ({names}); name one with --model, "
            "or give the folder of one run's seeds"
        )
    return reproduce_cells(coll.tasks, chosen, address, difference)
