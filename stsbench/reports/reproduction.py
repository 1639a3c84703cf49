"""The Reproduction and Claims sections: published rows beside the groups that reproduce them, the claims judged.

A target names one published registry row (``stsbench published list``) and, optionally, the report's group
that reproduces it (:class:`Target`; on the command line ``--against KEY`` or ``--against GROUP=KEY``). A group
is named as :func:`~stsbench.reports.seeds.baseline_group` names one (its method, e.g. ``ESimCSE``, its name, or
its seeds' folder, e.g. ``esimcse``) or, for a model not trained here, by its label or a name its results were run
with (``all-MiniLM-L6-v2``). A target without a group takes the one group the score tables set that row beside
(:func:`~stsbench.reports.scores.published_for`: a model's own rows by name: a released checkpoint's); none or several
is a one-line error asking for ``GROUP=KEY``.

Each published task (and the Avg., where the seeds' Avg. is over the row's tasks) gets the verdict of
:func:`stsbench.published.check.verdict`, the function ``stsbench check --tolerance seeds`` calls, on the
group's figures (one per seed) in the first mode comparable with the row (test, then STS's fasttest; or dev).
A cell whose figures were computed on modified data is ``not comparable``, as ``check`` refuses such seeds.

The published cells a report sets beside its runs (:func:`report_cells`): those the recipe declares, then those
``--against`` names. One fact, one place: a recipe says which row or cell each of its runs (each point of a
sweep) is held against, and its reproduction keeps that with the results (:mod:`stsbench.results.runs`). The
Ablations tables and the sweep figures set that cell beside the setting, the same address the Reproduction
section judges; a report of results without a recipe sets beside a group only what ``--against`` names for it.

The Claims part (``report --claims``): a claims file is a YAML list of claims (:mod:`stsbench.stats.claims`:
argmax, ordering, difference, gap, plateau, collapse), each naming the report's groups as its settings, as
``--against GROUP=KEY`` names them (a method, a group's name, or its seeds' folder: a recipe's run name), and the
figure it is about (a task's score in a mode, or ``best-dev``, the training's own best STS-B dev Spearman,
``final-dev``, its last dev evaluation's (what a collapse is read from: MoCoSE Figures 5-6), ``Avg.``, the papers'
mean of the seven STS tasks, ``Transfer Avg.``, the mean of the seven transfer tasks, or an analysis figure
``VARIANT:ROW:COLUMN``, a row and column of the report's table over seeds, e.g. ``length_bias_tokens:gap (LD <= 3
minus LD > 3):Avg.``). Each group gives one figure per seed, keyed by the seed its training ran with, so that two
groups trained on the same seeds are compared seed by seed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError, validation_line
from stsbench.files import read_yaml
from stsbench.metrics import AVG
from stsbench.progress import plural
from stsbench.published.check import (
    BEST_DEV,
    BEST_DEV_FIGURE,
    Figure,
    TaskFigures,
    Verdict,
    check_difference,
    comparable_tasks,
    is_cell_check,
    seed_values,
    task_resolution,
    verdict,
    verdict_cells,
)
from stsbench.published.check import cells as published_cells
from stsbench.published.registry import STS_TASKS, TRANSFER_TASKS, Entry, get_cell, split_cell
from stsbench.reports.collect import (
    FINAL_DEV,
    TRANSFER_AVG,
    AnalysisRecord,
    TaskRecord,
    TrainRun,
    analysis_figure,
    analysis_of,
    collect,
    find_models,
    with_task_figure,
)
from stsbench.reports.scores import SELECTION_MARK, TASKS_OF, comparable, modified_data, published_for
from stsbench.reports.seeds import SeedGroup, best_devs, modes_of, report_groups, seeds_folder, task_values
from stsbench.results.runs import LEVEL, read_recipe_runs
from stsbench.results.write import last_part
from stsbench.stats import decide, sequential
from stsbench.stats.claims import Claim, ClaimResult, judge
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


def everyone(groups: Sequence[SeedGroup]) -> str:
    """The groups' names, for a line that asks for one (``none`` without any)."""
    return ", ".join(g.name for g in groups) or "none"


