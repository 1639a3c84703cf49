"""``stsbench reproduce`` when the code changed, what it needs and lacks, and under faults.

Each test works on a copy of the session's tiny reproduction (:func:`helpers.tiny_reproduction`), so that its
own reruns, edits and deletions touch nothing another test reads.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import DATA, reproduce_status, run_cli

from stsbench.reproduce import plan as plan_module


@pytest.fixture(autouse=True)
def _data(monkeypatch):
    monkeypatch.setenv("STSBENCH_DATA", str(DATA))


def _copy(clean: Path, to: Path) -> Path:
    shutil.copytree(clean, to, ignore=shutil.ignore_patterns(".stsbench.*"))  # not the lock of the original
    return to


def _state(out: Path) -> dict:
    return json.loads((out / "reproduce.json").read_text())


def _train_logs(out: Path) -> dict[Path, int]:
    return {p: p.stat().st_mtime_ns for p in (out / "runs").rglob("train_log.jsonl")}


def test_the_dry_run_lists_what_is_missing_and_strict_and_the_run_refuse_it(tiny, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the hub out of reach, as on these machines
    text = (tiny / "tiny.yaml").read_text()
    recipe = tmp_path / "lacking.yaml"
    lacking = text.replace(f"train_file: {tiny / 'train.txt'}", f"train_file: {tmp_path / 'gone.txt'}")
    lacking = lacking.replace(f"model: {tiny / 'tiny'}", "model: no-org/no-such-model")
    assert lacking != text
    recipe.write_text(lacking)
    out = tmp_path / "o"
    code, printed, err = run_cli(["reproduce", recipe, "--out", out, "--dry-run"], capsys)
    assert code == 0, err
    section = printed.split("missing here (2):\n", 1)[1]
    assert f"corpus {tmp_path / 'gone.txt'} (2 steps): {tmp_path / 'gone.txt'} does not exist" in section
    assert "model no-org/no-such-model (2 steps): not in the local Hugging Face cache" in section
    assert "huggingface-cli download no-org/no-such-model" in section
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--dry-run", "--strict"], capsys)
    assert code == 2 and "2 input(s) missing here (--strict)" in err
    code, _, err = run_cli(["reproduce", recipe, "--out", out], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "nothing was started: missing corpus" in err
    assert "and 1 more" in err
    assert not (out / "reproduce.json").exists() and not (out / "runs").exists()
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--strict"], capsys)
    assert code == 2 and "--strict applies to --dry-run" in err

    data = tmp_path / "empty-data"
    data.mkdir()
    code, printed, _ = run_cli(["reproduce", tiny / "tiny.yaml", "--out", out, "--dry-run", "--data-dir", data], capsys)
    assert code == 0 and f"SentEval file(s) under {data}" in printed and "stsbench data download" in printed


def test_the_cost_names_this_machine_and_says_unknown_without_a_measurement(tiny, tmp_path, capsys, monkeypatch):
    from stsbench.reproduce.executors import cores

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # the tests' 1 would be each step's threads
    code, printed, _ = run_cli(["reproduce", tiny / "tiny.yaml", "--out", tmp_path / "o", "--dry-run"], capsys)
    threads = cores()
    here = f"CPU, {threads} thread{'s' * (threads != 1)} (this run): unknown"
    assert code == 0 and here in printed.split("one step at a time (counted parts")[1]  # a tiny BERT: never timed
    code, printed, _ = run_cli(["reproduce", "cpu-mini", "--out", tmp_path / "m", "--dry-run"], capsys)
    assert code == 0 and "CPU, 1 thread" in printed


def _hold(out: Path) -> subprocess.Popen:
    """Another process holding ``out`` as a reproduction in use holds it (its output lock)."""
    code = (
        "import sys, time\nfrom stsbench.files import output_lock\n"
        f"with output_lock({str(out)!r}, '--out'):\n    print('held', flush=True)\n    time.sleep(120)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)  # noqa: S603
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_faults_end_in_one_line_with_nothing_lost(tiny, tmp_path, capsys):
    recipe = tiny / "tiny.yaml"
    out = tmp_path / "o"
    out.mkdir()
    saved = json.dumps({"kind": "stsbench-reproduce", "recipe": "tiny", "steps": {}, "sessions": []}).encode()
    (out / "reproduce.json").write_bytes(saved)

    holder = _hold(out)  # a second reproduce on a folder in use: refused at once, naming who holds it
    try:
        started = time.monotonic()
        code, _, err = run_cli(["reproduce", recipe, "--out", out], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and f"pid {holder.pid}" in err, err
        assert time.monotonic() - started < 30
    finally:
        holder.kill()
        holder.wait()

    (out / "reproduce.json").write_text('{"kind": "stsbench-reproduce", "steps": {')  # damaged by hand
    for args in (["reproduce", recipe, "--out", out], ["reproduce", out, "--status"]):
        code, _, err = run_cli(args, capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and "reproduce.json cannot be read" in err, err
    (out / "reproduce.json").write_bytes(saved)

    for bad, words in (
        (recipe.read_text() + "bogus_key: 1\n", "bogus_key"),
        (recipe.read_text().replace("seeds: [1, 2]", "seeds: [one]"), "seeds"),
        (recipe.read_text().replace("esimcse-arxiv/table4/unsup-simcse-bert-base", "no/such/row"), "no/such/row"),
    ):
        broken = tmp_path / "broken.yaml"
        broken.write_text(bad)
        code, _, err = run_cli(["reproduce", broken, "--out", tmp_path / "b", "--dry-run"], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err, err
    assert (out / "reproduce.json").read_bytes() == saved


_FULL_DISK = """
import errno, os
from pathlib import Path
_fsync = os.fsync
def _full(fd):
    if "pairs.npz" in str(Path(f"/proc/self/fd/{fd}").readlink()):  # an evaluation's per-pair sidecar
        raise OSError(errno.ENOSPC, "No space left on device")  # as the kernel raises it
    _fsync(fd)
