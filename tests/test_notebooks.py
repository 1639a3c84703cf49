"""The notebooks run headless on the report fixtures and on an edition; every table they print is in its report.md."""

from __future__ import annotations

import tempfile
from pathlib import Path

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
    if results == "edition":  # the notebooks' default, $STSBENCH_RESULTS unset
        monkeypatch.delenv("STSBENCH_RESULTS", raising=False)
    else:
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
    # the report made from the repository root: the commands it prints are run from there
    where = Path(folder).relative_to(ROOT) if Path(folder).is_relative_to(ROOT) else folder
    assert f"Made by `stsbench report --results {where} --out " in printed
    made = [line for line in printed.splitlines() if "Make them with" in line]
    assert len(made) == len(set(made)), "each of its Not in this report lines once"
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


def test_show_names_a_section_the_report_lacks_and_its_lines_once(tmp_path, monkeypatch, capsys):
    from stsbench.notebook import open_report, show

    report = open_report(make_seed_results(tmp_path / "results"), tmp_path / "out")
    show(report, "reproduction", "sts")
    show(report, "length_bias", "seeds")
    out = capsys.readouterr().out
    lacks = "not in this report (no results or options for them): "
    assert out.startswith(f"{lacks}reproduction\nTransfer tasks: no")
    assert f"\n{lacks}length_bias\n## Seeds" in out
    assert out.count("Length bias: no length-bias results") == 1
    assert "## STS tasks" in out


def test_open_report_leaves_no_temporary_folder(tmp_path, monkeypatch, capsys):
    from stsbench.notebook import open_report, show

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = set(tmp_path.glob("stsbench-notebook-*"))
    report = open_report(FIXTURE)
    assert set(tmp_path.glob("stsbench-notebook-*")) == before
    assert not any(p.exists() for p in report.figures)
    show(report, "sts")  # its figures held in the report
    assert "## STS tasks" in capsys.readouterr().out


def test_a_results_folder_the_report_refuses_is_one_line_naming_the_variable(tmp_path, monkeypatch):
    from stsbench.notebook import ResultsError, open_results

    monkeypatch.chdir(ROOT / "notebooks")
    (tmp_path / "empty").mkdir()
    cases = ((tmp_path / "empty", "nothing to report under"), (tmp_path / "nowhere", "does not exist"))
    for given, why in cases:
        monkeypatch.setenv("STSBENCH_RESULTS", str(given))
        with pytest.raises(ResultsError) as raised:
            open_results("reports/cpu-mini-replication/results")
        message = str(raised.value)
        assert message.startswith(f"STSBENCH_RESULTS={given}: ") and why in message
        assert message.endswith("; point it at a results folder (an edition's OUT/results)")
        assert "--results" not in message
        # IPython shows this line alone
        assert raised.value._render_traceback_() == [f"ResultsError: {message}"]
        assert raised.value.__cause__ is None and raised.value.__suppress_context__
        assert Path.cwd() == ROOT / "notebooks"


@pytest.mark.slow  # a Jupyter kernel
def test_a_notebook_on_an_empty_folder_ends_in_one_line_naming_the_variable(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("STSBENCH_RESULTS", str(tmp_path))
    nb = nbformat.read(ROOT / "notebooks" / "geometry.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "notebooks")}}
    )
    with pytest.raises(nbclient.exceptions.CellExecutionError) as raised:
        client.execute()
    last = str(raised.value).strip().splitlines()[-1]  # what `jupyter nbconvert --execute` ends with
    assert last.startswith(f"ResultsError: STSBENCH_RESULTS={tmp_path}: nothing to report under")
    [error] = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert error["traceback"] == [last]  # what Jupyter shows: that line, no traceback


def test_open_report_on_a_missing_folder_says_so(tmp_path):
    from stsbench.errors import StsbenchError
    from stsbench.notebook import open_report

    with pytest.raises(StsbenchError, match="does not exist"):
        open_report(tmp_path / "nowhere", tmp_path / "out")
    assert not (tmp_path / "out" / "report.md").exists()
