"""The claim rule (stsbench.stats.claims on stsbench.stats.decide, docs/uncertainty.md "One rule"): its parts."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import TypeAdapter, ValidationError
from scipy import stats

from stsbench.stats.claims import Claim, judge

CLAIM = TypeAdapter(Claim)
N_SEEDS, DRAWS, SD = 5, 200, 0.5

# each claim type: its spec, and the settings' true means (points) where its effect is large, reversed and null
# (null: every setting at 0 unless given)
CASES = {
    "argmax": (
        {"kind": "argmax", "best": "a", "among": ["a", "b", "c"]},
        {"large": {"a": 3, "b": 0, "c": 0}, "reversed": {"a": 0, "b": 3, "c": 3}},
    ),
    "ordering": (
        {"kind": "ordering", "order": ["a", "b", "c"]},
        {"large": {"a": 6, "b": 3, "c": 0}, "reversed": {"a": 0, "b": 3, "c": 6}},
    ),
    "difference": (
        {"kind": "difference", "better": "a", "worse": "b", "published": 3.0},
        {"large": {"a": 3, "b": 0}, "reversed": {"a": 0, "b": 3}},
    ),
    "gap": (
        {"kind": "gap", "wider": ["a", "b"], "narrower": ["c", "d"]},
        {
            "large": {"a": 3, "b": 0, "c": 0, "d": 0},
            "reversed": {"a": 0, "b": 0, "c": 3, "d": 0},
            "null": {"a": 1, "b": 0, "c": 1, "d": 0},
        },
    ),
    # a plateau's effect is equality: large = equal settings with a margin well above the seeds' spread,
    # reversed = one setting 3 points off (margin 2.5), null = equal settings with seeds too noisy to tell (sd 3)
    "plateau": (
        {"kind": "plateau", "settings": ["a", "b", "c"], "margin": 2.5},
        {"large": {"a": 0, "b": 0, "c": 0}, "reversed": {"a": 0, "b": 6, "c": 0}},
    ),
    "collapse": (
        {"kind": "collapse", "settings": ["a"], "below": 70.0},
        {"large": {"a": -10}, "reversed": {"a": 10}},
    ),
}
EXPECTED = {"large": "supported", "reversed": "contradicted"}
WRONG_AT_NULL = ("supported", "contradicted")  # the decisive outcomes a true difference of 0 must rarely give


def simulate(means: dict[str, float], paired: bool, sd: float, rng: np.random.Generator) -> dict:
    """Five seeds per setting around 70 + mean: shared seeds (a seed's own effect in every setting) or not."""
    shared = rng.normal(0, sd * 0.7, N_SEEDS)
    scores = {}
    for j, (setting, mean) in enumerate(means.items()):
        seeds = range(1, N_SEEDS + 1) if paired else range(1 + 10 * j, N_SEEDS + 1 + 10 * j)
        own = shared if paired else rng.normal(0, sd * 0.7, N_SEEDS)
        scores[setting] = {
            s: 70 + mean + e + rng.normal(0, sd * 0.7) for s, e in zip(seeds, own, strict=True)
        }
    return scores


@pytest.mark.slow  # 7,200 claims judged, the argmax's and ordering's with 2,000 resamples each: ~7 s
@pytest.mark.parametrize("kind", list(CASES))
@pytest.mark.parametrize("paired", [True, False], ids=["paired", "welch"])
def test_the_rule_on_simulated_seeds(kind, paired):
    """n = 5 seeds, 200 draws per case, alpha 0.05, δ 0.5 (a plateau: its margin).

    A large or reversed effect is judged so in at least 95% of draws. A null effect is never judged supported or
    contradicted more often than alpha allows (a one-sided binomial test at 0.01): the rule may call it "no
    difference that matters" or "inconclusive", never the paper's direction or its reversal.
    """
    spec, cases = CASES[kind]
    claim = CLAIM.validate_python(spec)
    rng = np.random.default_rng(37)
    cases = {**cases, "null": cases.get("null", dict.fromkeys(cases["large"], 0))}
    for case, means in cases.items():
        sd = 3.0 if (kind, case) == ("plateau", "null") else SD
        # the direction's word without its size ("supported, by more than δ" is supported)
        verdicts = [
            judge(claim, simulate(means, paired, sd, rng)).verdict.split(",")[0] for _ in range(DRAWS)
        ]
        if case == "null":
            wrong = (
                sum(v in WRONG_AT_NULL for v in verdicts)
                if kind != "plateau"
                else verdicts.count("contradicted")
            )
            assert stats.binomtest(wrong, DRAWS, 0.05, alternative="greater").pvalue > 0.01, (case, wrong)
        else:
            assert verdicts.count(EXPECTED[case]) >= 0.95 * DRAWS, (case, verdicts.count(EXPECTED[case]))


def test_paired_when_the_seeds_are_shared_welch_otherwise():
    claim = CLAIM.validate_python({"kind": "difference", "better": "a", "worse": "b"})
    a = {1: 80.0, 2: 81.0, 3: 82.0}
    shared = judge(claim, {"a": a, "b": {s: v - 1.0 for s, v in a.items()}}).statements[0]
    assert shared.test == "paired t" and shared.diff == pytest.approx(1.0)
    # the same gap on every seed, unrounded: the seeds did not move it; the interval is the point, read against δ
    assert shared.interval.p is None and shared.low == shared.high == pytest.approx(1.0)
    assert shared.outcome == "supported, by more than δ" and shared.note == "no spread over seeds"
    assert shared.margin == pytest.approx(0.5)  # its upper end 1.0 lies 0.5 beyond δ
    other = judge(claim, {"a": a, "b": {4: 79.5, 5: 80.5, 6: 81.5}}).statements[0]
    welch = stats.ttest_ind(list(a.values()), [79.5, 80.5, 81.5], equal_var=False)
    assert (
        other.test == "Welch"
        and other.interval.p == pytest.approx(2 * stats.t.sf(abs(welch.statistic), 2))  # Hsu's df: 3 - 1
        and other.outcome == "inconclusive"
    )


def test_against_a_model_not_trained_here_the_seeds_are_tested_against_its_one_figure():
    """A released checkpoint or the backbone, flagged by the caller (never by its seed number): one-sample t."""
    claim = CLAIM.validate_python({"kind": "difference", "better": "backbone", "worse": "a"})
    a = {1: 20.0, 2: 22.0, 3: 21.0}
    (one,) = judge(claim, {"backbone": {7: 25.0}, "a": a}, fixed=["backbone"], delta=1.0).statements
    expected = stats.ttest_1samp([25.0 - v for v in a.values()], 0.0)
    assert one.test == "one-sample t" and one.interval.n == (1, 3)
    assert one.diff == pytest.approx(4.0) and one.interval.p == pytest.approx(expected.pvalue)
    low, high = (
        expected.confidence_interval(0.95)
        if hasattr(expected, "confidence_interval")
        else (one.low, one.high)
    )
    assert (one.low, one.high) == (pytest.approx(low), pytest.approx(high))
    assert one.outcome == "supported, by more than δ"  # its interval above δ = 1
    (other,) = judge(claim, {"backbone": {0: 15.0}, "a": a}, fixed=["backbone"], delta=1.0).statements
    assert other.outcome == "reversed, by more than δ" and other.diff == pytest.approx(-6.0)
    # unflagged, a real one-seed training run (seed 0 or any other) is no constant: fewer than 2 seeds
    for seed in (0, 7):
        (single,) = judge(claim, {"backbone": {seed: 25.0}, "a": a}).statements
        assert single.outcome == "inconclusive" and single.note == "fewer than 2 seeds: backbone"


def test_holm_within_a_claim_and_the_claim_follows_its_statements():
    claim = CLAIM.validate_python({"kind": "ordering", "order": ["a", "b", "c"]})
    rng = np.random.default_rng(0)
    scores = {
        s: {k: m + rng.normal(0, 0.3) for k in range(1, 6)} for s, m in (("a", 75), ("b", 72), ("c", 74))
    }
    result = judge(claim, scores)
    # Holm over the p's of the contradictions: the interval's upper end against -δ, two-sided
    ps = []
    for s in result.statements:
        se = (s.high - s.diff) / stats.t.ppf(0.975, 4)
        ps.append(min(1.0, 2 * stats.t.cdf((s.diff + 0.5) / se, 4)))
    assert [s.p_holm for s in result.statements] == pytest.approx(
        [min(1, 2 * p) if p == min(ps) else max(p, 2 * min(ps)) for p in ps]
    )
    assert [s.outcome for s in result.statements] == [
        "supported, by more than δ",
        "reversed, by more than δ",
    ]  # a > b; b < c
    assert result.verdict == "contradicted" and result.delta == 0.5
    assert set(result.best_probability) == {"a", "b", "c"} and result.best_probability["a"] > 0.9


def test_missing_seeds_make_a_claim_inconclusive_and_say_so():
    claim = CLAIM.validate_python({"kind": "argmax", "best": "a", "among": ["a", "b", "c"]})
    result = judge(claim, {"a": {1: 80.0, 2: 81.0}, "b": {1: 70.0}, "c": {}})
    assert result.verdict == "inconclusive" and result.missing == ("c",)
    assert [s.note for s in result.statements] == ["fewer than 2 seeds: b", "fewer than 2 seeds: c"]
    assert result.best_probability is None


def test_a_plateau_is_an_equivalence_at_its_margin():
    claim = CLAIM.validate_python({"kind": "plateau", "settings": ["a", "b"], "margin": 1.0})
    a = {1: 80.0, 2: 81.0, 3: 80.5, 4: 80.2}
    b = {s: v + d for (s, v), d in zip(a.items(), (0.1, -0.1, 0.2, 0.0), strict=True)}
    result = judge(claim, {"a": a, "b": b})
    (st,) = result.statements
    d = np.array([a[s] - b[s] for s in a])
    half = stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2
    assert (st.low, st.high) == (pytest.approx(d.mean() - half), pytest.approx(d.mean() + half))
    assert st.test == "paired t" and st.outcome == "within the margin" and result.verdict == "supported"
    assert result.delta == 1.0
    assert st.margin == pytest.approx(min(st.low + 1, 1 - st.high))


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({"kind": "argmax", "best": "z", "among": ["a", "b"]}, "not among"),
        ({"kind": "ordering", "order": ["a"]}, "at least 2"),
        ({"kind": "plateau", "settings": ["a", "b"], "margin": 0}, "greater than 0"),
        ({"kind": "difference", "better": "a", "worse": "b", "size": 1}, "size"),
        ({"kind": "peak", "best": "a"}, "peak"),
        ({"kind": "difference", "better": "a", "worse": "b", "delta": 1.0}, "delta_reason"),
        (
            {"kind": "difference", "better": "a", "worse": "b", "delta": -1, "delta_reason": "x"},
            "greater than 0",
        ),
    ],
)
def test_a_malformed_claim_is_refused(spec, words):
    with pytest.raises(ValidationError, match=words):
        CLAIM.validate_python(spec)
