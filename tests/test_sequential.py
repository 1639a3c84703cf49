"""stsbench/stats/sequential.py and its committed constants: exact first looks, fresh paths, the words, futility."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
import sequential_calibration as calibration
import sequential_constants as made
from helpers import ROOT  # noqa: F401 - puts benchmarks/ on sys.path
from scipy import stats

from stsbench.errors import StsbenchError
from stsbench.stats import decide, sequential
from stsbench.stats.sequential_table import TABLE

PLANS = [
    (int(m), design, int(k))
    for m, entry in TABLE["plans"].items()
    for design in sequential.DESIGNS
    for k in entry[design]
]


def hsd(t: float) -> float:  # Hwang-Shih-DeCani, γ = -5, 0.025 a side: written out here, not imported
    return 0.025 * (1 - math.exp(5 * t)) / (1 - math.exp(5))


@pytest.mark.parametrize(("maximum", "design", "statements"), PLANS)
def test_the_first_look_is_the_exact_t_quantile_rounded_up(maximum, design, statements):
    at = sequential.plan(maximum, design, statements)
    exact = stats.t.ppf(1 - hsd(3 / maximum) / statements, 2)
    assert at.looks[0] == 3
    assert exact <= at.constants[0] < exact * 1.005  # three significant figures, up


def test_the_table_is_the_papers_plan():
    at = sequential.plan(10)
    assert at.looks == (3, 4, 5, 6, 8, 10)
    assert sequential.plan(20).looks == (3, 4, 5, 6, 16, 20)
    assert at.spent == pytest.approx([0.00059, 0.00108, 0.0019, 0.00324, 0.00909, 0.025], abs=6e-6)
    # the constants fall with the looks; more statements, wider
    for m, design, k in PLANS:
        c = sequential.plan(m, design, k).constants
        assert list(c) == sorted(c, reverse=True)
    assert all(
        a < b
        for a, b in zip(
            sequential.plan(10).constants, sequential.plan(10, "paired", 3).constants, strict=True
        )
    )


def fresh(paths: int, seed: int, maximum: int, design: str) -> np.ndarray:
    """The pivot at each look on fresh paths (another generator than the table's)."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((paths, maximum + 1))
    out = []
    for n in sequential.plan(maximum).looks:
        x = z[:, 1 : n + 1]
        m, s = x.mean(axis=1), x.std(axis=1, ddof=1)
        out.append(math.sqrt(n) * m / s if design == "paired" else (m - z[:, 0]) / (s * math.sqrt(1 / n + 1)))
    return np.stack(out, axis=1)


@pytest.mark.parametrize(("maximum", "design"), [(10, "paired"), (10, "cell"), (20, "paired"), (20, "cell")])
def test_on_fresh_paths_the_looks_together_miss_a_side_at_most_0_025(maximum, design):
    paths = 400_000
    pivot = fresh(paths, 12345, maximum, design)
    c = np.array(sequential.plan(maximum, design).constants)
    crossed = np.any(pivot > c, axis=1).mean()
    se = math.sqrt(0.025 * 0.975 / paths)
    assert crossed <= 0.025 + 3 * se
    assert crossed >= 0.025 - 0.002  # rounded up, never far below: the constants are not loose


def test_the_last_constant_re_derived_within_monte_carlo_error():
    at = sequential.plan(10)
    pivot = fresh(400_000, 777, 10, "paired")
    found = made.constants(pivot, 10)
    # the quantile's Monte Carlo SE at 400,000 paths is about 0.007 here; both are rounded up to 0.01
    assert found[-1] == pytest.approx(at.constants[-1], abs=0.04)
    assert found[0] == at.constants[0]  # exact


def test_a_look_reads_the_rules_words_off_its_own_interval():
    at = sequential.plan(10)
    a = {1: 1.1, 2: 0.7, 3: 1.4, 4: 0.9, 5: 1.2}
    b = dict.fromkeys(a, 0.0)
    decision = sequential.look(a, b, 0.5, at)
    m, s = np.mean(list(a.values())), np.std(list(a.values()), ddof=1)
    half = at.constant(5) * s / math.sqrt(5)
    assert decision.low == pytest.approx(m - half) and decision.high == pytest.approx(m + half)
    assert decision.outcome == decide.directional(decision.interval, 0.5).outcome == decide.SUPPORTED
    # the same seeds at a fixed 95% interval decide more: the look pays for the looks to come
    assert decide.directional(decide.difference(a, b), 0.5).outcome == decide.SUPPORTED_MORE
    cell = sequential.look_cell(list(a.values()), 0.0, 1.0, at)
    assert cell.high - cell.diff == pytest.approx(at.constant(5) * s * math.sqrt(1 / 5 + 1))
    with pytest.raises(StsbenchError, match="pairs its seeds"):
        sequential.look(a, {1: 0.0, 2: 0.0, 3: 0.0, 4: 0.0, 6: 0.0}, 0.5, at)


def test_looks_levels_and_the_next_look():
    at = sequential.plan(10)
    for n in at.looks:
        assert stats.t.ppf((1 + at.level(n)) / 2, n - 1) == pytest.approx(at.constant(n))
    assert [at.next_look(n) for n in (2, 3, 5, 7, 9, 10, 11)] == [3, 3, 5, 8, 10, 10, None]
    with pytest.raises(StsbenchError, match="no look of this plan"):
        at.constant(7)
    record = at.to_dict()
    assert record["table"] == hashlib.sha256(sequential.TABLE.read_bytes()).hexdigest()
    assert record["looks"] == [3, 4, 5, 6, 8, 10] and record["spending"].startswith("Hwang-Shih-DeCani")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((12,), "at most 12 seeds"),
        ((10, "welch"), "unknown sequential design"),
        ((10, "cell", 2), "2 statements"),
    ],
)
def test_a_plan_the_table_lacks_is_one_line(args, message):
    with pytest.raises(StsbenchError, match=message):
        sequential.plan(*args)


