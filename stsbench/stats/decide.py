"""The one decision rule of stsbench: an interval of a difference over seeds, read against a difference that matters.

Every verdict stsbench prints goes through here: a claim's statements (:mod:`stsbench.stats.claims`), a published
cell (:mod:`stsbench.published.check`, ``check --tolerance seeds``), the report's differences over seeds,
the ablation gains and ``stsbench compare`` over seeds. docs/uncertainty.md ("One rule") states it in words; its
version is :data:`RULE_VERSION`, recorded in ``reproduction.json`` with every δ used. The verdict words and the
defaults (δ, cell δ, alpha, power, minimum seeds) are defined here and nowhere else.

The estimate (:class:`Interval`) is the difference of two settings' figures over seeds, on unrounded figures:

- *paired* when the two settings share every seed (trainings that share a seed share their data order and
  initialisation); *partly paired* when they share three or more: the partially-overlapping-samples t (Derrick,
  Toher & White 2017, T_new2); one or two shared: Welch's variance with their covariance bounded at ρ = -1;
  *Welch* for disjoint seeds, on Hsu's df (the smaller n - 1);
- *one-sample* against a model not trained here (a released checkpoint, the backbone: one fixed figure, flagged
  by the caller), or against a published figure of k runs or the best of K (:func:`cell`);
- a gap (A - B) - (C - D): one contrast over its distinct settings (:func:`gap`).

A figure's *resolution* h (a transfer accuracy moves in steps of 100/N; a figure stored at two decimals in steps of
0.01; a raw correlation: 0) adds h²/12 to the seeds' variance (h²/4 where the seeds spread less than one step),
so that quantised figures never show a zero spread.
The one :class:`Decision` record holds the interval and what the rule reads off it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from functools import lru_cache, partial
from pathlib import Path
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

# 1: the first rule (stop 58); 2: directions and sizes, resolution, published runs, families; 3: a gap as one
# contrast, exact best-of-K cells, few shared seeds bounded, Hsu's df, h²/4 below one step, one vocabulary;
# 4: a cell whose seeds hold one far below the others (a run that trained badly) is at most inconclusive;
# 5: ... only where those seeds change its word (the others judged alone, at half the α, read another)
RULE_VERSION = 5
ALPHA = 0.05  # the printed interval's level is 1 - ALPHA (LEVEL, 0.95)
POWER = 0.8  # of the smallest detectable difference
MIN_SEEDS = 3  # below: at most inconclusive, whatever the spread
# points: the difference that matters for a claim on an x100 figure (task, Avg., best-dev, final-dev)
DELTA = 0.5
CELL_DELTA = 1.0  # points: the difference from a published figure that matters
BEST_DRAWS = 20000
STORED = 0.01  # the resolution of a figure stored at two decimals

# The one vocabulary (docs/uncertainty.md, "One rule"): the same word for the same interval in every section and
# command. A statement A > B, from its interval against δ:
SUPPORTED_MORE = "supported, by more than δ"
SUPPORTED = "supported"
SUPPORTED_LESS = "supported, by less than δ"
NO_DIFFERENCE = "no difference that matters"
REVERSED_LESS = "reversed, by less than δ"
REVERSED = "reversed"
REVERSED_MORE = "reversed, by more than δ"
INCONCLUSIVE = "inconclusive"
DIRECTIONS = (SUPPORTED_MORE, SUPPORTED, SUPPORTED_LESS)  # the paper's direction shown
OPPOSITE = (REVERSED_LESS, REVERSED, REVERSED_MORE)  # the opposite direction shown
VERDICTS = (*DIRECTIONS, NO_DIFFERENCE, *OPPOSITE, INCONCLUSIVE)
# a claim: the statements' common word, supported / reversed (every statement that direction), or contradicted
# (a statement reversed by more than δ after Holm; a plateau or collapse claim refuted)
CONTRADICTED = "contradicted"
CLAIM_VERDICTS = (*VERDICTS, CONTRADICTED)
# a plateau's pair; a collapse's setting
WITHIN = "within the margin"
BEYOND = "beyond the margin"
BELOW = "below the bound"
NOT_BELOW = "not below the bound"
STATEMENT_WORDS = (*VERDICTS[:-1], WITHIN, BEYOND, BELOW, NOT_BELOW, INCONCLUSIVE)  # every statement's word
# a published cell
REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
MISSING = "missing"  # no seed has the figure
NOT_CHECKED = "not checked"  # an Avg. over other tasks than the published row's
NOT_COMPARABLE = "not comparable"  # computed on modified data
CELL_VERDICTS = (REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE, MISSING, NOT_CHECKED, NOT_COMPARABLE)
# no direction claimed (difference tables, gains, compare)
MATTERS = "a difference that matters"
FAR_BELOW = "seeds far below the others"  # a cell's note where :func:`departing` found some
# why a verdict is capped at inconclusive (:attr:`Decision.cap`)
CAP_DEPARTING = "departing seeds"  # a seed far below the others changes the cell's word (:func:`cell`)
CAP_NOT_FINITE = "seeds not finite"  # some seeds' figures not finite, or collapsed beside trained ones
CAP_HOLM = "not after Holm"  # decisive by its own interval, not after Holm over its family
# the scale in one line, under every report's title and every edition README's verdicts (:func:`legend`)
LEGEND = (
    "Scale (95% intervals against δ, the difference that matters): a statement A > B is *supported, by more "
    "than δ* / *supported* / *supported, by less than δ* / *no difference that matters* / *reversed, by less "
    "than δ* / *reversed* / *reversed, by more than δ*, or *inconclusive*; a claim takes its statements' common "
    "word, *contradicted* where one is reversed by more than δ; a published cell is *reproduced* / *not "
    "reproduced* / *inconclusive*; a difference with no direction claimed is *a difference that matters* / *no "
    "difference that matters* / *inconclusive*."
)
# where the sequential plan stopped the seeds: a verdict's interval is its look's repeated one, not a fixed-n 95%
SEQUENTIAL_SCALE = (
    "each verdict's interval, its look's repeated interval where the sequential plan stopped it,"
)


def legend(sequential: bool = False) -> str:
    """:data:`LEGEND`, its intervals named as a sequential report's verdicts read them where ``sequential``."""
    return LEGEND.replace("95% intervals", SEQUENTIAL_SCALE) if sequential else LEGEND


