"""Percentile bootstrap over pairs for STS Spearman figures, one task or many jointly, and paired differences.

A replicate is a vector of multinomial counts ``w`` (how often each pair is drawn), never a materialised
resample: each variable is sorted once, and the average rank of pair ``i`` in the resample is the total count
of pairs with a strictly smaller value plus ``(count of its tie group + 1) / 2`` (what ``scipy.stats.rankdata``
gives every copy of the pair). Spearman is then the Pearson correlation of the two rank vectors weighted by
``w``, whose weighted mean rank is exactly ``(N + 1) / 2``. No sort per replicate: B = 1000 over the 7 STS
tasks (18,850 pairs) is a few cumulative sums and gathers over (B, n) arrays, in chunks of replicates.

Resampling is stratified by subset (each subset keeps its size: STS12-16 pool five or so subsets into
``all``), and seeded per task from ``(seed, task)``, so a task's interval is the same alone or beside others
and two models compared on the same task draw the same pairs.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stsbench.errors import StsbenchError
from stsbench.metrics import AVG, spearman

_CHUNK_CELLS = 1 << 20  # replicates per chunk * pairs: ~8 MB per float64 temporary
_ROWS = 20  # replicates per block of draws in resample_counts: 2.5x faster than one bincount of all B


@dataclass(frozen=True)
class PairSet:
    """One STS task's pairs: the cosine and gold of each, the subset code (stratum) and the pair's index."""

    task: str
    cosine: np.ndarray
    gold: np.ndarray
    strata: np.ndarray
    index: np.ndarray | None = None

    def __post_init__(self) -> None:
        """Coerce to float64 / int arrays and check that they describe the same pairs."""
        cosine = np.asarray(self.cosine, dtype=np.float64)
        gold = np.asarray(self.gold, dtype=np.float64)
        strata = np.asarray(self.strata)
        if cosine.ndim != 1 or gold.shape != cosine.shape or strata.shape != cosine.shape:
            raise StsbenchError(
                f"{self.task}: cosine, gold and strata must be 1-D of one length, got shapes {cosine.shape}, "
                f"{gold.shape}, {strata.shape}; rewrite the pairs sidecar"
            )
        if not (np.isfinite(cosine).all() and np.isfinite(gold).all()):
            raise StsbenchError(
                f"{self.task}: the pairs hold NaN or infinite scores; rewrite the pairs sidecar"
            )
        if not np.issubdtype(strata.dtype, np.integer):
            raise StsbenchError(f"{self.task}: strata must be integer subset codes, got {strata.dtype}")
        object.__setattr__(self, "cosine", cosine)
        object.__setattr__(self, "gold", gold)
        object.__setattr__(self, "strata", strata)
        if self.index is not None:
            object.__setattr__(self, "index", np.asarray(self.index))

    @property
    def n(self) -> int:
        """Number of pairs."""
        return int(self.cosine.shape[0])

    def figure(self) -> float:
        """Spearman of cosine vs gold over all pairs pooled (raw, in [-1, 1]): the task's ``reported / 100``."""
        return spearman(self.cosine, self.gold)