def test_futility_bounds_and_the_predictive_chance():
    at = sequential.plan(10)
    assert sequential.futility_looks(at) == (5, 6, 8)
    assert [round(sequential.futility_bound(n, at), 3) for n in (5, 6, 8)] == [1.626, 1.604, 1.572]
    # at m = 0 the chance is that of |N(0, τ)| beyond H
    s, n = 1.0, 5
    h, tau = 2.38 * s / math.sqrt(10), s * math.sqrt(5 / 100 + 25 / 500)
    assert sequential.predictive_chance(0.0, s, n, at) == pytest.approx(2 * stats.norm.sf(h / tau))
    assert sequential.futile(0.0, 1.0, 5, 0.5, at)  # s = 2δ: out of reach, and 0 far inside
    assert not sequential.futile(0.0, 0.5, 5, 0.5, at)  # s = δ: no difference may still be shown
    assert not sequential.futile(0.0, 1.0, 4, 0.5, at)  # not a futility look
    assert not sequential.futile(0.0, 1.0, 5, 0.5, sequential.plan(10, "cell"))  # never a cell


def test_the_calibration_counts_the_projects_words(tmp_path, capsys):
    # a reduced run: its words checked against the project's functions on 60 paths a cell (exit 1 on one
    # disagreement), every side within its bound at 3,000 paths; its section written below the rule's tables
    out = tmp_path / "calibration.md"
    out.write_text(f"# the rule's tables\n\n{calibration.MARKER}\n\nan older section\n", encoding="utf-8")
    assert calibration.main(["--runs", "3000", "--verify", "60", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith(f"# the rule's tables\n\n{calibration.MARKER}\n\n## The sequential plan")
    assert "an older section" not in text and text.count("| 0.5 | +2δ |") == 2  # M = 10 and 20
    assert "expected seeds" in capsys.readouterr().out


def test_the_vectorised_words_are_directionals():
    rng = np.random.default_rng(3)
    low = rng.normal(0, 1, 4000)
    high = low + rng.exponential(1.0, 4000)
    codes = calibration.words(low, high)
    for lo, hi, code in zip(low, high, codes, strict=True):
        iv = decide.Interval(float((lo + hi) / 2), 1.0, 5.0, float(lo), float(hi), "paired", (5, 5), 5)
        assert calibration.WORDS[code] == decide.directional(iv, calibration.DELTA).outcome
