"""How the sequential seed plan (stsbench.stats.sequential) decides, against a fixed number of seeds.

    OMP_NUM_THREADS=1 python benchmarks/sequential_calibration.py [--runs 100000] [--seed 0] [--verify 2000]
        [--quantised-paths N] [--claim-paths N] [--claim-verify N] [--processes 2] [--reduced]
        [--out docs/calibration.md]

**The grid.** A paired contrast A > B with normal per-seed differences: δ = 0.5, seed std 0.25, 0.5 and 1.0,
true differences 0, ±δ/2, ±δ, ±2δ and ±4δ (27 cells), at most M = 10 and M = 20 seeds; ``--runs`` paths a cell
(100,000). On each path the sequential plan looks at n = 3, 4, 5, 6, ⌈0.8M⌉ and M seeds with the committed
constants, stops at the first decisive word, or by futility at the middle looks (the rule of
:func:`stsbench.stats.sequential.futile`), or at M; the fixed designs read the same path at M and at 3 seeds
with the 95% interval (common random numbers: every design reads the same seeds).

**Counted.** Wrong decisive words, a side at a time, as docs/calibration.md defines them for a statement (upper:
a direction shown where t <= 0, *by more than δ* where t <= δ, *no difference that matters* or *reversed, by less
than δ* where t <= -δ; lower the mirror image), each against 0.025 + 3 binomial SE at the cell's runs (0.0265 at
100,000); the right-decision rate (decisive and not wrong) of the plan, of M fixed seeds and of 3; the expected
seeds of the plan (mean stopping n) and its share of M; how often futility stopped it. The same for the plan with
``--refine`` (on past *supported* and *reversed* until the size is shown or out of reach,
:func:`stsbench.stats.sequential.size_futile`): its wrong words, a side at a time, against the same bound, and its
expected seeds.

**The project's words.** The paths run through :func:`stsbench.stats.sequential.simulate` (the plan vectorised,
the words by :func:`~stsbench.stats.sequential.words`, the regions of :func:`stsbench.stats.decide.directional`);
on the first ``--verify`` paths of every cell, each path's stopping look and word are also asked of
:func:`stsbench.stats.sequential.path` (a statement judged from its recorded seeds, one look at a time, by the
rule's own interval functions), and the fixed designs' words of :func:`~stsbench.stats.decide.directional`; one
disagreement stops the run (exit 1). Exit 1 too where a side lies above its bound (0 otherwise).

**Quantised figures** (at most M = 10 seeds: the resolution acts at every look alike, and the grid above covers
M = 20's looks). Figures on a grid of step h = 0.2 (TREC's 500 questions) and h = 100/1,725 (a transfer accuracy
on 1,725 examples), seed std 0.1 and 0.5, judged with resolution h at every look: (a) a published cell, seeds
against one published run that is itself one quantised draw of the same law, cell δ 1.0, by
:func:`stsbench.stats.sequential.path_cell` on ``plan(10, "cell")``; (b) a statement A > B on paired seeds
(correlation 0.5, as benchmarks/decision_calibration.py's quantised statements), δ 0.5, by
:func:`stsbench.stats.sequential.path` on ``plan(10)``. Each path is one call of the project's function (nothing
vectorised: :func:`~stsbench.stats.sequential.simulate` knows no resolution). The truth is the difference of the
quantised figures' means, computed exactly from the normal law (0 exactly at truth 0, where both laws are one). The
wrong words are benchmarks/decision_calibration.py's (:func:`decision_calibration.wrong_outcomes`): a statement's
as above; a cell's *reproduced* where t <= -δ (upper) or t >= δ (lower), *not reproduced* above +δ where t <= δ
(upper), below -δ where t >= -δ (lower). ``--quantised-paths`` paths a scenario (``--runs`` / 20: 5,000).

**Claims of 7 and 19 statements.** An argmax over a sweep: A above each of m = 7 or 19 others, m paired statements
sharing their seeds (A's figure in each; a setting's figure a seed's shared component plus its own, each of
variance std²/2: decision_calibration.py's claims), normal law, per-seed differences of std 0.5, δ 0.5, at most 10
seeds, every statement at the same truth 0, +δ or -δ, and one mixed claim (the statements' truths 0, +δ, +2δ in
turn). Each statement is judged by the plan of m statements (``plan(10, "paired", m)``: Bonferroni's constants
above 6 statements, :attr:`stsbench.stats.sequential.Plan.rule`), stopped at its first decisive word or by
futility, on ``--claim-paths`` paths a scenario (``--runs`` / 5: 20,000) through
:func:`~stsbench.stats.sequential.simulate`, one statement at a time; on the first ``--claim-verify`` paths
(``--verify`` / 10) every statement's look and word are also asked of :func:`stsbench.stats.claims.judge` (the
report's ``until=10``: each statement by :func:`~stsbench.stats.sequential.path`), one disagreement stops the run.
Counted: a wrong decisive word on any statement of the claim (familywise), a side at a time, each against 0.025 + 3
binomial SE; the seeds until every statement stopped (the claim's), and a statement's.

``--processes`` worker processes (2), the costliest scenarios first; each scenario's draws depend only on its
seed and place in the grid, so the tables do not depend on the processes (the decision calibration's way).

``--reduced`` (the tests'): the grid above left out; the claim of 19 statements and one quantised cell (h 0.2,
std 0.1, at +δ).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import decision_calibration as fixed_rule  # benchmarks/: the fixed rule's calibration, its wrong words and laws
import numpy as np
from scipy import stats

from stsbench.files import atomic_write_text
from stsbench.stats import decide, sequential
from stsbench.stats.claims import Argmax, judge

PROCESSES = 2
DELTA = 0.5
STDS = (0.25, 0.5, 1.0)
TRUTHS = (-4, -2, -1, -0.5, 0, 0.5, 1, 2, 4)  # in δ
MAXIMA = (10, 20)
WORDS = sequential.WORDS
CODE = {w: i for i, w in enumerate(WORDS)}
UP_WRONG = {  # a word, and the truths t at or below which it is wrong upward (an interval above t)
    decide.SUPPORTED_MORE: DELTA,
    decide.SUPPORTED: 0.0,
    decide.SUPPORTED_LESS: 0.0,
    decide.NO_DIFFERENCE: -DELTA,
    decide.REVERSED_LESS: -DELTA,
}
MIRROR = {  # the same word's mirror image, wrong downward at the mirrored truths
    decide.SUPPORTED_MORE: decide.REVERSED_MORE,
    decide.SUPPORTED: decide.REVERSED,
    decide.SUPPORTED_LESS: decide.REVERSED_LESS,
    decide.NO_DIFFERENCE: decide.NO_DIFFERENCE,
    decide.REVERSED_LESS: decide.SUPPORTED_LESS,
}


def words(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return sequential.words(low, high, DELTA)


def wrong(codes: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) masks of the wrong decisive words at truth ``t``."""
    up = np.zeros(codes.shape, dtype=bool)
    down = np.zeros(codes.shape, dtype=bool)
    for word, limit in UP_WRONG.items():
        if t <= limit:
            up |= codes == CODE[word]
        if t >= -limit:
            down |= codes == CODE[MIRROR[word]]
    return up, down


