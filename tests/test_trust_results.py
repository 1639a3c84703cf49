"""Results files that lie, and the readers' failures: every reader checks a figure against its own pairs.

`check`, `compare` and `report` read a task result through the results layer's one check
(:func:`stsbench.results.read.verify_result`): an STS figure its per-pair sidecar does not give, or a sidecar
that is not the one the results file records, is one line naming the file (`report`: a skipped file, with a
warning naming it). A run writes a task's two files together or not at all.
"""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli

import stsbench
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_npz
from stsbench.published.check import check_results
from stsbench.reports.collect import collect
from stsbench.results.write import pairs_path

TASKS = "STS16,STSBenchmark"
B = 50
KEY = "esimcse-arxiv/table5/unsup-simcse-bert-base"  # a 7-task STS row with an Avg.


@pytest.fixture(scope="module")
def written(tmp_path_factory, mock_data) -> Path:
    """A mock model's STS16 and STS-B results on the mock data, sidecars and average (the output folder)."""
    out = tmp_path_factory.mktemp("trust") / "out"
    stsbench.evaluate(stsbench.MockEncoder(dim=8), TASKS, data_dir=mock_data, output=out, bootstrap=B)
    return out


def _folder(out: Path) -> Path:
    return out / "mock" / "mean-of-words" / "test"


