"""The one decision rule of stsbench: an interval of a difference over seeds, read against a difference that matters.

Every verdict stsbench prints goes through here: a claim's statements (:mod:`stsbench.stats.claims`), a published
cell (:mod:`stsbench.published.seed_check`, ``check --tolerance seeds``), the report's differences over seeds,
the ablation gains and ``stsbench compare`` over seeds. docs/uncertainty.md ("One rule") states it in words.

The estimate (:class:`Interval`) is the difference of two settings' figures over seeds, on unrounded figures:

- *paired* on the seeds the two settings share (trainings that share a seed share their data order and
  initialisation), the seeds only one of them has left out and named;
- *Welch* (Satterthwaite's degrees of freedom) only when the seed sets are disjoint;
- *one-sample* against a model not trained here (a released checkpoint, the backbone: one fixed figure, flagged
  by the caller, never recognised by its seed number), or against a published figure.

Its 95% t-interval is what the report prints, and each decision reads it against ``delta`` (δ, the difference that
matters, in the figure's units):

- directional, "A > B" (:func:`directional`): *supported* when the interval lies above 0 and not inside ±δ;
  *contradicted* when it lies entirely below -δ; *no difference that matters* when it lies inside ±δ;
  *inconclusive* otherwise;
- equivalence, "|A - B| < δ" (:func:`equivalence`, a plateau): supported inside ±δ, contradicted entirely
  outside, inconclusive otherwise;
- a bound, "A < threshold" (:func:`bound`, a collapse): supported below it, contradicted above it;
- a published cell (:func:`reproduction`): *reproduced* inside ±δ, *not reproduced* entirely outside,
  *inconclusive* otherwise;
- two-sided, no direction claimed (:func:`two_sided`, difference tables and gains): *a difference that matters*
  entirely outside ±δ, *none that matters* inside, *undecided* otherwise.

Degenerate data is said, never turned into certainty: fewer than :data:`MIN_SEEDS` seeds on a trained side gives
at most *inconclusive* (the smallest detectable difference shown); with :data:`MIN_SEEDS` or more a zero spread on
unrounded figures means the seeds did not move the figure: the interval is the point, compared with δ as above,
and the decision says "no spread over seeds". Each decision carries its margin: how far the end of the interval that
decides it lies from its threshold (positive: decided; negative for an undecided one: how far from the nearest
decisive outcome). The functions take plain arrays and mappings so that ``benchmarks/decision_calibration.py`` runs
this code on simulated seeds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from stsbench.errors import StsbenchError
from stsbench.stats.tests import min_detectable_difference


def _t():  # noqa: ANN202
    """The t distribution (scipy's), imported when first used: loading a recipe (its claims) needs no scipy."""
    from scipy import stats

    return stats.t


ALPHA = 0.05  # the printed interval's level is 1 - ALPHA
LEVEL = 1 - ALPHA
POWER = 0.8  # of the smallest detectable difference
MIN_SEEDS = 3  # below: at most inconclusive, whatever the spread
DELTA = (
    0.5  # points: the difference that matters for a claim on an x100 figure (task, Avg., best-dev, final-dev)
)
CELL_DELTA = 1.0  # points: the difference from a published figure that matters
BEST_DRAWS = 2000
ROUND_OFF = 1e-12  # relative: a spread below this times the figures' size is float round-off, not seeds

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
NO_DIFFERENCE = "no difference that matters"
INCONCLUSIVE = "inconclusive"
REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
MATTERS = "a difference that matters"
NONE_MATTERS = "none that matters"
UNDECIDED = "undecided"

PAIRED = "paired"
WELCH = "Welch"
ONE_SAMPLE = "one-sample"
FIXED = "two models not trained here"

NO_SPREAD = "no spread over seeds"


def check_delta(delta: float, what: str = "delta") -> float:
    """δ, refused in one line unless a positive finite number."""
    if isinstance(delta, bool) or not (
        isinstance(delta, (int, float)) and math.isfinite(delta) and delta > 0
    ):
        raise StsbenchError(f"{what} must be a positive number in the figure's units, got {delta!r}")
    return float(delta)


@dataclass(frozen=True)
class Interval:
    """A difference over seeds (claimed direction positive), its 95% t-interval and how it was estimated."""

    diff: float
    se: float
    df: float
    low: float
    high: float
    design: str  # PAIRED | WELCH | ONE_SAMPLE | FIXED
    n: tuple[int, ...]  # seeds per side, in the statement's order (a model not trained here: 1)
    used: int  # the seeds the test rests on (paired: the shared ones; Welch: the smaller side)
    left_out: tuple[int, ...] = ()  # seeds only one side has (paired)
    level: float = LEVEL

    @property
    def few(self) -> bool:
        """Fewer than :data:`MIN_SEEDS` seeds behind it (a comparison of fixed figures has no seeds: never few)."""
        return self.design != FIXED and self.used < MIN_SEEDS

    @property
    def spread(self) -> bool:
        """Whether the seeds moved the figure at all (a zero spread on unrounded figures: they did not)."""
        return self.se > 0

    @property
    def p(self) -> float | None:
        """Two-sided p of a zero difference; None without a spread (the interval is the point)."""
        return float(2 * _t().sf(abs(self.diff) / self.se, self.df)) if self.spread else None

    @property
    def mdd(self) -> float | None:
        """The smallest true difference a two-sided test at ALPHA detects with 80% power; None without a spread."""
        if not self.spread:
            return None
        return min_detectable_difference(self.se, alpha=1 - self.level, power=POWER, df=self.df)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return {**asdict(self), "p": self.p, "mdd": self.mdd, "few": self.few, "spread": self.spread}


def _interval(diff: float, se: float, df: float, level: float, **rest: Any) -> Interval:
    half = float(_t().ppf((1 + level) / 2, df)) * se if se > 0 else 0.0
    return Interval(
        float(diff), float(se), float(df), float(diff) - half, float(diff) + half, level=level, **rest
    )


def _array(values: Sequence[float] | np.ndarray) -> np.ndarray:
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.float64)
    if x.ndim != 1 or not np.all(np.isfinite(x)):
        raise StsbenchError(f"a seed figure is not a finite number ({x.tolist()})")
    return x


