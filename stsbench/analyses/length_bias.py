"""Length bias: STS quality split by the length difference of the two sentences of a pair.

ESimCSE (arXiv) Table 1: Spearman of the pairs with length difference <= 3 and > 3. ESimCSE (COLING)
Tables 1 and 7: mean |cos(u, v) - g'| of each group, with the gold score normalised to [0, 1] as
``g' = (g - lo) / (hi - lo)`` (STS 0-5: g / 5; SICK-R 1-5: (g - 1) / 4), x100. Spearman here is over
every pair of a task's subsets concatenated (SentEval's ``all``). The length of a sentence is its number
of words (the tokenized SentEval text split on spaces) or of model tokens (the encoder's tokenizer, no
special tokens).

The whole analysis is here: the compute, the report's tables (:func:`length_bias_table1`, :func:`length_bias_table7`;
:func:`length_bias_buckets_table`, printed by the command only), its figure, its figures one by one
(:func:`length_bias_numbers`) and against a published entry (:func:`length_bias_published`), and
:class:`LengthBias`, its options and registry entry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic.dataclasses

from stsbench import metrics
from stsbench.analyses import DEFAULT_BUCKETS
from stsbench.analyses import figures as afig
from stsbench.analyses.figures import bars, x100
from stsbench.analyses.registry import LENGTH_TASKS, Analysis, Interval, Number, published_pairs, short_name
from stsbench.data.sts import Pairs, load_pairs
from stsbench.encoders.base import EmbeddingTable, Encoder, embed_table
from stsbench.errors import StsbenchError
from stsbench.metrics import AVG
from stsbench.options import option
from stsbench.published.registry import get_entry, load_registry
from stsbench.stats.bootstrap import percentile_interval, resample_counts
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table

Unit = Literal["words", "tokens"]


@dataclass(frozen=True)
class Bucket:
    """Length differences ``lo..hi`` (``hi`` None: ``lo`` and above)."""

    label: str
    lo: int
    hi: int | None


def parse_buckets(spec: str) -> list[Bucket]:
    """Parse ``"0,1-2,3-4,5-7,8+"``: buckets covering 0, 1, 2, ... without gaps or overlap, the last open."""
    hint = f"write them as {DEFAULT_BUCKETS!r}: ascending, from 0, without gaps, the last one N+"
    out: list[Bucket] = []
    for raw in (p.strip() for p in spec.split(",")):
        m = re.fullmatch(r"(\d+)(?:-(\d+)|(\+))?", raw)
        if not m:
            raise StsbenchError(f"bad length bucket {raw!r} in --buckets {spec!r}; {hint}")
        lo = int(m.group(1))
        hi = None if m.group(3) else int(m.group(2) or lo)
        if hi is not None and hi < lo:
            raise StsbenchError(f"bucket {raw!r} ends before it starts; {hint}")
        out.append(Bucket(raw, lo, hi))
    for prev, cur in zip(out, out[1:], strict=False):
        if prev.hi is None or cur.lo != prev.hi + 1:
            raise StsbenchError(f"buckets {prev.label!r} and {cur.label!r} leave a gap or overlap; {hint}")
    if out[0].lo != 0 or out[-1].hi is not None:
        raise StsbenchError(f"--buckets {spec!r} must start at 0 and end open (N+); {hint}")
    return out


def threshold_buckets(threshold: int) -> list[Bucket]:
    """Return the two groups of ESimCSE Table 1: ``<= t`` and ``> t``."""
    if threshold < 0:
        raise StsbenchError(f"--threshold must be 0 or more (got {threshold})")
    return [Bucket(f"<={threshold}", 0, threshold), Bucket(f">{threshold}", threshold + 1, None)]


@dataclass
class GroupScore:
    """One group of pairs. Values are raw (x100 for display); None where undefined, with ``reason``."""

    label: str
    lo: int
    hi: int | None
    n_pairs: int
    spearman: float | None  # cosine vs gold, in [-1, 1]
    mean_abs_diff: float | None  # mean |cos - normalised gold|
    mean_length_diff: float | None
    reason: str | None = None  # why ``spearman`` (and maybe ``mean_abs_diff``) is None


@dataclass
class DatasetLengthBias:
    """One task's pairs: overall, in the two threshold groups and in the finer buckets."""

    task: str
    split: str
    n_pairs: int
    gold_scale: tuple[float, float]
    gold_normalisation: str  # the formula applied, e.g. ``(g - 1) / 4``
    overall: GroupScore
    threshold_groups: list[GroupScore]
    buckets: list[GroupScore]


