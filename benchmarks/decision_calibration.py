"""How often the one decision rule (stsbench.stats.decide) decides wrongly, measured on simulated seeds.

    OMP_NUM_THREADS=1 python benchmarks/decision_calibration.py [--reduced] [--seed 0] [--processes 2] [--out calibration.md]

Every scenario draws sets of seeds with numpy and runs the project's own code on each draw, one call a draw:
``decide.difference``, ``decide.gap`` and ``decide.directional`` (a statement A > B), ``claims.judge`` (a claim of
2 or 6 statements, Holm and the claim's combination; a collapse read on ``final-dev``, NaN seeds included),
``decide.equivalence`` (a plateau's pair), ``decide.cell`` (a published cell: an exact mean, one run, the best of
5 or of 10) and ``decide.family`` with ``decide.marked`` (a difference table's `*` over eight figures). Nothing is
recomputed here: the verdicts counted are the project's (rule version ``decide.RULE_VERSION``).

**The grid.** n = 2, 3, 5, 10 seeds a setting; seed std 0.5 points (the rule's intervals are exact or nearly so
at any std under a normal law: std moves what they decide, not how often they miss), plus where it matters:
quantised figures at std 0.1 and 0.5, and *unequal spreads* (A's seeds std 0.25, B's 1.0). True differences 0
and ±δ, where each side of each kind is at its nominal level (a wrong outcome at ±δ/2 or ±4δ, the earlier grid's,
needs the interval further from the truth than one at 0 or ±δ); ±2δ beside them on the main designs, for power
(A > B paired at ρ -0.5 and 0.5 and disjoint, the gap (A - B) > (B - C) on its own seeds, a claim of two, a
paired plateau, a collapse, the normal law's cells); the cells also at ±0.9δ, just inside δ. Designs of two
settings: paired (the settings' figures on a seed correlated -0.5, 0, 0.5 or 0.9), partly shared (1, 2 or 3 of 5
seeds shared, correlated 0.5 on them; 1 and 2 of 5 also at -0.5, where bounding the covariance of one or two
shared seeds at ρ = -1 must hold) and disjoint. Gaps:
(A - B) > (C - D) with each side on its own seeds, and (A - B) > (B - C), the one contrast A - 2B + C with B
passed twice (the same mapping), A, B, C each on its own n seeds, all on the same n seeds, A and B on seeds 1-5
with C on 1-4, and with C on 6-10 (settings on a shared seed correlated 0.5). Laws: normal; *outliers* (10% of
seeds 5 std low, in every setting of that seed alike: it cancels in a paired difference); *outliers per setting*
(each setting's seeds depart independently, 10% 5 std low: it does not cancel); in both the truth is the bulk's,
the 90% of figures that do not depart; *quantised* (figures on a 0.2-point grid, judged with resolution 0.2; the
truth is the difference of the quantised figures' means, computed on 400,000 draws, not the unrounded one);
*collapsed* (20% of seeds NaN, a collapse entering as 0; the truth is the trained seeds' law: a set mixing
collapsed and trained seeds is at most inconclusive, one all collapsed is judged on its 0s). Why the mixed laws
are judged on their bulk: no rule deciding on n seeds can bound the mean of a law whose 10-20% tail it may never
see (no outlier among 10 seeds: 0.35; no collapse: 0.11); measured on the mean with the tail, the rule was wrong
up to 0.52 of the time (docs/calibration.md before 2026-11-27); a cell against an exact figure, which does not share
the departures, holds its bound through rule 4's cap on seeds far below the others. Published figures: the exact
mean, one run of our law, the best of five or of ten runs of our law (the truth: our mean less the law's, not the
maximum's).

**Wrong outcomes, one side at a time.** Each wrong decisive outcome is a 95% interval that misses the truth t on
one side (upper: the interval above t; lower: below), so each kind names its wrong outcomes on each side at every
t (δ its difference that matters), |t| = δ included, and each side is counted against 0.025 on its own:

- a statement A > B, and a claim whose statements share t: upper, a direction shown (*supported, by more than δ*,
  *supported*, *supported, by less than δ*) where t <= 0, *supported, by more than δ* where t <= δ, *no
  difference that matters* and *reversed, by less than δ* where t <= -δ; lower, a reversal (*reversed, by less
  than δ*, *reversed*, *reversed, by more than δ*) where t >= 0, *reversed, by more than δ* (a claim:
  *contradicted*) where t >= -δ, *supported, by less than δ* and *no difference that matters* where t >= δ.
- a plateau's pair |A - B| < δ: *within the margin* where t <= -δ (upper) or t >= δ (lower); *beyond the margin*,
  above +δ where t <= δ (upper), below -δ where t >= -δ (lower).
- a collapse claim A < bound (t = bound - mean): *supported* where t <= 0 (upper), *contradicted* where t >= 0
  (lower).
- a cell (t = our mean - the published law's mean): *reproduced* where t <= -δ (upper) or t >= δ (lower); *not
  reproduced*, above +δ where t <= δ (upper), below -δ where t >= -δ (lower).
- a family of eight two-sided figures, each at t: a table with a `*` above +δ where t <= δ (upper), below -δ where
  t >= -δ (lower).

An outcome the script does not know (a renamed word) stops the run, so no renamed word is counted as right.

**Fewer than three seeds.** At n = 2 the rule is inconclusive by construction; the calibration checks it: every
draw of every n < 3 scenario must be *inconclusive* (a family: no `*`), and one decisive draw fails the run. The
three is fixed here, not read from ``decide.MIN_SEEDS``, so a rule without its few-seeds cap fails.

**Draws and bounds.** A fixed simulation seed per scenario (its place in the grid); 20,000 draws a scenario
(2,000 at n < 3, each asserted), 100,000 for the cells against the best of 10 and those at ±0.9δ. Each side of each
counted scenario must lie within 0.025 + 3 binomial SE at its draws. A scenario at its nominal level lands above
that by chance 0.13% of the time a side, and the grid has several hundred sides at their nominal level: where a
side lands above, five times as many fresh draws decide (and are the draws reported). Beside error, power: the
rate of the right decisive outcomes (decisive, not wrong at t) at t = 0 and ±2δ. The scenarios run on
``--processes`` worker processes (2), the most expensive first; each scenario's draws depend only on its seed, so
the tables do not depend on the processes. Exit 1 if a counted scenario is above its bound on either side or a
draw at n < 3 is decisive (0 otherwise; 2 for a bad option).
"""

