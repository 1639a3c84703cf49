"""The one decision rule (stsbench.stats.decide, docs/uncertainty.md "One rule") on the cases that judged wrongly.

Each group is a case from the issue "Verdicts you can trust", with its numbers, called through the public functions
the report and ``check`` call (``stsbench.stats.claims.judge``, ``stsbench.published.check.verdict``). On the
code before the rule each of them gave the verdict named in its comment.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter
from scipy import stats

from stsbench.published.check import verdict
from stsbench.stats import decide
from stsbench.stats.claims import Claim, judge

CLAIM = TypeAdapter(Claim)


def _difference(better: str = "b", worse: str = "a") -> Claim:
    return CLAIM.validate_python({"kind": "difference", "better": better, "worse": worse})


# 1. Tests on rounded figures ------------------------------------------------------------------------------


def test_unrounded_differences_below_the_rounding_step_are_no_difference_that_matters():
    """mocose-ema-mini: 0.85 minus 0.8 per seed, unrounded -0.0039, -0.0079, -0.0036 (rounded: -0.01 thrice)."""
    a = {1: 78.6134, 2: 78.5921, 3: 78.6007}
    b = {s: v + d for (s, v), d in zip(a.items(), (-0.0039, -0.0079, -0.0036), strict=True)}
    (st,) = judge(_difference(), {"b": b, "a": a}).statements
    assert st.interval.p == pytest.approx(0.066, abs=0.002)  # p 0.06 on the raw figures, not 1e-24
    assert st.outcome == "no difference that matters" and st.margin > 0.48
    # the same seeds at two decimals: three identical -0.01 gaps, no spread: still judged against δ, not p = 0
    rounded = {s: round(v, 2) for s, v in b.items()}
    # the same seeds at two decimals: three identical -0.01 gaps; judged with their resolution (h 0.01), not p = 0
    flat_scores = {"b": {1: 78.60, 2: 78.58, 3: 78.59}, "a": {1: 78.61, 2: 78.59, 3: 78.60}}
    (flat,) = judge(_difference(), flat_scores, resolution=decide.STORED).statements
    assert flat.interval.spread and flat.outcome == "no difference that matters"
    (bare,) = judge(_difference(), flat_scores).statements  # taken as raw: the point, a reversal below δ
    assert bare.note == "no spread over seeds" and bare.outcome == "reversed, by less than δ"
    assert rounded  # the raw figures are what the report reads (test_raw_figures_are_what_tests_read)


def test_raw_figures_are_what_tests_read():
    """TaskResult.raw is the raw correlation x100; an Avg. over seeds is the plain mean of raw figures."""
    from stsbench.published.check import Figure, seed_values
    from stsbench.results.schema import TaskResult

    sts = TaskResult.__new__(TaskResult)
    sts.metric, sts.reported = "spearman_all", 72.14
    sts.scores = {"aggregate": {"spearman": {"all": 0.7213607752186162}}}
    assert sts.raw == pytest.approx(72.13607752186162)
    split = copy.copy(sts)
    split.metric, split.scores = "test_spearman", {"split": "test", "test": {"spearman": 0.8197701069446645}}
    assert split.raw == pytest.approx(81.97701069446645)
    acc = copy.copy(sts)
    acc.metric, acc.scores, acc.reported = "test_acc", {"test_acc": 76.07}, 76.07
    assert acc.raw == 76.07
    tasks = {1: {("STS12", "test"): 72.136, ("STS13", "test"): 80.004}}
    assert seed_values(Figure("avg", ("STS12", "STS13")), tasks, {}) == {1: pytest.approx(76.07)}


# 2. A zero spread counted as certainty ---------------------------------------------------------------------


def test_two_seeds_with_one_gap_are_inconclusive_not_p_zero():
    """Two seeds whose rounded difference is 0.25 on both: was contradicted at p = 0 (claim B > A the other way)."""
    scores = {"b": {1: 80.00, 2: 80.25}, "a": {1: 80.25, 2: 80.50}}
    (st,) = judge(_difference(), scores).statements
    assert (
        st.outcome == "inconclusive"
        and st.interval.p is None
        and st.note.startswith("fewer than 3 seeds (2)")
    )


@pytest.mark.parametrize("gap", [0.49, 0.51])
def test_a_plateau_on_two_seeds_does_not_flip_at_its_margin(gap):
    """Margin 0.5, two seeds: was supported at 0.49 and contradicted at 0.51; both inconclusive now."""
    claim = CLAIM.validate_python({"kind": "plateau", "settings": ["a", "b"], "margin": 0.5})
    result = judge(claim, {"a": {1: 80.0, 2: 81.0}, "b": {1: 80.0 + gap, 2: 81.0 + gap}})
    assert result.verdict == "inconclusive" and decide.few(result.statements[0].interval)


def test_no_spread_on_three_seeds_is_the_point_against_delta():
    """With three seeds the seeds did not move the figure: the interval is the point, compared with δ."""
    for gap, outcome in (
        (0.3, decide.SUPPORTED_LESS),
        (0.8, decide.SUPPORTED_MORE),
        (-0.8, decide.REVERSED_MORE),
    ):
        (st,) = judge(
            _difference(), {"b": {s: 70 + s + gap for s in (1, 2, 3)}, "a": {s: 70.0 + s for s in (1, 2, 3)}}
        ).statements
        assert (st.outcome, st.low, st.high, st.note) == (
            outcome,
            pytest.approx(gap),
            pytest.approx(gap),
            "no spread over seeds",
        )


# 3. No size -------------------------------------------------------------------------------------------------


def test_a_significant_difference_below_delta_is_a_reversal_by_less_than_delta():
    """Five shared seeds, B above A by 0.003-0.005: "A > B" was contradicted at p 3e-4, then "no difference"."""
    a = {s: 70 + 0.3 * s for s in range(1, 6)}
    b = {s: a[s] + d for s, d in zip(a, (0.003, 0.004, 0.005, 0.0035, 0.0045), strict=True)}
    (st,) = judge(_difference("a", "b"), {"a": a, "b": b}).statements
    assert st.interval.p == pytest.approx(3.5e-4, rel=0.05)  # significant, and tiny
    assert st.outcome == "reversed, by less than δ"


def test_a_cell_within_delta_is_reproduced():
    """Seeds 79.45-79.60 against a published 79.1, δ 1.0: was "not reproduced" (the interval missed 79.1)."""
    v = verdict("STSBenchmark", 79.1, [79.45, 79.50, 79.55, 79.60])
    assert (
        v.status == "reproduced"
        and v.diff == pytest.approx(0.425)
        and v.margin == pytest.approx(1 - v.decision.high)
    )


# 4. One design in one report --------------------------------------------------------------------------------


def test_claims_cells_tables_and_compare_read_one_interval():
    """A claim's statement, the report's difference cell and compare over seeds give one interval for one pair."""
    from stsbench.stats.compare import Side, compare_seeds

    rng = np.random.default_rng(4)
    shared = rng.normal(0, 0.4, 3)
    a = {s: 78.6 + e + rng.normal(0, 0.01) for s, e in zip((1, 2, 3), shared, strict=True)}
    b = {s: 78.6 + e + rng.normal(0, 0.01) for s, e in zip((1, 2, 3), shared, strict=True)}
    (st,) = judge(_difference(), {"b": b, "a": a}).statements
    iv = decide.difference(b, a)
    cell = decide.two_sided(iv, decide.DELTA)
    side = lambda x: Side(  # noqa: E731
        "x",
        "x",
        "x",
        "",
        "avg",
        "test",
        {},
        {},
        {},
        {"STS12": list(x.values()), "Avg.": list(x.values())},
        [1, 2, 3],
    )  # noqa: E731
    row = compare_seeds(side(a), side(b), level=0.95).rows[0]
    assert st.test == "paired t" and iv.design == row.seeds.interval.design == "paired"
    assert (st.low, st.high) == (pytest.approx(iv.low), pytest.approx(iv.high))
    assert (row.low, row.high) == (pytest.approx(iv.low, abs=1e-4), pytest.approx(iv.high, abs=1e-4))
    # paired, the seeds' shared 0.4-point spread does not hide a 0.01 difference: the interval is narrow
    assert iv.high - iv.low < 0.1 and cell.outcome == row.seeds.outcome == "no difference that matters"
    assert st.outcome == "no difference that matters"


# 5. Smaller ones --------------------------------------------------------------------------------------------


def test_a_model_not_trained_here_is_flagged_not_found_by_seed_zero():
    a = {1: 80.1, 2: 80.4, 3: 80.2}
    (trained,) = judge(_difference("a", "x"), {"a": a, "x": {0: 79.0}}).statements  # a real --seed 0 run
    assert trained.outcome == "inconclusive" and trained.note == "fewer than 2 seeds: x"
    (fixed,) = judge(_difference("a", "x"), {"a": a, "x": {0: 79.0}}, fixed=["x"]).statements
    assert fixed.test == "one-sample t" and fixed.outcome in decide.DIRECTIONS


def test_a_failed_seed_makes_the_design_partly_paired_and_honest():
    """+0.28 on every shared seed, seed 3 failed for one setting: Welch over unequal sets said -0.13 as if exact.

    The partly-overlapping t (Derrick, Toher & White 2017) reads every seed: its estimate is the means' difference,
    its standard error what the shared seeds' covariance leaves, so the wide seed effect makes it inconclusive.
    """
    a = {1: 80.0, 2: 81.0, 3: 82.2, 4: 80.5}
    b = {1: 80.28, 2: 81.28, 4: 80.78}
    welch = np.mean(list(b.values())) - np.mean(list(a.values()))
    assert welch == pytest.approx(-0.145)  # what ignoring the pairing estimates here: the wrong sign
    iv = decide.difference(b, a)
    assert (
        iv.design == "partly paired"
        and iv.diff == pytest.approx(welch)
        and iv.used == 3
        and iv.low < 0.28 < iv.high
    )
    (st,) = judge(_difference(), {"b": b, "a": a}).statements
    assert st.outcome == "inconclusive" and st.test == "partly paired t"


def test_best_probability_splits_ties_and_resamples_paired_settings_jointly():
    x = {1: 80.0, 2: 81.5, 3: 79.2}
    twins = decide.best_probability({"a": x, "b": dict(x)}, ["a", "b"])
    assert twins == {"a": 0.5, "b": 0.5}
    assert decide.best_probability({"b": x, "a": dict(x)}, ["b", "a"]) == {"b": 0.5, "a": 0.5}
    # b is a plus 0.1 on every shared seed: resampled jointly, b is always best (independently: often not)
    up = {s: v + 0.1 for s, v in x.items()}
    assert decide.best_probability({"a": x, "b": up}, ["a", "b"]) == {"a": 0.0, "b": 1.0}
    claim = CLAIM.validate_python({"kind": "argmax", "best": "b", "among": ["a", "b"]})
    assert judge(claim, {"a": x, "b": up}).best_probability == {"a": 0.0, "b": 1.0}


def test_the_interval_is_students():
    x = [1.2, 0.4, 0.9, 1.5, 0.7]
    iv = decide.one_sample(x)
    ref = stats.ttest_1samp(x, 0.0)
    half = stats.t.ppf(0.975, 4) * np.std(x, ddof=1) / np.sqrt(5)
    assert iv.p == pytest.approx(ref.pvalue) and (iv.low, iv.high) == (
        pytest.approx(np.mean(x) - half),
        pytest.approx(np.mean(x) + half),
    )
    with pytest.raises(Exception, match="positive number"):
        decide.check_delta(0)


# The edition whose verdict flipped on machine noise ---------------------------------------------------------

EDITIONS = Path(__file__).resolve().parent / "fixtures" / "ema_editions.json"
EMA_CLAIMS = Path(__file__).resolve().parents[1] / "reports" / "mocose-ema-mini" / "claims.yaml"


def test_the_ema_editions_give_one_verdict_with_a_wide_margin():
    """mocose-ema-mini's three editions (contradicted, inconclusive, contradicted before the rule): one verdict.

    The raw per-seed STS figures of each edition (from git, tests/fixtures/ema_editions.json) differ by machine
    noise; each seed's Avg. is the plain mean of its seven raw figures, as the report reads it.
    """
    import yaml

    (spec,) = yaml.safe_load(EMA_CLAIMS.read_text(encoding="utf-8"))
    claim = CLAIM.validate_python(spec)
    editions = json.loads(EDITIONS.read_text(encoding="utf-8"))["editions"]
    assert len(editions) == 3
    judged = []
    for seeds in editions.values():
        scores = {
            s: {int(k): sum(v.values()) / len(v) for k, v in by_seed.items()} for s, by_seed in seeds.items()
        }
        judged.append(judge(claim, scores))
    assert {r.verdict for r in judged} == {"no difference that matters"}
    # every statement decided the same way in each edition, each far inside ±δ: the noise moves a margin by 0.002
    assert all(s.outcome == "no difference that matters" for r in judged for s in r.statements)
    margins = [r.margin for r in judged]
    assert min(margins) > 0.45 and max(margins) - min(margins) < 0.005
