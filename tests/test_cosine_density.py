"""SimCSE Figure 4's analysis: the density of predicted cosines by gold-score group on STS-B."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest
from helpers import CountingEncoder, make_data_dir, table_of

from stsbench.analyses.geometry import GRID, density_from_table
from stsbench.data.sts import Pairs

trapezoid = getattr(np, "trapezoid", None) or np.trapz  # numpy 2 renamed it; the floors run numpy 1.24


def _pairs() -> tuple[Pairs, object]:
    # gold 0.5, 1.0 (the second group: [1, 2)), 4.0 and 5.0 (the last group includes 5), cosines set by angle
    gold = [0.5, 0.6, 1.0, 1.5, 4.0, 4.5, 5.0]
    cos = [0.1, 0.3, 0.2, 0.4, 0.8, 0.9, 0.95]
    s1 = [f"a{i}" for i in range(len(gold))]
    s2 = [f"b{i}" for i in range(len(gold))]
    vecs = {}
    for a, b, c in zip(s1, s2, cos, strict=True):
        vecs[a] = [1.0, 0.0]
        vecs[b] = [c, math.sqrt(1 - c * c)]
    return Pairs("STSBenchmark", s1, s2, np.array(gold), ["x"] * len(gold), (0.0, 5.0)), table_of(vecs)


def test_groups_by_gold_score_and_their_densities():
    pairs, table = _pairs()
    r = density_from_table(pairs, table, "test")
    assert [g.label for g in r.groups] == ["0-1", "1-2", "2-3", "3-4", "4-5"]
    assert [g.n_pairs for g in r.groups] == [2, 2, 0, 0, 3]
    assert r.groups[0].mean == pytest.approx(0.2) and r.groups[1].mean == pytest.approx(0.3)
    assert r.groups[4].mean == pytest.approx((0.8 + 0.9 + 0.95) / 3)
    assert r.groups[2].mean is None and r.groups[2].density is None  # no pairs: no figure, not NaN
    grid = np.array(r.grid)
    assert len(grid) == GRID and grid[0] == -1.0 and grid[-1] == 1.0
    for g in (r.groups[0], r.groups[4]):  # a density on the grid: it integrates to about 1 inside [-1, 1]
        assert 0.8 < trapezoid(g.density, grid) <= 1.0 + 1e-6


def test_the_headline_number_is_the_spread_of_the_extreme_groups():
    from stsbench.analyses.registry import get_analysis

    pairs, table = _pairs()
    numbers = get_analysis("cosine_density").numbers(density_from_table(pairs, table, "test"))
    (headline,) = [n for n in numbers if n.headline]
    assert headline.column == "gold 4-5 minus gold 0-1"
    assert headline.value == pytest.approx((0.8 + 0.9 + 0.95) / 3 - 0.2)


def test_the_figure_has_the_papers_axes(tmp_path, monkeypatch):
    from stsbench.analyses import figures, geometry

    pairs, table = _pairs()
    r = density_from_table(pairs, table, "test")
    drawn = []
    monkeypatch.setattr(figures, "save", lambda fig, stem: drawn.append(fig) or [])
    geometry.density_figure({"model a": r, "model b": r}, tmp_path / "f")
    (fig,) = drawn
    a, b = fig.axes
    # SimCSE Figure 4: cosine similarity across, the gold-score groups stacked up the y-axis
    assert a.get_xlabel() == "cosine similarity" and a.get_xlim() == (-1.0, 1.0)
    assert [t.get_text() for t in a.get_yticklabels()] == ["0-1", "1-2", "2-3", "3-4", "4-5"]
    assert a.get_ylabel() == "gold score group" and b.get_title() == "model b"
    assert len(a.collections) == 3  # a filled density per group with pairs (0-1, 1-2 and 4-5 here)


def test_the_command_end_to_end_and_a_bad_split(tmp_path, monkeypatch, capsys):
    import stsbench.encoders
    from stsbench.cli import main
    from stsbench.encoders.cache import CachedEncoder

    data = make_data_dir(tmp_path / "data")
    inner = CountingEncoder()
    monkeypatch.setattr(
        stsbench.encoders, "build_encoder", lambda name, *a, **kw: CachedEncoder(inner, tmp_path / "c")
    )
    out = tmp_path / "out"
    argv = ["stsbench", "cosine-density", "--split", "test", "--data-dir", str(data), "--allow-modified-data"]
    monkeypatch.setattr(sys, "argv", [*argv, "--model", "fake", "--output", str(out)])
    main()
    rec = json.loads((out / "fake" / "avg" / "cosine_density_test.json").read_text())
    assert rec["analysis"] == "cosine_density" and rec["result"]["n_pairs"] == 12
    assert sum(g["n_pairs"] for g in rec["result"]["groups"]) == 12
    assert (out / "figures" / "cosine_density_test__fake.svg").is_file()
    assert "Cosine by gold score" in capsys.readouterr().out
    monkeypatch.setattr(sys, "argv", [*argv[:3], "everything", "--model", "fake", "--output", str(out)])
    with pytest.raises(SystemExit) as exc:
        main()
    err = capsys.readouterr().err
    assert exc.value.code == 2 and "everything" in err and "Traceback" not in err