from __future__ import annotations

import argparse
import hashlib
import math
import multiprocessing
import os
import shlex
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from stsbench.files import atomic_write_text
from stsbench.stats import decide
from stsbench.stats.claims import Argmax, Collapse, judge

# docs/calibration.md's last section, the sequential plan's, from this line on: written by another script
SEQUENTIAL = "<!-- the sequential plan: benchmarks/sequential_calibration.py --out writes from here on -->"

RULE_FILE = hashlib.sha256(Path(decide.__file__).read_bytes()).hexdigest()[:12]  # the rule as imported

NS = (2, 3, 5, 10)
TRUTHS = (0.0, 1.0, -1.0)  # in units of δ: where each side of each kind is at its nominal level
POWER = (2.0, -2.0)  # beside them on the main designs, for power
NEAR = (0.9, -0.9)  # a cell just inside its δ
STD = 0.5
UNEQUAL = (0.25, 1.0)  # A's seed std, B's
BASE = 80.1  # the figures' level, in points; off the quantised grid's points, on its midpoints
GRID = 0.2  # a quantised figure's step (TREC's 500 test questions)
DEPART, DEPARTURE = 0.1, 5.0  # outliers: the share of figures that depart, how many std low
DRAWS = 20_000  # a scenario's draws
FEW_DRAWS = 2_000  # at n < 3: every draw asserted inconclusive
MANY = 5  # the cells against the best of 10 and at ±0.9δ: 5 x DRAWS
CONFIRM = 5  # a side above its bound: 5 x the draws, fresh, decide
CHUNK = 20_000  # draws generated at once
MIN_SEEDS = 3  # the rule's few-seeds cap, fixed here (module docstring)
PROCESSES = 2
UPPER, LOWER = "upper", "lower"
SIDE = decide.ALPHA / 2  # nominal, a side

# outcomes split by the side of ±δ the interval lies on (a plateau's, a cell's and a family's words do not say)
BEYOND_UP, BEYOND_DOWN = f"{decide.BEYOND} (above +δ)", f"{decide.BEYOND} (below −δ)"
NOT_REPRODUCED_UP, NOT_REPRODUCED_DOWN = (
    f"{decide.NOT_REPRODUCED} (above +δ)",
    f"{decide.NOT_REPRODUCED} (below −δ)",
)
STAR_UP, STAR_DOWN, STAR_BOTH, NO_STAR = "* (above +δ)", "* (below −δ)", "* (above +δ and below −δ)", "no *"
UNDECIDED = (decide.INCONCLUSIVE, NO_STAR)  # not decisive
OUTCOMES = {  # every outcome a kind can have; any other stops the run
    "directional": decide.VERDICTS,
    "claim": decide.CLAIM_VERDICTS,
    "plateau": (decide.WITHIN, BEYOND_UP, BEYOND_DOWN, decide.INCONCLUSIVE),
    "collapse": (decide.SUPPORTED, decide.CONTRADICTED, decide.INCONCLUSIVE),
    "cell": (decide.REPRODUCED, NOT_REPRODUCED_UP, NOT_REPRODUCED_DOWN, decide.INCONCLUSIVE),
    "family": (NO_STAR, STAR_UP, STAR_DOWN, STAR_BOTH),
}
GAPS = {  # (A - B) > (B - C): the seeds of A, B and C
    "(A − B) > (B − C), each on its own seeds": lambda n: (
        range(1, n + 1),
        range(n + 1, 2 * n + 1),
        range(2 * n + 1, 3 * n + 1),
    ),
    "(A − B) > (B − C), all on the same seeds": lambda n: (range(1, n + 1),) * 3,
    "(A − B) > (B − C), A, B on 1-5, C on 1-4": lambda n: (range(1, 6), range(1, 6), range(1, 5)),
    "(A − B) > (B − C), A, B on 1-5, C on 6-10": lambda n: (range(1, 6), range(1, 6), range(6, 11)),
}
GAP4 = "(A − B) > (C − D), each side on its own seeds"