@dataclass
class GroupAverage:
    """A group's values averaged over the datasets where they are defined (Table 7's Avg. column)."""

    label: str
    spearman: float | None
    mean_abs_diff: float | None
    n_datasets_spearman: int
    n_datasets_mean_abs_diff: int


@dataclass
class LengthBiasResult:
    """All datasets of one model, plus averages of the threshold groups and of the overall scores."""

    unit: str
    threshold: int
    buckets: list[str]
    spearman_over: str  # which pairs a task's Spearman is computed over
    datasets: list[DatasetLengthBias]
    average: list[GroupAverage]  # ``all``, then the two threshold groups
    # one checkpoint's uncertainty: the percentile interval of the two groups' Avg. and of their gap (x100) over
    # bootstrap resamples of the pairs within each task's group (:func:`bootstrap_averages`); None in older files
    bootstrap: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


def _formula(scale: tuple[float, float]) -> str:
    lo, hi = scale
    return f"g / {hi - lo:g}" if lo == 0 else f"(g - {lo:g}) / {hi - lo:g}"


def analyse_pairs(
    pairs: Pairs, sims: np.ndarray, diffs: np.ndarray, groups: list[Bucket], buckets: list[Bucket], split: str
) -> DatasetLengthBias:
    """Split one task's pairs by their length difference ``diffs`` and score each group."""
    gold = np.asarray(pairs.gold, dtype=np.float64)
    norm = metrics.normalise_gold(gold, pairs.scale)

    def score(b: Bucket, m: Any = slice(None)) -> GroupScore:  # the pairs ``m`` selects
        s = sims[m]
        if len(s) == 0:
            return GroupScore(b.label, b.lo, b.hi, 0, None, None, None, "no pairs")
        rho, reason = metrics.spearman_or_reason(s, gold[m])
        mad = metrics.mean_abs_diff(s, norm[m])
        return GroupScore(b.label, b.lo, b.hi, len(s), rho, mad, float(diffs[m].mean()), reason)

    def scored(bs: list[Bucket]) -> list[GroupScore]:
        idx = metrics.bucket_of(diffs, [(b.lo, b.hi) for b in bs])
        return [score(b, idx == k) for k, b in enumerate(bs)]

    scale = tuple(pairs.scale)
    overall = score(Bucket("all", 0, None))
    return DatasetLengthBias(
        pairs.name, split, len(pairs), scale, _formula(scale), overall, scored(groups), scored(buckets)
    )


def _average(label: str, groups: list[GroupScore]) -> GroupAverage:
    rho = [g.spearman for g in groups if g.spearman is not None]
    mad = [g.mean_abs_diff for g in groups if g.mean_abs_diff is not None]
    return GroupAverage(
        label, float(np.mean(rho)) if rho else None, float(np.mean(mad)) if mad else None, len(rho), len(mad)
    )


def word_count(texts: Sequence[str]) -> np.ndarray:
    """Words of SentEval's tokenized text: ``len(text.split())``."""
    return np.array([len(t.split()) for t in texts], dtype=np.int64)


def tokenizer_counter(model_path: str) -> Callable[[Sequence[str]], np.ndarray]:
    """Count model tokens (no special tokens) with the tokenizer saved beside the weights."""
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(model_path)
    except (OSError, ValueError) as exc:
        raise StsbenchError(
            f"no tokenizer loadable from {model_path} for --unit tokens ({exc.__class__.__name__}); "
            "use --unit words"
        ) from None

    def count(texts: Sequence[str]) -> np.ndarray:
        ids = tok(list(texts), add_special_tokens=False)["input_ids"]
        return np.array([len(x) for x in ids], dtype=np.int64)

    return count


