"""A paper's claims judged over training seeds: argmax, ordering, difference, gap, plateau, collapse.

The papers argue from orderings and differences ("p = 0.1 is best", "sub-word repetition beats the others", "the gap
shrinks with the batch size"). A claim here is data (:data:`Claim`, what a recipe states) and is judged on the
seeds' figures of each setting it names (``{setting: {seed: figure}}``) by one rule, the one docs/uncertainty.md
("Claims") writes down:

- a claim expands to *statements*: directional ones (``A > B``) for an argmax (the best above each other), an
  ordering (each setting above the next), a difference (the better above the worse) and a gap ((A - B) > (C - D));
  an equivalence (``|A - B| < margin``) for each pair of a plateau; a bound (``A < threshold``) for each setting
  of a collapse;
- each statement is tested over seeds: a paired t test when its settings were trained on the same seeds, Welch's
  test otherwise, a one-sample t test against a model not trained here (a released checkpoint or the backbone:
  one figure, seed 0, that no seed varies) (a gap: the per-seed gaps where each pair shares its seeds, else
  Satterthwaite's combination);
  a bound by a one-sample t test; an equivalence by TOST (two one-sided tests at the margin), and its opposite
  (a difference significantly beyond the margin) by the one-sided test on the side the estimate lies;
- Holm's correction within the claim, alpha 0.05: a statement is *supported* when significant in its claimed
  direction, *contradicted* when significant the other way, *inconclusive* otherwise;
- a claim is contradicted when any statement is, supported when all are, inconclusive otherwise. A claim whose
  settings lack seeds (fewer than two where a test needs a variance, or a setting not trained at all) is
  inconclusive and says what is missing.

Beside the verdict, descriptive figures: each statement's minimum detectable difference (80% power at the
statement's alpha, before Holm), and for an argmax or an ordering the probability that each setting is the best
(the seeds resampled with replacement within each setting, 2,000 times, seed 0).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator
from scipy import stats

from stsbench.stats.tests import holm, min_detectable_difference

ALPHA = 0.05
POWER = 0.8
BEST_DRAWS = 2000

Verdict = Literal["supported", "contradicted", "inconclusive"]
Scores = Mapping[str, Mapping[int, float]]  # setting -> seed -> figure


class _Claim(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str = ""  # the paper's words, e.g. "p = 0.1 is best"
    # the figure judged, per seed: a task's score in ``mode`` (a registered task name), ``best-dev``, the
    # training's own best STS-B dev Spearman x100 (what the papers report for a dev-selected checkpoint), ``Avg.``
    # (the seven STS tasks' mean) or ``Transfer Avg.`` (the seven transfer tasks')
    figure: str = "STSBenchmark"
    mode: Literal["test", "fasttest", "dev"] = "test"
    # the paper's figure the claim is read from (a key of stsbench.published.figures, e.g. mocose/figure8): the
    # report gives its verdict under that figure too
    paper_figure: str | None = None

    def settings(self) -> tuple[str, ...]:
        """Every setting the claim names, in its order."""
        raise NotImplementedError

    def statements(self) -> list[tuple[str, ...]]:
        """The statements the claim expands to (see each kind)."""
        raise NotImplementedError


class Argmax(_Claim):
    """``best`` is above every other setting of ``among``: statements best > X."""

    kind: Literal["argmax"]
    best: str
    among: tuple[str, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _best_among(self) -> Argmax:
        if self.best not in self.among:
            raise ValueError(f"best {self.best!r} is not among {list(self.among)}")
        return self

    def settings(self) -> tuple[str, ...]:
        return self.among

    def statements(self) -> list[tuple[str, ...]]:
        return [(self.best, other) for other in self.among if other != self.best]


class Ordering(_Claim):
    """``order`` from the highest to the lowest: statements order[i] > order[i+1]."""

    kind: Literal["ordering"]
    order: tuple[str, ...] = Field(min_length=2)

    def settings(self) -> tuple[str, ...]:
        return self.order

    def statements(self) -> list[tuple[str, ...]]:
        return list(zip(self.order, self.order[1:], strict=False))


class Difference(_Claim):
    """``better`` above ``worse`` (one statement); ``published``: the size the paper reports, shown beside."""

    kind: Literal["difference"]
    better: str
    worse: str
    published: float | None = None

    def settings(self) -> tuple[str, ...]:
        return (self.better, self.worse)

    def statements(self) -> list[tuple[str, ...]]:
        return [(self.better, self.worse)]


class Gap(_Claim):
    """The gap ``wider`` = (A, B) exceeds the gap ``narrower`` = (C, D): (A - B) > (C - D), one statement."""

    kind: Literal["gap"]
    wider: tuple[str, str]
    narrower: tuple[str, str]

    def settings(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.wider, *self.narrower)))

    def statements(self) -> list[tuple[str, ...]]:
        return [(*self.wider, *self.narrower)]


class Plateau(_Claim):
    """Every pair of ``settings`` within ``margin`` of each other (an equivalence per pair, by TOST)."""

    kind: Literal["plateau"]
    settings_: tuple[str, ...] = Field(alias="settings", min_length=2)
    margin: float = Field(gt=0)

    def settings(self) -> tuple[str, ...]:
        return self.settings_

    def statements(self) -> list[tuple[str, ...]]:
        return list(combinations(self.settings_, 2))


class Collapse(_Claim):
    """Each of ``settings`` below ``below`` (the figure the paper calls a collapse): statements X < threshold."""

    kind: Literal["collapse"]
    settings_: tuple[str, ...] = Field(alias="settings", min_length=1)
    below: float

    def settings(self) -> tuple[str, ...]:
        return self.settings_

    def statements(self) -> list[tuple[str, ...]]:
        return [(s,) for s in self.settings_]


Claim = Annotated[Argmax | Ordering | Difference | Gap | Plateau | Collapse, Field(discriminator="kind")]


@dataclass(frozen=True)
class Estimate:
    """A statement's estimate: the difference (claimed positive), its standard error and degrees of freedom."""

    diff: float
    se: float
    df: float
    test: str  # "paired t", "Welch", "one-sample t", "TOST (paired t)", ...
    n: tuple[int, ...]  # seeds per setting, in the statement's order


