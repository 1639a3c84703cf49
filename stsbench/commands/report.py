"""``stsbench report``: the papers' tables and figures from a results folder, as Markdown and HTML."""

from __future__ import annotations

from pathlib import Path

import typer

from stsbench.commands import _options as shared
from stsbench.commands._options import command_line, opt, runs_and_seeds
from stsbench.errors import StsbenchError
from stsbench.files import check_writable_dir
from stsbench.progress import plural


def report_cmd(
    results: opt(
        list[Path],
        "--results",
        "-r",
        metavar="DIR",
        help="Folder of results: `stsbench run` / analysis JSON files and training run folders, at any depth. "
        "Repeat to merge several (a result found in two counts once; two copies that differ are refused).",
    ),
    out: shared.OutOpt,
    title: opt(
        str | None, "--title", help="Report title (default: 'stsbench report: <out folder name>')."
    ) = None,
    baseline: opt(
        str,
        "--baseline",
        help="Method (or group of seeds, by its folder) that groups of seeds are compared with: "
        "the difference of the seed means with its 95% interval (paired on shared seeds), a mark where it "
        "lies beyond the difference that matters.",
    ) = "unsup-SimCSE",
    against: opt(
        list[str] | None,
        "--against",
        metavar="KEY",
        help="A published row to reproduce (`stsbench published list`, or FILE.yaml#TABLE/ROW of one's own: "
        "docs/published.md): KEY, or GROUP=KEY to name the group "
        "of seeds that reproduces it (a method, e.g. ESimCSE, or the seeds' folder). Repeat for several. "
        "Adds a Reproduction section (a verdict per published figure) and OUT/reproduction.json.",
    ) = None,
    difference: shared.DifferenceOpt = 1.0,
    claims: opt(
        Path | None,
        "--claims",
        metavar="FILE",
        help="A YAML list of a table's claims (argmax, ordering, difference, gap, plateau, collapse) naming "
        "the report's groups: each judged over seeds (docs/uncertainty.md, Claims) in a Claims section and "
        "OUT/reproduction.json.",
    ) = None,
    note: opt(
        list[str] | None,
        "--note",
        metavar="TEXT",
        help="A line printed in bold under the report's opening paragraph (repeat for several); "
        "`stsbench reproduce --keep-changed` names there the steps computed by other code.",
    ) = None,
    banner: opt(
        str | None,
        "--banner",
        metavar="TEXT",
        help="A line set on every table and figure of the report, e.g. what makes its numbers other than the "
        "paper's ('all-MiniLM-L6-v2, 50 steps: not the paper's setting'); a mini recipe's report has one.",
    ) = None,
    figure: opt(
        list[str] | None,
        "--figures",
        metavar="KEY",
        help="A paper's figure the results regenerate (`mocose/figure8`; repeat for several; docs/recipes-list.md "
        "lists them): a section under the paper's number and caption, with its claim's verdict and the report's "
        "figures that draw it.",
    ) = None,
    align_point: opt(
        str | None,
        "--align-point",
        metavar="ALIGN,UNIFORM",
        help="The fixed point MoCoSE Figure 4 measures (l_align, l_uniform) from (default 0,-4: perfect "
        "alignment, uniform on the sphere; the paper does not give its own).",
    ) = None,
    sequential: opt(
        int | None,
        "--sequential",
        metavar="M",
        help="The seeds were added by the sequential plan of at most M (10 or 20; docs/uncertainty.md, Seeds "
        "until the verdict is decided): each claim's statement and each published cell of one run judged at the "
        "look the plan stopped it at, "
        "the plan recorded in OUT/reproduction.json, every other interval said to be descriptive.",
    ) = None,
    refine: opt(
        bool,
        "--refine",
        help="With --sequential: the plan went on past supported or reversed until each claim's size was shown "
        "(by more or less than δ) or out of reach.",
    ) = False,
    runs: shared.RunsOpt = None,
    seeds: shared.SeedsOpt = None,
    strict: shared.StrictOpt = False,
) -> object:  # the ReportFiles written (typer reads annotations at run time)
    """Write OUT/report.md and a self-contained OUT/report.html from the results under RESULTS.

    A file that cannot be read (malformed JSON, not an stsbench result) is named on stderr and skipped;
    the rest of the report is written and the exit status is 0 (1 with --strict). Made by uncommitted stsbench
    code, its Provenance section names the package's files that differ from the commit (a reproduction's report,
    OUT holding reproduce.json, leaves that to the reproduction's record: each session of it names them).
    """
    if refine and sequential is None:
        raise StsbenchError("--refine applies to --sequential")
    check_writable_dir(out, "--out")
    from stsbench.published.figures import get_figure
    from stsbench.reports.ablations import parse_point
    from stsbench.reports.render import write_report
    from stsbench.reports.reproduction import load_claims, parse_against
    from stsbench.results.schema import STATE_FILE
    from stsbench.results.write import checkout

    for key in figure or ():
        get_figure(key)  # an unknown key: one line, before anything is written
    if sequential is not None:  # a maximum the committed constants lack: one line, before anything is written
        from stsbench.stats.sequential import plan

        plan(sequential)
    point = parse_point(align_point) if align_point is not None else None
    targets = parse_against(against or [])
    judged = load_claims(claims) if claims is not None else []
    command = command_line()
    names, numbers = runs_and_seeds(runs, seeds)
    # an edition's report.md is the same bytes whichever checkout remade it: its sessions record the code
    code = None if (out / STATE_FILE).is_file() else checkout()
    shown = dict(notes=note or (), claims=judged, banner=banner, figures=figure or (), align_point=point)
    shown.update(carried=carried(out))
    subset = dict(runs=names, seeds=numbers, strict=strict, checkout=code, until=sequential, refine=refine)
    files = write_report(results, out, title, command, baseline, targets, difference, **shown, **subset)
    for warning in files.warnings:
        typer.echo(f"warning: {warning}", err=True)
    also = f", {files.reproduction}" if files.reproduction else ""
    figures = plural(len(files.figures), "figure file")
    typer.echo(f"wrote {files.markdown}, {files.html}{also} and {figures}", err=True)
    if strict and files.warnings:
        raise typer.Exit(1)
    return files  # what a notebook shows (stsbench.notebook)


def carried(out: Path) -> str | None:
    """The Provenance line naming a reproduction's steps carried to this code (``reproduce --carry-changed``)."""
    import json

    from stsbench.results.schema import STATE_FILE

    try:
        steps = json.loads((out / STATE_FILE).read_text(encoding="utf-8"))["steps"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not a reproduction's report (or one `reproduce --status` refuses in its own line)
    found = [sid for sid, r in steps.items() if isinstance(r, dict) and r.get("carried")]
    names = ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")
    return (
        f"Carried to this stsbench's code by `stsbench reproduce --carry-changed`, each on a witness that agreed "
        f"with its record (reproduce.json, each step's `carried`: what was compared): {len(found)} step(s), {names}."
        if found
        else None
    )


def register(app: typer.Typer) -> None:
    """Add ``stsbench report``."""
    app.command("report")(report_cmd)
