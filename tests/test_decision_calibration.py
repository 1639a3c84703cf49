"""benchmarks/decision_calibration.py: a reduced grid within bound on each side, every n < 3 draw inconclusive, and
mutations of the rule (no few-seeds cap, one side of the best-of-K quantiles) caught."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stsbench.stats import decide
from stsbench.stats.claims import Difference, Gap, Plateau, judge
from stsbench.stats.seeds import t_ppf

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import decision_calibration as cal  # noqa: E402

SCALE = (
    0.1  # of the full run's draws: 2,000 a scenario, 10,000 for the best of 10 and ±0.9δ cells, 200 at n < 3
)
# the reduced grid takes ~30 s on one process: it runs in the main test job, not again at the dependency floors,
# where tests/test_verdicts_second.py and tests/test_decide.py check the rule's functions themselves
grid = pytest.mark.slow


@pytest.fixture(scope="module")
def rows():
    return cal.calibrate(reduced=True, seed=0, scale=SCALE)


@grid
def test_the_reduced_grid_has_every_kind_design_and_law(rows):
    assert {r["kind"] for r in rows} == set(cal.OUTCOMES)
    designs = {r["design"] for r in rows}
    assert {"paired ρ 0.5", "paired ρ 0.9", "disjoint", "partly 1/5 ρ -0.5", "partly 2/5 ρ -0.5"} <= designs
    assert {*cal.GAPS, cal.GAP4} <= designs
    assert {"against exact", "against one run", "against best of 5", "against best of 10"} <= designs
    assert {r["law"] for r in rows} == {
        "normal",
        "quantised",
        "outliers",
        "outliers per setting",
        "collapsed",
    }
    assert any(r["std"] == "0.25 / 1" for r in rows)  # unequal spreads
    near = [r for r in rows if abs(r["truth"]) == 0.9]
    assert near and all(r["kind"] == "cell" and r["draws"] >= cal.MANY * cal.DRAWS * SCALE for r in near)
    for r in rows:
        assert sum(r["rates"].values()) == pytest.approx(1.0)
        assert set(r["rates"]) <= set(cal.OUTCOMES[r["kind"]])


@grid
def test_every_counted_scenario_is_within_its_bound_on_each_side(rows):
    counted = [r for r in rows if r["status"] in ("ok", "ABOVE BOUND")]
    assert len(counted) > 100 and len(counted) + len([r for r in rows if r["n"] < 3]) == len(rows)
    assert cal.failures(rows) == []
    for r in counted:
        assert set(r["wrong_rate"]) == {cal.UPPER, cal.LOWER}
        assert r["bound"] == pytest.approx(cal.bound(r["draws"], 0.025))
        assert (max(r["wrong_rate"].values()) <= r["bound"]) == (r["status"] == "ok")


@grid
def test_every_draw_below_three_seeds_is_inconclusive(rows):
    few = [r for r in rows if r["n"] < 3]
    assert len({r["kind"] for r in few}) == len(cal.OUTCOMES)
    for r in few:
        assert r["status"] == "n < 3: every draw inconclusive" and r["decisive"] == 0
        assert set(r["rates"]) <= set(cal.UNDECIDED), r
    text = cal.markdown(rows, "head")
    assert f"## Fewer than 3 seeds: every draw asserted inconclusive ({len(few)} scenarios" in text


@grid
def test_a_large_effect_is_decided_right(rows):
    main = {
        ("directional", "paired ρ 0.5"),
        ("claim", "2 statements, shared seeds"),
        ("collapse", "one-sample"),
    }
    found = [r for r in rows if (r["kind"], r["design"]) in main and r["law"] == "normal" and r["n"] == 5]
    for r in (r for r in found if abs(r["truth"]) == 2):  # 2δ at five seeds: found two times in three or more
        assert r["power"] >= 0.65, (r["kind"], r["design"], r["truth"], r["rates"])
    assert len([r for r in found if abs(r["truth"]) == 2]) == 6


def test_wrong_outcomes_per_side_at_the_truth_equal_to_delta():
    d = 0.5
    at = cal.wrong_outcomes("directional", d, d)
    assert at[cal.UPPER] == (decide.SUPPORTED_MORE,)
    assert {decide.SUPPORTED_LESS, decide.NO_DIFFERENCE, *decide.OPPOSITE} <= set(at[cal.LOWER])
    zero = cal.wrong_outcomes("directional", 0.0, d)
    assert set(zero[cal.UPPER]) == set(decide.DIRECTIONS)
    assert set(zero[cal.LOWER]) == {*decide.OPPOSITE, decide.CONTRADICTED}
    below = cal.wrong_outcomes("claim", -d, d)
    assert set(below[cal.LOWER]) == {decide.REVERSED_MORE, decide.CONTRADICTED}
    assert set(below[cal.UPPER]) == {*decide.DIRECTIONS, decide.NO_DIFFERENCE, decide.REVERSED_LESS}
    assert cal.wrong_outcomes("cell", 1.0, 1.0) == {
        cal.UPPER: (cal.NOT_REPRODUCED_UP,),
        cal.LOWER: (decide.REPRODUCED, cal.NOT_REPRODUCED_DOWN),
    }
    assert cal.wrong_outcomes("cell", 0.9, 1.0) == {
        cal.UPPER: (cal.NOT_REPRODUCED_UP,),
        cal.LOWER: (cal.NOT_REPRODUCED_DOWN,),
    }
    assert cal.wrong_outcomes("plateau", -d, d) == {
        cal.UPPER: (decide.WITHIN, cal.BEYOND_UP),
        cal.LOWER: (cal.BEYOND_DOWN,),
    }
    assert cal.wrong_outcomes("collapse", 0.0, 0.5) == {
        cal.UPPER: (decide.SUPPORTED,),
        cal.LOWER: (decide.CONTRADICTED,),
    }
    assert cal.wrong_outcomes("family", 2 * d, d)[cal.UPPER] == ()
    assert cal.wrong_outcomes("family", d, d)[cal.UPPER] == (cal.STAR_UP, cal.STAR_BOTH)
    assert cal.bound(20_000) == pytest.approx(0.025 + 3 * math.sqrt(0.025 * 0.975 / 20_000))


def test_every_outcome_is_one_the_rule_can_give():
    """The vocabulary of rule 3: a renamed word would stop the run rather than count as right."""
    assert set(cal.OUTCOMES["directional"]) == set(decide.VERDICTS)
    assert decide.CONTRADICTED in cal.OUTCOMES["claim"] and decide.REVERSED_MORE in cal.OUTCOMES["claim"]
    assert cal.right_outcomes("directional", 0.0, 0.5) == (decide.NO_DIFFERENCE,)
    assert cal.right_outcomes("cell", 2.0, 1.0) == (cal.NOT_REPRODUCED_UP,)


def _fixed_rates(monkeypatch, stages: list[float], outcome: str = decide.REVERSED) -> list[int]:
    """A scenario whose k-th drawing gives ``outcome`` at ``stages[k]``; returns the draws asked."""
    asked: list[int] = []

    def prepare(sc, rng):
        def run(rng, draws):
            wrong = round(stages[len(asked)] * draws)
            asked.append(draws)
            return [outcome] * wrong + [decide.INCONCLUSIVE] * (draws - wrong)

        sc.run = run

    monkeypatch.setattr(cal, "_prepare", prepare)
    return asked


def test_a_side_above_its_bound_is_drawn_again_fresh_and_larger(monkeypatch):
    """At 20,000 draws a side at its nominal level lands above nominal + 3 SE one time in 740: five times as many
    fresh draws decide, so a grid of several hundred sides at nominal does not fail by chance; a real excess stays."""
    sc = cal.Scenario("directional", "paired ρ 0.9", 10, 0.5, 0.0)
    asked = _fixed_rates(monkeypatch, [0.0285, 0.0251])
    row = cal.judge_scenario(sc, 0, 0)
    assert asked == [cal.DRAWS, cal.CONFIRM * cal.DRAWS] and row["status"] == "ok"
    assert row["draws"] == cal.CONFIRM * cal.DRAWS and row["bound"] == pytest.approx(cal.bound(100_000))
    asked = _fixed_rates(monkeypatch, [0.0285, 0.0275])
    assert cal.judge_scenario(sc, 0, 0)["status"] == "ABOVE BOUND"
    asked = _fixed_rates(monkeypatch, [0.0280])
    assert cal.judge_scenario(sc, 0, 0)["status"] == "ok" and asked == [cal.DRAWS]


def test_a_decisive_draw_below_three_seeds_fails_the_run(monkeypatch):
    sc = cal.Scenario("directional", "paired ρ 0.5", 2, 0.5, 0.0, draws=cal.FEW_DRAWS)
    _fixed_rates(monkeypatch, [1 / cal.FEW_DRAWS], decide.NO_DIFFERENCE)
    row = cal.judge_scenario(sc, 0, 0)
    assert row["status"] == "DECISIVE AT n < 3" and row["decisive"] == 1
    assert cal.failures([row]) == [
        "DECISIVE AT n < 3: directional paired ρ 0.5 normal n=2 std=0.5 truth=0 (+0): 1 of 2000 draws "
        "(inconclusive 0.9995, no difference that matters 0.0005)"
    ]


def test_an_outcome_the_calibration_does_not_know_stops_it(monkeypatch):
    _fixed_rates(monkeypatch, [0.5], "supported by the old words")
    with pytest.raises(RuntimeError, match="does not know"):
        cal.judge_scenario(cal.Scenario("plateau", "disjoint", 5, 0.5, 0.0), 0, 0)


# -- mutations of the rule: the calibration must catch them -----------------------------------------------------


FEW_SEED_SCENARIOS = [
    cal.Scenario("directional", "paired ρ 0.5", 2, 0.5, 0.0, draws=cal.FEW_DRAWS),
    cal.Scenario("directional", "(A − B) > (B − C), all on the same seeds", 2, 0.5, 2.0, draws=cal.FEW_DRAWS),
    cal.Scenario("cell", "against exact", 2, 0.5, 2.0, delta=decide.CELL_DELTA, draws=cal.FEW_DRAWS),
]


@pytest.mark.parametrize(
    "mutation",
    [("MIN_SEEDS", 2), ("few", lambda iv: False)],
    ids=["MIN_SEEDS=2", "few() never"],
)
def test_without_the_few_seeds_cap_a_draw_below_three_seeds_turns_decisive(monkeypatch, mutation):
    for i, sc in enumerate(FEW_SEED_SCENARIOS):  # the rule as it is: every draw inconclusive
        assert cal.judge_scenario(sc, 0, i)["status"] == "n < 3: every draw inconclusive"
    monkeypatch.setattr(decide, *mutation)
    for i, sc in enumerate(FEW_SEED_SCENARIOS):
        row = cal.judge_scenario(sc, 0, i)
        assert row["status"] == "DECISIVE AT n < 3" and row["decisive"] > 0, row["rates"]
        assert cal.failures([row])


def test_without_the_few_seeds_cap_the_run_exits_1(monkeypatch, tmp_path, capsys):
    argv = [
        "--reduced",
        "--kinds",
        "cell",
        "--draws",
        "200",
        "--processes",
        "1",
        "--out",
        str(tmp_path / "c.md"),
    ]
    monkeypatch.setattr(decide, "MIN_SEEDS", 2)
    assert cal.main(argv) == 1
    assert "DECISIVE AT n < 3: cell against exact" in capsys.readouterr().err


def _one_sided(shift: str):
    """best_of_quantiles with one end moved to the middle of the two: that side of the interval too narrow."""
    exact = decide.best_of_quantiles

    def mutated(n: int, k: int):
        lo, hi = exact(n, k)
        mid = (lo + hi) / 2
        return (mid, hi) if shift == "lo" else (lo, mid)

    return mutated


def _t_shift():
    """The t-interval shifted by s·e_K, symmetric where the maximum's law is not: (m - P + s·e_K) ± t·s·√(1 + 1/n)."""

    def mutated(n: int, k: int):
        half = t_ppf(0.975, n - 1) * math.sqrt(1 + 1 / n)
        return -decide.expected_max(k) - half, -decide.expected_max(k) + half

    return mutated


