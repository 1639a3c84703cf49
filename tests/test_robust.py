"""Robust runs (issue 15): `check` on the natural results folder, output preflight, interrupts, a shared
cache, progress lines in logs."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from conftest import run_cli

MTEB_KEY = "mteb/all-MiniLM-L6-v2"
MTEB_TASKS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark"]


def test_check_on_the_natural_folder_after_run_and_length_bias(
    tiny_bert, data_dir, tmp_path, capsys, monkeypatch, one_thread
):
    """`run`, then `length-bias`, then `check --results results` from the same working folder (acceptance 2).

    The analysis files under results/analyses/ are skipped and named in the summary; the tiny random model is
    far from MiniLM, so a wide tolerance lets the comparison pass while the table shows every task measured.
    """
    monkeypatch.chdir(tmp_path)
    common = ["--model", tiny_bert, "--pooler", "avg", "--cache-dir", tmp_path / "cache"]
    code, _, err = run_cli(["run", *common, "--tasks", ",".join(MTEB_TASKS), "-q"], capsys)
    assert code == 0, err
    code, _, err = run_cli(["length-bias", *common], capsys)
    assert code == 0, err
    assert list((tmp_path / "results" / "analyses").rglob("*.json"))  # the file that used to break `check`
    code, out, err = run_cli(
        ["check", "--results", "results", "--against", MTEB_KEY, "--tolerance", "100"], capsys
    )
    assert code == 0, err
    assert "PASS" in out and out.count(" OK") == 6
    summary = next(line for line in out.splitlines() if line.startswith("compared "))
    assert f"compared 6 task results of {tiny_bert}/avg/test" in summary
    assert "skipped 1 analysis file" in summary and "left out" not in summary
    # a second run (another pooler) in the same folder: refused unless filtered, and the summary says so
    code, _, err = run_cli(
        [
            "run",
            *common[:2],
            "--pooler",
            "cls_before_pooler",
            "--tasks",
            "STS12",
            "-q",
            "--cache-dir",
            tmp_path / "cache",
        ],
        capsys,
    )
    assert code == 0, err
    code, _, err = run_cli(["check", "--results", "results", "--against", MTEB_KEY], capsys)
    assert code == 2 and "2 runs" in err and "--pooler" in err
    args = ["check", "--results", "results", "--against", MTEB_KEY, "--tolerance", "100", "--pooler", "avg"]
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert re.search(r"left out 1 other run \(.*/cls_before_pooler/test\)", out)


# --- output preflight (acceptance 3) ---


def _unwritable(tmp_path: Path) -> Path:
    """A folder this process cannot write in: read-only for a normal user; /proc where tests run as root."""
    import os

    if os.geteuid() == 0:
        return Path("/proc/stsbench-out")
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(0o555)
    return ro / "out"


def _writing_commands(model: Path, tmp_path: Path) -> dict[str, tuple[list, str]]:
    """Each writing command with its output option last (the bad path is appended) and that option's name."""
    train_file = tmp_path / "train.txt"
    train_file.write_text("a man plays a guitar .\ntwo dogs run in a field .\n")
    return {
        "run": (["run", "--model", model, "--tasks", "STS16", "-q", "--output"], "--output"),
        "run-cache": (["run", "--model", model, "--tasks", "STS16", "-q", "--cache-dir"], "--cache-dir"),
        "train": (
            ["train", "--method", "simcse", "--model", model, "--train-file", train_file, "--output"],
            "--output",
        ),
        "report": (["report", "--results", tmp_path, "--out"], "--out"),
        "data download": (["data", "download", "--data-dir"], "--data-dir"),
    }


@pytest.mark.parametrize("command", ["run", "run-cache", "train", "report", "data download"])
@pytest.mark.parametrize("bad", ["file", "inside a file", "unwritable"])
def test_writing_commands_check_their_output_first(command, bad, tiny_bert, tmp_path, capsys, monkeypatch):
    """A file or an unwritable folder as output: one line, exit 2, under 5 s, before any model loads."""
    import stsbench.encoders

    def no_model(*args, **kwargs):
        raise AssertionError("a model was loaded before the output was checked")

    monkeypatch.setattr(stsbench.encoders, "load_encoder", no_model)
    monkeypatch.setattr("stsbench.evaluate.load_encoder", no_model)
    monkeypatch.setattr("stsbench.train.loop.train", no_model)
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    target = {"file": afile, "inside a file": afile / "sub", "unwritable": _unwritable(tmp_path)}[bad]
    args, option = _writing_commands(tiny_bert, tmp_path)[command]
    start = time.perf_counter()
    code, out, err = run_cli([*args, target], capsys)
    elapsed = time.perf_counter() - start
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"error: {option} {target}"), lines[0]
    assert (
        "is a file" if bad == "file" else "which is a file" if bad != "unwritable" else "cannot write"
    ) in err
    assert elapsed < 5, elapsed
    assert afile.read_text() == "not a folder\n"


def test_check_writable_dir_accepts_new_and_existing_folders(tmp_path):
    from stsbench.io import check_writable_dir

    assert check_writable_dir(tmp_path, "--output") == tmp_path
    assert check_writable_dir(tmp_path / "new" / "deeper", "--output") == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()  # checking creates nothing
    assert not list(tmp_path.iterdir())  # and leaves no probe file behind
