"""Seeds until the verdict is decided: the sequential plan's looks, constants, words and stopping.

A reproduction that adds seeds and looks again gives each look a new chance of a wrong word (on paired seed paths
from 3 to 20 seeds, a false word at some n on 18-23% of them at fixed-n intervals). The plan here keeps the
error of every look together at 0.025 a side: it looks at n = 3, 4, 5, 6, ⌈0.8M⌉ and M seeds (M the most it
may train) and reads the rule's words (:func:`stsbench.stats.decide.directional`, :func:`~.decide.cell`) off
repeated confidence intervals, m ± c_n·s/√n, whose constants c_n spend the 0.025 over the looks
(Hwang-Shih-DeCani, γ = -5, on t = n/M). The constants are a committed table (``sequential_table.py``,
made by ``benchmarks/sequential_constants.py``); nothing is simulated when a verdict is made. A look's constant
is a t quantile at the level 1 - 2·(1 - F_{t,n-1}(c_n)), so the rule's own interval functions serve at that
level.

What it covers: paired contrasts (every setting on every seed; a setting against a fixed figure) and a published
cell against one run; a claim of m statements judges each at 0.025/m a side (Bonferroni). Futility
(:func:`futile`) stops a paired contrast that the maximum could no longer decide; it never gives a decisive
word, so the guarantee holds with or without it. docs/uncertainty.md says what it guarantees and what it costs.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from stsbench.errors import StsbenchError
from stsbench.stats import decide
from stsbench.stats.seeds import t_cdf, t_ppf
from stsbench.stats.sequential_table import TABLE as _TABLE

TABLE = Path(__file__).resolve().parent / "sequential_table.py"  # the committed constants
DESIGNS = ("paired", "cell")
FUTILITY_SIGMA = 0.8  # σ's optimistic value: the lower end of its one-sided 80% interval from the seeds' s
FUTILITY_CHANCE = 0.15  # below this predictive chance that the maximum's interval excludes 0: futile
FUTILE = f"{decide.INCONCLUSIVE} (more seeds would not decide)"
UNSIZED = (decide.SUPPORTED, decide.REVERSED)  # a direction shown, its size not: --refine goes on
# the claims whose statements the plan judges (where their settings share their seeds); the others by rule 3
COVERED = ("argmax", "ordering", "difference")


@dataclass(frozen=True)
class Plan:
    """The looks of a sequential plan of at most ``maximum`` seeds and each look's constant."""

    maximum: int
    design: str  # paired | cell
    statements: int  # a claim's m statements, each at 0.025/m a side
    looks: tuple[int, ...]
    constants: tuple[float, ...]
    spent: tuple[float, ...]  # the one-sided α spent by each look (for one statement)

    @property
    def rule(self) -> str:
        """Which rule gave the constants: the simulated table, or Bonferroni's bound above it (:func:`bonferroni`)."""
        held = _TABLE["plans"][str(self.maximum)][self.design]
        return "the table" if str(self.statements) in held else "Bonferroni over looks and statements"

    def constant(self, n: int) -> float:
        """The constant of the look at ``n`` seeds."""
        if n not in self.looks:
            raise StsbenchError(
                f"{n} seeds is no look of this plan (looks at {', '.join(map(str, self.looks))})"
            )
        return self.constants[self.looks.index(n)]

    def level(self, n: int) -> float:
        """The two-sided level whose t interval at ``n`` seeds is the look's: 1 - 2·(1 - F_{t,n-1}(c_n))."""
        return 1 - 2 * t_cdf(-self.constant(n), n - 1)

    def next_look(self, n: int) -> int | None:
        """The first look at ``n`` seeds or more (planned seeds off the grid look first there); None past M."""
        return next((k for k in self.looks if k >= n), None)

    def to_dict(self) -> dict[str, Any]:
        """What ``reproduction.json`` records of the plan: its looks, constants, spending and table's digest."""
        out = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
        table = hashlib.sha256(TABLE.read_bytes()).hexdigest()
        return {**out, "spending": _TABLE["spending"], "table": table}


def plan(maximum: int = 10, design: str = "paired", statements: int = 1) -> Plan:
    """The plan for ``maximum`` seeds (10 or 20), ``design`` and a claim of ``statements`` statements.

    The committed table's constants where it holds them (a claim of up to 6), else :func:`bonferroni`'s.
    """
    plans = _TABLE["plans"]
    if str(maximum) not in plans:
        raise StsbenchError(
            f"no sequential constants for at most {maximum} seeds; the table holds {', '.join(plans)} "
            "(benchmarks/sequential_constants.py makes it)"
        )
    entry = plans[str(maximum)]
    if design not in DESIGNS:
        raise StsbenchError(f"unknown sequential design {design!r}; use {' or '.join(DESIGNS)}")
    if statements < 1:
        raise StsbenchError(f"a claim of {statements} statements: it needs one at least")
    found = entry[design].get(str(statements)) or bonferroni(entry["looks"], entry["spent"], statements)
    return Plan(maximum, design, statements, tuple(entry["looks"]), tuple(found), tuple(entry["spent"]))


