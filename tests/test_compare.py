"""``stsbench compare``: paired bootstrap, Williams, Holm and power on two models' STS results."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli
from scipy import stats

from stsbench.compare import side_from_folder
from stsbench.encoders.base import MockEncoder
from stsbench.errors import StsbenchError
from stsbench.evaluation.run import evaluate_encoder
from stsbench.stats.compare import compare_sides
from stsbench.tasks.base import Mode
from stsbench.tasks.registry import resolve_tasks

TASKS = "STS12,STSBenchmark"


def _evaluate(
    data_dir: Path, out: Path, seed: int, name: str, tasks: str = TASKS, mode: str = "test"
) -> Path:
    run = evaluate_encoder(
        MockEncoder(seed=seed, name=name),
        resolve_tasks(tasks),
        Mode(mode),
        data_dir,
        output=out,
        show_progress=False,
        bootstrap=0,
    )
    return run.paths[0].parent


def _two(root: Path, data: Path) -> tuple[Path, Path]:
    return _evaluate(data, root / "a", 0, "mock-a"), _evaluate(data, root / "b", 1, "mock-b")


@pytest.fixture(scope="module")
def two(tmp_path_factory, mock_data) -> tuple[Path, Path]:
    """Two mock models' results on the mock data."""
    return _two(tmp_path_factory.mktemp("compare"), mock_data)


@pytest.fixture(scope="module")
def two_real(tmp_path_factory, data_dir) -> tuple[Path, Path]:
    """Two mock models' results on the real data."""
    return _two(tmp_path_factory.mktemp("compare-real"), data_dir)


def test_a_folder_against_itself_differs_by_zero_with_p_one(two, capsys):
    a, _ = two
    code, out, err = run_cli(["compare", str(a), str(a), "--format", "json", "-B", "200"], capsys)
    assert code == 0, err
    data = json.loads(out)
    (comp,) = data["comparisons"]
    assert comp["reference"] == "mock-a" and comp["model"] == "mock-a #2"
    for task, row in comp["tasks"].items():
        assert row["diff"] == 0 and row["low"] == 0 and row["high"] == 0, task
        assert row["p_bootstrap"] == 1.0, task
        if task != "Avg.":
            assert (
                row["p_williams"] == 1.0 and row["p_bootstrap_holm"] == 1.0 and row["p_williams_holm"] == 1.0
            )


@pytest.mark.realdata  # STS12's 3108 pairs
def test_json_has_difference_interval_both_p_values_and_holm(two_real, capsys):
    a, b = two_real
    code, out, err = run_cli(["compare", str(a), str(b), "--format", "json", "-B", "300"], capsys)
    assert code == 0, err
    comp = json.loads(out)["comparisons"][0]
    assert list(comp["tasks"]) == ["STS12", "STSBenchmark", "Avg."]
    for task, row in comp["tasks"].items():
        # the difference of the unrounded figures: within rounding of the printed figures' difference
        assert abs(row["diff"] - (row["other"] - row["reference"])) <= 0.01 + 1e-9, task
        assert row["low"] <= row["diff"] <= row["high"], task
        assert 0 < row["p_bootstrap"] <= 1 and row["min_detectable_difference"] > 0
        if task != "Avg.":
            assert 0 < row["p_williams"] <= 1
            assert row["p_bootstrap_holm"] >= row["p_bootstrap"]
            assert row["p_williams_holm"] >= row["p_williams"]
    assert comp["tasks"]["STS12"]["n_pairs"] == 3108


def test_holm_adjusts_over_the_tasks(two):
    from stsbench.stats.tests import holm

    a, b = two
    res = compare_sides([side_from_folder(a), side_from_folder(b)], bootstrap=200, seed=3)
    rows = [r for r in res.comparisons[0].rows if r.task != "Avg."]
    assert [r.p_bootstrap_holm for r in rows] == pytest.approx(holm([r.p_bootstrap for r in rows]))
    assert [r.p_williams_holm for r in rows] == pytest.approx(holm([r.p_williams for r in rows]))


def test_williams_p_uses_the_shared_gold(two):
    from scipy.stats import spearmanr

    from stsbench.stats.tests import williams

    a, b = two
    sa, sb = side_from_folder(a), side_from_folder(b)
    res = compare_sides([sa, sb], bootstrap=100, seed=1)
    pa, pb = sa.pairs["STSBenchmark"], sb.pairs["STSBenchmark"]
    r12 = spearmanr(pa.gold, pa.cosine)[0]
    r13 = spearmanr(pb.gold, pb.cosine)[0]
    r23 = spearmanr(pa.cosine, pb.cosine)[0]
    row = next(r for r in res.comparisons[0].rows if r.task == "STSBenchmark")
    assert row.p_williams == pytest.approx(williams(r12, r13, r23, pa.n)[1])


