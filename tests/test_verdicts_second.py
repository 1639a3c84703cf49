"""The one rule, second pass (issue "Verdicts, second pass"): each adversarial case gives its bracketed outcome.

Each test names the review's case (C1-C14, D2-D7) and calls the public functions the report, ``check`` and
``compare`` call: ``stsbench.stats.claims.judge``, ``stsbench.published.check.verdict``, ``stsbench.stats.decide``
and ``stsbench.stats.compare.compare_seeds``. On the rule before, each gave the outcome its docstring names.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from pydantic import TypeAdapter
from scipy import stats

from stsbench.published.check import SeedComparison, SeedRow, verdict
from stsbench.stats import decide
from stsbench.stats.claims import Claim, Collapse, judge

CLAIM = TypeAdapter(Claim)
ROOT = Path(__file__).resolve().parents[1]


def _exact(mean: float, std: float, n: int) -> list[float]:
    """n figures with exactly this mean and sample std (a fixed pattern, standardised)."""
    z = np.sin(np.arange(1, n + 1) * 1.7)
    z = (z - z.mean()) / z.std(ddof=1)
    return list(mean + std * z)


def _claim(**spec) -> Claim:
    return CLAIM.validate_python(spec)


# C5/C12: zero spread on a quantised figure ---------------------------------------------------------------------


def test_c5_three_equal_trec_accuracies_are_inconclusive_not_reproduced():
    """TREC 91.0 thrice against 90.1: was reproduced with no interval (a zero spread on a 0.2-point grid)."""
    v = verdict("TREC", 90.1, [91.0, 91.0, 91.0])
    assert v.status == "inconclusive" and v.decision.interval.spread
    # the resolution alone (an exact published mean): no spread below one step, so h²/4 (rule 3): 0.9 ± 4.30·0.2/√12
    alone = decide.cell([91.0] * 3, 90.1, runs=math.inf, resolution=100 / 500)
    half = stats.t.ppf(0.975, 2) * 0.2 / math.sqrt(4 * 3)
    assert (alone.low, alone.high) == (pytest.approx(0.9 - half), pytest.approx(0.9 + half))
    assert alone.outcome == "inconclusive" and v.decision.low < alone.low and v.decision.high > alone.high


def test_c12_a_quantised_grid_gives_wrong_cells_no_more_than_the_bound():
    """A TREC-like 0.2-point grid, n = 3, seed std 0.1: 10-11% wrong decisive cells before, within 0.0646 now.

    The truth is the mean of the quantised figure (simulated); both decisive outcomes count as wrong at |truth| = δ.
    """
    rng = np.random.default_rng(12)
    draws, h = 2000, 0.2
    for shift in (0.0, 1.0, -1.0):
        raw = 90.1 + shift + rng.normal(0.0, 0.1, (draws, 3))
        q = np.round(raw / h) * h
        truth = float(np.round((90.1 + shift + rng.normal(0.0, 0.1, 200_000)) / h).mean() * h) - 90.1
        wrong = 0
        for row in q:
            out = decide.cell(row, 90.1, runs=math.inf, resolution=h).outcome
            decisive_wrong = {"reproduced", "not reproduced"} if abs(abs(truth) - 1) < 0.05 else set()
            decisive_wrong |= {"not reproduced"} if abs(truth) < 1 - 0.05 else set()
            wrong += out in decisive_wrong
        assert wrong / draws <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / draws), (shift, wrong / draws)


def test_c5_an_aggregate_without_raw_figures_is_said_to_be_rounded():
    row = SeedRow("STS12", 70.0, {"values": [70.51, 70.49, 70.52], "mean": 70.51, "n": 3})
    assert decide.ROUNDED in row.verdict.note
    raw = SeedRow("STS12", 70.0, {"values": [70.51, 70.49, 70.52], "raw": [70.511, 70.489, 70.52], "n": 3})
    assert decide.ROUNDED not in (raw.verdict.note or "")


def test_the_resolution_of_a_transfer_task_and_of_an_average():
    from stsbench.published.check import SCORED, task_resolution

    assert task_resolution(["TREC"]) == pytest.approx(0.2) and task_resolution(["STS12"]) == 0.0
    assert task_resolution(["TREC", "MR"]) == pytest.approx(
        math.sqrt((0.2**2 + (100 / 10662) ** 2) / 2) / math.sqrt(2)
    )
    assert task_resolution(["STS12"], rounded=True) == pytest.approx(0.01)
    assert set(SCORED) == {"MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC"}


def test_the_scored_counts_are_the_data_files():
    """SCORED: the test sets (SST2, TREC, MRPC) and the whole cross-validated datasets (MR, CR, SUBJ, MPQA)."""
    from helpers import DATA

    from stsbench.published.check import SCORED

    down = DATA / "downstream"
    if not down.is_dir():
        pytest.skip(f"shared data not found at {DATA}")

    def lines(*names: str) -> int:
        return sum(len((down / n).read_text(encoding="latin-1").splitlines()) for n in names)

    found = {
        "MR": lines("MR/rt-polarity.pos", "MR/rt-polarity.neg"),
        "CR": lines("CR/custrev.pos", "CR/custrev.neg"),
        "SUBJ": lines("SUBJ/subj.objective", "SUBJ/subj.subjective"),
        "MPQA": lines("MPQA/mpqa.pos", "MPQA/mpqa.neg"),
        "SST2": lines("SST/binary/sentiment-test"),
        "TREC": lines("TREC/TREC_10.label"),
        "MRPC": lines("MRPC/msr_paraphrase_test.txt") - 1,  # a header line
    }
    assert found == SCORED


# C11: collapsed seeds ------------------------------------------------------------------------------------------


def test_c11_collapsed_seeds_enter_as_zero_named():
    """Two seeds NaN (constant embeddings): were dropped, the claim contradicted on the three survivors."""
    claim = Collapse(kind="collapse", settings=("ema=0",), below=60.0, figure="final-dev")
    result = judge(claim, {"ema=0": {1: math.nan, 2: math.nan, 3: 75.2, 4: 76.1, 5: 74.8}})
    (st,) = result.statements
    assert result.verdict == "inconclusive"
    assert (st.low, st.high) == (pytest.approx(-36.5, abs=0.05), pytest.approx(66.0, abs=0.05))
    assert "seeds 1, 2 collapsed: NaN -> 0" in st.note


def test_c11_a_mix_of_collapsed_and_trained_seeds_caps_the_statement():
    """One NaN among five tight seeds far above the bound: the 0 would not move the t-interval off "contradicted"
    enough to matter on every draw, and no few seeds bound a mixed law's mean (docs/calibration.md): capped."""
    claim = Collapse(kind="collapse", settings=("ema=0",), below=20.0, figure="final-dev")
    mixed = judge(claim, {"ema=0": {1: math.nan, 2: 75.2, 3: 75.3, 4: 75.1, 5: 75.2, 6: 75.3, 7: 75.2}})
    (st,) = mixed.statements
    assert mixed.verdict == "inconclusive" and st.nearest == "not below the bound"
    assert "seed 1 collapsed: NaN -> 0, 1 of 7 (a mix of collapsed and trained)" in st.note
    every = judge(claim, {"ema=0": {1: math.nan, 2: math.nan, 3: math.nan}})
    assert every.verdict == "supported" and "seeds 1, 2, 3 collapsed: NaN -> 0" in every.statements[0].note