os.fsync = _full
"""


def _stands(printed: str, why: bool = False) -> dict[str, str]:
    """Each step of a dry run and where it stands (its line's last words; ``why``: with the reason after them)."""
    lines = [ln for ln in printed.splitlines() if ln.startswith("  ") and "  [" in ln]
    found = {ln.split()[0]: ln.rsplit("  ", 1)[1] for ln in lines}
    return found if why else {k: v.split(" (", 1)[0] for k, v in found.items()}


def test_a_finished_reproduction_stays_done_wherever_its_data_lies_and_says_why_it_would_run(
    tiny, clean, tmp_path, capsys, monkeypatch
):
    """The corpus' and data files' absolute paths were once in the keys: another spelling retrained all."""
    recipe = tiny / "tiny.yaml"
    out = _copy(clean, tmp_path / "o")
    every = {s: "done" for s in _stands(run_cli(["reproduce", recipe, "--out", out, "--dry-run"], capsys)[1])}
    assert len(every) == 6
    moved = tmp_path / "elsewhere" / "data"
    shutil.copytree(DATA / "downstream" / "STS" / "STSBenchmark", moved / "downstream" / "STS" / "STSBenchmark")
    (tmp_path / "link").symlink_to(moved, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    for data in (moved, tmp_path / "link", Path("elsewhere/data"), Path("elsewhere/../elsewhere/data")):
        for where in (out, Path("o")):
            code, printed, err = run_cli(["reproduce", recipe, "--out", where, "--dry-run", "--data-dir", data], capsys)
            assert code == 0 and _stands(printed) == every, (data, where, printed, err)
    code, _, err = run_cli(["reproduce", recipe, "--out", "o", "--data-dir", "link"], capsys)  # a real rerun
    assert code == reproduce_status(out) and _state(out)["sessions"][-1]["steps_run"] == 0, err
    code, printed, _ = run_cli(
        ["reproduce", "o", "--status", "--check", "--format", "line", "--data-dir", "link"], capsys
    )
    assert "6 done and current" in printed and "again" not in printed, printed

    # what is in a data file is the key: an edit of STS-B dev retrains, and the dry run says why
    dev = moved / "downstream" / "STS" / "STSBenchmark" / "sts-dev.csv"
    dev.write_text("".join(dev.read_text().splitlines(keepends=True)[:-1]))  # one pair fewer
    code, printed, _ = run_cli(["reproduce", recipe, "--out", "o", "--dry-run", "--data-dir", moved], capsys)
    stands = _stands(printed, why=True)
    changed = "to run (its key changed: data file downstream/STS/STSBenchmark/sts-dev.csv)"
    assert stands["train/simcse/seed-1"] == changed
    assert stands["evaluate/simcse"] == changed[:-1] + ", a step it reads)"
    assert stands["report"].startswith("to run (it reads train/simcse/seed-1 and 4 more, which runs)")
    # the status judges from the record, which cannot see a data file's edit, and says what replans
    code, printed, _ = run_cli(["reproduce", "o", "--status", "--data-dir", moved], capsys)
    assert code == 0 and "would run again" not in printed and "--status --check replans" in printed, printed
    code, printed, _ = run_cli(["reproduce", "o", "--status", "--check", "--data-dir", moved], capsys)  # it does
    assert code == 0 and "6 done step(s) would run again" in printed and "done, to run again" in printed
    what = "what changed: train/simcse/seed-1: its key changed: data file downstream/STS/STSBenchmark/sts-dev.csv"
    assert what in printed and "judged from the record" not in printed, printed
    line = ["reproduce", "o", "--status", "--check", "--format", "line", "--data-dir", moved]
    code, printed, _ = run_cli(line, capsys)
    assert "0 done and current; 6 to run again (train/simcse/seed-1: its key changed: data file" in printed


def _edit_code(monkeypatch, edited: str) -> None:
    """The code of steps of kind ``edited`` as if edited (what plans and ``--status`` read)."""
    from stsbench.reproduce import state

    real = state.code_of.__wrapped__ if hasattr(state.code_of, "__wrapped__") else state.code_of
    fake = lambda kind, *rest: real(kind, *rest) + ("-edited" if kind == edited else "")  # noqa: E731
    for module in (plan_module, state):
        monkeypatch.setattr(module, "code_of", fake)


def test_a_reproduction_under_deletions_a_full_disk_and_changed_code(tiny, clean, tmp_path, capsys, monkeypatch):
    recipe = tiny / "tiny.yaml"
    logs = {p.name: p.read_text() for p in (clean / "logs").glob("*.log")}
    assert len(logs) == 6 and all(logs.values()), logs  # not --quiet: each step's log holds its output
    assert "best STS-B dev Spearman" in logs["train__simcse__seed-1.log"]
    out = _copy(clean, tmp_path / "o")
    seed_one = (out / "runs/simcse/seed-1/train_log.jsonl").stat().st_mtime_ns

    # outputs deleted by hand: made again, and what reads them
    shutil.rmtree(out / "runs" / "simcse" / "seed-2")
    shutil.rmtree(out / "results" / "analyses" / "simcse__seed-1")
    code, printed, _ = run_cli(["reproduce", recipe, "--out", out, "--dry-run"], capsys)
    assert code == 0 and _stands(printed) == {
        "train/simcse/seed-1": "done",
        "train/simcse/seed-2": "to run",
        "evaluate/simcse": "to run",  # it reads seed 2
        "analysis/1-align_uniform/simcse/seed-1": "to run",
        "analysis/1-align_uniform/simcse/seed-2": "to run",  # after its training
        "report": "to run",
    }

    # the disk fills in the evaluation (a cold cache, and its sidecar's write): that step fails in one line
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(_FULL_DISK)
    pythonpath = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(inject), pythonpath]))
    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))
    code, _, err = run_cli(["reproduce", recipe, "--out", out], capsys)
    lines = err.strip().splitlines()
    assert code == 3 and len(lines) == 1, err
    assert "first failure evaluate/simcse: no space left on device" in lines[0] and "rerun the same command" in lines[0]
    state = _state(out)
    assert [state["steps"][s]["status"] for s in ("train/simcse/seed-2", "evaluate/simcse", "report")] == [
        "done",
        "failed",
        "skipped",
    ]
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]  # nothing half-written
    monkeypatch.setenv("PYTHONPATH", pythonpath)  # room again: the rerun finishes what failed
    code, _, err = run_cli(["reproduce", recipe, "--out", out], capsys)
    assert code == reproduce_status(out), err
    assert _state(out)["sessions"][-1]["steps_run"] == 2  # the evaluation and the report
    assert (out / "runs/simcse/seed-1/train_log.jsonl").stat().st_mtime_ns == seed_one
    trained = _train_logs(out)

    # the evaluation's code changes: the rerun stops until told which
    _edit_code(monkeypatch, "evaluate")
    before = (out / "reproduce.json").read_bytes()
    code, _, err = run_cli(["reproduce", recipe, "--out", out], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "1 step(s) were done by other stsbench code" in err and "evaluate/simcse" in err
    assert "--rerun-changed" in err and "--keep-changed" in err
    assert (out / "reproduce.json").read_bytes() == before  # refused before anything ran
    code, text, _ = run_cli(["reproduce", out, "--status"], capsys)
    assert code == 0 and "done, changed code" in text and "1 done step(s) ran with other stsbench code" in text
    code, printed, _ = run_cli(["reproduce", recipe, "--out", out, "--dry-run"], capsys)
    stands = _stands(printed)
    assert stands["evaluate/simcse"] == "changed code" and stands["train/simcse/seed-1"] == "done"
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--rerun-changed", "--keep-changed"], capsys)
    assert code == 2 and "give one of them" in err

    # kept: only the report runs, and it names the step computed by the earlier code
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--keep-changed"], capsys)
    assert code == reproduce_status(out), err
    assert _state(out)["sessions"][-1]["steps_run"] == 1
    report = (out / "report.md").read_text()
    assert "Mixed code: 1 step(s) were kept from earlier stsbench code" in report and "evaluate/simcse" in report
    # run again: the evaluation and the report after it (now without the note); no training
    state = _state(out)
    state["steps"]["evaluate/simcse"]["carried"] = {"by": "a carry-over"}  # run again, no longer carried
    (out / "reproduce.json").write_text(json.dumps(state))
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--rerun-changed"], capsys)
    assert code == reproduce_status(out), err
    state = _state(out)
    assert state["sessions"][-1]["steps_run"] == 2 and "carried" not in state["steps"]["evaluate/simcse"]
    assert state["steps"]["evaluate/simcse"]["code"] == plan_module.code_of("evaluate")
    assert "Mixed code" not in (out / "report.md").read_text()
    code, _, err = run_cli(["reproduce", recipe, "--out", out], capsys)  # nothing changed now: nothing runs
    assert code == reproduce_status(out) and _state(out)["sessions"][-1]["steps_run"] == 0, err
    assert _train_logs(out) == trained
    # the report's code changes (a new decision rule): --keep-changed makes the report again, nothing else
    _edit_code(monkeypatch, "report")
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--keep-changed"], capsys)
    assert code == reproduce_status(out), err
    state = _state(out)
    assert state["sessions"][-1]["steps_run"] == 1 and state["steps"]["report"]["code"].endswith("-edited")
    assert _train_logs(out) == trained


def test_a_training_with_a_plugin_pooler_is_keyed_by_that_poolers_source(tmp_path, monkeypatch):
    import importlib

    from stsbench.encoders.pooling import POOLER_REGISTRY

    assert plan_module.train_code({"pooler": "avg"}) == plan_module.train_code({}) == plan_module.code_of("train")
    monkeypatch.syspath_prepend(str(tmp_path))
    codes = []
    for scale in (1, 2):  # the plugin's module edited between two plans
        (tmp_path / "toy_plugin.py").write_text(f"def toy(outputs, mask):\n    return outputs[0][:, 0] * {scale}\n")
        sys.modules.pop("toy_plugin", None)
        importlib.invalidate_caches()
        POOLER_REGISTRY.register("toy-plugin", importlib.import_module("toy_plugin").toy)
        try:
            codes.append(plan_module.train_code({"pooler": "toy-plugin"}))
        finally:
            POOLER_REGISTRY.unregister("toy-plugin")
    assert codes[0] != codes[1] and plan_module.code_of("train") not in codes


def test_a_recipe_held_against_a_published_file_of_ones_own(tiny, tmp_path, capsys, monkeypatch):
    """A run's ``published`` may name FILE.yaml#TABLE/ROW (docs/published.md); editing the file remakes the report."""
    import yaml

    from stsbench.published.registry import get_entry
    from stsbench.recipes import load_recipe

    monkeypatch.chdir(tmp_path)
    recipe = yaml.safe_load((tiny / "tiny.yaml").read_text())
    row = get_entry(recipe["runs"][0]["published"])
    own = {
        "paper": {"id": "mine", "title": "t", "citation": "Me (2026)", "source": "notebook"},
        "tables": [{"id": "t1", "table": "Table 1", "metric": "m", "split": row.split,
                    "rows": [{"id": "r", "row": "R", "values": dict(row.values)}]}],
    }  # fmt: skip
    Path("mine.yaml").write_text(yaml.safe_dump(own))
    recipe["published"] = [k if k != row.key else "mine.yaml#t1/r" for k in recipe["published"]]
    recipe["runs"][0]["published"] = "mine.yaml#t1/r"
    Path("mine-recipe.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False))
    code, printed, err = run_cli(["reproduce", "mine-recipe.yaml", "--out", "o", "--dry-run"], capsys)
    assert code == 0, err
    assert "mine.yaml#t1/r" in printed
    before = plan_module.report_step(load_recipe("mine-recipe.yaml"), [], Path("o")).key
    own["tables"][0]["rows"][0]["values"]["STSBenchmark"] += 1
    Path("mine.yaml").write_text(yaml.safe_dump(own))
    assert plan_module.report_step(load_recipe("mine-recipe.yaml"), [], Path("o")).key != before
    # named only in a run's also_published, the file keys the report all the same
    recipe["published"].append(row.key)
    recipe["runs"][0]["published"], recipe["runs"][0]["also_published"] = row.key, ["mine.yaml#t1/r"]
    Path("mine-recipe.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False))
    before = plan_module.report_step(load_recipe("mine-recipe.yaml"), [], Path("o")).key
    own["tables"][0]["rows"][0]["values"]["STSBenchmark"] += 1
    Path("mine.yaml").write_text(yaml.safe_dump(own))
    assert plan_module.report_step(load_recipe("mine-recipe.yaml"), [], Path("o")).key != before
    Path("mine.yaml").write_text("paper: {id: p\n")  # broken: refused before anything runs
    code, _, err = run_cli(["reproduce", "mine-recipe.yaml", "--out", "o", "--dry-run"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "mine.yaml: not valid YAML" in err, err


def test_the_recipes_claims_reach_its_report(clean):
    """tiny.yaml's claim: written beside the results, judged over the two seeds in the report and its JSON.

    Two seeds are fewer than the rule's three: at most inconclusive, however far below 90 both lie, and it says so.
    """
    import yaml

    claims = yaml.safe_load((clean / "claims.yaml").read_text())
    assert [c["kind"] for c in claims] == ["collapse"] and claims[0]["figure"] == "best-dev"
    (judged,) = json.loads((clean / "reproduction.json").read_text())["claims"]
    (statement,) = judged["statements"]
    assert judged["verdict"] == "inconclusive" and statement["n"] == [2] and statement["nearest"] == "below the bound"
    assert statement["note"] == "fewer than 3 seeds (2): at most inconclusive" and statement["low"] > 0
    md = (clean / "report.md").read_text()
    assert "| 1 | far below 90 | collapse | best STS-B dev (training) | bound | **inconclusive** |" in md


def test_a_reproduction_published_without_weights_is_done_until_a_step_needs_them(tiny, clean, tmp_path, capsys):
    """An edition is checked in without OUT/runs/ (no weights): its trainings are done (their logs are
    copied under results/train/), and a step that reads a training's weights trains it again first."""
    recipe = tiny / "tiny.yaml"
    out = _copy(clean, tmp_path / "o")
    shutil.rmtree(out / "runs")
    code, printed, _ = run_cli(["reproduce", recipe, "--out", out, "--dry-run"], capsys)
    assert code == 0 and set(_stands(printed).values()) == {"done"}, printed
    shutil.rmtree(out / "results" / "analyses" / "simcse__seed-1")
    code, printed, _ = run_cli(["reproduce", recipe, "--out", out, "--dry-run"], capsys)
    stands = _stands(printed, why=True)
    assert stands["train/simcse/seed-1"] == "to run (a step that reads its weights runs, and they are not kept here)"
    assert stands["analysis/1-align_uniform/simcse/seed-1"].startswith("to run (")
    # the evaluation reads seed 1, which runs: it runs, and reads seed 2's weights, which are not kept either
    assert stands["evaluate/simcse"] == "to run (it reads train/simcse/seed-1 and 1 more, which runs)"
    assert stands["train/simcse/seed-2"] == stands["train/simcse/seed-1"]


def test_a_trainings_files_are_sealed_and_an_edit_or_a_deletion_is_named(tiny, clean, tmp_path, capsys):
    """An edited `end` record was once accepted and a deleted stsbench.json left the step done."""
    recipe = tiny / "tiny.yaml"
    out = _copy(clean, tmp_path / "o")
    sealed = _state(out)["steps"]["train/simcse/seed-1"]["files"]
    assert sorted(sealed) == [
        "results/train/simcse/seed-1/stsbench.json",
        "results/train/simcse/seed-1/train_log.jsonl",
        "runs/simcse/seed-1/stsbench.json",
        "runs/simcse/seed-1/train_log.jsonl",
    ]
    log = out / "runs" / "simcse" / "seed-1" / "train_log.jsonl"
    lines = log.read_text().splitlines()
    end = json.loads(lines[-1])
    assert end["event"] == "end"
    log.write_text("\n".join([*lines[:-1], json.dumps({**end, "best_dev_spearman": 0.9056})]) + "\n")
    (out / "results" / "train" / "simcse" / "seed-2" / "stsbench.json").unlink()
    code, printed, _ = run_cli(["reproduce", recipe, "--out", out, "--dry-run"], capsys)
    stands = _stands(printed, why=True)
    assert stands["train/simcse/seed-1"] == "to run (its file runs/simcse/seed-1/train_log.jsonl changed since it finished)"
    assert stands["train/simcse/seed-2"] == "to run (its file results/train/simcse/seed-2/stsbench.json is missing)"
    code, printed, _ = run_cli(["reproduce", out, "--status", "--format", "line"], capsys)
    assert code == 0 and "6 to run again (train/simcse/seed-1: its file runs/simcse/seed-1/train_log.jsonl" in printed


def test_every_output_a_later_step_reads_is_sealed_and_a_damaged_one_is_named(tiny, clean, tmp_path, capsys):
    """B11: an evaluation's and an analysis' results were read unverified, and one seeds.json (or any analysis JSON)
    made a step done: an edited seed result, a deleted aggregate or analysis file now runs the step again."""
    recipe = tiny / "tiny.yaml"
    out = _copy(clean, tmp_path / "o")
    steps = _state(out)["steps"]
    evaluated, analysed = steps["evaluate/simcse"]["files"], steps["analysis/1-align_uniform/simcse/seed-2"]["files"]
    assert any(f.startswith("results/simcse__seed-1/") for f in evaluated)
    assert any(f.startswith("results/runs__simcse/") for f in evaluated)
    assert sorted(analysed) and all(f.startswith("results/analyses/simcse__seed-2/") for f in analysed), analysed
    one = out / next(f for f in evaluated if f.startswith("results/simcse__seed-2/") and f.endswith(".json"))
    one.write_text(one.read_text().replace('"spearman', '"spearman_edited', 1))  # one seed's result edited
    (out / next(iter(analysed))).unlink()
    code, printed, _ = run_cli(["reproduce", recipe, "--out", out, "--dry-run"], capsys)
    stands = _stands(printed, why=True)
    assert stands["evaluate/simcse"] == f"to run (its file {one.relative_to(out).as_posix()} changed since it finished)"
    assert stands["analysis/1-align_uniform/simcse/seed-2"].startswith("to run (its file results/analyses/simcse__seed-2/")
    assert stands["analysis/1-align_uniform/simcse/seed-1"] == "done" and stands["train/simcse/seed-2"] == "done"


def test_a_step_finished_before_seals_reads_unverified_until_the_next_run_seals_it(tiny, clean, tmp_path, capsys):
    recipe = tiny / "tiny.yaml"
    out = _copy(clean, tmp_path / "o")
    state = _state(out)
    for record in state["steps"].values():
        record.pop("files", None)
    (out / "reproduce.json").write_text(json.dumps(state))
    code, printed, _ = run_cli(["reproduce", out, "--status"], capsys)
    assert code == 0 and printed.count("done, unverified") == 6, printed
    code, printed, _ = run_cli(["reproduce", out, "--status", "--format", "line"], capsys)
    assert "6 done and current; 6 of them unverified" in printed
    code, printed, _ = run_cli(["reproduce", recipe, "--out", out, "--dry-run"], capsys)
    assert set(_stands(printed).values()) == {"done"}  # unverified is never "to run"
    code, _, err = run_cli(["reproduce", recipe, "--out", out], capsys)
    assert code == reproduce_status(out) and _state(out)["sessions"][-1]["steps_run"] == 0, err
    steps = _state(out)["steps"]
    assert len(steps["train/simcse/seed-2"]["files"]) == 4  # sealed by that run
    assert "results/runs__simcse/avg/dev/seeds.json" in steps["evaluate/simcse"]["files"]
    assert steps["report"]["files"].keys() == {"report.md"}
    code, printed, _ = run_cli(["reproduce", out, "--status", "--format", "line"], capsys)
    assert "unverified" not in printed


EDITION = Path(__file__).resolve().parents[1] / "reports" / "mocose-collapse-mini"  # 6 trainings and the report

# `stsbench ARGS` in a fresh interpreter that records every file it opens under DATA (an audit hook) and which
# modules it imported: the recipe's, the plan's, the heavy libraries
_WATCH_SCRIPT = """
import json, os, sys
data, out, args = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3:]
opened = []
def hook(event, a):
    if event == "open" and isinstance(a[0], (str, bytes, os.PathLike)):
        path = os.path.realpath(os.fsdecode(a[0]))
        if path.startswith(data + os.sep):
            opened.append(path)
sys.addaudithook(hook)
sys.argv = ["stsbench", *args]
from stsbench.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
watch = ("stsbench.recipes", "stsbench.reproduce.plan", "torch", "transformers", "pandas", "scipy", "numpy")
json.dump({"code": code, "opened": opened, "imported": [m for m in watch if m in sys.modules]}, open(out, "w"))
"""


def _watched(args: list, tmp_path: Path) -> dict:
    """``stsbench ARGS`` run by :data:`_WATCH_SCRIPT`, on a cold cache (no digest of a data file memoised)."""
    out = tmp_path / "watched.json"
    env = {**os.environ, "STSBENCH_CACHE": str(tmp_path / "cold-cache"), "STSBENCH_DATA": str(DATA)}
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-c", _WATCH_SCRIPT, str(DATA), str(out), *map(str, args)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert out.is_file(), done.stderr
    return json.loads(out.read_text())


def test_the_status_reads_the_record_and_neither_the_recipe_nor_the_data(tmp_path):
    """`--status` once judged a finished run by replanning it (the recipe loaded, every data file digested: 1 s on
    cpu-mini-replication); it reads reproduce.json and today's code digests. `--status --check` replans."""
    found = _watched(["reproduce", EDITION, "--status", "--data-dir", DATA], tmp_path)
    assert found == {"code": 0, "opened": [], "imported": []}, found
    found = _watched(["reproduce", EDITION, "--status", "--format", "line"], tmp_path)
    assert found == {"code": 0, "opened": [], "imported": []}, found
    checked = _watched(["reproduce", EDITION, "--status", "--check", "--data-dir", DATA], tmp_path)
    assert checked["code"] == 0 and {"stsbench.recipes", "stsbench.reproduce.plan"} <= set(checked["imported"])
    assert any(p.endswith("sts-dev.csv") for p in checked["opened"]), checked  # the replan digests the data


def _current_copy(to: Path) -> Path:
    """A copy of :data:`EDITION` whose records carry today's code (current whatever this checkout's code is)."""
    from stsbench.reproduce.state import recorded_recipe, save_state

    out = _copy(EDITION, to)
    state = _state(out)
    for record in state["steps"].values():  # as if run by today's code, not carried over to it
        record.pop("carried", None)
    plan, _ = plan_module.planned(recorded_recipe(state), out, DATA, state, "keep")
    for step in plan.steps:  # the report's key reads which steps were carried
        state["steps"][step.id].update(code=step.code, key=step.key, parts=step.parts)
    save_state(out, state)  # with today's table of code parts, which --status reads
    return out


def test_a_step_whose_recorded_code_is_not_todays_reads_changed_and_a_key_only_the_check_sees(tmp_path, capsys):
    out = _current_copy(tmp_path / "o")
    code, printed, _ = run_cli(["reproduce", out, "--status", "--format", "line"], capsys)
    assert code == 0 and printed.strip().endswith("(7 steps): 7 done and current."), printed
    state = _state(out)
    state["steps"]["train/predictor/seed-2"]["code"] = "0" * 64  # done by other code
    (out / "reproduce.json").write_text(json.dumps(state))
    code, printed, _ = run_cli(["reproduce", out, "--status", "--format", "line"], capsys)
    assert printed.strip().endswith("6 done and current; 1 done by other stsbench code (done, changed code).")
    code, printed, _ = run_cli(["reproduce", out, "--status"], capsys)
    (row,) = [ln for ln in printed.splitlines() if "train/predictor/seed-2" in ln]
    assert "done, changed code" in row and "1 done step(s) ran with other stsbench code" in printed, printed

    # a key the record cannot judge (an option, the data, the recipe): the status says so, the check replans
    state["steps"]["train/predictor/seed-2"]["code"] = state["steps"]["train/predictor/seed-1"]["code"]
    record = state["steps"]["train/symmetric/seed-1"]
    record["key"], record["parts"]["config.temperature"] = "0" * 64, "0" * 64  # trained at another temperature
    (out / "reproduce.json").write_text(json.dumps(state))
    code, printed, _ = run_cli(["reproduce", out, "--status", "--data-dir", DATA], capsys)
    assert code == 0 and "7 done" in printed and "would run again" not in printed, printed
    assert printed.rstrip().endswith(
        "judged from the record (each step's code, sealed files); --status --check replans on the recipe and the data "
        "and says what changed"
    ), printed
    code, printed, _ = run_cli(["reproduce", out, "--status", "--check", "--data-dir", DATA], capsys)
    assert code == 0 and "2 done step(s) would run again" in printed, printed
    assert printed.rstrip().endswith(
        "replanned on the recipe and the data, what changed: train/symmetric/seed-1: its key changed: option "
        "temperature"
    ), printed
    line = ["reproduce", out, "--status", "--check", "--format", "line", "--data-dir", DATA]
    code, printed, _ = run_cli(line, capsys)
    assert printed.strip().endswith(
        "--status --check` (7 steps): 5 done and current; 2 to run again (train/symmetric/seed-1: its key changed: "
        "option temperature)."
    ), printed


def test_a_damaged_file_runs_again_what_reads_it_by_the_record_alone(tmp_path, capsys):
    """The record's seals and deps: a training's copied log edited runs it again, and the report that reads it."""
    out = _current_copy(tmp_path / "o")
    log = out / "results" / "train" / "predictor" / "seed-3" / "train_log.jsonl"
    log.write_text(log.read_text() + "\n")
    code, printed, _ = run_cli(["reproduce", out, "--status", "--format", "line"], capsys)
    assert printed.strip().endswith(
        "(7 steps): 5 done and current; 2 to run again (train/predictor/seed-3: its file "
        "results/train/predictor/seed-3/train_log.jsonl changed since it finished)."
    ), printed
    code, printed, _ = run_cli(["reproduce", out, "--status"], capsys)
    (row,) = [ln for ln in printed.splitlines() if ln.startswith("│ report ")]
    assert "done, to run again" in row and "it reads train/predictor/seed-3, which runs" in row, row


def test_a_check_that_cannot_replan_says_so_and_claims_nothing(tmp_path, capsys):
    out = _copy(EDITION, tmp_path / "o")
    state = _state(out)
    state["recipe"] = "no-such-recipe"  # its recipe gone (a file of one's own deleted, a built-in renamed)
    (out / "reproduce.json").write_text(json.dumps(state))
    code, printed, _ = run_cli(["reproduce", out, "--status", "--check", "--data-dir", DATA], capsys)
    assert code == 0 and printed.rstrip().endswith(
        "not replanned: the recipe it ran from does not load here (the steps as recorded)"
    ), printed
    assert "replanned on the recipe" not in printed and "judged from the record" not in printed


def test_the_status_and_check_and_history_options(capsys):
    code, printed, _ = run_cli(["reproduce", EDITION, "--status"], capsys)
    sessions = len(json.loads((EDITION / "reproduce.json").read_text())["sessions"])
    assert code == 0 and "session 1:" not in printed, printed
    assert f"{sessions} sessions recorded (--history lists them)" in printed
    code, printed, _ = run_cli(["reproduce", EDITION, "--status", "--history"], capsys)
    assert code == 0 and [ln.split(":")[0] for ln in printed.splitlines() if ln.startswith("session ")] == [
        f"session {i}" for i in range(1, sessions + 1)
    ]
    assert "sessions recorded" not in printed
    for args, words in (
        (["--check"], "--check applies to --status"),
        (["--history"], "--history applies to --status"),
        (["--check", "--list"], "--check applies to --status"),
        (["--status", "--history", "--format", "line"], "--history with --format line"),
    ):
        code, _, err = run_cli(["reproduce", EDITION, *args], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and words in err, (args, err)


@pytest.mark.slow  # a subset's rerun on a copy of the tiny reproduction (its evaluation and report): ~40 s
def test_a_subsets_report_shows_the_subset_and_says_once_what_it_leaves_out(tiny, clean, tmp_path, capsys):
    """A report for --seeds 1 on a folder holding both seeds once said seed 2 was "not run" and drew it."""
    recipe = tiny / "tiny.yaml"
    out = _copy(clean, tmp_path / "o")
    whole = (out / "report.md").read_text()
    assert "simcse/seed-2" in whole and "(n=2)" in whole
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--seeds", "1"], capsys)
    assert code == reproduce_status(out), err
    part = (out / "report.md").read_text()
    assert part.count("**A subset of recipe tiny: seeds not run (--seeds): 2.**") == 1  # once, under its title
    assert "simcse/seed-2" not in part and "seed-2" not in part and "(n=2)" not in part, part
    assert "| simcse/seed-1 |" in part  # one seed: its own rows, no group over seeds
    args = _state(out)["steps"]["report"]
    assert args["status"] == "done"


def test_modified_data_is_refused_before_any_step_starts(tiny, tmp_path, capsys):
    """One byte of STS-B dev changed in a copy: the dry run said "missing here: nothing", the run started and failed
    both evaluations with exit 3. Now the dry run names it, the run refuses it in one line (exit 2) before anything
    starts, and --allow-modified-data lets it through, the evaluation and analyses marking what they score."""
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.executors import make_job

    data = tmp_path / "data"
    shutil.copytree(DATA / "downstream" / "STS" / "STSBenchmark", data / "downstream" / "STS" / "STSBenchmark")
    dev = data / "downstream" / "STS" / "STSBenchmark" / "sts-dev.csv"
    raw = bytearray(dev.read_bytes())
    raw[-2] = ord("0") if raw[-2] != ord("0") else ord("1")
    dev.write_bytes(bytes(raw))
    recipe, out = tiny / "tiny.yaml", tmp_path / "o"
    code, printed, _ = run_cli(["reproduce", recipe, "--out", out, "--dry-run", "--data-dir", data], capsys)
    assert code == 0 and "modified data 1 file(s) under" in printed and "--allow-modified-data" in printed, printed
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--data-dir", data], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: nothing was started: modified data 1 file(s)") and "sts-dev.csv" in err, err
    assert not (out / "reproduce.json").exists()  # the state untouched: nothing recorded, nothing run
    code, printed, _ = run_cli(
        ["reproduce", recipe, "--out", out, "--dry-run", "--data-dir", data, "--allow-modified-data"], capsys
    )
    assert code == 0 and "missing here: nothing" in printed
    plan = plan_module.build_plan(load_recipe(recipe), out, data)
    flags = {s.kind: make_job(plan, s, (), 0, allow_modified=True).args for s in plan.steps}
    assert flags["evaluate"][-1] == flags["analysis"][-1] == "--allow-modified-data"
    assert "--allow-modified-data" not in flags["train"] + flags["report"]