def named_group(groups: Sequence[SeedGroup], name: str, asked: str) -> SeedGroup:
    """The one group called ``name`` (:func:`group_names`); else one line starting with ``asked``, the request."""
    found = [g for g in groups if name in group_names(g)]
    if len(found) == 1:
        return found[0]
    what = "no group" if not found else f"{len(found)} groups ({', '.join(g.name for g in found)})"
    raise StsbenchError(f"{asked}: {what} of this report named {name!r}; groups: {everyone(groups)}")


def find_group(groups: Sequence[SeedGroup], target: Target) -> SeedGroup:
    """The group ``target`` names, else the one the score tables set its row beside; one line otherwise."""
    if target.group is not None:
        return named_group(groups, target.group, f"--against {target.group}={target.key}")
    row = split_cell(target.key)[0]
    beside = [g for g in groups if any(row == e.key for k in TASKS_OF for e in published_for(g.models[0], k))]
    if len(beside) == 1:
        return beside[0]
    what = "no group of this report is set beside it" if not beside else f"{len(beside)} groups could be"
    raise StsbenchError(
        f"--against {target.key}: {what}; name the group as GROUP={target.key} (groups: {everyone(groups)})"
    )


def _kind(entry: Entry) -> str:
    kinds = {task_kind(t) for t in comparable_tasks(entry)}
    if len(kinds) != 1:
        raise StsbenchError(f"{entry.key} mixes STS and transfer tasks; compare it with `stsbench check`")
    return kinds.pop()


def looked(
    v: Verdict,
    by_seed: Mapping[int, float],
    runs: int,
    best_of: int | None,
    until: int | None,
    resolution: float = 0.0,
) -> Verdict:
    """``v`` judged by the sequential plan of at most ``until`` seeds where it covers the cell.

    Covered: a published figure of one run, every seed's figure there and finite; the others as ``v``, by the rule.
    """
    figures = list(by_seed.values())
    if until is None or runs != 1 or best_of or not figures or not all(map(math.isfinite, figures)):
        return v
    if v.status in (decide.NOT_CHECKED, decide.MISSING, decide.NOT_COMPARABLE):
        return v
    at = sequential.plan(until, "cell")
    stopped = sequential.path_cell(by_seed, v.published, v.difference, at, v.task, resolution)
    return replace(v, decision=decide.noted(stopped.decision, stopped.describe(at)))


def reproduce(
    records: list[TaskRecord],
    group: SeedGroup,
    entry: Entry,
    difference: float = decide.CELL_DELTA,
    until: int | None = None,
) -> Reproduction:
    """Every published figure of ``entry`` against ``group``'s seeds (see the module docstring).

    ``until``: the seeds were added by the sequential plan of at most that many (:func:`looked`).
    """
    difference = check_difference(difference)
    kind = _kind(entry)
    published = comparable_tasks(entry)
    mode = next((m for m in modes_of(records, group, kind) if comparable(entry, kind, m)), None)
    averaged = TASKS_OF[kind]
    found = task_values(records, group, kind, mode, raw=True) if mode else {}
    values = {t: list(by_seed.values()) for t, by_seed in found.items()}
    modified = {
        (t, m) for (key, m, t) in modified_data(records, kind) if key in {x.key for x in group.models}
    }
    cells = []
    runs = {"runs": entry.runs, "best_of": entry.best_of}
    for column, pub in (published | {c: v for c, v in entry.values.items() if c == AVG}).items():
        over = averaged if column == AVG else (column,)
        checked = column != AVG or set(published) == set(averaged)
        h = task_resolution(over)
        seeds = list(found.get(column, {}))
        v = verdict(
            column,
            pub,
            values.get(column, []),
            difference,
            checked=checked,
            resolution=h,
            seeds=seeds,
            **runs,
        )
        v = looked(v, found.get(column, {}), entry.runs, entry.best_of, until, h)
        bad = any((t, mode) in modified for t in over) and v.values and v.status != decide.NOT_CHECKED
        cells.append(v.with_status(decide.NOT_COMPARABLE) if bad else v)
    return Reproduction(entry, group, mode, tuple(cells), difference)


