"""The documentation covers the whole surface: every command and every public function is in docs/."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer

import stsbench
from stsbench.cli import app

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in sorted(DOCS.glob("*.md")))


def command_paths() -> list[str]:
    def walk(cmd, prefix: str) -> list[str]:
        subs = getattr(cmd, "commands", None)
        if not subs:
            return [prefix]
        return [path for name, sub in sorted(subs.items()) for path in walk(sub, f"{prefix} {name}")]

    return walk(typer.main.get_command(app), "stsbench")


def test_every_command_is_in_the_docs():
    paths = command_paths()
    assert "stsbench run" in paths and "stsbench data verify" in paths and len(paths) >= 14
    text = docs_text()
    missing = [p for p in paths if not re.search(rf"{re.escape(p)}(?![\w-])", text)]
    assert not missing, f"commands the docs never name: {missing}"


def test_every_public_function_has_a_reference_entry():
    reference = (DOCS / "reference.md").read_text(encoding="utf-8")
    entries = set(re.findall(r"^::: stsbench(?:\.\w+)*\.(\w+)$", reference, flags=re.M))
    public = {name for name in stsbench.__all__ if not name.startswith("_")}
    assert public <= entries, f"public names without an API entry: {sorted(public - entries)}"


def test_every_page_is_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {p.name for p in DOCS.glob("*.md")}
    assert pages and all(f": {page}" in nav for page in pages), sorted(p for p in pages if f": {p}" not in nav)


@pytest.mark.skipif(shutil.which("mkdocs", path=str(Path(sys.executable).parent)) is None, reason="docs extra absent")
def test_the_site_builds_strictly(tmp_path):
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent))
    done = subprocess.run(
        [mkdocs, "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "index.html").is_file()