def round_up(x: float, figures: int = 3) -> float:
    """``x`` rounded up to ``figures`` significant figures (a wider interval, never a narrower one)."""
    scale = 10 ** (figures - 1 - math.floor(math.log10(x)))
    return math.ceil(x * scale - 1e-9) / scale


def bonferroni(looks: Sequence[int], spent: Sequence[float], statements: int) -> tuple[float, ...]:
    """Constants without simulation, for a claim the table does not hold (more statements than it was made for).

    Each look's own t quantile at its spending increment shared by the statements, c_k = t⁻¹(n_k − 1; 1 −
    Δα_k/m): Bonferroni over looks and statements, so never below the simulated constants (equal at the first
    look, a few per cent wider at the last: docs/uncertainty.md).
    """
    steps = np.diff([0.0, *spent])
    return tuple(round_up(t_ppf(1 - a / statements, n - 1)) for n, a in zip(looks, steps, strict=True))


def look(
    a: Mapping[int, float],
    b: Mapping[int, float],
    delta: float,
    at: Plan,
    what: str = "",
    resolution: float = 0.0,
) -> decide.Decision:
    """A > B at the look of ``len(a)`` seeds: the rule's words off the look's interval (the seeds paired).

    ``resolution``: the figures' h, treated as the fixed rule treats it (:func:`stsbench.stats.decide.difference`).
    """
    if set(a) != set(b):
        raise StsbenchError(f"a sequential contrast pairs its seeds: {sorted(a)} against {sorted(b)}")
    iv = decide.difference(a, b, level=at.level(len(a)), resolution=resolution)
    if iv is None:
        return decide.unmeasured(decide.INCONCLUSIVE, what, "no interval", delta)
    return decide.directional(iv, delta, what)


def look_cell(
    values: Sequence[float], published: float, delta: float, at: Plan, what: str = "", resolution: float = 0.0
) -> decide.Decision:
    """Seeds against one published run at the look of ``len(values)`` seeds: reproduced, not, or inconclusive.

    Whether *reproduced* can still be reached is read at the plan's last look (its constant), not at this one's.
    """
    level, last = at.level(len(values)), (at.maximum, at.constant(at.maximum))
    return decide.cell(
        values, published, delta, runs=1, level=level, what=what, resolution=resolution, last=last
    )


def futility_bound(n: int, at: Plan) -> float:
    """g_n: a spread s ≥ g_n·δ at ``n`` seeds leaves *no difference that matters* out of reach at M seeds.

    Even at σ's optimistic value (:data:`FUTILITY_SIGMA`'s lower end), M seeds' interval is wider than ±δ.
    """
    from scipy import stats  # here: a recipe's listing reads the reports, which import this module

    chi = stats.chi2.ppf(FUTILITY_SIGMA, n - 1)
    return math.sqrt(at.maximum) / at.constant(at.maximum) * math.sqrt(chi / (n - 1))


def predictive_chance(m: Any, s: Any, n: int, at: Plan) -> Any:
    """The chance, given the seeds so far (mean ``m``, std ``s``), that the maximum's interval excludes 0.

    Φ((−H − m)/τ) + 1 − Φ((H − m)/τ), H = c_M·s/√M, τ = s·√((M − n)/M² + (M − n)²/(M²n)); numbers or arrays.
    """
    big = at.maximum
    h = at.constant(big) * np.asarray(s, dtype=float) / math.sqrt(big)
    tau = np.asarray(s, dtype=float) * math.sqrt((big - n) / big**2 + (big - n) ** 2 / (big**2 * n))
    from scipy import stats

    with np.errstate(divide="ignore", invalid="ignore"):
        chance = stats.norm.cdf((-h - m) / tau) + stats.norm.sf((h - m) / tau)
    return np.where(tau > 0, chance, (np.abs(m) > h).astype(float))


def futility_looks(at: Plan) -> tuple[int, ...]:
    """The looks futility is checked at: those after the first two and before the last (5, 6, ⌈0.8M⌉)."""
    return at.looks[2:-1]


def _out_of_reach(m: Any, s: Any, n: int, point: Any, at: Plan) -> Any:
    """Whether the maximum's interval would likely not exclude ``point``, at a futility look of a paired plan.

    The predictive chance that it does (:func:`predictive_chance` of m - point) is below :data:`FUTILITY_CHANCE`;
    False at the other looks and for cells. Numbers or arrays.
    """
    if at.design != "paired" or n not in futility_looks(at):
        return np.zeros(np.shape(m), dtype=bool) if np.ndim(m) else False
    found = predictive_chance(np.asarray(m) - np.asarray(point), s, n, at) < FUTILITY_CHANCE
    return found if np.ndim(found) else bool(found)


