"""The notebooks run headless on the report fixtures, and every table they print is in report.md verbatim."""

from __future__ import annotations

import pytest
from helpers import ROOT
from seed_results import make_seed_results

FIXTURE = ROOT / "tests" / "fixtures" / "report_results" / "results"
NOTEBOOKS = ["main_results", "length_bias", "geometry"]
# each notebook on the report fixtures; main_results also on 2 methods x 3 seeds (its seed table and figure)
CASES = [(name, "report") for name in NOTEBOOKS] + [("main_results", "seeds")]


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
def reports(tmp_path_factory) -> dict[str, tuple[str, str]]:
    """``{fixture: (results folder, its report.md)}``."""
    from stsbench.reports.render import write_report

    out = {}
    seeds = make_seed_results(tmp_path_factory.mktemp("seeds") / "results")
    for key, folder in (("report", FIXTURE), ("seeds", seeds)):
        files = write_report(
            folder, tmp_path_factory.mktemp("report"), "fixture report", "stsbench report (test)"
        )
        out[key] = (str(folder), files.markdown.read_text(encoding="utf-8"))
    return out


@pytest.mark.slow  # a Jupyter kernel per notebook
@pytest.mark.parametrize(("name", "results"), CASES)
def test_notebook_runs_and_its_tables_are_the_reports(name, results, reports, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    folder, report_md = reports[results]
    monkeypatch.setenv("STSBENCH_RESULTS", folder)
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
    if results == "seeds":  # the groups of seeds and their differences, as the report shows them
        assert any("| unsup-SimCSE (n=3) |" in t for t in tables)
        assert any("| ESimCSE (n=3) − unsup-SimCSE (n=3) |" in t for t in tables)
    for table in tables:
        assert table in report_md, table.splitlines()[0]
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert images, "the notebook shows its figures"


def test_markdown_tables_splits_blocks():
    text = "x\n| a |\n|---|\n| 1 |\nend\n| b |\n"
    assert markdown_tables(text) == ["| a |\n|---|\n| 1 |", "| b |"]


def test_every_checked_in_notebook_is_run_here():
    assert sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb")) == sorted(NOTEBOOKS)
