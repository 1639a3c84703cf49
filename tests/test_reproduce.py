"""``stsbench reproduce``: the plan and its keys, --dry-run of every recipe, errors, rerun and resume."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import pytest
from helpers import (
    DATA,
    ROOT,
    assert_same_report,
    folder_digests,
    reproduce_status,
    reproduce_step,
    reproduction_figures,
    run_cli,
    same_files,
)

from stsbench.published.registry import get_entry
from stsbench.recipes import load_recipe, recipe_names
from stsbench.reproduce.plan import build_plan, training_copies
from stsbench.reproduce.state import busy_seconds


@pytest.fixture(autouse=True)
def _data(monkeypatch):
    monkeypatch.setenv("STSBENCH_DATA", str(DATA))


@pytest.mark.parametrize("name", recipe_names())
def test_dry_run_of_every_built_in_recipe_lists_runs_cost_and_published_cells(name, capsys, tmp_path):
    recipe = load_recipe(name)
    code, out, err = run_cli(["reproduce", name, "--dry-run", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    for run in recipe.runs:
        assert re.search(rf"^  {re.escape(run.name)}: {run.method}, config {run.config}, seeds ", out, re.M)
    plan = build_plan(recipe, tmp_path / "o")
    for step in plan.steps:
        assert f"  {step.id}  [{step.key[:12]}]" in out
    assert "one step at a time (counted parts" in out
    after = out.split("one step at a time (counted parts")[1]
    assert re.search(r"^  counted: \d+ trainings: ", after, re.M)
    assert re.search(r"^  .+: (at least )?(\d+(\.\d)? (h|min|s)|unknown)", after, re.M)
    for key in recipe.published:
        entry = get_entry(key)  # every key it names exists
        assert f"  {key}: " + ", ".join(f"{t} {entry.format(v)}" for t, v in entry.values.items()) in out
        assert f"\n    {entry.cite}\n" in out  # the citation on one line, however long
    assert not (tmp_path / "o").exists()  # a dry run writes nothing


def test_keys_change_with_what_determines_them_and_reach_the_steps_after(tiny, tmp_path):
    longer = tmp_path / "tiny-longer.yaml"
    longer.write_text((tiny / "tiny.yaml").read_text().replace("max_steps: 6,", "max_steps: 8,"))
    a = build_plan(load_recipe(tiny / "tiny.yaml"), tmp_path)
    b = build_plan(load_recipe(longer), tmp_path)
    assert a.step("train/simcse/seed-1").key != a.step("train/simcse/seed-2").key
    assert build_plan(load_recipe(tiny / "tiny.yaml"), tmp_path).steps == a.steps  # deterministic
    changed = {s.id for s in a.steps if s.key != b.step(s.id).key}
    assert changed == {s.id for s in a.steps}  # max_steps: every training, so every step after them
    for seed in (1, 2):  # an analysis runs on every seed
        assert _dependants(a, f"train/simcse/seed-{seed}") == {
            "evaluate/simcse",
            f"analysis/1-align_uniform/simcse/seed-{seed}",
            "report",
        }
    assert busy_seconds([(0, 2), (1, 3), (5, 6)]) == 4


def _dependants(plan, step_id: str) -> set[str]:
    """Every step of ``plan`` that reads, directly or not, what ``step_id`` writes."""
    found, frontier = set(), {step_id}
    while frontier:
        frontier = {s.id for s in plan.steps if set(s.deps) & frontier} - found
        found |= frontier
    return found


def test_errors_are_one_line(tiny, tmp_path, capsys):
    code, _, err = run_cli(["reproduce", "no-such-recipe", "--out", tmp_path / "o"], capsys)
    assert code != 0 and "unknown recipe 'no-such-recipe'" in err and "Traceback" not in err
    (tmp_path / "file").write_text("x")
    code, _, err = run_cli(["reproduce", tiny / "tiny.yaml", "--out", tmp_path / "file"], capsys)
    assert code != 0 and "is a file" in err
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x.txt").write_text("x")
    code, _, err = run_cli(["reproduce", tiny / "tiny.yaml", "--out", tmp_path / "used"], capsys)
    assert code != 0 and "holds no reproduction" in err
    code, _, err = run_cli(["reproduce", "cpu-mini"], capsys)
    assert code != 0 and "--out DIR" in err
    code, _, err = run_cli(["reproduce", tmp_path, "--status"], capsys)
    assert code != 0 and "holds no reproduction" in err
    code, _, err = run_cli(["reproduce", tmp_path / "none", "--status"], capsys)
    assert code == 2 and err.strip().endswith("none does not exist; give the --out of stsbench reproduce"), err
    code, _, err = run_cli(["reproduce", "cpu-mini", "--until-decided", "--max-seeds", "-3", "--dry-run"], capsys)
    assert code == 2 and "--max-seeds -3: give 10 or 20" in err, err
    (tmp_path / "string.yaml").write_text("name: s\ntitle: t\nruns: simcse\n")
    code, _, err = run_cli(["reproduce", tmp_path / "string.yaml", "--dry-run"], capsys)
    assert code == 2 and "runs: a list of runs, each a mapping" in err and "got 'simcse'" in err, err
    (tmp_path / "bare.yaml").write_text("name: s\ntitle: t\nruns: [{name: a}]\n")
    code, _, err = run_cli(["reproduce", tmp_path / "bare.yaml", "--dry-run"], capsys)
    assert code == 2 and "flavour: missing" in err and "more: report, runs" in err, err


def _start(recipe: Path, out: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(  # noqa: S603
        [sys.executable, "-m", "stsbench", "reproduce", str(recipe), "--out", str(out), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _wait_for(out: Path, step: str, status: str, proc: subprocess.Popen, timeout: float = 300) -> None:
    """Until the state says ``step`` is ``status`` (and, for a training, has logged a step)."""
    end = time.time() + timeout
    while time.time() < end:
        assert proc.poll() is None, proc.stdout.read()
        rec = reproduce_step(out, step)
        logged = not step.startswith("train/") or (out / rec.get("folder", "x") / "train_log.jsonl").is_file()
        if rec.get("status") == status and logged:
            return
        time.sleep(0.1)
    raise AssertionError(f"{step} never {status}")


def _kill_tree(pid: int) -> None:
    import psutil

    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    for p in procs:
        with suppress(psutil.NoSuchProcess):  # ended already: its lifeline followed the process killed first
            p.kill()


@pytest.mark.slow  # the shared clean run, then one reproduction interrupted three times: ~1.5 min on 2 cores
def test_interrupted_at_each_stage_and_rerun_gives_the_same_results_and_retrains_nothing_finished(
    tiny, clean, tmp_path, capsys
):
    recipe = tiny / "tiny.yaml"
    state = json.loads((clean / "reproduce.json").read_text())
    assert {r["status"] for r in state["steps"].values()} == {"done"}
    assert 0 <= state["sessions"][0]["orchestration_share"] < 1
    # a rerun of a finished reproduction runs nothing (in this process: what it starts is what is tested)
    logs = {p: p.stat().st_mtime_ns for p in (clean / "runs").rglob("train_log.jsonl")}
    code, _, err = run_cli(["reproduce", recipe, "--out", clean], capsys)
    assert code == reproduce_status(clean), err
    assert json.loads((clean / "reproduce.json").read_text())["sessions"][-1]["steps_run"] == 0
    assert logs == {p: p.stat().st_mtime_ns for p in (clean / "runs").rglob("train_log.jsonl")}

    out = tmp_path / "interrupted"
    stages = [("train/simcse/seed-2", "sigint"), ("evaluate/simcse", "kill"), ("report", "sigint")]
    first_seed_log = None
    for step, how in stages:
        proc = _start(recipe, out)
        _wait_for(out, step, "running", proc)
        if first_seed_log is None:
            first_seed_log = (out / "runs/simcse/seed-1/train_log.jsonl").stat().st_mtime_ns
        if how == "sigint":
            proc.send_signal(signal.SIGINT)
            text = proc.communicate(timeout=120)[0]
            assert proc.returncode != 0 and "run the same command again" in text, text
            assert json.loads((out / "reproduce.json").read_text())["steps"][step]["status"] == "interrupted"
        else:
            _kill_tree(proc.pid)
            proc.wait()
    final = _start(recipe, out)
    assert final.wait(timeout=600) == reproduce_status(out), final.stdout.read()
    state = json.loads((out / "reproduce.json").read_text())
    assert {r["status"] for r in state["steps"].values()} == {"done"}
    assert state["steps"]["train/simcse/seed-1"]["attempts"] == 1  # finished before the first interruption
    assert (out / "runs/simcse/seed-1/train_log.jsonl").stat().st_mtime_ns == first_seed_log
    assert reproduction_figures(out) == reproduction_figures(clean) and reproduction_figures(out)


@pytest.mark.slow  # three tiny trainings, one interrupted, and their evaluations: ~1 min on 2 cores
def test_until_decided_adds_a_look_s_seeds_records_them_and_resumes(tiny, clean, tmp_path, capsys):
    """Two planned seeds lie under the first look (3): the claim and the cell stay open, so the plan adds seed 3
    to the one run they read; interrupted while it trains, the same command goes on from there."""
    recipe = tiny / "tiny.yaml"
    out = tmp_path / "until"
    proc = _start(recipe, out, "--until-decided")
    _wait_for(out, "train/simcse/seed-3", "running", proc)
    proc.send_signal(signal.SIGINT)
    text = proc.communicate(timeout=120)[0]
    assert proc.returncode != 0 and "next look: 1 training added (simcse: seeds 3)" in text, text
    state = json.loads((out / "reproduce.json").read_text())
    assert state["until"] == {"maximum": 10, "added": {"simcse": [3]}}  # recorded before it trained
    assert state["steps"]["train/simcse/seed-3"]["status"] == "interrupted"
    first, second = state["sessions"]  # a session a look, each timed from its own start
    assert second["started"] >= first["ended"] and second["interrupted"] and not first.get("interrupted")
    code, _, err = run_cli(["reproduce", recipe, "--out", out], capsys)  # its plan is asked for again
    assert code == 2 and "rerun with --until-decided" in err
    code, _, err = run_cli(["reproduce", recipe, "--out", out, "--until-decided", "--refine"], capsys)
    assert code == 2 and "adds seeds without --refine: rerun without it" in err  # nor another plan
    final = _start(recipe, out, "--until-decided")
    assert final.wait(timeout=600) == reproduce_status(out), final.stdout.read()
    state = json.loads((out / "reproduce.json").read_text())
    assert {r["status"] for r in state["steps"].values()} == {"done"}
    assert state["steps"]["train/simcse/seed-1"]["attempts"] == 1 and state["until"]["added"] == {
        "simcse": [3]
    }
    # the dry run plans the seeds the plan added, and finds nothing left to add
    code, dry, err = run_cli(["reproduce", recipe, "--out", out, "--until-decided", "--dry-run"], capsys)
    assert code == 0 and "seeds 1,2,3," in dry and "settled at its look: no seeds to add" in dry, dry + err
    verdicts = json.loads((out / "reproduction.json").read_text())
    assert verdicts["sequential"]["maximum"] == 10 and verdicts["sequential"]["looks"][0] == 3
    (cell,) = verdicts["targets"][0]["cells"]
    assert cell["n"] == 3 and "sequential: the look at 3 seeds (at most 10)" in cell["note"]
    # the fixed-n reproduction of the same recipe: judged once by rule 3, no plan
    fixed = json.loads((clean / "reproduction.json").read_text())
    assert "sequential" not in fixed and "sequential" not in fixed["targets"][0]["cells"][0]["note"]


CPU_MINI_TITLE = "CPU mini-replication: SimCSE, ESimCSE and MoCoSE on all-MiniLM-L6-v2, five seeds each"
CPU_MINI_BANNER = (
    "Mini scale: all-MiniLM-L6-v2, 50 steps of 64 sentences from wiki1m's first 11,914 lines; 5 seeds a setting: "
    "not the paper's setting."
)


def test_the_report_step_is_the_command_that_made_the_checked_in_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    plan = build_plan(load_recipe("cpu-mini"), Path("reports/cpu-mini-replication"))
    rel = "reports/cpu-mini-replication"
    assert plan.step("report").args == (
        *("report", "--results", f"{rel}/results", "--out", rel, "--title", CPU_MINI_TITLE),
        *("--claims", f"{rel}/claims.yaml"),  # its Table 7 claims, judged whatever verdict says
        *("--figures", "simcse/figure3", "--figures", "simcse/figure4", "--figures", "mocose/figure7"),
        *("--banner", CPU_MINI_BANNER),  # a mini recipe's: on every table and figure
    )  # as the report prints it: the given --out, no option at its default, no --against (verdict: false)
    assert plan.out == tmp_path / rel

    copies = {
        c.relative_to(plan.out).as_posix(): s.relative_to(plan.out).as_posix()
        for s, c in training_copies(plan)
    }
    assert (
        copies["results/train/esimcse-wr-only/seed-3/train_log.jsonl"]
        == "runs/esimcse-wr-only/seed-3/train_log.jsonl"
    )
    assert len(copies) == 2 * 25


def test_reproduce_regenerates_a_checked_in_edition_from_its_trained_runs(tmp_path, monkeypatch, capsys):
    """A checked-in edition's folder as reproduce leaves it after training (and evaluating and analysing): its
    report step (the only step left) rewrites the checked-in report byte for byte (figures: under the versions
    that drew). mocose-collapse-mini's, the edition with the cheapest report; cpu-mini's report step is the
    command tests/test_reports.py regenerates its report with (test_the_report_step_is_the_command_...)."""
    from stsbench.reproduce.state import load_state, save_state

    edition, recipe = ROOT / "reports" / "mocose-collapse-mini", "mocose-collapse-mini"
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "reports" / edition.name
    shutil.copytree(edition / "results", out / "results", ignore=shutil.ignore_patterns("train"))
    shutil.copy(edition / "reproduce.json", out / "reproduce.json")
    for log in (edition / "results" / "train").rglob("train_log.jsonl"):  # the runs, as trained into OUT/runs
        shutil.copytree(log.parent, out / "runs" / log.parent.relative_to(edition / "results" / "train"))
    plan = build_plan(load_recipe(recipe), Path("reports") / edition.name)
    state = load_state(out)
    # the checked-in folder is the recipe's, every step of it done by `stsbench reproduce` on the machine it ran on
    assert state["recipe"] == recipe and state["sessions"]
    assert {r["status"] for r in state["steps"].values()} == {"done"}
    assert sorted(state["steps"]) == sorted(s.id for s in plan.steps)
    # the keys where this test runs (a training's resolved config names its corpus by path); all done but the
    # report, by the code the checked-in report found: by earlier code where it names steps kept with
    # --keep-changed ("Mixed code"), which this rerun keeps and names again, else by this code (an edition made
    # current, as this one was by its rerun of 2026-11-26), whatever code has changed since
    recorded = state["steps"]
    mixed = "Mixed code:" in (edition / "report.md").read_text(encoding="utf-8")
    state["steps"] = {  # the steps carried to this code stay so: the report's Provenance names them
        s.id: {"status": "done", "key": s.key, "code": recorded[s.id]["code"] if mixed else s.code}
        | ({"carried": recorded[s.id]["carried"]} if "carried" in recorded[s.id] else {})
        for s in plan.steps
        if s.kind != "report"
    }
    if mixed:
        assert all(
            r["code"] != s.code for s in plan.steps if s.kind != "report" for r in [state["steps"][s.id]]
        )
    save_state(out, state)
    # in this process: the report step it starts is the command whose output is compared
    args = ["reproduce", recipe, "--out", f"reports/{edition.name}", "--keep-changed"]
    code, out_text, err = run_cli(args, capsys)
    assert code == 0, out_text + err
    session = json.loads((out / "reproduce.json").read_text())["sessions"][-1]
    assert session["steps_run"] == 1  # the report: every training, evaluation and analysis was found done
    # results/train/ is the report step's copy of each run's logs, equal whatever matplotlib draws; the rest is the report
    made, kept = (
        {k: v for k, v in folder_digests(f).items() if k.startswith("results/")} for f in (out, edition)
    )
    differs = same_files(made, kept)
    assert not differs, differs
    skip = ("README.md", "reproduce.json", ".gitignore", "timings.log", "runs/", "logs/", ".stsbench.")
    assert_same_report(out, edition, skip=lambda k: k.startswith(skip))


@pytest.mark.slow  # the shared clean run: two 6-step trainings, STS-B dev, the report
def test_a_recipe_with_a_published_row_gets_the_verdict_in_its_report(tiny, clean):
    from stsbench.published.check import verdict
    from stsbench.results.schema import TaskResult

    recipe = tiny / "tiny.yaml"
    key = "esimcse-arxiv/table4/unsup-simcse-bert-base"  # STS-B dev, as the run is evaluated
    assert "verdict:" not in recipe.read_text()
    args = build_plan(load_recipe(recipe), clean).step("report").args
    at = args.index("--against")
    assert args[at : at + 2] == (
        "--against",
        f"simcse={key}",
    )  # verdict defaults to true: the run's row is judged
    assert args[at + 2 : at + 4] == ("--claims", f"{clean}/claims.yaml")  # and its claim, beside the results
    assert args[at + 4] == "--banner" and args[at + 5].endswith("not the paper's setting.")  # a mini recipe
    from stsbench.results.runs import read_banners

    assert read_banners([clean / "results"]) == [
        args[at + 5]
    ]  # kept with the results: any report of them has it
    out = clean
    assert "## Reproduction" in (out / "report.md").read_text()
    (rep,) = json.loads((out / "reproduction.json").read_text())["targets"]
    assert (
        rep["key"] == key and rep["group"] == "unsup-SimCSE" and rep["seeds"] == [1, 2]
    )  # the group named simcse
    cells = {c["task"]: c for c in rep["cells"]}
    entry = get_entry(key)
    for task, published in entry.values.items():
        if task == "Avg.":
            continue
        values = [  # unrounded: what the verdict tests (the results file's raw correlation x100)
            TaskResult.from_dict(
                json.loads((out / f"results/simcse__seed-{s}/avg/dev/{task}.json").read_text())
            ).raw
            for s in (1, 2)
        ]
        assert cells[task]["verdict"] == verdict(task, published, values).status, task
        assert cells[task]["values"] == pytest.approx(values)
    assert {c["verdict"] for c in cells.values()} <= {
        "reproduced",
        "not reproduced",
        "inconclusive",
        "not checked",
    }