def _copy(written: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(written, out)
    return out


def _edit(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    for key, value in changes.items():
        target = data
        *parents, last = key.split(".")
        for p in parents:
            target = target[p]
        target[last] = value
    path.write_text(json.dumps(data))


def _one_line(text: str, *needles: str) -> None:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    for n in needles:
        assert n in lines[0], text


def _lie(out: Path, how: str) -> Path:
    """Make STS16's results file lie; returns the file the error must name."""
    json_path = _folder(out) / "STS16.json"
    if how == "reported":  # the figure edited by hand, its sidecar untouched
        data = json.loads(json_path.read_text())
        _edit(json_path, reported=round(data["reported"] + 1.0, 2))
        return json_path
    sidecar = pairs_path(json_path)  # the sidecar rewritten (other cosines): its sha256 no longer matches
    with np.load(sidecar) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["cosine"] = arrays["cosine"][::-1].copy()
    atomic_write_npz(sidecar, arrays)
    return sidecar


@pytest.mark.parametrize("how", ["reported", "sidecar"])
def test_a_lying_results_file_fails_check_compare_and_is_skipped_by_report(how, written, tmp_path, capsys):
    out = _copy(written, tmp_path)
    named = _lie(out, how)
    needle = "is not what its per-pair sidecar gives" if how == "reported" else "sha256 differs"

    code, stdout, err = run_cli(["check", "--results", out, "--against", KEY], capsys)
    assert code == 2 and not stdout
    _one_line(err, str(named), needle)

    code, stdout, err = run_cli(["compare", _folder(written), _folder(out)], capsys)
    assert code == 2 and not stdout
    _one_line(err, str(named), needle)

    # report: the lying file is skipped with a warning naming it; its figure appears nowhere
    found = collect(out)
    assert [r.result.task for r in found.tasks] == ["STSBenchmark"]
    assert any(str(named) in w and needle in w for w in found.warnings), found.warnings
    code, _, err = run_cli(["report", "--results", out, "--out", tmp_path / "report", "--strict"], capsys)
    assert code == 1 and f"warning: {named}" in err
    lied = json.loads((_folder(out) / "STS16.json").read_text())["reported"]
    shown = [
        line
        for line in (tmp_path / "report" / "report.md").read_text().splitlines()
        if "skipped it" not in line
    ]
    assert not any(f"{lied:.2f}" in line for line in shown)  # only the skip warning quotes it


def test_check_says_which_figures_it_could_not_verify(written, tmp_path):
    out = _copy(written, tmp_path)
    assert "not verifiable" not in check_results(out, KEY).compared()  # every figure has its pairs
    # an STS result written before sidecars existed: read, compared, and said to be unverified
    _edit(_folder(out) / "STS16.json", pairs=None)
    pairs_path(_folder(out) / "STS16.json").unlink()
    line = check_results(out, KEY).compared()
    assert "not verifiable against pairs (no per-pair sidecar): STS16" in line and "STSBenchmark" not in line


@pytest.mark.parametrize(
    ("key", "value", "needle"),
    [
        ("reported", "79.12", "'reported' is '79.12', not a number"),
        ("model.name", ["a", "b"], "'model.name' is"),
    ],
)
def test_a_malformed_field_is_one_line_in_check_and_a_warning_in_report(
    key, value, needle, written, tmp_path, capsys
):
    out = _copy(written, tmp_path)
    bad = _folder(out) / "STS16.json"
    _edit(bad, **{key: value})
    code, _, err = run_cli(["check", "--results", out, "--against", KEY], capsys)
    assert code == 2
    _one_line(err, str(bad), needle)
    found = collect(out)
    assert [r.result.task for r in found.tasks] == ["STSBenchmark"]
    assert any(str(bad) in w and needle in w for w in found.warnings), found.warnings
    code, _, err = run_cli(["report", "--results", out, "--out", tmp_path / "report"], capsys)
    assert code == 0 and f"warning: {bad}" in err and "Traceback" not in err


def test_compare_names_an_unreadable_results_file(written, tmp_path, capsys):
    out = _copy(written, tmp_path)
    bad = _folder(out) / "STS16.json"
    bad.write_text("{not json")
    code, stdout, err = run_cli(["compare", _folder(written), _folder(out)], capsys)
    assert code == 2 and not stdout
    _one_line(err, str(bad), "not a readable JSON file")
    assert "tasks differ" not in err


def test_compare_names_a_mistyped_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("STSBENCH_DATA", str(tmp_path / "no-data"))
    code, _, err = run_cli(["compare", "results/nope/avg/test", "results/nope/avg/test"], capsys)
    assert code == 2
    _one_line(err, "results/nope/avg/test: no such folder")
    assert "SentEval data" not in err


def test_check_and_report_pass_over_hidden_files_alike(written, tmp_path):
    out = _copy(written, tmp_path)
    hidden = out / ".old" / "mock" / "mean-of-words" / "test"
    shutil.copytree(_folder(out), hidden)  # a copy set aside: not a second measurement of each task
    comparison = check_results(out, KEY)
    assert {r.task for r in comparison.rows if r.measured} == {"STS16", "STSBenchmark"}
    assert all(".old" not in r.path for r in collect(out).tasks)


@pytest.fixture
def constant_gold(tmp_path, mock_data) -> Path:
    """A copy of the mock STS16 whose every gold score is 3."""
    root = tmp_path / "data"
    dst = root / "downstream" / "STS" / "STS16-en-test"
    shutil.copytree(mock_data / "downstream" / "STS" / "STS16-en-test", dst)
    for gs in dst.glob("STS.gs.*.txt"):
        gs.write_text("".join("3\n" if line.strip() else "\n" for line in gs.read_text().splitlines(True)))
    return root


@pytest.mark.parametrize("bootstrap", [0, B])
def test_constant_gold_is_one_line_without_warnings_or_files(bootstrap, constant_gold, tmp_path):
    out = tmp_path / "out"
    with warnings.catch_warnings(record=True) as caught, pytest.raises(StsbenchError) as exc:
        warnings.simplefilter("always")
        stsbench.evaluate(
            stsbench.MockEncoder(dim=8),
            "STS16",
            data_dir=constant_gold,
            output=out,
            bootstrap=bootstrap,
            allow_modified_data=True,  # past the data manifest's refusal, to what scoring it does
        )
    _one_line(str(exc.value), "STS16", "every gold score is 3", "correlation is undefined")
    assert [str(w.message) for w in caught] == []  # no raw scipy ConstantInputWarning / RuntimeWarning
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))