def _no_float_noise(se: float, scale: float) -> float:
    """``se``, or 0 where it is float round-off of figures of size ``scale`` (78.60 - 78.61 is not exactly -0.01)."""
    return 0.0 if se <= ROUND_OFF * max(1.0, scale) else se


def one_sample(
    values: Sequence[float] | np.ndarray,
    against: float = 0.0,
    level: float = LEVEL,
    design: str = ONE_SAMPLE,
    scale: float = 0.0,
) -> Interval | None:
    """mean(values) - against, t-interval on n - 1 df; None below two values (no spread to estimate).

    ``scale``: the size of the figures the values were computed from (differences of figures near 78: 78), below
    which a spread is float round-off (:data:`ROUND_OFF`), not seeds.
    """
    x = _array(values)
    if x.size < 2:
        return None
    scale = max(scale, float(np.abs(x).max()), abs(against))
    se = _no_float_noise(float(x.std(ddof=1) / math.sqrt(x.size)), scale)
    return _interval(
        float(x.mean()) - against, se, x.size - 1, level, design=design, n=(x.size,), used=x.size
    )


def welch(
    parts: Sequence[tuple[float, Sequence[float] | np.ndarray]], level: float = LEVEL, design: str = WELCH
) -> Interval | None:
    """sum(sign * mean) over independent samples, Satterthwaite's df (Welch's for two); None if one has < 2."""
    xs = [(sign, _array(x)) for sign, x in parts]
    if any(x.size < 2 for _, x in xs):
        return None
    v = [x.var(ddof=1) / x.size for _, x in xs]
    se = _no_float_noise(math.sqrt(sum(v)), max(float(np.abs(x).max()) for _, x in xs))
    denominator = sum(vi**2 / (x.size - 1) for vi, (_, x) in zip(v, xs, strict=True))
    df = sum(v) ** 2 / denominator if denominator > 0 else float(sum(x.size - 1 for _, x in xs))
    diff = float(sum(sign * x.mean() for sign, x in xs))
    n = tuple(x.size for _, x in xs)
    return _interval(diff, se, df, level, design=design, n=n, used=min(n))