BOUNDED = "Welch, shared seeds bounded"  # 1-2 shared seeds: their covariance bounded at ρ = -1
NO_SPREAD = "no spread over seeds"
ROUNDED = "judged on two-decimal figures (an aggregate written before raw figures were stored)"


def check_delta(delta: float, what: str = "delta") -> float:
    """δ, refused in one line unless a positive finite number."""
    if isinstance(delta, bool) or not (isinstance(delta, int | float) and math.isfinite(delta) and delta > 0):
        raise StsbenchError(f"{what} must be a positive number in the figure's units, got {delta!r}")
    return float(delta)


def decimals(delta: float) -> int:
    """How many decimals a figure read against δ prints: max(0, -⌊log10 δ⌋) + 1 (δ 1.0: 1; 0.5: 2; 0.05: 3)."""
    return max(0, -math.floor(math.log10(delta))) + 1


def signed(x: float, delta: float) -> str:
    """``x`` signed at δ's decimals (:func:`decimals`); a figure that rounds to zero prints unsigned."""
    d = decimals(delta)
    text = f"{x:+.{d}f}"
    return f"{0:.{d}f}" if float(text) == 0 else text


def average_resolution(parts: Sequence[float]) -> float:
    """An average's resolution: its h² is the mean of its parts' h² divided by their count."""
    return math.sqrt(sum(h * h for h in parts) / len(parts) ** 2) if parts else 0.0


def _satterthwaite(v: Sequence[float], dfs: Sequence[float], fallback: float) -> tuple[float, float]:
    """The standard error of a sum of independent estimates of variances ``v`` on ``dfs`` df, and its df.

    ``fallback``: the df where every variance is 0 (no interval width then depends on it).
    """
    denominator = sum(vi**2 / d for vi, d in zip(v, dfs, strict=True))
    return math.sqrt(sum(v)), sum(v) ** 2 / denominator if denominator > 0 else float(fallback)


def _stepped(spread: float, h: float) -> float:
    """The resolution a test uses: h, or h·√3 where the seeds' ``spread`` (a std) is less than one step.

    A rounding error's variance is h²/12 for a law wider than its step (Sheppard), up to h²/4 for one that sits on
    two steps (a cell at n = 5 on a 0.2 grid, seed std 0.1, missed 0.031 a side with h²/12).
    """
    return h * math.sqrt(3) if 0 < h and spread < h else h


def _step(x: Sequence[float] | np.ndarray, h: float) -> float:
    """:func:`_stepped` on the values' sample std (one value, or no resolution: h as it is, no std computed)."""
    return _stepped(float(np.std(x, ddof=1)), h) if len(x) > 1 and h > 0 else h


def _variance(x: np.ndarray, h: float, scale: float) -> float:
    return variance(x, _step(x, h), scale)


def _mean_cov(
    a: Mapping[int, float], b: Mapping[int, float], va: float, vb: float, adverse: float = -1.0
) -> float:
    """cov(mean a, mean b) over the seeds they share, as every statement estimates it.

    ``va``, ``vb``: each side's s² + h²/12 over all its seeds. T_new2's r·S1·S2·n_c/(n1·n2) from three shared
    seeds on; one or two, too few to estimate it (Welch alone would ignore it), bounded at the ρ that widens the
    interval (``adverse``: -1 for a difference of the two means, +1 for their sum); none shared: 0.
    """
    shared = sorted(set(a) & set(b))
    if not shared:
        return 0.0
    r = adverse
    if len(shared) >= MIN_SEEDS:
        r = float(np.corrcoef([a[q] for q in shared], [b[q] for q in shared])[0, 1])
        r = 0.0 if not math.isfinite(r) else r
    return r * math.sqrt(va * vb) * len(shared) / (len(a) * len(b))


