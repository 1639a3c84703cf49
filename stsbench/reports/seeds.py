"""Runs that differ only in their seed, read as one group: its values over seeds, statistics and figures.

Two training runs are seeds of one another when their configs are equal once ``seed`` and the bookkeeping
fields (``output``, ``threads``, ``device``...: :data:`stsbench.train.config.BOOKKEEPING`) are left out, the
training file compared by name and row count as the ablation tables do, and their checkpoints were evaluated
with the same pooler. ``stsbench train --seeds 1,2,3 --output OUT`` makes such runs (``OUT/seed-<s>/``); so do
runs trained one by one with ``--seed``. A model without a training run under the results (a backbone) is a
group of one.

Every table of the report is over these groups: a model without seeds (or with one) is a group of one, its
cells the figures as measured; a group of several seeds shows ``mean ± std`` (:func:`mean_std`) and the 95%
interval over seeds (:func:`interval`). Statistics over seeds (a seed is one draw of the training's
randomness) come from :mod:`stsbench.stats.seeds`: mean, sample std and the t-interval of the mean. Here too:

- the differences to the baseline group (:func:`seed_differences`): each group of two seeds or more against
  the baseline group, the difference of the seed means on unrounded figures with its 95% interval, the design
  following the seeds (paired on the seeds the two groups share, Welch for disjoint ones), read against δ by
  the one rule's two-sided words (:func:`stsbench.stats.decide.two_sided`: a difference that matters, no
  difference that matters, inconclusive); :func:`difference_table` marks ``*`` where the difference matters by
  its interval and by Holm over the tasks of p(|diff| > δ) (:func:`stsbench.stats.decide.family`; the Avg.
  outside the family);
- an analysis over the seeds of a run (:func:`seeded`, :func:`seeds_table`): a recipe runs every analysis on
  every seed (:func:`stsbench.reproduce.plan.analysis_steps`), and each figure of the analysis (its registry
  entry's :meth:`~stsbench.analyses.registry.Analysis.numbers`, laid out as the paper's table) is summarised
  over the group's seeds by :func:`stsbench.stats.seeds.seed_summary`, as a score is; every seed's value goes
  to a CSV beside the figures, and the headline figures are drawn seed by seed with their mean and interval;
- the figures that show spread (seaborn): seeds as points with their mean and interval, dev-curve bands,
  forest plots. Pure functions: rows of numbers in, ``<stem>.png`` and ``<stem>.svg`` out (written by
  ``stsbench.analyses.figures.save``: fixed dpi, fixed SVG hash salt, no date or software in the metadata).
  Every interval drawn is computed here, never by seaborn's bootstrap (which draws from numpy's global random
  state): the mean's t-interval over seeds, as in the tables, so the same results give the same bytes. Styles
  are set per figure (``seaborn.axes_style`` as a context), never globally, so other figures keep theirs.
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from stsbench.analyses import figures as afig
from stsbench.analyses.registry import Analysis, Number, short_name
from stsbench.errors import StsbenchError
from stsbench.metrics import AVG, raw_average, simcse_average
from stsbench.published.check import result_modes, task_resolution
from stsbench.published.registry import STS_TASKS, TRANSFER_TASKS
from stsbench.reports.collect import (
    METHOD_ORDER,
    AnalysisRecord,
    Collection,
    Model,
    TaskRecord,
    TrainRun,
    method_of,
    method_rank,
    write_csv,
)
from stsbench.results.runs import read_recipe_runs
from stsbench.results.schema import ModelInfo
from stsbench.results.write import base_label, last_part
from stsbench.stats import decide
from stsbench.stats.seeds import SeedSummary, seed_summary
from stsbench.tabular import DASH, Table, fmt, make_table
from stsbench.tasks.registry import task_columns
from stsbench.train.config import BOOKKEEPING

BASELINE = "unsup-SimCSE"  # the method the differences are taken against, unless --baseline says otherwise
# a group trained with select_on: sts-test (never our default)
TEST_SELECTED = " [selected on the STS test sets]"
LEVEL = 0.95
SIGNIFICANT = "*"  # the mark
TASKS_OF = {"sts": STS_TASKS, "transfer": TRANSFER_TASKS}


@dataclass(frozen=True)
class SeedGroup:
    """Models whose training runs differ only in the seed (a model not trained here: a group of one)."""

    name: str  # the method, with the seeds' folder in brackets where two groups share a method
    method: str | None
    models: tuple[Model, ...]  # one per seed, in seed order

    @property
    def n(self) -> int:
        """How many seeds (checkpoints) the group has."""
        return len(self.models)

    @property
    def test_selected(self) -> bool:
        """Its checkpoints were kept by the seven STS test sets (``select_on: sts-test``, MoCoSE's official way)."""
        return any(r.config.get("select_on") == "sts-test" for r in self.runs)

    @property
    def label(self) -> str:
        """What tables and figures call the group: ``unsup-SimCSE (n=5)``; a group of one its model's label.

        A group whose checkpoints were selected on the test sets says so (:data:`TEST_SELECTED`), wherever shown.
        """
        label = f"{self.name} (n={self.n})" if self.n > 1 else self.models[0].label
        return label + (TEST_SELECTED if self.test_selected else "")

    @property
    def runs(self) -> list[TrainRun]:
        """The seeds' training runs, in seed order."""
        return [m.run for m in self.models if m.run is not None]

    @property
    def seeds(self) -> list[Any]:
        """Each model's training seed."""
        return [m.run.config.get("seed") if m.run else None for m in self.models]

    @property
    def seed_ids(self) -> list[int]:
        """Each model's key in ``{seed: figure}`` (:func:`seed_ids`)."""
        return seed_ids(self.seeds)


def seed_ids(seeds: Sequence[Any]) -> list[int]:
    """The keys in ``{seed: figure}`` of models with these training seeds: each seed; with none at all, each place.

    A place could equal a seed of the same group (seeds ``[3, None]`` would key the second 1), so a group that
    mixes models with and without an int seed is refused (one line); a group none of whose models has one (a
    model not trained here: 0) is keyed by place. Two models of one seed share its key (a run again is not
    another seed).
    """
    seeded = [isinstance(s, int) and not isinstance(s, bool) for s in seeds]
    if all(seeded):
        return list(seeds)
    if not any(seeded):
        return list(range(len(seeds)))
    raise StsbenchError(
        f"seeds {list(seeds)}: a group mixes trained models with and without an int seed; "
        "give each of its runs' config a seed"
    )


def best_devs(runs: Sequence[TrainRun]) -> dict[int, float]:
    """``{seed: the kept checkpoint's STS-B dev Spearman x100, unrounded}`` of the runs (what tests read).

    A run whose every evaluation was NaN (collapsed from the start) has no best: NaN (0 for the rule, named).
    """
    return {
        seed: math.nan if run.best_dev_spearman is None else run.best_dev_spearman * 100
        for seed, run in zip(seed_ids([r.config.get("seed") for r in runs]), runs, strict=True)
        if run.best_dev_spearman is not None or run.curve
    }


def compared_config(run: TrainRun, skip: Container[str]) -> dict[str, Any]:
    """The run's resolved config without ``skip``, by key; its training file by name and row count.

    The same corpus has other paths on other machines: reports compare it by what it is, never where it lies.
    """
    config = {k: v for k, v in sorted(run.resolved_config.items()) if k not in skip}
    if config.get("train_file"):
        config["train_file"] = f"{last_part(str(config['train_file']))} ({run.train_rows} rows)"
    return config


def seed_key(run: TrainRun, pooler: str) -> str:
    """What two seeds of one setting share: the config without seed and bookkeeping, and the eval pooler."""
    return repr((list(compared_config(run, {*BOOKKEEPING, "seed"}).items()), pooler))


def seeds_folder(run: TrainRun) -> str:
    """The seeds' folder: ``OUT`` for ``OUT/seed-<s>``, else the run's own folder."""
    parts = run.path.split("/")
    return parts[-2] if len(parts) > 1 and parts[-1].startswith("seed-") else parts[-1]


def seed_groups(models: list[Model], labels: Mapping[str, str] | None = None) -> list[SeedGroup]:
    """Group ``models`` (in their report order) by :func:`seed_key`; groups keep the order of their first model.

    A group is named by ``labels`` (its seeds' folder -> the label its recipe gives the run, :func:`declared_labels`),
    else by its method (with its seeds' folder in brackets where two groups share one), else its model's label.
    """
    buckets: dict[str, list[Model]] = {}
    for i, m in enumerate(models):
        key = seed_key(m.run, m.pooler) if m.run is not None else f"model {i}"
        buckets.setdefault(key, []).append(m)
    members = [
        tuple(sorted(ms, key=lambda m: (sort_value(m.run.config.get("seed")), m.label)) if ms[0].run else ms)
        for ms in buckets.values()
    ]
    methods = [ms[0].method for ms in members]
    groups = []
    labels = labels or {}
    for ms, method in zip(members, methods, strict=True):
        name = method or ms[0].label
        declared = labels.get(seeds_folder(ms[0].run)) if ms[0].run else None
        if declared:
            name = declared
        elif len(ms) > 1 and methods.count(method) > 1:
            name = f"{method} [{seeds_folder(ms[0].run)}]"
        groups.append(SeedGroup(name, method, ms))
    return groups


def declared_labels(folders: Sequence[str] | Sequence[Any]) -> dict[str, str]:
    """Each declared run's label by its seeds' folder (``recipe_runs.json`` in ``folders``; none without one)."""
    return {name: run.label for name, run in read_recipe_runs(folders).items() if run.label}


TRAINING_ONLY = "training run"  # the ModelInfo kind of a training run no result was computed from


def training_only(coll: Collection, models: list[Model]) -> list[Model]:
    """A model for each training run under the results of a setting none of whose seeds was evaluated.

    Its one figure is the training's own best STS-B dev score (a dev-set sweep: a recipe's ``evaluate: null``);
    it joins the groups of seeds, which claims and cells are judged on, never the score tables. A run whose
    setting has evaluated seeds stays out (a seed whose results were not kept is not one more seed of them).
    """
    used = {m.run.path for m in models if m.run is not None}
    evaluated = {seed_key(m.run, m.pooler) for m in models if m.run is not None}
    found = []
    for run in coll.runs:
        if run.path in used or seed_key(run, run.eval_pooler or "") in evaluated:
            continue
        where = run.output or run.path
        info = ModelInfo(
            where, where, f"{TRAINING_ONLY}:{run.path}", run.eval_pooler or "", None, "", TRAINING_ONLY
        )
        found.append(Model(base_label(where), where, info.pooler, info, run, method_of(run.config), (where,)))
    return sorted(found, key=lambda m: (method_rank(m.method), m.label))


def report_groups(
    coll: Collection, models: list[Model], labels: Mapping[str, str] | None = None
) -> list[SeedGroup]:
    """The report's groups of seeds: the evaluated models' and the training runs' alone (:func:`training_only`).

    ``labels``: the groups' names by seeds' folder (default: :func:`declared_labels` of the collection's folders).
    """
    labels = declared_labels(coll.folders) if labels is None else labels
    return seed_groups([*models, *training_only(coll, models)], labels)


def sort_value(v: Any) -> tuple[int, Any]:
    """A setting's sort key: numbers by value before every other value, by its text."""
    return (0, v) if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, str(v))