@pytest.mark.parametrize(
    "mutation, n, side",
    [
        (lambda: _one_sided("lo"), 5, cal.LOWER),
        (lambda: _one_sided("hi"), 5, cal.UPPER),
        (_t_shift, 3, cal.LOWER),
    ],
    ids=["q_lo moved up", "q_hi moved down", "t-interval shifted by e_K"],
)
def test_one_side_of_the_best_of_k_interval_wrong_goes_above_its_bound(monkeypatch, mutation, n, side):
    """q_lo moved up (the upper end too low): *reproduced* at t = δ; q_hi moved down: *not reproduced* above δ; a
    symmetric interval about the maximum's mean misses low at three seeds."""
    sc = lambda: cal.Scenario("cell", "against best of 10", n, 0.5, 1.0, delta=decide.CELL_DELTA)  # noqa: E731
    exact = cal.judge_scenario(sc(), 0, 0, scale=0.05)  # 5,000 draws
    assert exact["status"] == "ok"
    monkeypatch.setattr(decide, "best_of_quantiles", mutation())
    row = cal.judge_scenario(sc(), 0, 0, scale=0.05)
    assert row["status"] == "ABOVE BOUND" and row["wrong_rate"][side] > row["bound"], row["wrong_rate"]


# -- the script's calls are the rule's verdicts ------------------------------------------------------------------