def _partly(a: Mapping[int, float], b: Mapping[int, float], h: float, level: float) -> Interval:
    """mean(a) - mean(b) on partly shared or disjoint seeds: Welch's variance less twice their covariance.

    The covariance: :func:`_mean_cov` (none shared: 0). The df: from three shared seeds T_new2's (Derrick,
    Toher & White 2017); one or two, Welch's; none, Hsu's, the smaller n - 1 (Satterthwaite's missed 0.029 a
    side at three seeds a side of std 0.25 and 1.0; the smaller n - 1 bounds the statistic's law from the
    conservative side: Hsu 1938; Scheffé 1970).
    """
    x, y = finite(list(a.values())), finite(list(b.values()))
    n1, n2, nc = x.size, y.size, len(set(a) & set(b))
    scale = max(float(np.abs(x).max()), float(np.abs(y).max()))
    v1, v2 = _variance(x, h, scale), _variance(y, h, scale)
    se2 = max(v1 / n1 + v2 / n2 - 2 * _mean_cov(a, b, v1, v2), 0.0)
    df = _satterthwaite([v1 / n1, v2 / n2], [n1 - 1, n2 - 1], n1 + n2 - 2)[1]  # Welch's df
    design, used = BOUNDED, min(n1, n2)  # fewer than three shared: Welch's df, every seed used
    if not nc:
        df, design = float(used - 1), WELCH
    elif nc >= MIN_SEEDS:
        na, nb = n1 - nc, n2 - nc
        df, design, used = (nc - 1) + (df - nc + 1) / (na + nb + 2 * nc) * (na + nb), PARTLY, nc
    diff = float(x.mean() - y.mean())
    return interval(diff, math.sqrt(se2), df, level, design=design, n=(n1, n2), used=used)


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
        h = _step(x, resolution)
        est = one_sample(np.array(x) - c, 0.0, level, scale=max(abs(c), *map(abs, x)), resolution=h)
        if est is None:
            return None
        n = (1, len(x)) if fa else (len(x), 1)
        return interval(sign * est.diff, est.se, est.df, level, design=ONE_SAMPLE, n=n, used=len(x))
    shared = sorted(set(a) & set(b))
    if len(a) < 2 or len(b) < 2:
        return None
    if set(a) == set(b):  # every seed shared: the per-seed differences, each of two quantised figures
        scale = max(abs(v) for v in (*a.values(), *b.values()))
        per = [a[s] - b[s] for s in shared]
        est = one_sample(per, 0.0, level, scale=scale, resolution=_step(per, resolution * math.sqrt(2)))
        return None if est is None else replace(est, design=PAIRED, n=(len(a), len(b)))
    return _partly(a, b, resolution, level)


def gap(
    sides: Sequence[Mapping[int, float]],
    fixed: Sequence[bool] = (),
    level: float = LEVEL,
    resolution: float = 0.0,
) -> Interval | None:
    """(A - B) - (C - D), judged as one contrast over the distinct settings.

    A setting named twice, as B in (A - B) > (B - C), enters once with its summed coefficient: A - 2B + C (a
    side is the same setting where it is the same mapping object).

    Settings on the same seeds form a block whose contrast is taken per seed. One block: the one-sample t of the
    per-seed contrast; two blocks: their difference by :func:`difference` (paired, T_new2, bounded or Welch);
    more: each block's s² + h²/12 and, for each pair sharing seeds, their covariance (:func:`_mean_cov`, bounded
    at the adverse ρ = +1 below three shared seeds), Satterthwaite's df over the blocks' own terms. A side not
    trained here enters as a constant. None where a trained setting has fewer than two seeds.
    """
    fixed = tuple(fixed) or (False,) * 4
    n = tuple(1 if f else len(x) for x, f in zip(sides, fixed, strict=True))
    distinct: dict[int, list] = {}  # id(mapping) -> [coefficient, mapping], distinct trained settings
    const = 0.0
    for sign, x, f in zip((1.0, -1.0, -1.0, 1.0), sides, fixed, strict=True):
        if f:
            const += sign * _only(x)
        else:
            distinct.setdefault(id(x), [0.0, x])[0] += sign
    terms = [t for t in distinct.values() if t[0] != 0]
    if not terms:
        return Interval(const, 0.0, 1.0, const, const, FIXED, n, 0, level)
    if any(len(x) < 2 for _, x in terms):
        return None
    blocks: dict[frozenset[int], list[tuple[float, Mapping[int, float]]]] = {}
    for c, x in terms:  # settings on the same seeds form one block, its contrast taken per seed
        blocks.setdefault(frozenset(x), []).append((c, x))
    series = [{q: sum(c * x[q] for c, x in block) for q in sorted(seeds)} for seeds, block in blocks.items()]
    hs = [resolution * math.sqrt(sum(c * c for c, _ in block)) for block in blocks.values()]
    scale = max(abs(v) for _, x in terms for v in x.values())
    if len(series) == 1:  # every distinct setting on every seed: the contrast per seed
        per = list(series[0].values())
        est = one_sample(per, -const, level, scale=scale, resolution=_step(per, hs[0]))
        return None if est is None else replace(est, design=PAIRED, n=n)
    if len(series) == 2:  # two blocks: their difference, paired on the seeds they share (T_new2) or not
        neg = {q: -v for q, v in series[1].items()}
        est = difference(series[0], neg, level=level, resolution=max(hs))
        if est is None:
            return None
        return replace(est, diff=est.diff + const, low=est.low + const, high=est.high + const, n=n)
    xs = [finite(list(x.values())) for x in series]  # three blocks or more: their covariances on shared seeds
    vs = [_variance(x, h, scale) for x, h in zip(xs, hs, strict=True)]
    dfs = [x.size - 1 for x in xs]
    se, df = _satterthwaite([v / x.size for v, x in zip(vs, xs, strict=True)], dfs, min(dfs))
    pairs = [(i, j) for i in range(len(xs)) for j in range(i + 1, len(xs))]
    cov = sum(2 * _mean_cov(series[i], series[j], vs[i], vs[j], adverse=1.0) for i, j in pairs)
    diff = sum(float(x.mean()) for x in xs) + const
    se = math.sqrt(max(se**2 + cov, 0.0))
    return interval(diff, se, df, level, design=WELCH, n=n, used=min(x.size for x in xs))