@dataclass(frozen=True)
class StatementResult:
    """One statement, its test and its verdict after Holm's correction within the claim."""

    statement: str  # "p=0.1 > p=0.2", "|a - b| < 0.5", "ema=0.5 < 60"
    verdict: Verdict
    diff: float | None  # the measured difference (claimed > 0; a bound: mean - threshold; a plateau: a - b)
    p: float | None  # the test's p (a plateau: TOST's), before Holm
    p_holm: float | None
    test: str | None
    n: tuple[int, ...]
    min_detectable: float | None  # 80% power at alpha, before Holm
    missing: str | None = None  # why it could not be tested

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


@dataclass(frozen=True)
class ClaimResult:
    """A claim's verdict, its statements, and the probability each setting is best (argmax, ordering)."""

    kind: str
    text: str
    verdict: Verdict
    statements: tuple[StatementResult, ...]
    figure: str = ""
    best_probability: dict[str, float] | None = None
    published: float | None = None  # a difference's published size
    missing: tuple[str, ...] = field(default_factory=tuple)  # settings with no seeds

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON (reproduction.json)."""
        out = asdict(self)
        out["statements"] = [s.to_dict() for s in self.statements]
        return out


def _values(scores: Scores, setting: str) -> dict[int, float]:
    return {int(k): float(v) for k, v in (scores.get(setting) or {}).items() if math.isfinite(float(v))}


def _paired(a: dict[int, float], b: dict[int, float]) -> bool:
    return len(a) >= 2 and set(a) == set(b)


def _one_sample(x: np.ndarray, test: str, n: tuple[int, ...]) -> Estimate | None:
    if x.size < 2:
        return None
    return Estimate(float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size)), float(x.size - 1), test, n)


def _combination(parts: Sequence[tuple[float, np.ndarray]], test: str) -> Estimate | None:
    """sum(sign * mean) with Satterthwaite's degrees of freedom (Welch's test for two parts)."""
    if any(x.size < 2 for _, x in parts):
        return None
    v = [x.var(ddof=1) / x.size for _, x in parts]
    se = math.sqrt(sum(v))
    diff = float(sum(sign * x.mean() for sign, x in parts))
    denominator = sum(vi**2 / (x.size - 1) for vi, (_, x) in zip(v, parts, strict=True))
    df = float(sum(v) ** 2 / denominator) if denominator > 0 else float(sum(x.size - 1 for _, x in parts))
    return Estimate(diff, se, df, test, tuple(x.size for _, x in parts))


def _fixed(x: dict[int, float]) -> float | None:
    """The figure of a model not trained here (one figure under seed 0: no seed to vary it), else None."""
    return x[0] if set(x) == {0} else None


def _difference(a: dict[int, float], b: dict[int, float]) -> Estimate | None:
    """mean(a) - mean(b): paired over the shared seeds when both have the same seeds, else Welch.

    Against a model not trained here (:func:`_fixed`: a released checkpoint, the backbone) the other side's seeds
    are tested against its one figure, a constant (one-sample t).
    """
    if _paired(a, b):
        seeds = sorted(a)
        d = np.array([a[s] - b[s] for s in seeds])
        return _one_sample(d, "paired t", (len(a), len(b)))
    fa, fb = _fixed(a), _fixed(b)
    if (fa is None) != (fb is None):
        x = np.array(list(a.values())) - fb if fb is not None else fa - np.array(list(b.values()))
        return _one_sample(x, "one-sample t against a model not trained here", (len(a), len(b)))
    return _combination([(1.0, np.array(list(a.values()))), (-1.0, np.array(list(b.values())))], "Welch")


def _gap(
    a: dict[int, float], b: dict[int, float], c: dict[int, float], d: dict[int, float]
) -> Estimate | None:
    """(A - B) - (C - D): per-seed gaps where a pair shares its seeds, Satterthwaite's combination otherwise."""
    n = (len(a), len(b), len(c), len(d))
    if _paired(a, b) and _paired(c, d):
        g1 = {s: a[s] - b[s] for s in a}
        g2 = {s: c[s] - d[s] for s in c}
        if set(g1) == set(g2):
            dd = np.array([g1[s] - g2[s] for s in sorted(g1)])
            return _one_sample(dd, "paired t on the per-seed gaps", n)
        est = _combination([(1.0, np.array(list(g1.values()))), (-1.0, np.array(list(g2.values())))], "Welch")
        return None if est is None else Estimate(est.diff, est.se, est.df, "Welch on the per-seed gaps", n)
    parts = [(1.0, a), (-1.0, b), (-1.0, c), (1.0, d)]
    est = _combination([(sign, np.array(list(x.values()))) for sign, x in parts], "Satterthwaite")
    return None if est is None else Estimate(est.diff, est.se, est.df, est.test, n)


