"""stsbench/stats/sequential.py and its committed constants: exact first looks, fresh paths, the words, futility."""

from __future__ import annotations

import hashlib
import json
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
        ((10, "paired", 0), "0 statements"),
    ],
)
def test_a_plan_the_table_lacks_is_one_line(args, message):
    with pytest.raises(StsbenchError, match=message):
        sequential.plan(*args)


@pytest.mark.parametrize("maximum", [10, 20])
def test_above_the_tables_claims_the_constants_are_bonferronis_t_quantiles(maximum):
    """A claim of 7 statements was refused ("the table holds 1, ..., 6"): above the table each look's constant is
    its own t quantile at its spending increment over the statements, c_k = t^-1(n_k - 1; 1 - da_k/m), rounded
    up to three figures; at m = 6, equal to the simulated table at the first look, never narrower, 3-4% wider at
    the last."""
    from scipy import stats

    table = sequential.plan(maximum, "paired", 6)
    for m in (6, 7, 19):
        steps = np.diff([0.0, *table.spent])
        exact = [stats.t.ppf(1 - a / m, n - 1) for n, a in zip(table.looks, steps, strict=True)]
        bound = sequential.bonferroni(table.looks, table.spent, m)
        # each the exact quantile rounded up at its third significant figure
        unit = [10 ** (math.floor(math.log10(e)) - 2) for e in exact]
        assert all(e <= c < e + u for c, e, u in zip(bound, exact, unit, strict=True)), (bound, exact)
        assert all(abs(c / u - round(c / u)) < 1e-9 for c, u in zip(bound, unit, strict=True)), bound
        if m > 6:
            at = sequential.plan(maximum, "paired", m)
            assert at.constants == bound and at.rule == "Bonferroni over looks and statements"
    six = sequential.bonferroni(table.looks, table.spent, 6)
    assert six[0] == table.constants[0] and table.rule == "the table"
    assert all(b >= t for b, t in zip(six, table.constants, strict=True)), (six, table)  # never narrower
    assert 1.03 <= six[-1] / table.constants[-1] <= 1.04, (six, table)  # the last look: 3-4% wider


@pytest.mark.parametrize("settings", [8, 20])
def test_an_argmax_of_7_and_19_statements_is_planned_and_judged_at_its_looks(settings):
    """An argmax over a sweep (7 to 19 statements) was refused; each statement is judged at its look with the
    Bonferroni constants, a clear best decided early, a setting the best does not beat left open."""
    from stsbench.stats.claims import Argmax, judge

    rng = np.random.default_rng(settings)
    base = {s: float(v) for s, v in enumerate(rng.normal(80.0, 0.5, 10), start=1)}
    names = [f"s{i}" for i in range(settings)]
    scores = {n: {s: v - 2.0 * (i > 1) + rng.normal(0, 0.1) for s, v in base.items()} for i, n in enumerate(names)}
    claim = Argmax(kind="argmax", best="s0", among=tuple(names))
    judged = judge(claim, scores, until=10)
    at = sequential.plan(10, "paired", settings - 1)
    assert len(judged.statements) == settings - 1 and at.rule.startswith("Bonferroni")
    clear = judged.statements[1:]  # s0 against s2...: 2 points above, a spread of about 0.14
    assert all(st.note.startswith("sequential: the look at") and st.interval.n[0] < 10 for st in clear), clear
    assert all(st.interval.level == pytest.approx(at.level(st.interval.n[0])) for st in clear)
    assert judged.statements[0].outcome not in ("supported", "supported, by more than δ")  # s0 against s1: a tie


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
    left_out = ["--quantised-paths", "0", "--claim-paths", "0"]  # the new parts: the next test's
    args = ["--runs", "3000", "--verify", "60", *left_out, "--processes", "1", "--out", str(out)]
    assert calibration.main(args) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith(f"# the rule's tables\n\n{calibration.MARKER}\n\n## The sequential plan")
    assert "an older section" not in text and text.count("| 0.5 | +2δ |") == 2  # M = 10 and 20
    assert "expected seeds" in capsys.readouterr().out


