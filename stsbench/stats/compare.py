"""``stsbench compare``'s statistics: is the difference between two models real? Paired tests on the same STS pairs.

Each side (:class:`Side`) is one model's STS figures with the pairs behind them, read from a results folder
(:mod:`stsbench.results.read`). The first side is the reference; every other side is compared with it, per task
and for Avg.:

- the difference of the figures (other - reference, x100) with a paired-bootstrap interval and two-sided
  p-value: each replicate resamples the same pairs for both sides (stratified by subset where a figure pools
  subsets; every task jointly for Avg.), :func:`stsbench.stats.bootstrap.paired_bootstrap`;
- Williams' test for two dependent correlations that share the gold scores (Williams 1959; used for MT
  metrics by Graham & Baldwin 2014), on the Spearman correlations: r(gold, A), r(gold, B), r(A, B);
- over pairs, both p-values Holm-adjusted across the tasks of one comparison; Avg., a function of them, is outside the
  family and keeps its own p (:func:`stsbench.stats.tests.holm_over_tasks`, the report's rule too);
- the smallest difference these pairs could detect at 80% power and the test's level, from the bootstrap
  standard error of the difference.

A side may also be the seed aggregate of several training seeds (``stsbench run`` on a ``train --seeds``
folder, ``seeds.json``): two such sides are compared over seeds instead, by stsbench's one decision rule
(:mod:`stsbench.stats.decide`: the seeds' unrounded figures, paired on the seeds both share, Welch where they
share none, the interval read against the difference that matters), as the seed-to-seed spread, not the pairs,
is then what a difference must beat.

Sides must be comparable: the same mode, the same tasks, the same data files (sha256 in provenance) and the
same pairs in the same order (gold, subset and index of each pair in the sidecars); anything else is refused
with one line before any computation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from stsbench.errors import StsbenchError
from stsbench.metrics import AVG, simcse_average, spearman
from stsbench.stats import decide
from stsbench.stats.bootstrap import PairSet, paired_bootstrap
from stsbench.stats.tests import FamilyP, holm_over_tasks, min_detectable_difference, williams

MIXED = (  # the refusal of seeds against one model, whichever form each side takes
    "one side is several seeds (a `train --seeds` folder or its seed aggregate) and the other one model; "
    "compare seeds with seeds (Welch over seeds) or one model with one model (paired over pairs)"
)


# a TaskComparison's fields over pairs, none over seeds
_OVER_PAIRS = ("p_bootstrap", "p_bootstrap_holm", "p_williams", "p_williams_holm", "n_pairs")
SIDE_FIELDS = ("label", "source", "model", "fingerprint", "pooler", "mode")  # each side's, in the JSON


@dataclass
class Side:
    """One side of a comparison: one model's STS results, with the pairs behind them."""

    label: str  # what tables call it
    source: str  # the folder (or model) as given
    model: str  # the model name in its results
    fingerprint: str
    pooler: str
    mode: str
    figures: dict[str, float]  # task -> its reported figure, in the results' task order
    data_files: dict[str, dict[str, str]]  # task -> the checksums of the data it was scored on
    pairs: dict[str, PairSet]  # task -> per-pair data from the sidecar
    seeds: dict[str, list[float]] | None = None  # seed aggregate: task (and Avg.) -> each seed's, unrounded
    seed_ids: list[int] | None = None  # the seed each of those figures is of (what pairs two sides' seeds)
    rounded: bool = False  # an aggregate written before raw figures: its seeds' figures at two decimals only

    @property
    def n_seeds(self) -> int | None:
        """How many seeds a seed-aggregate side has (None for one model's results)."""
        return None if self.seeds is None else len(next(iter(self.seeds.values())))

    @property
    def tasks(self) -> list[str]:
        """The STS tasks, in order."""
        return list(self.figures) if self.seeds is None else [t for t in self.seeds if t != AVG]


@dataclass
class TaskComparison:
    """One task (or Avg.) of a comparison; figures x100."""

    task: str
    reference: float  # the reference's figure
    other: float  # the other side's figure
    diff: float  # other - reference
    low: float
    high: float
    p_bootstrap: float | None  # over pairs; None over seeds (the decision's p)
    p_bootstrap_holm: float | None  # None for Avg.
    p_williams: float | None  # None for Avg. (not one correlation)
    p_williams_holm: float | None
    min_detectable_difference: float  # at 80% power and the test's level
    n_pairs: int | None  # None for a comparison over seeds
    n_seeds: list[int] | None = None  # [reference, other] for a comparison over seeds
    seeds: decide.Decision | None = None  # over seeds: the one rule's record (two-sided, against δ)

    @property
    def significant(self) -> bool:
        """Over pairs: the Holm-adjusted bootstrap p (Avg.: its own p) below 0.05; over seeds: it matters.

        Over seeds, by its interval and by Holm over the tasks of p(|diff| > δ) (the Avg. outside the family).
        """
        if self.seeds is not None:
            return decide.marked(self.seeds)
        return FamilyP(self.p_bootstrap, self.p_bootstrap_holm).deciding < 0.05