def futile(m: Any, s: Any, n: int, delta: float, at: Plan) -> Any:
    """Stop an inconclusive paired contrast at ``n`` seeds: more seeds would not decide it (never a cell).

    Both: (i) s ≥ g_n·δ (:func:`futility_bound`), so *no difference that matters* is out of reach; (ii) the
    predictive chance that the maximum's interval excludes 0 is below :data:`FUTILITY_CHANCE`. Numbers or arrays.
    """
    found = _out_of_reach(m, s, n, 0.0, at) & (np.asarray(s) >= futility_bound(n, at) * delta)
    return found if np.ndim(found) else bool(found)


def size_futile(m: Any, s: Any, n: int, shown: Any, delta: float, at: Plan) -> Any:
    """``--refine``: stop a direction shown (``shown`` +1 or -1) whose size more seeds would not show.

    At the futility looks, the predictive chance that the maximum's interval excludes ``shown``·δ is below
    :data:`FUTILITY_CHANCE`. Numbers or arrays.
    """
    return _out_of_reach(m, s, n, np.asarray(shown) * delta, at)


# -- a statement's path over the looks, from its recorded seeds -------------------------------------------------


@dataclass(frozen=True)
class Stopped:
    """Where the plan stopped (or has got to) a statement: the look's n, its decision and how it ended.

    ``how``: ``decided`` (a decisive word), ``futility``, ``size`` (``--refine``: a direction shown whose size
    more seeds would not show), ``maximum`` (undecided at M seeds) or ``open`` (the seeds so far end before a
    decision: the next look needs more).
    """

    n: int
    decision: decide.Decision
    how: str

    @property
    def settled(self) -> bool:
        return self.how != "open"

    def describe(self, at: Plan) -> str:
        """The note a verdict carries: the look it was read at and how the plan ended there."""
        if self.how == "open":
            ahead = at.next_look(self.n + 1)
            return f"sequential: open at {self.n} seeds (at most {at.maximum}), the next look at {ahead}"
        how = {
            "decided": "decided",
            "futility": "stopped by futility",
            "size": "stopped: more seeds would not show its size",
            "maximum": "at the maximum",
        }[self.how]
        return f"sequential: the look at {self.n} seeds (at most {at.maximum}), {how}"


def _walk(seeds: Sequence[int], at: Plan, judge: Any, spread: Any, refine: bool = False) -> Stopped:
    """Each look the seeds reach, in seed order, until a decisive word or futility (the plan's stopping).

    ``refine``: *supported* and *reversed* go on until the size is shown (by more or less than δ) or
    :func:`size_futile`; a later look that shows no direction keeps the last one shown (every look's interval
    covers the truth together).
    """
    reached, shown = None, None
    for n in at.looks:
        if n > len(seeds):
            break
        d = replace(judge(seeds[:n], n), look=n)  # its interval the look's repeated one
        d = shown if shown is not None and d.outcome == decide.INCONCLUSIVE else d
        going = refine and d.outcome in UNSIZED
        if d.outcome != decide.INCONCLUSIVE and not going:
            return Stopped(n, d, "decided")
        m, s = spread(seeds[:n])
        shown = d if going else None
        sign = 1 if d.outcome == decide.SUPPORTED else -1
        if going and size_futile(m, s, n, sign, d.delta or 0.0, at):
            return Stopped(n, d, "size")
        if not going and futile(m, s, n, d.delta or 0.0, at):
            return Stopped(n, replace(d, outcome=FUTILE), "futility")
        reached = Stopped(n, d, "maximum" if n == at.maximum else "open")
    if reached is None:  # fewer seeds than the first look
        first = decide.unmeasured(decide.INCONCLUSIVE, note=f"the first look is at {at.looks[0]}")
        return Stopped(len(seeds), first, "open")
    return reached


def path(
    a: Mapping[int, float],
    b: Mapping[int, float],
    delta: float,
    at: Plan,
    what: str = "",
    refine: bool = False,
    resolution: float = 0.0,
) -> Stopped:
    """A > B judged as the plan would have, from the seeds recorded (their shared seeds, smallest ids first).

    A look's verdict uses only its first n seeds, so a statement stopped at n keeps its word whatever seeds were
    added later for other statements. ``refine``: :func:`_walk`'s; ``resolution``: :func:`look`'s.
    """
    seeds = sorted(set(a) & set(b))

    def judge(use: Sequence[int], n: int) -> decide.Decision:
        return look({k: a[k] for k in use}, {k: b[k] for k in use}, delta, at, what, resolution)

    def spread(use: Sequence[int]) -> tuple[float, float]:
        x = np.array([a[k] - b[k] for k in use])
        return float(x.mean()), float(x.std(ddof=1))

    return _walk(seeds, at, judge, spread, refine)


