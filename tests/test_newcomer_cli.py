"""The CLI, the install and the report's provenance as a new user's trial found them (issue "Reports and status that
a newcomer reads right", its smaller items), each fixed: reproduce's threads, an absolute --out, a mistyped model,
the editable install a clone's folder shadowed, and what a dirty checkout changed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import DATA, ROOT, run_cli

from stsbench.results import write as module

RECIPE = "mocose-collapse-mini"  # a built-in recipe whose plan needs nothing but the shared data and the embedded model
TINY_RESULTS = (
    ROOT / "tests" / "fixtures" / "report_results" / "results" / "stsbench-report-fixtures__tiny-bert"
)
SHA = "e401a06fbfd5691d7d2a93d5982fe36f821a6571"


def _needs_data() -> None:
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")


@pytest.fixture
def ran(monkeypatch) -> dict:
    """``stsbench reproduce`` up to its scheduler: what it hands :func:`run_plan` (the plan, threads, session code),
    each step's job as the scheduler makes it, and nothing run."""
    from stsbench.reproduce import executors
    from stsbench.reproduce.state import session_record

    seen: dict = {"run_plan": executors.run_plan}  # the real one

    def fake_run_plan(plan, state, engine, **kw):
        seen.update(kw, plan=plan, engine=engine)
        seen["jobs"] = [
            executors.make_job(plan, s, (), kw["gpus"], threads=kw["threads"]) for s in plan.steps
        ]
        state["sessions"] = [{**session_record(time.time(), []), **(kw["checkout"] or {})}]
        return state

    monkeypatch.setattr(executors, "run_plan", fake_run_plan)
    return seen


@pytest.mark.parametrize(
    ("omp", "flag", "expected"),
    [(None, [], None), ("3", [], 3), ("3", ["--threads", "5"], 5), (None, ["--threads", "2"], 2)],
)
def test_reproduce_gives_each_step_the_users_omp_num_threads_unless_threads_says(
    omp, flag, expected, ran, tmp_path, monkeypatch, capsys
):
    """Each step got cores/--parallel threads whatever OMP_NUM_THREADS said; --threads wins over it."""
    _needs_data()
    if omp is None:
        monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OMP_NUM_THREADS", omp)
    out = tmp_path / "abs"
    code, printed, err = run_cli(["reproduce", RECIPE, "--out", out, "--data-dir", DATA, *flag], capsys)
    assert code == 0, printed + err
    assert ran["threads"] == expected
    for job in ran["jobs"]:
        assert job.resources.cpus == expected  # the local executor's share when None; Slurm's cpus_per_task
        want = (
            {} if expected is None else {"OMP_NUM_THREADS": str(expected), "MKL_NUM_THREADS": str(expected)}
        )
        assert dict(job.env) == want
        assert "--threads" not in job.args  # a training's config keeps its own (the mini configs' threads: 1)
    assert f"report: {out}/report.md" in printed  # an absolute --out printed as given


def test_a_steps_threads_reach_its_process_and_a_slurm_jobs_cpu_request(tmp_path, started):
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.executors import LocalExecutor, _parameters, make_job
    from stsbench.reproduce.plan import build_plan

    envs = started  # each started process' environment (conftest)
    plan = build_plan(load_recipe(RECIPE), tmp_path / "o", DATA)
    step = plan.steps[0]
    job = replace(
        make_job(plan, step, (), 0, threads=3), args=("--version",)
    )  # the job, a command that ends at once
    for executor in (LocalExecutor(parallel=2, gpus=[]), LocalExecutor(gpus=["0"])):
        executor.submit(job).proc.wait()
        assert (envs[-1]["OMP_NUM_THREADS"], envs[-1]["MKL_NUM_THREADS"]) == ("3", "3")
    assert envs[-1]["CUDA_VISIBLE_DEVICES"] == "0"  # with a GPU too
    shared = replace(make_job(plan, step, (), 0), args=("--version",))
    LocalExecutor(parallel=2, gpus=[]).submit(shared).proc.wait()
    assert envs[-1]["OMP_NUM_THREADS"] == str(
        LocalExecutor(parallel=2, gpus=[]).threads
    )  # no threads: the share
    assert _parameters(make_job(plan, step, (), 0, threads=3))["cpus_per_task"] == 3
    assert "cpus_per_task" not in _parameters(make_job(plan, step, (), 0))


