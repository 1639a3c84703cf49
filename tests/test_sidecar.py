"""Per-pair sidecars, the intervals of every figure, and `stsbench run --bootstrap`."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, one_line, run_cli
from scipy import stats

import stsbench
from stsbench.data.sts import load_pairs
from stsbench.errors import StsbenchError
from stsbench.metrics import cosine_pairs, simcse_average
from stsbench.published.check import check_results
from stsbench.reports.collect import collect
from stsbench.results.read import read_average, read_pairs, read_result, read_sidecar
from stsbench.tasks.intervals import transfer_interval

FIXTURES = (
    ROOT / "tests" / "fixtures" / "report_results" / "results" / "stsbench-report-fixtures__tiny-bert" / "cls"
)
TASKS = "STS16,STSBenchmark"
B = 200


@pytest.fixture(scope="module")
def written(tmp_path_factory, mock_data):
    """A mock model's STS16 and STS-B results on the mock data, with sidecars and intervals, and their run."""
    out = tmp_path_factory.mktemp("sidecar") / "out"
    run = stsbench.evaluate(stsbench.MockEncoder(dim=8), TASKS, data_dir=mock_data, output=out, bootstrap=B)
    return out, run


def _folder(out: Path) -> Path:
    return out / "mock" / "mean-of-words" / "test"


def test_sidecar_gives_back_the_reported_figure_pair_by_pair(written, mock_data):
    out, run = written
    mock = stsbench.MockEncoder(dim=8)
    for task in TASKS.split(","):
        path = _folder(out) / f"{task}.json"
        result, pairs = read_sidecar(path)
        # the figure, recomputed from the sidecar alone, is the reported one (and the bootstrap's PairSet agrees)
        assert round(100 * stats.spearmanr(pairs.cosine, pairs.gold).statistic, 2) == result.reported
        assert round(100 * read_pairs(path).figure(), 2) == result.reported
        # each row is the pair it claims to be: subset name + position within the subset as loaded
        data = load_pairs(mock_data, task, "test")
        for code, name in enumerate(pairs.subsets):
            rows = np.flatnonzero(pairs.subset == code)
            sub = data.select(name)
            np.testing.assert_array_equal(pairs.index[rows], np.arange(len(sub)))
            want = cosine_pairs(mock.encode(sub.sent1), mock.encode(sub.sent2))
            np.testing.assert_allclose(pairs.cosine[rows], want, rtol=0, atol=1e-12)
            np.testing.assert_array_equal(pairs.gold[rows], sub.gold)
        assert pairs.subsets == (data.subsets() if task == "STS16" else ["test"])
        assert result.pairs["n"] == len(data) and result.pairs["file"] == f"{task}.pairs.npz"
        # the JSON stays small: no per-pair data in it
        assert path.stat().st_size < 8000
        # numpy reads the sidecar as a plain .npz
        with np.load(path.with_name(f"{task}.pairs.npz"), allow_pickle=False) as npz:
            assert sorted(npz.files) == ["cosine", "gold", "index", "subset", "subsets"]
            assert (npz["cosine"].dtype, npz["subset"].dtype, npz["index"].dtype) == (
                np.float64,
                np.int16,
                np.int32,
            )
    assert set(run.pairs) == {"STS16", "STSBenchmark"}


