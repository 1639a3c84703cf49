"""The verdict rule on contrasts that reuse a setting, best-of-K, few shared seeds and one vocabulary.

Each case is measured on the rule's own functions.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from stsbench.published.check import verdict
from stsbench.stats import decide


def _misses(draw, n: int, truth: float = 0.0) -> tuple[float, float]:
    """Per side: how often the interval lies above / below ``truth`` over ``n`` draws."""
    above = below = 0
    for _ in range(n):
        iv = draw()
        above += iv.low > truth
        below += iv.high < truth
    return above / n, below / n


BOUND = 0.025 + 3 * math.sqrt(0.025 * 0.975 / 4000)  # nominal + 3 SE at 4,000 draws


@pytest.mark.parametrize("c_seeds", [range(1, 5), range(6, 11)], ids=["C on 1-4", "C on 6-10"])
def test_a_gap_that_reuses_a_setting_is_one_contrast(c_seeds):
    """(A - B) > (B - C), A and B on seeds 1-5, all N(80, 1): was 0.043-0.055 a side, combined as independent."""
    rng = np.random.default_rng(3)

    def draw():
        a = {q: rng.normal(80, 1) for q in range(1, 6)}
        b = {q: rng.normal(80, 1) for q in range(1, 6)}
        return decide.gap([a, b, b, {q: rng.normal(80, 1) for q in c_seeds}])

    assert max(_misses(draw, 4000)) <= BOUND
    a, b, c = ({q: 80.0 + q * k for q in range(1, 6)} for k in (0.1, 0.3, 0.2))
    iv = decide.gap([a, b, b, c])  # every setting on every seed: the contrast A - 2B + C per seed, exact here
    assert iv.design == decide.PAIRED and iv.diff == pytest.approx(
        np.mean([a[q] - 2 * b[q] + c[q] for q in a])
    )


@pytest.mark.parametrize(("k", "truth"), [(5, 0.0), (10, 0.0), (5, -0.9), (10, -0.9)])
def test_a_best_of_k_cell_misses_the_truth_at_most_its_share_a_side(k, truth):
    """n = 3 against the best of K: was 0.053 (K 5) and 0.067 (K 10) above the truth at the one-run width."""
    rng = np.random.default_rng(k)

    def draw():
        x = rng.normal(80 + truth, 1, 3)
        return decide.cell(x, float(rng.normal(80, 1, k).max()), best_of=k).interval

    assert max(_misses(draw, 4000, truth)) <= BOUND


def test_the_best_of_k_interval_is_the_tables_quantiles():
    x = [80.0, 81.0, 80.5]
    q_lo, q_hi = decide.best_of_quantiles(3, 5)
    dec = decide.cell(x, 82.0, best_of=5)
    s, m = float(np.std(x, ddof=1)), float(np.mean(x))
    assert (dec.low, dec.high) == (pytest.approx(m - 82 - s * q_hi), pytest.approx(m - 82 - s * q_lo))
    assert decide.best_of_quantiles(3, 21) is None
    assert decide.cell(x, 82.0, best_of=21).outcome == decide.INCONCLUSIVE


@pytest.mark.parametrize("shared", [1, 2])
def test_one_or_two_shared_seeds_at_rho_minus_half(shared):
    """Welch ignored their correlation: 0.030-0.033 a side at ρ -0.5; bounded at ρ = -1 now."""
    rng = np.random.default_rng(shared)
    cov = [[1.0, -0.5], [-0.5, 1.0]]

    def draw():
        both = rng.multivariate_normal([80, 80], cov, size=shared)
        a = {q: both[q, 0] for q in range(shared)} | {10 + q: rng.normal(80, 1) for q in range(5 - shared)}
        b = {q: both[q, 1] for q in range(shared)} | {20 + q: rng.normal(80, 1) for q in range(5 - shared)}
        return decide.difference(a, b)

    assert max(_misses(draw, 4000)) <= BOUND


def test_a_cells_low_and_high_are_its_decisions_interval_everywhere():
    """Ten seeds against 78.0 of one run printed [-0.32, +0.32] (the mean's) beside a verdict on [-1.06, +1.06]."""
    x = list(78.0 + np.array([-0.5, 0.5] * 5) * 0.94)
    v = verdict("STSBenchmark", 78.0, x)
    assert v.low == v.decision.low and v.high == v.decision.high and v.high - v.low > 2
    out = v.to_dict()
    assert (out["low"], out["high"]) == (v.decision.low, v.decision.high)
    assert out["mean_high"] - out["mean_low"] < 1 and out["rule"] == decide.RULE_VERSION == 5


def test_cannot_be_reached_uses_the_limit_as_seeds_grow():
    """Three seeds of spread 0.3 got the note though twenty of that spread are reproduced."""
    few = decide.cell([78.0, 78.3, 77.7], 78.0)
    many = decide.cell(list(78.0 + 0.3 * stats.norm.ppf(np.linspace(0.05, 0.95, 20)) / 0.93), 78.0)
    assert "cannot be reached" not in (few.note or "") and many.outcome == decide.REPRODUCED
    wide = decide.cell([78.0, 79.0, 77.0], 78.0)  # s = 1: z·s·√(1/1) = 1.96 ≥ δ
    assert "cannot be reached" in wide.note and "±1.96" in wide.note


def test_p_best_is_the_statements_estimator():
    """TREC 91.0 x3 against 90.8 x3 (h 0.2) drew P(best) 1.000 beside *no difference that matters*."""
    a, b = {1: 91.0, 2: 91.0, 3: 91.0}, {1: 90.8, 2: 90.8, 3: 90.8}
    best = decide.best_probability({"a": a, "b": b}, ["a", "b"], resolution=0.2)
    iv = decide.difference(a, b, resolution=0.2)
    assert best["a"] == pytest.approx(stats.t.cdf(iv.diff / iv.se, iv.df), abs=0.005) and best["a"] < 0.99
    rng = np.random.default_rng(4)  # partly shared seeds: the statement's r·S1·S2 covariance
    a = {q: rng.normal(80, 1) for q in range(1, 6)}
    b = {q: rng.normal(80.8, 1) for q in range(3, 9)}
    iv = decide.difference(a, b)
    best = decide.best_probability({"a": a, "b": b}, ["a", "b"], draws=200_000)
    assert best["b"] == pytest.approx(1 - stats.t.cdf(iv.diff / iv.se, iv.df), abs=0.005)


def _dec(word: str, margin: float | None, what: str = "s") -> decide.Decision:
    return decide.Decision(word, margin=margin, what=what)


def test_combine_is_symmetric_and_carries_no_negative_margin_where_all_are_decided():
    sup = decide.combine([_dec(decide.SUPPORTED_MORE, 0.2, "a"), _dec(decide.SUPPORTED_LESS, 0.1, "b")])
    rev = decide.combine([_dec(decide.REVERSED, 0.2, "a"), _dec(decide.REVERSED_LESS, 0.1, "b")])
    assert sup == (decide.SUPPORTED, 0.1, "by more than δ: a; by less than δ: b")
    assert rev == (decide.REVERSED, 0.1, "by less than δ: b")
    mixed = decide.combine([_dec(decide.SUPPORTED, 0.2), _dec(decide.NO_DIFFERENCE, 0.1)])
    assert mixed == (decide.INCONCLUSIVE, None, None)
    open_ = decide.combine(
        [_dec(decide.SUPPORTED, 0.2), _dec(decide.INCONCLUSIVE, -0.3), _dec(decide.INCONCLUSIVE, -0.1)]
    )
    assert open_ == (decide.INCONCLUSIVE, -0.1, None)
    assert (
        decide.combine([_dec(decide.REVERSED_MORE, 0.4), _dec(decide.SUPPORTED, 0.1)])[0]
        == decide.CONTRADICTED
    )


def test_one_interval_one_word_in_claims_and_difference_tables():
    """+0.38 [-0.22, +0.97] read *inconclusive* under Claims and *undecided* under Seeds."""
    iv = decide.Interval(0.38, 0.25, 4, -0.22, 0.97, decide.PAIRED, (5, 5), 5)
    assert decide.directional(iv, 0.5).outcome == decide.two_sided(iv, 0.5).outcome == decide.INCONCLUSIVE
    none = decide.Interval(0.01, 0.05, 4, -0.1, 0.12, decide.PAIRED, (5, 5), 5)
    assert (
        decide.directional(none, 0.5).outcome == decide.two_sided(none, 0.5).outcome == decide.NO_DIFFERENCE
    )


def test_a_difference_that_matters_needs_holm_in_its_word():
    """*a difference that matters* stood beside a Holm p of 0.138."""
    near = decide.two_sided(decide.Interval(0.75, 0.1, 4, 0.53, 0.97, decide.PAIRED, (5, 5), 5), 0.5)
    fam = decide.family(
        [
            near,
            *[decide.two_sided(decide.Interval(0.0, 0.1, 4, -0.2, 0.2, decide.PAIRED, (5, 5), 5), 0.5)] * 7,
        ]
    )
    assert near.outcome == decide.MATTERS and fam[0].p_holm >= 0.05
    assert (
        fam[0].outcome == decide.INCONCLUSIVE
        and "not after Holm" in fam[0].note
        and not decide.marked(fam[0])
    )


@pytest.mark.parametrize(
    ("x", "delta", "text"),
    [
        (0.004, 0.5, "0.00"),
        (-0.004, 0.5, "0.00"),
        (0.38, 1.0, "+0.4"),
        (-0.0123, 0.05, "-0.012"),
        (0.5, 0.5, "+0.50"),
    ],
)
def test_figures_print_at_deltas_decimals_and_a_rounded_zero_unsigned(x, delta, text):
    assert decide.signed(x, delta) == text


def test_two_seeds_are_at_most_inconclusive_whatever_the_spread():
    """The few-seeds cap: removed, two seeds ten points apart would read *supported, by more than δ*."""
    a, b = {1: 80.0, 2: 80.1}, {1: 70.0, 2: 70.2}
    dec = decide.directional(decide.difference(a, b), 0.5)
    assert dec.outcome == decide.INCONCLUSIVE and dec.nearest == decide.SUPPORTED_MORE
    assert decide.cell([80.0, 80.1], 70.0).outcome == decide.INCONCLUSIVE


def _grubbs_low(n: int, alpha: float = decide.ALPHA) -> float:
    """The one-sided (low) Grubbs critical value at ``n`` seeds, from scipy's t: the departing test's first step."""
    t = stats.t.ppf(1 - alpha / n, n - 2)
    return (n - 1) / math.sqrt(n) * math.sqrt(t * t / (n - 2 + t * t))


def test_a_departing_seed_caps_a_cell_only_where_it_changes_its_word():
    """Nine seeds about 80 and one 2.5 points below. Against the bulk's exact figure the seeds read *reproduced*
    with and without it: the word stands, the note names the seed. Against 78.7 the bulk alone is *not
    reproduced* and all ten are not: the cell is capped (:attr:`Decision.cap`), the seed's figure kept."""
    bulk = [80.1, 80.3, 79.9, 80.2, 80.0, 80.1, 80.2, 80.0, 80.3]
    assert decide.departing(np.array(bulk + [77.5])) == [9]
    dec = decide.cell(bulk + [77.5], 80.0, runs=math.inf)
    assert dec.outcome == decide.REPRODUCED and dec.cap is None and dec.departing == (77.5,)
    assert "1 of 10 seeds far below the others (77.50; one-sided generalized ESD at 0.05), the same word" in dec.note
    assert decide.cell(bulk, 78.7, runs=math.inf).outcome == decide.NOT_REPRODUCED
    dec = decide.cell(bulk + [77.5], 78.7, runs=math.inf)
    assert dec.outcome == decide.INCONCLUSIVE and dec.cap == decide.CAP_DEPARTING
    assert "without them: not reproduced: at most inconclusive" in dec.note
    assert dec.to_dict()["cap"] == decide.CAP_DEPARTING and dec.to_dict()["departing"] == (77.5,)
    assert decide.cell(bulk + [79.8], 80.0, runs=math.inf).outcome == decide.REPRODUCED
    assert decide.departing(np.array(bulk + [82.5])) == []  # one-sided: a run departs by training badly


def test_three_seeds_equal_but_for_float_noise_reproduce_a_figure_they_print():
    """Three MiniLM seeds trained 2 steps at lr 1e-9 print 78.98945 for STS16 (MTEB publishes 78.99): the third's
    1e-6 below the others is flagged by the test, but judged without it the word is the same, so not capped."""
    x = [78.98945, 78.98945, 78.989449]
    assert decide.departing(np.array(x)) == [2]
    dec = decide.cell(x, 78.99, what="STS16")
    assert dec.outcome == decide.REPRODUCED and dec.cap is None, dec.note


def test_departing_seeds_are_rosners_generalized_esd_one_sided():
    """Step one is Grubbs' one-sided test: a set just past its critical value departs, one just short does not;
    two departures that mask each other for Grubbs are both found (ESD takes them off one at a time)."""
    rest, crit = np.array([-1.0, 1.0] * 3 + [0.0]), _grubbs_low(8)  # seven seeds; the eighth placed below

    def grubbs(lo: float) -> float:
        x = np.append(rest, lo)
        return (x.mean() - lo) / x.std(ddof=1)

    for g, departs in ((crit * 1.001, True), (crit * 0.999, False)):
        x = np.append(rest, optimize.brentq(lambda lo, g=g: grubbs(lo) - g, -50.0, -1.0, xtol=1e-12))
        assert (x.mean() - x.min()) / x.std(ddof=1) == pytest.approx(g, rel=1e-6)
        assert decide.departing(x) == ([7] if departs else [])
    masked = np.array([80.0, 80.2, 79.9, 80.1, 80.3, 80.0, 80.1, 79.9, 77.0, 77.1])
    assert (masked.mean() - masked.min()) / masked.std(ddof=1) < _grubbs_low(10)  # Grubbs alone misses both
    assert decide.departing(masked) == [8, 9]


def test_a_tie_one_resolution_step_above_a_figure_is_no_departure():
    """Three TREC accuracies 91.0, 91.0, 90.8 (h 0.2): without the resolution's term Grubbs' statistic sits at its
    largest possible value; with it (as the interval's variance) nothing departs, and the cell is not capped."""
    x = np.array([91.0, 91.0, 90.8])
    assert decide.departing(x) == [2] and decide.departing(x, 0.2) == []
    assert "far below" not in (decide.cell(x, 90.9, runs=math.inf, resolution=0.2).note or "")


def test_the_departing_check_caps_about_its_level_of_normal_cells():
    """Its price: under a normal law it flags about 5-8% of sets (docs/uncertainty.md), never every set."""
    rng = np.random.default_rng(11)
    for n, low, high in ((3, 0.035, 0.065), (10, 0.065, 0.105)):
        rate = np.mean([bool(decide.departing(rng.standard_normal(n))) for _ in range(4000)])
        assert low < rate < high, (n, rate)


def test_checks_line_says_a_capped_cell_holds_a_seed_far_below_the_others():
    """A cell capped by a departing seed: the check's line names the seed and its figure and what to do, not an
    interval "reaching across ±δ"; a cell open for its interval names that interval and its level."""
    from pathlib import Path

    from stsbench.published.check import SeedComparison, SeedRow
    from stsbench.published.registry import get_entry

    entry = get_entry("esimcse-arxiv/table5/unsup-simcse-bert-base")
    p = entry.task_values["STSBenchmark"]
    bulk = [p + 1.5 + d for d in (0.1, 0.3, -0.1, 0.2, 0.0, 0.1, 0.2, 0.0, 0.3)]
    row = SeedRow("STSBenchmark", p, {"values": bulk + [p - 1.0], "raw": bulk + [p - 1.0]}, runs=math.inf)
    assert row.verdict.status == decide.INCONCLUSIVE and row.verdict.decision.cap == decide.CAP_DEPARTING
    line = SeedComparison(entry, Path("seeds.json"), {"seeds": list(range(1, 11))}, (row,)).summary()
    assert line.startswith(f"STSBenchmark inconclusive over 10 seeds: seed 10 ({p - 1.0:.2f}) far below the others")
    assert "look at that run's training log" in line and "reaches" not in line
    wide = SeedRow("STSBenchmark", p, {"values": [p, p + 1.0, p + 2.0], "raw": [p, p + 1.0, p + 2.0]}, runs=math.inf)
    line = SeedComparison(entry, Path("seeds.json"), {"seeds": [1, 2, 3]}, (wide,)).summary()
    assert "its 95% interval of the difference from the published figure [" in line
    assert "reaches across ±1.00 points: train more seeds" in line