def test_the_threads_enter_no_steps_key(tmp_path, monkeypatch, capsys):
    """A rerun with other threads must find every step done: the dry run's keys are the same."""
    _needs_data()

    def keys(*flag: str) -> list[str]:
        code, printed, err = run_cli(
            ["reproduce", RECIPE, "--out", tmp_path / "o", "--dry-run", "--data-dir", DATA, *flag], capsys
        )
        assert code == 0, err
        assert re.search(r"^  CPU, \d+ threads? \(this run\)", printed, re.M)
        return re.findall(r"^  \S+  \[[0-9a-f]{12}\]", printed, re.M)

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    alone = keys()
    monkeypatch.setenv("OMP_NUM_THREADS", "2")
    assert keys() == alone and keys("--threads", "7") == alone and len(alone) == 7
    code, printed, _ = run_cli(
        ["reproduce", RECIPE, "--out", tmp_path / "o", "--dry-run", "--data-dir", DATA, "--threads", "7"],
        capsys,
    )
    assert "  CPU, 7 threads (this run)" in printed


@pytest.mark.parametrize("value", ["four", "0", "-1", "2.5", "4,2"])
def test_a_malformed_omp_num_threads_is_one_line(value, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OMP_NUM_THREADS", value)
    code, _, err = run_cli(
        ["reproduce", RECIPE, "--out", tmp_path / "o", "--dry-run", "--data-dir", DATA], capsys
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert f"OMP_NUM_THREADS={value!r}: not a positive whole number" in err and "--threads N" in err
    # on Slurm the login shell's OMP_NUM_THREADS is not read (each job gets the CPUs Slurm gives it)
    from stsbench.reproduce.executors import step_threads

    assert step_threads(None, "slurm") is None and step_threads(4, "slurm") == 4


def _tiny_results(where: Path) -> Path:
    """One model's fixture results (STS and transfer), no figures to draw: a report in a second."""
    shutil.copytree(TINY_RESULTS, where / TINY_RESULTS.name)
    return where


def test_an_absolute_out_is_written_there_and_named_as_given(tmp_path, monkeypatch, capsys):
    """`--out /home/me/runs/x` from /home/me/stsbench: the report said `--out ../runs/x`."""
    results = _tiny_results(tmp_path / "results")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    out = tmp_path / "runs" / "x"
    code, _, err = run_cli(["report", "--results", results, "--out", out], capsys)
    assert code == 0, err
    assert f"wrote {out}/report.md" in err and not (work / "runs").exists()
    made_by = next(
        line for line in (out / "report.md").read_text().splitlines() if line.startswith("Made by")
    )
    assert f"`stsbench report --results {results} --out {out}`" in made_by, made_by
    assert "../runs/x" not in made_by and ".../" not in made_by.split("`")[1]
    # a relative --out stays relative
    code, _, err = run_cli(["report", "--results", results, "--out", "rel"], capsys)
    assert code == 0 and "--out rel`" in (work / "rel" / "report.md").read_text()


def test_a_mistyped_model_gets_the_nearest_known_name(tmp_path):
    """`--model all-MiniLM-L6-v3` said the hub is out of reach and nothing of all-MiniLM-L6-v2."""
    _needs_data()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_CACHE": str(tmp_path / "hub"),
        "STSBENCH_CACHE": str(tmp_path / "cache"),
    }
    args = ["run", "--model", "all-MiniLM-L6-v3", "--tasks", "sts", "--data-dir", DATA]
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "stsbench", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    err = done.stderr.strip()
    assert done.returncode == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith("error: model 'all-MiniLM-L6-v3' is not a local folder nor in the local hub cache")
    assert "pass its folder with --model DIR" in err  # what is wrong and how to fix it, still
    # full hub ids, their owner named: the short all-MiniLM-L6-v2 is the embedded copy's name, not the hub's
    assert err.endswith(
        "; did you mean sentence-transformers/all-MiniLM-L6-v2 or sentence-transformers/all-MiniLM-L6-v3?"
    ), err


def test_the_nearest_model_is_a_known_one_and_only_when_near():
    from stsbench.commands._options import known_models, nearest_model, with_suggestion

    known = known_models()
    assert {"all-MiniLM-L6-v2", "bert-base-uncased", "roberta-large"} <= set(known)
    assert nearest_model("all-minilm-l6-v3", known) == "sentence-transformers/all-MiniLM-L6-v2"
    assert nearest_model("bert-base-uncase", known) == "bert-base-uncased"
    assert nearest_model("bert-base-uncased", known) is None  # a known name: nothing to suggest
    assert nearest_model("gpt2", known) is None
    line = "cannot fetch model 'roberta-lage' from the Hugging Face hub (404); download it ..."
    assert with_suggestion(line) == f"{line}; did you mean roberta-large?"
    assert with_suggestion("--tasks 'STS99': unknown") == "--tasks 'STS99': unknown"


def test_a_hint_names_a_full_hub_id_with_its_owner():
    """`--model all-MiniLM-L12-v2` was once told `did you mean all-MiniLM-L6-v2?`, a short name the hub does not
    know and another model; the hint names full hub ids, offline, from the names stsbench knows."""
    from stsbench.commands._options import known_models, suggestions, with_suggestion

    known = known_models()
    line = (
        "model 'all-MiniLM-L12-v2' is not a local folder nor in the local hub cache, and the hub is out of reach "
        "(HF_HUB_OFFLINE is set); download it where there is internet and pass its folder with --model DIR"
    )
    assert with_suggestion(line) == (
        f"{line}; did you mean sentence-transformers/all-MiniLM-L6-v2 or sentence-transformers/all-MiniLM-L12-v2?"
    )
    # the owner-less name of a model the local hub cache holds: that id alone
    cached = [*known, "sentence-transformers/all-MiniLM-L12-v2"]
    assert suggestions("all-minilm-l12-v2", cached) == ["sentence-transformers/all-MiniLM-L12-v2"]
    # a mistyped owner, or a name with its owner: the known id, nothing added
    assert suggestions("sentence-transformer/all-MiniLM-L6-v2", known) == [
        "sentence-transformers/all-MiniLM-L6-v2"
    ]
    assert suggestions("sentence-transformers/all-MiniLM-L6-v3", known) == [
        "sentence-transformers/all-MiniLM-L6-v2"
    ]
    # a known name without an owner is a hub id as it is (the hub resolves bert-base-uncased)
    assert suggestions("bert-base-uncase", known) == ["bert-base-uncased"]
    assert suggestions("gpt2", known) == [] and suggestions("bert-base-uncased", known) == []


def _editable_commands() -> list[str]:
    """Every editable install the README, the getting-started page, CI and the development notes show."""
    found = []
    for name in ("README.md", "docs/getting-started.md", ".ci/run", "docs/development.md"):
        text = (ROOT / name).read_text(encoding="utf-8")
        found += [m.group(0) for m in re.finditer(r"pip install [^`\n]*?-e [^`\n&)]*", text)]
    return found


def test_every_editable_install_shown_is_compat_mode():
    """The default editable mode's finder comes after sys.path: in the folder holding a clone named stsbench,
    `import stsbench` found that folder, an empty namespace package, and the README's Python failed."""
    commands = _editable_commands()
    assert len(commands) >= 7, commands
    missing = [c for c in commands if "--config-settings editable_mode=compat" not in c]
    assert not missing, missing


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)  # noqa: S603, S607