def has_seeds(groups: list[SeedGroup]) -> bool:
    """True when some group has two seeds or more (the report then shows seed statistics)."""
    return any(g.n > 1 for g in groups)


def baseline_group(groups: list[SeedGroup], baseline: str) -> SeedGroup | None:
    """The group of seeds named ``baseline``: a method as the tables name it, a group's name or its seeds' folder."""
    multi = [g for g in groups if g.n > 1]
    found = [g for g in multi if baseline in (g.name, g.method, seeds_folder(g.runs[0]) if g.runs else None)]
    if found:
        return found[0]
    if baseline not in METHOD_ORDER:
        names = sorted({g.name for g in multi} | set(METHOD_ORDER))
        raise StsbenchError(
            f"--baseline {baseline!r}: no such method or seed group; choose one of: {', '.join(names)}"
        )
    return None


def task_values(
    records: list[TaskRecord], group: SeedGroup, kind: str, mode: str, raw: bool = False
) -> dict[str, dict[int, float]]:
    """``{task: {seed: figure}}`` of one group, one task type and mode, and the Avg.; as printed unless ``raw``.

    A seed is its training's seed (a model not trained here: its place in the group; :func:`seed_ids`). A model
    with two results of one task (a folder copied or run twice) counts once, with its last result in path order:
    a result run again is not another seed. Also ``{seed: Avg.}`` under ``AVG`` for the seeds that have every
    task of the kind (:data:`TASKS_OF`): ``raw``, the plain mean of the unrounded figures (what tests read); else
    SimCSE's mean of the rounded figures, rounded (what tables print).
    """
    keys = {m.key: s for m, s in zip(group.models, group.seed_ids, strict=True)}
    out: dict[str, dict[int, float]] = {}
    for rec in records:
        r = rec.result
        if r.task_type == kind and r.mode == mode and r.model.fingerprint in keys:
            out.setdefault(r.task, {})[keys[r.model.fingerprint]] = r.raw if raw else r.reported
    out = {t: dict(sorted(vs.items())) for t, vs in out.items()}
    mean = raw_average if raw else simcse_average
    avgs = {
        s: mean([out.get(t, {}).get(s) for t in TASKS_OF[kind]])
        for s in sorted({s for vs in out.values() for s in vs})
    }
    out[AVG] = {s: v for s, v in avgs.items() if v is not None}
    return out


