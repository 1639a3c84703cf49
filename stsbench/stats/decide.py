"""The one decision rule of stsbench: an interval of a difference over seeds, read against a difference that matters.

Every verdict stsbench prints goes through here: a claim's statements (:mod:`stsbench.stats.claims`), a published
cell (:mod:`stsbench.published.seed_check`, ``check --tolerance seeds``), the report's differences over seeds,
the ablation gains and ``stsbench compare`` over seeds. docs/uncertainty.md ("One rule") states it in words; its
version is :data:`RULE_VERSION`, recorded in ``reproduction.json`` with every δ used. The verdict words and the
defaults (δ, cell δ, alpha, power, minimum seeds) are defined here and nowhere else.

The estimate (:class:`Interval`) is the difference of two settings' figures over seeds, on unrounded figures:

- *paired* when the two settings share every seed (trainings that share a seed share their data order and
  initialisation); *partly paired* when they share some (at least three): the partially-overlapping-samples t
  (Derrick, Toher & White 2017, T_new2); *Welch* (Satterthwaite's df) for disjoint seeds or fewer than three
  shared;
- *one-sample* against a model not trained here (a released checkpoint, the backbone: one fixed figure, flagged
  by the caller), or against a published figure of k runs (:func:`cell`);
- a gap (A - B) - (C - D) pairs within each side, then combines the two (Satterthwaite).

A figure's *resolution* h (a transfer accuracy moves in steps of 100/N; a figure stored at two decimals in steps of
0.01; a raw correlation: 0) adds h²/12 to the seeds' variance, so that quantised figures never show a zero spread.
The one :class:`Decision` record holds the interval and what the rule reads off it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from stsbench.errors import StsbenchError
from stsbench.stats.seeds import (
    FIXED,
    LEVEL,
    ONE_SAMPLE,
    PAIRED,
    PARTLY,
    WELCH,
    Interval,
    finite,
    interval,
    one_sample,
    t_cdf,
    t_ppf,
    variance,
)
from stsbench.stats.tests import holm, min_detectable_difference

RULE_VERSION = 2  # 1: the first rule (stop 58); 2: directions and sizes, resolution, published runs, families
ALPHA = 0.05  # the printed interval's level is 1 - ALPHA (LEVEL, 0.95)
POWER = 0.8  # of the smallest detectable difference
MIN_SEEDS = 3  # below: at most inconclusive, whatever the spread
DELTA = (
    0.5  # points: the difference that matters for a claim on an x100 figure (task, Avg., best-dev, final-dev)
)
CELL_DELTA = 1.0  # points: the difference from a published figure that matters
BEST_DRAWS = 20000
STORED = 0.01  # the resolution of a figure stored at two decimals

# a statement A > B, from its interval against δ (docs/uncertainty.md, One rule)
SUPPORTED_MORE = "supported, by more than δ"
SUPPORTED = "supported"
SUPPORTED_LESS = "supported, by less than δ"
NO_DIFFERENCE = "no difference that matters"
REVERSED_LESS = "reversed, by less than δ"
REVERSED = "reversed"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
DIRECTIONS = (SUPPORTED_MORE, SUPPORTED, SUPPORTED_LESS)  # the paper's direction shown
VERDICTS = (
    SUPPORTED_MORE,
    SUPPORTED,
    SUPPORTED_LESS,
    NO_DIFFERENCE,
    REVERSED_LESS,
    REVERSED,
    CONTRADICTED,
    INCONCLUSIVE,
)
# a published cell
REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
MISSING = "missing"  # no seed has the figure
NOT_CHECKED = "not checked"  # an Avg. over other tasks than the published row's
NOT_COMPARABLE = "not comparable"  # computed on modified data
CELL_VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, MISSING, NOT_CHECKED, NOT_COMPARABLE)
# no direction claimed (difference tables, gains, compare)
MATTERS = "a difference that matters"
NONE_MATTERS = "none that matters"
UNDECIDED = "undecided"

NO_SPREAD = "no spread over seeds"
ROUNDED = "judged on two-decimal figures (an aggregate written before raw figures were stored)"


def check_delta(delta: float, what: str = "delta") -> float:
    """δ, refused in one line unless a positive finite number."""
    if isinstance(delta, bool) or not (
        isinstance(delta, (int, float)) and math.isfinite(delta) and delta > 0
    ):
        raise StsbenchError(f"{what} must be a positive number in the figure's units, got {delta!r}")
    return float(delta)


def average_resolution(parts: Sequence[float]) -> float:
    """An average's resolution: its h² is the mean of its parts' h² divided by their count."""
    return math.sqrt(sum(h * h for h in parts) / len(parts) ** 2) if parts else 0.0


def _satterthwaite(v: Sequence[float], dfs: Sequence[float], fallback: float) -> tuple[float, float]:
    """The standard error of a sum of independent estimates of variances ``v`` on ``dfs`` df, and its df.

    ``fallback``: the df where every variance is 0 (no interval width then depends on it).
    """
    denominator = sum(vi**2 / d for vi, d in zip(v, dfs, strict=True))
    return math.sqrt(sum(v)), sum(v) ** 2 / denominator if denominator > 0 else float(fallback)


def _welch(parts: Sequence[tuple[float, np.ndarray, float]], level: float, n: tuple[int, ...]) -> Interval:
    """sum(sign * mean) over independent samples (sign, values, resolution), Satterthwaite's df."""
    scale = max(float(np.abs(x).max()) for _, x, _ in parts)
    v = [variance(x, h, scale) / x.size for _, x, h in parts]
    dfs = [x.size - 1 for _, x, _ in parts]
    se, df = _satterthwaite(v, dfs, sum(dfs))
    diff = float(sum(sign * x.mean() for sign, x, _ in parts))
    return interval(diff, se, df, level, design=WELCH, n=n, used=min(x.size for _, x, _ in parts))


