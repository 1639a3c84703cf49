"""benchmarks/decision_calibration.py on a reduced grid: every outcome that can be wrong is counted, within bound."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from stsbench.stats import decide
from stsbench.stats.claims import Difference, Plateau, judge

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import decision_calibration as cal  # noqa: E402

FEW, MANY, CONFIRM = 200, 2000, 20000
# the reduced grid takes 25 s: it runs in the main test job, not again at the dependency floors, where
# tests/test_verdicts_second.py and tests/test_decide.py check the rule's functions themselves
grid = pytest.mark.slow


@pytest.fixture(scope="module")
def rows():
    return cal.calibrate(reduced=True, seed=0, few=FEW, many=MANY, confirm=CONFIRM)


@grid
def test_the_reduced_grid_has_every_kind_design_and_law(rows):
    assert {r["kind"] for r in rows} == set(cal.RIGHT)
    designs = {r["design"] for r in rows}
    assert {"paired ρ 0.5", "paired ρ 0.9", "disjoint", "partly 1/5", "partly 3/5"} <= designs
    assert {"against exact", "against one run", "against best of 5"} <= designs
    assert {r["law"] for r in rows} == {"normal", "quantised", "outliers", "collapsed"}
    for r in rows:
        assert sum(r["rates"].values()) == pytest.approx(1.0) and r["draws"] in (FEW, MANY, CONFIRM)


@grid
def test_every_counted_scenario_is_within_its_bound(rows):
    """Every law, the two mixed ones judged on their bulk (the script's docstring says why)."""
    counted = [r for r in rows if r["status"] != "nothing can be wrong"]
    assert len(counted) > 0.9 * len(rows)
    assert [r for r in counted if r["status"] == "ABOVE BOUND"] == []
    for r in counted:
        assert (r["worst"] <= r["bound"]) == (r["status"] == "ok")
        assert r["bound"] == pytest.approx(cal.bound(r["draws"], cal.nominal(r["kind"])))


@grid
def test_where_nothing_can_be_wrong_is_listed_apart(rows):
    apart = [r for r in rows if r["status"] == "nothing can be wrong"]
    assert apart and all(not any(r["wrong"].values()) or r["n"] < decide.MIN_SEEDS for r in apart)
    text = cal.markdown(rows, "head")
    assert (
        f"## Where nothing can be wrong ({len(apart)} scenarios, listed apart, not counted as passing)"
        in text
    )


@grid
def test_near_the_nominal_level_the_larger_sample_decides(rows):
    near = [r for r in rows if r["draws"] == MANY]
    assert near and all(r["status"] != "nothing can be wrong" for r in near)


def _fixed_rates(monkeypatch, stages: list[float]) -> list[int]:
    """A scenario whose k-th drawing is wrong (a reversal at t = 0) at ``stages[k]``; returns the draws asked."""
    asked: list[int] = []

    def prepare(sc, rng):
        def run(rng, draws):
            wrong = round(stages[len(asked)] * draws)
            asked.append(draws)
            return [decide.REVERSED] * wrong + [decide.INCONCLUSIVE] * (draws - wrong)

        sc.run = run

    monkeypatch.setattr(cal, "_prepare", prepare)
    return asked


def test_a_chance_excess_at_the_nominal_level_is_drawn_again_fresh_and_larger(monkeypatch):
    """At 10,000 draws a scenario at its nominal level lands above nominal + 3 SE one time in 770: the confirming
    100,000 fresh draws decide, so a grid of ~1,400 scenarios does not fail by chance; a real excess stays."""
    sc = cal.Scenario("directional", "paired ρ 0.9", 10, 1.0, 0.0)
    asked = _fixed_rates(monkeypatch, [0.025, 0.0298, 0.0251])
    row = cal.judge_scenario(sc, 0, 0)
    assert asked == [cal.FEW, cal.MANY, cal.CONFIRM] and row["status"] == "ok" and row["draws"] == cal.CONFIRM
    asked = _fixed_rates(monkeypatch, [0.03, 0.0298, 0.0298])
    row = cal.judge_scenario(sc, 0, 0)
    assert row["status"] == "ABOVE BOUND" and row["bound"] == pytest.approx(cal.bound(cal.CONFIRM, 0.025))
    asked = _fixed_rates(monkeypatch, [0.025, 0.0290])
    assert cal.judge_scenario(sc, 0, 0)["draws"] == cal.MANY and asked == [cal.FEW, cal.MANY]


def test_wrong_outcomes_count_at_the_truth_equal_to_delta():
    d = 0.5
    at = cal.wrong_outcomes("directional", d, d)
    assert decide.SUPPORTED_MORE in at[cal.HIGH] and {decide.SUPPORTED_LESS, decide.NO_DIFFERENCE} <= set(
        at[cal.LOW]
    )
    zero = cal.wrong_outcomes("directional", 0.0, d)
    assert set(zero[cal.HIGH]) == set(decide.DIRECTIONS)
    assert set(zero[cal.LOW]) == {decide.REVERSED, decide.REVERSED_LESS, decide.CONTRADICTED}
    assert cal.wrong_outcomes("directional", -d, d)[cal.LOW] == (decide.CONTRADICTED,)
    assert cal.wrong_outcomes("cell", 1.0, 1.0)[""] == (decide.REPRODUCED, decide.NOT_REPRODUCED)
    assert cal.wrong_outcomes("plateau", -0.5, 0.5)[""] == (decide.SUPPORTED, decide.CONTRADICTED)
    assert cal.wrong_outcomes("collapse", 0.0, 0.5)[""] == (decide.SUPPORTED, decide.CONTRADICTED)
    assert (
        cal.wrong_outcomes("family", 0.5, 0.5)[""] == ("*",)
        and cal.wrong_outcomes("family", 1.0, 0.5)[""] == ()
    )
    assert cal.nominal("directional") == 0.025 and cal.nominal("cell") == 0.05


@grid
def test_a_large_effect_is_decided_right(rows):
    for r in rows:
        if r["n"] == 5 and r["law"] == "normal" and abs(r["truth"]) == 4 and r["power"] is not None:
            assert r["power"] >= 0.9, (r["kind"], r["design"], r["truth"], r["rates"])


@pytest.mark.parametrize("design", ["paired ρ 0.5", "partly 2/5", "disjoint"])
def test_the_script_decides_as_claims_judge(design):
    """A claim of one statement: Holm over one statement changes nothing, so the direct calls are judge's verdict."""
    rng = np.random.default_rng(1)
    got = set()
    for _ in range(30):
        a, b = cal._pair(rng, cal._ids(design, 5), cal._rho(design), 0.5, 0.6, "normal")
        for claim, read in [
            (Difference(kind="difference", better="A", worse="B"), decide.directional),
            (Plateau(kind="plateau", settings=("A", "B"), margin=decide.DELTA), decide.equivalence),
        ]:
            outcome = read(decide.difference(a, b), decide.DELTA).outcome
            assert judge(claim, {"A": a, "B": b}).verdict == outcome
            got.add(outcome)
    assert len(got) > 2  # the draws reach more than one outcome


def test_quantised_truth_is_the_quantised_figures_mean():
    rng = np.random.default_rng(3)
    t = cal.quantised_truth(0.5, 0.05, rng, size=100_000)  # 80.6 + noise against 80.1 + noise on a 0.2 grid
    assert t == pytest.approx(0.5, abs=0.01)
    assert cal.quantised_truth(0.05, 0.01, rng, size=20_000) != pytest.approx(
        0.05, abs=0.01
    )  # rounding moves it


def test_main_writes_the_tables(tmp_path, capsys):
    out = tmp_path / "calibration.md"
    code = cal.main(["--reduced", "--kinds", "family", "--draws", "50", "--out", str(out)])
    assert code == 0
    text = out.read_text()
    assert text.startswith("# Operating characteristics") and "## Per kind, design, law and n" in text
    assert "**Summary**: 5 scenarios; 3 counted, 0 above their bound; 2 where nothing can be wrong" in text
    assert "**Summary**" in capsys.readouterr().out and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("argv", [["--kinds", "nope"], ["--seed", "-1"], ["--draws", "0"], ["--draws", "x"]])
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