def difference(
    a: Mapping[int, float],
    b: Mapping[int, float],
    fixed: tuple[bool, bool] = (False, False),
    level: float = LEVEL,
) -> Interval | None:
    """mean(a) - mean(b) over seeds (``{seed: figure}``), the design following the seeds (module docstring).

    ``fixed``: which side is a model not trained here (one figure, whatever its seed key). None where no
    interval can be had (fewer than two seeds on a trained side, or none shared and too few for Welch).
    """
    fa, fb = fixed
    if fa and fb:  # two fixed figures: the difference is exact, no seeds vary it
        d = _only(a) - _only(b)
        return Interval(d, 0.0, 1.0, d, d, FIXED, (1, 1), 0, (), level)
    if fa or fb:
        x, c, sign = (list(b.values()), _only(a), -1.0) if fa else (list(a.values()), _only(b), 1.0)
        est = one_sample(np.array(x) - c, 0.0, level, scale=max(abs(c), *map(abs, x)))
        if est is None:
            return None
        n = (1, len(x)) if fa else (len(x), 1)
        return _interval(sign * est.diff, est.se, est.df, level, design=ONE_SAMPLE, n=n, used=len(x))
    shared = sorted(set(a) & set(b))
    if shared:
        left = tuple(sorted(set(a) ^ set(b)))
        scale = max(abs(v) for v in (*a.values(), *b.values()))
        est = one_sample([a[s] - b[s] for s in shared], 0.0, level, scale=scale)
        if est is None:
            return None
        return _interval(
            est.diff,
            est.se,
            est.df,
            level,
            design=PAIRED,
            n=(len(a), len(b)),
            used=len(shared),
            left_out=left,
        )
    return welch([(1.0, list(a.values())), (-1.0, list(b.values()))], level)


def gap(
    sides: Sequence[Mapping[int, float]], fixed: Sequence[bool] = (), level: float = LEVEL
) -> Interval | None:
    """(A - B) - (C - D): paired on the seeds all four share, else Satterthwaite over the four samples.

    A side not trained here enters as a constant.
    """
    fixed = tuple(fixed) or (False,) * 4
    signs = (1.0, -1.0, -1.0, 1.0)
    const = sum(sign * _only(x) for sign, x, f in zip(signs, sides, fixed, strict=True) if f)
    trained = [(sign, x) for sign, x, f in zip(signs, sides, fixed, strict=True) if not f]
    n = tuple(1 if f else len(x) for x, f in zip(sides, fixed, strict=True))
    if not trained:
        return Interval(const, 0.0, 1.0, const, const, FIXED, n, 0, (), level)
    shared = sorted(set.intersection(*(set(x) for _, x in trained)))
    if shared:
        every = set().union(*(set(x) for _, x in trained))
        per = [sum(sign * x[s] for sign, x in trained) + const for s in shared]
        scale = max(abs(v) for _, x in trained for v in x.values())
        est = one_sample(per, 0.0, level, scale=scale)
        if est is None:
            return None
        left = tuple(sorted(every - set(shared)))
        return _interval(est.diff, est.se, est.df, level, design=PAIRED, n=n, used=len(shared), left_out=left)
    est = welch([(sign, list(x.values())) for sign, x in trained], level)
    if est is None:
        return None
    return _interval(est.diff + const, est.se, est.df, level, design=WELCH, n=n, used=est.used)


def _only(x: Mapping[int, float]) -> float:
    if len(x) != 1:
        raise StsbenchError(f"a model not trained here has one figure, got {len(x)}")
    return float(next(iter(x.values())))


@dataclass(frozen=True)
class Decision:
    """An outcome read off an interval, its margin and, where the data are degenerate, what they lack."""

    outcome: str
    margin: (
        float | None
    )  # decided: how far inside its region; undecided: minus the distance to the nearest one
    nearest: str | None = None  # undecided: the decisive outcome the interval is nearest to
    note: str | None = None  # "fewer than 3 seeds (2)", "no spread over seeds", ...
    p: float | None = None  # the p that Holm's correction reads for the decisive outcome against the claim

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


def _read(
    iv: Interval, regions: Sequence[tuple[str, float]], undecided: str, p: float | None = None
) -> Decision:
    """The region (outcome, slack) with a positive slack, else ``undecided`` with the nearest's (negative) slack."""
    note = NO_SPREAD if not iv.spread and iv.design != FIXED else None
    if iv.few:
        note = f"fewer than {MIN_SEEDS} seeds ({iv.used}): at most {undecided}"
        return Decision(undecided, None, max(regions, key=lambda r: r[1])[0], note, p)
    for outcome, slack in regions:
        if slack > 0:
            return Decision(outcome, slack, None, note, p)
    outcome, slack = max(regions, key=lambda r: r[1])
    return Decision(undecided, slack, outcome, note, p)