def _partly(
    a: Mapping[int, float], b: Mapping[int, float], shared: list[int], h: float, level: float
) -> Interval:
    """Derrick, Toher & White (2017), T_new2: means over all of each side's seeds, the shared ones' covariance."""
    x, y = np.array(list(a.values())), np.array(list(b.values()))
    n1, n2, nc = x.size, y.size, len(shared)
    scale = max(float(np.abs(x).max()), float(np.abs(y).max()))
    v1, v2 = variance(x, h, scale), variance(y, h, scale)
    r = float(np.corrcoef([a[s] for s in shared], [b[s] for s in shared])[0, 1]) if nc > 1 else 0.0
    r = 0.0 if not math.isfinite(r) else r
    se2 = max(v1 / n1 + v2 / n2 - 2 * r * math.sqrt(v1 * v2) * nc / (n1 * n2), 0.0)
    gamma = _satterthwaite([v1 / n1, v2 / n2], [n1 - 1, n2 - 1], n1 + n2 - 2)[1]  # Welch's df
    na, nb = n1 - nc, n2 - nc
    df = (nc - 1) + (gamma - nc + 1) / (na + nb + 2 * nc) * (na + nb)
    return interval(float(x.mean() - y.mean()), math.sqrt(se2), df, level, design=PARTLY, n=(n1, n2), used=nc)


def difference(
    a: Mapping[int, float],
    b: Mapping[int, float],
    fixed: tuple[bool, bool] = (False, False),
    level: float = LEVEL,
    resolution: float = 0.0,
) -> Interval | None:
    """mean(a) - mean(b) over seeds (``{seed: figure}``), the design following the seeds (module docstring).

    ``fixed``: which side is a model not trained here (one figure, whatever its seed key). None where no
    interval can be had (fewer than two seeds on a trained side).
    """
    fa, fb = fixed
    if fa and fb:  # two fixed figures: the difference is exact, no seeds vary it
        d = _only(a) - _only(b)
        return Interval(d, 0.0, 1.0, d, d, FIXED, (1, 1), 0, level)
    if fa or fb:
        x, c, sign = (list(b.values()), _only(a), -1.0) if fa else (list(a.values()), _only(b), 1.0)
        est = one_sample(np.array(x) - c, 0.0, level, scale=max(abs(c), *map(abs, x)), resolution=resolution)
        if est is None:
            return None
        n = (1, len(x)) if fa else (len(x), 1)
        return interval(sign * est.diff, est.se, est.df, level, design=ONE_SAMPLE, n=n, used=len(x))
    shared = sorted(set(a) & set(b))
    if len(a) < 2 or len(b) < 2:
        return None
    if set(a) == set(b):  # every seed shared: the per-seed differences, each of two quantised figures
        scale = max(abs(v) for v in (*a.values(), *b.values()))
        est = one_sample(
            [a[s] - b[s] for s in shared], 0.0, level, scale=scale, resolution=resolution * math.sqrt(2)
        )
        return None if est is None else replace(est, design=PAIRED, n=(len(a), len(b)))
    if len(shared) >= MIN_SEEDS:
        return _partly(a, b, shared, resolution, level)
    xa, xb = finite(list(a.values())), finite(list(b.values()))
    return _welch([(1.0, xa, resolution), (-1.0, xb, resolution)], level, (len(a), len(b)))


