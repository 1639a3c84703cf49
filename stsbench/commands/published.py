"""``stsbench published list|show`` (the published numbers) and ``stsbench check`` (results against them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from stsbench.metrics import AVG

if TYPE_CHECKING:
    from stsbench.published.check import Comparison

STATUS_STYLE = {"OK": "green", "FAIL": "bold red", "MISSING": "bold red", "MODIFIED": "bold red"}


def published_list(
    match: Annotated[
        str | None, typer.Argument(help="Show only entries whose key, paper, table or row contains this.")
    ] = None,
    paper: Annotated[
        str | None,
        typer.Option("--paper", help="Only this paper: simcse, esimcse-arxiv, esimcse-coling, mocose, mteb."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option("--model", help="Only rows of this model, e.g. bert-base, roberta-large, MiniLM."),
    ] = None,
) -> None:
    """List the published entries: key, paper, table, row (filter with MATCH, --paper, --model)."""
    from rich.table import Table

    from stsbench.commands._console import table_console
    from stsbench.errors import StsbenchError
    from stsbench.published.registry import find_entries

    entries = find_entries(match, paper=paper, model=model)
    asked = ", ".join(
        f"{k} '{v}'" for k, v in (("search", match), ("--paper", paper), ("--model", model)) if v
    )
    if not entries:
        raise StsbenchError(f"no published entry matches {asked}; run `stsbench published list` for all")
    hint = (
        None if asked else "narrow with a search term, --paper or --model (`stsbench published list --help`)"
    )
    table = Table(title=f"Published numbers ({len(entries)} entries)", caption=hint)
    table.add_column("key", no_wrap=True)  # whole, to copy into `show` and `check --against`
    table.add_column("paper")
    table.add_column("table")
    table.add_column("row", overflow="fold")
    for e in entries:
        table.add_row(e.key, e.paper.slug, e.table, e.row)
    table_console().print(table)


def published_show(
    key: Annotated[str, typer.Argument(help="An entry key from `stsbench published list`.")],
) -> None:
    """Show one published row: its values, source and notes."""
    from rich.table import Table

    from stsbench.commands._console import table_console
    from stsbench.published.registry import get_entry

    e = get_entry(key)
    printed = dict(e.printed_as)
    table = Table(caption=e.metric)  # the title on its own line: a table's title wraps to the table's width
    table.add_column("column")
    table.add_column("value", justify="right")
    if printed:
        table.add_column("source text shows", justify="right")
    for col, value in e.values.items():
        table.add_row(col, e.format(value), *([printed.get(col, "")] if printed else []))
    console = table_console()
    console.print(f"[bold]{e.paper.title}[/bold]\n{e.paper.citation}\n{e.table}: {e.caption}")
    console.print(f"version: {e.version or 'not stated'}", highlight=False)
    console.print(f"split: {e.split or 'not stated'}; kind: {e.kind}; read from {e.source}", highlight=False)
    if e.selection_note:
        console.print(f"model selection: {e.selection_note}", highlight=False)
    console.print(f"{e.key}: {e.row}", highlight=False, soft_wrap=True)
    console.print(table)
    for note in e.notes:
        console.print(f"- {note}", highlight=False)


def check(
    results: Annotated[
        Path, typer.Option("--results", help="Folder of results JSON (searched recursively).")
    ],
    against: Annotated[
        str,
        typer.Option(
            "--against",
            help="Published entry key (`stsbench published list`), FILE.yaml#TABLE/ROW for a published file of "
            "one's own (docs/published.md), or mteb-results:DIR for a local MTEB "
            'results folder (needs `pip install "stsbench[mteb]"`).',
        ),
    ],
    tolerance: Annotated[
        str,
        typer.Option(
            help="Largest allowed |measured - published|, or 'seeds': each published figure must lie inside "
            "the 95% interval over seeds (the seed aggregate of `stsbench run` on a `train --seeds` folder)."
        ),
    ] = "0.05",
    model: Annotated[
        str | None,
        typer.Option(
            help="Only results of this model name (a cell: the group of seeds, by name, method or folder)."
        ),
    ] = None,
    pooler: Annotated[str | None, typer.Option(help="Only results with this pooler.")] = None,
    mode: Annotated[str | None, typer.Option(help="Only results of this mode (test, dev, fasttest).")] = None,
    difference: Annotated[
        float | None,
        typer.Option(
            help="With --tolerance seeds: the difference from a published figure that matters (points, default "
            "1.0): 'reproduced' where the 95% interval of the difference from it lies inside ±this, 'not "
            "reproduced' where it lies entirely outside, else 'inconclusive' (docs/uncertainty.md, One rule)."
        ),
    ] = None,
) -> None:
    """Compare results with a published row; fail when a task is off by more than the tolerance or missing.

    With mteb-results:DIR the row is the main scores (x100) of the run's model in an MTEB results folder
    (``stsbench export-mteb`` writes one; MTEB's own cache and results repository are read the same way).
    """
    from stsbench.errors import StsbenchError
    from stsbench.published.cells import is_cell_check
    from stsbench.published.check import CheckFailed, check_results
    from stsbench.published.registry import load_registry
    from stsbench.results.mteb_layout import MTEB_RESULTS_PREFIX

    entry = load_registry().get(against)
    if entry is not None and entry.kind == "analysis":
        _check_analysis(results, against, tolerance, difference, model)
        return
    if not against.startswith(MTEB_RESULTS_PREFIX) and is_cell_check(against):
        _check_cells(results, against, tolerance, difference, model)
        return
    if tolerance.strip().lower() == "seeds":
        _check_seeds(results, against, difference, model=model, pooler=pooler, mode=mode)
        return
    if difference is not None:
        raise StsbenchError(
            "--difference applies to --tolerance seeds only; drop it or pass --tolerance seeds"
        )
    allowed = _tolerance(tolerance)
    comparison = check_results(results, against, allowed, model=model, pooler=pooler, mode=mode)
    _print_comparison(comparison)
    if not comparison.passed:
        raise CheckFailed(f"check failed: {comparison.summary()}")


def _check_analysis(
    results: Path, against: str, tolerance: str, difference: float | None, model: str | None
) -> None:
    """An analysis table's row against the analyses under ``results``: one group of seeds, or one checkpoint.

    ``--tolerance seeds``: each figure's verdict over the seeds (:func:`stsbench.analyses.check.check_analysis`);
    a number: one checkpoint's figures within it of the published ones (several seeds: use seeds).
    """
    from rich.markup import escape
    from rich.table import Table

    from stsbench.analyses.check import check_analysis
    from stsbench.commands._console import table_console
    from stsbench.commands.run import seed_spread
    from stsbench.errors import StsbenchError
    from stsbench.published.check import check_failed
    from stsbench.published.seed_check import verdict_cells
    from stsbench.stats.decide import CELL_DELTA, REPRODUCED

    seeds = tolerance.strip().lower() == "seeds"
    allowed = 0.0 if seeds else _tolerance(tolerance)
    if not seeds and difference is not None:
        raise StsbenchError(
            "--difference applies to --tolerance seeds only; drop it or pass --tolerance seeds"
        )
    c = check_analysis(results, against, model, CELL_DELTA if difference is None else difference)
    if not seeds and len(c.seeds) > 1:
        raise StsbenchError(
            f"{c.model} has {len(c.seeds)} seeds under {results}: judge them with --tolerance seeds"
        )
    e = c.entry
    console = table_console()
    console.print(
        f"[bold]{escape(c.model)}[/bold], {len(c.seeds)} checkpoint(s) of {e.analysis}, vs [bold]{e.key}[/bold] "
        f"({escape(e.paper.title)}, {e.table}, row '{escape(e.row)}'); figures in points",
        soft_wrap=True,
        highlight=False,
    )
    table = Table()
    columns = (
        "figure",
        "mean ± std (n)",
        "mean's 95% interval",
        "published",
        "mean − published [95%]",
        "MDE",
        "verdict",
    )
    for col in columns:
        table.add_column(col, justify="left" if col in ("figure", "verdict") else "right")
    failed, statuses = [], []
    for r in c.rows:
        s, v = r.seeds, r.verdict
        interval = "-" if s is None or s["low"] is None else f"[{s['low']:.2f}, {s['high']:.2f}]"
        pairs = c.pair_intervals.get(r.task) if len(c.seeds) == 1 else None
        if pairs is not None:  # one checkpoint: the interval its test pairs give, labelled so
            interval = f"[{pairs[0]:.2f}, {pairs[1]:.2f}] (pairs)"
        status = (
            v.status
            if seeds
            else ("missing" if v.diff is None else "within" if abs(v.diff) <= allowed else "off")
        )
        if seeds and c.outside_pairs(r):
            status = "outside the pairs' interval"
        if status not in (REPRODUCED, "within"):
            failed.append(f"{r.task} {status}")
            statuses.append(status)
        style = "green" if status in (REPRODUCED, "within") else "bold red"
        spread = "-" if s is None else seed_spread(s)
        table.add_row(
            r.task, spread, interval, f"{r.published:.2f}", *verdict_cells(v), f"[{style}]{status}[/{style}]"
        )
    console.print(table)
    if c.pair_intervals and len(c.seeds) == 1:
        console.print(
            "one checkpoint: '(pairs)' is its 95% bootstrap interval over the test pairs (what the pairs move the "
            "figure by, not a training seed); outside it, the published figure is not this checkpoint's",
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"results: {', '.join(c.files)} under {results}", highlight=False, soft_wrap=True)
    if failed:
        what = c.summary() if seeds else f"{', '.join(failed)} (tolerance {allowed:g})"
        raise check_failed(statuses, f"check failed: {what}")
    what = c.summary() if seeds else f"every figure of {e.key} within {allowed:g}"
    console.print(f"[green]PASS[/green]: {what}", highlight=False)


def _check_seeds(results: Path, against: str, difference: float | None, **filters: str | None) -> None:
    """``--tolerance seeds``: mean ± std (n), the seed interval, inside/outside and the verdict per row."""
    from rich.markup import escape
    from rich.table import Table

    from stsbench.commands._console import table_console
    from stsbench.commands.run import seed_spread
    from stsbench.published.check import check_failed
    from stsbench.published.seed_check import check_seeds, verdict_cells
    from stsbench.stats.decide import CELL_DELTA, NOT_CHECKED, REPRODUCED, signed

    c = check_seeds(results, against, **filters, difference=CELL_DELTA if difference is None else difference)
    e, agg = c.entry, c.aggregate
    heading = (
        f"[bold]{escape(agg['model'])}/{agg['pooler']}/{agg['mode']}[/bold], {len(agg['seeds'])} seeds, vs "
        f"[bold]{e.key}[/bold] ({escape(e.paper.title)}, {e.table}, row '{escape(e.row)}')"
    )
    table = Table()
    for col, justify in (("task", "left"), ("mean ± std (n)", "right"), ("mean's 95% interval", "right")):
        table.add_column(col, justify=justify)
    table.add_column("published", justify="right")
    table.add_column("status")
    for col in ("mean − published [95%]", "MDE", "margin"):
        table.add_column(col, justify="right")
    table.add_column("verdict")
    for r in c.rows:
        s = r.seeds
        interval = "-" if s is None or s["low"] is None else f"[{s['low']:.2f}, {s['high']:.2f}]"
        style = {"inside": "green", NOT_CHECKED: "dim"}.get(
            r.status, "yellow"
        )  # a description, not the verdict
        spread = "-" if s is None else seed_spread(s)
        cells = verdict_cells(r.verdict)
        vstyle = {REPRODUCED: "green", NOT_CHECKED: "dim"}.get(r.verdict.status, "bold red")
        status = f"[{style}]{r.status}[/{style}]"
        verdict = f"[{vstyle}]{r.verdict.status}[/{vstyle}]"
        margin = "-" if r.verdict.margin is None else signed(r.verdict.margin, r.verdict.difference)
        table.add_row(r.task, spread, interval, e.format(r.published), status, *cells, margin, verdict)
    console = table_console()
    console.print(heading, soft_wrap=True, highlight=False)
    console.print(table)
    console.print(f"seed aggregate: {c.path}", highlight=False, soft_wrap=True)
    if e.selection_note:  # the published figure is a test-selected checkpoint's
        console.print(
            f"[yellow]note[/yellow]: {e.key} was {e.selection_note} (stsbench selects on STS-B dev)",
            highlight=False,
            soft_wrap=True,
        )
    if not c.passed:
        raise check_failed((r.verdict.status for r in c.rows), f"check failed: {c.summary()}")
    console.print(f"[green]PASS[/green]: {c.summary()}", highlight=False)


def _tolerance(tolerance: str) -> float:
    """``--tolerance`` as a number; one line when it is neither a number nor ``seeds``."""
    from stsbench.errors import StsbenchError

    try:
        return float(tolerance)
    except ValueError:
        raise StsbenchError(
            f"--tolerance {tolerance!r} is neither a number nor 'seeds'; pass e.g. 0.05, or seeds"
        ) from None


def _check_cells(
    results: Path, against: str, tolerance: str, difference: float | None, model: str | None
) -> None:
    """A cell (``KEY#COLUMN``) or a row without task columns, judged on the folder's one group of seeds.

    ``--tolerance seeds``: the seeds' verdict, as the report's Reproduction section gives it (one function); a
    number: one checkpoint's figure within it of the published one (several seeds: pass ``--tolerance seeds``).
    """
    from rich.markup import escape
    from rich.table import Table

    from stsbench.commands._console import table_console
    from stsbench.errors import StsbenchError
    from stsbench.published.check import EPS, check_failed
    from stsbench.published.seed_check import verdict_cells
    from stsbench.reports.reproduction import check_cells, spread
    from stsbench.stats.decide import CELL_DELTA, NOT_CHECKED, REPRODUCED

    seeds = tolerance.strip().lower() == "seeds"
    allowed = 0.0 if seeds else _tolerance(tolerance)
    if allowed < 0:
        raise StsbenchError(f"--tolerance must be >= 0, got {allowed}")
    rep = check_cells(results, against, CELL_DELTA if difference is None else difference, model)
    n = max((v.n for v in rep.verdicts), default=0)
    if not seeds and n > 1:
        raise StsbenchError(
            f"{rep.group.name} has {n} seeds under {results}: judge them with --tolerance seeds "
            "(a number compares one checkpoint's figure)"
        )
    e = rep.entry
    heading = (
        f"[bold]{escape(rep.group.label)}[/bold] vs [bold]{escape(rep.address)}[/bold] "
        f"({escape(e.paper.title)}, {e.table}, row '{escape(e.row)}')"
    )
    table = Table()
    columns = ("cell", "mean ± std (n)" if seeds else "measured", "published")
    for col in columns:
        table.add_column(col, justify="left" if col == "cell" else "right")
    for col in ("mean − published [95%]", "MDE") if seeds else ("delta",):
        table.add_column(col, justify="right")
    table.add_column("verdict" if seeds else "status")
    failed = []
    for v in rep.verdicts:
        if seeds:
            style = {REPRODUCED: "green", NOT_CHECKED: "dim"}.get(v.status, "bold red")
            table.add_row(
                v.task, spread(v), e.format(v.published), *verdict_cells(v), f"[{style}]{v.status}[/{style}]"
            )
            if v.status not in (REPRODUCED, NOT_CHECKED):
                failed.append(f"{v.task}: {v.status}")
            continue
        if v.status == NOT_CHECKED:
            status = NOT_CHECKED
        elif v.mean is None:
            status = "MISSING"
        else:
            status = "OK" if abs(v.mean - v.published) <= allowed + EPS else "FAIL"
        if status in ("MISSING", "FAIL"):
            failed.append(
                f"{v.task}: {status}" + (f" ({v.mean - v.published:+.2f})" if v.mean is not None else "")
            )
        measured = "-" if v.mean is None else f"{v.mean:.2f}"
        delta = "-" if v.mean is None else f"{v.mean - v.published:+.2f}"
        style = STATUS_STYLE.get(status, "dim")
        table.add_row(v.task, measured, e.format(v.published), delta, f"[{style}]{status}[/{style}]")
    console = table_console()
    console.print(heading, soft_wrap=True, highlight=False)
    console.print(table)
    console.print(f"compared with {rep.compared_with}", highlight=False, soft_wrap=True)
    if e.selection_note:
        console.print(
            f"[yellow]note[/yellow]: {e.key} was {e.selection_note} (stsbench selects on STS-B dev)",
            highlight=False,
            soft_wrap=True,
        )
    if failed:
        statuses = [v.status for v in rep.verdicts] if seeds else ["failed"]
        raise check_failed(
            statuses, f"check failed: {rep.address} against {rep.group.name}: {'; '.join(failed)}"
        )
    what = "reproduced (or not checked)" if seeds else f"within {tolerance}"
    console.print(f"[green]PASS[/green]: every cell of {rep.address} {what}", highlight=False)


def _print_comparison(c: Comparison) -> None:
    from rich.markup import escape
    from rich.table import Table

    from stsbench.commands._console import table_console

    e = c.entry
    run = "/".join(c.run) if c.run else "no matching results"
    # a heading line, not a title: rich wraps a title to the narrow table's width (several lines)
    heading = f"[bold]{escape(run)}[/bold] vs [bold]{e.key}[/bold] ({escape(e.paper.title)}, {e.table}, row '{escape(e.row)}')"
    table = Table()
    for col, justify in (("task", "left"), ("measured", "right"), ("published", "right"), ("delta", "right")):
        table.add_column(col, justify=justify)
    table.add_column("status")
    for r in c.rows:
        measured = "-" if r.value is None else f"{r.value:.2f}"
        delta = "-" if r.delta is None else f"{r.delta:+.2f}"
        style = STATUS_STYLE[r.status]
        table.add_row(r.task, measured, e.format(r.published), delta, f"[{style}]{r.status}[/{style}]")
    if c.published_average is not None:
        avg = "-" if c.measured_average is None else f"{c.measured_average:.2f}"
        table.add_row(AVG, avg, e.format(c.published_average), "", "[dim]not checked[/dim]")
    console = table_console()
    console.print(heading, soft_wrap=True, highlight=False)
    console.print(table)
    if e.selection_note:  # the published figure is a test-selected checkpoint's: say so beside the deltas
        console.print(
            f"[yellow]note[/yellow]: {e.key} was {e.selection_note} (stsbench selects on STS-B dev)",
            highlight=False,
            soft_wrap=True,
        )
    if c.extra_tasks:
        console.print(f"not compared (no published value): {', '.join(c.extra_tasks)}")
    console.print(c.compared(), highlight=False, soft_wrap=True)
    if c.passed:  # a failure ends with CheckFailed's one line instead
        console.print(f"[green]PASS[/green]: {c.summary()}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``published list|show`` and ``check`` to the app."""
    published = typer.Typer(
        help="The papers' and MTEB's published numbers, with their sources.",
        no_args_is_help=True,
        rich_markup_mode=None,
    )
    published.command("list")(published_list)
    published.command("show")(published_show)
    app.add_typer(published, name="published")
    app.command("check")(check)
