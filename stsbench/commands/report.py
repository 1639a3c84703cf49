"""``stsbench report``: the papers' tables and figures from a results folder, as Markdown and HTML."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer


def report_cmd(
    results: Annotated[
        list[Path],
        typer.Option(
            "--results",
            "-r",
            metavar="DIR",
            help="Folder of results: `stsbench run` / analysis JSON files and training run folders, at any depth. "
            "Repeat to merge several (a result found in two counts once; two copies that differ are refused).",
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
            "the difference of the seed means with its 95% interval (paired on shared seeds), a mark where it "
            "lies beyond the difference that matters.",
        ),
    ] = "unsup-SimCSE",
    against: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--against",
            metavar="KEY",
            help="A published row to reproduce (`stsbench published list`, or FILE.yaml#TABLE/ROW of one's own: "
            "docs/published.md): KEY, or GROUP=KEY to name the group "
            "of seeds that reproduces it (a method, e.g. ESimCSE, or the seeds' folder). Repeat for several. "
            "Adds a Reproduction section (a verdict per published figure) and OUT/reproduction.json.",
        ),
    ] = None,
    difference: Annotated[
        float,
        typer.Option(
            "--difference",
            help="The difference from a published figure that matters (points): 'reproduced' where the 95% "
            "interval over seeds of the difference from it lies inside ±this, 'not reproduced' where it lies "
            "entirely outside, else 'inconclusive' (docs/uncertainty.md, One rule).",
        ),
    ] = 1.0,
    claims: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--claims",
            metavar="FILE",
            help="A YAML list of a table's claims (argmax, ordering, difference, gap, plateau, collapse) naming "
            "the report's groups: each judged over seeds (docs/uncertainty.md, Claims) in a Claims section and "
            "OUT/reproduction.json.",
        ),
    ] = None,
    note: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--note",
            metavar="TEXT",
            help="A line printed in bold under the report's opening paragraph (repeat for several); "
            "`stsbench reproduce --keep-changed` names there the steps computed by other code.",
        ),
    ] = None,
    banner: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--banner",
            metavar="TEXT",
            help="A line set on every table and figure of the report, e.g. what makes its numbers other than the "
            "paper's ('all-MiniLM-L6-v2, 50 steps: not the paper's setting'); a mini recipe's report has one.",
        ),
    ] = None,
    figure: Annotated[
        Optional[list[str]],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--figures",
            metavar="KEY",
            help="A paper's figure the results regenerate (`mocose/figure8`; repeat for several; docs/recipes-list.md "
            "lists them): a section under the paper's number and caption, with its claim's verdict and the report's "
            "figures that draw it.",
        ),
    ] = None,
    align_point: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--align-point",
            metavar="ALIGN,UNIFORM",
            help="The fixed point MoCoSE Figure 4 measures (l_align, l_uniform) from (default 0,-4: perfect "
            "alignment, uniform on the sphere; the paper does not give its own).",
        ),
    ] = None,
    runs: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--runs",
            metavar="NAME[,NAME]",
            help="Only these training runs (their folder names; results of no training, a baseline, are kept): "
            "every table, figure and claim of the report is of them (reproduce --runs passes it).",
        ),
    ] = None,
    seeds: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option("--seeds", metavar="S[,S]", help="Only these seeds of the training runs (e.g. 1,2)."),
    ] = None,
    strict: Annotated[
        bool,
        typer.Option(
            "--strict",
            help="Exit with status 1 when a file was skipped (the report is still written). Nothing to report "
            "under the --results folders is an error either way (exit 2, nothing written).",
        ),
    ] = False,
) -> None:
    """Write OUT/report.md and a self-contained OUT/report.html from the results under RESULTS.

    A file that cannot be read (malformed JSON, not an stsbench result) is named on stderr and skipped;
    the rest of the report is written and the exit status is 0 (1 with --strict). Made by uncommitted stsbench
    code, its Provenance section names the package's files that differ from the commit (a reproduction's report,
    OUT holding reproduce.json, leaves that to the reproduction's record: each session of it names them).
    """
    from stsbench.commands._options import runs_and_seeds
    from stsbench.files import check_writable_dir

    check_writable_dir(out, "--out")
    from stsbench.progress import plural
    from stsbench.published.figures import get_figure
    from stsbench.reports.align_distance import parse_point
    from stsbench.reports.claims import load_claims
    from stsbench.reports.render import write_report
    from stsbench.reports.reproduction import parse_against
    from stsbench.results.checkout import checkout
    from stsbench.results.reproduction import STATE_FILE

    for key in figure or ():
        get_figure(key)  # an unknown key: one line, before anything is written
    point = parse_point(align_point) if align_point is not None else None
    targets = parse_against(against or [])
    judged = load_claims(claims) if claims is not None else []
    command = shlex.join(["stsbench", *sys.argv[1:]])
    names, numbers = runs_and_seeds(runs, seeds)
    files = write_report(
        results,
        out,
        title,
        command,
        baseline,
        targets,
        difference,
        strict=strict,
        notes=note or (),
        claims=judged,
        banner=banner,
        figures=figure or (),
        align_point=point,
        runs=names,
        seeds=numbers,
        # an edition's report.md is the same bytes whichever checkout remade it: its sessions record the code
        checkout=None if (out / STATE_FILE).is_file() else checkout(),
    )
    for warning in files.warnings:
        typer.echo(f"warning: {warning}", err=True)
    also = f", {files.reproduction}" if files.reproduction else ""
    typer.echo(
        f"wrote {files.markdown}, {files.html}{also} and {plural(len(files.figures), 'figure file')}",
        err=True,
    )
    if strict and files.warnings:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``stsbench report``."""
    app.command("report")(report_cmd)