@pytest.mark.parametrize("design", ["paired ρ 0.5", "partly 2/5 ρ -0.5", "disjoint"])
def test_the_script_decides_as_claims_judge(design):
    """A claim of one statement: Holm over one statement changes nothing, so the direct calls are judge's verdict
    (a reversal by more than δ and a pair beyond the margin read *contradicted* as claims; within: *supported*)."""
    ids = cal._ids(design, 5)
    fa, fb = cal.pairs(np.random.default_rng(1), 200, ids, cal._rho(design), (0.5, 0.5), 0.6, "normal")
    word = {decide.REVERSED_MORE: decide.CONTRADICTED, decide.BEYOND: decide.CONTRADICTED}
    word[decide.WITHIN] = decide.SUPPORTED
    got = set()
    for ra, rb in zip(fa.tolist(), fb.tolist(), strict=True):
        a, b = dict(zip(ids[0], ra, strict=True)), dict(zip(ids[1], rb, strict=True))
        for claim, read in [
            (Difference(kind="difference", better="A", worse="B"), decide.directional),
            (Plateau(kind="plateau", settings=("A", "B"), margin=decide.DELTA), decide.equivalence),
        ]:
            outcome = read(decide.difference(a, b), decide.DELTA).outcome
            assert judge(claim, {"A": a, "B": b}).verdict == word.get(outcome, outcome)
            got.add(outcome)
    assert len(got) > 2  # the draws reach more than one outcome