def _found(records: list[TaskRecord], groups: Sequence[SeedGroup], kind: str, what: str) -> set[str]:
    """The ``what`` (``mode``, ``task``) of the results of ``kind`` of any model of ``groups``."""
    keys = {m.key for g in groups for m in g.models}
    return {
        getattr(r.result, what)
        for r in records
        if r.result.task_type == kind and r.result.model.fingerprint in keys
    }


def modes_of(records: list[TaskRecord], group: SeedGroup, kind: str) -> list[str]:
    """The modes a group has results of, for one task type (test first, as the tables order them)."""
    order = {"test": 0, "fasttest": 1, "dev": 2}
    return sorted(_found(records, [group], kind, "mode"), key=lambda m: (order.get(m, 3), m))


def present_tasks(records: list[TaskRecord], groups: list[SeedGroup], kind: str) -> list[str]:
    """The tasks of ``kind`` some model of ``groups`` has results of, in column order."""
    found = _found(records, groups, kind, "task")
    return [t for t in task_columns(kind) if t in found]  # plugins' tasks too


def mode_label(name: str, mode: str) -> str:
    """A row's name, with its mode unless test."""
    return name if mode == "test" else f"{name} [{mode}]"


def mean_std(s: SeedSummary | None, n: int, digits: int = 2) -> str:
    """``79.97 ± 0.21``; the cell's own n where it has fewer seeds than its row; one value as it is."""
    if s is None:
        return DASH
    text = fmt(s.mean, digits) if s.std is None else f"{fmt(s.mean, digits)} ± {fmt(s.std, digits)}"
    return text if s.n == n else f"{text} (n={s.n})"


