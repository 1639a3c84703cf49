"""Every run knows whether it scored the canonical data (the checksum manifest), and says so where it differs.

An emptied or edited data file is refused in one line naming it and the fix; under ``--allow-modified-data`` the
run goes on, its results record the files that differ, and the run's table, ``stsbench report`` and ``stsbench
check`` mark or refuse those figures. Data is always a temporary copy of the part of the shared data needed.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
from pathlib import Path

import pytest
from helpers import run_cli

import stsbench
from stsbench import sources
from stsbench.data import integrity
from stsbench.errors import StsbenchError
from stsbench.sources import sha256_file

STS16 = Path("downstream/STS/STS16-en-test")
EMPTIED = [f"{STS16}/STS.gs.plagiarism.txt", f"{STS16}/STS.input.plagiarism.txt"]


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch) -> Path:
    """The sha256 cache in a fresh folder, read afresh by this test."""
    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sources, "_STAMPS", {})
    monkeypatch.setattr(sources, "_STAMPS_READ", set())
    return tmp_path / "cache" / sources.SHA_FILE


def _copy(data_dir: Path, root: Path, *parts: str) -> Path:
    for part in parts:
        shutil.copytree(data_dir / part, root / part)
    return root


@pytest.fixture()
def emptied(data_dir, tmp_path) -> Path:
    """STS16 with its plagiarism subset emptied (both files), plus STS-B untouched: the issue's case."""
    root = _copy(data_dir, tmp_path / "data", str(STS16), "downstream/STS/STSBenchmark")
    for rel in EMPTIED:
        (root / rel).write_bytes(b"")
    return root


