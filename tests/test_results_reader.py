"""The one reader of results folders (:mod:`stsbench.results.read`) behind check, compare, report and export-mteb.

One rule for hidden files and training-run folders for all four; check and compare refuse results scored by
another version of a task; none of the commands that only read results imports torch.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import DATA, ROOT, run_cli

from stsbench.compare import side_from_folder
from stsbench.errors import StsbenchError
from stsbench.published.check import check_results
from stsbench.reports.collect import collect
from stsbench.results.read import load_results

REPO = Path(__file__).resolve().parents[1]
# all-MiniLM-L6-v2's committed 7-task STS run, with its per-pair sidecars: a checked-in results folder
MINI = REPO / "reports" / "cpu-mini-replication" / "results" / "all-MiniLM-L6-v2" / "avg" / "test"
KEY = "mteb/all-MiniLM-L6-v2"
RUN = Path("all-MiniLM-L6-v2") / "avg" / "test"


@pytest.fixture
def results(tmp_path) -> Path:
    root = tmp_path / "results"
    shutil.copytree(MINI, root / RUN)
    return root


def _rename_model(folder: Path, name: str) -> None:
    """Make the results under ``folder`` another model's (the sidecars still give every figure)."""
    for path in folder.glob("*.json"):
        data = json.loads(path.read_text())
        if data.get("kind") == "stsbench.task_result":
            data["model"].update(name=name, fingerprint=f"{name}-fingerprint")
            path.write_text(json.dumps(data))


def test_every_reader_passes_over_hidden_folders(results):
    hidden = results / ".old" / "other"
    shutil.copytree(results / RUN, hidden)
    _rename_model(hidden, "other-model")  # read, it would be a second model beside the first
    tasks = {p.stem for p in MINI.glob("STS*.json")} | {"SICKRelatedness"}
    assert {m.result.task for m in load_results(results)} == tasks  # check, export-mteb
    assert check_results(results, KEY).other_runs == ()
    assert {r.result.task for r in collect(results).tasks} == tasks  # report
    assert side_from_folder(results).model == "all-MiniLM-L6-v2"  # compare
    shutil.move(hidden, results / "other")  # not hidden: now every reader sees the second model
    with pytest.raises(StsbenchError, match="2 models"):
        side_from_folder(results)
    assert len({m.run for m in load_results(results)}) == 2


def test_a_training_run_folder_holds_results_and_checkpoint_files(results):
    """Every reader reads a results file inside a training-run folder and passes the checkpoint's files over."""
    run = results / "train" / "simcse-run"
    (run / "last").mkdir(parents=True)
    (run / "train_log.jsonl").write_text('{"step": 0}\n')
    for name in ("stsbench.json", "config.json", "last/trainer_state.json"):
        (run / name).write_text("{}")
    (run / "tokenizer.json").write_text("{not json")
    shutil.move(results / RUN, run / "eval")
    comparison = check_results(results, KEY)
    assert comparison.training_runs == (run,) and comparison.run == ("all-MiniLM-L6-v2", "avg", "test")
    found = collect(results)
    assert len(found.tasks) == 7 and found.run_dirs == ["train/simcse-run"]
    assert not [w for w in found.warnings if "config.json" in w or "tokenizer.json" in w]


def _set_version(folder: Path, task: str, version: int | None) -> Path:
    path = folder / f"{task}.json"
    data = json.loads(path.read_text())
    if version is None:
        data.pop("task_version", None)
    else:
        data["task_version"] = version
    path.write_text(json.dumps(data))
    return path


def test_check_and_compare_refuse_results_of_another_task_version(results, tmp_path, capsys, monkeypatch):
    folder = results / RUN
    for task in ("STS12", "STSBenchmark"):  # written before versions: version 1, today's
        _set_version(folder, task, None)
    assert check_results(results, KEY).passed
    other = tmp_path / "other"
    shutil.copytree(results, other)
    code, _, err = run_cli(["compare", str(folder), str(other / RUN), "-B", "10", "--format", "json"], capsys)
    assert code == 0, err

    stale = _set_version(folder, "STS13", 2)  # scored by a version this stsbench does not have
    code, out, err = run_cli(["check", "--results", str(results), "--against", KEY], capsys)
    assert code == 2 and not out and err.count("\n") == 1
    assert str(stale) in err and "version 2 of STS13" in err
    code, out, err = run_cli(["compare", str(other / RUN), str(folder)], capsys)
    assert code == 2 and not out and err.count("\n") == 1 and str(stale) in err

    # the registry's version moves on: every result of the task scored before is refused
    import stsbench.results.read as reader

    monkeypatch.setattr(reader, "task_version", lambda task: 2 if task == "STS12" else 1)
    _set_version(folder, "STS13", 1)
    with pytest.raises(StsbenchError, match=r"STS12\.json: scored by version 1 of STS12.*version 2"):
        check_results(results, KEY)