@pytest.mark.parametrize("design", list(cal.GAPS))
def test_the_gap_with_a_setting_twice_is_judge_s(design):
    """(A - B) > (B - C): the calibration's decide.gap([A, B, B, C]) is the Gap claim's one statement."""
    seeds = cal.GAPS[design](5)
    claim = Gap(kind="gap", wider=("A", "B"), narrower=("B", "C"))
    figures = cal.settings(np.random.default_rng(2), 30, seeds, [cal.BASE + 0.8, cal.BASE, cal.BASE], 0.5)
    for rows in zip(*(f.tolist() for f in figures), strict=True):
        a, b, c = (dict(zip(ids, row, strict=True)) for ids, row in zip(seeds, rows, strict=True))
        iv = decide.gap([a, b, b, c])
        assert iv.diff == pytest.approx(
            np.mean(list(a.values())) - 2 * np.mean(list(b.values())) + np.mean(list(c.values()))
        )
        assert judge(claim, {"A": a, "B": b, "C": c}).verdict == decide.directional(iv, decide.DELTA).outcome


def test_the_side_a_word_beyond_delta_lies_on():
    iv = decide.difference({1: 1.0, 2: 1.1, 3: 0.9}, {1: 3.0, 2: 3.1, 3: 2.9})
    dec = decide.equivalence(iv, 0.5)
    assert dec.outcome == decide.BEYOND
    assert cal._sided(dec, decide.BEYOND, cal.BEYOND_UP, cal.BEYOND_DOWN) == cal.BEYOND_DOWN
    dec = decide.cell([84.0, 84.1, 83.9], 80.0, 1.0)
    assert cal._sided(dec, decide.NOT_REPRODUCED, cal.NOT_REPRODUCED_UP, cal.NOT_REPRODUCED_DOWN) == (
        cal.NOT_REPRODUCED_UP
    )