def test_a_result_json_cannot_hold_writes_neither_file(mock_data, tmp_path, monkeypatch):
    from stsbench.tasks import sts

    evaluate = sts.STSTask.evaluate

    def nan_detail(self, *args, **kwargs):
        scores = evaluate(self, *args, **kwargs)
        scores.details["aggregate"]["spearman"]["mean"] = float("nan")
        return scores

    monkeypatch.setattr(sts.STSTask, "evaluate", nan_detail)
    out = tmp_path / "out"
    with pytest.raises(StsbenchError) as exc:
        stsbench.evaluate(stsbench.MockEncoder(dim=8), "STS16", data_dir=mock_data, output=out, bootstrap=0)
    _one_line(str(exc.value), "STS16", "nothing was written")
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))


def test_a_rerun_that_gives_the_same_pairs_keeps_the_average(written, mock_data, tmp_path):
    out = _copy(written, tmp_path)
    average = _folder(out) / "average_sts.json"
    before = average.read_bytes()
    # one task again, same model: the same figure from byte-identical pairs; the Avg. is still the Avg.
    for bootstrap in (B, 0):
        stsbench.evaluate(
            stsbench.MockEncoder(dim=8), "STS16", data_dir=mock_data, output=out, bootstrap=bootstrap
        )
        assert average.read_bytes() == before
    # other weights under the same name: other pairs, so the average of the old STS16 goes
    stsbench.evaluate(
        stsbench.MockEncoder(dim=8, seed=1), "STS16", data_dir=mock_data, output=out, bootstrap=0
    )
    assert not average.exists()


def _seed_aggregate(out: Path, figures: dict[str, float]) -> None:
    """Three seeds around ``figures`` (-0.1, 0, +0.1), with each seed's Avg. over those tasks."""
    from stsbench.metrics import simcse_average
    from stsbench.results.runs import build_aggregate, write_aggregate

    per_seed = {}
    for s, offset in zip((1, 2, 3), (-0.1, 0.0, 0.1), strict=True):
        scores = {t: round(v + offset, 2) for t, v in figures.items()}
        scores["Avg."] = simcse_average(list(scores.values()))
        per_seed[s] = {"model": f"/runs/x/seed-{s}", "scores": scores}
    write_aggregate(out, build_aggregate("/runs/x", "avg", "test", per_seed))


def test_check_over_seeds_compares_an_avg_only_over_the_published_tasks(tmp_path):
    from stsbench.published.check import check_seeds
    from stsbench.published.registry import get_entry

    published = get_entry(KEY).task_values
    two = tmp_path / "two"
    _seed_aggregate(two, {t: published[t] for t in ("STS12", "STS13")})  # each inside its interval
    c = check_seeds(two, KEY)
    rows = {r.task: r.status for r in c.rows}
    assert rows["STS12"] == rows["STS13"] == "inside" and rows["Avg."] == "not checked"
    assert "Avg." not in c.summary()  # the 5 missing tasks fail it, not a 2-task Avg. against a 7-task one
    # the seeds' Avg. over the published tasks is compared (here: every task inside, so is the Avg.)
    seven = tmp_path / "seven"
    _seed_aggregate(seven, dict(published))
    c = check_seeds(seven, KEY)
    assert {r.task: r.status for r in c.rows}["Avg."] == "inside" and c.passed


@pytest.mark.parametrize("how", ["reported", "figures", "task gone"])
def test_report_skips_an_average_its_task_results_do_not_give(how, written, tmp_path):
    out = _copy(written, tmp_path)
    average = _folder(out) / "average_sts.json"
    assert [a.path for a in collect(out).averages] == [average.relative_to(out).as_posix()]
    data = json.loads(average.read_text())
    if how == "reported":  # the Avg. edited by hand
        _edit(average, reported=round(data["reported"] + 0.5, 2))
    elif how == "figures":  # a figure and the Avg. edited together, away from STS16.json's
        figures = {**data["figures"], "STS16": round(data["figures"]["STS16"] + 1.0, 2)}
        _edit(average, figures=figures, reported=round(sum(figures.values()) / len(figures), 2))
    else:  # the results it averaged are gone
        (_folder(out) / "STS16.json").unlink()
    found = collect(out)
    assert found.averages == []
    assert any(str(average) in w for w in found.warnings), found.warnings