def _only(x: Mapping[int, float]) -> float:
    if len(x) != 1:
        raise StsbenchError(f"a model not trained here has one figure, got {len(x)}")
    return float(next(iter(x.values())))


def few(iv: Interval) -> bool:
    """Fewer than :data:`MIN_SEEDS` seeds behind ``iv`` (a comparison of fixed figures has no seeds: never few)."""
    return iv.design != FIXED and iv.used < MIN_SEEDS


DESIGN_WORDS = {
    PAIRED: "paired t",
    PARTLY: "partly paired t",
    WELCH: "Welch",
    BOUNDED: BOUNDED,
    ONE_SAMPLE: "one-sample t",
}


def _of_interval(name: str, doc: str) -> property:
    """A :class:`Decision`'s property: its interval's field ``name`` (None without an interval)."""
    return property(lambda self: None if self.interval is None else getattr(self.interval, name), doc=doc)


@dataclass(frozen=True)
class Decision:
    """The one record of a verdict: what it is about, its interval over seeds, the outcome read off it.

    Claims' statements, published cells, difference tables, ablation gains and ``compare`` over seeds all hold
    this record and serialise it (:meth:`to_dict`).
    """

    outcome: str
    interval: Interval | None = None  # None: no interval (fewer than two seeds, nothing measured)
    # decided: how far inside its region; undecided: minus the distance to the nearest
    margin: float | None = None
    nearest: str | None = None  # undecided: the decisive outcome the interval is nearest to
    note: str | None = None  # "fewer than 3 seeds (2)", "no spread over seeds", "seeds 1, 2 collapsed", ...
    p: float | None = None  # the p the outcome rests on; what it tests: ``p_tests``
    p_tests: str | None = None
    # ``p`` Holm-adjusted within its family (a claim's statements, a table's tasks)
    p_holm: float | None = None
    delta: float | None = None  # the difference that matters it was read against (a bound: None)
    what: str = ""  # the statement or the figure
    cap: str | None = None  # why it is capped at inconclusive (CAP_DEPARTING, ...); None: not capped
    departing: tuple[float, ...] = ()  # a cell's seed figures far below the others (:func:`departing`)
    # a sequential plan's: the look (seeds) its interval is from, a repeated interval at the look's level
    look: int | None = None

    diff = _of_interval("diff", "The measured difference (claimed direction positive).")
    low = _of_interval("low", "The interval's lower end (:attr:`interval_name`).")
    high = _of_interval("high", "The interval's upper end.")

    @property
    def interval_name(self) -> str:
        """What its interval is: ``95% interval``, or ``repeated interval of the look at 6 seeds, 99.7%``."""
        level = LEVEL if self.interval is None else self.interval.level
        if self.look is None:
            return f"{100 * level:g}% interval"
        return f"repeated interval of the look at {self.look} seeds, {percent(level)}"

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
        out.update(interval_name=self.interval_name)
        return out


def percent(level: float) -> str:
    """A level in percent, with the decimals that keep it below 100 (a look's 99.96%, not 100.0%)."""
    digits = next((d for d in range(1, 6) if round(100 * level, d) < 100), 6)
    return f"{100 * level:.{digits}f}%" if level < 1 else "100%"


