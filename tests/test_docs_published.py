"""docs/published.md: its example file is read and checked as the page says, and its tables name every key."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import MTEB, ROOT, block_after, run_cli, write_result

PAGE = ROOT / "docs" / "published.md"
MARK = "<!-- published-file -->"


def page_file() -> str:
    """The page's example file: the fenced block after ``<!-- published-file -->``."""
    return block_after(PAGE, MARK)


def test_the_tables_name_every_key_the_registry_reads():
    from stsbench.published.registry import KEYS

    sections = PAGE.read_text(encoding="utf-8").split("## The schema", 1)[1].split("\n\n")
    tables = [set(re.findall(r"^\| `(\w+)` \|", s, flags=re.M)) for s in sections]
    assert [t for t in tables if t] == [set(KEYS[level]) for level in ("file", "paper", "table", "row")]


def test_the_pages_file_checks_results_as_the_page_says(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("my-numbers.yaml").write_text(page_file(), encoding="utf-8")
    for task, value in MTEB.items():
        write_result(Path("results"), task, value)
    code, out, err = run_cli(["check", "--results", "results", "--against", "my-numbers.yaml#t1/minilm"], capsys)
    assert code == 0 and "PASS" in out and "my-numbers.yaml#t1/minilm" in out, err
