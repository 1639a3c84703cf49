"""``stsbench compare A B [C ...]``: paired significance of STS differences between models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from stsbench.commands import _options as shared
from stsbench.commands._options import Format, encode_options, escape, opt, print_table, table_console
from stsbench.files import check_writable_dir
from stsbench.stats.decide import ROUNDED
from stsbench.stats.tests import FAMILY

if TYPE_CHECKING:
    from stsbench.stats.compare import CompareResult


def _p(p: float | None) -> str:
    return "-" if p is None else "<0.001" if p < 0.001 else f"{p:.3f}"


def print_result(result: CompareResult) -> None:
    """One table per comparison, then how to read it."""
    console = table_console()
    for comp in result.comparisons:
        seeds = bool(comp.rows and comp.rows[0].n_seeds)
        delta = f"against δ = {comp.rows[0].seeds.delta:g}" if seeds else ""
        middle = ("p (|d| > δ)", "p Holm", "design", delta) if seeds else ("p boot", "p Williams", "p Holm")
        rows = []
        for r in comp.rows:
            if seeds and r.seeds:
                s = r.seeds
                # the row's notes but the two-decimal one, which a Note below says once a side
                note = "; ".join(n for n in (s.note or "").split("; ") if n and n != ROUNDED)
                outcome = s.outcome + (f" ({note})" if note else "")
                cells = (_p(s.p), _p(s.p_holm), s.interval.design, outcome)
            else:
                cells = (_p(r.p_bootstrap), _p(r.p_williams), _p(r.p_bootstrap_holm))
            n = f"{r.n_pairs} pairs" if r.n_seeds is None else f"{r.n_seeds[0]} vs {r.n_seeds[1]} seeds"
            diff = f"{r.diff:+.2f}{'*' if r.significant else ''}"
            interval = f"[{r.low:+.2f}, {r.high:+.2f}]"
            mde = f"{r.min_detectable_difference:.2f}"
            rows.append((r.task, f"{r.reference:.2f}", f"{r.other:.2f}", diff, interval, *cells, mde, n))
        level = f"{result.level:.0%} interval"
        columns = ("task", comp.reference, comp.other, "diff", level, *middle, "MDE 80%", "n")
        heading = f"[bold]{escape(comp.other)}[/bold] vs [bold]{escape(comp.reference)}[/bold] "
        heading += f"(difference = {escape(comp.other)} - {escape(comp.reference)}, x100)"
        justified = [(c, {"justify": "left" if c == "task" else "right", "no_wrap": True}) for c in columns]
        print_table(console, justified, rows, heading)
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
    unit = "seeds" if over_seeds else "pairs"
    notes = [f"{how}; MDE 80%: the smallest difference these {unit} detect at 80% power."]
    for side in (s for s in result.sides if s.rounded):
        notes.append(
            f"Note: {escape(side.label)}'s seed aggregate holds its figures at two decimals only (written before "
            "stsbench stored raw ones beside them): each is judged with a resolution of 0.01 (its variance "
            "h²/12 added); `stsbench run --model OUT` on its seeds folder writes the raw figures."
        )
    for note in notes:
        console.print(note, highlight=False, soft_wrap=True)


def compare_cmd(
    sources: opt(
        list[str],
        help="Results folders of `stsbench run` (one model's, or a seed aggregate), folders of "
        "`stsbench train --seeds` (every seed evaluated) or models to evaluate; the first is the reference.",
        show_default=False,
        arg=True,
    ),
    bootstrap: opt(int, "--bootstrap", "-B", min=1, help="Bootstrap replicates.") = 1000,
    seed: shared.SeedOpt = 1111,
    mode: opt(
        str | None,
        "--mode",
        help="Only results of this mode (test, fasttest, dev); models and seeds folders are evaluated in "
        "it (default test).",
    ) = None,
    fmt: shared.FormatOpt = Format.table,
    plot: opt(
        Path | None, "--plot", help="Also draw the intervals as a forest plot: writes PLOT.png and PLOT.svg."
    ) = None,
    data_dir: shared.DataDirOpt = None,
    output: shared.OutputOpt = Path("results"),
    cache_dir: shared.CacheDirOpt = None,
    device: shared.DeviceOpt = None,
    quiet: shared.QuietOpt = False,
    prompt: shared.PromptOpt = None,
    prompt_name: shared.PromptNameOpt = None,
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
        check_writable_dir(plot.parent if str(plot.parent) else Path(), "--plot's folder")
    given = dict(bootstrap=bootstrap, seed=seed, mode=mode, data_dir=data_dir, output=output)
    result = compare_sources(sources, encode, quiet=quiet or fmt is Format.json, **given)
    if plot is not None:
        from stsbench.reports.seeds import forest_plot

        pairs = ((c, r) for c in result.comparisons for r in c.rows)
        rows = [
            (f"{c.other} - {c.reference}: {r.task}", r.diff, r.low, r.high, r.significant) for c, r in pairs
        ]
        for written in forest_plot(rows, plot, xlabel="difference to the reference (x100)"):
            typer.echo(f"wrote {written}", err=True)
    if fmt is Format.json:
        typer.echo(json.dumps(result.to_dict(), indent=1))
        return
    print_result(result)


def register(app: typer.Typer) -> None:
    """Add ``stsbench compare``."""
    app.command("compare")(compare_cmd)