def decisive(codes: np.ndarray) -> np.ndarray:
    return (codes != CODE[decide.INCONCLUSIVE]) & (codes != CODE[sequential.FUTILE])


def cell(maximum: int, std: float, truth: float, runs: int, seed: int, verify: int) -> dict[str, float]:
    """One cell of the grid: the plan's and the fixed designs' rates on the same ``runs`` paths."""
    rng = np.random.Generator(np.random.PCG64([seed, maximum, STDS.index(std), TRUTHS.index(truth)]))
    t = truth * DELTA
    x = rng.normal(t, std, (runs, maximum))
    at = sequential.plan(maximum)
    stop, final = sequential.simulate(x, DELTA, at)
    stop_r, final_r = sequential.simulate(x, DELTA, at, refine=True)
    for row, n, code, n_r, code_r in zip(
        x[:verify], stop[:verify], final[:verify], stop_r[:verify], final_r[:verify], strict=True
    ):
        check_path(row, at, int(n), WORDS[code])
        check_path(row, at, int(n_r), WORDS[code_r], refine=True)
    fixed = {}
    for n in (maximum, 3):
        m, s = x[:, :n].mean(axis=1), x[:, :n].std(axis=1, ddof=1)
        half = stats.t.ppf(0.975, n - 1) * s / math.sqrt(n)
        fixed[n] = words(m - half, m + half)
        for row, code in zip(x[:verify], fixed[n][:verify], strict=True):
            a = {i: float(v) for i, v in enumerate(row[:n])}
            word = decide.directional(decide.difference(a, dict.fromkeys(a, 0.0)), DELTA).outcome
            if WORDS[code] != word:
                raise SystemExit(
                    f"fixed {n}: vectorised {WORDS[code]!r}, the project's {word!r} on {row[:n]}"
                )
    up, down = wrong(final, t)
    up_r, down_r = wrong(final_r, t)

    def right(c: np.ndarray) -> float:
        return float(np.mean(decisive(c) & ~np.any(wrong(c, t), axis=0)))

    return {
        "upper": float(up.mean()),
        "lower": float(down.mean()),
        "seeds": float(stop.mean()),
        "right": right(final),
        "right_fixed": right(fixed[maximum]),
        "right_3": right(fixed[3]),
        "futile": float(np.mean(final == CODE[sequential.FUTILE])),
        "more_than_delta": float(np.mean(final == CODE[decide.SUPPORTED_MORE])),
        "refine_upper": float(up_r.mean()),
        "refine_lower": float(down_r.mean()),
        "refine_seeds": float(stop_r.mean()),
        "more_than_delta_refine": float(np.mean(final_r == CODE[decide.SUPPORTED_MORE])),
        "more_than_delta_fixed": float(np.mean(fixed[maximum] == CODE[decide.SUPPORTED_MORE])),
    }


