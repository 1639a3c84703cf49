"""The notebooks run headless on the report fixtures and on an edition; every table they print is in its report.md."""

from __future__ import annotations

import pytest
from helpers import ROOT
from seed_results import make_seed_results

FIXTURE = ROOT / "tests" / "fixtures" / "report_results" / "results"
# the smallest checked-in edition with every analysis the notebooks show (length bias, the repetition probe,
# alignment/uniformity, spectra) and transfer tasks: its report.md was made by its recipe's report step
EDITION = ROOT / "reports" / "cpu-mini-replication"
NOTEBOOKS = ["main_results", "length_bias", "geometry"]
# each notebook on the report fixtures and on the edition; main_results also on 2 methods x 3 seeds (its seed table
# and figure)
CASES = [(name, where) for name in NOTEBOOKS for where in ("report", "edition")] + [("main_results", "seeds")]


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
    out["edition"] = (str(EDITION / "results"), (EDITION / "report.md").read_text(encoding="utf-8"))
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
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
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


def test_an_edition_is_reported_with_its_own_report_steps_options(tmp_path):
    from stsbench.notebook import report_command

    edition = ROOT / "reports" / "esimcse-dup-rate-mini"
    args = report_command(edition / "results", tmp_path)
    assert args[:5] == ["report", "--results", str(edition / "results"), "--out", str(tmp_path)]
    # its recipe's baseline and claims, and the mini banner its results carry
    assert args[args.index("--baseline") + 1] == "ESimCSE"
    assert args[args.index("--claims") + 1] == str(edition / "claims.yaml")
    assert "not the paper's setting" in args[args.index("--banner") + 1]
    # any other folder: `stsbench report`'s defaults
    assert report_command(FIXTURE, tmp_path) == ["report", "--results", str(FIXTURE), "--out", str(tmp_path)]


def test_open_report_builds_the_editions_tables_and_writes_nothing_beside_them(tmp_path, capsys):
    from stsbench.notebook import open_report, show

    edition = ROOT / "reports" / "mocose-collapse-mini"
    before = {p: p.stat().st_mtime_ns for p in edition.rglob("*")}
    report = open_report(edition / "results", tmp_path / "out")
    assert {p: p.stat().st_mtime_ns for p in edition.rglob("*")} == before
    # every table of every section is the edition's, and the figures keep the report's file names
    tables = [t for s in report.sections for t in s.tables]
    assert tables
    show(report, *(s.key for s in report.sections))
    printed = capsys.readouterr().out
    report_md = (edition / "report.md").read_text(encoding="utf-8")
    assert len(markdown_tables(printed)) == len(tables)
    assert all(t in report_md for t in markdown_tables(printed))
    figures = sorted(p.name for p in (tmp_path / "out" / "figures").iterdir())
    assert figures == sorted(p.name for p in (edition / "figures").iterdir())
    # a figure the paper-figure section shows first is shown again with the section that drew it
    assert any(s.shown_before for s in report.sections)


def test_show_names_a_section_the_report_lacks(tmp_path, capsys):
    from stsbench.notebook import open_report, show

    report = open_report(FIXTURE, tmp_path)
    show(report, "reproduction", "sts")
    out = capsys.readouterr().out
    assert out.startswith("not in this report (no results or options for them): reproduction")
    assert "## STS tasks" in out


def test_open_report_on_a_missing_folder_says_so(tmp_path):
    from stsbench.errors import StsbenchError
    from stsbench.notebook import open_report

    with pytest.raises(StsbenchError, match="does not exist"):
        open_report(tmp_path / "nowhere", tmp_path / "out")
    assert not (tmp_path / "out" / "report.md").exists()
