"""A results folder's report in a notebook: built by ``stsbench report`` itself, shown a section at a time.

The notebooks in ``notebooks/`` name a results folder (``$STSBENCH_RESULTS``) and show some sections of its
report: each table as ``report.md`` prints it, each figure inline, drawn by the report's own functions under its
own file names. An edition's results (``OUT/results`` beside ``OUT/reproduce.json``) are reported with that
reproduction's report step's options (:func:`stsbench.reproduce.plan.report_args` on the recipe it records: its
``--baseline``, ``--against``, ``--claims``, ``--difference``, ``--figures``, banner and subset), so every table a
notebook prints is one of the edition's ``report.md``; any other folder with ``stsbench report``'s defaults. Made
from the repository root, the report prints its commands as the editions' READMEs do (:func:`open_results`).
"""

from __future__ import annotations

import base64
import os
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

from stsbench.errors import StsbenchError
from stsbench.reports.render import Report
from stsbench.results.schema import STATE_FILE


def report_command(results: Path, out: Path) -> list[str]:
    """The ``stsbench report`` arguments of ``results``' report, written to ``out``.

    A reproduction's (``results`` named ``results`` beside a ``reproduce.json``): its report step's, the recipe
    it recorded replanned (a ``--keep-changed`` note left out: it says which code made which steps, no table).
    """
    record = results.parent / STATE_FILE
    if results.name != "results" or not record.is_file():
        return ["report", "--results", str(results), "--out", str(out)]
    from stsbench.reproduce.plan import mini_banner, report_args
    from stsbench.reproduce.state import load_state, recorded_recipe

    recipe = recorded_recipe(load_state(results.parent))
    args = report_args(recipe, results.parent, banner=mini_banner(recipe))
    args[args.index("--out") + 1] = str(out)
    return args


def open_report(results: str | Path, out: str | Path | None = None) -> Report:
    """The report of ``results``, written by ``stsbench report`` with the arguments :func:`report_command` gives.

    ``out``: where, kept (default: a temporary folder, removed once the report is read: its figures are held in
    the :class:`Report`); its Made-by line quotes those arguments.
    """
    import typer

    from stsbench.commands.report import report_cmd

    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(report_cmd)  # the command alone: `stsbench report`'s parsing, defaults and checks
    command = typer.main.get_command(app)
    temporary = tempfile.TemporaryDirectory(prefix="stsbench-notebook-") if out is None else nullcontext(out)
    with temporary as folder:
        args = report_command(Path(results), Path(folder))
        argv, sys.argv = sys.argv, ["stsbench", *args]  # the command line the report says made it
        try:
            return command.main(args[1:], standalone_mode=False).report
        finally:
            sys.argv = argv


class ResultsError(StsbenchError):
    """``$STSBENCH_RESULTS`` names no folder a report is made from; a notebook shows this line alone."""

    def _render_traceback_(self) -> list[str]:  # IPython prints these lines in place of the traceback
        return [f"{type(self).__name__}: {self}"]


def open_results(default: str, root: str | Path = "..") -> Report:
    """:func:`open_report` of ``$STSBENCH_RESULTS`` (else ``default``), made from ``root`` (a notebook's: ``..``).

    A relative path is one from ``root``, and the report names a folder under ``root`` from there (its Made-by
    line and the commands that make its missing sections, as the editions' READMEs write them from the
    repository root). A folder the report refuses: a :class:`ResultsError` that names the variable.
    """
    given, here = os.environ.get("STSBENCH_RESULTS", default), Path.cwd()
    os.chdir(root)
    try:
        folder = Path(given).resolve()
        return open_report(folder.relative_to(Path.cwd()) if folder.is_relative_to(Path.cwd()) else folder)
    except StsbenchError as e:  # what is wrong, its first clause (the rest names `stsbench report`'s options)
        why = f"{str(e).split('; ')[0]}; point it at a results folder (an edition's OUT/results)"
        raise ResultsError(f"STSBENCH_RESULTS={given}: {why}") from None
    finally:
        os.chdir(here)


def show(report: Report, *keys: str) -> None:
    """Print the sections ``keys`` of ``report`` as ``report.md`` prints them, each figure inline.

    ``keys``: :attr:`Section.key <stsbench.reports.collect.Section.key>` (``sts``, ``seeds``, an analysis' name...).
    A section's figures that an earlier section shows (a link in ``report.md``) are shown with it too.
    """
    from IPython.display import Image, display

    from stsbench.tabular import to_markdown

    unknown = sorted(set(keys) - {s.key for s in report.sections})
    if unknown:  # with, the first time, what the report says of its empty sections (its "Not in this report")
        told, report.absent_told = getattr(report, "absent_told", False), True
        absent = [p for s in report.sections if s.key == "absent" and not told for p in s.paragraphs]
        print(f"not in this report (no results or options for them): {', '.join(unknown)}", *absent, sep="\n")  # noqa: T201
    for section in (s for s in report.sections if s.key in keys):
        print(f"## {section.title}", *section.paragraphs, sep="\n\n")  # noqa: T201
        for table in section.tables:
            notes = "".join(f"- {n}\n" for n in table.notes)
            print(f"\n### {table.title}\n\n{to_markdown(table)}\n\n{notes}")  # noqa: T201
        for figure in (*section.shown_before, *section.figures):
            display(Image(data=base64.b64decode(figure.png_base64)))
            print(f"Figure: {figure.title}")  # noqa: T201