def test_intervals_hold_their_figures_and_a_rerun_writes_the_same_files(written, mock_data, tmp_path):
    out, run = written
    for r in run.results:
        iv = r.interval
        assert iv["low"] <= r.reported <= iv["high"] and iv["high"] - iv["low"] > 1
        assert (iv["B"], iv["level"], iv["seed"]) == (B, 0.95, 1111)
        stratified = "stratified by subset" in iv["method"]
        assert stratified == (r.task == "STS16")
        assert read_result(_folder(out) / f"{r.task}.json").interval == iv
    average = read_average(_folder(out) / "average_sts.json")
    assert average.tasks == ["STS16", "STSBenchmark"]
    assert average.reported == simcse_average([r.reported for r in run.results])
    assert average.interval["low"] <= average.reported <= average.interval["high"]
    assert "jointly" in average.interval["method"] and average.interval["B"] == B
    # seeded: the same command gives the same intervals and byte-identical sidecars
    again = stsbench.evaluate(
        stsbench.MockEncoder(dim=8), TASKS, data_dir=mock_data, output=tmp_path, bootstrap=B
    )
    assert [r.interval for r in again.results] == [r.interval for r in run.results]
    for task in TASKS.split(","):
        assert (_folder(tmp_path) / f"{task}.pairs.npz").read_bytes() == (
            _folder(out) / f"{task}.pairs.npz"
        ).read_bytes()
    # a task's interval is the same alone as beside others; another seed draws other resamples
    alone = stsbench.evaluate(stsbench.MockEncoder(dim=8), "STS16", data_dir=mock_data, bootstrap=B)
    assert alone.results[0].interval == run.results[0].interval
    other = stsbench.evaluate(stsbench.MockEncoder(dim=8), "STS16", data_dir=mock_data, bootstrap=B, seed=7)
    assert other.results[0].interval != run.results[0].interval and other.results[0].interval["seed"] == 7


def test_the_average_interval_is_the_joint_bootstrap_of_the_stats_module(written):
    from stsbench.stats.bootstrap import bootstrap_figures, percentile_interval

    out, run = written
    sets = [read_pairs(_folder(out) / f"{t}.json") for t in TASKS.split(",")]
    figures = bootstrap_figures(sets, B, 1111)
    for r in run.results:
        low, high = percentile_interval(figures[r.task])
        assert (r.interval["low"], r.interval["high"]) == (round(100 * low, 2), round(100 * high, 2))
    low, high = percentile_interval(figures["Avg."])
    assert (run.average.interval["low"], run.average.interval["high"]) == (
        round(100 * low, 2),
        round(100 * high, 2),
    )