@dataclass
class Scenario:
    """One cell of the grid: what is simulated, and how each draw is judged."""

    kind: str
    design: str  # paired ρ, partly m/5 ρ, disjoint, one-sample, against ..., a gap's, ...
    n: int
    std: float
    truth: float  # in units of δ, as asked (a quantised law's realised truth is in ``realised``)
    law: str = "normal"
    delta: float = decide.DELTA
    std_b: float | None = None  # B's seed std where it differs from A's (unequal spreads)
    draws: int = DRAWS
    run: Callable[[np.random.Generator, int], list[str]] | None = None  # draws -> outcomes
    realised: float | None = None  # the truth in points (the quantised law's differs from truth * δ)

    @property
    def t(self) -> float:
        """The true difference in points."""
        return self.truth * self.delta if self.realised is None else self.realised

    @property
    def spread(self) -> str:
        return f"{self.std:g}" if self.std_b is None else f"{self.std:g} / {self.std_b:g}"


# -- what is wrong where ------------------------------------------------------------------------------------------


def wrong_outcomes(kind: str, t: float, delta: float) -> dict[str, tuple[str, ...]]:
    """The wrong decisive outcomes at a true difference of ``t`` points, by the side the interval misses on."""
    tol = 1e-9 * max(1.0, delta)
    le = lambda a, b: a <= b + tol  # noqa: E731
    up: list[str] = []
    low: list[str] = []
    if kind in ("directional", "claim"):
        up += [*decide.DIRECTIONS] if le(t, 0) else [decide.SUPPORTED_MORE] if le(t, delta) else []
        up += [decide.NO_DIFFERENCE, decide.REVERSED_LESS] if le(t, -delta) else []
        low += [*decide.OPPOSITE] if le(0, t) else []
        low += [decide.REVERSED_MORE, decide.CONTRADICTED] if le(-delta, t) else []
        low += [decide.SUPPORTED_LESS, decide.NO_DIFFERENCE] if le(delta, t) else []
    elif kind in ("plateau", "cell"):
        inside, above, below = (
            (decide.WITHIN, BEYOND_UP, BEYOND_DOWN)
            if kind == "plateau"
            else (decide.REPRODUCED, NOT_REPRODUCED_UP, NOT_REPRODUCED_DOWN)
        )
        up += [inside] * le(t, -delta) + [above] * le(t, delta)
        low += [inside] * le(delta, t) + [below] * le(-delta, t)
    elif kind == "collapse":
        up += [decide.SUPPORTED] * le(t, 0)
        low += [decide.CONTRADICTED] * le(0, t)
    elif kind == "family":
        up += [STAR_UP, STAR_BOTH] if le(t, delta) else []
        low += [STAR_DOWN, STAR_BOTH] if le(-delta, t) else []
    else:
        raise ValueError(f"unknown kind {kind!r}")
    return {UPPER: tuple(dict.fromkeys(up)), LOWER: tuple(dict.fromkeys(low))}


def bound(draws: int, level: float = SIDE) -> float:
    """The largest wrong rate a side accepts over ``draws`` draws: the nominal level plus three binomial SE."""
    return level + 3 * math.sqrt(level * (1 - level) / draws)


def right_outcomes(kind: str, t: float, delta: float) -> tuple[str, ...]:
    """The decisive outcomes not wrong at ``t`` (power counts them)."""
    wrong = {o for outs in wrong_outcomes(kind, t, delta).values() for o in outs}
    return tuple(o for o in OUTCOMES[kind] if o not in wrong and o not in UNDECIDED)


# -- drawing seeds ------------------------------------------------------------------------------------------------


def _chunks(draws: int) -> Iterator[int]:
    while draws > 0:
        yield min(draws, CHUNK)
        draws -= CHUNK


def _quantise(x: np.ndarray) -> np.ndarray:
    return np.round(x / GRID) * GRID


def _ids(design: str, n: int) -> tuple[list[int], list[int]]:
    if design.startswith("partly"):  # "partly 2/5 ρ 0.5": 5 seeds a side, 2 shared
        m = int(design.split()[1].split("/")[0])
        return list(range(1, 6)), list(range(6 - m, 11 - m))
    if design == "disjoint":
        return list(range(1, n + 1)), list(range(n + 1, 2 * n + 1))
    return list(range(1, n + 1)), list(range(1, n + 1))


def _rho(design: str) -> float:
    return float(design.split("ρ ")[1]) if "ρ " in design else 0.0


def pairs(
    rng: np.random.Generator,
    draws: int,
    ids: tuple[Sequence[int], Sequence[int]],
    rho: float,
    std: tuple[float, float],
    diff: float,
    law: str,
) -> tuple[np.ndarray, np.ndarray]:
    """Two settings' figures, ``draws`` x seeds each: correlation ``rho`` on the seeds both have, independent
    elsewhere; A's true mean ``diff`` above B's (the bulk's, under the outlier laws)."""
    every = sorted(set(ids[0]) | set(ids[1]))
    col = {s: i for i, s in enumerate(every)}
    ia, ib = [col[s] for s in ids[0]], [col[s] for s in ids[1]]
    shared = np.array([s in set(ids[0]) for s in ids[1]])
    z = rng.standard_normal((3, draws, len(every)))
    za = z[0][:, ia]
    zb = np.where(shared, rho * z[0][:, ib] + math.sqrt(1 - rho**2) * z[1][:, ib], z[2][:, ib])
    a, b = BASE + diff + std[0] * za, BASE + std[1] * zb
    if law == "outliers":  # a seed's departure hits both settings alike
        bad = rng.random((draws, len(every))) < DEPART
        a, b = a - DEPARTURE * std[0] * bad[:, ia], b - DEPARTURE * std[1] * bad[:, ib]
    elif law == "outliers per setting":  # each setting's figures depart on their own
        a = a - DEPARTURE * std[0] * (rng.random(a.shape) < DEPART)
        b = b - DEPARTURE * std[1] * (rng.random(b.shape) < DEPART)
    elif law == "quantised":
        a, b = _quantise(a), _quantise(b)
    return a, b


