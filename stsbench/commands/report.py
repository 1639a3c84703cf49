"""``stsbench report``: the papers' tables and figures from a results folder, as Markdown and HTML."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer


def report_cmd(
    results: Annotated[
        Path,
        typer.Option(
            "--results",
            "-r",
            help="Folder of results: `stsbench run` / analysis JSON files and training run folders, at any depth.",
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Report folder: report.md, report.html and figures/ go here.")
    ],
    title: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option("--title", help="Report title (default: 'stsbench report: <out folder name>')."),
    ] = None,
    baseline: Annotated[
        str,
        typer.Option(
            "--baseline",
            help="Method (or group of seeds, by its folder) that groups of seeds are compared with: "
            "the difference of the seed means, Welch's 95% interval, a mark where significant after Holm.",
        ),
    ] = "unsup-SimCSE",
    strict: Annotated[
        bool,
        typer.Option(
            "--strict", help="Exit with status 1 when a file was skipped (the report is still written)."
        ),
    ] = False,
) -> None:
    """Write OUT/report.md and a self-contained OUT/report.html from the results under RESULTS.

    A file that cannot be read (malformed JSON, not an stsbench result) is named on stderr and skipped;
    the rest of the report is written and the exit status is 0 (1 with --strict).
    """
    from stsbench.io import check_writable_dir

    check_writable_dir(out, "--out")
    from stsbench.progress import plural
    from stsbench.reports.render import write_report

    command = shlex.join(["stsbench", *sys.argv[1:]])
    files = write_report(results, out, title, command, baseline)
    for warning in files.warnings:
        typer.echo(f"warning: {warning}", err=True)
    typer.echo(
        f"wrote {files.markdown}, {files.html} and {plural(len(files.figures), 'figure file')}", err=True
    )
    if strict and files.warnings:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``stsbench report``."""
    app.command("report")(report_cmd)