def group_figures(
    records: Sequence[TaskRecord], group: SeedGroup
) -> tuple[dict[int, TaskFigures], dict[int, float]]:
    """Each seed's unrounded task figures ``{(task, mode): raw}`` and its training's best dev x100, unrounded.

    Seeds keyed by :attr:`SeedGroup.seed_ids` (a model not trained here: 0); a result run twice counts with its
    last, in path order.
    """
    by_model = {m.key: seed for seed, m in zip(group.seed_ids, group.models, strict=True)}
    tasks: dict[int, dict[tuple[str, str], float]] = {}
    for rec in records:
        r = rec.result
        if r.model.fingerprint in by_model:
            tasks.setdefault(by_model[r.model.fingerprint], {})[(r.task, r.mode)] = r.raw
    return tasks, best_devs(group.runs)


def reproduce_cells(
    records: Sequence[TaskRecord],
    group: SeedGroup,
    address: str,
    difference: float = decide.CELL_DELTA,
    until: int | None = None,
) -> Reproduction:
    """The cells ``address`` names against ``group``'s seeds, by the cell rule (:mod:`stsbench.published.check`).

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
        h = task_resolution(c.figure.tasks) if c.figure is not None else 0.0
        runs = {"runs": c.entry.runs, "best_of": c.entry.best_of, "resolution": h}
        checked = c.figure is not None
        v = verdict(
            c.column,
            c.published,
            list(values.values()),
            difference,
            checked=checked,
            seeds=list(values),
            **runs,
        )
        v = looked(v, values, c.entry.runs, c.entry.best_of, until, h)
        dec = (
            decide.capped(v.decision, note, decide.CAP_NOT_FINITE) if cap else decide.noted(v.decision, note)
        )
        verdicts.append(replace(v, decision=dec))
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
    until: int | None = None,
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
            out.append(reproduce_cells(records, group, t.key, difference, until))
        else:
            out.append(reproduce(records, group, get_cell(t.key)[0], difference, until))
    return out


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
    first = "cell" if rep.address else "task"
    columns = [first, "mean ± std (n)", "published", "mean − published [95%]", "MDE 80%", "margin", "verdict"]
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
        "`stsbench check --tolerance seeds` gives (one function, `stsbench.published.check.verdict`, on the "
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
    reps: Sequence[Reproduction],
    difference: float,
    claims: Sequence[Any] = (),
    until: int | None = None,
    refine: bool = False,
) -> dict[str, Any]:
    """The section as JSON: the settings, one object per target with every cell's numbers and verdict.

    ``claims``: the report's judged claims (:class:`stsbench.stats.claims.ClaimResult`), with their statements;
    ``until``: the sequential plan's maximum the claims were judged by (its looks, constants and table recorded;
    ``refine`` recorded where the plan went on until each size was shown).
    """
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
    if until is not None:
        out["sequential"] = sequential.plan(until).to_dict() | ({"refine": True} if refine else {})
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
        raise StsbenchError(
            f"{results_dir} holds {len(groups)} groups of seeds ({everyone(groups)}); name one with --model, "
            "or give the folder of one run's seeds"
        )
    return reproduce_cells(coll.tasks, chosen, address, difference)


# -- the published cells beside the runs ---------------------------------------------------------------------


Cells = Mapping[str, Sequence[str]]  # a run's seeds folder -> the addresses it is held against, in order
# what a row (not a cell) shows beside a setting: its Avg. (MoCoSE's tables), else its STS-B figure (ESimCSE's dev)
ROW_FIGURES = ("Avg.", "STSBenchmark")


def report_cells(
    folders: Iterable[str | Path], reproductions: Sequence[Reproduction] = ()
) -> dict[str, list[str]]:
    """Each run's addresses: its recipe's (``recipe_runs.json`` in ``folders``), then ``--against``'s.

    By seeds' folder; a group of a model not trained here by its name.
    """
    cells = {name: list(run.published) for name, run in read_recipe_runs(folders).items() if run.published}
    for rep in reproductions:
        found = cells.setdefault(seeds_folder(rep.group.runs[0]) if rep.group.runs else rep.group.name, [])
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
        source = f"{entry.paper.citation}; {entry.version or 'version not stated'}"
        tables.setdefault(source, []).append(entry.table)
    return "; ".join(f"{source}: {', '.join(dict.fromkeys(t))}" for source, t in tables.items())


# -- the Claims section --------------------------------------------------------------------------------------


def parse_claims(data: Any, where: str) -> list[Claim]:
    """Claims from a parsed YAML list; one line naming the claim and the key at the first that is refused."""
    from pydantic import TypeAdapter, ValidationError

    if not isinstance(data, list):
        raise StsbenchError(f"{where}: a claims file is a YAML list of claims (docs/uncertainty.md, Claims)")
    adapter = TypeAdapter(Claim)
    claims = []
    for i, item in enumerate(data, start=1):
        try:
            claim = adapter.validate_python(item)
        except ValidationError as exc:
            raise StsbenchError(f"{where}: claim {i}: {validation_line(exc)}") from None
        claims.append(with_task_figure(claim, f"{where}: claim {i}"))
    return claims


def load_claims(path: Path) -> list[Claim]:
    """The claims of a YAML file (``report --claims``); a missing or malformed file is one line."""
    data = read_yaml(path, f"--claims {path}", "a YAML list of claims")
    return parse_claims(data, f"--claims {path}")


def claim_figure(claim: Claim) -> Figure:
    """The figure a claim is about, as the cell rule names figures (:class:`stsbench.published.check.Figure`)."""
    if claim.figure == BEST_DEV:  # a claim's figure: the training's own best STS-B dev Spearman x100
        return BEST_DEV_FIGURE
    mode = "dev" if claim.mode == "dev" else "test"  # test: read as Figure.modes says (STS: fasttest too)
    if claim.figure == AVG:  # the papers' Avg.: the mean of the seven STS figures as printed
        return Figure("avg", STS_TASKS, mode)
    if claim.figure == TRANSFER_AVG:  # the transfer tables' Avg.: the mean of the seven accuracies
        return Figure("avg", TRANSFER_TASKS, mode)
    return Figure("task", (claim.figure,), mode)


def seed_figures(
    records: Sequence[TaskRecord], group: SeedGroup, claim: Claim, analyses: Sequence[AnalysisRecord] = ()
) -> dict[int, float]:
    """``{seed: figure}`` of one group for the claim's figure (a model not trained here: seed 0).

    The cells' rule (:func:`stsbench.published.check.seed_values`) on the group's figures: a claim and a cell
    about the same figure read the same numbers. An analysis figure: each seed's value of that row and column
    among the analysis' figures of its ``analyses`` records of the variant (the report's table over seeds).
    """
    if claim.figure == FINAL_DEV:
        return final_devs(group)
    parsed = analysis_figure(claim.figure)
    if parsed is None:
        return seed_values(claim_figure(claim), *group_figures(records, group))
    variant, row, column = parsed
    analysis = analysis_of(variant)
    out: dict[int, float] = {}
    for model, seed in zip(group.models, group.seed_ids, strict=True):
        for rec in (r for r in analyses if r.variant == variant and r.model.fingerprint == model.key):
            value = next(
                (n.value for n in analysis.numbers(rec.result) if (n.row, n.column) == (row, column)), None
            )
            if value is not None:
                out[seed] = value
    return out


def final_devs(group: SeedGroup) -> dict[int, float]:
    """``{seed: STS-B dev x100 at the run's last logged evaluation}`` (unrounded) of the group's trained models."""
    out: dict[int, float] = {}
    for model, seed in zip(group.models, group.seed_ids, strict=True):
        # the last evaluation, NaN included (a dev Spearman logged null: constant embeddings, a collapse)
        curve = [math.nan if v is None else v for _, v in model.run.curve] if model.run is not None else []
        if curve:
            out[seed] = curve[-1] * 100
    return out


def judge_claims(
    claims: Sequence[Claim],
    records: Sequence[TaskRecord],
    groups: Sequence[SeedGroup],
    analyses: Sequence[AnalysisRecord] = (),
    delta: float = decide.DELTA,
    until: int | None = None,
    refine: bool = False,
) -> list[ClaimResult]:
    """Each claim judged on its groups' unrounded figures (an unknown group is one line, before anything is drawn).

    A group with no training run (a released checkpoint, the backbone) is a model not trained here: one fixed
    figure. ``delta``: the recipe's difference that matters, where a claim gives none; ``until``: the seeds were
    added by the sequential plan of at most that many, ``refine`` until each size was shown
    (:func:`stsbench.stats.claims.judge`).
    """
    results = []
    for claim in claims:
        found = {name: named_group(groups, name, f"a claim names {name!r}") for name in claim.settings()}
        scores = {name: seed_figures(records, g, claim, analyses) for name, g in found.items()}
        fixed = [name for name, g in found.items() if not g.runs]
        h = task_resolution(claim_figure(claim).tasks) if analysis_figure(claim.figure) is None else 0.0
        results.append(
            judge(claim, scores, fixed=fixed, delta=delta, resolution=h, until=until, refine=refine)
        )
    return results


def _figure(result: ClaimResult) -> str:
    words = {BEST_DEV: "best STS-B dev (training)", FINAL_DEV: "last STS-B dev (training)"}
    return words.get(result.figure, result.figure)


def _margin(margin: float | None, nearest: str | None = None, delta: float | None = None) -> str:
    if margin is None:
        return DASH
    far = f" from {nearest}" if nearest and margin < 0 else ""
    return decide.signed(margin, delta or decide.DELTA) + far


def _delta(r: ClaimResult) -> str:
    if r.delta is None:
        return "bound"
    return fmt(r.delta) + (f" ({r.delta_reason})" if r.delta_reason else "")


def _tally(words: list[str], order: Sequence[str]) -> str:
    """``2 supported; 1 inconclusive``: how many of ``words`` are each of ``order``'s, those present."""
    return "; ".join(f"{words.count(v)} {v}" for v in order if v in words)


def verdict_words(result: ClaimResult) -> str:
    """A claim's verdict with its qualifier (which statements by more, which by less than δ)."""
    return result.verdict + (f" ({result.qualifier})" if result.qualifier else "")


def claims_table(results: Sequence[ClaimResult]) -> Table:
    """One row per claim: what it says, its figure, δ, its verdict and margin, and how often each setting was best."""
    rows = []
    for i, r in enumerate(results, start=1):
        best = ", ".join(f"{s} {p:.2f}" for s, p in (r.best_probability or {}).items()) or DASH
        counts = _tally([s.outcome for s in r.statements], decide.STATEMENT_WORDS)
        verdict = f"**{r.verdict}**" + (f" ({r.qualifier})" if r.qualifier else "")
        margin = _margin(r.margin, delta=r.delta)
        rows.append([str(i), r.text or r.kind, r.kind, _figure(r), _delta(r), verdict, margin, counts, best])
    verdicts = _tally([r.verdict for r in results], decide.CLAIM_VERDICTS)
    # rounded up at the third decimal, less a float's excess: one claim's 0.025000000000000022 is 0.025
    bound = math.ceil(decide.false_contradiction(len(results)) * 1000 - 1e-9) / 1000
    columns = ["#", "claim", "kind", "figure", "δ", "verdict", "margin", "statements", "P(best)"]
    notes = [
        f"{plural(len(results), 'claim')} judged: {verdicts}. If every one were true, or reversed by less "
        f"than δ, the chance that at least one is contradicted falsely is at most {bound:.3f} (each at most "
        f"{decide.ALPHA / 2:.3f}). "
        "Each claim expands to statements, each an interval over seeds of its difference on unrounded "
        "figures (paired on the seeds the settings share, partly paired or Welch otherwise, a gap as one "
        "contrast, one-sample against a model not trained here), read against δ, the difference that "
        "matters: A > B is supported, by more than δ (the interval above δ), supported (above 0, reaching "
        "δ), supported, by less than δ (above 0, below δ), no difference that matters (inside ±δ, across 0), "
        "reversed, by less than δ, reversed, reversed, by more than δ (below -δ, Holm over the claim's "
        "statements), inconclusive otherwise; fewer than 3 seeds is at most inconclusive. A claim is "
        "contradicted when one statement is reversed by more than δ (a plateau's pair beyond its margin, a "
        "collapse's setting not below its bound), takes its statements' word when they share one, is "
        "supported (reversed) when every statement shows that direction (which by more or less than δ said "
        "beside it), inconclusive otherwise (docs/uncertainty.md, One rule). Margin: how far the deciding "
        "end of an interval lies from its threshold (negative: how far an inconclusive one is from a "
        "decision; none where every statement is decided but their words differ). P(best): how likely each "
        "setting has the highest mean, drawn from the seeds' t distributions on the statements' own "
        "estimator (20,000 draws, the figures' resolution included, ties split): a description, not a test."
    ]
    return make_table("claim-verdicts", "Claims and their verdicts", columns, rows, notes=notes)


def statements_table(results: Sequence[ClaimResult]) -> Table:
    """One row per statement: its design, difference and 95% interval, the p it rests on, MDE, margin and verdict."""
    rows = []
    for i, r in enumerate(results, start=1):
        delta = r.delta or decide.DELTA

        def sg(x: float | None, delta: float = delta) -> str:
            return DASH if x is None else decide.signed(x, delta)

        for s in r.statements:
            span = DASH if s.low is None else f"[{sg(s.low)}, {sg(s.high)}]"
            if s.low is not None and s.look is not None:  # a sequential look's repeated interval, named so
                span += f" (look at {s.look}, {decide.percent(s.interval.level)})"
            seeds = DASH if s.interval is None else "/".join(str(n) for n in s.interval.n)
            rests = s.p_holm is not None and (s.outcome in decide.REFUTING or s.nearest in decide.REFUTING)
            p = f"{s.p_holm:.3g}" if rests else DASH
            mde = fmt(s.mdd, decide.decimals(delta))
            verdict = s.outcome + (f" ({s.note})" if s.note else "")
            margin = _margin(s.margin, s.nearest, delta)
            rows.append([str(i), s.what, s.test or DASH, seeds, sg(s.diff), span, p, mde, margin, verdict])
    repeated = any(s.look is not None for r in results for s in r.statements)  # seeds the plan stopped
    interval = "interval (repeated at its look)" if repeated else "95% interval"
    its = (
        "its interval: the repeated interval of the look the sequential plan stopped it at (its look and level "
        "beside it), wider than a fixed-n 95% interval"
        if repeated
        else "its 95% interval"
    )
    notes = [
        "diff: the measured difference on unrounded figures, positive in the claimed direction (a bound: "
        f"threshold - mean; a plateau: the first setting - the second), with {its}; p (refuting, "
        "Holm): where a statement's verdict rests on it, the p of its refuting outcome (A > B: reversed by more "
        "than δ, diff < -δ; a plateau: |diff| > δ; a bound: above it), one-sided, doubled, Holm-adjusted within "
        "the claim (the refuting word needs it below 0.05); MDE: the smallest difference the seeds detect with "
        "80% power."
    ]
    published = [(i, r.published) for i, r in enumerate(results, start=1) if r.published is not None]
    notes += [f"Claim {i}: the paper reports a difference of {fmt(p)}." for i, p in published]
    refuting = "p (refuting, Holm)"
    columns = ["#", "statement", "test", "seeds", "diff", interval, refuting, "MDE", "margin"]
    title, right = "Claims, statement by statement", ("seeds", refuting)
    return make_table("claim-statements", title, [*columns, "verdict"], rows, notes=notes, right=right)