def interval(s: SeedSummary | None, digits: int = 2) -> str:
    """``[79.71, 80.23]``, a dash for one seed."""
    return DASH if s is None or s.low is None else f"[{fmt(s.low, digits)}, {fmt(s.high, digits)}]"


# --- rows for the figures ---------------------------------------------------------------------------------


def seed_points(
    records: list[TaskRecord], groups: list[SeedGroup], kind: str
) -> list[tuple[str, str, float]]:
    """(group label, task, value) of every seed of the groups of seeds, test (STS: or fasttest) results; Avg. last."""
    tasks = TASKS_OF[kind]
    rows: list[tuple[str, str, float]] = []
    for task in [*tasks, AVG]:
        for g in (g for g in groups if g.n > 1):
            mode = next((m for m in modes_of(records, g, kind) if m in result_modes("test", tasks)), None)
            if mode is None:
                continue
            values = task_values(records, g, kind, mode).get(task, {}).values()
            rows += [(g.label, short_name(task), v) for v in values]
    return rows


DEV_COLUMNS = ("group", "seed", "step", "dev_spearman_x100")


def labelled_seed_runs(
    groups: Sequence[SeedGroup], runs: Sequence[TrainRun], labels: Mapping[str, str]
) -> list[tuple[str, str, TrainRun]]:
    """(group label, seed as text, run) of every run, groups in report order: what the figures from logs draw.

    A run whose checkpoint was not evaluated (so is in no group) comes last, named by ``labels[run.path]``.
    """
    ordered = [(g.label, r) for g in groups for r in g.runs]
    seen = {id(r) for _, r in ordered}
    ordered += [(labels.get(r.path, r.name), r) for r in runs if id(r) not in seen]
    return [(label, "" if r.config.get("seed") is None else str(r.config["seed"]), r) for label, r in ordered]