def test_c11_another_non_finite_figure_caps_the_statement_and_names_the_seed():
    claim = _claim(kind="difference", better="a", worse="b", figure="STS12")
    a = {1: 80.0, 2: 80.2, 3: math.inf, 4: 80.1}
    result = judge(claim, {"a": a, "b": {s: 75.0 + 0.1 * s for s in (1, 2, 3, 4)}})
    (st,) = result.statements
    assert st.outcome == "inconclusive" and "seed 3 not finite" in st.note and st.nearest in decide.DIRECTIONS


def test_c11_the_final_dev_figure_is_the_last_evaluation_nan_included():
    from types import SimpleNamespace

    from stsbench.reports.reproduction import final_devs

    run = SimpleNamespace(curve=((0, 0.7), (100, 0.75), (200, None)), config={"seed": 4})
    model = SimpleNamespace(run=run)
    group = SimpleNamespace(models=[model], seed_ids=[4])
    (value,) = final_devs(group).values()
    assert math.isnan(value)  # not 75.0, the evaluation before the collapse


# C1/C2/C7: seeds that overlap in part, gaps -----------------------------------------------------------------


def _welch_df(a, b):
    """Satterthwaite's df of two samples (scipy 1.10, the floor, does not return it)."""
    va, vb = np.var(list(a.values()), ddof=1) / len(a), np.var(list(b.values()), ddof=1) / len(b)
    return (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))


