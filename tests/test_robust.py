"""Robust runs (issue 15): `check` on the natural results folder, output preflight, interrupts, a shared
cache, progress lines in logs."""

from __future__ import annotations

import re

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