@pytest.mark.realdata  # STS16's 1186 pairs
def test_bootstrap_0_writes_no_interval_and_drops_a_stale_average(written, data_dir, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(written[0], out)
    # other weights under the same name (a rerun that gives the same pairs keeps the average: test_trust_results)
    mock = stsbench.MockEncoder(dim=8, seed=1)
    run = stsbench.evaluate(mock, "STS16", data_dir=data_dir, output=out, bootstrap=0)
    assert run.results[0].interval is None and run.average is None
    saved = json.loads((_folder(out) / "STS16.json").read_text())
    assert saved["interval"] is None and saved["pairs"]["n"] == 1186  # the sidecar is still written
    # the old average took in the old STS16: it is gone, not left to describe results that are not there
    assert not (_folder(out) / "average_sts.json").exists()
    assert read_result(_folder(out) / "STSBenchmark.json").interval is not None  # other tasks untouched
    # one STS task with intervals: its Avg. is itself, shown but not written; an old average still goes
    shutil.copy(_folder(written[0]) / "average_sts.json", _folder(out))
    one = stsbench.evaluate(stsbench.MockEncoder(dim=8), "STS16", data_dir=data_dir, output=out, bootstrap=B)
    assert one.average.interval["low"] <= one.results[0].reported <= one.average.interval["high"]
    assert not (_folder(out) / "average_sts.json").exists() and one.results[0].interval is not None


@pytest.mark.parametrize("bad", [-1, 2.5, "1000", True, None])
def test_bad_bootstrap_is_refused_before_any_work(bad, mock_data, tmp_path):
    mock = stsbench.MockEncoder(dim=8)
    with pytest.raises(StsbenchError) as exc:
        stsbench.evaluate(mock, "STS16", data_dir=mock_data, output=tmp_path, bootstrap=bad)
    one_line(exc, "bootstrap", ">= 0")
    assert mock.n_encoded == 0 and not any(tmp_path.iterdir())


@pytest.mark.parametrize("value", ["-1", "many"])
def test_cli_refuses_a_bad_bootstrap_in_one_line(value, tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, err = run_cli(["run", "--tasks", "STS16", "--bootstrap", value, "-o", out, "-q"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and "--bootstrap" in lines[0]
    # the option and the value refused, in click's words (which change between releases: "valid integer",
    # "valid int range"), and nothing written
    assert value in lines[0] and "Traceback" not in err and stdout == "" and not out.exists()


def _break(folder: Path, how: str) -> None:
    npz, js = folder / "STS16.pairs.npz", folder / "STS16.json"
    if how == "missing":
        npz.unlink()
    elif how == "edited":
        data = bytearray(npz.read_bytes())
        data[len(data) // 2] ^= 0xFF
        npz.write_bytes(bytes(data))
    elif how in ("not npz", "wrong arrays"):
        import hashlib

        from stsbench.files import npz_bytes

        body = b"not a zip at all" if how == "not npz" else npz_bytes({"cosine": np.zeros(3)})
        npz.write_bytes(body)
        saved = json.loads(js.read_text())
        saved["pairs"]["sha256"] = hashlib.sha256(body).hexdigest()  # both edited: the checksum agrees
        js.write_text(json.dumps(saved))
    elif how == "outside":
        saved = json.loads(js.read_text())
        saved["pairs"]["file"] = "../STS16.pairs.npz"
        js.write_text(json.dumps(saved))


@pytest.mark.parametrize(
    ("how", "needles"),
    [
        ("missing", ["STS16.pairs.npz: missing", "rerun `stsbench run`"]),
        ("edited", ["sha256 differs", "edited or replaced"]),
        ("not npz", ["not a readable .npz"]),
        ("wrong arrays", ["malformed per-pair sidecar", "no 'gold' array", "'cosine' is float64[3]"]),
        ("outside", ["malformed 'pairs' entry"]),
    ],
)
def test_a_broken_sidecar_is_one_line(how, needles, written, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(written[0], out)
    _break(_folder(out), how)
    with pytest.raises(StsbenchError) as exc:
        read_pairs(_folder(out) / "STS16.json")
    one_line(exc, *needles)
    read_pairs(_folder(out) / "STSBenchmark.json")  # its neighbour still reads


def test_results_written_before_the_new_fields_still_read(tmp_path):
    path = FIXTURES / "test" / "STS16.json"
    saved = json.loads(path.read_text())
    assert "pairs" not in saved and "interval" not in saved  # a file of the old layout
    result = read_result(path)
    assert result.pairs is None and result.interval is None and result.reported == saved["reported"]
    with pytest.raises(StsbenchError) as exc:
        read_pairs(path)
    one_line(exc, "no per-pair sidecar recorded", "rerun")
    with pytest.raises(StsbenchError) as exc:
        read_pairs(FIXTURES / "fasttest" / "MR.json")
    one_line(exc, "transfer task result has no per-pair sidecar")


def test_readers_of_results_folders_pass_over_sidecars_and_the_average(written, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(written[0], out)
    shutil.copytree(FIXTURES / "test", out / "old" / "cls" / "test")  # a run of the old layout beside it
    found = collect(out)
    assert found.warnings == [] and [a.result.tasks for a in found.averages] == [["STS16", "STSBenchmark"]]
    assert sorted(t.result.task for t in found.tasks) == sorted(
        ["STS16", "STSBenchmark"] * 2 + ["STS12", "STS13", "STS14", "STS15", "SICKRelatedness"]
    )
    comparison = check_results(out, "mteb/all-MiniLM-L6-v2", model="mock")
    assert {r.task for r in comparison.rows if r.measured is not None} == {"STS16", "STSBenchmark"}
    assert "analysis" not in comparison.compared()  # the average is not an analysis file either


def _wilson(acc: float, n: int) -> tuple[float, float]:
    """Wilson's score interval written out (z of 95%)."""
    p, z = acc / 100, stats.norm.ppf(0.975)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return round(100 * (centre - half), 2), round(100 * (centre + half), 2)


def _t(values: list[float]) -> tuple[float, float]:
    v = np.asarray(values)
    half = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / math.sqrt(len(v))
    return round(v.mean() - half, 2), round(v.mean() + half, 2)


@pytest.mark.parametrize("task", ["MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC"])
def test_transfer_intervals_on_the_fixture_results(task):
    result = read_result(FIXTURES / "fasttest" / f"{task}.json")
    s = result.scores
    iv = transfer_interval(result.metric, s)
    if task in ("MR", "CR", "SUBJ", "MPQA"):
        want, method = _t([f["test_acc"] for f in s["folds"]]), "t over k folds"
        assert iv["k"] == s["kfold"] == 5
    else:
        want, method = _wilson(s["test_acc"], s["n_test"]), "wilson binomial"
        assert iv["n"] == s["n_test"]
    assert iv["method"] == method and iv["level"] == 0.95
    assert (iv["low"], iv["high"]) == pytest.approx(want, abs=0.011)
    assert iv["low"] <= result.reported <= iv["high"]


def test_transfer_intervals_in_dev_mode_follow_the_dev_figure():
    sst2 = read_result(FIXTURES / "fasttest" / "SST2.json").scores
    iv = transfer_interval("dev_acc", sst2)
    assert iv["n"] == sst2["n_dev"] == 872
    assert (iv["low"], iv["high"]) == pytest.approx(_wilson(sst2["dev_acc"], 872), abs=0.011)
    trec = read_result(FIXTURES / "fasttest" / "TREC.json").scores
    iv = transfer_interval("dev_acc", trec)
    assert iv["method"] == "t over k folds" and iv["k"] == 5
    assert (iv["low"], iv["high"]) == pytest.approx(_t(trec["fold_dev_acc"]), abs=0.011)
    assert transfer_interval("test_acc", {"protocol": "someone else's"}) is None


def test_run_shows_intervals_in_its_table_and_json(tiny_bert, mock_data, tmp_path, capsys):
    args = ["run", "--model", tiny_bert, "--pooler", "avg", "--tasks", TASKS, "--data-dir", mock_data]
    args += ["-o", tmp_path / "o", "--cache-dir", tmp_path / "c", "-q", "--bootstrap", "50"]
    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0, err
    printed = json.loads(out)
    folder = next((tmp_path / "o").glob("*/avg/test"))
    saved = {t: read_result(folder / f"{t}.json").interval for t in TASKS.split(",")}
    average = read_average(folder / "average_sts.json").interval
    assert printed["intervals"] == {t: [iv["low"], iv["high"]] for t, iv in saved.items()}
    assert printed["average_intervals"] == {"STS": [average["low"], average["high"]]}
    saved["Avg."] = average
    assert all(iv["B"] == 50 for iv in saved.values())
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    rows = [ln for ln in out.splitlines() if ln.startswith("│")]
    assert len(rows) == 2  # the figures, then their intervals
    cells = [c.strip() for c in rows[1].strip("│").split("│")]
    assert cells == [f"[{iv['low']:.1f}, {iv['high']:.1f}]" for iv in saved.values()]
    assert "95% intervals: percentile bootstrap over pairs" in out
    code, out, err = run_cli([*args[:-2], "--bootstrap", "0", "--format", "json"], capsys)
    assert code == 0 and json.loads(out)["intervals"] == json.loads(out)["average_intervals"] == {}


def test_json_of_a_run_with_both_kinds_puts_the_sts_average_interval_apart():
    from stsbench.commands.run import scores_json
    from stsbench.evaluation.run import RunResult
    from stsbench.results.schema import AverageResult

    sts = [read_result(FIXTURES / "test" / f"{t}.json") for t in ("STS12", "STS13")]
    transfer = [read_result(FIXTURES / "fasttest" / f"{t}.json") for t in ("MR", "SST2")]
    for i, r in enumerate(sts):
        r.interval = {"low": 10.0 + i, "high": 20.0 + i}
    for r in transfer:
        r.interval = transfer_interval(r.metric, r.scores)
    average = AverageResult(
        ["STS12", "STS13"], {}, 0.0, {"low": 1.5, "high": 2.5}, sts[0].model, "test", sts[0].provenance
    )
    got = scores_json(RunResult("m", "test", "cls", sts + transfer, average=average))
    assert got["intervals"]["STS12"] == [10.0, 20.0] and got["intervals"]["STS13"] == [11.0, 21.0]
    assert got["intervals"]["MR"] == [transfer[0].interval["low"], transfer[0].interval["high"]]
    assert got["average_intervals"] == {"STS": [1.5, 2.5]} and "Avg." not in got["intervals"]
    assert set(got["averages"]) == {"STS", "Transfer"}