@dataclass
class Comparison:
    """One other side against the reference."""

    reference: str
    other: str
    rows: list[TaskComparison] = field(default_factory=list)

    def to_dict(self) -> dict:
        """JSON form: ``{"reference", "model", "tasks": {task: {...}}}``."""
        return {
            "reference": self.reference,
            "model": self.other,
            "tasks": {r.task: _row(r) for r in self.rows},
        }


def _row(r: TaskComparison) -> dict:
    out = {k: v for k, v in asdict(r).items() if k not in ("task", "seeds")}
    return out if r.seeds is None else {**out, "seeds": r.seeds.to_dict()}


@dataclass
class CompareResult:
    """Every comparison of one ``stsbench compare`` call and how it was computed."""

    sides: list[Side]
    comparisons: list[Comparison]
    bootstrap: int
    seed: int
    level: float
    power: float

    def to_dict(self) -> dict:
        """JSON form of the whole call."""
        return {
            "method": {
                "interval": f"paired percentile bootstrap over pairs ({self.level:.0%}), stratified by subset",
                "p_bootstrap": "two-sided, from the paired bootstrap distribution of the difference (over "
                "seeds: none; each row's seeds record holds the rule's decision and its p of |diff| > δ, Holm "
                "over the tasks)",
                "p_williams": "Williams' test of two dependent correlations sharing the gold scores (df n-3)",
                "holm": "Holm step-down over the tasks of each comparison (Avg. excluded)",
                "min_detectable_difference": f"at {self.power:.0%} power, from the bootstrap standard error",
                "bootstrap": self.bootstrap,
                "seed": self.seed,
                "level": self.level,
            },
            "sides": [{"seeds": s.n_seeds, **{k: getattr(s, k) for k in SIDE_FIELDS}} for s in self.sides],
            "comparisons": [c.to_dict() for c in self.comparisons],
        }


def check_comparable(ref: Side, other: Side) -> None:
    """Refuse, with one line, sides measured on other data, tasks, modes or pairs."""
    what = f"{other.label} vs {ref.label}"
    if (ref.seeds is None) != (other.seeds is None):
        raise StsbenchError(f"{what}: {MIXED}")
    if ref.mode != other.mode:
        raise StsbenchError(f"{what}: modes differ ({other.mode} vs {ref.mode}); compare results of one mode")
    if ref.tasks != other.tasks:
        raise StsbenchError(
            f"{what}: tasks differ ({', '.join(other.tasks)} vs {', '.join(ref.tasks)}); "
            "evaluate both on the same --tasks"
        )
    if ref.seeds is not None:
        return
    for task in ref.tasks:
        a, b = ref.data_files[task], other.data_files[task]
        if a != b:
            files = ", ".join(sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k)))
            raise StsbenchError(f"{what}: {task} was measured on other data (checksums differ for {files})")
        pa, pb = ref.pairs[task], other.pairs[task]
        same = (
            pa.n == pb.n
            and np.array_equal(pa.gold, pb.gold)
            and np.array_equal(pa.strata, pb.strata)
            and (pa.index is None or pb.index is None or np.array_equal(pa.index, pb.index))
        )
        if not same:
            raise StsbenchError(f"{what}: {task} pair sets differ ({pb.n} vs {pa.n} pairs, or another order)")


def _williams_p(a: PairSet, b: PairSet) -> float:
    r12 = spearman(a.gold, a.cosine)
    r13 = spearman(b.gold, b.cosine)
    r23 = spearman(a.cosine, b.cosine)
    if np.isclose(r23, 1.0, rtol=0, atol=1e-12) and np.isclose(r12, r13, rtol=0, atol=1e-12):
        return 1.0  # the same predictions: no difference to test (the formula is 0/0)
    return williams(r12, r13, r23, a.n)[1]


