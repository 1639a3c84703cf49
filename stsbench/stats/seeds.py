"""Statistics over training seeds: the t-interval of a mean or a difference, what tables print beside seeds.

Each seed is one draw of the whole training run (data order, dropout, new-layer initialisation), so the seeds'
figures are an i.i.d. sample of what the method gives; with few seeds the t distribution, not the normal,
bounds the mean. This module holds the interval arithmetic alone (:class:`Interval`, :func:`one_sample`, the t
helpers): the steps that train, evaluate and analyse use it, so their code keys read it. What a verdict makes of
an interval (its words, δ, the minimum seeds) is :mod:`stsbench.stats.decide`'s, which no step's key reads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from stsbench.errors import StsbenchError

LEVEL = 0.95  # an interval's level
ROUND_OFF = 1e-12  # relative: a spread below this times the figures' size is float round-off, not seeds
# how an interval was estimated
PAIRED = "paired"
PARTLY = "partly paired"
WELCH = "Welch"
ONE_SAMPLE = "one-sample"
FIXED = "two models not trained here"


def t_cdf(t: float, df: float) -> float:
    """Student's t CDF: scipy.special.stdtr, what scipy.stats.t.cdf calls (100x faster for one value).

    Imported when first used: loading a recipe (its claims) needs no scipy.
    """
    from scipy.special import stdtr

    return float(stdtr(df, t))


def t_ppf(q: float, df: float) -> float:
    """Student's t quantile: scipy.special.stdtrit, what scipy.stats.t.ppf calls."""
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


@dataclass(frozen=True)
class Interval:
    """A difference over seeds (claimed direction positive), its 95% t-interval and how it was estimated."""

    diff: float
    se: float
    df: float
    low: float
    high: float
    design: str  # PAIRED | PARTLY | WELCH | ONE_SAMPLE | FIXED
    n: tuple[int, ...]  # seeds per side, in the statement's order (a model not trained here: 1)
    used: int  # the seeds the test rests on (paired: the shared ones; Welch: the smaller side)
    level: float = LEVEL

    @property
    def spread(self) -> bool:
        """Whether the seeds moved the figure at all (a zero spread on unrounded figures: they did not)."""
        return self.se > 0

    @property
    def p(self) -> float | None:
        """Two-sided p of a zero difference; None without a spread (the interval is the point)."""
        return 2 * t_cdf(-abs(self.diff) / self.se, self.df) if self.spread else None


def interval(diff: float, se: float, df: float, level: float = LEVEL, **rest: Any) -> Interval:
    diff = float(diff)
    half = t_ppf((1 + level) / 2, df) * se if se > 0 else 0.0
    return Interval(diff, float(se), float(df), diff - half, diff + half, level=level, **rest)


def finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.float64)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise StsbenchError(f"a seed figure is not a finite number ({x.tolist()})")
    return x


def variance(x: np.ndarray, h: float, scale: float) -> float:
    """The seeds' variance s² + h²/12; a spread below float round-off of figures of size ``scale`` is none."""
    s2 = float(x.var(ddof=1))
    if math.sqrt(s2) <= ROUND_OFF * max(1.0, scale):
        s2 = 0.0
    return s2 + h * h / 12


def one_sample(
    values: Sequence[float] | np.ndarray,
    against: float = 0.0,
    level: float = LEVEL,
    design: str = ONE_SAMPLE,
    scale: float = 0.0,
    resolution: float = 0.0,
    runs: float = math.inf,
) -> Interval | None:
    """mean(values) - against, t-interval on n - 1 df; None below two values (no spread to estimate).

    ``resolution``: h of each value (docs/uncertainty.md); ``runs``: ``against`` is the mean of that many runs
    with our seeds' spread (a published figure of one run: 1; an exact figure: inf), so the variance of the
    difference is (s² + h²/12)(1/n + 1/runs). ``scale``: the size of the figures the values were computed from.
    """
    x = finite(values)
    if x.size < 2:
        return None
    scale = max(scale, float(np.abs(x).max()), abs(against))
    se = math.sqrt(variance(x, resolution, scale) * (1 / x.size + 1 / runs))
    return interval(float(x.mean()) - against, se, x.size - 1, level, design=design, n=(x.size,), used=x.size)


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


def seed_summary(values: Sequence[float], level: float = 0.95) -> SeedSummary:
    """Mean ± t_{(1+level)/2, n-1} · s/√n over the seeds' ``values`` (any scale; the result keeps it)."""
    if not 0 < level < 1:
        raise StsbenchError(f"confidence level must lie between 0 and 1, got {level}")
    x = np.asarray(list(values), dtype=np.float64)
    if x.ndim != 1 or x.size == 0:
        raise StsbenchError("seed_summary: no seed values to summarise; finish at least one seed")
    if not np.all(np.isfinite(x)):
        raise StsbenchError(f"seed_summary: a seed value is not a finite number ({x.tolist()})")
    n, mean = x.size, float(x.mean())
    if n == 1:
        return SeedSummary(mean, None, 1, None, None)
    iv = one_sample(x, 0.0, level)  # the one t-interval of stsbench
    return SeedSummary(mean, float(x.std(ddof=1)), n, iv.low, iv.high)