def _two_sided(est: Estimate) -> float:
    if est.se == 0.0:
        return 1.0 if est.diff == 0 else 0.0
    return float(2 * stats.t.sf(abs(est.diff) / est.se, est.df))


def _tost(est: Estimate, margin: float) -> tuple[float, float]:
    """(TOST's p for |diff| < margin, the one-sided p for |diff| > margin on the estimate's side)."""
    if est.se == 0.0:
        inside = abs(est.diff) < margin
        return (0.0 if inside else 1.0, 1.0 if inside else 0.0)
    lower = float(stats.t.sf((est.diff + margin) / est.se, est.df))  # H0: diff <= -margin
    upper = float(stats.t.cdf((est.diff - margin) / est.se, est.df))  # H0: diff >= margin
    beyond = (
        float(stats.t.sf((est.diff - margin) / est.se, est.df))  # H0: diff <= margin
        if est.diff >= 0
        else float(stats.t.cdf((est.diff + margin) / est.se, est.df))  # H0: diff >= -margin
    )
    return max(lower, upper), beyond


def _mdd(est: Estimate, alpha: float) -> float:
    return min_detectable_difference(est.se, alpha=alpha, power=POWER, df=est.df)


def best_probability(
    scores: Scores, settings: Sequence[str], draws: int = BEST_DRAWS, seed: int = 0
) -> dict[str, float]:
    """How often each setting has the highest mean when each setting's seeds are resampled with replacement."""
    rng = np.random.default_rng(seed)
    columns = [np.array(list(_values(scores, s).values())) for s in settings]
    means = np.stack([x[rng.integers(0, x.size, size=(draws, x.size))].mean(axis=1) for x in columns], axis=1)
    wins = np.bincount(means.argmax(axis=1), minlength=len(settings))
    return {s: float(w / draws) for s, w in zip(settings, wins, strict=True)}