def compare_pair(
    ref: Side, other: Side, *, bootstrap: int, seed: int, level: float, power: float
) -> Comparison:
    """The paired tests of ``other`` against ``ref`` on every task and Avg."""
    check_comparable(ref, other)
    if ref.seeds is not None:
        return compare_seeds(ref, other, level=level)
    tasks = ref.tasks
    mine, theirs = [other.pairs[t] for t in tasks], [ref.pairs[t] for t in tasks]
    diffs = paired_bootstrap(mine, theirs, bootstrap, seed, level=level)  # other - reference
    alpha = 1.0 - level
    p_will = holm_over_tasks({t: _williams_p(ref.pairs[t], other.pairs[t]) for t in tasks})
    p_boot = holm_over_tasks({t: diffs[t].p for t in [*tasks, AVG]})
    out = Comparison(ref.label, other.label)
    for task in [*tasks, AVG]:
        d, will = diffs[task], p_will.get(task)  # Williams: none for Avg. (not one correlation)
        mdd = min_detectable_difference(d.se, alpha=alpha, power=power)
        out.rows.append(
            TaskComparison(
                task=task,
                reference=_figure(ref, task),
                other=_figure(other, task),
                diff=round(100 * d.diff, 4),
                low=round(100 * d.low, 4),
                high=round(100 * d.high, 4),
                p_bootstrap=p_boot[task].p,
                p_bootstrap_holm=p_boot[task].holm,
                p_williams=None if will is None else will.p,
                p_williams_holm=None if will is None else will.holm,
                min_detectable_difference=round(100 * mdd, 4),
                n_pairs=int(d.n),
            )
        )
    return out


def _keyed(side: Side, task: str, ids: bool, key: int) -> dict[int, float]:
    """A side's figures by seed; without seed ids (nothing to pair on), keyed apart from any other side's."""
    values = side.seeds[task]  # type: ignore[index]
    if ids:
        return dict(zip(side.seed_ids, values, strict=True))  # type: ignore[arg-type]
    return {key * 1_000_000 + i: v for i, v in enumerate(values)}


def compare_seeds(ref: Side, other: Side, *, level: float, delta: float = decide.DELTA) -> Comparison:
    """``other`` against ``ref`` over seeds on every task and Avg. by the one rule (figures: the seed means).

    Paired on the seeds both sides share (both need seed ids; without them Welch, said), each difference's
    interval read against ``delta`` (:func:`stsbench.stats.decide.two_sided`); the `*` of a task needs Holm over
    the tasks too (:func:`stsbench.stats.decide.family`), the Avg. outside the family.
    """
    assert ref.seeds is not None and other.seeds is not None
    out = Comparison(ref.label, other.label)
    ids = all(s.seed_ids and len(s.seed_ids) == len(next(iter(s.seeds.values()))) for s in (ref, other))
    rounded = ref.rounded or other.rounded
    rows = {}
    for task in [*ref.tasks, AVG]:
        a, b = _keyed(other, task, ids, 1), _keyed(ref, task, ids, 2)
        # STS figures: raw correlations (h 0), or two-decimal ones in an old aggregate (h 0.01 each)
        parts = len(ref.tasks) if task == AVG else 1
        h = decide.average_resolution([decide.STORED] * parts) if rounded else 0.0
        d = decide.difference(a, b, level=level, resolution=h)
        if d is None:
            raise StsbenchError(
                f"{task}: a comparison over seeds needs at least 2 seeds a side ({len(ref.seeds[task])} and "
                f"{len(other.seeds[task])}); train more seeds"
            )
        dec = decide.two_sided(d, delta, task)
        dec = decide.noted(dec, None if ids else "no seed ids: not paired")
        rows[task] = decide.noted(dec, decide.ROUNDED if rounded else None)
    tasks = [t for t in rows if t != AVG]
    rows.update(zip(tasks, decide.family([rows[t] for t in tasks]), strict=True))
    for task, dec in rows.items():
        out.rows.append(
            TaskComparison(
                task=task,
                reference=round(float(np.mean(ref.seeds[task])), 2),
                other=round(float(np.mean(other.seeds[task])), 2),
                diff=round(dec.diff, 4),
                low=round(dec.low, 4),
                high=round(dec.high, 4),
                min_detectable_difference=round(dec.mdd or 0.0, 4),
                **dict.fromkeys(_OVER_PAIRS),  # none over seeds
                n_seeds=[dec.interval.n[1], dec.interval.n[0]],
                seeds=dec,
            )
        )
    return out


def _figure(side: Side, task: str) -> float:
    if task == AVG:
        return simcse_average(list(side.figures.values()))  # type: ignore[return-value]
    return side.figures[task]


def compare_sides(
    sides: Sequence[Side], *, bootstrap: int = 1000, seed: int = 1111, level: float = 0.95, power: float = 0.8
) -> CompareResult:
    """Compare every side after the first with the first."""
    if len(sides) < 2:
        raise StsbenchError("compare needs at least two results folders or models")
    if bootstrap < 1:
        raise StsbenchError(f"--bootstrap {bootstrap}: compare needs at least 1 replicate (1000 is usual)")
    ref, *others = sides
    comps = [compare_pair(ref, s, bootstrap=bootstrap, seed=seed, level=level, power=power) for s in others]
    return CompareResult(list(sides), comps, bootstrap, seed, level, power)