def _combine(
    parts: Sequence[tuple[float, Interval]], const: float, n: tuple[int, ...], level: float
) -> Interval:
    """sum(sign * estimate) + const over independent estimates, Satterthwaite's df."""
    dfs = [iv.df for _, iv in parts]
    se, df = _satterthwaite([iv.se**2 for _, iv in parts], dfs, min(dfs))
    diff = sum(sign * iv.diff for sign, iv in parts) + const
    design = parts[0][1].design if len({iv.design for _, iv in parts}) == 1 else WELCH
    return interval(diff, se, df, level, design=design, n=n, used=min(iv.used for _, iv in parts))


def gap(
    sides: Sequence[Mapping[int, float]],
    fixed: Sequence[bool] = (),
    level: float = LEVEL,
    resolution: float = 0.0,
) -> Interval | None:
    """(A - B) - (C - D): per seed where all four share every seed; else each side paired within, then combined.

    A side not trained here enters as a constant.
    """
    fixed = tuple(fixed) or (False,) * 4
    n = tuple(1 if f else len(x) for x, f in zip(sides, fixed, strict=True))
    trained = [x for x, f in zip(sides, fixed, strict=True) if not f]
    if not trained:
        d = sum(s * _only(x) for s, x in zip((1.0, -1.0, -1.0, 1.0), sides, strict=True))
        return Interval(d, 0.0, 1.0, d, d, FIXED, n, 0, level)
    if len(trained) == 4 and len({frozenset(x) for x in trained}) == 1:
        a, b, c, d = sides
        per = [a[s] - b[s] - c[s] + d[s] for s in a]
        scale = max(abs(v) for x in trained for v in x.values())
        est = one_sample(per, 0.0, level, scale=scale, resolution=2 * resolution)
        return None if est is None else replace(est, design=PAIRED, n=n)
    halves = []
    const = 0.0
    for sign, (x, y), (fx, fy) in ((1.0, sides[:2], fixed[:2]), (-1.0, sides[2:], fixed[2:])):
        if fx and fy:
            const += sign * (_only(x) - _only(y))
            continue
        est = difference(x, y, (fx, fy), level, resolution)
        if est is None:
            return None
        halves.append((sign, est))
    return _combine(halves, const, n, level)


def _only(x: Mapping[int, float]) -> float:
    if len(x) != 1:
        raise StsbenchError(f"a model not trained here has one figure, got {len(x)}")
    return float(next(iter(x.values())))


def few(iv: Interval) -> bool:
    """Fewer than :data:`MIN_SEEDS` seeds behind ``iv`` (a comparison of fixed figures has no seeds: never few)."""
    return iv.design != FIXED and iv.used < MIN_SEEDS


DESIGN_WORDS = {PAIRED: "paired t", PARTLY: "partly paired t", WELCH: "Welch", ONE_SAMPLE: "one-sample t"}


