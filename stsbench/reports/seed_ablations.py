"""Ablation tables when runs come in seeds: ESimCSE's components as groups of seeds, one-field sweeps.

Without seeds, :func:`stsbench.reports.ablations.ablation_tables` compares runs one by one. With them,
the component table has one row per group of seeds (mean ± std of the kept checkpoints' STS-B dev, the
gain over the SimCSE group with Welch's interval) instead of one table per seed; the sweeps leave out
``seed`` (the seeds section shows each seed) and keep every other field.
"""

from __future__ import annotations

import dataclasses

from stsbench.published.registry import STS_TASKS, get_entry
from stsbench.reports.ablations import (
    COMPONENT_COLUMNS,
    PUBLISHED_COMPONENTS,
    ablation_tables,
    component_groups,
    components_used,
    dev_at_start,
    kept_dev,
    shared,
    show_value,
    sweep_groups,
    sweep_table,
)
from stsbench.reports.collect import TaskRecord, TrainRun
from stsbench.reports.models import Model
from stsbench.reports.seed_tables import SIGNIFICANT, interval, mean_std
from stsbench.reports.seeds import (
    ALPHA,
    SeedGroup,
    average_values,
    has_seeds,
    seed_groups,
)
from stsbench.stats.seeds import seed_difference, seed_summary
from stsbench.stats.tests import holm
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table


def _without_seed(run: TrainRun) -> TrainRun:
    return dataclasses.replace(run, config={k: v for k, v in run.config.items() if k != "seed"})


def _summary(values: list[float | None], n: int) -> str:
    kept = [v for v in values if v is not None]
    return mean_std(seed_summary(kept), n) if kept else DASH


def _sts_avgs(group: SeedGroup, records: list[TaskRecord]) -> list[float]:
    for mode in ("test", "fasttest"):
        found = average_values(records, group, "sts", mode, STS_TASKS)
        if found:
            return found
    return []


def component_seed_table(groups: list[SeedGroup], records: list[TaskRecord], n: int) -> Table:
    """ESimCSE arXiv Table 6 layout, a row per group of seeds; gains over the SimCSE group over seeds."""
    columns = ["group", *COMPONENT_COLUMNS[1:]]
    simcse = next((g for g in groups if g.method == "unsup-SimCSE"), None)
    pub_simcse = get_entry(PUBLISHED_COMPONENTS["unsup-SimCSE"]).values["STSBenchmark"]
    devs = {id(g): [v for v in (kept_dev(r) for r in g.runs) if v is not None] for g in groups}
    gains = {}
    for g in groups:
        if simcse is not None and g is not simcse and len(devs[id(g)]) > 1 and len(devs[id(simcse)]) > 1:
            gains[id(g)] = seed_difference(devs[id(g)], devs[id(simcse)])
    adjusted = dict(zip(gains, holm([d.p for d in gains.values()]), strict=True))
    rows = []
    for g in groups:
        rep, mom = components_used(g.runs[0])
        key = PUBLISHED_COMPONENTS.get(g.method or "")
        pub = get_entry(key).values["STSBenchmark"] if key else None
        d = gains.get(id(g))
        gain = DASH if d is None else f"{fmt_delta(d.diff)} [{fmt_delta(d.low)}, {fmt_delta(d.high)}]"
        if d is not None and adjusted[id(g)] <= ALPHA:
            gain += SIGNIFICANT
        avgs = _sts_avgs(g, records)
        rows.append(
            [
                g.label,
                g.method or DASH,
                "on" if rep else "off",
                "on" if mom else "off",
                _summary([dev_at_start(r) for r in g.runs], g.n),
                mean_std(seed_summary(devs[id(g)]), g.n) if devs[id(g)] else DASH,
                gain,
                fmt(pub),
                fmt_delta(None if pub is None else pub - pub_simcse),
                mean_std(seed_summary(avgs), g.n) if avgs else DASH,
            ]
        )
        rows.append(
            [
                "↳ 95% interval over seeds",
                "",
                "",
                "",
                "",
                interval(seed_summary(devs[id(g)]) if devs[id(g)] else None),
                "",
                "",
                "",
                "",
            ]
        )
    notes = [
        "STS-B dev Spearman x100, mean ± std over each group's seeds: before training (the backbone) and of "
        "each seed's kept checkpoint. Gain: the difference of the seed means to the SimCSE group with Welch's "
        f"95% interval; {SIGNIFICANT}: significant at 5% after Holm's correction across the rows. Published: "
        "esimcse-arxiv/table6/* (BERT-base, 1M wiki sentences). STS test Avg.: over the seeds' checkpoints.",
        "Shared settings: "
        + ", ".join(f"{k}={show_value(v)}" for k, v in shared(_without_seed(groups[0].runs[0])).items())
        + ".",
    ]
    return make_table(
        f"ablation_components_seeds_{n}",
        "Ablation over seeds: ESimCSE's components",
        columns,
        rows,
        notes,
        right=tuple(columns[4:]),
    )


def seed_ablation_tables(
    runs: list[TrainRun], models: list[Model], groups: list[SeedGroup], records: list[TaskRecord]
) -> list[Table]:
    """The component tables over groups of seeds, then every one-field sweep but ``seed``."""
    # one run of each group stands for it, its seed left out so that groups of other seeds compare
    reps = [(g, _without_seed(g.runs[0])) for g in groups if g.runs]
    back = {id(r): g for g, r in reps}
    found = component_groups([r for _, r in reps])
    tables = [component_seed_table([back[id(r)] for r in g], records, k) for k, g in enumerate(found, 1)]
    sweeps = [(f, g) for f, g in sweep_groups(runs) if f != "seed"]
    tables += [sweep_table(f, g, models, records, k) for k, (f, g) in enumerate(sweeps, 1)]
    return tables


def report_ablation_tables(
    runs: list[TrainRun], models: list[Model], records: list[TaskRecord]
) -> list[Table]:
    """The ablation tables as the report shows them: over groups of seeds where runs have seeds."""
    groups = seed_groups(models)
    if has_seeds(groups):
        return seed_ablation_tables(runs, models, groups, records)
    return ablation_tables(runs, models, records)
