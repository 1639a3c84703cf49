"""Statistics over training seeds: the t-interval of the mean, what tables print beside a group of seeds.

Each seed is one draw of the whole training run (data order, dropout, new-layer initialisation), so the seeds'
figures are an i.i.d. sample of what the method gives; with few seeds the t distribution, not the normal,
bounds the mean. A difference between settings, and every verdict on it, is :mod:`stsbench.stats.decide`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

from stsbench.errors import StsbenchError
from stsbench.stats.decide import one_sample


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
    iv = one_sample(x, 0.0, level)  # the one t-interval of stsbench (stsbench.stats.decide)
    return SeedSummary(mean, float(x.std(ddof=1)), n, iv.low, iv.high)