def settings(
    rng: np.random.Generator, draws: int, seeds: Sequence[Sequence[int]], means: Sequence[float], std: float
) -> list[np.ndarray]:
    """Settings' figures, ``draws`` x seeds each: a seed's component shared (variance 0.5) plus the setting's own."""
    every = sorted(set().union(*map(set, seeds)))
    col = {s: i for i, s in enumerate(every)}
    z = rng.standard_normal((draws, len(every)))
    out = []
    for ids, mean in zip(seeds, means, strict=True):
        own = rng.standard_normal((draws, len(ids)))
        out.append(mean + std * math.sqrt(0.5) * (z[:, [col[s] for s in ids]] + own))
    return out


def quantised_truth(diff: float, std: float, rng: np.random.Generator, size: int = 400_000) -> float:
    """The difference of two quantised figures' means, A's true mean ``diff`` above B's (the truth judged)."""
    z = rng.standard_normal((2, size))
    return float(_quantise(BASE + diff + std * z[0]).mean() - _quantise(BASE + std * z[1]).mean())


def _sided(dec: decide.Decision, word: str, up: str, down: str) -> str:
    """``dec``'s outcome, ``word`` (an interval entirely beyond ±δ) named by its side."""
    if dec.outcome != word:
        return dec.outcome
    return up if dec.interval.diff > 0 else down


# -- the scenarios ------------------------------------------------------------------------------------------------


def _two_settings(sc: Scenario, read: Callable[[decide.Interval], str]) -> None:
    """A and B drawn by the scenario's design and law, their difference read by ``read`` (A > B, or a plateau)."""
    h = GRID if sc.law == "quantised" else 0.0
    ids, rho = _ids(sc.design, sc.n), _rho(sc.design)
    std = (sc.std, sc.std if sc.std_b is None else sc.std_b)

    def run(rng: np.random.Generator, draws: int) -> list[str]:
        out = []
        for size in _chunks(draws):
            fa, fb = pairs(rng, size, ids, rho, std, sc.truth * sc.delta, sc.law)
            for ra, rb in zip(fa.tolist(), fb.tolist(), strict=True):
                iv = decide.difference(
                    dict(zip(ids[0], ra, strict=True)), dict(zip(ids[1], rb, strict=True)), resolution=h
                )
                out.append(decide.INCONCLUSIVE if iv is None else read(iv))
        return out

    sc.run = run


def _gap(sc: Scenario) -> None:
    """(A - B) > (B - C) as ``decide.gap([A, B, B, C])``, or (A - B) > (C - D) each side on its own seeds."""
    if sc.design == GAP4:
        seeds = (range(1, sc.n + 1),) * 2 + (range(101, 101 + sc.n),) * 2
    else:
        seeds = GAPS[sc.design](sc.n)
    means = [BASE + sc.truth * sc.delta] + [BASE] * (len(seeds) - 1)

    def run(rng: np.random.Generator, draws: int) -> list[str]:
        out = []
        for size in _chunks(draws):
            figures = settings(rng, size, seeds, means, sc.std)
            for rows in zip(*(f.tolist() for f in figures), strict=True):
                x = [dict(zip(ids, row, strict=True)) for ids, row in zip(seeds, rows, strict=True)]
                iv = decide.gap(x if sc.design == GAP4 else [x[0], x[1], x[1], x[2]])
                out.append(decide.INCONCLUSIVE if iv is None else decide.directional(iv, sc.delta).outcome)
        return out

    sc.run = run


def _claim(sc: Scenario, k: int) -> None:
    """An argmax of k statements: best above each of k others by t, all on shared seeds (correlation 0.5)."""
    names = ["best", *[f"x{i}" for i in range(1, k + 1)]]
    claim = Argmax(kind="argmax", best="best", among=tuple(names))
    seeds = [range(1, sc.n + 1)] * len(names)
    means = [BASE + sc.truth * sc.delta] + [BASE] * k

    def run(rng: np.random.Generator, draws: int) -> list[str]:
        out = []
        for size in _chunks(draws):
            figures = settings(rng, size, seeds, means, sc.std)
            for rows in zip(*(f.tolist() for f in figures), strict=True):
                scores = {name: dict(enumerate(row, 1)) for name, row in zip(names, rows, strict=True)}
                out.append(judge(claim, scores, describe=False).verdict)
        return out

    sc.run = run


def _collapse(sc: Scenario) -> None:
    """A collapse's bound on final-dev: t = bound - mean; with NaN seeds, the mean counts them as 0."""
    claim = Collapse(kind="collapse", settings=("x",), below=60.0, figure="final-dev")
    mean = 60.0 - sc.truth * sc.delta

    def run(rng: np.random.Generator, draws: int) -> list[str]:
        out = []
        for size in _chunks(draws):
            x = mean + sc.std * rng.standard_normal((size, sc.n))
            if sc.law == "collapsed":  # 20% of seeds NaN, entering as 0; the truth is the trained seeds' law
                x = np.where(rng.random((size, sc.n)) < 0.2, np.nan, x)
            for row in x.tolist():
                out.append(judge(claim, {"x": dict(enumerate(row, 1))}, describe=False).verdict)
        return out

    sc.run = run


