"""Statistics over training seeds: a t-interval of the mean, and Welch's test between two methods' seeds.

Each seed is one draw of the whole training run (data order, dropout, new-layer initialisation), so the seeds'
figures are an i.i.d. sample of what the method gives; with few seeds the t distribution, not the normal,
bounds the mean. Welch's test (unequal variances) compares two methods without assuming they vary alike.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from stsbench.errors import StsbenchError
from stsbench.stats.tests import min_detectable_difference


@dataclass(frozen=True)
class SeedSummary:
    """Mean, sample std (ddof 1), n and the ``level`` t-interval of the mean; one seed: no std, no interval."""

    mean: float
    std: float | None
    n: int
    low: float | None
    high: float | None

    def to_dict(self) -> dict[str, float | int | None]:
        """Plain dict for JSON."""
        return asdict(self)


@dataclass(frozen=True)
class SeedDifference:
    """Welch's comparison of two sets of seeds: ``a`` minus ``b``.

    ``diff``: difference of the means; ``low``/``high``: its t-interval (Welch-Satterthwaite ``df``);
    ``p``: two-sided; ``se``: the standard error of ``diff``; ``min_detectable``: the smallest true difference
    these seeds would detect at 80% power with a two-sided test at 1 - ``level``.
    """

    diff: float
    low: float
    high: float
    p: float
    se: float
    df: float
    n_a: int
    n_b: int
    min_detectable: float

    def to_dict(self) -> dict[str, float | int]:
        """Plain dict for JSON."""
        return asdict(self)


def _values(values: Sequence[float], what: str) -> np.ndarray:
    x = np.asarray(list(values), dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise StsbenchError(f"{what}: no seed values to summarise; finish at least one seed")
    if not np.all(np.isfinite(x)):
        raise StsbenchError(f"{what}: a seed value is not a finite number ({x.tolist()})")
    return x


def _check_level(level: float) -> None:
    if not 0 < level < 1:
        raise StsbenchError(f"confidence level must lie between 0 and 1, got {level}")


def seed_summary(values: Sequence[float], level: float = 0.95) -> SeedSummary:
    """Mean ± t_{(1+level)/2, n-1} · s/√n over the seeds' ``values`` (any scale; the result keeps it)."""
    _check_level(level)
    x = _values(values, "seed_summary")
    n, mean = x.size, float(x.mean())
    if n == 1:
        return SeedSummary(mean, None, 1, None, None)
    std = float(x.std(ddof=1))
    half = float(stats.t.ppf((1 + level) / 2, n - 1)) * std / math.sqrt(n)
    return SeedSummary(mean, std, n, mean - half, mean + half)


def seed_difference(
    a_values: Sequence[float], b_values: Sequence[float], level: float = 0.95
) -> SeedDifference:
    """Welch's two-sample t test of mean(a) - mean(b), its interval and the smallest detectable difference.

    se = √(s_a²/n_a + s_b²/n_b); df = se⁴ / ((s_a²/n_a)²/(n_a-1) + (s_b²/n_b)²/(n_b-1)) (Welch 1947).
    Both sides need at least two seeds (a variance). Equal, spread-free sides give p = 1.
    """
    _check_level(level)
    a, b = _values(a_values, "seed_difference (a)"), _values(b_values, "seed_difference (b)")
    if a.size < 2 or b.size < 2:
        raise StsbenchError(
            f"a seed comparison needs at least 2 seeds per side (got {a.size} and {b.size}); train more seeds"
        )
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    diff = float(a.mean() - b.mean())
    if se == 0.0:  # no spread on either side: the difference is exact
        df = float(a.size + b.size - 2)
        p = 1.0 if diff == 0 else 0.0
        return SeedDifference(diff, diff, diff, p, 0.0, df, a.size, b.size, 0.0)
    df = float((va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1)))
    p = float(2 * stats.t.sf(abs(diff) / se, df))
    half = float(stats.t.ppf((1 + level) / 2, df)) * se
    mdd = min_detectable_difference(se, alpha=1 - level, power=0.8, df=df)
    return SeedDifference(diff, diff - half, diff + half, p, se, df, a.size, b.size, mdd)