def test_c1_one_shared_seed_of_five_is_welch_over_all_ten_its_covariance_bounded():
    a = dict(zip(range(1, 6), (80.1, 80.3, 79.9, 80.2, 80.0), strict=True))
    b = dict(zip(range(5, 10), (78.0, 78.2, 77.9, 78.1, 78.0), strict=True))
    (st,) = judge(_claim(kind="difference", better="a", worse="b"), {"a": a, "b": b}).statements
    assert (
        st.outcome == "supported, by more than δ"
        and st.test == "Welch, shared seeds bounded"
        and st.interval.n == (5, 5)
    )
    welch = stats.ttest_ind(list(a.values()), list(b.values()), equal_var=False)
    # Welch's df; its variance plus the shared seed's covariance at the adverse ρ = -1: 2·S1·S2·1/(5·5)
    s1, s2 = np.std(list(a.values()), ddof=1), np.std(list(b.values()), ddof=1)
    se = math.sqrt(
        np.var(list(a.values()), ddof=1) / 5 + np.var(list(b.values()), ddof=1) / 5 + 2 * s1 * s2 / 25
    )
    assert st.interval.se == pytest.approx(se) and st.interval.df == pytest.approx(_welch_df(a, b))
    assert st.interval.p > welch.pvalue


def test_c2_three_shared_seeds_of_five_use_every_seed():
    """Partly paired (Derrick, Toher & White 2017): the means over all seeds, the shared ones' covariance."""
    rng = np.random.default_rng(2)
    effect = {s: rng.normal(0, 1.0) for s in range(1, 8)}
    a = {s: 80 + effect[s] + rng.normal(0, 0.05) for s in range(1, 6)}
    b = {s: 79 + effect[s] + rng.normal(0, 0.05) for s in range(3, 8)}
    iv = decide.difference(a, b)
    assert iv.design == "partly paired" and iv.used == 3 and iv.n == (5, 5)
    assert iv.diff == pytest.approx(np.mean(list(a.values())) - np.mean(list(b.values())))
    # the shared seeds' covariance narrows the interval against Welch over the same ten figures
    welch = decide.difference({s + 100: v for s, v in a.items()}, b)
    assert welch.design == "Welch" and iv.se < welch.se
    # every seed shared: paired, as before
    assert decide.difference(a, {s: a[s] - 1 for s in a}).design == "paired"


def test_c7_a_gap_pairs_within_each_side_then_combines():
    """A, B on seeds 1-5, C, D on 6-10: Welch over four groups was [-0.61, 2.18]; paired within: narrow."""
    rng = np.random.default_rng(7)
    seed_effect = {s: rng.normal(0, 1.0) for s in range(1, 11)}
    a = {s: 80.8 + seed_effect[s] + rng.normal(0, 0.05) for s in range(1, 6)}
    b = {s: 80.0 + seed_effect[s] + rng.normal(0, 0.05) for s in range(1, 6)}
    c = {s: 79.0 + seed_effect[s] + rng.normal(0, 0.05) for s in range(6, 11)}
    d = {s: 79.0 + seed_effect[s] + rng.normal(0, 0.05) for s in range(6, 11)}
    iv = decide.gap([a, b, c, d])
    assert iv.low > 0.5 and iv.high < 1.1 and iv.design == "Welch"  # each side per seed, Welch across
    xs = [np.array(list(x.values())) for x in (a, b, c, d)]  # the rule before: four independent groups, Welch
    four = xs[0].mean() - xs[1].mean() - xs[2].mean() + xs[3].mean()
    half = stats.t.ppf(0.975, 4) * np.sqrt(sum(x.var(ddof=1) / x.size for x in xs))  # on Hsu's df, 4
    assert four - half < 0 < four + half
    claim = _claim(kind="gap", wider=["a", "b"], narrower=["c", "d"])
    assert judge(claim, {"a": a, "b": b, "c": c, "d": d}).verdict in decide.DIRECTIONS


# C3/C4/C6: words that stay true ---------------------------------------------------------------------------------


