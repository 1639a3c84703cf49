"""``stsbench compare A B [C ...]``: paired significance of STS differences between models."""

from __future__ import annotations

import json
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from stsbench.commands._options import (
    CacheDirOpt,
    DataDirOpt,
    DeviceOpt,
    PromptNameOpt,
    PromptOpt,
    SeedOpt,
    encode_options,
)

if TYPE_CHECKING:
    from stsbench.stats.compare import CompareResult


class Format(str, Enum):
    """How ``compare`` prints."""

    table = "table"
    json = "json"


def _p(p: float | None) -> str:
    if p is None:
        return "-"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def print_result(result: CompareResult) -> None:
    """One table per comparison, then how to read it."""
    from rich.markup import escape
    from rich.table import Table

    from stsbench.commands._console import table_console
    from stsbench.stats.tests import FAMILY

    console = table_console()
    pct = f"{result.level:.0%}"
    for comp in result.comparisons:
        console.print(
            f"[bold]{escape(comp.other)}[/bold] vs [bold]{escape(comp.reference)}[/bold] "
            f"(difference = {escape(comp.other)} - {escape(comp.reference)}, x100)",
            soft_wrap=True,
            highlight=False,
        )
        table = Table()
        seeds = bool(comp.rows and comp.rows[0].n_seeds)
        delta = f"against δ = {comp.rows[0].seeds.delta:g}" if seeds else ""
        middle = ("p (|d| > δ)", "p Holm", "design", delta) if seeds else ("p boot", "p Williams", "p Holm")
        for col in ("task", comp.reference, comp.other, "diff", f"{pct} interval", *middle, "MDE 80%", "n"):
            table.add_column(col, justify="left" if col == "task" else "right", no_wrap=True)
        for r in comp.rows:
            mark = "*" if r.significant else ""
            cells = (
                (
                    _p(r.seeds.p),
                    "-" if r.seeds.p_holm is None else _p(r.seeds.p_holm),
                    r.seeds.interval.design,
                    r.seeds.outcome + (f" ({note})" if (note := _shown(r.seeds.note)) else ""),
                )
                if seeds and r.seeds
                else (_p(r.p_bootstrap), _p(r.p_williams), _p(r.p_bootstrap_holm))
            )
            table.add_row(
                r.task,
                f"{r.reference:.2f}",
                f"{r.other:.2f}",
                f"{r.diff:+.2f}{mark}",
                f"[{r.low:+.2f}, {r.high:+.2f}]",
                *cells,
                f"{r.min_detectable_difference:.2f}",
                f"{r.n_pairs} pairs" if r.n_seeds is None else f"{r.n_seeds[0]} vs {r.n_seeds[1]} seeds",
            )
        console.print(table)
    over_seeds = any(s.seeds is not None for s in result.sides)
    if over_seeds:
        how = (
            "over the seeds' figures, unrounded where the aggregate stores them (the figures are the seed means): "
            "paired on the seeds both sides share (partly paired where they share some, Welch where they share "
            "fewer than 3 or have no seed ids); the interval read against δ, the difference that matters (a "
            "difference that matters: outside ±δ and Holm agrees, p (|d| > δ) = 2·sf((|d| - δ)/se, df), Holm "
            f"{FAMILY}, below 0.05, marked *; no difference that matters: inside; inconclusive otherwise; fewer "
            "than 3 seeds: inconclusive) (docs/uncertainty.md, One rule)"
        )
    else:
        how = (
            f"paired bootstrap over the same pairs, B={result.bootstrap}, seed {result.seed}; p Holm: Holm's "
            f"correction {FAMILY}; * p Holm < 0.05 (Avg.: its own p < 0.05)"
        )
    console.print(
        f"{how}; MDE 80%: the smallest difference these {'seeds' if over_seeds else 'pairs'} detect at 80% power.",
        highlight=False,
        soft_wrap=True,
    )
    for side in (s for s in result.sides if s.rounded):
        console.print(
            f"Note: {escape(side.label)}'s seed aggregate holds its figures at two decimals only (written before "
            "stsbench stored raw ones beside them): each is judged with a resolution of 0.01 (its variance "
            "h²/12 added); `stsbench run --model OUT` on its seeds folder writes the raw figures.",
            highlight=False,
            soft_wrap=True,
        )


def _shown(note: str | None) -> str | None:
    """A row's note without the two-decimal one, which the table's own Note says once a side."""
    from stsbench.stats.decide import ROUNDED

    return "; ".join(n for n in (note or "").split("; ") if n and n != ROUNDED) or None


def compare_cmd(
    sources: Annotated[
        list[str],
        typer.Argument(
            help="Results folders of `stsbench run` (one model's, or a seed aggregate), folders of "
            "`stsbench train --seeds` (every seed evaluated) or models to evaluate; the first is the reference.",
            show_default=False,
        ),
    ],
    bootstrap: Annotated[int, typer.Option("--bootstrap", "-B", min=1, help="Bootstrap replicates.")] = 1000,
    seed: SeedOpt = 1111,
    mode: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--mode",
            help="Only results of this mode (test, fasttest, dev); models and seeds folders are evaluated in "
            "it (default test).",
        ),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="table or json.")] = Format.table,
    plot: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option(
            "--plot", help="Also draw the intervals as a forest plot: writes PLOT.png and PLOT.svg."
        ),
    ] = None,
    data_dir: DataDirOpt = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where models and seeds folders are evaluated to.")
    ] = Path("results"),
    cache_dir: CacheDirOpt = None,
    device: DeviceOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    prompt: PromptOpt = None,
    prompt_name: PromptNameOpt = None,
) -> None:
    """Compare models on the STS tasks: paired-bootstrap intervals, Williams' test, Holm, power.

    The first source is the reference; each other is compared with it on the same pairs. Seeds are compared
    over seeds instead, by the one rule (paired on shared seeds, Welch for disjoint ones, against the
    difference that matters: docs/uncertainty.md): seed aggregates of `stsbench run --model OUT`, or the OUT folders of
    `stsbench train --seeds` themselves, whose seeds are evaluated first through the embedding cache (a folder
    with a seed not trained to its kept checkpoint is refused). Seeds against one model are refused.
    """
    from stsbench.compare import compare_sources, require_two

    require_two(sources)
    encode = encode_options(locals())  # cache folder, device and prompt of the models evaluated here
    if plot is not None:
        from stsbench.files import check_writable_dir

        check_writable_dir(plot.parent if str(plot.parent) else Path(), "--plot's folder")
    result = compare_sources(
        sources,
        encode,
        bootstrap=bootstrap,
        seed=seed,
        mode=mode,
        data_dir=data_dir,
        output=output,
        quiet=quiet or fmt is Format.json,
    )
    if plot is not None:
        from stsbench.reports.seeds import forest_plot

        rows = [
            (f"{c.other} - {c.reference}: {r.task}", r.diff, r.low, r.high, r.significant)
            for c in result.comparisons
            for r in c.rows
        ]
        xlabel = "difference to the reference (x100)"
        for written in forest_plot(rows, plot, xlabel=xlabel):
            typer.echo(f"wrote {written}", err=True)
    if fmt is Format.json:
        typer.echo(json.dumps(result.to_dict(), indent=1))
        return
    print_result(result)


def register(app: typer.Typer) -> None:
    """Add ``stsbench compare``."""
    app.command("compare")(compare_cmd)