def _read(
    iv: Interval, regions: Sequence[tuple[str, float]], p: float | None = None, **rest: Any
) -> Decision:
    """The region (outcome, slack) with a positive slack, else inconclusive with the nearest's (negative) slack."""
    note = NO_SPREAD if not iv.spread and iv.design != FIXED else None
    if few(iv):
        note = f"fewer than {MIN_SEEDS} seeds ({iv.used}): at most {INCONCLUSIVE}"
        return Decision(INCONCLUSIVE, iv, None, max(regions, key=lambda r: r[1])[0], note, p, **rest)
    for outcome, slack in regions:
        if slack > 0:
            return Decision(outcome, iv, slack, None, note, p, **rest)
    outcome, slack = max(regions, key=lambda r: r[1])
    return Decision(INCONCLUSIVE, iv, slack, outcome, note, p, **rest)


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
    low <= -δ <= high < 0: reversed; high < -δ: reversed, by more than δ; otherwise inconclusive. The p is that
    of the reversal by more than δ (the upper end below -δ), which Holm's correction within a claim reads.
    """
    lo, hi, d = iv.low, iv.high, delta
    if lo > d:
        regions = [(SUPPORTED_MORE, lo - d)]
    elif lo > 0:
        regions = [(SUPPORTED, lo)] if hi >= d else [(SUPPORTED_LESS, min(lo, d - hi))]
    elif hi < -d:
        regions = [(REVERSED_MORE, -d - hi)]
    elif hi < 0:
        regions = [(REVERSED, -hi)] if lo <= -d else [(REVERSED_LESS, min(-hi, lo + d))]
    elif lo > -d and hi < d:
        regions = [(NO_DIFFERENCE, min(lo + d, d - hi))]
    else:  # straddles 0 and reaches ±δ: the nearest decisive outcomes, each a negative slack
        regions = [(SUPPORTED, lo), (NO_DIFFERENCE, min(lo + d, d - hi)), (REVERSED, -hi)]
    p = _p_beyond(iv, -delta, below=True)
    tests = "reversed by more than δ (diff < -δ), one-sided, doubled"
    return _read(iv, regions, p, p_tests=tests, delta=delta, what=what)


def _slacks(iv: Interval, delta: float) -> tuple[float, float]:
    """How far the interval lies inside ±δ, and how far entirely outside it (negative: that far short)."""
    return min(iv.low + delta, delta - iv.high), max(iv.low - delta, -delta - iv.high)


def equivalence(iv: Interval, delta: float, what: str = "") -> Decision:
    """|A - B| < δ (a plateau's pair): within the margin inside ±δ, beyond it entirely outside, else inconclusive."""
    inside, outside = _slacks(iv, delta)
    p = _p_beyond(iv, delta, below=False) if iv.diff >= 0 else _p_beyond(iv, -delta, below=True)
    regions = [(WITHIN, inside), (BEYOND, outside)]
    return _read(iv, regions, p, p_tests="|diff| > δ, one-sided, doubled", delta=delta, what=what)


def bound(iv: Interval, what: str = "") -> Decision:
    """The bound, threshold - A > 0 (a collapse: A below it): below the bound, not below it, or inconclusive."""
    regions = [(BELOW, iv.low), (NOT_BELOW, -iv.high)]
    p = _p_beyond(iv, 0.0, below=True)
    return _read(iv, regions, p, p_tests="above the bound, one-sided, doubled", what=what)


def reproduction(iv: Interval, delta: float, what: str = "", note: str | None = None) -> Decision:
    """A cell, seeds - published: reproduced inside ±δ, not reproduced entirely outside, inconclusive otherwise.

    The verdict rests on the interval alone: no p (the p of m = P, a description, is the interval's, ``p_zero``).
    """
    inside, outside = _slacks(iv, delta)
    dec = _read(iv, [(REPRODUCED, inside), (NOT_REPRODUCED, outside)], delta=delta, what=what)
    return noted(dec, note)


def p_matters(iv: Interval, delta: float) -> float:
    """The p of "the difference matters": 2 · sf((|d| - δ)/se, df), capped at 1 (the family's `*` reads it)."""
    return _p_beyond(replace(iv, diff=abs(iv.diff)), delta, below=False)


def two_sided(iv: Interval, delta: float, what: str = "") -> Decision:
    """No direction claimed: a difference that matters (outside ±δ), no difference that matters, inconclusive."""
    inside, outside = _slacks(iv, delta)
    regions = [(MATTERS, outside), (NO_DIFFERENCE, inside)]
    return _read(iv, regions, p_matters(iv, delta), p_tests="|diff| > δ, two-sided", delta=delta, what=what)


def family(
    decisions: Sequence[Decision],
    words: Sequence[str] = (MATTERS,),
    alpha: float = ALPHA,
    over: str = "figures",
) -> list[Decision]:
    """Holm over a family of decisions (a table's tasks, the caller leaving the Avg. out; a claim's statements).

    Each gets its ``p_holm``. An outcome of ``words`` (*a difference that matters*; a claim's refuting words) needs
    Holm's p below ``alpha`` too: where its own interval says so but Holm over the family does not, the word is
    *inconclusive*, the note saying why (one word for one verdict, the `*` its mark).
    """
    ps = holm([d.p if d.p is not None else 1.0 for d in decisions])
    out = []
    for d, p in zip(decisions, ps, strict=True):
        d = replace(d, p_holm=p)
        if d.outcome in words and p >= alpha:
            d = capped(
                d, f"{d.outcome} by its own interval, not after Holm over {len(decisions)} {over}", CAP_HOLM
            )
        out.append(d)
    return out


def marked(dec: Decision) -> bool:
    """The `*` of a difference table: a difference that matters by its interval and by Holm over the family."""
    return dec.outcome == MATTERS


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
    bound (docs/uncertainty.md, "Non-finite seeds"): the 0s stay in the figures shown and cap every
    statement that reads them at inconclusive. Any other non-finite figure is left out and caps likewise.
    """
    bad = sorted(s for s, v in values.items() if not math.isfinite(float(v)))
    if not bad:
        return {s: float(v) for s, v in values.items()}, None, False
    seeds = ", ".join(str(s) for s in bad)
    word = "seed" if len(bad) == 1 else "seeds"
    if dev and all(math.isnan(float(values[s])) for s in bad):
        mixed = len(bad) < len(values)
        zeros = {s: 0.0 if s in bad else float(v) for s, v in values.items()}
        cap = f", {len(bad)} of {len(values)} (a mix of collapsed and trained): at most {INCONCLUSIVE}"
        return zeros, f"{word} {seeds} collapsed: NaN -> 0" + (cap if mixed else ""), mixed
    kept = {s: float(v) for s, v in values.items() if s not in bad}
    return kept, f"{word} {seeds} not finite: at most {INCONCLUSIVE}", True


def capped(dec: Decision, why: str, cap: str) -> Decision:
    """``dec`` at most inconclusive, saying why (``cap``: what capped it, :attr:`Decision.cap`)."""
    if dec.outcome == INCONCLUSIVE:
        return noted(replace(dec, cap=cap), why)
    return noted(replace(dec, outcome=INCONCLUSIVE, nearest=dec.outcome, margin=None, cap=cap), why)


# -- a published cell -------------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def expected_max(k: int) -> float:
    """e_K: the expected maximum of K standard normals (numerical integration)."""
    from scipy import integrate, stats

    if k <= 1:
        return 0.0
    f = lambda x: x * k * stats.norm.pdf(x) * stats.norm.cdf(x) ** (k - 1)  # noqa: E731
    return float(integrate.quad(f, -12, 12)[0])


BEST_OF_TABLE = "best_of_quantiles.json"  # beside this module: benchmarks/best_of_quantiles.py made it


@lru_cache(maxsize=1)
def _best_of_table() -> dict[str, Any]:
    import json

    return json.loads(Path(__file__).with_name(BEST_OF_TABLE).read_text(encoding="utf-8"))


def best_of_quantiles(n: int, k: int) -> tuple[float, float] | None:
    """q_lo, q_hi: the 2.5% and 97.5% quantiles of (Z/√n - M_K)/(χ_{n-1}/√(n-1)), read off the committed table.

    Beyond its last n (20) the last row stands in, wider than the exact one (its χ less concentrated); None for
    a K outside it (2..20).
    """
    table = _best_of_table()
    if k not in table["k"]:
        return None
    i, j = table["n"].index(min(n, table["n"][-1])), table["k"].index(k)
    return float(table["q_lo"][i][j]), float(table["q_hi"][i][j])


def departing(x: np.ndarray, h: float = 0.0, alpha: float = ALPHA) -> list[int]:
    """Positions of seeds far below the others: Rosner's generalized ESD (1983), one-sided low, at ``alpha``.

    Up to r = max(1, ⌊n/2⌋ - 1) seeds come off from the lowest; step i compares R_i = (mean - min)/s of the seeds
    left (s² with the resolution's h²/12, as the interval's, so that a tie one step above a figure is no departure)
    with λ_i = (n - i)·t / √((n - i - 1 + t²)(n - i + 1)), t the 1 - alpha/(n - i + 1) quantile of t on
    n - i - 1 df; the departing seeds are the first i taken off, i the last step with R_i > λ_i (none: []).
    One-sided: a run departs by training badly (docs/uncertainty.md, "Departing seeds (cells)").
    """
    n = x.size
    steps = max(1, n // 2 - 1) if n >= MIN_SEEDS else 0
    order = np.argsort(x, kind="stable")  # the lowest first: the seeds in the order they come off
    ranked, scale, count = x[order], float(np.abs(x).max()), 0
    for i in range(1, steps + 1):
        left = ranked[i - 1 :]  # the seeds left, the lowest first
        s = math.sqrt(_variance(left, h, scale))  # as the interval's
        if not s > 0:
            break
        if (float(left.mean()) - float(left[0])) / s > _esd_limit(n, i, alpha):
            count = i
    return sorted(order[:count].tolist())


@lru_cache(maxsize=512)
def _esd_limit(n: int, i: int, alpha: float) -> float:
    """λ_i of the one-sided generalized ESD at ``n`` seeds (:func:`departing`)."""
    t = t_ppf(1 - alpha / (n - i + 1), n - i - 1)
    return (n - i) * t / math.sqrt((n - i - 1 + t * t) * (n - i + 1))


def _limit_width(s: float, level: float, k: int, best_of: int | None) -> float:
    """The interval's half-width as the seeds grow without end: z·s·√(1/k), or half the spread of s·M_K."""
    from scipy.special import ndtri

    if best_of:  # M_K's quantiles are exact: P(M_K <= x) = Φ(x)^K
        lo, hi = ((1 - level) / 2) ** (1 / best_of), ((1 + level) / 2) ** (1 / best_of)
        return s * float(ndtri(hi) - ndtri(lo)) / 2
    return float(ndtri((1 + level) / 2)) * s * math.sqrt(1 / k)


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
    last: tuple[int, float] | None = None,
) -> Decision:
    """Seeds against a published figure of ``runs`` runs (or the best of ``best_of``): reproduced or not.

    The interval of m - P is (m - P) ± t(0.975, n-1) · s · sqrt(1/n + 1/k), s² including h²/12, assuming the
    paper's seed spread equals ours. With ``best_of`` K it is exact under the same model: (m - P - Δ)/s has the
    law of (Z/√n - M_K)/(χ_{n-1}/√(n-1)), whose quantiles q_lo, q_hi (a committed table) give Δ in
    [m - P - s·q_hi, m - P - s·q_lo], its point m - P + s·e_K. Where the interval's half-width as n grows
    without end (z·s·√(1/k); with K, half the spread of s·M_K) reaches δ, *reproduced* cannot be reached at any
    number of seeds, and the decision says so. ``last``: (M, c_M), a sequential plan's last look (``level`` then
    the look's): the note then reads that look's half-width c_M·s·√(1/M + 1/k) instead, at this look's s.

    Seeds far below the others (:func:`departing`) cap the cell at *inconclusive* only where they change its word:
    judged again on the other seeds alone (their mean, spread and count; the minimum of seeds read at the cell's
    own count), it reads another (:data:`CAP_DEPARTING`); otherwise the note names them and the word stands (a
    spread of float noise never caps). Not each replaced by the others' mean: that keeps n and shrinks s, and let
    *not reproduced* through 0.038 of the time at n = 10 under the outliers law against its bound 0.028.
    """
    x = finite(values)
    if x.size < 2:
        return unmeasured(INCONCLUSIVE, what, f"one seed: at most {INCONCLUSIVE}", delta)
    judge = partial(
        _cell,
        published=published,
        delta=delta,
        runs=runs,
        best_of=best_of,
        h=resolution,
        what=what,
        level=level,
        last=last,
    )
    dec = judge(x)
    low = departing(x, resolution)
    if not low:
        return dec
    far = ", ".join(f"{x[i]:.2f}" for i in low)
    why = f"{len(low)} of {x.size} {FAR_BELOW} ({far}; one-sided generalized ESD at {ALPHA})"
    other = judge(np.delete(x, low), counted=x.size, level=(1 + level) / 2).outcome
    dec = replace(dec, departing=tuple(float(x[i]) for i in low))
    if other == dec.outcome:
        return noted(dec, f"{why}, the same word without them")
    return capped(dec, f"{why}; without them: {other}: at most {INCONCLUSIVE}", CAP_DEPARTING)


