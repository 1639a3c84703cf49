"""Files hold no machine paths: paths relative to the folder written into, the data folder by its name.

Every file that ``stsbench run``, the analyses and ``stsbench report`` write under a ``tmp_path`` is grepped for
the test session's temporary folder (where the model, the data and the output all are); what is recorded
relative still leads the readers to the same folders, and files written before (absolute paths) still read.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, run_cli

CHECKED_IN_RUN = ROOT / "reports" / "cpu-mini-replication" / "results" / "train" / "simcse" / "seed-1"


def machine_paths(folder: Path, machine: str, typed: str = "") -> list[str]:
    """The files under ``folder`` whose bytes hold ``machine`` (a folder's absolute path).

    ``typed``: a command line a report quotes as it was typed (its "Made by" line), left out of the search: the
    paths a user gave are theirs to see again (an absolute --out named relative read as written elsewhere).
    """

    def holds(path: Path) -> bool:
        data = path.read_bytes()
        return machine.encode() in (data.replace(typed.encode(), b"") if typed else data)

    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() and holds(p))


def test_portable_forms():
    from stsbench.results.write import portable, portable_command, resolve

    out = "/work/r/results"
    assert portable("/work/r/runs/simcse/seed-1", out) == "../runs/simcse/seed-1"
    assert portable("/srv/data/wiki/w.txt", out, "/srv/data") == "data/wiki/w.txt"
    assert portable("/srv/data", out, "/srv/data") == "data"
    assert portable("/opt/x/models/m", out) == ".../models/m"  # nothing in common but the root
    assert portable("all-MiniLM-L6-v2", out) == "all-MiniLM-L6-v2"  # names and relative paths as given
    assert portable("runs/simcse", out) == "runs/simcse"
    assert resolve("../runs/simcse/seed-1", out) == "/work/r/runs/simcse/seed-1"
    assert resolve("/abs/old", out) == "/abs/old"
    line = "stsbench run --model /work/r/runs/simcse --output /work/r/results --data-dir=/srv/data --quiet"
    assert portable_command(line, out) == (
        "stsbench run --model ../runs/simcse --output . --data-dir=data --quiet"
    )
    assert portable_command("stsbench run --model 'a b' -q", out) == "stsbench run --model 'a b' -q"


def test_run_analyses_and_report_write_no_machine_path(
    tiny_bert, mock_data, tmp_path, tmp_path_factory, monkeypatch, capsys
):
    from stsbench.reports.collect import collect, find_models
    from stsbench.results.read import model_location

    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))
    machine = str(tmp_path_factory.getbasetemp())  # the model, the data and the outputs are all under it
    assert str(tiny_bert).startswith(machine) and str(mock_data).startswith(machine)
    out = tmp_path / "out"
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "".join(f"the cat sat on mat number {i} with a dog and a hat today\n" for i in range(40)), encoding="utf-8"
    )
    model = ["--model", tiny_bert, "--data-dir", mock_data]
    commands = [
        ["run", *model, "--tasks", "STS12,STSBenchmark", "--mode", "test", "--output", out / "results"],
        ["spectrum", *model, "--output", out / "results" / "analyses"],
        ["repetition-probe", "--model", tiny_bert, "--corpus", corpus, "--n", "5",
         "--min-overlap", "0.0", "--max-overlap", "1.0", "--output", out / "results" / "analyses"],
        ["report", "--results", out / "results", "--out", out],
    ]  # fmt: skip
    for cmd in commands:
        code, printed, err = run_cli(cmd, capsys)
        assert code == 0, printed + err
    written = [p for p in out.rglob("*") if p.is_file()]
    assert {p.name for p in written} >= {"STS12.json", "average_sts.json", "spectrum_test.json", "report.md"}
    assert {p.name for p in written} >= {"repetition_probe.json", "report.html"}
    typed = f"stsbench report --results {out / 'results'} --out {out}"  # the report's Made by, as typed
    assert typed in (out / "report.md").read_text()
    assert machine_paths(out, machine, typed) == []

    task = json.loads(next(out.rglob("STS12.json")).read_text())
    assert task["model"]["path"] == f"../../../{tiny_bert.parent.name}/tiny-bert"  # from out/results
    assert "--data-dir mock-data0 " in task["provenance"]["command"]  # the data folder by its name
    probe = json.loads(next(out.rglob("repetition_probe.json")).read_text())
    assert probe["config"]["corpus"] == probe["result"]["corpus"] == f"{tmp_path.name}/corpus.txt"
    # read back: the recorded paths lead to the model's folder again
    coll = collect(out / "results")
    assert {model_location(coll, r) for r in [*coll.tasks, *coll.analyses]} == {str(tiny_bert)}
    assert [m.label for m in find_models(coll)] == ["tiny-bert"]


def _run_folder(folder: Path, data: Path) -> None:
    """A training run's files as `stsbench train --output FOLDER` writes them, absolute paths in (the
    checked-in seed's, with this machine's folders)."""
    from stsbench.files import to_json

    def here(value):
        if isinstance(value, dict):
            return {k: here(v) for k, v in value.items()} | {
                k: {"output": str(folder), "data_dir": str(data)}.get(k, str(data / "wiki" / "wiki1m_head.txt"))
                for k in value
                if k in ("output", "data_dir", "train_file", "file")
            }
        return value

    folder.mkdir(parents=True)
    meta = json.loads((CHECKED_IN_RUN / "stsbench.json").read_text(encoding="utf-8"))
    (folder / "stsbench.json").write_text(to_json(here(meta)), encoding="utf-8")
    lines = (CHECKED_IN_RUN / "train_log.jsonl").read_text(encoding="utf-8").splitlines()
    log = "".join(json.dumps(here(json.loads(ln)), sort_keys=True) + "\n" for ln in lines)
    (folder / "train_log.jsonl").write_text(log, encoding="utf-8")


def _task_result(results: Path, model_path: str, name: str) -> None:
    """An STS12 result of the checkpoint at ``model_path`` (the checked-in seed's), written by the store."""
    from stsbench.results.schema import TaskResult
    from stsbench.results.write import write_result

    checked = ROOT / "reports" / "cpu-mini-replication" / "results" / "simcse__seed-1" / "avg" / "test" / "STS12.json"
    data = json.loads(checked.read_text(encoding="utf-8"))
    data["model"] = {**data["model"], "name": name, "path": model_path}
    data["pairs"] = None
    write_result(results, TaskResult.from_dict(data))


def test_training_copies_are_portable_and_still_linked_to_their_results(tmp_path):
    from stsbench.reports.collect import collect, find_models
    from stsbench.results.runs import load_train_run
    from stsbench.results.write import copy_training_file

    out, data = tmp_path / "OUT", tmp_path / "shared" / "data"
    run = out / "runs" / "simcse" / "seed-1"
    _run_folder(run, data)
    assert str(tmp_path) in (run / "stsbench.json").read_text()  # what train writes in its own folder
    copy = out / "results" / "train" / "simcse" / "seed-1"
    for name in ("stsbench.json", "train_log.jsonl"):
        copy_training_file(run / name, copy / name)
    assert machine_paths(copy, str(tmp_path)) == []
    meta = json.loads((copy / "stsbench.json").read_text())
    assert meta["training"]["output"] == "../../../../runs/simcse/seed-1"
    assert meta["training"]["data_dir"] == "data"
    assert meta["training"]["train_file"] == meta["resolution"]["corpus"]["file"] == "data/wiki/wiki1m_head.txt"
    start = json.loads((copy / "train_log.jsonl").read_text().splitlines()[0])
    assert start["config"]["output"] == "../../../../runs/simcse/seed-1"
    # every other line is the source's, byte for byte
    assert (copy / "train_log.jsonl").read_text().splitlines()[1:] == (
        (run / "train_log.jsonl").read_text().splitlines()[1:]
    )
    copied, _ = load_train_run(copy, "train/simcse/seed-1")
    assert copied is not None and copied.output == str(run)  # the same run as its source
    # the checkpoint's results (relative model.path) belong to the copied run
    _task_result(out / "results", str(run), str(run))
    results_file = next((out / "results").rglob("STS12.json"))
    assert json.loads(results_file.read_text())["model"]["path"] == "../runs/simcse/seed-1"
    (model,) = find_models(collect(out / "results"))
    assert model.run is not None and model.run.path == "train/simcse/seed-1" and model.label == "simcse/seed-1"
    # and files written before paths were relative (absolute everywhere) still link
    old = tmp_path / "old"
    shutil.copytree(run, old / "train" / "simcse" / "seed-1")
    _task_result(old, str(run), str(run))
    data_old = json.loads(next(old.rglob("STS12.json")).read_text())
    data_old["model"]["path"] = str(run)
    next(old.rglob("STS12.json")).write_text(json.dumps(data_old))
    (model,) = find_models(collect(old))
    assert model.run is not None and model.run.path == "train/simcse/seed-1"


def test_seed_aggregate_names_its_models_relative(tmp_path):
    from stsbench.results.runs import write_aggregate

    seeds = tmp_path / "runs" / "simcse"
    aggregate = {
        "model": str(seeds),
        "pooler": "avg",
        "mode": "test",
        "models": {"1": str(seeds / "seed-1"), "2": str(seeds / "seed-2")},
        "tasks": {},
    }
    path = write_aggregate(tmp_path / "results", aggregate)
    assert path == tmp_path / "results" / "runs__simcse" / "avg" / "test" / "seeds.json"  # named as before
    written = json.loads(path.read_text())
    assert written["model"] == "../runs/simcse"
    assert written["models"] == {"1": "../runs/simcse/seed-1", "2": "../runs/simcse/seed-2"}


@pytest.mark.parametrize("name", ["stsbench.json", "train_log.jsonl"])
def test_a_relative_copy_is_copied_as_it_is(tmp_path, name):
    """A run's files whose paths are relative already (a copy of a copy) are copied byte for byte."""
    from stsbench.results.write import copy_training_file

    copy_training_file(CHECKED_IN_RUN / name, tmp_path / name)
    assert (tmp_path / name).read_bytes() == (CHECKED_IN_RUN / name).read_bytes()


@pytest.mark.slow  # the session's tiny reproduction (tests/test_reproduce.py's `clean`)
def test_a_reproduction_s_results_and_report_hold_no_machine_path(tmp_path_factory, tmp_path):
    from helpers import DATA, tiny_reproduction

    from stsbench.reports.render import write_report

    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    clean = tiny_reproduction(tmp_path_factory)
    # the reproduction moved elsewhere (its weights aside): what it recorded still reads, and names no path of
    # the machine that made it; the lead's logs/ and the trainings' own folders (runs/) are that machine's
    out = tmp_path / "moved"
    shutil.copytree(clean, out, ignore=shutil.ignore_patterns("*.safetensors", "*.bin", "last"))
    kept = ["results", "figures", "report.md", "report.html", "reproduce.json"]
    # the report step's command, quoted as reproduce was given its --out (an absolute one here): the report's own
    typed = re.search(r"^Made by `([^`]+)`", (out / "report.md").read_text(), re.M).group(1)
    assert typed.startswith(f"stsbench report --results {clean}/results --out {clean} "), typed
    for machine in (str(tmp_path_factory.getbasetemp()), str(DATA)):
        found = [f"results/{f}" for f in machine_paths(out / "results", machine)]
        found += [f"figures/{f}" for f in machine_paths(out / "figures", machine)]
        found += [p for p in kept[2:] if machine.encode() in (out / p).read_bytes().replace(typed.encode(), b"")]
        assert found == [], machine
    state = json.loads((out / "reproduce.json").read_text())
    train = state["steps"]["train/simcse/seed-1"]
    assert (train["folder"], train["log"]) == ("runs/simcse/seed-1", "logs/train__simcse__seed-1.log")
    write_report(out / "results", out, "tiny", "stsbench report --results results --out .")  # made again here
    md = (out / "report.md").read_text()
    (row,) = [ln for ln in md.splitlines() if ln.startswith("| simcse/seed-1 | ../runs/simcse/seed-1 |")]
    assert row.endswith("| train/simcse/seed-1 |")  # the checkpoint's results still find its training run
    assert "--output ../runs/simcse/seed-1 " in md  # the training's command names it as the results do


def test_a_moved_reproductions_status_reads_its_trainings_progress(tmp_path):
    """reproduce.json records a training's folder relative to OUT; --status reads its progress wherever OUT is."""
    from stsbench.reproduce.view import row, train_progress

    run = tmp_path / "moved" / "runs" / "simcse" / "seed-1"
    run.mkdir(parents=True)
    (run / "train_log.jsonl").write_text('{"config": {}}\n{"step": 10, "time": 5.0}\n', encoding="utf-8")
    record = {"kind": "train", "status": "running", "folder": "runs/simcse/seed-1", "total_steps": 40}
    assert train_progress(record, tmp_path / "moved") == "step 10/40, ETA 15s"
    assert train_progress(record, tmp_path) == ""  # another folder: nothing found, nothing made up
    assert row("train/simcse/seed-1", record, out=tmp_path / "moved")[2].startswith("step 10/40, ETA 15s, ")
    # a record written before paths were relative names the folder absolutely
    assert train_progress({**record, "folder": str(run)}, tmp_path) == "step 10/40, ETA 15s"


def test_the_checked_in_reproduction_holds_nothing_to_rewrite():
    """scripts/portable_paths.py --check: every path the checked-in folder records is relative already."""
    done = subprocess.run(  # noqa: S603
        [sys.executable, str(ROOT / "scripts" / "portable_paths.py"), str(ROOT / "reports" / "cpu-mini-replication"),
         "--check"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and done.stdout == "", done.stdout + done.stderr


def test_a_recorded_model_path_is_shown_from_the_working_folder(tmp_path, monkeypatch):
    from stsbench.results.write import portable, shown

    (tmp_path / "models" / "tiny").mkdir(parents=True)
    results = tmp_path / "work" / "results"
    results.mkdir(parents=True)
    recorded = portable(tmp_path / "models" / "tiny", results)
    assert recorded == "../../models/tiny"
    monkeypatch.chdir(tmp_path)
    assert shown(recorded, results) == "models/tiny"
    assert shown("sentence-transformers/all-MiniLM-L6-v2", results) == "sentence-transformers/all-MiniLM-L6-v2"
    assert shown("../../models/gone", results) == "../../models/gone"  # not here: as recorded