def dev_points(groups: list[SeedGroup], runs: list[TrainRun], labels: dict[str, str]) -> list[list[str]]:
    """(group label, seed, step, STS-B dev x100) of every evaluation of every run (:func:`labelled_seed_runs`).

    Rows of text for the CSV beside the dev curves (:data:`DEV_COLUMNS`), which the figure is drawn from.
    """
    return [
        [label, seed, str(step), repr(value * 100)]
        for label, seed, run in labelled_seed_runs(groups, runs, labels)
        for step, value in run.curve
        if value is not None
    ]


# --- differences to the baseline group ---------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupDifference:
    """One group of seeds against the baseline group, per task (and Avg.): the interval and its decision."""

    group: SeedGroup
    mode: str
    cells: dict[str, decide.Decision | None]  # task or Avg. -> group - base, its interval and decision


def significant(cell: decide.Decision | None) -> bool:
    """Whether a difference gets the mark: it matters by its interval and by Holm over the tasks."""
    return cell is not None and decide.marked(cell)


def seed_differences(
    records: list[TaskRecord],
    groups: list[SeedGroup],
    base: SeedGroup,
    kind: str,
    delta: float = decide.DELTA,
) -> list[GroupDifference]:
    """Each other group of two seeds or more against ``base``, in the modes both have."""
    present = present_tasks(records, groups, kind)
    out = []
    for g in groups:
        if g.n < 2 or g is base:
            continue
        for mode in modes_of(records, g, kind):
            a, b = (task_values(records, x, kind, mode, raw=True) for x in (g, base))
            cells: dict[str, decide.Decision | None] = {}
            for t in [*present, AVG]:
                h = task_resolution(TASKS_OF[kind] if t == AVG else [t])
                iv = decide.difference(a[t], b[t], resolution=h) if a.get(t) and b.get(t) else None
                cells[t] = None if iv is None else decide.two_sided(iv, delta, t)
            tasks = [t for t in present if cells.get(t) is not None]
            cells.update(zip(tasks, decide.family([cells[t] for t in tasks]), strict=True))
            if any(c is not None for c in cells.values()):
                out.append(GroupDifference(g, mode, cells))
    return out


def _diff_cell(d: decide.Decision | None) -> str:
    if d is None:
        return DASH
    mark = SIGNIFICANT if significant(d) else ""
    delta = d.delta or decide.DELTA
    return f"{decide.signed(d.diff, delta)} [{decide.signed(d.low, delta)}, {decide.signed(d.high, delta)}]{mark}"


def _decision_cell(dec: decide.Decision) -> str:
    design = dec.interval.design
    words = dec.outcome + ("" if design == decide.PAIRED else f" ({design})")
    return words + (f", {dec.note}" if dec.note else "")


def p_value(p: float | None) -> str:
    """A p-value at 3 decimals, ``<0.001`` below, a dash for none."""
    return DASH if p is None else "<0.001" if p < 0.001 else f"{p:.3f}"