def path_cell(
    values: Mapping[int, float],
    published: float,
    delta: float,
    at: Plan,
    what: str = "",
    resolution: float = 0.0,
) -> Stopped:
    """Seeds (``{seed: figure}``) against one published run, judged as the plan would have (no futility)."""
    seeds = sorted(values)

    def judge(use: Sequence[int], n: int) -> decide.Decision:
        return look_cell([values[k] for k in use], published, delta, at, what, resolution)

    return _walk(seeds, at, judge, lambda use: (0.0, 0.0))


# -- the plan simulated: its words vectorised, the forecast ---------------------------------------------------

WORDS = (*decide.VERDICTS, FUTILE, decide.REPRODUCED, decide.NOT_REPRODUCED)  # :func:`simulate`'s codes


def words(low: np.ndarray, high: np.ndarray, delta: float) -> np.ndarray:
    """:func:`stsbench.stats.decide.directional`'s word for each interval (low, high), as its index in WORDS."""
    code = {w: i for i, w in enumerate(WORDS)}
    d, out = delta, np.full(np.shape(low), code[decide.INCONCLUSIVE])
    rules = [  # directional's regions, first match wins
        (low > d, decide.SUPPORTED_MORE),
        ((low > 0) & (high >= d), decide.SUPPORTED),
        (low > 0, decide.SUPPORTED_LESS),
        (high < -d, decide.REVERSED_MORE),
        ((high < 0) & (low <= -d), decide.REVERSED),
        (high < 0, decide.REVERSED_LESS),
        ((low > -d) & (high < d), decide.NO_DIFFERENCE),
    ]
    for mask, word in reversed(rules):
        out[mask] = code[word]
    return out


def simulate(x: np.ndarray, delta: float, at: Plan, refine: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The plan on paths ``x`` (paths, M): each path's stopping n and word code (:data:`WORDS`).

    ``x``: per-seed differences (a paired plan), or seeds minus the published figure (a cell plan, its interval
    m ± c_n·s·√(1/n + 1): the published run's own noise, as :func:`stsbench.stats.decide.cell`); ``refine``:
    :func:`_walk`'s.
    """
    total, squares = np.cumsum(x, axis=1), np.cumsum(x**2, axis=1)
    final, shown = np.full(len(x), -1), np.full(len(x), -1)
    stop = np.full(len(x), at.maximum)
    inconclusive, unsized = WORDS.index(decide.INCONCLUSIVE), [WORDS.index(w) for w in UNSIZED]
    for n in at.looks:
        m = total[:, n - 1] / n
        s = np.sqrt(np.maximum(squares[:, n - 1] - n * m**2, 0) / (n - 1))
        half = at.constant(n) * s * math.sqrt(1 / n + (at.design == "cell"))
        low, high = m - half, m + half
        if at.design == "cell":  # decide.reproduction's regions
            codes = np.full(len(x), inconclusive)
            codes[(low > delta) | (high < -delta)] = WORDS.index(decide.NOT_REPRODUCED)
            codes[(low > -delta) & (high < delta)] = WORDS.index(decide.REPRODUCED)
        else:
            codes = words(low, high, delta)
        codes = np.where((codes == inconclusive) & (shown >= 0), shown, codes)
        going = np.isin(codes, unsized) if refine else np.zeros(len(x), dtype=bool)
        shown = np.where(going, codes, -1)
        open_ = final < 0
        now = open_ & (((codes != inconclusive) & ~going) | (n == at.maximum))
        sign = np.where(codes == unsized[0], 1, -1)
        late = np.where(going, size_futile(m, s, n, sign, delta, at), futile(m, s, n, delta, at))
        stopped = open_ & ~now & late
        codes = np.where(stopped & ~going, WORDS.index(FUTILE), codes)
        now |= stopped
        final, stop = np.where(now, codes, final), np.where(now, n, stop)
    return stop, final


def expected_seeds(
    diff: float,
    spread: float,
    delta: float,
    at: Plan,
    paths: int = 20_000,
    seed: int = 0,
    refine: bool = False,
) -> float:
    """The seeds the plan is expected to train: a forecast, by a fixed-seed simulation (:func:`simulate`).

    ``diff`` and ``spread``: the per-seed differences' mean and std, or a cell's seeds' m - P and std (an earlier
    edition's, or the planned seeds'); a cell's forecast holds the published figure as it is.
    """
    rng = np.random.default_rng(seed)
    stop, _ = simulate(rng.normal(diff, spread, (paths, at.maximum)), delta, at, refine)
    return float(stop.mean())