def _one_line(code: int, err: str, *needles: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def _run(model, data, out, cache, *extra) -> list:
    args = ["run", "--model", model, "--tasks", "STS16,STSBenchmark", "--data-dir", data, "--output", out]
    return [*args, "--cache-dir", cache, "--pooler", "avg", "--bootstrap", "0", "-q", *extra]


def test_an_emptied_subset_is_refused_in_one_line_naming_the_file_and_the_fix(
    emptied, tiny_bert, tmp_path, capsys
):
    out = tmp_path / "out"
    code, _, err = run_cli(_run(tiny_bert, emptied, out, tmp_path / "c"), capsys)
    _one_line(code, err, str(emptied / EMPTIED[0]), "stsbench data download", "--allow-modified-data")
    assert not out.exists()


def test_a_same_size_edit_is_caught_by_sha256_and_an_unlisted_file_is_not_checked(data_dir, tmp_path):
    root = _copy(data_dir, tmp_path / "data", str(STS16))
    gs = root / STS16 / "STS.gs.headlines.txt"
    gs.write_bytes(gs.read_bytes().replace(b"4", b"3", 1))
    with pytest.raises(StsbenchError, match="same size, other sha256"):
        stsbench.evaluate(stsbench.MockEncoder(dim=8), "STS16", data_dir=root, bootstrap=0)
    own = root / "downstream" / "mine" / "pairs.tsv"  # a user's own task data: no canonical version
    own.parent.mkdir()
    own.write_text("a\tb\t1\n")
    assert integrity.differences(root, [own, gs]) == {
        f"{STS16}/STS.gs.headlines.txt": "same size, other sha256"
    }


def test_modified_data_is_recorded_and_marked_in_the_table_and_json(emptied, tiny_bert, tmp_path, capsys):
    out = tmp_path / "out"
    code, table, err = run_cli(_run(tiny_bert, emptied, out, tmp_path / "c", "--allow-modified-data"), capsys)
    assert code == 0, err
    folder = next(out.glob("*/avg/test"))
    prov = json.loads((folder / "STS16.json").read_text())["provenance"]
    assert sorted(prov["data_modified"]) == EMPTIED and "0 bytes" in prov["data_modified"][EMPTIED[0]]
    assert json.loads((folder / "STSBenchmark.json").read_text())["provenance"]["data_modified"] is None
    row = next(ln for ln in table.splitlines() if integrity.MARK in ln)
    assert row.count(integrity.MARK) == 2  # STS16 and the Avg., not STS-B
    assert integrity.modified_note(EMPTIED) in table.replace("\n", "")
    code, text, _ = run_cli(
        [*_run(tiny_bert, emptied, out, tmp_path / "c", "--allow-modified-data"), "--format", "json"], capsys
    )
    assert json.loads(text)["modified_data"] == {"STS16": EMPTIED}


@pytest.fixture()
def modified_results(emptied, tmp_path) -> Path:
    out = tmp_path / "results"
    stsbench.evaluate(
        stsbench.MockEncoder(dim=8),
        "STS16,STSBenchmark",
        data_dir=emptied,
        output=out,
        bootstrap=0,
        allow_modified_data=True,
    )
    return out


def test_report_marks_the_figures_and_says_why(modified_results, tmp_path, capsys):
    code, _, err = run_cli(["report", "--results", modified_results, "--out", tmp_path / "rep"], capsys)
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text()
    row = next(ln for ln in md.splitlines() if ln.startswith("| mock"))
    assert row.count(integrity.MARK) == 2  # STS16 and the Avg.
    assert integrity.modified_note(EMPTIED) in md
    assert "not comparable with published figures" in md
    data_rows = [ln for ln in md.splitlines() if "plagiarism" in ln and "not the canonical file" in ln]
    assert len(data_rows) == 2  # the provenance section's data table, both emptied files


def test_check_never_passes_a_figure_on_modified_data(modified_results, monkeypatch):
    from stsbench.published import check

    # a published row equal to what was measured: everything within tolerance, except that the data differs
    measured = {p.stem: json.loads(p.read_text())["reported"] for p in modified_results.rglob("*.json")}
    entry = check.get_entry("esimcse-arxiv/table5/unsup-simcse-bert-base")
    monkeypatch.setattr(check, "comparable_tasks", lambda e: {t: measured[t] for t in measured})
    result = check.check_results(modified_results, entry.key)
    status = {r.task: r.status for r in result.rows}
    assert status == {"STS16": "MODIFIED", "STSBenchmark": "OK"} and not result.passed
    assert EMPTIED[0] in result.summary() and "not comparable" in result.summary()


def test_transfer_and_analysis_data_is_checked_too(data_dir, tmp_path):
    root = _copy(data_dir, tmp_path / "data", "downstream/MR", "downstream/STS/STSBenchmark")
    neg = root / "downstream/MR/rt-polarity.neg"
    neg.write_bytes(neg.read_bytes()[:-200])
    with pytest.raises(StsbenchError, match="rt-polarity.neg: differs from the canonical"):
        stsbench.evaluate(stsbench.MockEncoder(dim=8), "MR", mode="fasttest", data_dir=root)
    dev = root / "downstream/STS/STSBenchmark/sts-dev.csv"
    dev.write_bytes(b"".join(dev.read_bytes().splitlines(keepends=True)[:-10]))  # ten pairs fewer
    with pytest.raises(StsbenchError, match="sts-dev.csv: differs from the canonical"):
        stsbench.analyze("spectrum", stsbench.MockEncoder(dim=8), data_dir=root, split="dev")
    run = stsbench.analyze(
        "spectrum", stsbench.MockEncoder(dim=8), data_dir=root, split="dev", allow_modified_data=True
    )
    assert list(run.records[0].provenance.data_modified) == ["downstream/STS/STSBenchmark/sts-dev.csv"]


def test_the_sha256_is_cached_by_path_size_and_mtime(data_dir, tmp_path, own_cache, monkeypatch):
    root = _copy(data_dir, tmp_path / "data", str(STS16))
    files = [root / STS16 / "STS.gs.headlines.txt"]
    assert integrity.differences(root, files) == {}
    cached = json.loads(own_cache.read_text())
    key = str(files[0].absolute())
    assert cached[key][2] == sha256_file(files[0])
    cached[key][2] = "0" * 64  # a cache hit is believed: the file is not read again ...
    own_cache.write_text(json.dumps(cached))
    monkeypatch.setattr(sources, "_STAMPS", {})
    monkeypatch.setattr(sources, "_STAMPS_READ", set())
    assert integrity.differences(root, files) == {f"{STS16}/STS.gs.headlines.txt": "same size, other sha256"}
    st = files[0].stat()
    os.utime(files[0], ns=(st.st_atime_ns, st.st_mtime_ns + 1000))  # ... until the file's mtime changes
    assert integrity.differences(root, files) == {}


def _archive(path: Path) -> Path:
    with tarfile.open(path, "w") as tar:
        data = b"new\n"
        info = tarfile.TarInfo("SentEval/data/downstream/STS/new.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


def test_extract_replaces_the_tree_despite_a_leftover_backup(tmp_path):
    from stsbench.data.integrity import extract_senteval

    data = tmp_path / "d"
    (data / "downstream").mkdir(parents=True)
    (data / "downstream" / "old.txt").write_text("old")
    (data / ".downstream-old" / "x").mkdir(parents=True)  # what an interrupted earlier extraction left
    (data / ".downstream-old" / "x" / "f").write_text("stale")
    assert extract_senteval(_archive(tmp_path / "s.tar"), data) == 1
    assert (data / "downstream" / "STS" / "new.txt").read_text() == "new\n"
    assert sorted(p.name for p in data.iterdir()) == ["downstream"]


def test_export_mteb_refuses_a_revision_that_is_a_path_and_modified_results(
    modified_results, tmp_path, capsys
):
    pytest.importorskip("mteb")
    out = tmp_path / "mteb"
    args = ["export-mteb", modified_results, "--out", out, "--model-name", "me/mock"]
    code, _, err = run_cli([*args, "--revision", "../../escape"], capsys)
    _one_line(code, err, "--revision '../../escape'", "no '/' or '..'")
    code, _, err = run_cli([*args, "--revision", "v1"], capsys)
    _one_line(code, err, EMPTIED[0], "differs from the canonical")
    assert not out.exists() or not any(p.is_file() for p in out.rglob("*"))


def test_the_reports_seed_table_marks_a_group_with_one_seed_on_modified_data(tmp_path):
    from seed_results import make_seed_results

    from stsbench.reports.collect import collect, find_models
    from stsbench.reports.scores import score_table

    root = make_seed_results(tmp_path / "results")
    one = root / "esimcse__seed-2" / "avg" / "test" / "STS12.json"
    data = json.loads(one.read_text())
    data["provenance"]["data_modified"] = {"downstream/STS/STS12-en-test/STS.gs.MSRpar.txt": "0 bytes"}
    one.write_text(json.dumps(data))
    coll = collect(root)
    table = score_table(coll.tasks, find_models(coll), "sts")
    rows = [list(r) for r in table.frame.itertuples(index=False)]
    at = {r[0]: i for i, r in enumerate(rows)}
    esimcse, interval = rows[at["ESimCSE (n=3)"]][2:], rows[at["ESimCSE (n=3)"] + 1][2:]
    expected = [True] + [False] * 6 + [True]  # STS12 and the Avg., mean ± std and the interval over seeds
    assert [c.endswith(integrity.MARK) for c in esimcse] == expected
    assert [c.endswith(integrity.MARK) for c in interval] == expected
    assert not any(integrity.MARK in c for c in rows[at["unsup-SimCSE (n=3)"]])
    assert any("STS.gs.MSRpar.txt" in n and n.startswith(integrity.MARK) for n in table.notes)


def test_the_python_api_refuses_before_a_model_loads(emptied, tmp_path):
    # a model folder that does not exist: had it been loaded first, the error would be about the model
    with pytest.raises(StsbenchError, match="STS.gs.plagiarism.txt: differs from the canonical"):
        stsbench.evaluate(str(tmp_path / "no-model"), "STS16", data_dir=emptied)