def _cell(
    x: np.ndarray,
    *,
    published: float,
    delta: float,
    runs: int,
    best_of: int | None,
    h: float,
    what: str,
    level: float,
    last: tuple[int, float] | None,
    counted: int | None = None,
) -> Decision:
    """:func:`cell`'s reading of the seeds ``x`` (two or more), before the departing check.

    ``counted``: the seeds the minimum-seeds rule counts, where not ``x``'s (the departing check's others).
    """
    k = 1 if best_of else runs
    iv = one_sample(x, published, level, resolution=_step(x, h), runs=k)
    iv = iv if counted is None else replace(iv, used=counted)
    best = f" (the best of {best_of})" if best_of else ""
    notes = [f"the published figure is one run{best}"] if k == 1 else []
    s = iv.se / math.sqrt(1 / x.size + 1 / k)  # the seeds' spread, h²/12 included
    if best_of:
        q = best_of_quantiles(x.size, best_of) if level == LEVEL else None
        if q is None:
            why = f"the best of {best_of} runs lies outside the committed table (K 2..20, level {LEVEL})"
            return unmeasured(INCONCLUSIVE, what, f"{why}: at most {INCONCLUSIVE}", delta)
        m = iv.diff
        iv = replace(iv, diff=m + s * expected_max(best_of), low=m - s * q[1], high=m - s * q[0])
        notes.append(f"exact for the best of {best_of}: Δ in [m − P − s·q_hi, m − P − s·q_lo]")
    if last is None:
        floor = _limit_width(s, level, k, best_of)
        reach = f"at any number of seeds (its limit ±{floor:.2f} ≥ δ)"
    else:  # a sequential plan stops at its last look: that look's half-width, at this look's spread
        floor = last[1] * s * math.sqrt(1 / last[0] + 1 / k)
        reach = f"by the last look ({last[0]} seeds: ±{floor:.2f} ≥ δ at the spread of {x.size} seeds)"
    if floor >= delta:
        notes.append(f"{REPRODUCED} cannot be reached {reach}")
    return reproduction(iv, delta, what, "; ".join(notes) or None)