def test_c3_a_lead_shown_smaller_than_delta_is_supported_by_less_than_delta():
    base = {1: 78.0, 2: 79.1, 3: 77.6, 4: 78.4, 5: 78.9}
    noise = (0.02, -0.01, 0.03, -0.02, 0.0)
    best = {s: v + 0.30 + e for (s, v), e in zip(base.items(), noise, strict=True)}
    x1 = {s: v - 2.0 + e for (s, v), e in zip(base.items(), noise[::-1], strict=True)}
    claim = _claim(kind="argmax", best="best", among=["best", "x1", "x2"])
    result = judge(claim, {"best": best, "x1": x1, "x2": base})
    by = {s.what: s for s in result.statements}
    assert by["best > x1"].outcome == "supported, by more than δ"
    assert by["best > x2"].outcome == "supported, by less than δ" and 0 < by["best > x2"].low < 0.3
    assert result.verdict == "supported" and result.margin > 0
    assert result.qualifier == "by more than δ: best > x1; by less than δ: best > x2"


def test_c4_a_shown_reversal_is_reversed():
    a = _exact(80.0, 0.2, 5)
    b = [v + 0.65 + e for v, e in zip(a, _exact(0.0, 0.24, 5), strict=True)]
    claim = _claim(kind="difference", better="a", worse="b")
    result = judge(claim, {"a": dict(enumerate(a, 1)), "b": dict(enumerate(b, 1))})
    (st,) = result.statements
    assert st.low == pytest.approx(-0.95, abs=0.05) and st.high == pytest.approx(-0.35, abs=0.05)
    assert st.outcome == result.verdict == "reversed"


@pytest.mark.parametrize(
    ("n", "std", "word"), [(5, 0.2014, "supported"), (20, 0.1923, "supported, by less than δ")]
)
def test_c6_the_same_effect_stays_supported_as_seeds_are_added(n, std, word):
    """+0.3: supported at five noisy seeds ([0.05, 0.55]); at twenty ([0.21, 0.39]) it was "no difference"."""
    a = _exact(80.0, 1.0, n)
    b = [v - d for v, d in zip(a, _exact(0.3, std, n), strict=True)]
    result = judge(
        _claim(kind="difference", better="a", worse="b"),
        {"a": dict(enumerate(a, 1)), "b": dict(enumerate(b, 1))},
    )
    (st,) = result.statements
    assert st.outcome == result.verdict == word and st.low > 0


def test_every_directional_word_on_its_interval():
    iv = lambda lo, hi: decide.Interval((lo + hi) / 2, 0.1, 4, lo, hi, decide.PAIRED, (5, 5), 5)  # noqa: E731
    cases = {
        (0.6, 0.9): "supported, by more than δ",
        (0.1, 0.7): "supported",
        (0.1, 0.4): "supported, by less than δ",
        (-0.2, 0.3): "no difference that matters",
        (-0.4, -0.1): "reversed, by less than δ",
        (-0.7, -0.1): "reversed",
        (-0.9, -0.6): "reversed, by more than δ",
        (-0.2, 0.7): "inconclusive",
        (-0.7, 0.2): "inconclusive",
    }
    for (lo, hi), word in cases.items():
        dec = decide.directional(iv(lo, hi), 0.5)
        assert dec.outcome == word, (lo, hi)
        assert (dec.margin > 0) == (word != "inconclusive")


def test_cpu_minis_reversals_are_reversed_not_no_difference():
    """cpu-mini's claims 5 and 6 printed "no difference that matters" for [-0.34, -0.06] and [-0.15, -0.07]."""
    for lo, hi in ((-0.34, -0.06), (-0.15, -0.07)):
        iv = decide.Interval((lo + hi) / 2, 0.05, 4, lo, hi, decide.PAIRED, (5, 5), 5)
        assert decide.directional(iv, 0.5).outcome == "reversed, by less than δ"


# C13: a published figure of one run ------------------------------------------------------------------------


def test_c13_a_single_run_published_figure_is_not_an_exact_mean():
    """Ten seeds 78.0 ± 0.4 against a published 79.3: was not reproduced, [-1.59, -1.01]."""
    v = verdict("STSBenchmark", 79.3, _exact(78.0, 0.4, 10))
    assert v.status == "inconclusive"
    assert (v.decision.low, v.decision.high) == (
        pytest.approx(-2.25, abs=0.005),
        pytest.approx(-0.35, abs=0.005),
    )
    exact = verdict("STSBenchmark", 79.3, _exact(78.0, 0.4, 10), runs=10**9)
    assert exact.status == "not reproduced"