def test_the_calibration_counts_quantised_figures_and_claims_of_many_statements(tmp_path):
    # --reduced: the grid left out; the argmax of 19 statements (Bonferroni's constants; every statement's look and
    # word checked against claims.judge on 10 paths a scenario, exit 1 on one disagreement) at truths 0, +δ, −δ and
    # mixed, and one quantised published cell (h 0.2, seed std 0.1, at +δ): each side within its bound
    out = tmp_path / "calibration.md"
    out.write_text(f"# the rule's tables\n\n{calibration.MARKER}\n\nan older section\n", encoding="utf-8")
    counts = ["--quantised-paths", "1000", "--claim-paths", "4000", "--claim-verify", "10"]
    assert calibration.main(["--reduced", *counts, "--processes", "1", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    # on two processes, the costliest first: the same tables (only the line with the command and times differs)
    forked = tmp_path / "forked.md"
    forked.write_text(f"# the rule's tables\n\n{calibration.MARKER}\n", encoding="utf-8")
    assert calibration.main(["--reduced", *counts, "--processes", "2", "--out", str(forked)]) == 0
    timed = [line for line in text.splitlines() if "Command `" in line]
    assert len(timed) == 1 and "1 process:" in timed[0] and "--processes 1" in timed[0]
    assert [ln for ln in text.splitlines() if ln not in timed] == [
        ln for ln in forked.read_text(encoding="utf-8").splitlines() if "Command `" not in ln
    ]
    assert text.startswith(f"# the rule's tables\n\n{calibration.MARKER}\n\n## The sequential plan")
    assert "### At most" not in text and "(above)" not in text and "an older section" not in text
    assert "### Quantised figures (at most 10 seeds)" in text and "### Claims of 19 statements" in text
    assert "Then quantised figures and claims of 19 statements. Command" in text
    cells = [line.split(" | ") for line in text.splitlines() if line.startswith("| published cell")]
    claims = [line.split(" | ") for line in text.splitlines() if line.startswith("| 19 |")]
    assert len(cells) == 1 and cells[0][1:4] == ["0.2", "0.1", "+1δ (+1.0000)"], cells
    assert len(claims) == 4 and all(c[1].startswith("Bonferroni over looks and statements: 127, ") for c in claims)
    for rates, paths in [*((c[4:6], 1000) for c in cells), *((c[3:5], 4000) for c in claims)]:
        assert all(0 <= float(r) <= calibration.binomial_bound(paths) for r in rates), rates
    # the quantised truth, exact: 0 where both laws are one, δ where the grid is symmetric about both means, and
    # decision_calibration.py's Monte Carlo one (400,000 draws) within its error
    assert calibration.quantised_truth(0.0, 0.5, 100 / 1725) == 0.0
    assert calibration.quantised_truth(0.5, 0.1, 0.2) == pytest.approx(0.5, abs=1e-9)
    drawn = calibration.fixed_rule.quantised_truth(0.3, 0.1, np.random.default_rng(0))
    assert calibration.quantised_truth(0.3, 0.1, 0.2) == pytest.approx(drawn, abs=0.002)


def test_the_vectorised_words_are_directionals():
    rng = np.random.default_rng(3)
    low = rng.normal(0, 1, 4000)
    high = low + rng.exponential(1.0, 4000)
    codes = sequential.words(low, high, 0.5)
    for lo, hi, code in zip(low, high, codes, strict=True):
        iv = decide.Interval(float((lo + hi) / 2), 1.0, 5.0, float(lo), float(hi), "paired", (5, 5), 5)
        assert sequential.WORDS[code] == decide.directional(iv, 0.5).outcome


def test_a_statement_is_judged_from_its_recorded_seeds_as_the_plan_stopped_it():
    at = sequential.plan(10)
    rng = np.random.default_rng(5)
    x = rng.normal(0.6, 0.5, (300, 10))
    stop, final = sequential.simulate(x, 0.5, at)
    hows = set()
    for row, n, code in zip(x, stop, final, strict=True):
        a = {seed: float(v) for seed, v in enumerate(row, start=1)}
        found = sequential.path(a, dict.fromkeys(a, 0.0), 0.5, at)
        assert (found.n, found.decision.outcome) == (n, sequential.WORDS[code])
        # a statement stopped at n keeps its word whatever seeds come after (only its first n are read)
        more = {**a, 11: 99.0, 12: -99.0}
        assert sequential.path(more, dict.fromkeys(more, 0.0), 0.5, at).decision == found.decision
        hows.add(found.how)
    assert {"decided", "maximum"} <= hows


def test_a_path_short_of_a_decision_is_open_and_names_its_look():
    at = sequential.plan(10)
    a = {1: 0.1, 2: 0.9, 3: 0.4, 4: 1.2}  # four seeds: the looks at 3 and 4, neither decisive
    found = sequential.path(a, dict.fromkeys(a, 0.0), 0.5, at)
    assert (found.n, found.how, found.settled) == (4, "open", False)
    assert found.decision.outcome == decide.INCONCLUSIVE and at.next_look(found.n + 1) == 5
    two = sequential.path({1: 0.1, 2: 0.2}, {1: 0.0, 2: 0.0}, 0.5, at)
    assert (two.n, two.how) == (2, "open") and "first look is at 3" in two.decision.note
    # a cell: the published run's constants, never futility
    cell = sequential.path_cell(
        {s: 80.0 + 0.1 * s for s in range(1, 11)}, 80.5, 1.0, sequential.plan(10, "cell")
    )
    assert cell.how == "decided" and cell.decision.outcome == decide.REPRODUCED


def test_refine_goes_on_past_a_direction_until_its_size_is_shown_or_out_of_reach():
    at = sequential.plan(10)
    rng = np.random.default_rng(8)
    x = rng.normal(0.5, 0.5, (400, 10))  # at δ: supported often, its size slow to show
    stop, final = sequential.simulate(x, 0.5, at, refine=True)
    plain, _ = sequential.simulate(x, 0.5, at)
    assert (stop >= plain).all() and stop.mean() > plain.mean()  # more seeds, never fewer
    words = {sequential.WORDS[c] for c in final}
    hows = set()
    for row, n, code in zip(x, stop, final, strict=True):  # the vectorised plan is path()'s
        a = {seed: float(v) for seed, v in enumerate(row, start=1)}
        found = sequential.path(a, dict.fromkeys(a, 0.0), 0.5, at, refine=True)
        assert (found.n, found.decision.outcome) == (n, sequential.WORDS[code])
        hows.add(found.how)
        if found.how == "size":  # stopped with its direction, the size out of reach
            assert (
                found.decision.outcome in sequential.UNSIZED
                and "would not show its size" in found.describe(at)
            )
        if found.how == "decided":
            assert found.decision.outcome not in sequential.UNSIZED
    assert {"decided", "maximum", "size"} <= hows and decide.SUPPORTED_MORE in words
    # open while only the direction is shown, its note saying so (seeds_to_add reads it)
    a = {1: 0.9, 2: 1.1, 3: 1.0, 4: 1.05}
    found = sequential.path(a, dict.fromkeys(a, 0.0), 0.9, at, refine=True)
    assert found.how == "decided" or found.decision.outcome in sequential.UNSIZED
    shown = sequential.path(a, dict.fromkeys(a, 0.0), 0.9, at)
    if shown.decision.outcome in sequential.UNSIZED:
        assert (found.how, found.describe(at)[:16]) == ("open", "sequential: open")


def test_refine_keeps_the_plans_guarantee():
    # the words of every look hold together: at a truth of δ (supported; never by less, never reversed) and of
    # 0 (no word but no difference or inconclusive is right), wrong words stay within 0.025 a side + 3 SE
    at = sequential.plan(10)
    rng = np.random.default_rng(11)
    runs = 20_000
    for truth, wrong in (
        (0.5, (decide.SUPPORTED_LESS, *decide.OPPOSITE)),
        (0.0, (*decide.DIRECTIONS, *decide.OPPOSITE)),
    ):
        _, final = sequential.simulate(rng.normal(truth, 0.5, (runs, 10)), 0.5, at, refine=True)
        rate = np.isin(final, [sequential.WORDS.index(w) for w in wrong]).mean()
        assert rate <= 2 * (0.025 + 3 * math.sqrt(0.025 * 0.975 / runs)), rate


def test_a_cells_forecast_holds_the_published_figure():
    cell = sequential.plan(10, "cell")
    near = sequential.expected_seeds(0.1, 0.05, 1.0, cell)  # close to P, a small spread: the first looks
    edge = sequential.expected_seeds(1.0, 0.5, 1.0, cell)  # at δ: most of the maximum
    assert 3 <= near < 4.5 < edge <= 10
    _, final = sequential.simulate(np.random.default_rng(2).normal(0.1, 0.2, (500, 10)), 1.0, cell)
    assert {sequential.WORDS[c] for c in final} <= {
        decide.REPRODUCED,
        decide.NOT_REPRODUCED,
        decide.INCONCLUSIVE,
    }


def test_the_forecast_is_the_plans_expected_seeds():
    at = sequential.plan(10)
    big = sequential.expected_seeds(4 * 0.5, 0.25, 0.5, at)  # a large effect, a small spread: the first looks
    hard = sequential.expected_seeds(0.5, 0.5, 0.5, at)  # at δ itself: most of the maximum
    assert 3 <= big < 4.5 < hard <= 10
    assert sequential.expected_seeds(0.5, 0.5, 0.5, at) == hard  # a fixed seed: the same forecast


# -- claims and the report judged by the plan ------------------------------------------------------------------


def test_a_claims_paired_statements_are_judged_at_their_looks_the_rest_by_the_rule():
    from stsbench.stats.claims import Difference, Gap, Ordering, judge

    rng = np.random.default_rng(11)
    base = {s: float(v) for s, v in enumerate(rng.normal(80.0, 0.5, 10), start=1)}
    scores = {
        "a": {s: v + 1.2 + rng.normal(0, 0.3) for s, v in base.items()},  # a > b by more than δ, clearly
        "b": base,
        "c": {s + 100: v - 0.1 for s, v in base.items()},  # other seeds: not paired, rule 3
    }
    diff = Difference(kind="difference", better="a", worse="b")
    fixed_n = judge(diff, scores)
    seq = judge(diff, scores, until=10)
    (st,) = seq.statements
    at = sequential.plan(10)
    found = sequential.path(scores["a"], scores["b"], 0.5, at)
    assert found.how == "decided" and found.n < 10  # stopped early: its word read off its first n seeds
    assert st.note == found.describe(at) == f"sequential: the look at {found.n} seeds (at most 10), decided"
    assert st.outcome == found.decision.outcome and st.interval.n == (found.n, found.n)
    assert st.p_holm is None  # no Holm: the constants hold the claim's level
    assert fixed_n.statements[0].interval.n == (10, 10)
    # a setting with seeds the plan added for another statement: this one still read at its look, on the seeds
    # both share (not by rule 3 on 10 against 6)
    short = {**scores, "b": {k: v for k, v in base.items() if k <= 6}}
    (again,) = judge(diff, short, until=10).statements
    found6 = sequential.path(short["a"], short["b"], 0.5, at)
    assert again.note == found6.describe(at) and again.interval.n == (found6.n, found6.n)
    # an ordering of two statements: each at 0.025/2 a side, one of them on unshared seeds (rule 3, all seeds)
    order = judge(Ordering(kind="ordering", order=["a", "b", "c"]), scores, until=10)
    paired, welch = order.statements
    two = sequential.plan(10, "paired", 2)
    assert paired.note.startswith("sequential:") and paired.interval.level == pytest.approx(
        two.level(paired.interval.n[0])
    )
    assert welch.note is None or "sequential" not in welch.note
    assert welch.interval.n == (10, 10) and welch.interval.level == pytest.approx(0.95)
    # a gap is not covered: judged as without the plan
    gap = Gap(kind="gap", wider=("a", "b"), narrower=("b", "c"))
    assert judge(gap, scores, until=10) == judge(gap, scores)


def test_the_report_judges_its_claims_by_the_plan_and_records_it(tmp_path, capsys):
    import yaml
    from helpers import run_cli
    from seed_results import make_seed_results

    results = make_seed_results(tmp_path / "results")
    claims = [{"kind": "difference", "better": "esimcse", "worse": "simcse", "figure": "STS12"}]
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(claims), encoding="utf-8")
    args = ["report", "--results", results, "--out", tmp_path / "rep", "--claims", tmp_path / "claims.yaml"]
    code, _, err = run_cli([*args, "--sequential", "10"], capsys)
    assert code == 0, err
    record = json.loads((tmp_path / "rep" / "reproduction.json").read_text(encoding="utf-8"))
    assert record["sequential"] == sequential.plan(10).to_dict()
    (st,) = record["claims"][0]["statements"]
    # the fixture's seeds differ by exactly 5 on each: no spread, decided at the first look
    assert st["note"] == "no spread over seeds; sequential: the look at 3 seeds (at most 10), decided"
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "**Seeds added by the sequential plan (at most 10;" in md and "Every other interval" in md
    # two groups of three seeds: 6 trainings against 20 at a fixed 10 a run; each other table says so
    assert "6 trainings against 20 at a fixed 10 seeds a run (14 saved)" in md
    assert (
        md.count("- The seeds were stopped by the sequential plan: a 95% interval here is descriptive") >= 3
    )
    assert "sequential: the look at 3 seeds (at most 10), decided)" in md  # the statements table says it
    # without the option: neither the plan nor its words
    code, _, err = run_cli(args, capsys)
    plain = json.loads((tmp_path / "rep" / "reproduction.json").read_text(encoding="utf-8"))
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert code == 0 and "sequential" not in plain
    assert "Seeds added by the sequential plan" not in md and "sequential: the look" not in md
    # a maximum the table lacks: one line, nothing written
    code, _, err = run_cli([*args[:4], tmp_path / "other", *args[5:], "--sequential", "12"], capsys)
    assert code == 2 and err.count("\n") == 1 and "at most 12 seeds" in err
    assert not (tmp_path / "other" / "report.md").exists()
    # --refine: recorded, said at the top; without --sequential one line, nothing written
    code, _, err = run_cli([*args, "--sequential", "10", "--refine"], capsys)
    record = json.loads((tmp_path / "rep" / "reproduction.json").read_text(encoding="utf-8"))
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert code == 0 and record["sequential"] == {**sequential.plan(10).to_dict(), "refine": True}
    assert "Seeds until the verdict is decided, until each size is shown)" in md
    code, _, err = run_cli([*args[:4], tmp_path / "other", *args[5:], "--refine"], capsys)
    assert code == 2 and err.strip() == "error: --refine applies to --sequential"
    assert not (tmp_path / "other").exists()


def test_a_cell_of_one_run_is_judged_at_its_look_the_others_by_the_rule():
    from stsbench.published.check import verdict
    from stsbench.reports.reproduction import looked

    by_seed = {s: 80.0 + 0.05 * (s % 3) for s in range(1, 11)}  # tight seeds, 0.2 from the published 80.25
    v = verdict("STS12", 80.25, list(by_seed.values()), 1.0, resolution=0.0)
    seq = looked(v, by_seed, 1, None, 10)
    at = sequential.plan(10, "cell")
    found = sequential.path_cell(by_seed, 80.25, 1.0, at, "STS12")
    assert seq.decision.note.endswith(found.describe(at)) and seq.status == found.decision.outcome
    assert seq.decision.interval.n[0] == found.n < 10 and seq.mean == v.mean  # the summary stays all seeds'
    assert looked(v, by_seed, 1, None, None) is v  # no plan
    assert looked(v, by_seed, 3, None, 10) is v  # a figure of three runs: the rule, once
    assert looked(v, by_seed, 1, 5, 10) is v  # the best of five: the rule, once
    assert looked(v, {**by_seed, 11: float("nan")}, 1, None, 10) is v  # a seed not finite: the rule, capped


# -- reproduce --until-decided: which runs get seeds before the next look ---------------------------------------


def _verdicts(recipe, words: dict[tuple[int, int], str], n: int = 3, contradicted: int | None = None) -> dict:
    """reproduction.json's claims for ``recipe``: every statement supported at ``n`` seeds but ``words``."""
    claims = []
    for i, claim in enumerate(recipe.claims):
        sts = [
            {"outcome": words.get((i, j), decide.SUPPORTED), "n": [n, n]}
            for j in range(len(claim.statements()))
        ]
        claims.append(
            {"verdict": decide.CONTRADICTED if i == contradicted else "supported", "statements": sts}
        )
    return {"claims": claims, "targets": []}


def test_the_report_step_of_a_sequential_reproduction_says_so_in_its_title_and_options():
    from pathlib import Path

    from stsbench.recipes import load_recipe
    from stsbench.reproduce.plan import report_args

    recipe = load_recipe("simcse-dropout-mini")
    fixed = report_args(recipe, Path("out"))
    assert "--sequential" not in fixed and fixed[fixed.index("--title") + 1] == recipe.report.title
    args = report_args(recipe.model_copy(update={"until": 10, "refine": True}), Path("out"))
    title = args[args.index("--title") + 1]
    assert title == f"{recipe.report.title}, then seeds until decided (at most 10 a run)"
    assert args[-3:] == ["--sequential", "10", "--refine"]


def test_seeds_go_only_to_the_runs_an_open_verdict_reads_up_to_the_next_look():
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.plan import seeds_to_add

    recipe = load_recipe("simcse-dropout-mini").model_copy(update={"until": 10})
    # the difference 0.1 > fixed-0.1 open: those two runs to the look at 4, on the same seed id
    open_ = {(1, 0): decide.INCONCLUSIVE}
    assert seeds_to_add(recipe, _verdicts(recipe, open_)) == {"dropout.dropout-0.1": [4], "fixed-0.1": [4]}
    # everything settled (decided, or stopped by futility): nothing to add
    assert seeds_to_add(recipe, _verdicts(recipe, {})) == {}
    assert seeds_to_add(recipe, _verdicts(recipe, {(1, 0): sequential.FUTILE})) == {}
    # a contradicted claim is settled whole, its other statements open or not
    assert seeds_to_add(recipe, _verdicts(recipe, {(0, 2): decide.INCONCLUSIVE}, contradicted=0)) == {}
    # at the maximum: judged there, nothing more
    assert seeds_to_add(recipe, _verdicts(recipe, open_, n=10)) == {}
    # runs with more seeds than their partner's: the partner catches up to the look after the shared seeds
    ahead = recipe.with_seeds({"dropout.dropout-0.1": [4, 5]})
    assert seeds_to_add(ahead, _verdicts(ahead, open_)) == {"fixed-0.1": [4]}
    # a published cell against one run: its run only
    cells = {"claims": [], "targets": [{"group": "fixed-0.1", "cells": [{"verdict": decide.INCONCLUSIVE}]}]}
    assert seeds_to_add(recipe, cells) == {"fixed-0.1": [4]}
    # --refine: a direction shown whose size the plan left open, as its note says; not once settled
    going = {(1, 0): decide.SUPPORTED}
    refine = recipe.model_copy(update={"refine": True})
    noted = _verdicts(refine, going)
    noted["claims"][1]["statements"][0]["note"] = (
        "sequential: open at 3 seeds (at most 10), the next look at 4"
    )
    assert seeds_to_add(refine, noted) == {"dropout.dropout-0.1": [4], "fixed-0.1": [4]}
    assert seeds_to_add(recipe, noted) == {}  # without --refine: supported is settled
    noted["claims"][1]["statements"][0]["note"] = (
        "sequential: the look at 5 seeds (at most 10), stopped: more"
    )
    assert seeds_to_add(refine, noted) == {}
    # the next integers after a run's largest seed
    gap = recipe.model_copy(
        update={"runs": tuple(r.model_copy(update={"seeds": (2, 7, 9)}) for r in recipe.runs)}
    )
    assert seeds_to_add(gap, _verdicts(gap, open_))["fixed-0.1"] == [10]


def test_the_dry_run_forecasts_each_claims_seeds_from_an_editions_verdicts(capsys, tmp_path):
    from helpers import DATA, run_cli

    from stsbench.recipes import load_recipe
    from stsbench.reproduce.plan import forecast

    edition = ROOT / "reports" / "simcse-dropout-mini"
    recipe = load_recipe("simcse-dropout-mini").model_copy(update={"until": 10})
    verdicts = json.loads((edition / "reproduction.json").read_text(encoding="utf-8"))
    claims, per_run = forecast(recipe, verdicts)
    assert [len(e) for _, e in claims] == [5, 1, 2]  # each claim's statements
    assert claims[0][0].startswith("claim 1 (") and claims[1][0].startswith("claim 2 (the same mask")
    assert all(3 <= x <= 10 for _, e in claims for x in e)
    # a run's seeds: the slowest statement that reads it; fixed-0.1 only in claim 2
    assert per_run["fixed-0.1"] == pytest.approx(claims[1][1][0])
    assert per_run["dropout.dropout-0.1"] == pytest.approx(max(x for _, e in claims for x in e))
    # a statement on a large difference with a small spread: its first looks
    big = {
        "claims": [{"statements": [{"diff": 3.0, "se": 0.1, "used": 3, "design": "paired", "delta": 0.5}]}]
    }
    one = recipe.model_copy(update={"claims": recipe.claims[1:2]})
    assert forecast(one, big)[0][0][1][0] < 4
    # refine: never fewer seeds
    assert all(
        r >= p - 0.05
        for (_, e), (_, f) in zip(
            claims, forecast(recipe.model_copy(update={"refine": True}), verdicts)[0], strict=True
        )
        for p, r in zip(e, f, strict=True)
    )
    # a published cell against one run: the cell plan at its m - P and std; one of three runs: the maximum
    cells = [
        {"task": "STSBenchmark", "diff": 0.1, "std": 0.05, "difference": 1.0},
        {"task": "SICKRelatedness", "diff": None, "std": None, "difference": 1.0},  # not checked: no forecast
    ]
    one_run = {
        "claims": [],
        "targets": [{"key": "simcse/sts/unsup-simcse-bert-base", "group": "fixed-0.1", "cells": cells}],
    }
    ((label, expected),) = forecast(recipe.model_copy(update={"claims": ()}), one_run)[0]
    assert (
        label == "simcse/sts/unsup-simcse-bert-base against fixed-0.1"
        and len(expected) == 1
        and expected[0] < 4.5
    )
    # the command: per claim, and the trainings it adds with their cost; the edition's folder only read
    before = (edition / "reproduce.json").read_bytes()
    args = ["reproduce", "simcse-dropout-mini", "--out", edition, "--until-decided", "--dry-run"]
    code, out, err = run_cli([*args, "--data-dir", DATA], capsys)
    assert code == 0, err
    assert "sequential plan (--until-decided, at most 10 seeds a run):" in out
    assert "claim 2 (the same mask for both views" in out and "expected trainings added: " in out
    assert (edition / "reproduce.json").read_bytes() == before
    # a new folder: no verdicts to forecast from, said in one line
    code, out, err = run_cli([*args[:3], tmp_path / "new", *args[4:], "--data-dir", DATA], capsys)
    assert code == 0 and "no forecast: " in out and "holds no verdicts yet" in out
    # --refine or --max-seeds without --until-decided: one line
    for extra in (["--refine"], ["--max-seeds", "10"]):
        code, _, err = run_cli([*args[:3], tmp_path / "new", "--dry-run", *extra], capsys)
        assert code == 2 and err.strip().endswith(f"{extra[0]} applies to --until-decided")


@pytest.mark.slow  # the shared tiny reproduction (made once a session), copied without its weights
def test_an_edition_kept_without_weights_stays_done_when_the_plan_adds_seeds(tiny, clean, tmp_path):
    import shutil

    from helpers import DATA

    from stsbench.recipes import load_recipe
    from stsbench.reproduce.plan import planned
    from stsbench.reproduce.state import load_state, mark_weights_not_kept

    out = tmp_path / "edition"
    shutil.copytree(clean, out, ignore=shutil.ignore_patterns("runs"))  # shared as editions are: no weights
    recipe = load_recipe(tiny / "tiny.yaml")

    def trainings(state) -> set[str]:
        plan, actions = planned(recipe, out, DATA, state, "keep")
        return {actions[s.id][0] for s in plan.steps if s.kind == "train"}

    state = load_state(out)
    assert trainings(state) == {"skip"}
    plan, _ = planned(recipe, out, DATA, state, "keep")
    mark_weights_not_kept(plan, state)
    (out / "runs" / "simcse" / "seed-3").mkdir(parents=True)  # the plan's first added seed begins training
    assert trainings(state) == {"skip"}  # marked: still done, nothing retrained
    assert trainings(load_state(out)) == {"run"}  # unmarked, an absent seed folder reads as deleted by hand


def test_every_look_reads_the_figures_resolution_as_the_fixed_rule_does():
    """A claim judged with the figures' resolution 0.2 read [0.90, 0.90] "no spread over seeds" and was decided at
    three seeds (the fixed rule: [0.55, 1.25]), and a cell of three equal seeds was *reproduced* at its first look
    (no spread): each look now gives the fixed rule's interval at its own constant, the cell open there (the look's
    interval is wider than the fixed 95% one, which reproduces it)."""
    from stsbench.stats.claims import Difference, judge

    scores = {"A": {1: 91.0, 2: 91.0, 3: 91.0}, "B": {1: 90.1, 2: 90.1, 3: 90.1}}
    at = sequential.plan(10)
    (st,) = judge(Difference(kind="difference", better="A", worse="B"), scores, resolution=0.2, until=10).statements
    same = decide.difference(scores["A"], scores["B"], level=at.level(3), resolution=0.2)
    assert (st.interval.low, st.interval.high) == (same.low, same.high) and st.interval.spread, st.interval
    assert st.outcome == decide.INCONCLUSIVE and "open at 3 seeds" in st.note, st.note
    fixed = judge(Difference(kind="difference", better="A", worse="B"), scores, resolution=0.2).statements[0]
    assert fixed.interval.low > 0.5 and fixed.interval.high < 1.3  # the fixed rule's 95%: [0.55, 1.25]
    # a cell of three seeds on the published figure, at the figures' resolution 0.2: open at its first look
    seeds = {1: 81.0, 2: 81.0, 3: 81.0}
    cell = sequential.path_cell(seeds, 81.0, 1.0, sequential.plan(10, "cell"), "STS-B", resolution=0.2)
    assert cell.decision.outcome == decide.INCONCLUSIVE and cell.n == 3, cell
    assert decide.cell(list(seeds.values()), 81.0, 1.0, resolution=0.2).outcome == decide.REPRODUCED


def test_a_looks_cannot_be_reached_note_reads_the_last_looks_constant():
    """Three seeds 0.1 apart at the first look of a cell plan (M = 10): the first look's constant (29.1) would put
    the limit at ±3.36 and say *reproduced* cannot be reached; the last look's (2.32) reaches ±0.24, so no such note.
    A spread of 0.6 stays out of reach at the last look, and the note names it."""
    at = sequential.plan(10, "cell")
    near = sequential.look_cell([80.0, 80.1, 80.2], 80.0, 1.0, at)
    assert near.look is None and "cannot be reached" not in (near.note or ""), near.note
    wide = sequential.look_cell([79.4, 80.0, 80.6], 80.0, 1.0, at)
    assert "reproduced cannot be reached by the last look (10 seeds: ±1.46 ≥ δ at the spread of 3 seeds)" in wide.note
    walked = sequential.path_cell({1: 79.4, 2: 80.0, 3: 80.6}, 80.0, 1.0, at)
    assert walked.decision.look == 3 and walked.decision.interval_name.startswith("repeated interval of the look at 3")