@dataclass(frozen=True)
class Decision:
    """The one record of a verdict: what it is about, its interval over seeds, the outcome read off it.

    Claims' statements, published cells, difference tables, ablation gains and ``compare`` over seeds all hold
    this record and serialise it (:meth:`to_dict`).
    """

    outcome: str
    interval: Interval | None = None  # None: no interval (fewer than two seeds, nothing measured)
    margin: float | None = (
        None  # decided: how far inside its region; undecided: minus the distance to the nearest
    )
    nearest: str | None = None  # undecided: the decisive outcome the interval is nearest to
    note: str | None = None  # "fewer than 3 seeds (2)", "no spread over seeds", "seeds 1, 2 collapsed", ...
    p: float | None = None  # the p the outcome rests on; what it tests: ``p_tests``
    p_tests: str | None = None
    p_holm: float | None = (
        None  # ``p`` Holm-adjusted within its family (a claim's statements, a table's tasks)
    )
    delta: float | None = None  # the difference that matters it was read against (a bound: None)
    what: str = ""  # the statement or the figure

    @property
    def diff(self) -> float | None:
        """The measured difference (claimed direction positive)."""
        return None if self.interval is None else self.interval.diff

    @property
    def low(self) -> float | None:
        """The 95% interval's lower end."""
        return None if self.interval is None else self.interval.low

    @property
    def high(self) -> float | None:
        """The 95% interval's upper end."""
        return None if self.interval is None else self.interval.high

    @property
    def test(self) -> str | None:
        """The design in words (paired t, partly paired t, Welch, one-sample t)."""
        return None if self.interval is None else DESIGN_WORDS.get(self.interval.design, self.interval.design)

    @property
    def mdd(self) -> float | None:
        """The smallest true difference a two-sided test at ALPHA detects with 80% power; None without a spread."""
        iv = self.interval
        if iv is None or not iv.spread:
            return None
        return min_detectable_difference(iv.se, alpha=1 - iv.level, power=POWER, df=iv.df)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON: the interval's fields flattened beside the outcome."""
        out = {k: v for k, v in asdict(self).items() if k != "interval"}
        iv = self.interval
        fields = ("diff", "se", "df", "low", "high", "design", "n", "used", "level")
        out.update({k: None if iv is None else getattr(iv, k) for k in fields})
        out.update(p_zero=None if iv is None else iv.p, mdd=self.mdd, test=self.test, rule=RULE_VERSION)
        return out


def _read(
    iv: Interval,
    regions: Sequence[tuple[str, float]],
    undecided: str,
    p: float | None = None,
    **rest: Any,
) -> Decision:
    """The region (outcome, slack) with a positive slack, else ``undecided`` with the nearest's (negative) slack."""
    note = NO_SPREAD if not iv.spread and iv.design != FIXED else None
    if few(iv):
        note = f"fewer than {MIN_SEEDS} seeds ({iv.used}): at most {undecided}"
        return Decision(undecided, iv, None, max(regions, key=lambda r: r[1])[0], note, p, **rest)
    for outcome, slack in regions:
        if slack > 0:
            return Decision(outcome, iv, slack, None, note, p, **rest)
    outcome, slack = max(regions, key=lambda r: r[1])
    return Decision(undecided, iv, slack, outcome, note, p, **rest)


def _p_beyond(iv: Interval, threshold: float, below: bool) -> float:
    """Two-sided p at which the interval's end just reaches ``threshold`` (below: its upper end below it)."""
    if not iv.spread:
        return 0.0 if (iv.diff < threshold if below else iv.diff > threshold) else 1.0
    t = (iv.diff - threshold) / iv.se
    return min(1.0, 2 * t_cdf(t if below else -t, iv.df))


def directional(iv: Interval, delta: float, what: str = "") -> Decision:
    """A > B (``iv``: A - B): its direction and size read off the interval (low, high) against δ.

    low > δ: supported, by more than δ; 0 < low <= δ <= high: supported; 0 < low, high < δ: supported, by less than
    δ; inside ±δ and straddling 0: no difference that matters; -δ < low, high < 0: reversed, by less than δ;
    low <= -δ <= high < 0: reversed; high < -δ: contradicted; otherwise inconclusive. The p is that of the
    contradiction (the upper end below -δ), which Holm's correction within a claim reads.
    """
    lo, hi, d = iv.low, iv.high, delta
    if lo > d:
        regions = [(SUPPORTED_MORE, lo - d)]
    elif lo > 0:
        regions = [(SUPPORTED, lo)] if hi >= d else [(SUPPORTED_LESS, min(lo, d - hi))]
    elif hi < -d:
        regions = [(CONTRADICTED, -d - hi)]
    elif hi < 0:
        regions = [(REVERSED, -hi)] if lo <= -d else [(REVERSED_LESS, min(-hi, lo + d))]
    elif lo > -d and hi < d:
        regions = [(NO_DIFFERENCE, min(lo + d, d - hi))]
    else:  # straddles 0 and reaches ±δ: the nearest decisive outcomes, each a negative slack
        regions = [(SUPPORTED, lo), (NO_DIFFERENCE, min(lo + d, d - hi)), (REVERSED, -hi)]
    p = _p_beyond(iv, -delta, below=True)
    tests = "contradiction (diff < -δ), one-sided, doubled"
    return _read(iv, regions, INCONCLUSIVE, p, p_tests=tests, delta=delta, what=what)