def test_c13_where_one_run_can_never_be_reproduced_the_cell_says_so():
    v = verdict("STSBenchmark", 79.3, _exact(79.3, 0.6, 10))  # t·s/√1 = 2.26 · 0.6 > δ
    assert v.status == "inconclusive" and "cannot be reached at any number of seeds" in v.note


def test_c13_a_best_of_k_figure_is_compared_with_the_expected_best():
    assert decide.expected_max(2) == pytest.approx(1 / math.sqrt(math.pi))
    assert decide.expected_max(5) == pytest.approx(1.1630, abs=1e-4)
    values = _exact(78.0, 0.4, 10)
    best = verdict("STSBenchmark", 78.5, values, best_of=5)
    one = verdict("STSBenchmark", 78.5, values)
    assert best.decision.diff == pytest.approx(one.decision.diff + 0.4 * decide.expected_max(5))


def test_the_registry_runs_reach_the_cell():
    from stsbench.published.registry import get_entry

    entry = get_entry("esimcse-arxiv/table7/esimcse-bert-base")
    assert entry.runs == 1 and entry.best_of is None


# C9: families -----------------------------------------------------------------------------------------------


def test_c9_eight_figures_at_delta_get_a_star_no_more_than_alpha():
    """Eight tasks each truly at δ, five paired seeds: per figure, one `*` or more in 18% of tables; Holm: <= 5%."""
    rng = np.random.default_rng(9)
    draws, stars = 400, 0
    for _ in range(draws):
        decisions = []
        for _t in range(8):
            d = 0.5 + rng.normal(0, 0.5, 5)
            iv = decide.difference(dict(enumerate(80 + d, 1)), dict(enumerate(np.full(5, 80.0), 1)))
            decisions.append(decide.two_sided(iv, 0.5))
        stars += any(decide.marked(x) for x in decide.family(decisions))
    assert stars / draws <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / draws)


# C8: P(best) --------------------------------------------------------------------------------------------------


def test_c8_p_best_of_disjoint_seeds_is_one_minus_the_one_sided_p():
    a, b = [80.0, 80.3, 80.6], [79.8, 80.1, 80.4]
    scores = {"a": dict(zip((1, 2, 3), a, strict=True)), "b": dict(zip((4, 5, 6), b, strict=True))}
    best = decide.best_probability(scores, ["a", "b"])
    welch = stats.ttest_ind(a, b, equal_var=False).statistic
    one_sided = stats.t.sf(welch, 2)  # the statement's: Welch's statistic on Hsu's df (the smallest n - 1)
    assert best["a"] == pytest.approx(1 - one_sided, abs=0.02) and best["a"] + best["b"] == pytest.approx(1.0)


def test_p_best_on_shared_seeds_is_one_minus_the_paired_one_sided_p():
    rng = np.random.default_rng(8)
    seed = rng.normal(0, 1.0, 5)
    a = dict(enumerate(80 + seed + rng.normal(0, 0.1, 5), 1))
    b = dict(enumerate(79.95 + seed + rng.normal(0, 0.1, 5), 1))
    best = decide.best_probability({"a": a, "b": b}, ["a", "b"])
    paired = stats.ttest_rel(list(a.values()), list(b.values()))
    one_sided = paired.pvalue / 2 if paired.statistic > 0 else 1 - paired.pvalue / 2
    assert best["a"] == pytest.approx(1 - one_sided, abs=0.02)


# D5-D7 ------------------------------------------------------------------------------------------------------


def test_d5_the_inconclusive_line_invites_no_delta_after_the_result(tmp_path):
    row = SeedRow("STS12", 70.0, {"values": [69.0, 71.5, 70.2], "raw": [69.0, 71.5, 70.2], "n": 3})
    comp = SeedComparison(object.__new__(type("E", (), {})), tmp_path, {"seeds": [1, 2, 3]}, (row,))
    line = comp.summary()
    assert "inconclusive" in line and "--difference" not in line


