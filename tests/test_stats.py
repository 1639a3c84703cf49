"""stsbench.stats against scipy on materialised resamples, hand computations, and simulated coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from stsbench.errors import StsbenchError
from stsbench.stats.accuracy import binomial_interval, fold_interval
from stsbench.stats.bootstrap import (
    AVG,
    PairSet,
    bootstrap_figures,
    bootstrap_spearman,
    paired_bootstrap,
    percentile_interval,
    resample_counts,
)
from stsbench.stats.tests import holm, holm_over_tasks, min_detectable_difference, williams


def _pairs(task: str, n: int, rng: np.random.Generator, noise: float = 1.0, strata: int = 3) -> PairSet:
    gold = np.round(rng.uniform(0, 5, n), 1)  # ties in gold, as the STS files have
    return PairSet(
        task, gold + noise * rng.normal(size=n), gold, np.repeat(np.arange(strata), n // strata + 1)[:n]
    )


# --- bootstrap: the weighted ranks are scipy's ranks of the materialised resample ---------------------------


@pytest.mark.parametrize("ties", ["both", "gold only", "none"])
def test_bootstrap_spearman_equals_scipy_on_the_materialised_resample(ties):
    rng = np.random.default_rng(7)
    n = 60
    x, y = rng.normal(size=n), rng.normal(size=n)
    if ties != "none":
        y = np.round(y, 0)
    if ties == "both":
        x = np.round(x * 2, 0) / 2
    strata = rng.integers(0, 4, n)  # interleaved strata: the fancy-index path of resample_counts
    counts = resample_counts(strata, 40, rng)
    got = bootstrap_spearman(x, y, counts)
    want = [stats.spearmanr(np.repeat(x, w), np.repeat(y, w))[0] for w in counts]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_bootstrap_spearman_of_a_constant_resample_is_nan_as_scipy():
    x, y = np.array([1.0, 2.0, 3.0, 4.0]), np.array([4.0, 1.0, 3.0, 2.0])
    counts = np.array([[4, 0, 0, 0], [1, 1, 1, 1]])
    got = bootstrap_spearman(x, y, counts)
    assert math.isnan(got[0]) and got[1] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-15)
    with pytest.raises(StsbenchError, match="undefined"):
        percentile_interval(got)


def test_counts_keep_each_stratum_size_and_are_seeded():
    strata = np.array([0] * 5 + [1] * 7 + [2] * 3 + [0] * 4)  # stratum 0 in two runs
    a = resample_counts(strata, 57, np.random.default_rng(3))
    for code in (0, 1, 2):
        assert (a[:, strata == code].sum(axis=1) == (strata == code).sum()).all()
    assert a.shape == (57, 19) and a.min() >= 0
    np.testing.assert_array_equal(a, resample_counts(strata, 57, np.random.default_rng(3)))
    # blocks of replicates: the first rows do not depend on B
    np.testing.assert_array_equal(a[:40], resample_counts(strata, 40, np.random.default_rng(3)))
    assert not np.array_equal(a, resample_counts(strata, 57, np.random.default_rng(4)))
    # a resample draws each pair with probability 1/size: counts average 1
    big = resample_counts(np.zeros(50, int), 4000, np.random.default_rng(0))
    assert abs(big.mean(axis=0) - 1).max() < 0.06
    with pytest.raises(StsbenchError, match=">= 1"):
        resample_counts(strata, 0, np.random.default_rng(0))


def test_bootstrap_figures_avg_is_the_task_mean_per_replicate_and_seeded():
    rng = np.random.default_rng(1)
    sets = [_pairs("STS12", 300, rng), _pairs("STSBenchmark", 200, rng, noise=2.0, strata=1)]
    reps = bootstrap_figures(sets, 200, seed=1111)
    assert list(reps) == ["STS12", "STSBenchmark", AVG]
    np.testing.assert_array_equal(reps[AVG], (reps["STS12"] + reps["STSBenchmark"]) / 2)
    again = bootstrap_figures(sets, 200, seed=1111)
    assert all(np.array_equal(reps[k], again[k]) for k in reps)
    # a task's replicates are the same alone or beside others (seeded per task), and move with the seed
    np.testing.assert_array_equal(
        bootstrap_figures(sets[1:], 200, seed=1111)["STSBenchmark"], reps["STSBenchmark"]
    )
    assert not np.array_equal(bootstrap_figures(sets, 200, seed=1)["STS12"], reps["STS12"])
    # replicates scatter around the figure
    for s in sets:
        low, high = percentile_interval(reps[s.task])
        assert low < s.figure() < high
        assert s.figure() == pytest.approx(stats.spearmanr(s.cosine, s.gold)[0], abs=1e-15)


def test_percentile_interval_takes_the_quantiles():
    assert percentile_interval(np.arange(1001.0)) == pytest.approx((25.0, 975.0), abs=1e-12)
    assert percentile_interval(np.arange(101.0), level=0.9) == pytest.approx((5.0, 95.0))
    with pytest.raises(StsbenchError, match="level"):
        percentile_interval(np.arange(10.0), level=95)


def test_percentile_interval_is_np_quantile_bit_for_bit():
    """The quantiles are written out (np.quantile's first call imports numpy.ma): equal to numpy's, not close."""
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 7, 40, 999, 1000, 1001):
        for values in (rng.normal(size=n), rng.integers(0, 4, size=n).astype(float), rng.uniform(60, 90, n)):
            for level in (0.5, 0.8, 0.9, 0.95, 0.99, 0.999):
                want = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
                got = percentile_interval(values, level)
                assert got == (want[0], want[1]) and all(type(x) is float for x in got), (n, level)


def test_paired_bootstrap_of_a_set_against_itself_is_zero_with_p_one():
    rng = np.random.default_rng(2)
    sets = [_pairs("STS13", 150, rng), _pairs("SICKRelatedness", 120, rng, strata=1)]
    out = paired_bootstrap(sets, sets, B=300, seed=5)
    assert list(out) == ["STS13", "SICKRelatedness", AVG]
    for d in out.values():
        assert (d.diff, d.low, d.high, d.p, d.se) == (0.0, 0.0, 0.0, 1.0, 0.0)
    assert out[AVG].n == 270 and out["STS13"].n == 150


def test_paired_bootstrap_is_a_minus_b_and_detects_a_clear_difference():
    rng = np.random.default_rng(4)
    good = _pairs("STS14", 400, rng, noise=0.5)
    bad = PairSet("STS14", good.gold + 3.0 * rng.normal(size=400), good.gold, good.strata)
    d = paired_bootstrap([good], [bad], B=500, seed=1)["STS14"]
    assert d.diff == pytest.approx(good.figure() - bad.figure(), abs=1e-15) and d.diff > 0.2
    assert 0 < d.low < d.diff < d.high and d.p == pytest.approx(2 / 501) and d.se > 0
    flipped = paired_bootstrap([bad], [good], B=500, seed=1)["STS14"]
    assert flipped.diff == -d.diff and flipped.low == pytest.approx(-d.high) and flipped.p == d.p


def test_paired_bootstrap_refuses_different_pairs():
    rng = np.random.default_rng(0)
    a = _pairs("STS15", 90, rng)
    other_gold = PairSet("STS15", a.cosine, a.gold[::-1], a.strata)
    with pytest.raises(StsbenchError, match="different pairs"):
        paired_bootstrap([a], [other_gold], B=10, seed=0)
    with pytest.raises(StsbenchError, match="different tasks"):
        paired_bootstrap([a], [PairSet("STS16", a.cosine, a.gold, a.strata)], B=10, seed=0)
    moved = PairSet("STS15", a.cosine, a.gold, a.strata, index=np.arange(90)[::-1])
    with pytest.raises(StsbenchError, match="different pairs"):
        paired_bootstrap(
            [PairSet("STS15", a.cosine, a.gold, a.strata, index=np.arange(90))], [moved], B=10, seed=0
        )


def test_pairset_refuses_malformed_arrays():
    with pytest.raises(StsbenchError, match="one length"):
        PairSet("STS12", np.zeros(3), np.zeros(4), np.zeros(3, int))
    with pytest.raises(StsbenchError, match="NaN"):
        PairSet("STS12", np.array([0.1, np.nan, 0.3]), np.zeros(3), np.zeros(3, int))
    with pytest.raises(StsbenchError, match="integer"):
        PairSet("STS12", np.zeros(3), np.zeros(3), np.zeros(3))
    with pytest.raises(StsbenchError, match="distinct"):
        bootstrap_figures([PairSet("x", np.arange(3.0), np.arange(3.0), np.zeros(3, int))] * 2, 5, 0)


# --- Williams, Holm, power, Wilson, folds ------------------------------------------------------------------


def _steiger_williams(r_jk: float, r_jh: float, r_kh: float, n: int) -> float:
    """Steiger (1980) eq. 3, his notation: j the shared variable, k and h the two others."""
    det_r = 1.0 - r_jk * r_jk - r_jh * r_jh - r_kh * r_kh + 2.0 * r_jk * r_jh * r_kh
    r_bar = (r_jk + r_jh) / 2.0
    t2 = (r_jk - r_jh) * math.sqrt(
        ((n - 1) * (1 + r_kh)) / (2 * ((n - 1) / (n - 3)) * det_r + r_bar**2 * (1 - r_kh) ** 3)
    )
    return t2


@pytest.mark.parametrize(
    "r12,r13,r23,n", [(0.5, 0.3, 0.4, 100), (0.82, 0.79, 0.91, 1379), (-0.2, 0.1, 0.05, 20)]
)
def test_williams_equals_steigers_formula_written_out(r12, r13, r23, n):
    t, p = williams(r12, r13, r23, n)
    assert t == pytest.approx(_steiger_williams(r12, r13, r23, n), rel=1e-12)
    assert p == pytest.approx(2 * stats.t.sf(abs(t), n - 3), rel=1e-12)


def test_williams_known_values_and_symmetry():
    # by hand: |R| = 0.62, t = 0.2 sqrt(99 * 1.4) / sqrt(2 * 99/97 * 0.62 + 0.16 * 0.216) = 2.06499
    t, p = williams(0.5, 0.3, 0.4, 100)
    assert t == pytest.approx(2.0649936, abs=1e-6) and p == pytest.approx(0.0415915, abs=1e-6)
    assert williams(0.3, 0.5, 0.4, 100) == pytest.approx((-t, p))
    assert williams(0.6, 0.6, 0.5, 50) == (0.0, 1.0)
    assert williams(0.7, 0.7, 1.0, 50) == (0.0, 1.0)  # the same predictor twice
    with pytest.raises(StsbenchError, match="more than 3"):
        williams(0.5, 0.3, 0.4, 3)
    with pytest.raises(StsbenchError, match="semi-definite"):
        williams(0.9, -0.9, 0.9, 100)
    with pytest.raises(StsbenchError, match=r"\[-1, 1\]"):
        williams(1.5, 0.3, 0.4, 100)


def test_williams_holds_its_size_under_the_null():
    # two predictors equally correlated with gold (0.6), with each other 0.5: about 5% rejections at 0.05
    rng = np.random.default_rng(11)
    cov = np.array([[1.0, 0.6, 0.6], [0.6, 1.0, 0.5], [0.6, 0.5, 1.0]])
    data = rng.multivariate_normal(np.zeros(3), cov, size=(2000, 60))
    z = (data - data.mean(axis=1, keepdims=True)) / data.std(axis=1, keepdims=True)
    r = np.einsum("sni,snj->sij", z, z) / 60
    ps = [williams(m[0, 1], m[0, 2], m[1, 2], 60)[1] for m in r]
    assert 0.035 < np.mean(np.array(ps) < 0.05) < 0.065


def test_holm_by_hand():
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone: 0.06 for the last
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == [1.0, 1.0]  # capped at 1
    assert holm([0.2]) == [0.2] and holm([]) == []
    with pytest.raises(StsbenchError, match="p-value"):
        holm([0.1, 1.2])


def test_holm_over_tasks_leaves_the_average_out_of_the_family():
    family = holm_over_tasks({"STS12": 0.01, "STS13": 0.04, "Avg.": 0.03, "STS14": 0.005})
    assert [family[t].holm for t in ("STS12", "STS13", "STS14")] == pytest.approx([0.02, 0.04, 0.015])
    assert family["Avg."].holm is None and family["Avg."].p == 0.03 and family["Avg."].deciding == 0.03
    assert family["STS13"].p == 0.04 and family["STS13"].deciding == pytest.approx(0.04)
    assert list(family) == ["STS12", "STS13", "Avg.", "STS14"]
    assert holm_over_tasks({"Avg.": 0.2}) == {"Avg.": type(family["Avg."])(0.2, None)}
    with pytest.raises(StsbenchError, match="not a p-value"):
        holm_over_tasks({"STS12": 0.1, "Avg.": 1.5})


def test_min_detectable_difference():
    assert min_detectable_difference(1.0) == pytest.approx(1.959964 + 0.841621, abs=1e-6)
    assert min_detectable_difference(0.5, df=4) == pytest.approx(0.5 * (2.776445 + 0.940965), abs=1e-6)
    assert min_detectable_difference(0.0) == 0.0
    with pytest.raises(StsbenchError, match="power"):
        min_detectable_difference(1.0, power=1.0)


def test_wilson_interval_by_hand():
    # 80/100 in the other textbook form, (2np + z^2 -+ z sqrt(z^2 + 4np(1 - p))) / (2(n + z^2)), z = 1.959964:
    # (163.84146 -+ 1.959964 * 8.236593) / 207.68292 = 0.711171 .. 0.866633
    low, high = binomial_interval(80.0, 100)
    assert (low, high) == pytest.approx((71.1171, 86.6633), abs=1e-4)
    # 0/10: the upper bound is z^2/(n + z^2) = 27.75%, not the Wald interval's 0
    assert binomial_interval(0.0, 10) == pytest.approx(
        (0.0, 100 * 1.959964**2 / (10 + 1.959964**2)), abs=1e-5
    )
    assert binomial_interval(100.0, 10) == pytest.approx((100 - 27.7533, 100.0), abs=1e-4)  # mirror of 0/10
    with pytest.raises(StsbenchError, match="percentage"):
        binomial_interval(180.0, 10)
    with pytest.raises(StsbenchError, match="at least one"):
        binomial_interval(80.0, 0)


def test_fold_interval_by_hand():
    # mean 3, sd sqrt(2.5), t_{0.975, 4} = 2.776445: half 2.776445 * 1.581139 / sqrt(5) = 1.963243
    assert fold_interval([1, 2, 3, 4, 5]) == pytest.approx((1.036757, 4.963243), abs=1e-6)
    with pytest.raises(StsbenchError, match="at least 2"):
        fold_interval([80.0])


# --- acceptance 1: coverage on simulated data with a known population Spearman ---------------------------


# 500 simulated samples of 200 pairs, 500 replicates each (a fifth of the pairs and half the replicates once
# used, 10x cheaper). Their coverage fails the 0.92-0.98 band for a wrong interval: a 90% interval covers 0.894
# (one figure) and 0.914 (paired), a 99% one 0.986 and 0.998, and resampling the two models' pairs apart 0.998.
_SIMS, _N, _B = 500, 200, 500


def _spearman_of_pearson(rho: float) -> float:
    """Population Spearman of a bivariate normal with Pearson ``rho`` (Pearson 1907): 6/pi asin(rho/2)."""
    return 6 / math.pi * math.asin(rho / 2)


@pytest.mark.slow
def test_coverage_of_the_interval_of_one_figure():
    truth = _spearman_of_pearson(0.6)
    cov = [[1.0, 0.6], [0.6, 1.0]]
    hits = 0
    sims, n, B = _SIMS, _N, _B
    for s in range(sims):
        data = np.random.default_rng(s).multivariate_normal([0, 0], cov, size=n)
        reps = bootstrap_figures([PairSet("sim", data[:, 1], data[:, 0], np.zeros(n, np.int16))], B, s)
        low, high = percentile_interval(reps["sim"])
        hits += low <= truth <= high
    assert 0.92 <= hits / sims <= 0.98


@pytest.mark.slow
def test_coverage_of_the_paired_difference():
    # gold, A, B: corr(gold, A) 0.7, corr(gold, B) 0.6, corr(A, B) 0.65
    truth = _spearman_of_pearson(0.7) - _spearman_of_pearson(0.6)
    cov = [[1.0, 0.7, 0.6], [0.7, 1.0, 0.65], [0.6, 0.65, 1.0]]
    sims, n, B = _SIMS, _N, _B
    strata = np.repeat(np.arange(4, dtype=np.int16), n // 4)  # stratified, as STS12-16
    hits = 0
    for s in range(sims):
        data = np.random.default_rng(10_000 + s).multivariate_normal([0, 0, 0], cov, size=n)
        a, b = PairSet("sim", data[:, 1], data[:, 0], strata), PairSet("sim", data[:, 2], data[:, 0], strata)
        d = paired_bootstrap([a], [b], B, s)["sim"]
        hits += d.low <= truth <= d.high
    assert 0.92 <= hits / sims <= 0.98