def check_path(row: np.ndarray, at: sequential.Plan, n: int, word: str, refine: bool = False) -> None:
    """A path as the project judges a statement from its recorded seeds (:func:`sequential.path`)."""
    a = {i: float(v) for i, v in enumerate(row, start=1)}
    found = sequential.path(a, dict.fromkeys(a, 0.0), DELTA, at, refine=refine)
    if (found.n, found.decision.outcome) != (n, word):
        raise SystemExit(
            f"vectorised: {word!r} at {n}; the project's: {found.decision.outcome!r} at {found.n} on {row}"
        )


# -- quantised figures: every path one call of the project's path functions, at the figures' resolution ---------

QUANTISED_MAXIMUM = 10
# the figures' steps: TREC's 500 questions; a transfer accuracy on 1,725 examples
STEPS = (("0.2", 0.2), ("100/1,725", 100 / 1725))
QUANTISED_STDS = (0.1, 0.5)
QUANTISED_TRUTHS = (0.0, 1.0, -1.0)  # in δ: where each side is at its nominal level
DESIGNS = {  # what is judged: (decision_calibration.py's kind, δ, the plan's design)
    "published cell": ("cell", decide.CELL_DELTA, "cell"),
    "A > B paired": ("directional", DELTA, "paired"),
}
BASE = fixed_rule.BASE  # the figures' level, in points
RHO = 0.5  # two settings' figures on a seed, correlated (decision_calibration.py's quantised statements)
SEEDS = range(1, QUANTISED_MAXIMUM + 1)


def quantise(x: np.ndarray, h: float) -> np.ndarray:
    return np.round(x / h) * h


def quantised_bias(mean: float, std: float, h: float) -> float:
    """E[q(X)] - mean for X ~ N(mean, std) rounded to the grid of step ``h``: exact, from the normal law."""
    k = np.arange(math.floor((mean - 12 * std) / h) - 1, math.ceil((mean + 12 * std) / h) + 2)
    mass = stats.norm.cdf((k * h + h / 2 - mean) / std) - stats.norm.cdf((k * h - h / 2 - mean) / std)
    return float(np.sum((k * h - mean) * mass))


def quantised_truth(diff: float, std: float, h: float) -> float:
    """The difference of the quantised figures' means, A's (or our seeds') true mean ``diff`` above B's."""
    return diff + quantised_bias(BASE + diff, std, h) - quantised_bias(BASE, std, h)