def test_d6_the_report_says_the_chance_of_a_false_contradiction():
    from stsbench.reports.reproduction import claims_table

    assert decide.false_contradiction(10) == pytest.approx(1 - 0.975**10)
    claim = _claim(kind="difference", better="a", worse="b")
    results = [judge(claim, {"a": {1: 80.0, 2: 80.3, 3: 80.1}, "b": {1: 79.0, 2: 79.2, 3: 79.3}})] * 10
    notes = " ".join(claims_table(results).notes)
    assert "10 claims judged" in notes and "at most 0.22" in notes
    one = " ".join(claims_table(results[:1]).notes)  # one claim: 0.025, not the float's 0.026 above it
    assert "1 claim judged" in one and "is at most 0.025 (each at most 0.025)" in one, one


def test_d7_compare_without_seed_ids_is_welch_and_says_so():
    from stsbench.stats.compare import Side, compare_seeds

    def side(values: list[float], ids: list[int] | None) -> Side:
        return Side("x", "x", "x", "", "avg", "test", {}, {}, {}, {"STS12": values, "Avg.": values}, ids)

    a, b = [80.0, 80.4, 80.1, 80.3], [79.0, 79.5, 79.2, 79.1]
    row = compare_seeds(side(a, None), side(b, None), level=0.95).rows[0]
    assert row.seeds.interval.design == "Welch" and "no seed ids: not paired" in row.seeds.note
    paired = compare_seeds(side(a, [1, 2, 3, 4]), side(b, [1, 2, 3, 4]), level=0.95).rows[0]
    assert paired.seeds.interval.design == "paired" and row.p_bootstrap is None


# One record, one place ---------------------------------------------------------------------------------------

# "missing" and "not checked" are cells' words too, but plain English elsewhere (a missing file): left out here
WORDS = {*decide.STATEMENT_WORDS, decide.CONTRADICTED, decide.REPRODUCED, decide.NOT_REPRODUCED} | {
    decide.NOT_COMPARABLE,
    decide.MATTERS,
}
DEFAULTS = {"DELTA", "CELL_DELTA", "DIFFERENCE", "ALPHA", "POWER", "MIN_SEEDS"}
DECISION_FIELDS = {"margin", "nearest", "p_holm", "mde", "mdd", "min_detectable"}


def _modules() -> list[Path]:
    return [*sorted((ROOT / "stsbench").rglob("*.py"))]


def test_the_verdict_words_and_defaults_are_written_only_in_decide():
    """An AST walk: no other module of stsbench spells a verdict word as a whole string literal, or assigns one
    of the rule's defaults (δ, cell δ, alpha, power, minimum seeds)."""
    found = []
    for path in _modules():
        if path == ROOT / "stsbench" / "stats" / "decide.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in WORDS:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            for t in targets:
                if isinstance(t, ast.Name) and t.id in DEFAULTS and node.value is not None:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {t.id} = {ast.unparse(node.value)}")
    assert not found, found


def test_one_record_holds_an_interval_and_its_decision():
    """Only decide.Decision declares a decision's fields (margin, nearest, Holm's p, the detectable difference).

    Every other record holds Decisions: a claim (ClaimResult) combines its statements' into its own verdict and
    margin; a plateau's ``margin`` is its δ, a claim's setting, not a decision.
    """
    found = []
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            fields = {
                s.target.id
                for s in cls.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            }
            if fields & DECISION_FIELDS:
                found.append(f"{path.relative_to(ROOT)}:{cls.name}")
    allowed = {"stsbench/stats/claims.py:ClaimResult", "stsbench/stats/claims.py:Plateau"}
    assert sorted(set(found) - allowed) == ["stsbench/stats/decide.py:Decision"], found


def test_reproduction_json_records_the_rule_and_every_delta():
    from stsbench.reports.reproduction import reproduction_json

    claim = _claim(kind="difference", better="a", worse="b", delta=0.3, delta_reason="why")
    result = judge(claim, {"a": {1: 80.0, 2: 80.3, 3: 80.1}, "b": {1: 79.0, 2: 79.2, 3: 79.3}})
    out = reproduction_json([], 1.0, [result])
    assert out["rule"] == decide.RULE_VERSION and out["deltas"] == {"cells": 1.0, "claims": [0.3]}
    assert out["claims"][0]["statements"][0]["rule"] == decide.RULE_VERSION