def equivalence(iv: Interval, delta: float, what: str = "") -> Decision:
    """|A - B| < δ (a plateau's pair): supported inside ±δ, contradicted entirely outside, else inconclusive."""
    regions = [
        (SUPPORTED, min(iv.low + delta, delta - iv.high)),
        (CONTRADICTED, max(iv.low - delta, -delta - iv.high)),
    ]
    p = _p_beyond(iv, delta, below=False) if iv.diff >= 0 else _p_beyond(iv, -delta, below=True)
    return _read(
        iv, regions, INCONCLUSIVE, p, p_tests="|diff| > δ, one-sided, doubled", delta=delta, what=what
    )


def bound(iv: Interval, what: str = "") -> Decision:
    """The bound, threshold - A > 0 (a collapse: A below the threshold): supported above 0, contradicted below."""
    regions = [(SUPPORTED, iv.low), (CONTRADICTED, -iv.high)]
    p = _p_beyond(iv, 0.0, below=True)
    return _read(iv, regions, INCONCLUSIVE, p, p_tests="above the bound, one-sided, doubled", what=what)


def reproduction(iv: Interval, delta: float, what: str = "", note: str | None = None) -> Decision:
    """A cell, seeds - published: reproduced inside ±δ, not reproduced entirely outside, inconclusive otherwise."""
    regions = [
        (REPRODUCED, min(iv.low + delta, delta - iv.high)),
        (NOT_REPRODUCED, max(iv.low - delta, -delta - iv.high)),
    ]
    dec = _read(iv, regions, INCONCLUSIVE, iv.p, p_tests="diff = 0, two-sided", delta=delta, what=what)
    return noted(dec, note)


def p_matters(iv: Interval, delta: float) -> float:
    """The p of "the difference matters": 2 · sf((|d| - δ)/se, df), capped at 1 (the family's `*` reads it)."""
    if not iv.spread:
        return 0.0 if abs(iv.diff) > delta else 1.0
    return min(1.0, 2 * t_cdf(-(abs(iv.diff) - delta) / iv.se, iv.df))


def two_sided(iv: Interval, delta: float, what: str = "") -> Decision:
    """No direction claimed: a difference that matters (outside ±δ), none that matters (inside), or undecided."""
    regions = [
        (MATTERS, max(iv.low - delta, -delta - iv.high)),
        (NONE_MATTERS, min(iv.low + delta, delta - iv.high)),
    ]
    p = p_matters(iv, delta)
    return _read(iv, regions, UNDECIDED, p, p_tests="|diff| > δ, two-sided", delta=delta, what=what)


def family(decisions: Sequence[Decision]) -> list[Decision]:
    """Holm over a family of two-sided decisions (a table's tasks; the caller leaves the Avg. out): ``p_holm``.

    A difference that matters needs Holm's p below ALPHA too (the table's `*`).
    """
    ps = holm([d.p if d.p is not None else 1.0 for d in decisions])
    return [replace(d, p_holm=p) for d, p in zip(decisions, ps, strict=True)]


def marked(dec: Decision) -> bool:
    """The `*` of a difference table: a difference that matters by its interval and by Holm over the family."""
    p = dec.p_holm if dec.p_holm is not None else dec.p
    return dec.outcome == MATTERS and p is not None and p < ALPHA


def noted(dec: Decision, note: str | None) -> Decision:
    """``dec`` with ``note`` added to its notes."""
    if not note:
        return dec
    return replace(dec, note=f"{dec.note}; {note}" if dec.note else note)


def unmeasured(outcome: str, what: str = "", note: str | None = None, delta: float | None = None) -> Decision:
    """A decision without an interval: too few seeds, nothing measured, not checked."""
    return Decision(outcome, None, note=note, delta=delta, what=what)


# -- non-finite seeds -------------------------------------------------------------------------------------------