def _cell(sc: Scenario, published: str) -> None:
    h = GRID if sc.law == "quantised" else 0.0
    best = int(published.split()[-1]) if published.startswith("best") else None

    def run(rng: np.random.Generator, draws: int) -> list[str]:
        out = []
        for size in _chunks(draws):
            x = BASE + sc.truth * sc.delta + sc.std * rng.standard_normal((size, sc.n))
            if sc.law == "outliers":
                x = x - DEPARTURE * sc.std * (rng.random((size, sc.n)) < DEPART)
            elif sc.law == "quantised":
                x = _quantise(x)
            if published == "exact":  # outliers: the bulk's mean (module docstring)
                p, runs = np.full(size, BASE), math.inf
            elif published == "one run":
                p, runs = BASE + sc.std * rng.standard_normal(size), 1
            else:  # the best of K runs, of our law
                p, runs = BASE + sc.std * rng.standard_normal((size, best)).max(axis=1), 1
            for row, q in zip(x.tolist(), p.tolist(), strict=True):
                dec = decide.cell(row, q, sc.delta, runs=runs, best_of=best, resolution=h)
                out.append(_sided(dec, decide.NOT_REPRODUCED, NOT_REPRODUCED_UP, NOT_REPRODUCED_DOWN))
        return out

    sc.run = run


def _family(sc: Scenario) -> None:
    """Eight figures, each at t, on n paired seeds (ρ 0.5): which sides of ±δ the table's `*`s fall on."""
    ids = _ids("paired", sc.n)

    def run(rng: np.random.Generator, draws: int) -> list[str]:
        out = []
        for size in _chunks(draws):
            fa, fb = pairs(rng, size * 8, ids, 0.5, (sc.std, sc.std), sc.truth * sc.delta, sc.law)
            fa, fb = fa.reshape(size, 8, sc.n).tolist(), fb.reshape(size, 8, sc.n).tolist()
            for ta, tb in zip(fa, fb, strict=True):
                decisions = []
                for ra, rb in zip(ta, tb, strict=True):
                    iv = decide.difference(
                        dict(zip(ids[0], ra, strict=True)), dict(zip(ids[1], rb, strict=True))
                    )
                    if iv is not None:
                        decisions.append(decide.two_sided(iv, sc.delta))
                marks = (
                    [d.diff > 0 for d in decide.family(decisions) if decide.marked(d)] if decisions else []
                )
                up, down = any(marks), not all(marks)
                out.append(STAR_BOTH if up and down else STAR_UP if up else STAR_DOWN if down else NO_STAR)
        return out

    sc.run = run


def grid(reduced: bool = False) -> list[Scenario]:
    """Every scenario of the grid (``reduced``: a few of each kind, design and law, for the tests)."""
    ns = (2, 5) if reduced else NS
    out: list[Scenario] = []

    def add(
        kind: str,
        design: str,
        n_s: Sequence[int],
        std: float = STD,
        at: Sequence[float] = TRUTHS,
        draws: int = DRAWS,
        power: bool = False,
        **rest: Any,
    ) -> None:
        for n in n_s:
            for t in (*at, *POWER) if power else at:
                out.append(
                    Scenario(kind, design, n, std, t, draws=FEW_DRAWS if n < MIN_SEEDS else draws, **rest)
                )

    designs = ["paired ρ -0.5", "paired ρ 0", "paired ρ 0.5", "paired ρ 0.9", "disjoint"]
    for design in designs[2:] if reduced else designs:
        add("directional", design, ns, power=design in ("paired ρ -0.5", "paired ρ 0.5", "disjoint"))
    partly = [
        "partly 1/5 ρ 0.5",
        "partly 2/5 ρ 0.5",
        "partly 3/5 ρ 0.5",
        "partly 1/5 ρ -0.5",
        "partly 2/5 ρ -0.5",
    ]
    for design in partly[-2:] if reduced else partly:
        add("directional", design, (5,))
    for design in ("paired ρ 0.5", "disjoint"):  # unequal spreads
        add("directional", design, ns, UNEQUAL[0], std_b=UNEQUAL[1])
    for design in ("partly 2/5 ρ 0.5",) if reduced else ("partly 2/5 ρ 0.5", "partly 3/5 ρ 0.5"):
        add("directional", design, (5,), UNEQUAL[0], std_b=UNEQUAL[1])
    for s in (0.1,) if reduced else (0.1, 0.5):
        add("directional", "paired ρ 0.5", ns, s, law="quantised")
    add("directional", "paired ρ 0.5", ns, law="outliers")
    add("directional", "paired ρ 0.5", ns, law="outliers per setting")
    add("directional", "partly 3/5 ρ 0.5", (5,), law="outliers per setting")
    add("directional", GAP4, ns)
    for design in GAPS:
        own = "own" in design
        add("directional", design, ns if own or "same" in design else (5,), power=own)
    for k in (2,) if reduced else (2, 6):
        add("claim", f"{k} statements, shared seeds", ns if k == 2 else ns[1:], power=k == 2)
    for design in ("paired ρ 0.5", "disjoint"):
        add("plateau", design, ns, power=design == "paired ρ 0.5")
    add("plateau", "disjoint", ns, UNEQUAL[0], std_b=UNEQUAL[1])
    add("plateau", "paired ρ 0.5", ns, law="outliers per setting")
    for law in ("normal", "collapsed"):
        add("collapse", "one-sample", ns, law=law, power=law == "normal")
    cell = {"delta": decide.CELL_DELTA}
    add("cell", "against exact", ns, power=True, **cell)
    for s in (0.1,) if reduced else (0.1, 0.5):
        add("cell", "against exact", ns, s, law="quantised", **cell)
    add("cell", "against exact", ns, law="outliers", **cell)
    add("cell", "against one run", ns, power=True, **cell)
    add("cell", "against best of 5", ns, power=True, **cell)
    add("cell", "against best of 10", ns, draws=MANY * DRAWS, power=True, **cell)
    for published in ("exact", "one run", "best of 5", "best of 10"):
        add("cell", f"against {published}", ns[1:], draws=MANY * DRAWS, at=NEAR, **cell)
    add("family", "8 figures, paired ρ 0.5", ns, at=(0.0, 1.0, 2.0))
    return out