def _p_beyond(iv: Interval, threshold: float, below: bool) -> float:
    """Two-sided p at which the interval's end just reaches ``threshold`` (below: its upper end below it)."""
    if not iv.spread:
        return 0.0 if (iv.diff < threshold if below else iv.diff > threshold) else 1.0
    t = (iv.diff - threshold) / iv.se
    return float(min(1.0, 2 * (_t().cdf(t, iv.df) if below else _t().sf(t, iv.df))))


def directional(iv: Interval, delta: float) -> Decision:
    """A > B (``iv``: A - B): supported, contradicted, no difference that matters, or inconclusive."""
    regions = [
        (SUPPORTED, min(iv.low, iv.high - delta)),
        (CONTRADICTED, -delta - iv.high),
        (NO_DIFFERENCE, min(iv.low + delta, delta - iv.high)),
    ]
    return _read(iv, regions, INCONCLUSIVE, _p_beyond(iv, -delta, below=True))


def equivalence(iv: Interval, delta: float) -> Decision:
    """|A - B| < δ (a plateau's pair): supported inside ±δ, contradicted entirely outside, else inconclusive."""
    regions = [
        (SUPPORTED, min(iv.low + delta, delta - iv.high)),
        (CONTRADICTED, max(iv.low - delta, -delta - iv.high)),
    ]
    p = _p_beyond(iv, delta, below=False) if iv.diff >= 0 else _p_beyond(iv, -delta, below=True)
    return _read(iv, regions, INCONCLUSIVE, p)


def bound(iv: Interval) -> Decision:
    """The bound, threshold - A > 0 (a collapse: A below the threshold): supported above 0, contradicted below."""
    regions = [(SUPPORTED, iv.low), (CONTRADICTED, -iv.high)]
    return _read(iv, regions, INCONCLUSIVE, _p_beyond(iv, 0.0, below=True))


def reproduction(iv: Interval, delta: float) -> Decision:
    """A cell, seeds - published: reproduced inside ±δ, not reproduced entirely outside, inconclusive otherwise."""
    regions = [
        (REPRODUCED, min(iv.low + delta, delta - iv.high)),
        (NOT_REPRODUCED, max(iv.low - delta, -delta - iv.high)),
    ]
    return _read(iv, regions, INCONCLUSIVE)


def two_sided(iv: Interval, delta: float) -> Decision:
    """No direction claimed: a difference that matters (outside ±δ), none that matters (inside), or undecided."""
    regions = [
        (MATTERS, max(iv.low - delta, -delta - iv.high)),
        (NONE_MATTERS, min(iv.low + delta, delta - iv.high)),
    ]
    return _read(iv, regions, UNDECIDED)


def combine(outcomes: Sequence[str]) -> str:
    """A claim from its statements: contradicted if any is, supported (or no difference) if all are."""
    found = set(outcomes)
    if CONTRADICTED in found:
        return CONTRADICTED
    for every in (SUPPORTED, NO_DIFFERENCE):
        if found == {every}:
            return every
    return INCONCLUSIVE


def best_probability(
    scores: Mapping[str, Mapping[int, float]],
    settings: Sequence[str],
    fixed: Sequence[str] = (),
    draws: int = BEST_DRAWS,
    seed: int = 0,
) -> dict[str, float]:
    """How often each setting has the highest mean when seeds are resampled with replacement (a description).

    Settings trained on the same seeds are resampled jointly (one draw of seeds serves them all: a seed's data
    order is shared); settings with other seed sets independently; a model not trained here is its one figure.
    A tie splits the draw evenly between the tied settings.
    """
    rng = np.random.default_rng(seed)
    means = np.zeros((draws, len(settings)))
    by_seeds: dict[tuple[int, ...], list[int]] = {}
    for j, s in enumerate(settings):
        if s in fixed:
            means[:, j] = _only(scores[s])
        else:
            by_seeds.setdefault(tuple(sorted(scores[s])), []).append(j)
    for seeds, columns in by_seeds.items():
        idx = rng.integers(0, len(seeds), size=(draws, len(seeds)))
        for j in columns:
            x = np.array([scores[settings[j]][k] for k in seeds])
            means[:, j] = x[idx].mean(axis=1)
    top = means.max(axis=1, keepdims=True)
    tied = np.isclose(means, top, rtol=0.0, atol=1e-12)
    share = tied / tied.sum(axis=1, keepdims=True)
    return {s: float(v) for s, v in zip(settings, share.mean(axis=0), strict=True)}