def quantised(design: str, step: str, std: float, truth: float, paths: int, seed: int) -> dict[str, float]:
    """One quantised scenario: ``paths`` paths, each judged by the project's path function at resolution h."""
    kind, delta, plan_design = DESIGNS[design]
    h = dict(STEPS)[step]
    place = [list(DESIGNS).index(design), list(dict(STEPS)).index(step), QUANTISED_STDS.index(std)]
    rng = np.random.Generator(np.random.PCG64([seed, 1, *place, QUANTISED_TRUTHS.index(truth)]))
    at = sequential.plan(QUANTISED_MAXIMUM, plan_design)
    t = quantised_truth(truth * delta, std, h)
    known = set(fixed_rule.OUTCOMES[kind]) | {sequential.FUTILE}
    outcomes, stops = [], []
    if kind == "cell":  # seeds against one published run, itself one quantised draw of the same law
        x = quantise(BASE + truth * delta + std * rng.standard_normal((paths, QUANTISED_MAXIMUM)), h)
        p = quantise(BASE + std * rng.standard_normal(paths), h)
        for row, q in zip(x.tolist(), p.tolist(), strict=True):
            found = sequential.path_cell(dict(zip(SEEDS, row, strict=True)), q, delta, at, resolution=h)
            up, down = fixed_rule.NOT_REPRODUCED_UP, fixed_rule.NOT_REPRODUCED_DOWN
            outcomes.append(fixed_rule._sided(found.decision, decide.NOT_REPRODUCED, up, down))
            stops.append(found.n)
    else:  # A > B, both settings quantised, on the same seeds
        ids = (SEEDS, SEEDS)
        a, b = fixed_rule.pairs(rng, paths, ids, RHO, (std, std), truth * delta, "normal")
        for ra, rb in zip(quantise(a, h).tolist(), quantise(b, h).tolist(), strict=True):
            pa, pb = dict(zip(SEEDS, ra, strict=True)), dict(zip(SEEDS, rb, strict=True))
            found = sequential.path(pa, pb, delta, at, resolution=h)
            outcomes.append(found.decision.outcome)
            stops.append(found.n)
    unknown = set(outcomes) - known
    if unknown:  # a word the calibration does not know would be counted as right: stop instead
        raise SystemExit(f"quantised {design}: outcome(s) the calibration does not know: {sorted(unknown)}")
    wrong_words = fixed_rule.wrong_outcomes(kind, t, delta)
    rate = {side: float(np.mean([o in words for o in outcomes])) for side, words in wrong_words.items()}
    undecided = (decide.INCONCLUSIVE, sequential.FUTILE)
    return {
        "t": t,
        "upper": rate[fixed_rule.UPPER],
        "lower": rate[fixed_rule.LOWER],
        "seeds": float(np.mean(stops)),
        "decisive": float(np.mean([o not in undecided for o in outcomes])),
    }


# -- claims of many statements: each statement by the plan of m statements, familywise -------------------------

CLAIM_MAXIMUM = 10
CLAIM_STD = 0.5  # the per-seed differences' std
CLAIM_SIZES = (7, 19)
CLAIM_TRUTHS = {  # the statements' truths in δ, in turn
    "0": (0.0,),
    "+δ": (1.0,),
    "−δ": (-1.0,),
    "mixed: 0, +δ, +2δ in turn": (0.0, 1.0, 2.0),
}