def test_outliers_per_setting_do_not_cancel_in_a_paired_difference():
    ids = cal._ids("paired", 10)
    rng = np.random.default_rng(4)
    for law, cancels in (("outliers", True), ("outliers per setting", False)):
        a, b = cal.pairs(rng, 4000, ids, 0.9, (0.5, 0.5), 0.0, law)
        d = a - b
        assert (np.abs(d).max() < 5 * 0.5 * 0.6) == cancels  # a 2.5-point departure on one side shows in d
    a, b = cal.pairs(rng, 4000, ids, 0.5, (0.25, 1.0), 0.0, "normal")
    assert a.std() == pytest.approx(0.25, rel=0.05) and b.std() == pytest.approx(1.0, rel=0.05)


def test_quantised_truth_is_the_quantised_figures_mean():
    rng = np.random.default_rng(3)
    t = cal.quantised_truth(0.5, 0.05, rng, size=100_000)  # 80.6 + noise against 80.1 + noise on a 0.2 grid
    assert t == pytest.approx(0.5, abs=0.01)
    assert cal.quantised_truth(0.05, 0.01, rng, size=20_000) != pytest.approx(
        0.05, abs=0.01
    )  # rounding moves it


def test_two_processes_give_the_one_process_tables():
    one = cal.calibrate(reduced=True, only=("collapse",), scale=0.01, processes=1)
    assert cal.calibrate(reduced=True, only=("collapse",), scale=0.01, processes=2) == one


def test_main_writes_the_tables(tmp_path, capsys):
    out = tmp_path / "calibration.md"
    # the sequential plan's section (benchmarks/sequential_calibration.py) is kept from its marker on
    out.write_text(f"# an older table\n\n{cal.SEQUENTIAL}\n\n## The sequential plan\n", encoding="utf-8")
    code = cal.main(
        ["--reduced", "--kinds", "family", "--draws", "50", "--processes", "1", "--out", str(out)]
    )
    assert code == 0
    text = out.read_text()
    assert text.startswith("# Operating characteristics") and "## Per kind, design, law and n" in text
    head = f"**Summary** (rule version {decide.RULE_VERSION}, stsbench/stats/decide.py sha256 {cal.RULE_FILE}): 6 scenarios; "
    assert head + "3 counted, 0 above their bound on a side; 3 at n < 3, 0 with a decisive draw" in text
    assert "1 process." in text and "50 draws a scenario, 250 for the cells" in text
    assert "an older table" not in text and text.endswith(f"{cal.SEQUENTIAL}\n\n## The sequential plan\n")
    assert "**Summary**" in capsys.readouterr().out and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize(
    "argv", [["--kinds", "nope"], ["--seed", "-1"], ["--draws", "0"], ["--draws", "x"], ["--processes", "0"]]
)
def test_bad_options_in_process(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cal.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err


def test_bad_option_on_the_command_line():
    proc = subprocess.run(
        [sys.executable, str(BENCH / "decision_calibration.py"), "--draws", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "--draws" in proc.stderr, proc.stderr


def test_without_the_departing_seeds_check_a_cell_against_an_exact_figure_goes_above_its_bound(monkeypatch):
    """Ten seeds of which one in ten departs 5 std low against the bulk's exact figure, at t = -δ: the seeds' mean
    falls below the bulk's and *not reproduced* below -δ comes too often, unless such a cell is capped."""
    sc = lambda: cal.Scenario("cell", "against exact", 10, 0.5, -1.0, law="outliers", delta=decide.CELL_DELTA)  # noqa: E731
    row = cal.judge_scenario(sc(), 0, 0, scale=0.25)  # 5,000 draws
    assert row["status"] == "ok", row["wrong_rate"]
    monkeypatch.setattr(decide, "departing", lambda x, h=0.0, alpha=decide.ALPHA: [])
    row = cal.judge_scenario(sc(), 0, 0, scale=0.25)
    assert row["status"] == "ABOVE BOUND" and row["wrong_rate"][cal.LOWER] > row["bound"], row["wrong_rate"]