def _prepare(sc: Scenario, rng: np.random.Generator) -> None:
    if sc.kind == "directional":
        if sc.design == GAP4 or sc.design in GAPS:
            _gap(sc)
        else:
            _two_settings(sc, lambda iv: decide.directional(iv, sc.delta).outcome)
    elif sc.kind == "claim":
        _claim(sc, int(sc.design.split()[0]))
    elif sc.kind == "plateau":
        _two_settings(
            sc, lambda iv: _sided(decide.equivalence(iv, sc.delta), decide.BEYOND, BEYOND_UP, BEYOND_DOWN)
        )
    elif sc.kind == "collapse":
        _collapse(sc)
    elif sc.kind == "cell":
        _cell(sc, sc.design.removeprefix("against "))
    else:
        _family(sc)
    if sc.law == "quantised":
        sc.realised = quantised_truth(sc.truth * sc.delta, sc.std, rng)


def _draw(sc: Scenario, rng: np.random.Generator, draws: int) -> Counter[str]:
    got = Counter(sc.run(rng, draws))
    unknown = set(got) - set(OUTCOMES[sc.kind])
    if unknown:  # a word the calibration does not know would be counted as right: stop instead
        raise RuntimeError(
            f"{sc.kind} {sc.design}: outcome(s) the calibration does not know: {sorted(unknown)}"
        )
    return got


def judge_scenario(sc: Scenario, seed: int, index: int, scale: float = 1.0) -> dict[str, Any]:
    """Draw, judge, count: the scenario's rates, each side's wrong rate against its bound, its status.

    ``scale``: the share of the scenario's draws to use (the tests' fewer).
    """
    _prepare(sc, np.random.default_rng([seed, index, 1]))
    wrong = wrong_outcomes(sc.kind, sc.t, sc.delta)
    draws = max(1, round(sc.draws * scale))
    got = _draw(sc, np.random.default_rng([seed, index]), draws)
    rate = {side: sum(got[o] for o in outs) / draws for side, outs in wrong.items()}
    decisive = sum(c for o, c in got.items() if o not in UNDECIDED)
    if sc.n < MIN_SEEDS:
        status = "DECISIVE AT n < 3" if decisive else "n < 3: every draw inconclusive"
    elif not any(wrong.values()):
        status = "nothing can be wrong"
    else:
        if max(rate.values()) > bound(draws):  # above on a side: five times as many fresh draws decide
            draws *= CONFIRM
            got = _draw(sc, np.random.default_rng([seed, index, 2]), draws)
            rate = {side: sum(got[o] for o in outs) / draws for side, outs in wrong.items()}
        status = "ok" if max(rate.values()) <= bound(draws) else "ABOVE BOUND"
    rates = {o: c / draws for o, c in got.items()}
    right = right_outcomes(sc.kind, sc.t, sc.delta)
    worst = max(rate, key=lambda side: rate[side])
    return {
        "kind": sc.kind,
        "design": sc.design,
        "law": sc.law,
        "n": sc.n,
        "std": sc.spread,
        "truth": sc.truth,
        "t": sc.t,
        "delta": sc.delta,
        "draws": draws,
        "rates": rates,
        "wrong": {side: list(outs) for side, outs in wrong.items()},
        "wrong_rate": rate,
        "worst": rate[worst],
        "worst_side": worst,
        "nominal": SIDE,
        "bound": bound(draws),
        "decisive": decisive if sc.n < MIN_SEEDS else None,
        "status": status,
        "power": sum(rates.get(o, 0.0) for o in right) if right else None,
    }


def _cost(sc: Scenario) -> float:
    """A scenario's rough cost, to hand out the most expensive first."""
    if sc.kind == "claim":
        per = 2.0 + 0.7 * int(sc.design.split()[0])
    else:
        per = {"family": 8.0, "collapse": 1.5}.get(sc.kind, 1.0)
    return per * sc.draws


def _work(job: tuple[int, Scenario, int, float]) -> tuple[int, dict[str, Any]]:
    index, sc, seed, scale = job
    return index, judge_scenario(sc, seed, index, scale)


def calibrate(
    reduced: bool = False,
    seed: int = 0,
    only: Sequence[str] = (),
    scale: float = 1.0,
    processes: int = 1,
) -> list[dict[str, Any]]:
    """Every scenario's row, in the grid's order (``only``: these kinds; ``scale``: the share of the draws)."""
    jobs = [(i, sc, seed, scale) for i, sc in enumerate(grid(reduced)) if not only or sc.kind in only]
    if processes <= 1:
        return [_work(job)[1] for job in jobs]
    ordered = sorted(jobs, key=lambda job: -_cost(job[1]))
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        done = dict(pool.imap_unordered(_work, ordered, chunksize=1))
    return [done[i] for i, *_ in jobs]