def finite_seeds(values: Mapping[int, float], dev: bool) -> tuple[dict[int, float], str | None, bool]:
    """The seeds' figures a test reads, what was done to non-finite ones, and whether they cap the verdict.

    A NaN dev Spearman (``dev``: best-dev, final-dev) is a collapsed training (constant embeddings): it enters as
    0, named. Where some seeds collapsed and others trained, the set mixes two laws whose mean no few seeds can
    bound (docs/uncertainty.md, "Collapsed and departing seeds"): the 0s stay in the figures shown and cap every
    statement that reads them at inconclusive. Any other non-finite figure is left out and caps likewise.
    """
    bad = sorted(s for s, v in values.items() if not math.isfinite(float(v)))
    if not bad:
        return {s: float(v) for s, v in values.items()}, None, False
    seeds = ", ".join(str(s) for s in bad)
    word = "seed" if len(bad) == 1 else "seeds"
    if dev and all(math.isnan(float(values[s])) for s in bad):
        mixed = len(bad) < len(values)
        return (
            {s: 0.0 if s in bad else float(v) for s, v in values.items()},
            f"{word} {seeds} collapsed: NaN -> 0"
            + (
                f", {len(bad)} of {len(values)} (a mix of collapsed and trained): at most {INCONCLUSIVE}"
                if mixed
                else ""
            ),
            mixed,
        )
    kept = {s: float(v) for s, v in values.items() if s not in bad}
    return kept, f"{word} {seeds} not finite: at most {INCONCLUSIVE}", True


def capped(dec: Decision, why: str) -> Decision:
    """``dec`` at most inconclusive (non-finite seeds behind it), saying why."""
    if dec.outcome == INCONCLUSIVE:
        return noted(dec, why)
    return noted(replace(dec, outcome=INCONCLUSIVE, nearest=dec.outcome, margin=None), why)


# -- a published cell -------------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def expected_max(k: int) -> float:
    """e_K: the expected maximum of K standard normals (numerical integration)."""
    from scipy import integrate, stats

    if k <= 1:
        return 0.0
    f = lambda x: x * k * stats.norm.pdf(x) * stats.norm.cdf(x) ** (k - 1)  # noqa: E731
    return float(integrate.quad(f, -12, 12)[0])


def cell(
    values: Sequence[float],
    published: float,
    delta: float = CELL_DELTA,
    *,
    runs: int = 1,
    best_of: int | None = None,
    resolution: float = 0.0,
    what: str = "",
    level: float = LEVEL,
) -> Decision:
    """Seeds against a published figure of ``runs`` runs (or the best of ``best_of``): reproduced or not.

    The interval of m - P is (m - P) ± t(0.975, n-1) · s · sqrt(1/n + 1/k), s² including h²/12, assuming the
    paper's seed spread equals ours; with ``best_of`` K, P is compared with m + s · e_K (one run). Where
    t · s · sqrt(1/k) >= δ, *reproduced* cannot be reached at any n, and the decision says so.
    """
    x = finite(values)
    k = 1 if best_of else runs
    if x.size < 2:
        return unmeasured(INCONCLUSIVE, what, f"one seed: at most {INCONCLUSIVE}", delta)
    iv = one_sample(x, published, level, resolution=resolution, runs=k)
    notes = (
        [f"the published figure is one run{f' (the best of {best_of})' if best_of else ''}"] if k == 1 else []
    )
    s = iv.se / math.sqrt(1 / x.size + 1 / k)  # the seeds' spread, h²/12 included
    if best_of:
        shift = s * expected_max(best_of)
        iv = replace(iv, diff=iv.diff + shift, low=iv.low + shift, high=iv.high + shift)
        notes.append(f"against the mean + s·e_{best_of} ({shift:+.3f})")
    floor = t_ppf((1 + level) / 2, x.size - 1) * s * math.sqrt(1 / k)
    if floor >= delta:
        notes.append(f"{REPRODUCED} cannot be reached at any number of seeds (t·s/√k {floor:.2f} ≥ δ)")
    return reproduction(iv, delta, what, "; ".join(notes) or None)


# -- a claim of several statements --------------------------------------------------------------------------------


def combine(decisions: Sequence[Decision], alpha: float = ALPHA) -> tuple[str, float | None, str | None]:
    """A claim from its statements: (verdict, margin, qualifier); ``decisions`` after Holm (``p_holm``).

    *contradicted* if any statement is; the same word if every statement has it; *supported* if every statement's
    direction is shown (an intersection-union test), the qualifier naming those by more or less than δ;
    otherwise *inconclusive*, its margin the nearest statement's, negative.
    """
    words = [d.outcome for d in decisions]
    margins = [d.margin for d in decisions]
    if CONTRADICTED in words:
        found = [d.margin for d in decisions if d.outcome == CONTRADICTED and d.margin is not None]
        return CONTRADICTED, max(found, default=None), None
    known = None if any(m is None for m in margins) or not margins else margins
    if len(set(words)) == 1 and words[0] != INCONCLUSIVE:
        return words[0], None if known is None else min(known), None
    if words and all(w in DIRECTIONS for w in words):
        parts = []
        for word, size in ((SUPPORTED_MORE, "by more than δ"), (SUPPORTED_LESS, "by less than δ")):
            named = [d.what for d in decisions if d.outcome == word]
            if named:
                parts.append(f"{size}: {', '.join(named)}")
        return SUPPORTED, None if known is None else min(known), "; ".join(parts) or None
    return INCONCLUSIVE, None if known is None else -min(abs(m) for m in known), None


