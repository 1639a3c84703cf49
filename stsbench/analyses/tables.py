"""The analyses' report tables: pure functions, ``{label: result}`` in, :class:`Table` out.

The report shows them and the analysis commands print them (rendered with rich), so a column is defined
once and a missing value is shown one way (:data:`stsbench.tabular.DASH`).

- :func:`length_bias_table1` (ESimCSE arXiv Table 1), :func:`length_bias_table7` (COLING Table 7),
  :func:`repetition_table` (COLING Table 8), :func:`align_uniform_table`, :func:`spectrum_table`;
  :func:`length_bias_buckets_table` (the finer buckets, printed by the command only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stsbench.analyses.common import short_name
from stsbench.metrics import AVG
from stsbench.published.registry import get_entry, load_registry
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table

LENGTH_TABLE1 = "esimcse-arxiv/table1"
LENGTH_TABLE7 = (
    ("SimCSE", "esimcse-coling/table7/simcse-ld-gt-3", "esimcse-coling/table7/simcse-ld-le-3"),
    ("ESimCSE", "esimcse-coling/table7/esimcse-ld-gt-3", "esimcse-coling/table7/esimcse-ld-le-3"),
)
PROBE_ROWS = ("esimcse-coling/table8/simcse", "esimcse-coling/table8/esimcse")


def length_bias_table1(variant: str, results: dict[str, Any]) -> Table:
    """ESimCSE arXiv Table 1 layout: per dataset, Spearman (a fraction) of the pairs <= t and > t apart."""
    first = next(iter(results.values()))
    tasks = [d.task for d in first.datasets]
    lo, hi = (g.label for g in first.datasets[0].threshold_groups)
    published = first.threshold == 3
    columns = ["dataset"]
    if published:
        columns += ["SimCSE-BERT-base (published) <=3", "SimCSE-BERT-base (published) >3"]
    for label in results:
        columns += [f"{label} {lo}", f"{label} {hi}"]
    rows = []
    for k, task in enumerate(tasks):
        row = [short_name(task)]
        if published:
            entry = load_registry().get(f"{LENGTH_TABLE1}/{task.lower()}")
            row += [
                fmt(entry.values.get(c), 4) if entry else DASH
                for c in ("length diff <= 3", "length diff > 3")
            ]
        for r in results.values():
            d = r.datasets[k] if k < len(r.datasets) and r.datasets[k].task == task else None
            row += [fmt(g.spearman, 4) for g in d.threshold_groups] if d else [DASH, DASH]
        rows.append(row)
    notes = [
        f"Spearman correlation (a fraction, as the paper prints it) of the test pairs whose length difference "
        f"is {lo} or {hi} {first.unit}; over every pair of a task's subsets (SentEval's `all`).",
    ]
    if published:
        notes.append(
            f"Published: {LENGTH_TABLE1}/* (the official unsup-SimCSE-BERT-base; lengths in tokens"
            + (", here in words)." if first.unit == "words" else ").")
        )
    return make_table(
        f"{variant}_table1", f"Length bias, ESimCSE arXiv Table 1 layout ({first.unit})", columns, rows, notes
    )


def length_bias_table7(variant: str, results: dict[str, Any]) -> Table:
    """ESimCSE COLING Table 7 layout: mean |cos - normalised gold| x100 per dataset, LD > t then LD <= t."""
    first = next(iter(results.values()))
    tasks = [d.task for d in first.datasets]
    t = first.threshold
    columns = ["model", "group", *[short_name(x) for x in tasks], AVG, "gap"]
    rows = []
    if t == 3:
        for name, gt, le in LENGTH_TABLE7:
            pair = [get_entry(gt), get_entry(le)]
            gap = pair[1].values[AVG] - pair[0].values[AVG]
            for e, group, g in ((pair[0], "LD > 3", DASH), (pair[1], "LD <= 3", fmt_delta(gap))):
                row = [f"{name}-BERT-base (published)", group, *[fmt(e.values.get(x)) for x in tasks]]
                rows.append([*row, fmt(e.values.get(AVG)), g])
    for label, r in results.items():
        by_task = {d.task: d for d in r.datasets}
        averages = {a.label: a.mean_abs_diff for a in r.average}
        avg = [averages.get(g.label) for g in r.datasets[0].threshold_groups]  # <= t, > t
        shown = [None if a is None else round(a * 100, 2) for a in avg]
        gap = None if None in shown else shown[0] - shown[1]
        for idx, group, g in ((1, f"LD > {t}", DASH), (0, f"LD <= {t}", fmt_delta(gap))):
            cells = []
            for x in tasks:
                d = by_task.get(x)
                cells.append(fmt(d.threshold_groups[idx].mean_abs_diff, scale=100) if d else DASH)
            rows.append([label, group, *cells, fmt(shown[idx]), g])
        if r.bootstrap:  # one checkpoint: how much its pairs move the Avg. and the gap
            iv = r.bootstrap["intervals"]
            span = [_span(iv.get(f"LD > {t} Avg.")), _span(iv.get(f"LD <= {t} Avg."))]
            avg_cell = f"> {t}: {span[0]}; <= {t}: {span[1]}"
            rows.append([BOOTSTRAP_ROW, "", *[DASH] * len(tasks), avg_cell, _span(iv.get("gap"))])
    notes = [
        f"Mean |cos(u, v) - g'| x100 with the gold score normalised to [0, 1] (STS: g / 5, SICK-R: (g - 1) / 4); "
        f"LD: length difference in {first.unit}; Avg. over the datasets where the group has pairs. Lower is closer. "
        f"gap: Avg. of LD <= {t} minus Avg. of LD > {t} (the paper: SimCSE 1.84, ESimCSE 0.71; a smaller gap is a "
        "smaller length bias).",
    ]
    if any(r.bootstrap for r in results.values()):
        notes.append(
            f"{BOOTSTRAP_ROW}: the percentile interval of each group's Avg. and of the gap over 1,000 resamples of "
            "the pairs within each task's group (seed 0): what the test pairs move a checkpoint's figure by, not "
            "what a training seed does (the table over seeds gives that)."
        )
    if t == 3:
        notes.append(
            "Published: esimcse-coling/table7/* (BERT-base, token lengths"
            + ("; here words)." if first.unit == "words" else ").")
        )
    return make_table(
        f"{variant}_table7",
        f"Length bias, ESimCSE COLING Table 7 layout ({first.unit})",
        columns,
        rows,
        notes,
    )


BOOTSTRAP_ROW = "↳ 95% bootstrap interval over pairs (one checkpoint)"


def _span(interval: list[float] | None) -> str:
    return DASH if not interval else f"[{fmt(interval[0])}, {fmt(interval[1])}]"


def repetition_table(variant: str, results: dict[str, Any]) -> Table:
    """ESimCSE COLING Table 8 layout: mean sim(q, s1) and sim(q, s2) x100, measured and published."""
    columns = ["model", "Sim<q,s1>", "Sim<q,s2>", "difference", "triples"]
    rows = []
    for key in PROBE_ROWS:
        e = get_entry(key)
        a, b = e.values["Sim<q,s1>"], e.values["Sim<q,s2>"]
        rows.append([f"{e.row}-BERT-base (published)", fmt(a), fmt(b), fmt_delta(b - a), "100"])
    for label, r in results.items():
        rows.append(
            [label, fmt(r.mean_sim_q_s1), fmt(r.mean_sim_q_s2), fmt_delta(r.difference), str(r.n_triples)]
        )
    first = next(iter(results.values()))
    sample = (
        f"{first.n_triples} queries from {Path(first.corpus).name}, a candidate s1 with "
        f"{fmt(first.min_overlap, 0, 100)}-{fmt(first.max_overlap, 0, 100)} % {first.overlap_measure} overlap, "
        f"seed {first.seed}"
        if first.min_overlap is not None
        else f"{first.n_triples} triples read from {Path(first.triples_from or first.corpus).name}"
    )
    notes = [
        f"Mean cosine x100; s2 is s1 with every word it shares with q written twice. Here: {sample}.",
        "Published: esimcse-coling/table8/* (BERT-base, 100 wiki queries, 13-17 % overlap).",
    ]
    return make_table(variant, "Repetition probe, ESimCSE COLING Table 8 layout", columns, rows, notes)


def align_uniform_table(variant: str, results: dict[str, Any]) -> Table:
    """l_align and l_uniform per model (lower is better for both)."""
    first = next(iter(results.values()))
    columns = ["model", "l_align", "l_uniform", "positive pairs", "sentences"]
    rows = [
        [label, fmt(r.alignment, 4), fmt(r.uniformity, 4), str(r.n_positive_pairs), str(r.n_sentences)]
        for label, r in results.items()
    ]
    notes = [
        f"{short_name(first.task)} {first.split}: alignment over the pairs with gold > {first.positive_threshold:g}, "
        "uniformity over every pair of distinct sentences (Wang & Isola 2020; SimCSE Fig. 2)."
    ]
    return make_table(
        variant, f"Alignment and uniformity ({short_name(first.task)} {first.split})", columns, rows, notes
    )


def spectrum_table(variant: str, results: dict[str, Any]) -> Table:
    """Effective rank, top-component share and mean cosines per model (MoCoSE Fig. 7's numbers)."""
    first = next(iter(results.values()))
    columns = [
        "model",
        "dim",
        "erank raw",
        "erank centred",
        "top share raw",
        "top share centred",
        "rank",
        "mean cos (random pairs)",
        "mean cos (all pairs)",
    ]
    rows = [
        [
            label,
            str(r.dim),
            fmt(r.uncentred.effective_rank),
            fmt(r.centred.effective_rank),
            fmt(r.uncentred.top_share, 4),
            fmt(r.centred.top_share, 4),
            str(r.uncentred.numerical_rank),
            fmt(r.avg_cosine_random_pairs, 4),
            fmt(r.avg_cosine_all_pairs, 4),
        ]
        for label, r in results.items()
    ]
    notes = [
        f"Singular values of the {first.n_sentences} unique {short_name(first.task)} {first.split} sentence "
        "embeddings; erank: exp(entropy of s / sum s) (Roy & Vetterli); top share: s1^2 / sum s^2; "
        f"random pairs: {first.n_random_pairs}, seed {first.seed}. A flatter spectrum (higher erank, lower "
        "share) is a more isotropic space."
    ]
    return make_table(
        variant, f"Singular-value spectra ({short_name(first.task)} {first.split})", columns, rows, notes
    )


def length_bias_buckets_table(variant: str, label: str, result: Any) -> Table:
    """One model's Spearman x100 (and pairs) per finer bucket of the length difference."""
    columns = ["dataset", *result.buckets]
    rows = [
        [short_name(d.task), *[f"{fmt(g.spearman, scale=100)} ({g.n_pairs})" for g in d.buckets]]
        for d in result.datasets
    ]
    return make_table(
        f"{variant}_buckets",
        f"{label}: Spearman x100 (pairs) by |length difference| in {result.unit}",
        columns,
        rows,
    )


def density_table(variant: str, results: dict[str, Any]) -> Table:
    """Per model and gold-score group: pairs, mean cosine and its quartiles (SimCSE Fig. 4's numbers)."""
    first = next(iter(results.values()))
    columns = ["model", *[f"gold {g.label}" for g in first.groups], "pairs"]
    rows = []
    for label, r in results.items():
        cells = [
            DASH
            if g.mean is None
            else f"{fmt(g.mean, 3)} [{fmt(g.quartiles[0], 2)}, {fmt(g.quartiles[2], 2)}]"
            for g in r.groups
        ]
        rows.append([label, *cells, " / ".join(str(g.n_pairs) for g in r.groups)])
    notes = [
        f"Cosine of the {first.n_pairs} {short_name(first.task)} pairs ({first.split}) by gold score: the mean, "
        "then the first and third quartiles, per group (gold 0 to 1, 1 excluded, ... 4 to 5, 5 included); pairs "
        "per group in the last column. SimCSE Figure 4 draws these groups' densities."
    ]
    return make_table(
        variant, f"Cosine by gold score ({short_name(first.task)} {first.split})", columns, rows, notes
    )