def difference_table(
    diffs: list[GroupDifference], base: SeedGroup, kind: str, delta: float = decide.DELTA
) -> Table | None:
    """The differences to the baseline group, their 95% intervals and decisions; None when there are none."""
    if not diffs:
        return None
    names = list(diffs[0].cells)
    columns = ["group", "method", *[short_name(t) for t in names]]
    rows = []
    for d in diffs:
        label = mode_label(f"{d.group.label} − {base.label}", d.mode)
        rows.append([label, d.group.method or DASH, *[_diff_cell(d.cells[t]) for t in names]])
        for what, cell in (
            (f"↳ against δ = {fmt(delta)}", _decision_cell),
            (
                "↳ p (beyond ±δ), Holm over the tasks",
                lambda c: p_value(c.p if c.p_holm is None else c.p_holm),
            ),
            ("↳ smallest detectable difference (80% power)", lambda c: fmt(c.mdd)),
        ):
            rows.append([what, "", *[DASH if c is None else cell(c) for c in d.cells.values()]])
    noun = "Spearman x100" if kind == "sts" else "accuracy x100"
    notes = [
        f"Difference of the seed means ({noun}, group − {base.name}, unrounded figures) with its 95% interval over "
        "seeds: paired on the seeds the two groups share, Welch where they share none (said beside the words). "
        f"Read against δ = {fmt(delta)} points, the difference that matters: 'a difference that matters' where "
        "the interval lies entirely beyond ±δ and Holm over the tasks agrees (p (|d| > δ) = 2·sf((|d| - δ)/se, df) "
        f"below 0.05, the Avg. its own p, outside the family; marked {SIGNIFICANT}), 'no difference that matters' "
        "where it lies inside ±δ, 'inconclusive' otherwise; fewer than 3 seeds is inconclusive whatever the "
        "spread; the printed interval is not adjusted (docs/uncertainty.md, One rule). The smallest detectable difference: the true difference these seeds would find with 80% power "
        "at 5%; a difference below it is untested, not absent."
    ]
    title = f"{kind.upper()}: difference to {base.name} over seeds"
    return make_table(f"{kind}_seed_differences", title, columns, rows, notes, tuple(columns[2:]))


# --- an analysis over seeds ----------------------------------------------------------------------------------

INTERVAL_ROW = "↳ 95% interval over seeds"
CSV_COLUMNS = ("group", "seed", "checkpoint", "figure", "column", "value")


@dataclass(frozen=True)
class SeededResults:
    """One group's results of one analysis variant: ``(seed, checkpoint label, result)`` in seed order."""

    group: SeedGroup
    seeds: tuple[tuple[Any, str, Any], ...]
    # each seed's ``Analysis.numbers``, in the order of ``seeds``, read once (:func:`seeded`)
    numbers: tuple[tuple[Number, ...], ...] = ()

    @property
    def label(self) -> str:
        """The group as the tables name it, with the number of seeds this analysis ran on."""
        suffix = TEST_SELECTED if self.group.test_selected else ""
        return f"{self.group.name} (n={len(self.seeds)}){suffix}"


def seeded(
    records: Sequence[AnalysisRecord], groups: Sequence[SeedGroup], analysis: Analysis
) -> list[SeededResults]:
    """The groups with two or more analysed seeds among ``records`` (one analysis, one variant), in group order.

    Each seed's figures (``analysis.numbers``) are read here, once, for the table, the CSV and the figure.
    """
    found = []
    for g in groups:
        keys = [m.key for m in g.models]
        mine = sorted(
            (r for r in records if r.model.fingerprint in keys),
            key=lambda r: (keys.index(r.model.fingerprint), r.path),
        )
        by_model: dict[str, AnalysisRecord] = {r.model.fingerprint: r for r in mine}  # a rerun: the last
        if len(by_model) > 1:
            seeds = tuple(
                (g.seeds[keys.index(k)], g.models[keys.index(k)].label, r.result) for k, r in by_model.items()
            )
            found.append(SeededResults(g, seeds, tuple(tuple(analysis.numbers(r)) for _, _, r in seeds)))
    return found


def _numbers(found: SeededResults) -> dict[tuple[str, str], tuple[Number, list[float]]]:
    """``(row, column) -> (its first Number, one value per seed that has it)``, in the analysis' order."""
    out: dict[tuple[str, str], tuple[Number, list[float]]] = {}
    for numbers in found.numbers:
        for n in numbers:
            first, values = out.setdefault((n.row, n.column), (n, []))
            if n.value is not None:
                values.append(n.value)
    return out