def false_contradiction(claims: int, alpha: float = ALPHA) -> float:
    """The chance that one of ``claims`` claims, each true or reversed by less than δ, shows a false contradiction.

    Each at most alpha/2 (one side of its interval): 1 - (1 - alpha/2)^m.
    """
    return 1 - (1 - alpha / 2) ** claims


# -- P(best) ------------------------------------------------------------------------------------------------------


def best_probability(
    scores: Mapping[str, Mapping[int, float]],
    settings: Sequence[str],
    fixed: Sequence[str] = (),
    draws: int = BEST_DRAWS,
    seed: int = 0,
) -> dict[str, float]:
    """How likely each setting has the highest true mean, drawn from the seeds' t distributions (a description).

    Settings on the same seeds: setting + seed + residual, the pooled residual variance with (n-1)(k-1) df (for
    two settings, the paired t); otherwise each mean m + s/sqrt(n) · Z under the means' covariance (the shared
    seeds' covariances), scaled by one sqrt(df/χ²_df), df the smallest over the pairs (for two, Welch's or the
    partly paired t's): P(best) of two settings is then 1 - the one-sided p of their statement. A model not
    trained here is its one figure. Ties split evenly.
    """
    rng = np.random.default_rng(seed)
    trained = [s for s in settings if s not in fixed]
    k = len(trained)
    mean = np.array([float(np.mean(list(scores[s].values()))) for s in trained])
    seedsets = {frozenset(scores[s]) for s in trained}
    if k >= 2 and len(seedsets) == 1:
        keys = sorted(next(iter(seedsets)))
        y = np.array([[scores[s][q] for q in keys] for s in trained])  # settings x seeds
        n = len(keys)
        resid = y - y.mean(axis=1, keepdims=True) - y.mean(axis=0, keepdims=True) + y.mean()
        df = float((n - 1) * (k - 1))
        sigma2 = float((resid**2).sum() / df) if df > 0 else 0.0
        cov = np.eye(k) * sigma2 / n
    else:
        cov = np.zeros((k, k))
        for i, a in enumerate(trained):
            x = np.array(list(scores[a].values()))
            cov[i, i] = x.var(ddof=1) / x.size if x.size > 1 else 0.0
            for j in range(i + 1, k):  # the shared seeds' covariance of the two means
                b = trained[j]
                shared = sorted(set(scores[a]) & set(scores[b]))
                if len(shared) > 1:
                    c = np.cov([scores[a][q] for q in shared], [scores[b][q] for q in shared])[0, 1]
                    cov[i, j] = cov[j, i] = c * len(shared) / (len(scores[a]) * len(scores[b]))
        dfs = []
        for i, a in enumerate(trained):
            dfs += [iv.df for b in trained[i + 1 :] if (iv := difference(scores[a], scores[b])) and iv.spread]
            if (fixed or k == 1) and len(scores[a]) > 1:
                dfs.append(len(scores[a]) - 1.0)
        df = min(dfs) if dfs else math.inf
    means = np.zeros((draws, len(settings)))
    if k:
        w, vecs = np.linalg.eigh((cov + cov.T) / 2)
        root = vecs * np.sqrt(np.clip(w, 0.0, None))
        z = rng.standard_normal((draws, k)) @ root.T
        scale = np.sqrt(df / rng.chisquare(df, size=(draws, 1))) if math.isfinite(df) and df > 0 else 1.0
        drawn = mean + z * scale
        for j, s in enumerate(trained):
            means[:, list(settings).index(s)] = drawn[:, j]
    for j, s in enumerate(settings):
        if s in fixed:
            means[:, j] = _only(scores[s])
    top = means.max(axis=1, keepdims=True)
    tied = np.isclose(means, top, rtol=0.0, atol=1e-12)
    share = tied / tied.sum(axis=1, keepdims=True)
    return {s: float(v) for s, v in zip(settings, share.mean(axis=0), strict=True)}
