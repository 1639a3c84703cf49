"""The notebooks run headless on the report fixtures, and every table they print is in report.md verbatim."""

from __future__ import annotations

import pytest
from conftest import ROOT

FIXTURE = ROOT / "tests" / "fixtures" / "report_results" / "results"
NOTEBOOKS = ["main_results", "length_bias", "geometry"]


def markdown_tables(text: str) -> list[str]:
    """Blocks of consecutive lines that start with ``|``."""
    blocks, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            blocks.append("\n".join(current))
            current = []
    if current:
        blocks.append("\n".join(current))
    return blocks


@pytest.fixture(scope="module")
def report_md(tmp_path_factory) -> str:
    from stsbench.reports.render import write_report

    files = write_report(
        FIXTURE, tmp_path_factory.mktemp("report"), "fixture report", "stsbench report (test)"
    )
    return files.markdown.read_text(encoding="utf-8")


@pytest.mark.slow  # a Jupyter kernel per notebook
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_notebook_runs_and_its_tables_are_the_reports(name, report_md, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("STSBENCH_RESULTS", str(FIXTURE))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(ROOT / "notebooks" / f"{name}.ipynb", as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert "def " not in cell.source, "a notebook holds no helper the package lacks"
    client = nbclient.NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
    )
    client.execute()
    printed = "\n".join(
        out.get("text", "")
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.get("output_type") == "stream"
    )
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert "warning:" not in printed
    tables = markdown_tables(printed)
    assert len(tables) >= 2
    for table in tables:
        assert table in report_md, table.splitlines()[0]
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images, "the notebook shows its figures"


def test_markdown_tables_splits_blocks():
    text = "x\n| a |\n|---|\n| 1 |\nend\n| b |\n"
    assert markdown_tables(text) == ["| a |\n|---|\n| 1 |", "| b |"]


def test_every_checked_in_notebook_is_run_here():
    assert sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")) == sorted(NOTEBOOKS)