def test_a_checkout_names_the_package_files_that_differ_from_its_commit(tmp_path):
    from stsbench.results.write import checkout, session_code

    assert checkout(tmp_path) is None  # not a checkout
    repo = tmp_path / "repo"
    (repo / "stsbench").mkdir(parents=True)
    (repo / "docs").mkdir()
    for f in ("stsbench/a.py", "stsbench/b.py", "docs/x.md"):
        (repo / f).write_text("x = 1\n")
    (repo / ".gitignore").write_text("__pycache__/\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c")
    clean = checkout(repo)
    assert clean is not None and not clean.dirty and len(clean.commit) == 40 and session_code(clean) == {}
    (repo / "stsbench" / "a.py").write_text("x = 2\n")
    (repo / "stsbench" / "new.py").write_text("y = 1\n")
    (repo / "stsbench" / "__pycache__").mkdir()
    (repo / "stsbench" / "__pycache__" / "a.pyc").write_text("")
    (repo / "docs" / "x.md").write_text("changed\n")  # not the package's: changes no figure
    (repo / "stsbench" / "b.py").unlink()
    _git(repo, "add", "stsbench/new.py")
    found = checkout(repo)
    assert found.commit == clean.commit and found.differing == (
        "stsbench/a.py",
        "stsbench/b.py",
        "stsbench/new.py",
    )
    assert session_code(found) == {
        "git_commit": f"{clean.commit}-dirty",
        "differing_files": list(found.differing),
    }


