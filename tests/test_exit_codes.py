"""Exit codes, the same for every command (docs/commands.md, "Exit codes"), and ``stsbench --version``."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from helpers import ROOT

import stsbench
from stsbench import cli, errors


def _main(monkeypatch, capsys, argv: list[str]) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["stsbench", *argv])
    code = 0
    try:
        cli.main()  # returns on success
    except SystemExit as exit_:
        code = exit_.code or 0
    out = capsys.readouterr()
    return code, out.out, out.err


def test_version_prints_the_package_version(monkeypatch, capsys):
    code, out, err = _main(monkeypatch, capsys, ["--version"])
    assert code == 0 and out == f"stsbench {stsbench.__version__}\n" and not err
    proc = subprocess.run(  # the console script as a user types it
        [sys.executable, "-m", "stsbench", "--version"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0 and proc.stdout.strip() == f"stsbench {stsbench.__version__}"


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (errors.StsbenchError, 2),
        (errors.Negative, 1),
        (errors.RunFailed, 3),
        (errors.Interrupted, 130),
    ],
)
def test_each_kind_of_error_ends_in_one_line_and_its_status(monkeypatch, capsys, error, status):
    import stsbench.commands.published as published

    def raising(key: str) -> None:
        raise error("what is wrong; how to fix it")

    monkeypatch.setattr(published, "published_show", raising)
    code, out, err = _main(monkeypatch, capsys, ["published", "show", "x"])
    assert code == status and err == "error: what is wrong; how to fix it\n" and not out


def test_usage_errors_exit_2(monkeypatch, capsys):
    for argv in (["no-such-command"], ["check", "--no-such-flag"], ["published", "show", "no/such/key"]):
        code, _, err = _main(monkeypatch, capsys, argv)
        assert code == 2 and len(err.strip().splitlines()) == 1 and err.startswith("error: "), (argv, err)


def test_the_commands_reference_has_the_table_the_code_uses():
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| `?(\d+)`? \| (.+?) \|", section, re.M))
    assert {int(k) for k in rows} == {
        errors.SUCCESS,
        errors.NEGATIVE,
        errors.USAGE,
        errors.FAILED,
        errors.INTERRUPTED,
    }
    assert "check" in rows["1"] and "report --strict" in rows["1"] and "reproduce" in rows["1"]
    assert "failed" in rows["3"]
