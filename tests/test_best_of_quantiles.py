"""stsbench/stats/best_of_quantiles.json: the best_of: K pivot's quantiles, their shape, fresh draws and coverage.

The table (made by benchmarks/best_of_quantiles.py) holds the 2.5% and 97.5% quantiles of
W = (Z/√n - M_K) / (χ_{n-1}/√(n-1)) for n = 2..20 seeds and K = 2..20 runs. Here: every entry is there and
ordered as the law orders it; three entries equal a fresh simulation of another seed (and another way of drawing
χ and M_K) within Monte Carlo error; and the interval it gives covers the true difference 95% of the time, 2.5% a
side, on seeds and runs drawn directly.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import stsbench.stats

TABLE = Path(stsbench.stats.__file__).resolve().parent / "best_of_quantiles.json"
BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
import best_of_quantiles as boq  # noqa: E402

NS = list(range(2, 21))
KS = list(range(2, 21))
P_LO, P_HI = 0.025, 0.975


@pytest.fixture(scope="module")
def table() -> dict:
    """The committed table, as JSON."""
    return json.loads(TABLE.read_text(encoding="utf-8"))


def entry(table: dict, n: int, k: int) -> tuple[float, float]:
    """(q_lo, q_hi) for ``n`` seeds and the best of ``k`` runs."""
    i, j = table["n"].index(n), table["k"].index(k)
    return table["q_lo"][i][j], table["q_hi"][i][j]


def pivot(rng: np.random.Generator, n: int, k: int, draws: int) -> np.ndarray:
    """Fresh draws of W, χ² and M_K drawn otherwise than the script draws them (chisquare, a row max)."""
    z = rng.standard_normal(draws)
    chi = np.sqrt(rng.chisquare(n - 1, draws) / (n - 1))
    best = rng.standard_normal((draws, k)).max(axis=1)
    return (z / math.sqrt(n) - best) / chi


def quantile_se(w: np.ndarray, p: float, table_draws: int, eps: float = 0.005) -> float:
    """The SE of the table's quantile less the fresh one: √(p(1-p)(1/N + 1/N_table)) / f(q).

    The density f at the quantile is the difference quotient of the empirical quantile function over p ± eps
    (Siddiqui's estimator): f ≈ 2·eps / (Q(p + eps) - Q(p - eps)).
    """
    lo, hi = np.quantile(w, [p - eps, p + eps])
    density = 2 * eps / (hi - lo)
    return math.sqrt(p * (1 - p) * (1 / w.size + 1 / table_draws)) / density


# (a) shape and order ------------------------------------------------------------------------------------------


def test_the_table_has_every_entry_rounded_to_a_thousandth_with_its_provenance(table):
    """361 entries of each quantile, finite, on the 0.001 grid; 10^6 draws of seed 0, rounded outward."""
    assert table["n"] == NS and table["k"] == KS
    assert table["draws"] >= 1_000_000 and table["seed"] == 0 and table["rounding"] == "outward to 0.001"
    assert "best_of" in table["about"] and "M_K" in table["law"]
    for key in ("q_lo", "q_hi"):
        rows = table[key]
        assert len(rows) == len(NS) and all(len(r) == len(KS) for r in rows)
        values = [v for r in rows for v in r]
        assert len(values) == 361
        assert all(isinstance(v, float | int) and math.isfinite(v) and v == round(v, 3) for v in values)


def test_the_quantiles_are_ordered_as_the_law_orders_them(table):
    """q_lo < q_hi everywhere; both fall as K grows at fixed n (M_K grows with K on every draw)."""
    lo, hi = np.array(table["q_lo"]), np.array(table["q_hi"])
    assert (lo < hi).all()
    assert (np.diff(lo, axis=1) < 0).all() and (np.diff(hi, axis=1) < 0).all()
    assert (lo < 0).all()  # W is centred below 0: -E[M_K] < 0
    # as n grows the seeds' mean and std tighten: the lower tail (χ's small values) thins at every K
    assert (np.diff(lo, axis=0) > 0).all()


def test_rounding_is_outward():
    """q_lo goes down and q_hi up to the next thousandth; a figure on the grid stays."""
    assert boq.outward(-1.2341, 0.5671) == (-1.235, 0.568)
    assert boq.outward(-1.234, 0.567) == (-1.234, 0.567)
    assert boq.outward(0.0004, -0.0004) == (0.0, 0.0)


def test_check_exits_1_where_the_file_differs(tmp_path, capsys):
    """The script writes a table, ``--check`` passes on it, and fails (1) once an entry is changed."""
    out = tmp_path / "q.json"
    assert boq.main(["--draws", "2000", "--seed", "3", "--out", str(out)]) == 0
    assert boq.main(["--draws", "2000", "--seed", "3", "--out", str(out), "--check"]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    data["q_hi"][4][7] += 0.001
    out.write_text(json.dumps(data), encoding="utf-8")
    assert boq.main(["--draws", "2000", "--seed", "3", "--out", str(out), "--check"]) == 1
    assert "q_hi n=6 K=9" in capsys.readouterr().err


# (b) fresh draws -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "k"), [(3, 5), (3, 10), (10, 2)])
def test_entries_equal_a_fresh_simulation_within_monte_carlo_error(table, n, k):
    """200,000 fresh draws (another seed, another way of drawing): each quantile within 4 SE + the rounding."""
    w = pivot(np.random.default_rng(20_261_201 + 100 * n + k), n, k, 200_000)
    for p, q in zip((P_LO, P_HI), entry(table, n, k), strict=True):
        fresh = float(np.quantile(w, p))
        se = quantile_se(w, p, table["draws"])
        assert abs(q - fresh) <= 4 * se + 0.001, (n, k, p, q, fresh, se)


# (c) coverage -----------------------------------------------------------------------------------------------------


def test_the_interval_covers_the_true_difference_0_95_of_the_time():
    """n = 4 seeds N(μ_ours, σ), P the best of K = 5 runs N(μ_paper, σ): each side misses 0.025 ± 4 SE."""
    n, k, draws = 4, 5, 50_000
    mu_ours, mu_paper, sigma = 80.1, 80.6, 0.7
    truth = mu_ours - mu_paper
    q_lo, q_hi = entry(json.loads(TABLE.read_text(encoding="utf-8")), n, k)
    rng = np.random.default_rng(7)
    seeds = rng.normal(mu_ours, sigma, (draws, n))
    published = rng.normal(mu_paper, sigma, (draws, k)).max(axis=1)
    m, s = seeds.mean(axis=1), seeds.std(axis=1, ddof=1)
    low, high = m - published - s * q_hi, m - published - s * q_lo
    se = math.sqrt(P_LO * (1 - P_LO) / draws)
    for misses in ((low > truth).mean(), (high < truth).mean()):
        assert abs(misses - P_LO) <= 4 * se, (misses, se)


@pytest.mark.slow
def test_the_committed_table_is_what_the_script_computes():
    """``best_of_quantiles.py --check`` on the committed file: the same 361 entries at 10^6 draws (8 s)."""
    assert boq.main(["--check", "--out", str(TABLE)]) == 0