def resample_counts(strata: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """``(B, n)`` int32 counts of ``B`` bootstrap resamples, each drawing ``size`` pairs within each stratum.

    Every row sums to ``n`` and, within each stratum, to the stratum's size. Replicates are drawn in
    blocks of ``_ROWS`` (a cache-sized bincount), so the first ``k`` rows do not depend on ``B``.
    """
    strata = np.asarray(strata)
    if B < 1:
        raise StsbenchError(f"the number of bootstrap replicates must be >= 1, got {B}")
    counts = np.zeros((B, strata.shape[0]), dtype=np.int32)
    members = [np.flatnonzero(strata == code) for code in np.unique(strata)]
    # a stratum stored contiguously (subsets concatenated, as loaded) is written through a slice
    columns = [slice(w[0], w[-1] + 1) if w[-1] - w[0] + 1 == w.shape[0] else w for w in members]
    for start in range(0, B, _ROWS):
        rows = min(_ROWS, B - start)
        offsets = np.arange(rows, dtype=np.intp)[:, None]
        for where, cols in zip(members, columns, strict=True):
            m = where.shape[0]
            draws = rng.integers(0, m, size=(rows, m), dtype=np.intp)
            draws += offsets * m  # row offsets: one bincount for the block
            block = np.bincount(draws.ravel(), minlength=rows * m)
            counts[start : start + rows, cols] = block.reshape(rows, m)
    return counts


class _Ranker:
    """One variable sorted once into tie groups; average ranks of the groups in any resample from its counts."""

    def __init__(self, values: np.ndarray) -> None:
        values = np.asarray(values, dtype=np.float64)
        self.order = np.argsort(values, kind="stable")
        sorted_values = values[self.order]
        n = values.shape[0]
        new_group = np.empty(n, dtype=bool)
        new_group[:1] = True
        new_group[1:] = sorted_values[1:] != sorted_values[:-1]
        self.starts = np.flatnonzero(new_group)
        self.ends = np.append(self.starts[1:], n)  # one past each tie group's last sorted position
        self.ties = self.starts.shape[0] < n
        self.group = np.cumsum(new_group) - 1  # tie group of each sorted position
        self.group_of = np.empty(n, dtype=np.int64)  # tie group of each element
        self.group_of[self.order] = self.group

    def group_ranks(self, sorted_counts: np.ndarray, mid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(b, groups)`` average rank of each tie group minus ``mid``, and each group's total count.

        ``sorted_counts`` are in this variable's sorted order. A group's rank is the total count strictly
        below it plus ``(its count + 1) / 2``, that is ``(count before + count through it + 1) / 2`` on the
        zero-prefixed cumulative count.
        """
        csum = np.zeros((sorted_counts.shape[0], sorted_counts.shape[1] + 1), dtype=np.float64)
        np.cumsum(sorted_counts, axis=1, out=csum[:, 1:])
        before, through = np.take(csum, self.starts, axis=1), np.take(csum, self.ends, axis=1)
        ranks = before + through
        ranks += 1.0 - 2.0 * mid
        ranks *= 0.5
        return ranks, through - before

    def element_ranks(self, sorted_counts: np.ndarray, mid: np.ndarray) -> np.ndarray:
        """``(b, n)`` average rank minus ``mid`` of each element in sorted order (float ``sorted_counts``)."""
        if self.ties:
            return np.take(self.group_ranks(sorted_counts, mid)[0], self.group, axis=1)
        # one element per group: count through it minus (its count - 1) / 2
        ranks = np.cumsum(sorted_counts, axis=1)
        ranks -= 0.5 * sorted_counts
        ranks += 0.5 - mid
        return ranks


def _chunks(B: int, n: int) -> list[slice]:
    step = max(1, _CHUNK_CELLS // max(n, 1))
    return [slice(i, min(i + step, B)) for i in range(0, B, step)]


def _bootstrap_many(xs: Sequence[np.ndarray], y: np.ndarray, counts: np.ndarray) -> list[np.ndarray]:
    """Spearman of each ``x`` in ``xs`` with ``y`` for every replicate; ``y``'s ranks are computed once.

    Each ``x`` is correlated in its own sorted order, so its ranks need no gather when it has no ties;
    ``y``'s group ranks are gathered into that order. The weighted mean rank of a resample of ``N`` pairs
    is ``(N + 1) / 2`` for both, so the ranks are centred exactly; ``y``'s variance is a sum over its
    tie groups.
    """
    counts = np.asarray(counts)
    if counts.ndim != 2 or counts.shape[1] != y.shape[0]:
        raise StsbenchError(f"counts must be (B, {y.shape[0]}), got {counts.shape}")
    ry = _Ranker(y)
    rxs = [_Ranker(x) for x in xs]
    y_in_x = [ry.group_of[rx.order] for rx in rxs]
    out = [np.empty(counts.shape[0]) for _ in xs]
    for part in _chunks(*counts.shape):
        c = counts[part]
        mid = (c.sum(axis=1, keepdims=True, dtype=np.float64) + 1.0) * 0.5
        dy, size_y = ry.group_ranks(np.take(c, ry.order, axis=1), mid)
        var_y = np.einsum("ij,ij,ij->i", size_y, dy, dy)
        for rx, ymap, res in zip(rxs, y_in_x, out, strict=True):
            w = np.take(c, rx.order, axis=1).astype(np.float64)
            dx = rx.element_ranks(w, mid)
            cov = np.einsum("ij,ij,ij->i", w, dx, np.take(dy, ymap, axis=1))
            var_x = np.einsum("ij,ij,ij->i", w, dx, dx)
            with np.errstate(invalid="ignore", divide="ignore"):
                res[part] = cov / np.sqrt(var_x * var_y)  # NaN where a resample is constant, as scipy
    return out


def bootstrap_spearman(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(B,)`` Spearman of ``x`` vs ``y`` in each resample given by a row of ``counts``.

    Equals ``scipy.stats.spearmanr(np.repeat(x, w), np.repeat(y, w))`` for each row ``w`` (ties averaged).
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise StsbenchError(f"x and y must be 1-D of one length, got shapes {x.shape} and {y.shape}")
    return _bootstrap_many([x], y, counts)[0]


def _task_rng(seed: int, task: str) -> np.random.Generator:
    return np.random.default_rng([int(seed), zlib.crc32(task.encode())])


def _check_sets(sets: Sequence[PairSet]) -> None:
    if not sets:
        raise StsbenchError("no STS tasks to bootstrap; pass at least one task's pairs")
    names = [s.task for s in sets]
    if len(set(names)) != len(names) or AVG in names:
        raise StsbenchError(f"task names must be distinct and not {AVG!r}, got {names}")


def bootstrap_figures(sets: Sequence[PairSet], B: int, seed: int) -> dict[str, np.ndarray]:
    """``(B,)`` bootstrap replicates of each task's figure and of their mean ``"Avg."`` (raw scale).

    Replicate ``b`` of Avg. is the mean of replicate ``b`` of every task: all tasks are resampled jointly
    (independently per task, as their pairs are), which is SimCSE's Avg. under resampling.
    """
    _check_sets(sets)
    out: dict[str, np.ndarray] = {}
    for s in sets:
        counts = resample_counts(s.strata, B, _task_rng(seed, s.task))
        out[s.task] = _bootstrap_many([s.cosine], s.gold, counts)[0]
    out[AVG] = np.mean([out[s.task] for s in sets], axis=0)
    return out


def percentile_interval(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The ``level`` percentile interval of bootstrap replicates: their ``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles."""
    samples = np.asarray(samples, dtype=np.float64)
    if not 0 < level < 1:
        raise StsbenchError(f"the interval level must lie in (0, 1), got {level}")
    if samples.size == 0 or not np.isfinite(samples).all():
        raise StsbenchError(
            "the bootstrap replicates are empty or undefined (a resample with constant scores); "
            "a task needs more than a handful of distinct scores for an interval"
        )
    ordered = np.sort(samples)
    return _quantile(ordered, (1 - level) / 2), _quantile(ordered, (1 + level) / 2)


def _quantile(ordered: np.ndarray, q: float) -> float:
    """``np.quantile(ordered, q)`` (its default, linear method: Hyndman and Fan's 7th) of sorted values, bit for bit.

    Written out because ``np.quantile`` calls ``np.unique``, whose first call imports ``numpy.ma`` (36 ms of a
    warm run's start). The same operations in the same order as numpy's ``_quantile`` and ``_lerp``: the virtual
    index ``(n - 1) * q``, the values either side of it (the last one at or past the end), and the interpolation
    from the nearer end (``tests/test_stats.py`` checks equality with ``np.quantile``).
    """
    n = ordered.size
    virtual = (n - 1) * q
    below = float(np.floor(virtual))
    i = int(below)
    if virtual >= n - 1:
        return float(ordered[-1])
    a, b, gamma = float(ordered[i]), float(ordered[i + 1]), virtual - below
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


@dataclass
class Difference:
    """``a - b`` on one task (or Avg.): the observed difference, its paired-bootstrap interval, p and se."""

    task: str
    diff: float
    low: float
    high: float
    p: float
    se: float
    n: int


def _bootstrap_p(samples: np.ndarray) -> float:
    """Two-sided bootstrap p of ``diff = 0``: twice the smaller tail at 0 (0 counted in both), +1 smoothed, <= 1."""
    B = samples.shape[0]
    below, above = int(np.sum(samples <= 0)), int(np.sum(samples >= 0))
    return min(1.0, 2.0 * (1 + min(below, above)) / (B + 1))


def _check_paired(a: Sequence[PairSet], b: Sequence[PairSet]) -> None:
    _check_sets(a)
    _check_sets(b)
    if [s.task for s in a] != [s.task for s in b]:
        raise StsbenchError(
            f"the two sides have different tasks ({[s.task for s in a]} vs {[s.task for s in b]}); "
            "compare results of the same tasks"
        )
    for sa, sb in zip(a, b, strict=True):
        same = sa.n == sb.n and np.array_equal(sa.gold, sb.gold) and np.array_equal(sa.strata, sb.strata)
        if same and sa.index is not None and sb.index is not None:
            same = np.array_equal(sa.index, sb.index)
        if not same:
            raise StsbenchError(
                f"{sa.task}: the two sides score different pairs ({sa.n} vs {sb.n} pairs, or other gold, "
                "subsets or order); compare results computed on the same data"
            )


def paired_bootstrap(
    a: Sequence[PairSet], b: Sequence[PairSet], B: int, seed: int, level: float = 0.95
) -> dict[str, Difference]:
    """Per task and Avg.: ``figure(a) - figure(b)`` with the ``level`` interval and two-sided p of a paired bootstrap.

    Both models are scored on the same resampled pairs (same counts), so the interval reflects the pairs
    the two share, not two independent samples. ``se`` is the replicates' standard deviation; ``p`` is
    ``2 * min(#(d* <= 0), #(d* >= 0)) + 1`` smoothed over ``B + 1`` (a set against itself: 1).
    """
    _check_paired(a, b)
    reps: dict[str, np.ndarray] = {}
    observed: dict[str, float] = {}
    for sa, sb in zip(a, b, strict=True):
        counts = resample_counts(sa.strata, B, _task_rng(seed, sa.task))
        ra, rb = _bootstrap_many([sa.cosine, sb.cosine], sa.gold, counts)
        reps[sa.task] = ra - rb
        observed[sa.task] = sa.figure() - sb.figure()
    reps[AVG] = np.mean([reps[s.task] for s in a], axis=0)
    observed[AVG] = float(np.mean([observed[s.task] for s in a]))
    sizes = {s.task: s.n for s in a} | {AVG: sum(s.n for s in a)}
    out = {}
    for task, d in reps.items():
        low, high = percentile_interval(d, level)
        se = float(np.std(d, ddof=1)) if d.shape[0] > 1 else 0.0
        out[task] = Difference(task, observed[task], low, high, _bootstrap_p(d), se, sizes[task])
    return out