def test_the_table_names_tasks_and_marks(two, capsys):
    a, b = two
    code, out, err = run_cli(["compare", str(a), str(b), "-B", "200"], capsys)
    assert code == 0, err
    assert "mock-b vs mock-a" in out and "STSBenchmark" in out and "Avg." in out and "MDE 80%" in out


def test_refuses_other_tasks(tmp_path, mock_data, two, capsys):
    a, _ = two
    c = _evaluate(mock_data, tmp_path / "c", 1, "mock-c", tasks="STSBenchmark")
    code, _, err = run_cli(["compare", str(a), str(c)], capsys)
    assert code != 0 and "tasks differ" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_refuses_other_modes(tmp_path, mock_data, capsys):
    a = _evaluate(mock_data, tmp_path / "a", 0, "mock-a", tasks="STSBenchmark")
    d = _evaluate(mock_data, tmp_path / "d", 0, "mock-a", tasks="STSBenchmark", mode="dev")
    code, _, err = run_cli(["compare", str(a), str(d)], capsys)
    assert code != 0 and "modes differ" in err


def test_refuses_other_data(tmp_path, two, capsys):
    a, b = two
    copy = tmp_path / "b"
    shutil.copytree(b, copy)
    f = copy / "STSBenchmark.json"
    d = json.loads(f.read_text())
    key = next(iter(d["provenance"]["data_files"]))
    d["provenance"]["data_files"][key] = "0" * 64
    f.write_text(json.dumps(d))
    code, _, err = run_cli(["compare", str(a), str(copy)], capsys)
    assert code != 0 and "other data" in err and "STSBenchmark" in err


def test_refuses_other_pairs(tmp_path, two):
    a, b = two
    sa, sb = side_from_folder(a), side_from_folder(b)
    p = sb.pairs["STS12"]
    sb.pairs["STS12"] = type(p)(
        p.task, p.cosine[::-1].copy(), p.gold[::-1].copy(), p.strata[::-1].copy(), None
    )
    with pytest.raises(StsbenchError, match="pair sets differ"):
        compare_sides([sa, sb], bootstrap=10)


def test_one_line_for_a_folder_of_several_models_or_none(tmp_path, two, capsys):
    a, b = two
    both = tmp_path / "both"
    shutil.copytree(a, both / "a")
    shutil.copytree(b, both / "b")
    code, _, err = run_cli(["compare", str(both), str(a)], capsys)
    assert code != 0 and "2 models or modes" in err
    (tmp_path / "empty").mkdir()
    code, _, err = run_cli(["compare", str(tmp_path / "empty"), str(a)], capsys)
    assert code != 0 and "no STS results" in err
    code, _, err = run_cli(["compare", str(a)], capsys)
    assert code != 0 and "at least two" in err


def test_a_result_without_its_sidecar_is_one_line(tmp_path, two, capsys):
    a, _ = two
    copy = tmp_path / "a"
    shutil.copytree(a, copy)
    for f in copy.glob("*.json"):
        d = json.loads(f.read_text())
        d.pop("pairs", None)
        f.write_text(json.dumps(d))
    code, _, err = run_cli(["compare", str(a), str(copy)], capsys)
    assert code != 0 and "no per-pair sidecar" in err


def test_bootstrap_is_seeded(two):
    a, b = two
    r1 = compare_sides([side_from_folder(a), side_from_folder(b)], bootstrap=100, seed=5).to_dict()
    r2 = compare_sides([side_from_folder(a), side_from_folder(b)], bootstrap=100, seed=5).to_dict()
    assert r1 == r2
    assert np.isfinite(r1["comparisons"][0]["tasks"]["Avg."]["low"])


def _aggregate(out: Path, name: str, values: dict[str, list[float]], first: int = 1) -> Path:
    from stsbench.results.runs import build_aggregate, write_aggregate

    seeds = range(first, len(next(iter(values.values()))) + first)
    per_seed = {
        s: {"model": f"/runs/{name}/seed-{s}", "scores": {t: v[s - first] for t, v in values.items()}}
        for s in seeds
    }
    return write_aggregate(out, build_aggregate(f"/runs/{name}", "avg", "test", per_seed)).parent