# -- the report ---------------------------------------------------------------------------------------------------


def _t(row: dict[str, Any]) -> str:
    t = row["truth"]
    own = "" if row["law"] != "quantised" else f", quantised {row['t']:+.3f}"
    return ("0" if t == 0 else f"{t:+g}δ") + f" ({t * row['delta']:+g}{own})"


def _rates(row: dict[str, Any]) -> str:
    return ", ".join(f"{o} {r:.4f}" for o, r in sorted(row["rates"].items(), key=lambda x: -x[1]) if r > 0)


def _counted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["status"] in ("ok", "ABOVE BOUND")]


def _few(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if r["decisive"] is not None]


def _worst(rows: list[dict[str, Any]], side: str | None = None, short: bool = False) -> str:
    """The row nearest its bound (on ``side``, else either): rate / bound, where (``short``: its truth alone)."""
    key = (lambda r: r["wrong_rate"][side] - r["bound"]) if side else (lambda r: r["worst"] - r["bound"])
    r = max(_counted(rows), key=key, default=None)
    if r is None:
        return "–"
    s = side or r["worst_side"]
    where = "" if side else f"{s}, "
    where += _t(r) if short else f"n = {r['n']}, {_t(r)}"
    return f"{r['wrong_rate'][s]:.4f} / {r['bound']:.4f} ({where})"


def _power(rows: list[dict[str, Any]], truth: float, n: int | None = None) -> str:
    mine = [r for r in rows if r["truth"] == truth and (n is None or r["n"] == n) and r["power"] is not None]
    return "–" if not mine else f"{mine[0]['power']:.2f}"


def kind_table(rows: list[dict[str, Any]]) -> list[str]:
    """Per kind, design and law (n pooled): counted, above bound, n < 3 asserted, the worst side, power at +2δ."""
    lines = [
        "| kind | design | law | std | counted | above bound | n < 3: scenarios (decisive draws) "
        "| worst side: wrong rate / its bound (side, where) | right at +2δ, n = 3 / 5 / 10 |",
        "|---|---|---|---:|---:|---:|---:|---|---|",
    ]
    for key in dict.fromkeys((r["kind"], r["design"], r["law"], r["std"]) for r in rows):
        mine = [r for r in rows if (r["kind"], r["design"], r["law"], r["std"]) == key]
        counted, few = _counted(mine), _few(mine)
        above = sum(r["status"] == "ABOVE BOUND" for r in counted)
        fewer = f"{len(few)} ({sum(r['decisive'] for r in few)})" if few else "–"
        power = " / ".join(_power(mine, 2.0, n) for n in (3, 5, 10))
        lines.append(f"| {' | '.join(key)} | {len(counted)} | {above} | {fewer} | {_worst(mine)} | {power} |")
    return lines


def summary_table(rows: list[dict[str, Any]]) -> list[str]:
    """Per kind, design, law and n: the worst upper and lower wrong rates against their bounds, and power."""
    lines = [
        "| kind | design | law | std | n | counted | worst upper rate / bound (at) | worst lower rate / bound (at) "
        "| right at 0, +2δ, −2δ |",
        "|---|---|---|---:|---:|---:|---|---|---|",
    ]
    for key in dict.fromkeys((r["kind"], r["design"], r["law"], r["std"], r["n"]) for r in rows):
        mine = [r for r in rows if (r["kind"], r["design"], r["law"], r["std"], r["n"]) == key]
        if not _counted(mine):
            continue
        power = ", ".join(_power(mine, t) for t in (0.0, 2.0, -2.0))
        lines.append(
            f"| {' | '.join(map(str, key))} | {len(_counted(mine))} | {_worst(mine, UPPER, short=True)} "
            f"| {_worst(mine, LOWER, short=True)} | {power} |"
        )
    return lines


def markdown(rows: list[dict[str, Any]], head: str) -> str:
    """The summary, the tables, every counted scenario, the n < 3 ones and those where nothing can be wrong."""
    lines = ["# Operating characteristics of the decision rule (stsbench.stats.decide)", "", head, ""]
    bad = failures(rows)
    if bad:
        lines += [f"## Failing ({len(bad)}): above their bound on a side, or decisive at n < {MIN_SEEDS}", ""]
        lines += [*(f"- {line}" for line in bad), ""]
    lines += ["## Per kind, design and law", "", *kind_table(rows), ""]
    lines += ["## Per kind, design, law and n (n >= 3)", "", *summary_table(rows), ""]
    lines += ["## Every counted scenario", ""]
    lines += [
        "| kind | design | law | n | std | truth | draws | upper: wrong outcomes | upper rate "
        "| lower: wrong outcomes | lower rate | bound | status | outcomes |"
    ]
    lines += ["|---|---|---|---:|---:|---|---:|---|---:|---|---:|---:|---|---|"]
    for r in _counted(rows):
        sides = []
        for side in (UPPER, LOWER):
            outs = r["wrong"][side]
            sides += [" + ".join(outs) or "–", f"{r['wrong_rate'][side]:.4f}" if outs else "–"]
        lines.append(
            f"| {r['kind']} | {r['design']} | {r['law']} | {r['n']} | {r['std']} | {_t(r)} | {r['draws']} "
            f"| {' | '.join(sides)} | {r['bound']:.4f} | {r['status']} | {_rates(r)} |"
        )
    few = _few(rows)
    lines += [
        "",
        f"## Fewer than {MIN_SEEDS} seeds: every draw asserted inconclusive ({len(few)} scenarios, "
        f"{sum(r['draws'] for r in few)} draws, {sum(r['decisive'] for r in few)} decisive)",
        "",
        "| kind | design | law | n | std | truth | draws | decisive draws | status | outcomes |",
        "|---|---|---|---:|---:|---|---:|---:|---|---|",
    ]
    for r in few:
        lines.append(
            f"| {r['kind']} | {r['design']} | {r['law']} | {r['n']} | {r['std']} | {_t(r)} | {r['draws']} "
            f"| {r['decisive']} | {r['status']} | {_rates(r)} |"
        )
    apart = [r for r in rows if r["status"] == "nothing can be wrong"]
    if apart:
        lines += [
            "",
            f"## Where nothing can be wrong ({len(apart)} scenarios, listed apart, not counted as passing)",
            "",
            "| kind | design | law | n | std | truth | outcomes |",
            "|---|---|---|---:|---:|---|---|",
        ]
        for r in apart:
            lines.append(
                f"| {r['kind']} | {r['design']} | {r['law']} | {r['n']} | {r['std']} | {_t(r)} | {_rates(r)} |"
            )
    return "\n".join([*lines, ""])


