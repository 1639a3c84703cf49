"""Training runs as tables: one row per run, and ablation tables built by comparing the runs' configs.

Runs are grouped by the config fields that differ between them (bookkeeping such as ``output`` or
``threads`` aside):

- **components** (ESimCSE arXiv Table 6, COLING Table 4): runs identical in every shared setting that
  differ in which of ESimCSE's components they use (SimCSE, word repetition only, momentum contrast only,
  ESimCSE), where the settings of a component agree between the runs that use it;
- **sweeps** (arXiv Tables 8-11): runs of the same components identical in everything but one field, e.g.
  ``dup_rate`` or ``queue_multiple``; the fields of a component the run does not use are not compared.

The training file is compared by its name and row count, not its path (a relative and an absolute path,
or another machine's, name the same corpus).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stsbench.metrics import simcse_average
from stsbench.published.registry import STS_TASKS, get_entry, load_registry
from stsbench.reports.collect import TaskRecord, TrainRun
from stsbench.reports.models import Model, method_of, method_rank
from stsbench.results.labels import last_part
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table
from stsbench.train.config import BOOKKEEPING, OPTIONS, MethodName

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
    if run.method != MethodName.ESIMCSE:
        return False, False
    return bool(run.config.get("repetition", True)), float(run.config.get("queue_multiple", 2.5)) > 0


def settings(run: TrainRun) -> dict[str, Any]:
    """The fields that change the outcome, without those of a component the run does not use."""
    rep, mom = components_used(run)
    skip = set(BOOKKEEPING) | set(COMPONENT_FIELDS)
    skip |= _other_methods_fields(run.method)
    if not rep:
        skip |= set(REPETITION_FIELDS)
    if not mom:
        skip |= set(MOMENTUM_FIELDS)
    out = {k: v for k, v in sorted(run.config.items()) if k not in skip}
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
    runs = [r for r in runs if r.method in (MethodName.SIMCSE, MethodName.ESIMCSE)]
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


def sts_average(run: TrainRun, models: list[Model], records: Iterable[TaskRecord]) -> float | None:
    """The STS test Avg. (7 tasks, SimCSE's rounding) of the run's checkpoint, when every task was measured."""
    model = next((m for m in models if m.run is run), None)
    if model is None:
        return None
    values = {
        r.result.task: r.result.reported
        for r in records
        if r.result.model.fingerprint == model.key
        and r.result.task_type == "sts"
        and r.result.mode in ("test", "fasttest")
    }
    return simcse_average([values.get(t) for t in STS_TASKS])


def run_label(run: TrainRun, models: list[Model], runs: list[TrainRun]) -> str:
    """Name a run as the tables name its checkpoint, else by its folder (its path when names clash)."""
    for m in models:
        if m.run is run:
            return m.label
    return run.path if sum(r.name == run.name for r in runs) > 1 else run.name


def labelled_runs(runs: list[TrainRun], models: list[Model]) -> dict[str, TrainRun]:
    """``{label: run}`` in path order, as the training-curves figure names them."""
    return {run_label(r, models, runs): r for r in sorted(runs, key=lambda r: r.path)}


def show_value(v: Any) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    return DASH if v is None else f"{v:g}" if isinstance(v, float) else str(v)


def training_table(runs: list[TrainRun], models: list[Model]) -> Table:
    """One row per run: method, data, steps, best STS-B dev Spearman and when, wall time."""
    columns = [
        "run",
        "method",
        "backbone",
        "train rows",
        "steps",
        "batch",
        "lr",
        "best dev",
        "at step",
        "wall (min)",
    ]
    rows = []
    for r in sorted(runs, key=lambda r: (method_rank(method_of(r.config)), run_label(r, models, runs))):
        c = r.config
        steps = (
            f"{r.steps_done}" if r.steps_done is not None else f"unfinished (of {show_value(r.total_steps)})"
        )
        rows.append(
            [
                run_label(r, models, runs),
                method_of(c),
                last_part(str(c.get("model", DASH))),
                show_value(r.train_rows),
                steps,
                show_value(c.get("batch_size")),
                show_value(c.get("lr")),
                fmt(r.best_dev_spearman, 2, 100),
                show_value(r.best_step),
                fmt(r.wall_seconds, 1, 1 / 60),
            ]
        )
    notes = [
        "best dev: the STS-B dev Spearman x100 of the kept checkpoint (the trainer's evaluation every "
        "eval_steps; the step-0 score before training is logged, never kept)."
    ]
    return make_table("training_runs", "Training runs", columns, rows, notes)


def kept_dev(run: TrainRun) -> float | None:
    """The kept checkpoint's STS-B dev Spearman x100, at the papers' 2 decimals."""
    return None if run.best_dev_spearman is None else round(run.best_dev_spearman * 100, 2)


def dev_at_start(run: TrainRun) -> float | None:
    """The backbone's STS-B dev Spearman x100 before training (the step-0 evaluation), if logged."""
    first = [v for s, v in run.curve if s == 0 and v is not None]
    return round(first[0] * 100, 2) if first else None


def _gain(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def component_table(group: list[TrainRun], models: list[Model], records: list[TaskRecord], n: int) -> Table:
    """ESimCSE arXiv Table 6 / COLING Table 4 layout: STS-B dev by component, gains over SimCSE beside the paper's."""
    columns = list(COMPONENT_COLUMNS)
    simcse = next((r for r in group if method_of(r.config) == "unsup-SimCSE"), None)
    pub_simcse = get_entry(PUBLISHED_COMPONENTS["unsup-SimCSE"]).values["STSBenchmark"]
    rows = []
    for r in group:
        rep, mom = components_used(r)
        method = method_of(r.config)
        key = PUBLISHED_COMPONENTS.get(method)
        pub = get_entry(key).values["STSBenchmark"] if key else None
        rows.append(
            [
                run_label(r, models, group),
                method,
                "on" if rep else "off",
                "on" if mom else "off",
                fmt(dev_at_start(r)),
                fmt(kept_dev(r)),
                fmt_delta(_gain(kept_dev(r), kept_dev(simcse))) if simcse else DASH,
                fmt(pub),
                fmt_delta(_gain(pub, pub_simcse)),
                fmt(sts_average(r, models, records)),
            ]
        )
    same = shared(group[0])
    notes = [
        "STS-B dev Spearman x100: before training (the backbone) and of each run's kept checkpoint; gains are "
        "over the SimCSE run of the same settings. Published: esimcse-arxiv/table6/* (BERT-base, 1M wiki "
        "sentences). STS test Avg.: the run's checkpoint on the 7 STS tasks, when measured.",
        "Shared settings: " + ", ".join(f"{k}={show_value(v)}" for k, v in same.items()) + ".",
    ]
    return make_table(f"ablation_components_{n}", "Ablation: ESimCSE's components", columns, rows, notes)


def _published_sweep(name: str, value: Any) -> tuple[str, float] | None:
    reg = load_registry()
    if name == "dup_rate":
        e = reg["esimcse-arxiv/table9/dup-rate"]
        col = f"dup_rate={value:g}"
        return (e.key, e.values[col]) if col in e.values else None
    if name == "queue_multiple":
        e = reg.get(f"esimcse-arxiv/table11/queue-{value:g}x")
        return (e.key, e.values["STSBenchmark"]) if e else None
    if name == "repetition_kind" and value in REPETITION_KIND_ROWS:
        e = reg[f"esimcse-arxiv/table10/{REPETITION_KIND_ROWS[value]}"]
        return e.key, e.values["STSBenchmark"]
    if name == "dropout":
        e = reg["esimcse-arxiv/table8/dropout-p"]
        col = f"p={value:g}"
        return (e.key, e.values[col]) if col in e.values else None
    return None


def sweep_table(
    name: str, group: list[TrainRun], models: list[Model], records: list[TaskRecord], n: int
) -> Table:
    """One field varied, everything else equal: STS-B dev per value (published ESimCSE row where there is one)."""
    columns = ["run", name, "best dev", "at step", "STS test Avg.", "published dev", "published key"]
    rows = []
    for r in group:
        v = settings(r)[name]
        pub = _published_sweep(name, v) if r.method == MethodName.ESIMCSE else None
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
    same = {k: v for k, v in settings(group[0]).items() if k != name}
    notes = [
        f"{method} runs identical but for {name}; STS-B dev Spearman x100 of each kept checkpoint.",
        "Other settings: " + ", ".join(f"{k}={show_value(v)}" for k, v in same.items()) + ".",
    ]
    return make_table(f"ablation_{name}_{n}", f"Ablation: {name} ({method})", columns, rows, notes)


def ablation_tables(runs: list[TrainRun], models: list[Model], records: list[TaskRecord]) -> list[Table]:
    """Every component ablation and every one-field sweep the runs allow, in that order."""
    tables = [component_table(g, models, records, k) for k, g in enumerate(component_groups(runs), 1)]
    tables += [sweep_table(f, g, models, records, k) for k, (f, g) in enumerate(sweep_groups(runs), 1)]
    return tables