BOOTSTRAP_REPLICATES, BOOTSTRAP_SEED = 1000, 0
RESAMPLED = "pairs, with replacement, within each task's length-difference group"


def bootstrap_averages(
    groups: Sequence[tuple[np.ndarray, np.ndarray]],
    labels: Sequence[str],
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> dict[str, Any]:
    """The 95% percentile interval (x100) of each threshold group's Avg. and of their gap, pairs resampled.

    ``groups``: per task, ``(|cos - g'| of each pair, the pair's threshold group index)``. Each resample draws
    every task's pairs with replacement within each group (a group keeps its size, as the figure conditions on
    it), recomputes each group's mean per task, the Avg. over the tasks where the group has pairs, and the gap
    (first group minus second). One checkpoint's interval: it says how much the pairs move the figure, not the
    training's seed.
    """
    rng = np.random.default_rng(seed)
    sums: list[list[np.ndarray]] = [[] for _ in labels]
    for absdiff, index in groups:
        counts = resample_counts(index, replicates, rng)
        for k in range(len(labels)):
            mask = index == k
            if mask.any():
                sums[k].append(counts[:, mask] @ absdiff[mask] / mask.sum())
    averages = [np.mean(s, axis=0) * 100 if s else None for s in sums]
    intervals: dict[str, list[float]] = {}
    for label, avg in zip(labels, averages, strict=True):
        if avg is not None:  # "<=3" -> "LD <= 3 Avg."
            intervals[f"LD {_ld(label)} Avg."] = list(percentile_interval(avg, level))
    if all(a is not None for a in averages[:2]):
        intervals["gap"] = list(percentile_interval(averages[0] - averages[1], level))
    # the intervals x100
    return dict(replicates=replicates, seed=seed, level=level, resampled=RESAMPLED, intervals=intervals)


def length_bias_from_table(
    datasets: list[Pairs],
    table: EmbeddingTable,
    count: Callable[[Sequence[str]], np.ndarray],
    unit: str = "words",
    threshold: int = 3,
    buckets: str = DEFAULT_BUCKETS,
    split: str = "test",
) -> LengthBiasResult:
    """Length bias of every dataset from embeddings already in ``table``."""
    parsed, groups = _buckets(buckets, threshold)  # validates before any work
    out, resampled = [], []
    for pairs in datasets:
        sims = metrics.cosine_pairs(table[pairs.sent1], table[pairs.sent2])
        diffs = np.abs(np.asarray(count(pairs.sent1)) - np.asarray(count(pairs.sent2)))
        out.append(analyse_pairs(pairs, sims, diffs, groups, parsed, split))
        absdiff = np.abs(sims - metrics.normalise_gold(np.asarray(pairs.gold, dtype=np.float64), pairs.scale))
        resampled.append((absdiff, metrics.bucket_of(diffs, [(b.lo, b.hi) for b in groups])))
    average = [_average("all", [d.overall for d in out])]
    average += [_average(b.label, [d.threshold_groups[k] for d in out]) for k, b in enumerate(groups)]
    over = "every pair of the task's subsets concatenated (SentEval's 'all')"
    boot = bootstrap_averages(resampled, [b.label for b in groups])
    return LengthBiasResult(unit, threshold, [b.label for b in parsed], over, out, average, boot)


def _buckets(buckets: str, threshold: int) -> tuple[list[Bucket], list[Bucket]]:
    """The finer buckets and the threshold groups, checked (a bad option is a one-line error)."""
    return parse_buckets(buckets), threshold_buckets(threshold)


def length_bias(
    encoder: Encoder,
    data_dir: Path,
    tasks: Sequence[str] = tuple(LENGTH_TASKS),
    unit: Unit = "words",
    threshold: int = 3,
    buckets: str = DEFAULT_BUCKETS,
    batch_size: int = 128,
    show_progress: bool = True,
) -> LengthBiasResult:
    """Length bias of ``encoder`` on the test splits of ``tasks`` (one encoding pass, through the cache)."""
    if unit not in ("words", "tokens"):
        raise StsbenchError(f"unknown --unit {unit!r}; choose words or tokens")
    _buckets(buckets, threshold)
    datasets = [load_pairs(data_dir, t, "test") for t in tasks]  # STS12-16 only have test
    texts = (t for p in datasets for t in [*p.sent1, *p.sent2])
    table = embed_table(encoder, texts, batch_size, show_progress)
    count = word_count if unit == "words" else tokenizer_counter(encoder.info.path)
    return length_bias_from_table(datasets, table, count, unit, threshold, buckets, "test")


LENGTH_TABLE1 = "esimcse-arxiv/table1"
# its entries' columns: <= t, > t, as threshold_groups
TABLE1_COLUMNS = ("length diff <= 3", "length diff > 3")


LENGTH_TABLE7 = (
    ("SimCSE", "esimcse-coling/table7/simcse-ld-gt-3", "esimcse-coling/table7/simcse-ld-le-3"),
    ("ESimCSE", "esimcse-coling/table7/esimcse-ld-gt-3", "esimcse-coling/table7/esimcse-ld-le-3"),
)


def length_bias_table1(variant: str, results: dict[str, Any]) -> Table:
    """ESimCSE arXiv Table 1 layout: per dataset, Spearman (a fraction) of the pairs <= t and > t apart."""
    first = next(iter(results.values()))
    tasks = [d.task for d in first.datasets]
    lo, hi = (g.label for g in first.datasets[0].threshold_groups)
    published = first.threshold == 3
    pub = ["SimCSE-BERT-base (published) <=3", "SimCSE-BERT-base (published) >3"] if published else []
    columns = ["dataset", *pub, *[f"{label} {g}" for label in results for g in (lo, hi)]]
    rows = []
    for k, task in enumerate(tasks):
        row = [short_name(task)]
        if published:
            entry = load_registry().get(f"{LENGTH_TABLE1}/{task.lower()}")
            row += [fmt(entry.values.get(c), 4) if entry else DASH for c in TABLE1_COLUMNS]
        for r in results.values():
            d = r.datasets[k] if k < len(r.datasets) and r.datasets[k].task == task else None
            row += [fmt(g.spearman, 4) for g in d.threshold_groups] if d else [DASH, DASH]
        rows.append(row)
    notes = [
        f"Spearman correlation (a fraction, as the paper prints it) of the test pairs whose length difference "
        f"is {lo} or {hi} {first.unit}; over every pair of a task's subsets (SentEval's `all`).",
    ]
    if published:
        here = ", here in words)." if first.unit == "words" else ")."
        notes.append(
            f"Published: {LENGTH_TABLE1}/* (the official unsup-SimCSE-BERT-base; lengths in tokens{here}"
        )
    title = f"Length bias, ESimCSE arXiv Table 1 layout ({first.unit})"
    return make_table(f"{variant}_table1", title, columns, rows, notes)


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
            cells = [
                fmt(by_task[x].threshold_groups[idx].mean_abs_diff, scale=100) if x in by_task else DASH
                for x in tasks
            ]
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
        here = "; here words)." if first.unit == "words" else ")."
        notes.append(f"Published: esimcse-coling/table7/* (BERT-base, token lengths{here}")
    title = f"Length bias, ESimCSE COLING Table 7 layout ({first.unit})"
    return make_table(f"{variant}_table7", title, columns, rows, notes)


BOOTSTRAP_ROW = "↳ 95% bootstrap interval over pairs (one checkpoint)"


def _span(interval: list[float] | None) -> str:
    return DASH if not interval else f"[{fmt(interval[0])}, {fmt(interval[1])}]"


def length_bias_buckets_table(variant: str, label: str, result: Any) -> Table:
    """One model's Spearman x100 (and pairs) per finer bucket of the length difference."""
    columns = ["dataset", *result.buckets]
    rows = [
        [short_name(d.task), *[f"{fmt(g.spearman, scale=100)} ({g.n_pairs})" for g in d.buckets]]
        for d in result.datasets
    ]
    title = f"{label}: Spearman x100 (pairs) by |length difference| in {result.unit}"
    return make_table(f"{variant}_buckets", title, columns, rows)


LD_ROW = "|cos - g'| x100, LD {group}"  # ESimCSE COLING Table 7's figure


RHO_ROW = "Spearman x100, LD {group}"  # ESimCSE arXiv Table 1's (the paper prints a fraction)


GAP = "gap (LD <= {t} minus LD > {t})"


PUBLISHED_THRESHOLD, PUBLISHED_UNIT = 3, "tokens"


def _ld(label: str) -> str:
    """``<=3`` -> ``<= 3``, ``>3`` -> ``> 3`` (the papers' spelling)."""
    op = "<=" if label.startswith("<=") else ">"
    return f"{op} {label.removeprefix(op)}"


def length_bias_numbers(result: Any) -> list[Number]:
    """Table 7's mean |cos - g'| x100 by group (tasks, Avg., the gap) and Table 1's Spearman x100 by group."""
    out: list[Number] = []
    ds = result.datasets
    groups = [g.label for g in ds[0].threshold_groups]  # "<=3", ">3"
    averages = {a.label: a for a in result.average}
    for k, label in reversed(list(enumerate(groups))):  # LD > t first, as Table 7
        row = LD_ROW.format(group=_ld(label))
        out += [Number(row, short_name(d.task), x100(d.threshold_groups[k].mean_abs_diff)) for d in ds]
        out.append(Number(row, AVG, x100(averages[label].mean_abs_diff), headline=True))
    le, gt = (x100(averages[g].mean_abs_diff) for g in groups)
    gap = None if le is None or gt is None else le - gt
    out.append(Number(GAP.format(t=result.threshold), AVG, gap, headline=True))
    for k, label in enumerate(groups):  # Table 1: <= t, then > t
        row = RHO_ROW.format(group=_ld(label))
        out += [Number(row, short_name(d.task), x100(d.threshold_groups[k].spearman)) for d in ds]
    return out


def length_bias_published(result: Any, entry: Any) -> dict[str, tuple[float, float, Interval]] | str:
    """ESimCSE arXiv Table 1 (a task's Spearman, a fraction), COLING Table 1 (Avg.) and Table 7 (per task, Avg.)."""
    if result.unit != PUBLISHED_UNIT or result.threshold != PUBLISHED_THRESHOLD:
        return (
            f"{entry.key} counts length differences in {PUBLISHED_UNIT} with a threshold of {PUBLISHED_THRESHOLD}; "
            f"this result counts {result.unit} with {result.threshold}: run `stsbench length-bias --unit tokens "
            "--threshold 3`"
        )
    row_id = entry.key.rsplit("/", 1)[-1]
    if entry.key.startswith("esimcse-arxiv/table1/"):
        d = next((d for d in result.datasets if d.task.lower() == row_id), None)
        if d is None:
            return f"no {row_id} pairs in this result"
        values = {c: g.spearman for c, g in zip(TABLE1_COLUMNS, d.threshold_groups, strict=True)}
        return published_pairs(values, entry, 100.0)  # the paper prints a fraction
    # the threshold group: 0 (<= t) or 1 (> t)
    k = 1 if row_id.endswith("gt-3") else 0 if row_id.endswith("le-3") else None
    if k is None:
        return f"{entry.key} is not a row of a length difference <= 3 or > 3"
    label = result.datasets[0].threshold_groups[k].label
    avg = x100(next(a for a in result.average if a.label == label).mean_abs_diff)
    found = (getattr(result, "bootstrap", None) or {}).get("intervals", {}).get(f"LD {_ld(label)} Avg.")
    interval = tuple(found) if found else None
    coling1 = entry.key.startswith("esimcse-coling/table1/")  # its Avg. alone; Table 7: per task, then Avg.
    col = "Avg. Similarity Diff" if coling1 else AVG
    values = {} if coling1 else {d.task: x100(d.threshold_groups[k].mean_abs_diff) for d in result.datasets}
    return published_pairs({**values, col: avg}, entry, intervals={col: interval})


def length_bias_figure(results: dict[str, LengthBiasResult], stem: Path) -> list[Path]:
    """One panel per dataset (Spearman x100 by length-difference bucket) and one of Table 7's averages."""
    plt = afig.pyplot()
    labels = list(results)
    first = next(iter(results.values()))
    n = len(first.datasets) + 1
    cols = min(4, n)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.9 * rows), squeeze=False)
    flat = axes.ravel()
    for d, ax in enumerate(flat[: len(first.datasets)]):
        per_model = [r.datasets[d].buckets for r in results.values()]
        values = [[x100(g.spearman) for g in bs] for bs in per_model]
        bars(ax, labels, first.buckets, values, [[g.n_pairs for g in bs] for bs in per_model])
        ax.set_title(short_name(first.datasets[d].task), fontsize=9)
        ax.set_ylabel("Spearman x100", fontsize=7)
    ax = flat[len(first.datasets)]
    groups = [g.label for g in first.average]
    values = [[x100(g.mean_abs_diff) for g in r.average] for r in results.values()]
    counts = [[g.n_datasets_mean_abs_diff for g in r.average] for r in results.values()]
    bars(ax, labels, groups, values, counts)
    ax.set_xticks(range(len(groups)), groups, fontsize=7)
    ax.set_title("Avg. |cos - normalised gold| x100", fontsize=9)
    for extra in flat[n:]:
        extra.axis("off")
    flat[0].legend(fontsize=6)
    title = f"Length bias: |length difference| in {first.unit} (threshold {first.threshold})"
    fig.suptitle(title, fontsize=10)
    return afig.laid_out(fig, stem)


