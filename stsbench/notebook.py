"""A results folder's report in a notebook: built by ``stsbench report`` itself, shown a section at a time.

The notebooks in ``notebooks/`` name a results folder (``$STSBENCH_RESULTS``) and show some sections of its
report: each table as ``report.md`` prints it, each figure inline, drawn by the report's own functions under its
own file names. An edition's results (``OUT/results`` beside ``OUT/reproduce.json``) are reported with that
reproduction's report step's options (:func:`stsbench.reproduce.plan.report_args` on the recipe it records: its
``--baseline``, ``--against``, ``--claims``, ``--difference``, ``--figures``, banner and subset), so every table a
notebook prints is one of the edition's ``report.md``; any other folder with ``stsbench report``'s defaults.
"""

from __future__ import annotations

import base64
import sys
import tempfile
from pathlib import Path

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

    ``out``: where (default: a new temporary folder); its Made-by line quotes those arguments.
    """
    import typer

    from stsbench.commands.report import report_cmd

    folder = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="stsbench-notebook-"))
    args = report_command(Path(results), folder)
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(report_cmd)  # the command alone: `stsbench report`'s parsing, defaults and checks
    command = typer.main.get_command(app)
    argv, sys.argv = sys.argv, ["stsbench", *args]  # the command line the report says made it
    try:
        return command.main(args[1:], standalone_mode=False).report
    finally:
        sys.argv = argv


def show(report: Report, *keys: str) -> None:
    """Print the sections ``keys`` of ``report`` as ``report.md`` prints them, each figure inline.

    ``keys``: :attr:`Section.key <stsbench.reports.collect.Section.key>` (``sts``, ``seeds``, an analysis' name...).
    A section's figures that an earlier section shows (a link in ``report.md``) are shown with it too.
    """
    from IPython.display import Image, display

    from stsbench.tabular import to_markdown

    unknown = sorted(set(keys) - {s.key for s in report.sections})
    if unknown:  # with what the report says of its empty sections (its "Not in this report")
        absent = [p for s in report.sections if s.key == "absent" for p in s.paragraphs]
        print(f"not in this report (no results or options for them): {', '.join(unknown)}", *absent, sep="\n")  # noqa: T201
    for section in (s for s in report.sections if s.key in keys):
        print(f"## {section.title}", *section.paragraphs, sep="\n\n")  # noqa: T201
        for table in section.tables:
            notes = "".join(f"- {n}\n" for n in table.notes)
            print(f"\n### {table.title}\n\n{to_markdown(table)}\n\n{notes}")  # noqa: T201
        for figure in (*section.shown_before, *section.figures):
            display(Image(data=base64.b64decode(figure.png_base64)))
            print(f"Figure: {figure.title}")  # noqa: T201