def claim(m: int, truths: str, paths: int, seed: int, verify: int) -> dict[str, float]:
    """An argmax of ``m`` statements sharing their seeds: each statement's word by the plan of m statements."""
    cycle = CLAIM_TRUTHS[truths]
    t = [cycle[i % len(cycle)] * DELTA for i in range(m)]
    rng = np.random.Generator(np.random.PCG64([seed, 2, m, list(CLAIM_TRUTHS).index(truths)]))
    names = ["A", *[f"B{i}" for i in range(1, m + 1)]]
    seeds = [range(1, CLAIM_MAXIMUM + 1)] * len(names)
    figures = fixed_rule.settings(rng, paths, seeds, [BASE, *(BASE - ti for ti in t)], CLAIM_STD)
    at = sequential.plan(CLAIM_MAXIMUM, "paired", m)
    found = [sequential.simulate(figures[0] - f, DELTA, at) for f in figures[1:]]
    stop, final = np.array([s for s, _ in found]), np.array([c for _, c in found])  # (m, paths)
    argmax = Argmax(kind="argmax", best="A", among=tuple(names))
    for j in range(min(verify, paths)):  # the report's judge: each statement by sequential.path at its look
        scores = {
            name: dict(zip(seeds[0], f[j].tolist(), strict=True))
            for name, f in zip(names, figures, strict=True)
        }
        judged = judge(argmax, scores, describe=False, until=CLAIM_MAXIMUM)
        for i, st in enumerate(judged.statements):
            if (st.look, st.outcome) != (int(stop[i, j]), WORDS[final[i, j]]):
                raise SystemExit(
                    f"claim of {m}, statement {i + 1}: vectorised {WORDS[final[i, j]]!r} at {stop[i, j]}; "
                    f"claims.judge: {st.outcome!r} at {st.look}"
                )
    sides = [wrong(final[i], t[i]) for i in range(m)]
    return {
        "upper": float(np.any([u for u, _ in sides], axis=0).mean()),
        "lower": float(np.any([d for _, d in sides], axis=0).mean()),
        "seeds": float(stop.max(axis=0).mean()),
        "statement_seeds": float(stop.mean()),
        "decisive": float(decisive(final).mean()),  # a statement's
    }


# -- the scenarios as jobs: (function, its arguments), each computed alone (its own seeded draws) ---------------

Job = tuple[str, tuple[Any, ...]]
REDUCED_QUANTISED = ("published cell", "0.2", 0.1, 1.0)  # --reduced's one quantised scenario


def cell_jobs(runs: int, seed: int, verify: int, reduced: bool) -> list[Job]:
    """The grid's cells, M by M (none with ``reduced``)."""
    grid = [(m, std, truth) for m in MAXIMA for std in STDS for truth in TRUTHS]
    return [] if reduced else [("cell", (*g, runs, seed, verify)) for g in grid]


def quantised_jobs(paths: int, seed: int, reduced: bool) -> list[Job]:
    """The quantised scenarios (0 paths: none)."""
    grid = [
        (design, step, std, truth)
        for design in DESIGNS
        for step, _ in STEPS
        for std in QUANTISED_STDS
        for truth in QUANTISED_TRUTHS
    ]
    chosen = [g for g in grid if not reduced or g == REDUCED_QUANTISED] if paths else []
    return [("quantised", (*g, paths, seed)) for g in chosen]


def claim_jobs(paths: int, seed: int, verify: int, reduced: bool) -> list[Job]:
    """The claims, m by m (0 paths: none; ``reduced``: the largest m only)."""
    sizes = [m for m in CLAIM_SIZES if not reduced or m == max(CLAIM_SIZES)] if paths else []
    return [("claim", (m, truths, paths, seed, verify)) for m in sizes for truths in CLAIM_TRUTHS]


def _cost(job: Job) -> float:
    """A job's rough cost, to start the costliest first: a quantised path is one call of the project's path
    function; a claim judges its first paths statement by statement; a cell is vectorised but for its checks."""
    name, a = job
    if name == "quantised":
        return 10 * a[4]  # paths
    if name == "claim":
        return a[0] * a[4] + a[2] / 10  # statements x verified paths, paths
    return 2 * a[5] + a[3] / 100  # a cell: verified paths, runs


def _run(job: Job) -> tuple[dict[str, float], float]:
    """A job's result and the seconds it took."""
    started = time.perf_counter()
    name, a = job
    return {"cell": cell, "quantised": quantised, "claim": claim}[name](*a), time.perf_counter() - started


def compute(jobs: list[Job], processes: int) -> dict[Job, tuple[dict[str, float], float]]:
    """Every job's result and seconds; on ``processes`` forked workers, the costliest first."""
    if processes <= 1:
        return {job: _run(job) for job in jobs}
    ordered = sorted(jobs, key=_cost, reverse=True)
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        return dict(zip(ordered, pool.map(_run, ordered, chunksize=1), strict=True))


@dataclass
class Tally:
    """A section's scenarios so far: the worst side, each one's expected seeds as a share of M, any above bound."""

    limit: float
    maximum: int
    worst: float = 0.0
    failed: bool = False
    shares: list[float] = field(default_factory=list)

    def add(self, r: dict[str, float]) -> str:
        """Count one scenario's result; the mark its table row takes (" (above)" past the bound, else "")."""
        over = max(r["upper"], r["lower"]) > self.limit
        self.failed |= over
        self.worst = max(self.worst, r["upper"], r["lower"])
        self.shares.append(r["seeds"] / self.maximum)
        return " (above)" if over else ""


