"""Length bias: STS quality split by the length difference of the two sentences of a pair.

ESimCSE (arXiv) Table 1: Spearman of the pairs with length difference <= 3 and > 3. ESimCSE (COLING)
Tables 1 and 7: mean |cos(u, v) - g'| of each group, with the gold score normalised to [0, 1] as
``g' = (g - lo) / (hi - lo)`` (STS 0-5: g / 5; SICK-R 1-5: (g - 1) / 4), x100. Spearman here is over
every pair of a task's subsets concatenated (SentEval's ``all``). The length of a sentence is its number
of words (the tokenized SentEval text split on spaces) or of model tokens (the encoder's tokenizer, no
special tokens).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from stsbench import metrics
from stsbench.analyses import DEFAULT_BUCKETS
from stsbench.analyses.common import LENGTH_TASKS, load_many
from stsbench.data.sts import Pairs
from stsbench.encoders.base import EmbeddingTable, Encoder, embed_table
from stsbench.errors import StsbenchError

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


def _group(
    label: str,
    lo: int,
    hi: int | None,
    sims: np.ndarray,
    gold: np.ndarray,
    norm: np.ndarray,
    diffs: np.ndarray,
) -> GroupScore:
    n = len(sims)
    if n == 0:
        return GroupScore(label, lo, hi, 0, None, None, None, "no pairs")
    rho, reason = metrics.spearman_or_reason(sims, gold)
    return GroupScore(label, lo, hi, n, rho, metrics.mean_abs_diff(sims, norm), float(diffs.mean()), reason)


def _formula(scale: tuple[float, float]) -> str:
    lo, hi = scale
    return f"g / {hi - lo:g}" if lo == 0 else f"(g - {lo:g}) / {hi - lo:g}"


def analyse_pairs(
    pairs: Pairs,
    sims: np.ndarray,
    len1: np.ndarray,
    len2: np.ndarray,
    threshold: int,
    buckets: list[Bucket],
    split: str = "test",
) -> DatasetLengthBias:
    """Split one task's pairs by ``|len1 - len2|`` and score each group."""
    diffs = np.abs(np.asarray(len1) - np.asarray(len2))
    gold = np.asarray(pairs.gold, dtype=np.float64)
    norm = metrics.normalise_gold(gold, pairs.scale)

    def groups(bs: list[Bucket]) -> list[GroupScore]:
        idx = metrics.bucket_of(diffs, [(b.lo, b.hi) for b in bs])
        return [
            _group(b.label, b.lo, b.hi, sims[idx == k], gold[idx == k], norm[idx == k], diffs[idx == k])
            for k, b in enumerate(bs)
        ]

    overall = _group("all", 0, None, sims, gold, norm, diffs)
    return DatasetLengthBias(
        pairs.name,
        split,
        len(pairs),
        tuple(pairs.scale),
        _formula(pairs.scale),
        overall,
        groups(threshold_buckets(threshold)),
        groups(buckets),
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


BOOTSTRAP_REPLICATES = 1000
BOOTSTRAP_SEED = 0


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
    from stsbench.stats.bootstrap import percentile_interval, resample_counts

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
            spaced = label.replace("<=", "<= ") if label.startswith("<=") else label.replace(">", "> ")
            intervals[f"LD {spaced} Avg."] = list(percentile_interval(avg, level))
    if all(a is not None for a in averages[:2]):
        intervals["gap"] = list(percentile_interval(averages[0] - averages[1], level))
    return {
        "replicates": replicates,
        "seed": seed,
        "level": level,
        "resampled": "pairs, with replacement, within each task's length-difference group",
        "intervals": intervals,  # x100
    }


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
    parsed = parse_buckets(buckets)
    groups = threshold_buckets(threshold)  # validates before any work
    out = []
    resampled = []
    for pairs in datasets:
        sims = metrics.cosine_pairs(table[pairs.sent1], table[pairs.sent2])
        len1, len2 = count(pairs.sent1), count(pairs.sent2)
        out.append(analyse_pairs(pairs, sims, len1, len2, threshold, parsed, split))
        absdiff = np.abs(sims - metrics.normalise_gold(np.asarray(pairs.gold, dtype=np.float64), pairs.scale))
        index = metrics.bucket_of(np.abs(np.asarray(len1) - np.asarray(len2)), [(b.lo, b.hi) for b in groups])
        resampled.append((absdiff, index))
    average = [_average("all", [d.overall for d in out])]
    average += [
        _average(g.label, [d.threshold_groups[k] for d in out]) for k, g in enumerate(out[0].threshold_groups)
    ]
    return LengthBiasResult(
        unit,
        threshold,
        [b.label for b in parsed],
        "every pair of the task's subsets concatenated (SentEval's 'all')",
        out,
        average,
        bootstrap_averages(resampled, [b.label for b in groups]),
    )


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
    parse_buckets(buckets)
    threshold_buckets(threshold)
    datasets = load_many(data_dir, list(tasks), "test")
    table = embed_table(
        encoder, (t for p in datasets for t in [*p.sent1, *p.sent2]), batch_size, show_progress
    )
    count = word_count if unit == "words" else tokenizer_counter(encoder.info.path)
    return length_bias_from_table(datasets, table, count, unit, threshold, buckets, "test")