def seeds_table(analysis: Analysis, variant: str, found: Sequence[SeededResults]) -> Table | None:
    """Per group and figure row: mean ± std over the seeds per column, then the 95% interval row."""
    if not found:
        return None
    blocks = [(f, _numbers(f)) for f in found]
    columns = list(dict.fromkeys(c for _, nums in blocks for _, c in nums))
    rows = []
    for f, nums in blocks:
        for row in dict.fromkeys(r for r, _ in nums):
            cells = [nums.get((row, column), (None, [])) for column in columns]
            sums = [
                (seed_summary(values, LEVEL) if values else None, number.decimals if number else 2)
                for number, values in cells
            ]
            rows.append([f.label, row, *[mean_std(s, len(f.seeds), d) for s, d in sums]])
            rows.append([INTERVAL_ROW, "", *[interval(s, d) for s, d in sums]])
    notes = [
        f"A row `NAME (n=k)`: the {analysis.title.lower()} figures of k checkpoints trained identically but for "
        "the seed, each cell the mean ± sample std over the seeds (its own n where fewer seeds have it); the 95% "
        "interval is the t-interval of the mean over seeds, as the score tables' (stsbench.stats.seeds). "
        f"Every seed's value: `{csv_name(variant)}` beside the figures."
    ]
    title = f"{analysis.title} over seeds ({variant})"
    return make_table(
        f"{variant}_seeds", title, ["model", "figure", *columns], rows, notes, right=tuple(columns)
    )


def csv_name(variant: str) -> str:
    """The file every seed's values go to, in the report's figures folder."""
    return f"{variant}_seeds.csv"


def write_seed_values(found: Sequence[SeededResults], path: Path) -> Path:
    """Every seed's value of every figure (:data:`CSV_COLUMNS`), unrounded; atomically."""
    rows = (
        [f.label, seed, checkpoint, n.row, n.column, "" if n.value is None else repr(n.value)]
        for f in found
        for (seed, checkpoint, _), numbers in zip(f.seeds, f.numbers, strict=True)
        for n in numbers
    )
    return write_csv(path, CSV_COLUMNS, rows)


def headline_points(found: Sequence[SeededResults]) -> list[tuple[str, str, float]]:
    """(group label, figure, value) of every seed's headline figures: the seed figure's points."""
    return [
        (f.label, f"{n.row}: {n.column}", n.value)
        for f in found
        for numbers in f.numbers
        for n in numbers
        if n.headline and n.value is not None
    ]


# --- figures that show spread --------------------------------------------------------------------------------

# (label, difference, low, high, significant): one row of a forest plot
Difference = tuple[str, float, float, float, bool]


def seed_interval(values: Sequence[float]) -> tuple[float, float]:
    """The 95% t-interval of the mean over seeds (one seed: the value itself), as seaborn's ``errorbar``."""
    s = seed_summary(list(values), LEVEL)
    return (s.mean, s.mean) if s.low is None else (s.low, s.high)


def seaborn_module():
    """seaborn, imported after matplotlib's set-up (:func:`stsbench.analyses.figures.pyplot`)."""
    afig.pyplot()  # Agg backend and the fixed SVG hash salt
    import seaborn as sns

    return sns


@contextmanager
def figure_axes(*args: Any, style: str | None = "whitegrid", **kwargs: Any) -> Iterator[tuple[Any, Any]]:
    """A matplotlib figure and its axes (``plt.subplots(*args, **kwargs)``), laid out tight once drawn.

    ``style``: seaborn's, for this figure only (a context, never set globally, so other figures keep theirs);
    None: matplotlib's defaults.
    """
    plt = afig.pyplot()  # Agg backend and the fixed SVG hash salt
    with seaborn_module().axes_style(style) if style else nullcontext():
        fig, axes = plt.subplots(*args, **kwargs)
        yield fig, axes
        fig.tight_layout()


def palette(labels: list[str]) -> dict[str, tuple[float, float, float]]:
    """A colour per label (seaborn's colorblind palette, in the labels' order)."""
    sns = seaborn_module()
    return dict(zip(labels, sns.color_palette("colorblind", len(labels)), strict=False))


def ordered(values: Sequence[str]) -> list[str]:
    """The distinct values, in the order they first appear."""
    return list(dict.fromkeys(values))