def failures(rows: list[dict[str, Any]]) -> list[str]:
    """One line for each scenario above its bound and each n < 3 scenario with a decisive draw."""
    out = []
    for r in rows:
        where = f"{r['kind']} {r['design']} {r['law']} n={r['n']} std={r['std']} truth={_t(r)}"
        if r["status"] == "ABOVE BOUND":
            sides = ", ".join(f"{side} {v:.4f}" for side, v in r["wrong_rate"].items() if v > r["bound"])
            out.append(f"ABOVE BOUND: {where}: {sides} > {r['bound']:.4f} at {r['draws']} draws")
        elif r["status"] == "DECISIVE AT n < 3":
            out.append(f"DECISIVE AT n < 3: {where}: {r['decisive']} of {r['draws']} draws ({_rates(r)})")
    return out


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grid, print (and with ``--out`` write) the tables; 1 if a scenario fails (module docstring)."""
    ap = _Parser(prog="decision_calibration.py", description=__doc__.splitlines()[0])
    ap.add_argument("--reduced", action="store_true", help="a few scenarios of each kind (the tests')")
    ap.add_argument("--seed", type=int, default=0, help="the simulation's seed (each scenario's is derived)")
    ap.add_argument("--kinds", default="", help="comma list of kinds to run (default: all)")
    ap.add_argument(
        "--draws",
        type=int,
        default=DRAWS,
        help=f"draws a scenario ({DRAWS}; {MANY} times as many for the best of 10 and ±0.9δ cells, "
        f"{FEW_DRAWS / DRAWS:g} of it at n < 3)",
    )
    ap.add_argument("--processes", type=int, default=PROCESSES, help=f"worker processes ({PROCESSES})")
    ap.add_argument("--out", help="also write the Markdown here (atomically)")
    args = ap.parse_args(argv)
    kinds = tuple(k for k in args.kinds.split(",") if k)
    unknown = set(kinds) - set(OUTCOMES)
    if unknown:
        ap.error(f"--kinds: unknown {', '.join(sorted(unknown))} (known: {', '.join(OUTCOMES)})")
    if args.seed < 0 or args.draws < 1 or args.processes < 1:
        ap.error("--seed must be >= 0, --draws and --processes >= 1")
    start = time.perf_counter()
    rows = calibrate(args.reduced, args.seed, kinds, args.draws / DRAWS, args.processes)
    wall = time.perf_counter() - start
    counted, few = _counted(rows), _few(rows)
    above = [r for r in counted if r["status"] == "ABOVE BOUND"]
    decisive = [r for r in few if r["decisive"]]
    apart = len(rows) - len(counted) - len(few)
    command = "python benchmarks/decision_calibration.py " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    d = args.draws
    head = (
        f"**Summary** (rule version {decide.RULE_VERSION}, stsbench/stats/decide.py sha256 {RULE_FILE}): "
        f"{len(rows)} scenarios; {len(counted)} counted, "
        f"{len(above)} above their bound on a side; {len(few)} at n < {MIN_SEEDS}, {len(decisive)} with a decisive "
        f"draw ({sum(r['draws'] for r in few)} draws, each asserted inconclusive); {apart} where nothing can be "
        f"wrong. {d} draws a scenario, {MANY * d} for the cells against the best of 10 and at ±0.9δ, "
        f"{round(FEW_DRAWS * d / DRAWS)} at n < {MIN_SEEDS}; where a side lands above its bound, {CONFIRM} times as "
        f"many fresh draws decide. Each side (upper, lower) of every kind against nominal {SIDE:g} + 3 SE at the "
        f"draws used. Command `OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', '(unset)')} "
        f"{command.strip()}`; {wall:.0f} s wall, {args.processes} process{'es' * (args.processes > 1)}. The rules "
        "of the simulation and of what is wrong where: the script's docstring."
    )
    text = markdown(rows, head)
    print(head)
    if args.out:  # the sequential plan's section (benchmarks/sequential_calibration.py) kept below its marker
        out = Path(args.out)
        old = out.read_text(encoding="utf-8") if out.is_file() else ""
        tail = old[old.index(SEQUENTIAL) :] if SEQUENTIAL in old else ""
        atomic_write_text(out, f"{text.rstrip()}\n\n{tail}" if tail else text)
    bad = failures(rows)
    for line in bad:
        print(line, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