def binomial_bound(paths: int) -> float:
    """0.025 + 3 binomial SE at ``paths`` paths (decision_calibration.py's bound)."""
    return fixed_rule.bound(paths)


def claim_sizes(jobs: list[Job]) -> str:
    """The claims' sizes the jobs hold, in words: ``7 and 19``."""
    return " and ".join(map(str, sorted({job[1][0] for job in jobs})))


MARKER = "<!-- the sequential plan: benchmarks/sequential_calibration.py --out writes from here on -->"


def with_section(existing: str, section: str) -> str:
    """``existing`` (docs/calibration.md) with everything from :data:`MARKER` on replaced by ``section``."""
    kept = existing.split(MARKER)[0].rstrip("\n")
    return f"{kept}\n\n{MARKER}\n\n{section}" if kept else f"{MARKER}\n\n{section}"


def quantised_section(
    jobs: list[Job], results: dict[Job, Any], paths: int
) -> tuple[list[str], list[str], bool]:
    """The quantised scenarios' table, its summary line and whether a side lies above its bound (no jobs: none)."""
    if not jobs:
        return [], [], False
    limit = binomial_bound(paths)
    lines = [
        f"### Quantised figures (at most {QUANTISED_MAXIMUM} seeds)",
        "",
        "Figures on a grid of step h, judged with resolution h at every look: a published cell, seeds against one "
        "published run that is itself one quantised draw of the same law (cell δ 1.0, `sequential.path_cell` on "
        '`plan(10, "cell")`), and a statement A > B on paired seeds (correlation 0.5, δ 0.5, `sequential.path` '
        f"on `plan(10)`); each path one call of the project's function; {paths:,} paths a scenario, each side "
        f"against 0.025 + 3 SE = {limit:.4f}. The truth is the difference of the quantised figures' means (exact; "
        "in brackets). M = 10 is enough here: the resolution acts at every look alike, and the grid above covers "
        "M = 20's looks.",
        "",
        "| judged | h | seed std | true diff (quantised) | wrong upper | wrong lower | E[seeds] | share of M "
        "| decisive |",
        "|---|---|---:|---|---:|---:|---:|---:|---:|",
    ]
    tally = Tally(limit, QUANTISED_MAXIMUM)
    for job in jobs:
        (design, step, std, truth, *_), r = job[1], results[job][0]
        mark = tally.add(r)
        lines.append(
            f"| {design} (δ {DESIGNS[design][1]:g}) | {step} | {std:g} | {truth:+g}δ ({r['t']:+.4f}) "
            f"| {r['upper']:.4f} | {r['lower']:.4f}{mark} | {r['seeds']:.2f} "
            f"| {r['seeds'] / QUANTISED_MAXIMUM:.3f} | {r['decisive']:.3f} |"
        )
    summary = (
        f"**Quantised figures** (h 0.2 and 100/1,725, M = {QUANTISED_MAXIMUM}, {len(tally.shares)} scenarios): "
        f"wrong decisive words at most {tally.worst:.4f} a side (bound {limit:.4f} at {paths:,} paths); expected "
        f"seeds {np.mean(tally.shares):.3f} of M on average."
    )
    return [*lines, ""], [summary], tally.failed


