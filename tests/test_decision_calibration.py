"""benchmarks/decision_calibration.py on a reduced grid: the rule's wrong decisive outcomes stay within their bound."""

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

DRAWS = 200
TRUTHS = (0.0, 0.5, -1.0, 2.0, -2.0, 4.0, -4.0)
RIGHT = {  # the outcome a true difference of ±4δ must get
    ("directional", 4.0): decide.DIRECTIONS,  # the direction shown (its size or not)
    ("directional", -4.0): decide.CONTRADICTED,
    ("plateau", 4.0): decide.CONTRADICTED,
    ("plateau", -4.0): decide.CONTRADICTED,
    ("cell", 4.0): decide.NOT_REPRODUCED,
    ("cell", -4.0): decide.NOT_REPRODUCED,
}


@pytest.fixture(scope="module")
def rows():
    return cal.calibrate(tuple(cal.KINDS), (2, 5), (0.5,), TRUTHS, cal.DESIGNS, DRAWS, seed=0)


def test_the_grid_is_complete(rows):
    # directional and plateau: two designs; cells: one-sample only
    assert len(rows) == (2 * 2 + 2 * 2 + 1 * 2) * len(TRUTHS)
    assert {r["design"] for r in rows if r["kind"] == "cell"} == {decide.ONE_SAMPLE}
    for r in rows:
        assert sum(r["rates"].values()) == pytest.approx(1.0)


def test_wrong_rates_within_the_bound(rows):
    limit = decide.ALPHA + 3 * (decide.ALPHA * (1 - decide.ALPHA) / DRAWS) ** 0.5
    assert cal.bound(DRAWS) == pytest.approx(limit)
    judged = [r for r in rows if r["wrong"] is not None]
    assert len(judged) > len(rows) // 2
    above = [r for r in judged if r["wrong"] > limit]
    assert not above, above
    assert all(r["ok"] for r in rows)


def test_two_seeds_are_never_decisive(rows):
    few = [r for r in rows if r["n"] == 2]
    assert few and all(r["few"] for r in few)
    for r in few:
        assert r["rates"][decide.INCONCLUSIVE] == 1.0, r


def test_a_large_effect_is_decided_right(rows):
    for (kind, truth), outcome in RIGHT.items():
        for r in rows:
            if r["kind"] == kind and r["truth"] == truth and r["n"] == 5:
                words = outcome if isinstance(outcome, tuple) else (outcome,)
                assert sum(r["rates"].get(w, 0.0) for w in words) >= 0.9, r


def test_wrong_outcomes_follow_the_brief():
    d = cal.wrong_outcomes
    assert set(d("directional", 0.0)) == {*decide.DIRECTIONS, decide.REVERSED, decide.REVERSED_LESS, decide.CONTRADICTED}
    assert set(d("directional", -1.0)) == set(decide.DIRECTIONS)
    assert set(d("directional", 2.0)) == {
        decide.REVERSED, decide.REVERSED_LESS, decide.CONTRADICTED, decide.SUPPORTED_LESS, decide.NO_DIFFERENCE
    }
    assert d("plateau", 0.0) == (decide.CONTRADICTED,)
    assert d("plateau", 1.0) == ()
    assert d("plateau", -2.0) == (decide.SUPPORTED,)
    assert d("cell", 0.0) == (decide.NOT_REPRODUCED,)
    assert d("cell", -0.5) == ()
    assert d("cell", 4.0) == (decide.REPRODUCED,)


@pytest.mark.parametrize("design", [decide.PAIRED, decide.WELCH])
def test_the_script_decides_as_claims_judge(design):
    # a claim of one statement: Holm over one statement changes nothing, so the direct calls are judge's verdict
    rng = np.random.default_rng(1)
    a, b = cal._draw(rng, design, 4, 0.5, 0.6, 40)
    seeds_b = range(4) if design == decide.PAIRED else range(4, 8)
    for kind, claim in [
        ("directional", Difference(kind="difference", better="A", worse="B")),
        ("plateau", Plateau(kind="plateau", settings=("A", "B"), margin=decide.DELTA)),
    ]:
        got = cal._outcomes(kind, design, a, b, decide.DELTA)
        for i, outcome in enumerate(got):
            scores = {"A": dict(enumerate(a[i])), "B": dict(zip(seeds_b, b[i], strict=True))}
            assert judge(claim, scores).verdict == outcome
        assert len(set(got)) > 1  # the draws reach more than one outcome


def test_main_writes_the_table(tmp_path, capsys):
    out = tmp_path / "calibration.md"
    code = cal.main(["--draws", "20", "--n", "3", "--std", "0.5", "--kinds", "cell", "--out", str(out)])
    assert code == 0
    text = out.read_text()
    assert text == capsys.readouterr().out.rstrip("\n") + "\n"
    assert "## cell (δ = 1 points)" in text and "**Summary**: 9 cells, 0 above the bound" in text
    assert "bound 0.1962" in text and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize(
    "argv", [["--n", "x"], ["--n", "1,3"], ["--std", "0"], ["--kinds", "nope"], ["--seed", "-1"]]
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
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "--draws" in proc.stderr, proc.stderr