def test_seed_aggregates_compare_over_seeds_by_the_one_rule(tmp_path, capsys):
    """Paired on the seeds both aggregates share, Welch for disjoint ones; the interval read against δ 0.5."""
    from scipy.stats import t as student_t
    from scipy.stats import ttest_ind, ttest_rel

    a = {"STS12": [70.1, 70.5, 69.8, 70.3, 70.0], "STSBenchmark": [80.0, 80.4, 79.9, 80.2, 80.1]}
    b = {"STS12": [71.0, 71.4, 70.9, 71.3, 71.2], "STSBenchmark": [80.1, 80.3, 79.8, 80.3, 80.0]}
    for v in (a, b):
        v["Avg."] = [round((x + y) / 2, 2) for x, y in zip(v["STS12"], v["STSBenchmark"], strict=True)]
    fa, fb = _aggregate(tmp_path / "a", "simcse", a), _aggregate(tmp_path / "b", "esimcse", b)
    code, out, err = run_cli(["compare", str(fa), str(fb), "--format", "json"], capsys)
    assert code == 0, err
    rows = json.loads(out)["comparisons"][0]["tasks"]
    sts12 = rows["STS12"]["seeds"]  # the one record of the verdict over seeds
    # two-decimal aggregates (no raw figures): each figure's resolution 0.01 adds 2 x 0.01²/12 to the paired variance
    d = np.subtract(b["STS12"], a["STS12"])
    t = d.mean() / np.sqrt((d.var(ddof=1) + 2 * 0.01**2 / 12) / 5)
    assert sts12["design"] == "paired" and sts12["p_zero"] == pytest.approx(2 * stats.t.sf(abs(t), 4))
    assert sts12["p_zero"] == pytest.approx(ttest_rel(b["STS12"], a["STS12"]).pvalue, rel=0.01)
    assert "two-decimal" in sts12["note"]
    assert rows["STS12"]["diff"] == pytest.approx(np.mean(b["STS12"]) - np.mean(a["STS12"]))
    assert sts12["outcome"] == "a difference that matters" and rows["STS12"]["low"] > 0.5
    assert rows["STSBenchmark"]["seeds"]["outcome"] == "no difference that matters"
    assert rows["STS12"]["p_bootstrap"] is None and sts12["p_holm"] is not None  # Holm over STS12 and STS-B
    assert rows["STS12"]["n_seeds"] == [5, 5] and rows["STS12"]["p_williams"] is None
    assert rows["STS12"]["p_bootstrap_holm"] is None and rows["STS12"]["min_detectable_difference"] > 0
    code, out, err = run_cli(["compare", str(fa), str(fb)], capsys)
    assert code == 0 and "paired" in out and "5 vs 5 seeds" in out and "a difference that matters" in out
    fc = _aggregate(tmp_path / "c", "esimcse", b, first=11)  # seeds 11-15: none shared with 1-5
    code, out, err = run_cli(["compare", str(fa), str(fc), "--format", "json"], capsys)
    rows = json.loads(out)["comparisons"][0]["tasks"]
    assert rows["STS12"]["seeds"]["design"] == "Welch"
    # Welch's statistic on Hsu's df, the smallest n - 1 (rule 3)
    welch = ttest_ind(b["STS12"], a["STS12"], equal_var=False).statistic
    hsu = 2 * student_t.sf(abs(welch), 4)
    assert rows["STS12"]["seeds"]["p_zero"] == pytest.approx(hsu, rel=0.01)  # each side h = 0.01 too


def test_a_seed_aggregate_against_one_model_is_refused(tmp_path, two, capsys):
    a, _ = two
    fa = _aggregate(
        tmp_path / "s", "simcse", {"STS12": [70.0, 71.0], "STSBenchmark": [80.0, 81.0], "Avg.": [75, 76]}
    )
    code, _, err = run_cli(["compare", str(fa), str(a)], capsys)
    assert code != 0 and "seed aggregate" in err and len(err.strip().splitlines()) == 1


def test_plot_draws_the_intervals_as_a_forest_plot(tmp_path, two, capsys):
    a, b = two
    code, _, err = run_cli(["compare", a, b, "-B", "100", "--plot", tmp_path / "f.png"], capsys)
    assert code == 0, err
    assert (tmp_path / "f.png").stat().st_size > 0 and (tmp_path / "f.svg").stat().st_size > 0
    code, _, err = run_cli(["compare", str(a), str(b), "--plot", str(tmp_path / "f.png" / "x.png")], capsys)
    assert code != 0 and "--plot" in err and "Traceback" not in err
