"""Ablation tables: training runs compared by their configs (ESimCSE's components, one-field sweeps).

Runs are grouped by the config fields that differ between them (bookkeeping such as ``output`` or
``threads`` aside):

- **components** (ESimCSE arXiv Table 6, COLING Table 4): runs identical in every shared setting that
  differ in which of ESimCSE's components they use (SimCSE, word repetition only, momentum contrast only,
  ESimCSE), where the settings of a component agree between the runs that use it;
- **sweeps** (arXiv Tables 8-11): runs of the same components identical in everything but one field, e.g.
  ``dup_rate`` or ``queue_multiple``; the fields of a component the run does not use are not compared.

The training file is compared by its name and row count, not its path (a relative and an absolute path,
or another machine's, name the same corpus).

Runs that differ only in their seed (:mod:`stsbench.reports.seeds`) are one row of a component table: mean ±
std over the seeds, the gain over the SimCSE group with its interval by the one rule; without seeds each run is a row of
its own (a group of one), its gain a plain difference. The sweeps compare runs one by one and, when runs come
in seeds, leave out ``seed`` (the Seeds section shows each seed).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from typing import Any

from stsbench.published.registry import STS_TASKS, get_entry, load_registry
from stsbench.reports.collect import TaskRecord, TrainRun
from stsbench.reports.models import Model, method_of, method_rank
from stsbench.reports.seeds import (
    SIGNIFICANT,
    SeedGroup,
    average_values,
    has_seeds,
    interval,
    mean_std,
    seed_groups,
)
from stsbench.reports.training import dev_at_start, kept_dev, run_label, show_value
from stsbench.results.labels import last_part
from stsbench.stats import decide
from stsbench.stats.seeds import seed_summary
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table
from stsbench.train.config import BOOKKEEPING, OPTIONS

REPETITION_FIELDS = ("repetition_kind", "dup_rate", "repetition_sampling")
MOMENTUM_FIELDS = (
    "momentum",
    "momentum_init",
    "momentum_mlp",
    "momentum_update",
    "queue_multiple",
    "queue_reset_each_epoch",
    "queue_scope",
)
COMPONENT_FIELDS = ("method", "repetition")
# ESimCSE arXiv Table 6 (STS-B dev, BERT-base) by method
PUBLISHED_COMPONENTS = {
    "unsup-SimCSE": "esimcse-arxiv/table6/unsup-simcse-bert-base",
    "word repetition only": "esimcse-arxiv/table6/word-repetition",
    "momentum contrast only": "esimcse-arxiv/table6/momentum-contrast",
    "ESimCSE": "esimcse-arxiv/table6/esimcse-bert-base",
}
# the component table's columns (ESimCSE arXiv Table 6 and the paper's gains beside)
COMPONENT_COLUMNS = (
    "run",
    "method",
    "word repetition",
    "momentum contrast",
    "dev at step 0",
    "best dev",
    "gain over SimCSE",
    "published dev",
    "published gain",
    "STS test Avg.",
)
REPETITION_KIND_ROWS = {
    "subword": "sub-word-repetition",
    "word": "word-repetition",
    "stopword": "inserting-stop-words",
    "mask": "inserting-mask",
}


def _other_methods_fields(method: str) -> set[str]:
    """Options of other methods than ``method`` (its runs carry their defaults, or lack them if older)."""
    return {n for n, o in OPTIONS.items() if o.methods and method not in o.methods}


def components_used(run: TrainRun) -> tuple[bool, bool]:
    """(repetition, momentum contrast) as the run used them."""
    if run.method != "esimcse":
        return False, False
    return bool(run.config.get("repetition", True)), float(run.config.get("queue_multiple", 2.5)) > 0


def option_words(name: str) -> str:
    """A training option as the papers name it (its definition's label: ``EMA decay weight``), else its name."""
    option = OPTIONS.get(name)
    return (option.label if option is not None else None) or name


def titled(kind: str, name: str, method: str) -> str:
    """``Ablation: EMA decay weight (MoCoSE, ema_decay_start)``: the option's label, its name where they differ."""
    words = option_words(name)
    return f"{kind}: {words} ({method}{'' if words == name else f', {name}'})"


def settings(run: TrainRun) -> dict[str, Any]:
    """The fields that change the outcome, without those of a component the run does not use."""
    rep, mom = components_used(run)
    skip = set(BOOKKEEPING) | set(COMPONENT_FIELDS)
    skip |= _other_methods_fields(run.method)
    if not rep:
        skip |= set(REPETITION_FIELDS)
    if not mom:
        skip |= set(MOMENTUM_FIELDS)
    out = {k: v for k, v in sorted(run.resolved_config.items()) if k not in skip}
    if out.get("train_file"):  # by name and size: the same corpus has other paths on other machines
        out["train_file"] = f"{last_part(str(out['train_file']))} ({run.train_rows} rows)"
    return out


def shared(run: TrainRun) -> dict[str, Any]:
    """:func:`settings` without any ESimCSE field: what every method has."""
    return {k: v for k, v in settings(run).items() if k not in REPETITION_FIELDS + MOMENTUM_FIELDS}


def _compatible(a: TrainRun, b: TrainRun) -> bool:
    sa, sb = settings(a), settings(b)
    return shared(a) == shared(b) and all(sa[k] == sb[k] for k in sa.keys() & sb.keys())


def component_groups(runs: list[TrainRun]) -> list[list[TrainRun]]:
    """Groups of compatible runs that use at least two different combinations of ESimCSE's components."""
    groups: list[list[TrainRun]] = []
    # the runs ESimCSE's ablation compares
    runs = [r for r in runs if r.method in ("simcse", "esimcse")]
    for run in sorted(runs, key=lambda r: (method_rank(method_of(r.config)), r.path)):
        for g in groups:
            if all(_compatible(run, other) for other in g):
                g.append(run)
                break
        else:
            groups.append([run])
    return [g for g in groups if len({method_of(r.config) for r in g}) > 1]


def sweep_groups(runs: list[TrainRun]) -> list[tuple[str, list[TrainRun]]]:
    """(field, runs) for each set of runs of the same method and components that differ in one field only."""
    out = []
    fields = sorted({k for r in runs for k in settings(r)})
    for name in fields:
        buckets: dict[str, list[TrainRun]] = {}
        for r in runs:
            s = settings(r)
            if name not in s:
                continue
            rest = {k: v for k, v in s.items() if k != name}
            buckets.setdefault(repr((method_of(r.config), sorted(rest.items()))), []).append(r)
        for members in buckets.values():
            if len({repr(settings(r)[name]) for r in members}) > 1:
                out.append((name, sorted(members, key=lambda r: (_sort_value(settings(r)[name]), r.path))))
    return out


def _sort_value(v: Any) -> tuple[int, Any]:
    return (0, v) if isinstance(v, (int, float)) and not isinstance(v, bool) else (1, str(v))


def sts_averages(group: SeedGroup, records: list[TaskRecord]) -> list[float]:
    """The STS test Avg. (7 tasks, SimCSE's rounding) of each checkpoint of ``group`` measured on every task.

    Test results where any seed has them, else fasttest (the same figures).
    """
    for mode in ("test", "fasttest"):
        found = average_values(records, group, "sts", mode, STS_TASKS)
        if found:
            return found
    return []


def sts_average(run: TrainRun, models: list[Model], records: list[TaskRecord]) -> float | None:
    """The STS test Avg. of the run's checkpoint, when every task was measured (:func:`sts_averages`)."""
    found = sts_averages(SeedGroup("", None, tuple(m for m in models if m.run is run)), records)
    return found[0] if found else None


def _gain(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


# a component table's row: a group of seeds, or a run whose checkpoint was not evaluated
Row = SeedGroup | TrainRun


def _runs(row: Row) -> list[TrainRun]:
    return row.runs if isinstance(row, SeedGroup) else [row]


def _method(row: Row) -> str:
    return method_of(_runs(row)[0].config)


def _finite(values: Iterable[float | None]) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


def _summary(values: Iterable[float | None], n: int) -> str:
    """Mean ± std of the finite ``values`` (one value as it is), or a dash."""
    kept = _finite(values)
    return mean_std(seed_summary(kept), n) if kept else DASH


def _raw_devs(row: Row) -> dict[int, float]:
    """``{seed: the kept checkpoint's STS-B dev Spearman x100, unrounded}`` of a row's runs (what tests read)."""
    out = {}
    for i, run in enumerate(_runs(row)):
        if run.best_dev_spearman is not None and math.isfinite(run.best_dev_spearman):
            seed = run.config.get("seed")
            out[seed if isinstance(seed, int) else i] = run.best_dev_spearman * 100
    return out


def _gains(rows: Sequence[Row], over_seeds: bool) -> dict[int, str]:
    """Each row's gain over the SimCSE row: its interval over seeds by the one rule (``*``: it matters), else a difference."""
    simcse = next((r for r in rows if _method(r) == "unsup-SimCSE"), None)
    if simcse is None:
        return {}
    if not over_seeds:
        return {id(r): fmt_delta(_gain(kept_dev(_runs(r)[0]), kept_dev(_runs(simcse)[0]))) for r in rows}
    base = _raw_devs(simcse)
    out = {}
    for r in rows:
        iv = decide.difference(_raw_devs(r), base) if r is not simcse else None
        if iv is not None:
            mark = SIGNIFICANT * (decide.two_sided(iv, decide.DELTA).outcome == decide.MATTERS)
            out[id(r)] = f"{fmt_delta(iv.diff)} [{fmt_delta(iv.low)}, {fmt_delta(iv.high)}]{mark}"
    return out


def component_table(rows: Sequence[Row], records: list[TaskRecord], n: int) -> Table:
    """ESimCSE arXiv Table 6 / COLING Table 4 layout: STS-B dev by component, gains over SimCSE beside the paper's.

    One row per group of seeds (a run without seeds, or whose checkpoint was not evaluated, is a group of one).
    With a group of several seeds the cells are mean ± std over the seeds, each row is followed by its 95%
    interval, and a gain is the difference of the seed means with its interval by the one rule (between groups of two
    seeds or more); without, each cell is the run's own figure and a gain the plain difference.
    """
    over_seeds = any(isinstance(r, SeedGroup) and r.n > 1 for r in rows)
    columns = ["group" if over_seeds else "run", *COMPONENT_COLUMNS[1:]]
    pub_simcse = get_entry(PUBLISHED_COMPONENTS["unsup-SimCSE"]).values["STSBenchmark"]
    gains = _gains(rows, over_seeds)
    runs = [r for row in rows for r in _runs(row)]
    out = []
    for row in rows:
        seeds = _runs(row)
        size = row.n if isinstance(row, SeedGroup) else 1
        rep, mom = components_used(seeds[0])
        key = PUBLISHED_COMPONENTS.get(_method(row))
        pub = get_entry(key).values["STSBenchmark"] if key else None
        out.append(
            [
                row.label if isinstance(row, SeedGroup) else run_label(row, [], runs),
                _method(row),
                "on" if rep else "off",
                "on" if mom else "off",
                _summary(map(dev_at_start, seeds), size),
                _summary(map(kept_dev, seeds), size),
                gains.get(id(row), DASH),
                fmt(pub),
                fmt_delta(_gain(pub, pub_simcse)),
                _summary(sts_averages(row, records) if isinstance(row, SeedGroup) else [], size),
            ]
        )
        if over_seeds:
            devs = _finite(map(kept_dev, seeds))
            span = interval(seed_summary(devs) if devs else None)
            out.append(["↳ 95% interval over seeds", "", "", "", "", span, "", "", "", ""])
    first = _runs(rows[0])[0]
    same = shared(_without_seed(first) if over_seeds else first)  # over seeds, the rows differ in the seed
    settings_note = "Shared settings: " + ", ".join(f"{k}={show_value(v)}" for k, v in same.items()) + "."
    if not over_seeds:
        notes = [
            "STS-B dev Spearman x100: before training (the backbone) and of each run's kept checkpoint; gains are "
            "over the SimCSE run of the same settings. Published: esimcse-arxiv/table6/* (BERT-base, 1M wiki "
            "sentences). STS test Avg.: the run's checkpoint on the 7 STS tasks, when measured.",
            settings_note,
        ]
        return make_table(f"ablation_components_{n}", "Ablation: ESimCSE's components", columns, out, notes)
    notes = [
        "STS-B dev Spearman x100, mean ± std over each group's seeds: before training (the backbone) and of "
        "each seed's kept checkpoint. Gain: the difference of the seed means to the SimCSE group on unrounded "
        "figures with its 95% interval (paired on shared seeds, Welch for disjoint ones); "
        f"{SIGNIFICANT}: the interval lies beyond ±{decide.DELTA:g} points, a difference that matters "
        "(docs/uncertainty.md, One rule). Published: "
        "esimcse-arxiv/table6/* (BERT-base, 1M wiki sentences). STS test Avg.: over the seeds' checkpoints.",
        settings_note,
    ]
    title = "Ablation over seeds: ESimCSE's components"
    return make_table(f"ablation_components_seeds_{n}", title, columns, out, notes, right=tuple(columns[4:]))


def published_sweep_cell(name: str, value: Any, run: TrainRun | None = None) -> tuple[str, float] | None:
    """The published cell a swept setting of ``run``'s method is set beside (the papers' sweep tables)."""
    reg = load_registry()
    if run is not None and run.method == "simcse":  # the first preprint's tables: setup differs (v1)
        sup = bool(run.config.get("supervised"))
        key, col = {
            ("dropout", False): ("simcse/table4/dropout-p", f"p={value}"),
            ("batch_size", True): ("simcse/table8/batch-size", str(value)),
        }.get((name, sup), (None, None))
        if key is None:
            return None
        e = reg[key]
        return (f"{e.key}#{col} (v1, setup differs)", e.values[col]) if col in e.values else None
    if run is not None and run.method == "mocose":
        if name == "ema_decay_start" and run.config.get("ema_schedule") == "fixed":  # MoCoSE Table 3
            e = reg["mocose/table3/ema-decay"]
            col = f"ema={value:g}"
            return (f"{e.key}#{col}", e.values[col]) if col in e.values else None
        return None
    if run is not None and run.method != "esimcse":
        return None
    if name == "dup_rate":
        e = reg["esimcse-arxiv/table9/dup-rate"]
        col = f"dup_rate={value:g}"
        return (f"{e.key}#{col}", e.values[col]) if col in e.values else None
    if name == "queue_multiple":
        e = reg.get(f"esimcse-arxiv/table11/queue-{value:g}x")
        return (e.key, e.values["STSBenchmark"]) if e else None
    if name == "repetition_kind" and value in REPETITION_KIND_ROWS:
        e = reg[f"esimcse-arxiv/table10/{REPETITION_KIND_ROWS[value]}"]
        return e.key, e.values["STSBenchmark"]
    if name == "dropout":
        e = reg["esimcse-arxiv/table8/dropout-p"]
        col = f"p={value:g}"
        return (f"{e.key}#{col}", e.values[col]) if col in e.values else None
    return None


def sweep_seeds_table(
    name: str, rows: Sequence[SeedGroup], records: list[TaskRecord], n: int
) -> Table:
    """One field varied over groups of seeds: a row per setting, mean ± std (n) and the 95% interval over seeds.

    STS-B dev: each seed's kept checkpoint (the training's own best dev score, what a dev sweep table
    reports); STS test Avg.: over the seeds whose checkpoints were evaluated on the seven tasks. Published: the
    paper's cell of that setting (``KEY#COLUMN``), where the registry has the sweep.
    """
    columns = [option_words(name), "best dev mean ± std (n)", "95% interval", "STS test Avg. mean ± std (n)"]
    columns += ["published", "cell"]
    out = []
    for g in rows:
        runs = g.runs
        value = settings(runs[0])[name]
        devs = _finite(map(kept_dev, runs))
        pub = published_sweep_cell(name, value, runs[0])
        avgs = sts_averages(g, records)
        out.append(
            [
                show_value(value),
                mean_std(seed_summary(devs), -1) if devs else DASH,
                interval(seed_summary(devs) if devs else None),
                mean_std(seed_summary(avgs), -1) if avgs else DASH,
                fmt(pub[1]) if pub else DASH,
                pub[0] if pub else DASH,
            ]
        )
    method = method_of(rows[0].runs[0].config)
    notes = [
        f"{method} groups of seeds identical but for {name}: one row per setting; STS-B dev Spearman x100 of each "
        "seed's kept checkpoint (the training's own best dev score), mean ± std (n seeds) and the 95% t-interval "
        "over seeds. Published: the paper's cell for that setting (BERT-base in the papers).",
        _other_settings(_without_seed(rows[0].runs[0]), (name,)),
    ]
    title = titled("Sweep over seeds", name, method)
    return make_table(f"ablation_{name}_seeds_{n}", title, columns, out, notes, right=tuple(columns[1:5]))


def sweep_table(
    name: str, group: list[TrainRun], models: list[Model], records: list[TaskRecord], n: int
) -> Table:
    """One field varied, everything else equal: STS-B dev per value (published ESimCSE row where there is one)."""
    columns = ["run", option_words(name), "best dev", "at step", "STS test Avg.", "published dev", "published key"]
    rows = []
    for r in group:
        v = settings(r)[name]
        pub = published_sweep_cell(name, v, r)
        rows.append(
            [
                run_label(r, models, group),
                show_value(v),
                fmt(kept_dev(r)),
                show_value(r.best_step),
                fmt(sts_average(r, models, records)),
                fmt(pub[1]) if pub else DASH,
                pub[0] if pub else DASH,
            ]
        )
    method = method_of(group[0].config)
    notes = [
        f"{method} runs identical but for {name}; STS-B dev Spearman x100 of each kept checkpoint.",
        _other_settings(group[0], (name,)),
    ]
    title = titled("Ablation", name, method)
    return make_table(f"ablation_{name}_{n}", title, columns, rows, notes)


def grid_groups(runs: list[TrainRun]) -> list[tuple[str, str, list[TrainRun]]]:
    """(field, field, runs) for each set of runs equal but for two fields whose values form a full grid.

    At least two values of each field, every pair present once (a recipe's ``grid:``): MoCoSE's projection x
    predictor layers (Table 4).
    """
    out = []
    fields = sorted({k for r in runs for k in settings(r)})
    for i, a in enumerate(fields):
        for b in fields[i + 1 :]:
            buckets: dict[str, list[TrainRun]] = {}
            for r in runs:
                s = settings(r)
                if a in s and b in s:
                    rest = {k: v for k, v in s.items() if k not in (a, b)}
                    buckets.setdefault(repr((method_of(r.config), sorted(rest.items()))), []).append(r)
            for members in buckets.values():
                cells = {(repr(settings(r)[a]), repr(settings(r)[b])) for r in members}
                xs, ys = {x for x, _ in cells}, {y for _, y in cells}
                if len(xs) > 1 and len(ys) > 1 and len(cells) == len(members) == len(xs) * len(ys):
                    out.append((a, b, members))
    return out


def grid_table(a: str, b: str, groups: Sequence[SeedGroup], records: list[TaskRecord], n: int) -> Table:
    """A grid of groups of seeds: ``a`` down, ``b`` across, each cell mean ± std (n) of the groups' figure.

    The figure: the STS test Avg. where every group's seeds were evaluated on the seven tasks (MoCoSE's grids
    are STS averages), else each seed's best STS-B dev score.
    """
    avgs = {id(g): sts_averages(g, records) for g in groups}
    on_test = all(avgs[id(g)] for g in groups)
    value = {
        (repr(settings(g.runs[0])[a]), repr(settings(g.runs[0])[b])): (
            avgs[id(g)] if on_test else _finite(map(kept_dev, g.runs))
        )
        for g in groups
    }
    xs = sorted({settings(g.runs[0])[a] for g in groups}, key=_sort_value)
    ys = sorted({settings(g.runs[0])[b] for g in groups}, key=_sort_value)
    columns = [f"{a} ↓ {b} →", *[show_value(y) for y in ys]]
    out = []
    for x in xs:
        cells = []
        for y in ys:
            found = value.get((repr(x), repr(y)), [])
            cells.append(mean_std(seed_summary(found), -1) if found else DASH)
        out.append([show_value(x), *cells])
    method = method_of(groups[0].runs[0].config)
    what = "STS test Avg. (the seven tasks)" if on_test else "STS-B dev Spearman x100 of each seed's kept checkpoint"
    notes = [
        f"{method} groups of seeds identical but for {a} and {b}: each cell the {what}, mean ± std (n seeds).",
        _other_settings(_without_seed(groups[0].runs[0]), (a, b)),
    ]
    title = f"Grid over seeds: {a} x {b} ({method})"
    return make_table(f"ablation_{a}_{b}_grid_{n}", title, columns, out, notes, right=tuple(columns[1:]))


def _other_settings(run: TrainRun, varied: tuple[str, ...]) -> str:
    """A sweep's or grid's note: every setting of ``run`` but the ``varied`` ones."""
    same = {k: v for k, v in settings(run).items() if k not in varied}
    return "Other settings: " + ", ".join(f"{k}={show_value(v)}" for k, v in same.items()) + "."


def _without_seed(run: TrainRun) -> TrainRun:
    return dataclasses.replace(run, config={k: v for k, v in run.config.items() if k != "seed"})


Grid = tuple[int, tuple[str, str, list[SeedGroup]]]  # (k, (field, field, groups)): the k-th grid
Sweep = tuple[int, tuple[str, list[SeedGroup]]]  # (k, (field, groups)): the k-th one-field sweep


def seed_sweeps(groups: Sequence[SeedGroup]) -> tuple[list[Grid], list[Sweep]]:
    """The grids and one-field sweeps of groups of seeds, numbered as their tables.

    A sweep whose settings all lie in a grid is left to the grid's table.
    """
    rows = [g for g in groups if g.runs]
    stand_in = {id(row): _without_seed(row.runs[0]) for row in rows}
    back = {id(stand_in[id(row)]): row for row in rows}
    seeded = list(stand_in.values())
    grids = grid_groups(seeded)
    in_grid = {id(r) for _, _, g in grids for r in g}
    grid_rows = [(k, (a, b, [back[id(r)] for r in g])) for k, (a, b, g) in enumerate(grids, 1)]
    sweeps = [
        (k, (f, [back[id(r)] for r in g]))
        for k, (f, g) in enumerate(sweep_groups(seeded), 1)
        if f != "seed" and not all(id(r) in in_grid for r in g)  # a grid's rows and columns: in its table
    ]
    return grid_rows, sweeps


def ablation_tables(
    runs: list[TrainRun],
    models: list[Model],
    records: list[TaskRecord],
    groups: Sequence[SeedGroup] | None = None,
) -> list[Table]:
    """Every component ablation and every one-field sweep the runs allow, in that order.

    Where runs come in seeds (:func:`~stsbench.reports.seeds.has_seeds`), the component tables and the sweeps
    compare the groups of seeds (one run of each stands for it, its seed left out, so that groups of other seeds
    compare; a sweep: a row per setting over its seeds); without, every run is a row of its own. ``groups``: the
    report's groups of seeds (default: those of ``models``).
    """
    groups = list(groups) if groups is not None else seed_groups(models)
    over_seeds = has_seeds(groups)
    if over_seeds:
        rows: list[Row] = [g for g in groups if g.runs]
        stand_in = {id(row): _without_seed(_runs(row)[0]) for row in rows}
    else:
        by_run = {id(g.runs[0]): g for g in groups if g.runs}
        rows = [by_run.get(id(r), r) for r in runs]
        stand_in = {id(row): _runs(row)[0] for row in rows}
    back = {id(stand_in[id(row)]): row for row in rows}
    found = component_groups([stand_in[id(row)] for row in rows])
    tables = [component_table([back[id(r)] for r in g], records, k) for k, g in enumerate(found, 1)]
    if over_seeds:
        grids, swept = seed_sweeps(groups)
        tables += [grid_table(a, b, g, records, k) for k, (a, b, g) in grids]
        tables += [sweep_seeds_table(f, g, records, k) for k, (f, g) in swept]
        return tables
    tables += [sweep_table(f, g, models, records, k) for k, (f, g) in enumerate(sweep_groups(runs), 1)]
    return tables