def claims_section(
    jobs: list[Job], results: dict[Job, Any], paths: int, verify: int
) -> tuple[list[str], list[str], bool]:
    """The claims' table, their summary line and whether a side lies above its bound (no jobs: none)."""
    if not jobs:
        return [], [], False
    limit = binomial_bound(paths)
    lines = [
        f"### Claims of {claim_sizes(jobs)} statements (at most {CLAIM_MAXIMUM} seeds)",
        "",
        "An argmax over a sweep, A above each of m others: m paired statements sharing their seeds, normal law, "
        f"per-seed differences of std {CLAIM_STD:g}, δ {DELTA:g}; each statement judged by the plan of m statements "
        '(`plan(10, "paired", m)`: Bonferroni\'s constants above 6 statements); counted: a wrong decisive word '
        f"on any statement of the claim, a side at a time. {paths:,} paths a scenario through `sequential.simulate`, "
        f"every statement's look and word checked against `claims.judge` (`until=10`) on the first {verify:,}; each "
        f"side against 0.025 + 3 SE = {limit:.4f}. E[seeds]: until every statement stopped (the claim's), and a "
        "statement's.",
        "",
        "| statements | constants (looks 3, 4, 5, 6, 8, 10) | truths | wrong upper (any statement) "
        "| wrong lower (any statement) | E[seeds] (claim) | share of M | E[seeds] (a statement) "
        "| decisive (a statement) |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    tally = Tally(limit, CLAIM_MAXIMUM)
    for job in jobs:
        (m, truths, *_), r = job[1], results[job][0]
        at = sequential.plan(CLAIM_MAXIMUM, "paired", m)
        constants = f"{at.rule}: {', '.join(f'{c:g}' for c in at.constants)}"
        mark = tally.add(r)
        lines.append(
            f"| {m} | {constants} | {truths} | {r['upper']:.4f} | {r['lower']:.4f}{mark} "
            f"| {r['seeds']:.2f} | {r['seeds'] / CLAIM_MAXIMUM:.3f} | {r['statement_seeds']:.2f} "
            f"| {r['decisive']:.3f} |"
        )
    summary = (
        f"**Claims of {claim_sizes(jobs)} "
        f"statements** (M = {CLAIM_MAXIMUM}, {len(tally.shares)} scenarios): a wrong decisive word on any statement "
        f"at most {tally.worst:.4f} a side (bound {limit:.4f} at {paths:,} paths); expected seeds until every "
        f"statement stopped {np.mean(tally.shares):.3f} of M on average."
    )
    return [*lines, ""], [summary], tally.failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--verify", type=int, default=2000, help="paths a cell also judged by the project's code"
    )
    parser.add_argument(
        "--quantised-paths", type=int, help="paths a quantised scenario (default: --runs / 20)"
    )
    parser.add_argument("--claim-paths", type=int, help="paths a claim scenario (default: --runs / 5)")
    parser.add_argument(
        "--claim-verify",
        type=int,
        help="paths a claim scenario also judged by claims.judge (default: --verify / 10)",
    )
    parser.add_argument("--processes", type=int, default=PROCESSES, help=f"worker processes ({PROCESSES})")
    parser.add_argument(
        "--reduced",
        action="store_true",
        help="the tests': the grid left out; the claim of 19 statements and one quantised cell",
    )
    parser.add_argument(
        "--out", type=Path, help="write the section into this Markdown file (from its marker on)"
    )
    args = parser.parse_args(argv)
    quantised_paths = args.runs // 20 if args.quantised_paths is None else args.quantised_paths
    claim_paths = args.runs // 5 if args.claim_paths is None else args.claim_paths
    claim_verify = args.verify // 10 if args.claim_verify is None else args.claim_verify
    if (
        args.runs < 1
        or args.processes < 1
        or min(quantised_paths, claim_paths, args.verify, claim_verify) < 0
    ):
        parser.error("--runs and --processes must be >= 1, the other paths >= 0 (0: that part left out)")
    started = time.perf_counter()
    cells = cell_jobs(args.runs, args.seed, args.verify, args.reduced)
    q_jobs = quantised_jobs(quantised_paths, args.seed, args.reduced)
    c_jobs = claim_jobs(claim_paths, args.seed, claim_verify, args.reduced)
    results = compute([*cells, *q_jobs, *c_jobs], args.processes)
    bound = binomial_bound(args.runs)
    failed, lines, summary = False, [], []
    for maximum in () if args.reduced else MAXIMA:
        lines += [
            f"### At most {maximum} seeds",
            "",
            "| seed std | true diff | wrong upper | wrong lower | E[seeds] | share of M | right (plan) "
            f"| right ({maximum} fixed) | right (3 fixed) | futility | --refine: wrong upper / lower "
            "| --refine: E[seeds] | by more than δ (plan / --refine / fixed) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        shares, gaps, worst, refined, worst_r = [], [], 0.0, [], 0.0
        for std in STDS:
            for truth in TRUTHS:
                r = results[("cell", (maximum, std, truth, args.runs, args.seed, args.verify))][0]
                shares.append(r["seeds"] / maximum)
                gaps.append(r["right_fixed"] - r["right"])
                worst = max(worst, r["upper"], r["lower"])
                over = max(r["upper"], r["lower"]) > bound
                refined.append(r["refine_seeds"] / maximum)
                worst_r = max(worst_r, r["refine_upper"], r["refine_lower"])
                over_r = max(r["refine_upper"], r["refine_lower"]) > bound
                failed |= over or over_r
                lines.append(
                    f"| {std:g} | {truth:+g}δ | {r['upper']:.4f} | {r['lower']:.4f}{' (above)' if over else ''} "
                    f"| {r['seeds']:.2f} | {r['seeds'] / maximum:.3f} | {r['right']:.3f} | {r['right_fixed']:.3f} "
                    f"| {r['right_3']:.3f} | {r['futile']:.3f} "
                    f"| {r['refine_upper']:.4f} / {r['refine_lower']:.4f}{' (above)' if over_r else ''} "
                    f"| {r['refine_seeds']:.2f} | {r['more_than_delta']:.3f} / {r['more_than_delta_refine']:.3f} / "
                    f"{r['more_than_delta_fixed']:.3f} |"
                )
            by_std = np.mean(shares[-len(TRUTHS) :])
            summary.append(f"M {maximum}, std {std:g}: expected seeds {by_std:.3f} of M")
        lines.append("")
        summary.insert(
            len(summary) - len(STDS),
            f"**M = {maximum}**: wrong decisive words at most {worst:.4f} a side (bound {bound:.4f}); expected seeds "
            f"**{np.mean(shares):.3f}** of M averaged over the {len(shares)} cells; the right-decision rate at most "
            f"{max(gaps):.3f} below {maximum} fixed seeds in any cell. With --refine: wrong words at most "
            f"{worst_r:.4f} a side; expected seeds {np.mean(refined):.3f} of M.",
        )
    q_lines, q_summary, q_failed = quantised_section(q_jobs, results, quantised_paths)
    c_lines, c_summary, c_failed = claims_section(c_jobs, results, claim_paths, claim_verify)
    failed |= q_failed or c_failed
    wall = time.perf_counter() - started
    work = sum(seconds for _, seconds in results.values())  # each scenario's own seconds, summed
    new_work = sum(results[job][1] for job in [*q_jobs, *c_jobs])
    options = [
        ("runs", args.runs),
        ("seed", args.seed),
        ("verify", args.verify),
        ("quantised-paths", quantised_paths),
        ("claim-paths", claim_paths),
        ("claim-verify", claim_verify),
        ("processes", args.processes),
    ]
    command = "OMP_NUM_THREADS=1 python benchmarks/sequential_calibration.py" + "".join(
        f" --{k} {v}" for k, v in options
    )
    command += " --reduced" if args.reduced else ""
    grid = (
        "The grid of paired contrasts left out (--reduced). "
        if args.reduced
        else f"A paired contrast A > B, normal per-seed differences, δ {DELTA:g}; {args.runs:,} paths a cell, the "
        "plan and the fixed designs on the same paths (common random numbers); each look's word checked against "
        f"the project's functions on the first {args.verify:,} paths of every cell. "
    )
    parts = [
        *(["quantised figures"] if q_jobs else []),
        *([f"claims of {claim_sizes(c_jobs)} statements"] if c_jobs else []),
    ]
    then = f"Then {' and '.join(parts)}. " if parts else ""
    section = "\n".join(
        [
            "## The sequential plan (`stsbench.stats.sequential`)",
            "",
            f"{grid}{then}Command `{command}`; "
            f"{wall:.0f} s wall on {args.processes} process{'es' * (args.processes > 1)}: {work:.0f} s of "
            f"scenarios, {new_work:.0f} s of them the quantised figures and the claims. What is counted: the "
            "script's docstring; the rule: docs/uncertainty.md (Seeds until the verdict is decided).",
            "",
            *[f"- {line}" for line in [*summary, *q_summary, *c_summary]],
            "",
            *lines,
            *q_lines,
            *c_lines,
        ]
    )
    print(section)  # noqa: T201
    if args.out:
        existing = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        atomic_write_text(args.out, with_section(existing, section))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