def test_the_provenance_section_names_a_dirty_checkouts_files_and_a_clean_one_changes_nothing(tmp_path):
    from stsbench.reports.render import write_report
    from stsbench.results.write import Checkout

    results = _tiny_results(tmp_path / "results")
    texts = {}
    for name, found in [
        ("none", None),
        ("clean", Checkout(SHA)),
        ("dirty", Checkout(SHA, ("stsbench/reports/x.py", "stsbench/y.py"))),
    ]:
        write_report(results, tmp_path / name, "t", "stsbench report (test)", checkout=found)
        texts[name] = (tmp_path / name / "report.md").read_text(encoding="utf-8")
    assert texts["clean"] == texts["none"]  # a clean checkout's report: the same bytes as before
    added = [b for b in texts["dirty"].split("\n\n") if b not in texts["none"].split("\n\n")]
    assert added == [
        "This report was made by stsbench e401a06f-dirty: files differing from e401a06f: `stsbench/reports/x.py`, "
        "`stsbench/y.py`.",
        "Results recorded as made by uncommitted code (47d69ec6-dirty, c0c61f23-dirty): which files differed from "
        "those commits was not recorded when they were made.",
    ]
    assert texts["dirty"].index(added[0]) > texts["dirty"].index("## Provenance")
    # results recorded at the report's own dirty commit: the list is the report's, said so
    for path in results.rglob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "provenance" in data:
            data["provenance"]["git_commit"] = f"{SHA}-dirty"
            path.write_text(json.dumps(data), encoding="utf-8")
    write_report(
        results, tmp_path / "mine", "t", "stsbench report (test)", checkout=Checkout(SHA, ("stsbench/y.py",))
    )
    mine = (tmp_path / "mine" / "report.md").read_text(encoding="utf-8")
    assert (
        "Results recorded as made by e401a06f-dirty, the report's commit: the files above are those that differ as "
        "the report is made; which differed when the results were made was not recorded." in mine
    )
    assert "Results recorded as made by uncommitted code" not in mine


def test_the_report_command_names_the_dirty_files_except_in_a_reproduction(tmp_path, monkeypatch, capsys):
    """`stsbench report` reads the checkout; a reproduction's report (its folder holds reproduce.json) does not:
    its sessions record the files, and an edition's report.md stays the same bytes whatever checkout remade it."""

    monkeypatch.setattr(module, "checkout", lambda: module.Checkout(SHA, ("stsbench/y.py",)))
    results = _tiny_results(tmp_path / "results")
    line = "This report was made by stsbench e401a06f-dirty: files differing from e401a06f: `stsbench/y.py`."
    code, _, err = run_cli(["report", "--results", results, "--out", tmp_path / "plain"], capsys)
    assert code == 0 and line in (tmp_path / "plain" / "report.md").read_text(), err
    (tmp_path / "repro").mkdir()
    (tmp_path / "repro" / "reproduce.json").write_text(json.dumps({"kind": "stsbench-reproduce"}))
    code, _, err = run_cli(["report", "--results", results, "--out", tmp_path / "repro"], capsys)
    assert code == 0 and "This report was made by" not in (tmp_path / "repro" / "report.md").read_text(), err


def test_a_reproduce_session_records_the_files_differing_from_its_commit(ran, tmp_path, monkeypatch, capsys):
    from stsbench.reproduce.executors import LocalExecutor
    from stsbench.reproduce.state import load_state

    _needs_data()
    dirty = module.Checkout(SHA, ("stsbench/y.py",))
    monkeypatch.setattr(module, "checkout", lambda: dirty)
    code, printed, err = run_cli(["reproduce", RECIPE, "--out", tmp_path / "o", "--data-dir", DATA], capsys)
    assert code == 0, printed + err
    assert ran["checkout"] == {"git_commit": f"{SHA}-dirty", "differing_files": ["stsbench/y.py"]}
    monkeypatch.setattr(module, "checkout", lambda: module.Checkout(SHA))
    code, printed, err = run_cli(["reproduce", RECIPE, "--out", tmp_path / "p", "--data-dir", DATA], capsys)
    assert code == 0 and ran["checkout"] == {}, printed + err  # a clean checkout's session: as before
    # the scheduler writes it into the session's record in reproduce.json (a plan of no step: nothing runs)
    plan = replace(ran["plan"], steps=(), out=tmp_path / "q")
    plan.out.mkdir()
    code = {"git_commit": f"{SHA}-dirty", "differing_files": ["stsbench/y.py"]}
    state = ran["run_plan"](plan, load_state(plan.out), LocalExecutor(gpus=[]), started=time.time(), checkout=code)
    session = json.loads((plan.out / "reproduce.json").read_text())["sessions"][-1]
    assert session == state["sessions"][-1]
    assert (session["git_commit"], session["differing_files"]) == (f"{SHA}-dirty", ["stsbench/y.py"])
