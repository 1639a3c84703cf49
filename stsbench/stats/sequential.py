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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scipy import stats

from stsbench.errors import StsbenchError
from stsbench.stats import decide
from stsbench.stats.seeds import t_cdf
from stsbench.stats.sequential_table import TABLE as _TABLE

TABLE = Path(__file__).resolve().parent / "sequential_table.py"  # the committed constants
DESIGNS = ("paired", "cell")
FUTILITY_SIGMA = 0.8  # σ's optimistic value: the lower end of its one-sided 80% interval from the seeds' s
FUTILITY_CHANCE = 0.15  # below this predictive chance that the maximum's interval excludes 0: futile
FUTILE = f"{decide.INCONCLUSIVE} (more seeds would not decide)"


@dataclass(frozen=True)
class Plan:
    """The looks of a sequential plan of at most ``maximum`` seeds and each look's constant."""

    maximum: int
    design: str  # paired | cell
    statements: int  # a claim's m statements, each at 0.025/m a side
    looks: tuple[int, ...]
    constants: tuple[float, ...]
    spent: tuple[float, ...]  # the one-sided α spent by each look (for one statement)

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
        spending = _TABLE["spending"]
        return {
            "maximum": self.maximum,
            "design": self.design,
            "statements": self.statements,
            "looks": list(self.looks),
            "constants": list(self.constants),
            "spent": list(self.spent),
            "spending": spending,
            "table": hashlib.sha256(TABLE.read_bytes()).hexdigest(),
        }


def plan(maximum: int = 10, design: str = "paired", statements: int = 1) -> Plan:
    """The committed plan for ``maximum`` seeds (10 or 20), ``design`` and a claim of ``statements`` statements."""
    plans = _TABLE["plans"]
    if str(maximum) not in plans:
        raise StsbenchError(
            f"no sequential constants for at most {maximum} seeds; the table holds {', '.join(plans)} "
            "(benchmarks/sequential_constants.py makes it)"
        )
    entry = plans[str(maximum)]
    if design not in DESIGNS:
        raise StsbenchError(f"unknown sequential design {design!r}; use {' or '.join(DESIGNS)}")
    found = entry[design].get(str(statements))
    if found is None:
        raise StsbenchError(
            f"no sequential constants for a {design} claim of {statements} statements; the table holds "
            f"{', '.join(entry[design])}"
        )
    return Plan(maximum, design, statements, tuple(entry["looks"]), tuple(found), tuple(entry["spent"]))


def look(
    a: Mapping[int, float], b: Mapping[int, float], delta: float, at: Plan, what: str = ""
) -> decide.Decision:
    """A > B at the look of ``len(a)`` seeds: the rule's words off the look's interval (the seeds paired)."""
    n = len(a)
    if set(a) != set(b):
        raise StsbenchError(f"a sequential contrast pairs its seeds: {sorted(a)} against {sorted(b)}")
    iv = decide.difference(a, b, level=at.level(n))
    if iv is None:
        return decide.unmeasured(decide.INCONCLUSIVE, what, "no interval", delta)
    return decide.directional(iv, delta, what)


def look_cell(
    values: Sequence[float], published: float, delta: float, at: Plan, what: str = ""
) -> decide.Decision:
    """Seeds against one published run at the look of ``len(values)`` seeds: reproduced, not, or inconclusive."""
    return decide.cell(values, published, delta, runs=1, level=at.level(len(values)), what=what)


def futility_bound(n: int, at: Plan) -> float:
    """g_n: a spread s ≥ g_n·δ at ``n`` seeds leaves *no difference that matters* out of reach at M seeds.

    Even at σ's optimistic value (:data:`FUTILITY_SIGMA`'s lower end), M seeds' interval is wider than ±δ.
    """
    chi = stats.chi2.ppf(FUTILITY_SIGMA, n - 1)
    return math.sqrt(at.maximum) / at.constant(at.maximum) * math.sqrt(chi / (n - 1))


def predictive_chance(m: float, s: float, n: int, at: Plan) -> float:
    """The chance, given the seeds so far (mean ``m``, std ``s``), that the maximum's interval excludes 0."""
    big = at.maximum
    h = at.constant(big) * s / math.sqrt(big)
    tau = s * math.sqrt((big - n) / big**2 + (big - n) ** 2 / (big**2 * n))
    if tau == 0:
        return float(abs(m) > h)
    return float(stats.norm.cdf((-h - m) / tau) + stats.norm.sf((h - m) / tau))


def futility_looks(at: Plan) -> tuple[int, ...]:
    """The looks futility is checked at: those after the first two and before the last (5, 6, ⌈0.8M⌉)."""
    return at.looks[2:-1]


def futile(m: float, s: float, n: int, delta: float, at: Plan) -> bool:
    """Stop an inconclusive paired contrast at ``n`` seeds: more seeds would not decide it (never a cell).

    Both: (i) s ≥ g_n·δ (:func:`futility_bound`), so *no difference that matters* is out of reach; (ii) the
    predictive chance that the maximum's interval excludes 0 is below :data:`FUTILITY_CHANCE`.
    """
    if at.design != "paired" or n not in futility_looks(at):
        return False
    return s >= futility_bound(n, at) * delta and predictive_chance(m, s, n, at) < FUTILITY_CHANCE
