"""Significance tests for comparing models: Williams' test, Holm's correction, the detectable difference.

The module's name, ``tests``, is part of the public API; it holds statistical tests, not pytest tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import accumulate

from stsbench.errors import StsbenchError
from stsbench.metrics import AVG


def williams(r12: float, r13: float, r23: float, n: int) -> tuple[float, float]:
    """Williams' t for ``r12 - r13``, two correlations that share variable 1, and its two-sided p (df ``n - 3``).

    Variable 1 is the gold score, 2 and 3 two models' scores on the same ``n`` pairs (Graham & Baldwin 2014
    compare MT metrics this way). Williams (1959), Steiger (1980) eq. 3::

        t = (r12 - r13) sqrt((n - 1)(1 + r23))
            / sqrt(2 (n - 1)/(n - 3) |R| + ((r12 + r13)^2 / 4)(1 - r23)^3),
        |R| = 1 - r12^2 - r13^2 - r23^2 + 2 r12 r13 r23.
    """
    for name, r in (("r12", r12), ("r13", r13), ("r23", r23)):
        if not -1.0 <= r <= 1.0 or math.isnan(r):
            raise StsbenchError(f"Williams' test: {name} = {r} is not a correlation in [-1, 1]")
    if n <= 3:
        raise StsbenchError(f"Williams' test needs more than 3 pairs, got n = {n}")
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    if det < -1e-12:
        raise StsbenchError(
            f"Williams' test: r12={r12}, r13={r13}, r23={r23} cannot be correlations of one data set "
            "(their matrix is not positive semi-definite)"
        )
    num = (r12 - r13) * math.sqrt((n - 1) * (1 + r23))
    den = math.sqrt(2 * (n - 1) / (n - 3) * max(det, 0.0) + (r12 + r13) ** 2 / 4 * (1 - r23) ** 3)
    if den == 0.0:
        if num == 0.0:  # identical predictors (r23 = 1, r12 = r13): no difference to test
            return 0.0, 1.0
        raise StsbenchError("Williams' test is undefined for these correlations (zero variance)")
    t = num / den
    from scipy import stats

    return t, float(2 * stats.t.sf(abs(t), n - 3))


def _pvalues(pvalues: Sequence[float]) -> list[float]:
    ps = [float(p) for p in pvalues]
    if bad := [p for p in ps if not 0.0 <= p <= 1.0]:
        raise StsbenchError(f"Holm's correction: {bad[0]} is not a p-value in [0, 1]")
    return ps


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's (1979) step-down adjusted p-values, in the input order.

    The ``i``-th smallest p (1-based) becomes ``max over j <= i of min(1, (m - j + 1) p_(j))``: monotone in
    the ordering and capped at 1. Rejecting where the adjusted p <= alpha controls the family-wise error.
    """
    ps = _pvalues(pvalues)
    order = sorted(range(len(ps)), key=lambda k: ps[k])
    running = accumulate((min(1.0, (len(ps) - r) * ps[i]) for r, i in enumerate(order)), max, initial=0.0)
    return [p for _, p in sorted(zip(order, list(running)[1:], strict=True))]


# the rule in words, for the tables' legends
FAMILY = (
    "across the tasks of a comparison; Avg., a function of them, is outside the family: "
    "its own p, uncorrected"
)


@dataclass(frozen=True)
class FamilyP:
    """One figure of a comparison: its own p and, for a task, Holm's adjusted p (None for the average)."""

    p: float
    holm: float | None

    @property
    def deciding(self) -> float:
        """The p a significance mark is decided on: Holm's for a task, its own (uncorrected) for the average."""
        return self.p if self.holm is None else self.holm


def holm_over_tasks(pvalues: Mapping[str, float], average: str = AVG) -> dict[str, FamilyP]:
    """Holm's correction across the tasks of one comparison, the average left out of the family.

    The average is a function of the tasks' figures, not one more hypothesis: counting it would make every
    task pay for a test that restates theirs. It keeps its own p, uncorrected, and tables say so
    (:data:`FAMILY`). ``stsbench compare`` and the report's differences over seeds both decide here.
    """
    tasks = [t for t in pvalues if t != average]
    adjusted = dict(zip(tasks, holm([pvalues[t] for t in tasks]), strict=True))
    own = _pvalues(list(pvalues.values()))
    return {t: FamilyP(p, adjusted.get(t)) for t, p in zip(pvalues, own, strict=True)}


def min_detectable_difference(
    se: float, alpha: float = 0.05, power: float = 0.8, df: float | None = None
) -> float:
    """The smallest true difference a two-sided test at ``alpha`` detects with probability ``power``.

    ``(z_{1 - alpha/2} + z_{power}) * se``, with Student t quantiles on ``df`` degrees of freedom when
    given (a few seeds), normal quantiles otherwise (a bootstrap se over thousands of pairs).
    """
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise StsbenchError(f"alpha and power must lie in (0, 1), got alpha={alpha}, power={power}")
    if se < 0 or math.isnan(se):
        raise StsbenchError(f"the standard error must be >= 0, got {se}")
    if df is not None and not df > 0:
        raise StsbenchError(f"degrees of freedom must be > 0, got {df}")
    from scipy import stats

    dist = stats.norm if df is None else stats.t(df)
    return float((dist.ppf(1 - alpha / 2) + dist.ppf(power)) * se)
