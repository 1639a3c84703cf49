"""Seed statistics against scipy: the t-interval of the mean, Welch's test and its power."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from stsbench.errors import StsbenchError
from stsbench.stats import decide
from stsbench.stats.seeds import seed_summary


def test_seed_summary_is_scipys_t_interval():
    x = [75.1, 76.3, 74.2, 75.9, 76.0]
    s = seed_summary(x)
    low, high = stats.t.interval(0.95, len(x) - 1, loc=np.mean(x), scale=stats.sem(x))
    assert s.n == 5 and s.mean == pytest.approx(np.mean(x))
    assert s.std == pytest.approx(np.std(x, ddof=1))
    assert (s.low, s.high) == (pytest.approx(low), pytest.approx(high))
    wider = seed_summary(x, level=0.99)
    assert wider.low < s.low and wider.high > s.high


def test_one_seed_has_no_spread_and_bad_input_is_one_line():
    assert seed_summary([0.7]).to_dict() == {"mean": 0.7, "std": None, "n": 1, "low": None, "high": None}
    for values, msg in (([], "no seed values"), ([1.0, float("nan")], "not a finite number")):
        with pytest.raises(StsbenchError, match=msg) as err:
            seed_summary(values)
        assert "\n" not in str(err.value)


def _welch(a, b):
    """Welch over seeds: two settings on disjoint seeds."""
    return decide.difference(dict(enumerate(a)), {1000 + i: v for i, v in enumerate(b)})


def test_the_one_rules_welch_is_welchs_statistic_on_hsus_df():
    a = [76.1, 75.4, 76.8, 75.9, 76.3]
    b = [75.0, 75.9, 74.6, 75.2]
    d = decide.difference(dict(enumerate(a)), {10 + i: v for i, v in enumerate(b)})  # disjoint seeds: Welch
    assert d.design == "Welch"
    assert decide.difference({1: 1.0}, {2: 2.0, 3: 3.0}) is None  # one seed: no spread to estimate
    ref = stats.ttest_ind(a, b, equal_var=False)
    # Welch's statistic; its df the smallest n - 1 (Hsu), conservative where Satterthwaite's was not (rule 3)
    welch_df = min(len(a), len(b)) - 1
    assert d.df == welch_df and d.p == pytest.approx(2 * stats.t.sf(abs(ref.statistic), welch_df))
    va, vb = np.var(a, ddof=1) / len(a), np.var(b, ddof=1) / len(b)
    half = stats.t.ppf(0.975, welch_df) * np.sqrt(va + vb)
    assert (d.low, d.high) == (pytest.approx(d.diff - half), pytest.approx(d.diff + half))
    assert d.diff == pytest.approx(np.mean(a) - np.mean(b)) and d.n == (5, 4)
    # 80% power at the minimum detectable difference: noncentral t with delta = mdd / se
    t_crit = stats.t.ppf(0.975, d.df)
    mdd = decide.Decision(decide.INCONCLUSIVE, d).mdd
    nc = mdd / d.se
    power = stats.nct.sf(t_crit, d.df, nc) + stats.nct.cdf(-t_crit, d.df, nc)
    assert power == pytest.approx(0.8, abs=0.02)
    same = _welch(a, a)
    assert same.diff == 0 and same.p == pytest.approx(1.0)
    flat = _welch([1.0, 1.0], [1.0, 1.0])
    assert flat.p is None and flat.low == flat.high == 0.0 and not flat.spread


def test_more_seeds_detect_smaller_differences():
    rng = np.random.default_rng(0)
    few = _welch(rng.normal(0, 1, 3), rng.normal(0, 1, 3))
    many = _welch(rng.normal(0, 1, 30), rng.normal(0, 1, 30))
    mdd = lambda iv: decide.Decision(decide.INCONCLUSIVE, iv).mdd  # noqa: E731
    assert mdd(many) < mdd(few)