@pydantic.dataclasses.dataclass(frozen=True)
class LengthBiasConfig:
    """Options of ``stsbench length-bias``."""

    unit: Unit = option("words", "Length in words of the tokenized text, or model tokens.")
    threshold: int = option(3, "Groups: difference <= T and > T.", ge=0)
    buckets: str = option(DEFAULT_BUCKETS, "Finer buckets of the length difference.")


class LengthBias(Analysis):
    """ESimCSE's length bias: STS scores by the length difference of a pair."""

    name = "length_bias"
    command = "length-bias"
    title = "Length bias"
    make = "stsbench length-bias --model MODEL [--model MODEL2 ...] --output RESULTS/analyses"
    help = "Score pairs by length difference on STS12-16, STS-B, SICK-R test (ESimCSE Tables 1, 7)."
    config_type = LengthBiasConfig
    result_type = LengthBiasResult

    def prepare(self, config: LengthBiasConfig) -> None:
        """Option errors before any model loads."""
        _buckets(config.buckets, config.threshold)

    def pair_splits(self, config: LengthBiasConfig) -> tuple[tuple[str, str], ...]:
        """The seven test sets (every test file in provenance)."""
        return tuple((t, "test") for t in LENGTH_TASKS)

    def variant(self, config: LengthBiasConfig) -> str:
        """``words`` or ``tokens``."""
        return config.unit

    def record(self, config: LengthBiasConfig) -> dict[str, Any]:
        """The tasks and split beside the options."""
        return {"tasks": LENGTH_TASKS, "split": "test", **super().record(config)}

    def compute(self, encoder: Any, config: Any, *, data_dir: Path | None, prepared: Any, batch_size: int):
        """:func:`stsbench.analyses.length_bias.length_bias` on the seven test sets."""
        return length_bias(
            encoder, data_dir, LENGTH_TASKS, config.unit, config.threshold, config.buckets, batch_size
        )

    table_builders = (length_bias_table1, length_bias_table7)  # ESimCSE arXiv Table 1, COLING Table 7
    draw = staticmethod(length_bias_figure)
    number_builder = staticmethod(length_bias_numbers)
    published_builder = staticmethod(length_bias_published)

    def terminal_tables(self, variant: str, results: dict[str, Any]) -> list[Any]:
        """The report's two tables, then each model's finer buckets."""
        buckets = [length_bias_buckets_table(variant, label, r) for label, r in results.items()]
        return [*self.tables(variant, results), *buckets]

    def terminal_notes(self, results: dict[str, Any]) -> list[str]:
        """Why a group has no number (``n/a STS-B >3: no pairs``)."""
        return [
            f"n/a {label}: {short_name(d.task)} {g.label}: {g.reason}"
            for label, r in results.items()
            for d in r.datasets
            for g in [*d.threshold_groups, *d.buckets]
            if g.reason
        ]