# Each command runs in a fork of one fresh interpreter that has imported only what the old one-process-per-command
# script imported before main() (``stsbench.cli``): the state a fresh ``python -m stsbench`` starts from, without
# paying for a new interpreter and mteb's 10-s import per command. The mteb commands fork after the interpreter
# imported mteb, once every other command ran, and mteb's import is checked heavy-free first.
SCRIPT = """
import json, os, sys, traceback
from stsbench.cli import main

def heavy():
    return [m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules]

def command(args):
    sys.argv = ["stsbench", *args]
    try:
        main()
    except SystemExit as exc:
        return exc.code
    return 0

def forked(args, out):
    pid = os.fork()
    if pid == 0:
        try:
            code = command(args)
            with open(out, "w") as f:
                json.dump({"code": code, "heavy": heavy()}, f)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
    os.waitpid(pid, 0)

plan = json.loads(sys.argv[1])
before = {"cli": heavy()}
for args, out in plan["plain"]:
    forked(args, out)
if plan["mteb"]:
    import mteb
    before["mteb"] = heavy()
for args, out in plan["mteb"]:
    forked(args, out)
json.dump(before, open(plan["before"], "w"))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="each command runs in a fork of one fresh interpreter")
def test_commands_that_read_results_import_no_torch(results, tmp_path):
    """check, compare (on results), report, published, reproduce's dry run and status, and export-mteb.

    Each in a fresh interpreter's fork. reproduce --dry-run and --status read the checked-in reproduction (its
    trainings' folders are read for how far they got: the dry run had once come to import torch for it).
    """
    has_mteb = importlib.util.find_spec("mteb") is not None
    replication = ROOT / "reports" / "cpu-mini-replication"
    plain = {
        "reproduce --dry-run": ["reproduce", "cpu-mini", "--out", replication, "--dry-run", "--data-dir", DATA],
        "reproduce --status": ["reproduce", replication, "--status"],
        "published list": ["published", "list"],
        "published show": ["published", "show", KEY],
        "check": ["check", "--results", results, "--against", KEY],
        "compare": ["compare", results / RUN, results / RUN, "-B", "20", "--format", "json"],
        "report": ["report", "--results", results, "--out", tmp_path / "report"],
    }
    with_mteb = {}
    if has_mteb:
        with_mteb["export-mteb"] = ["export-mteb", results, "--out", tmp_path / "mteb"]
        with_mteb["check mteb-results"] = [
            "check",
            "--results",
            results,
            "--against",
            f"mteb-results:{tmp_path / 'mteb'}",
        ]
    outs = {what: tmp_path / f"modules-{i}.json" for i, what in enumerate([*plain, *with_mteb])}
    plan = {
        "before": str(tmp_path / "before.json"),
        **{
            key: [([str(a) for a in args], str(outs[what])) for what, args in group.items()]
            for key, group in (("plain", plain), ("mteb", with_mteb))
        },
    }
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(plan)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    before = json.loads((tmp_path / "before.json").read_text())
    assert before == ({"cli": [], "mteb": []} if has_mteb else {"cli": []})
    for what, out in outs.items():
        assert out.is_file(), (what, done.stderr)
        seen = json.loads(out.read_text())
        assert seen["code"] == 0, (what, done.stderr)
        assert seen["heavy"] == [], what


def test_a_seed_aggregate_of_another_task_version_is_refused(tmp_path):
    from stsbench.published.check import check_seeds
    from stsbench.results.runs import build_aggregate, write_aggregate

    tasks = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark")
    per_seed = {s: {"model": f"/runs/x/seed-{s}", "scores": {t: 70.0 + s for t in tasks}} for s in (1, 2, 3)}
    path = write_aggregate(tmp_path, build_aggregate("/runs/x", "avg", "test", per_seed))
    assert json.loads(path.read_text())["task_versions"] == dict.fromkeys(tasks, 1)
    assert check_seeds(tmp_path, KEY).rows and side_from_folder(tmp_path).n_seeds == 3
    data = json.loads(path.read_text())
    data["task_versions"]["STS13"] = 2
    path.write_text(json.dumps(data))
    for read in (lambda: check_seeds(tmp_path, KEY), lambda: side_from_folder(tmp_path)):
        with pytest.raises(StsbenchError, match=r"seeds\.json: scored by version 2 of STS13"):
            read()
    del data["task_versions"]  # written before versions: every task version 1, today's
    path.write_text(json.dumps(data))
    assert side_from_folder(tmp_path).n_seeds == 3