# -- a claim of several statements --------------------------------------------------------------------------------


REFUTING = (REVERSED_MORE, BEYOND, NOT_BELOW)  # a statement that contradicts its claim (after Holm)
_CLAIM_WORD = {WITHIN: SUPPORTED, BELOW: SUPPORTED}  # a plateau's and a collapse's claim words


def combine(decisions: Sequence[Decision], alpha: float = ALPHA) -> tuple[str, float | None, str | None]:
    """A claim from its statements: (verdict, margin, qualifier); ``decisions`` after Holm (``p_holm``).

    *contradicted* if a statement is reversed by more than δ (a plateau's pair beyond its margin, a collapse's
    setting not below its bound); the statements' common word if they share one (a plateau's or collapse's:
    *supported*); *supported* (*reversed*) if every statement shows the paper's (the opposite) direction, the
    qualifier naming those by more and by less than δ; otherwise *inconclusive*. The margin: a decided claim's
    smallest statement margin; an inconclusive one's, the nearest undecided statement's (negative), none where
    every statement is decided (their words differ).
    """
    words = [d.outcome for d in decisions]
    margins = [d.margin for d in decisions]
    if any(w in REFUTING for w in words):
        found = [d.margin for d in decisions if d.outcome in REFUTING and d.margin is not None]
        return CONTRADICTED, max(found, default=None), None
    known = None if any(m is None for m in margins) or not margins else margins
    if len(set(words)) == 1 and words[0] != INCONCLUSIVE:
        return _CLAIM_WORD.get(words[0], words[0]), None if known is None else min(known), None
    for side, word, more, less in (
        (DIRECTIONS, SUPPORTED, SUPPORTED_MORE, SUPPORTED_LESS),
        (OPPOSITE, REVERSED, REVERSED_MORE, REVERSED_LESS),
    ):
        if words and all(w in side for w in words):
            sizes = (("by more than δ", more), ("by less than δ", less))
            named = {size: [d.what for d in decisions if d.outcome == sized] for size, sized in sizes}
            parts = [f"{size}: {', '.join(whats)}" for size, whats in named.items() if whats]
            return word, None if known is None else min(known), "; ".join(parts) or None
    undecided = [d.margin for d in decisions if d.outcome == INCONCLUSIVE]
    return INCONCLUSIVE, None if not undecided or None in undecided else max(undecided), None


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
    resolution: float = 0.0,
) -> dict[str, float]:
    """How likely each setting has the highest true mean, drawn from the seeds' t distributions (a description).

    On the statements' own estimator: settings on the same seeds: setting + seed + residual, the pooled residual
    variance with (n-1)(k-1) df (for two settings, the paired t); otherwise each mean m + S/sqrt(n) · Z under
    the means' covariance as the statements estimate it (T_new2's r·S1·S2·n_c/(n1·n2) from three shared seeds
    on, bounded at ρ = -1 below three), scaled by one sqrt(df/χ²_df), df the smallest of the statements'. Each
    variance holds the resolution's h²/12. P(best) of two settings is then 1 - the one-sided p of their
    statement. A model not trained here is its one figure. Ties split evenly.
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
        h = _stepped(math.sqrt(sigma2), resolution)
        cov = np.eye(k) * (sigma2 + h * h / 12) / n  # the resolution's h²/12 (h²/4 below one step)
    else:
        xs = {a: np.array(list(scores[a].values()), dtype=np.float64) for a in trained}
        scale = max((float(np.abs(x).max()) for x in xs.values()), default=0.0)
        v = {a: _variance(x, resolution, scale) if x.size > 1 else 0.0 for a, x in xs.items()}
        cov, dfs = np.zeros((k, k)), []
        for i, a in enumerate(trained):
            cov[i, i] = v[a] / xs[a].size
            for j, b in enumerate(trained[i + 1 :], i + 1):
                if xs[a].size > 1 and xs[b].size > 1:  # the shared seeds' covariance, as the statement has it
                    cov[i, j] = cov[j, i] = _mean_cov(scores[a], scores[b], v[a], v[b])
                iv = difference(scores[a], scores[b], resolution=resolution)
                if iv is not None and iv.spread:
                    dfs.append(iv.df)
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
