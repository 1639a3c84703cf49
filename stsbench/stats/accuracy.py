"""Intervals of an accuracy (the transfer tasks'): Wilson for a fixed test set, Student t over k folds."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from stsbench.errors import StsbenchError
from stsbench.stats.seeds import one_sample


def _z(level: float) -> float:
    if not 0 < level < 1:
        raise StsbenchError(f"the interval level must lie in (0, 1), got {level}")
    return float(stats.norm.ppf((1 + level) / 2))


def binomial_interval(acc: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson (1927) score interval of an accuracy of ``acc`` percent on ``n`` test items, in percent.

    ``(p + z^2/2n -+ z sqrt(p(1 - p)/n + z^2/4n^2)) / (1 + z^2/n)`` with ``p = acc / 100``: unlike the Wald
    interval it stays inside [0, 100] and does not collapse at 0 or 100%.
    """
    z = _z(level)
    if n < 1:
        raise StsbenchError(f"a binomial interval needs at least one test item, got n = {n}")
    if not 0.0 <= acc <= 100.0:
        raise StsbenchError(f"the accuracy must be a percentage in [0, 100], got {acc}")
    p = acc / 100.0
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    return 100.0 * max(0.0, centre - half), 100.0 * min(1.0, centre + half)


def fold_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Student t interval of the mean over ``k`` folds: ``mean -+ t_{k-1} sd / sqrt(k)`` (units of ``values``).

    The folds share training data, so this reads the fold spread, not a sampling interval in the strict sense.
    """
    _z(level)
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.shape[0] < 2 or not np.isfinite(v).all():
        raise StsbenchError(f"an interval over folds needs at least 2 finite fold values, got {list(values)}")
    iv = one_sample(v, 0.0, level)  # the one t-interval of stsbench (stsbench.stats.seeds)
    return iv.low, iv.high