def judge(
    claim: Argmax | Ordering | Difference | Gap | Plateau | Collapse, scores: Scores, alpha: float = ALPHA
) -> ClaimResult:
    """``claim`` judged on ``scores`` (``{setting: {seed: figure}}``) by the rule of this module's docstring."""
    values = {s: _values(scores, s) for s in claim.settings()}
    missing = tuple(s for s, v in values.items() if not v)
    rows: list[tuple[tuple[str, ...], str, Estimate | None]] = []
    for parts in claim.statements():
        vs = [values[p] for p in parts]
        if isinstance(claim, Collapse):  # claimed: below the threshold, i.e. threshold - mean > 0
            text = f"{parts[0]} < {claim.below:g}"
            x = np.array(list(vs[0].values()))
            est = _one_sample(claim.below - x, "one-sample t", (x.size,))
        elif isinstance(claim, Gap):
            text = f"({parts[0]} - {parts[1]}) > ({parts[2]} - {parts[3]})"
            est = _gap(*vs)
        elif isinstance(claim, Plateau):
            text = f"|{parts[0]} - {parts[1]}| < {claim.margin:g}"
            est = _difference(*vs)
            if est is not None:
                est = Estimate(est.diff, est.se, est.df, f"TOST ({est.test})", est.n)
        else:
            text = f"{parts[0]} > {parts[1]}"
            est = _difference(*vs)
        rows.append((parts, text, est))
    tested = [est for _, _, est in rows if est is not None]
    if isinstance(
        claim, Plateau
    ):  # supported: equivalent (TOST); contradicted: significantly beyond the margin
        pairs = [_tost(est, claim.margin) for est in tested]
        p_raw = [p for p, _ in pairs]
        p_beyond = holm([b for _, b in pairs])
    else:  # supported or contradicted by the sign of a significant difference
        p_raw = [_two_sided(est) for est in tested]
        p_beyond = [1.0] * len(tested)
    adjusted = iter(zip(p_raw, holm(p_raw), p_beyond, strict=True))
    statements = []
    for parts, text, est in rows:
        if est is None:  # every test needs two seeds a setting (a variance)
            short = ", ".join(p for p in parts if len(values[p]) < 2)
            n = tuple(len(values[p]) for p in parts)
            statements.append(
                StatementResult(
                    text, "inconclusive", None, None, None, None, n, None, f"fewer than 2 seeds: {short}"
                )
            )
            continue
        p, p_holm, beyond = next(adjusted)
        verdict: Verdict = "inconclusive"
        if p_holm < alpha:
            verdict = "supported" if isinstance(claim, Plateau) or est.diff > 0 else "contradicted"
        elif beyond < alpha:
            verdict = "contradicted"
        statements.append(
            StatementResult(text, verdict, est.diff, p, p_holm, est.test, est.n, _mdd(est, alpha))
        )
    done = tuple(statements)
    verdicts = {r.verdict for r in done}
    overall: Verdict = (
        "contradicted"
        if "contradicted" in verdicts
        else "supported"
        if verdicts == {"supported"}
        else "inconclusive"
    )
    best = None
    if isinstance(claim, Argmax | Ordering) and not missing:
        best = best_probability(scores, claim.settings())
    published = claim.published if isinstance(claim, Difference) else None
    return ClaimResult(claim.kind, claim.text, overall, done, claim.figure, best, published, missing)