def seed_points_figure(points: Sequence[tuple[str, str, float]], stem: Path) -> list[Path]:
    """One panel per task: each seed's figure as a point, the mean (diamond) and its 95% interval over seeds.

    ``points``: (group label, task, value) rows, in the order groups and tasks are to appear.
    """
    sns = seaborn_module()
    data = pd.DataFrame(list(points), columns=["group", "task", "value"])
    groups, tasks = ordered(data["group"]), ordered(data["task"])
    cols = min(4, len(tasks))
    rows = -(-len(tasks) // cols)
    colours = palette(groups)
    size = (2.4 * cols + 1.2, 0.5 + (0.3 * len(groups) + 0.6) * rows)
    with figure_axes(rows, cols, figsize=size, sharey=True, squeeze=False) as (fig, axes):
        for ax, task in zip(axes.flat, tasks, strict=False):
            sub = data[data["task"] == task]
            common = {"data": sub, "x": "value", "y": "group", "order": groups, "ax": ax}
            sns.pointplot(
                **common, estimator="mean", errorbar=seed_interval, color="black", markers="D",
                markersize=4, linestyle="none", linewidth=1.0, capsize=0.3,
            )  # fmt: skip
            sns.stripplot(
                **common, hue="group", hue_order=groups, palette=colours, jitter=False, size=5, alpha=0.7,
                linewidth=0.5, edgecolor="white", legend=False, zorder=3,
            )  # fmt: skip
            ax.set_title(task, fontsize=9)
            ax.set_xlabel("")
            ax.set_ylabel("")
            ax.tick_params(labelsize=7)
        for ax in list(axes.flat)[len(tasks) :]:
            ax.set_visible(False)
        fig.suptitle("Each seed (dots); mean and its 95% t-interval over seeds (black)", fontsize=9)
    return afig.save(fig, stem)


def dev_curves_figure(curves: Sequence[tuple[str, int, float]], stem: Path) -> list[Path]:
    """STS-B dev Spearman x100 against the step: the mean over each group's seeds and its 95% t-interval band.

    ``curves``: (group label, step, value) rows, one per evaluation of each seed's run.
    """
    sns = seaborn_module()
    data = pd.DataFrame(list(curves), columns=["group", "step", "value"])
    groups = ordered(data["group"])
    with figure_axes(figsize=(6.4, 3.8)) as (fig, ax):
        sns.lineplot(
            data=data, x="step", y="value", hue="group", hue_order=groups, palette=palette(groups),
            estimator="mean", errorbar=seed_interval, marker=".", ax=ax,
        )  # fmt: skip
        ax.set_xlabel("training step")
        ax.set_ylabel("STS-B dev Spearman x100")
        ax.set_title(
            "Dev curves: mean over seeds, band: its 95% t-interval (step 0: before training)", fontsize=8
        )
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=2)
    return afig.save(fig, stem)


def dev_curves_from_csv(data: Path, stem: Path) -> list[Path]:
    """:func:`dev_curves_figure` of the rows of the CSV beside it (:data:`stsbench.reports.seeds.DEV_COLUMNS`)."""
    frame = pd.read_csv(data, dtype={"group": str, "seed": str}, keep_default_na=False)
    rows = zip(
        frame["group"], frame["step"].astype(int), frame["dev_spearman_x100"].astype(float), strict=True
    )
    return dev_curves_figure(list(rows), stem)


def forest_plot(
    differences: Sequence[Difference],
    path: Path,
    xlabel: str = "difference",
    filled: str = "significant after Holm's correction",
) -> list[Path]:
    """A forest plot: one row per (label, difference, low, high, marked), top to bottom, zero marked.

    A marked row is drawn filled, the others hollow; ``filled`` says what the mark means (the title). Writes ``<path>.png`` and ``<path>.svg`` (a
    ``.png``/``.svg`` suffix of ``path`` is replaced) and returns them. ``stsbench compare`` draws its
    intervals with it; the report its differences over seeds.
    """
    rows = list(differences)
    if not rows:
        raise StsbenchError("forest plot: no differences to draw; give at least one (label, diff, low, high)")
    path = Path(path)
    stem = path.with_suffix("") if path.suffix in (".png", ".svg") else path
    with figure_axes(figsize=(6.4, 0.8 + 0.28 * len(rows))) as (fig, ax):
        ys = list(range(len(rows)))[::-1]
        for y, (_, diff, low, high, significant) in zip(ys, rows, strict=True):
            ax.hlines(y, low, high, color="black", linewidth=1.2)
            ax.plot([diff], [y], "o", color="black", markerfacecolor="black" if significant else "white")
        ax.axvline(0, color="grey", linestyle="--", linewidth=0.8)
        ax.set_yticks(ys)
        ax.set_yticklabels([r[0] for r in rows], fontsize=7)
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlabel(xlabel)
        ax.set_title(f"95% intervals; filled: {filled}", fontsize=8)
    return afig.save(fig, stem)
