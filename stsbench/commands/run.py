"""``stsbench run``: evaluate a model on STS and transfer tasks."""

from __future__ import annotations

import json
import shlex
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from stsbench.commands._options import (
    AllowModifiedDataOpt,
    BatchSizeOpt,
    BootstrapOpt,
    CacheDirOpt,
    DataDirOpt,
    DeviceOpt,
    Dtype,
    DtypeOpt,
    MaxLengthOpt,
    ModelOpt,
    NoCacheOpt,
    OutputOpt,
    PoolerOpt,
    PromptNameOpt,
    PromptOpt,
    SeedOpt,
    encode_options,
)
from stsbench.encoders.resolve import EMBEDDED_DEFAULT
from stsbench.metrics import AVG
from stsbench.tasks.base import Mode


class Format(str, Enum):
    """How ``run`` prints its scores."""

    table = "table"
    json = "json"


Interval = tuple[float, float]


def _bounds(interval: dict | None) -> Interval | None:
    return None if interval is None else (interval["low"], interval["high"])


def score_tables(run) -> list[tuple[str, list[str], list[float], list[Interval | None]]]:
    """(title, task names + ``Avg.``, values, their 95% intervals or None) per task kind, in SimCSE's layout.

    The STS Avg.'s interval comes from resampling every STS task jointly; the transfer Avg. has none.
    """
    from stsbench.metrics import simcse_average

    tables = []
    for kind, title in (("sts", "STS"), ("transfer", "Transfer")):
        rows = [r for r in run.results if r.task_type == kind]
        if rows:
            vals = [r.reported for r in rows]
            average = run.average.interval if kind == "sts" and run.average is not None else None
            intervals = [_bounds(r.interval) for r in rows] + [_bounds(average)]
            tables.append((title, [r.task for r in rows] + [AVG], vals + [simcse_average(vals)], intervals))
    return tables


def modified_files(results) -> dict[str, list[str]]:
    """``{task: the data files that differ}`` for the results computed on modified data."""
    return {r.task: sorted(r.provenance.data_modified) for r in results if r.provenance.data_modified}


SCORES_KIND = "stsbench.run_scores"
# 2: one shape whatever the task mix (docs/results.md); 1 (no kind, no version): "Avg." in scores for one kind
SCORES_VERSION = 2


def scores_json(run) -> dict:
    """``run --format json``: the same keys for every task mix (documented in docs/results.md).

    ``scores``/``intervals``: per task; ``averages``/``average_intervals``: per kind that ran (``STS``,
    ``Transfer``); ``skipped`` and ``modified_data`` are always there, empty when nothing was.
    """
    tables = score_tables(run)
    intervals = {
        name: list(b)
        for _, names, _, bounds in tables
        for name, b in zip(names[:-1], bounds[:-1], strict=True)
        if b is not None
    }
    return {
        "kind": SCORES_KIND,
        "schema_version": SCORES_VERSION,
        "model": run.model,
        "prompt": getattr(run, "prompt", None),
        "prompt_name": getattr(run, "prompt_name", None),
        "mode": run.mode,
        "pooler": run.pooler,
        "scores": {r.task: r.reported for r in run.results},
        "intervals": intervals,
        "averages": {title: vals[-1] for title, _, vals, _ in tables},
        "average_intervals": {title: list(b[-1]) for title, _, _, b in tables if b[-1] is not None},
        "skipped": list(run.skipped),
        # the figures computed on non-canonical files, and which files
        "modified_data": modified_files(run.results),
    }


def interval_cell(bounds: Interval | None) -> str:
    """A 95% interval as the table's second row shows it: ``[81.1, 82.9]`` (one decimal), empty when none."""
    return "" if bounds is None else f"[{bounds[0]:.1f}, {bounds[1]:.1f}]"


INTERVALS_NOTE = {
    "STS": "95% intervals: percentile bootstrap over pairs (by subset for STS12-16; Avg.: tasks jointly)",
    "Transfer": "95% intervals: Wilson for a fixed test set, t over the folds for k-fold figures",
}


def seed_spread(row: dict) -> str:
    """``76.02 ± 0.41 (5)`` for one task of a seed aggregate (``76.02 (1)`` with one seed)."""
    std = "" if row["std"] is None else f" ± {row['std']:.2f}"
    return f"{row['mean']:.2f}{std} ({row['n']})"


def show_seeds(seeds_run, fmt: Format) -> None:
    """Each seed's figures, mean ± std (n) and the 95% interval over seeds per task; or the aggregate as JSON."""
    agg = seeds_run.aggregate
    if fmt is Format.json:  # as its file holds it (paths relative to the output) when it was written
        from stsbench.results.portable import output_of
        from stsbench.results.seeds import portable_aggregate

        where = seeds_run.path
        typer.echo(json.dumps(portable_aggregate(agg, output_of(where)) if where is not None else agg))
        return
    from rich.markup import escape
    from rich.table import Table

    from stsbench.commands._console import table_console
    from stsbench.data.integrity import MARK, modified_note

    console = table_console()
    heading = f"[bold]{escape(agg['model'])}[/bold] ({agg['mode']}, pooler {agg['pooler']}): {len(agg['seeds'])} seed(s)"
    console.print(heading, soft_wrap=True, highlight=False)
    table = Table()
    table.add_column("")
    for name in agg["tasks"]:
        table.add_column(name, justify="right", no_wrap=True)
    rows = agg["tasks"].values()
    # per seed, the tasks computed on modified data; its averages are marked when any of its tasks is (the
    # safe side: no figure on modified data goes unmarked), the mean when any seed's figure is
    modified = {s: modified_files(seeds_run.results[s].results) for s in agg["seeds"]}
    marked = {s: {t for t in agg["tasks"] if t in m or (AVG in t and m)} for s, m in modified.items()}
    any_seed = set().union(*marked.values())
    for i, s in enumerate(agg["seeds"]):
        cells = (f"{r['values'][i]:.2f}{MARK * (t in marked[s])}" for t, r in agg["tasks"].items())
        table.add_row(f"seed {s}", *cells)
    table.add_row(
        "mean ± std (n)", *(seed_spread(r) + MARK * (t in any_seed) for t, r in agg["tasks"].items())
    )
    table.add_row(
        "95% interval", *("-" if r["low"] is None else f"[{r['low']:.2f}, {r['high']:.2f}]" for r in rows)
    )
    console.print(table)
    if any_seed:
        files = (f for m in modified.values() for v in m.values() for f in v)
        console.print(modified_note(files), highlight=False)
    console.print(f"seed aggregate: {seeds_run.path}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``run``."""

    @app.command("run")
    def run_cmd(
        model: ModelOpt = EMBEDDED_DEFAULT,
        tasks: Annotated[
            str, typer.Option("--tasks", "-t", help="sts | transfer | full, or task names, comma-separated.")
        ] = "sts",
        mode: Annotated[
            Mode, typer.Option("--mode", help="test | dev | fasttest (SimCSE's meaning).")
        ] = Mode.test,
        pooler: PoolerOpt = None,
        data_dir: DataDirOpt = None,
        output: OutputOpt = Path("results"),
        cache_dir: CacheDirOpt = None,
        no_cache: NoCacheOpt = False,
        batch_size: BatchSizeOpt = 128,
        max_length: MaxLengthOpt = None,
        device: DeviceOpt = None,
        dtype: DtypeOpt = Dtype.float32,
        seed: SeedOpt = 1111,
        bootstrap: BootstrapOpt = 1000,
        fmt: Annotated[Format, typer.Option("--format", help="table (SimCSE's) or json.")] = Format.table,
        quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
        revision: Annotated[
            str | None,
            typer.Option("--revision", help="Branch, tag or commit of a hub --model (default main)."),
        ] = None,
        allow_modified_data: AllowModifiedDataOpt = False,
        prompt: PromptOpt = None,
        prompt_name: PromptNameOpt = None,
    ) -> None:
        """Evaluate MODEL on the tasks; write one results JSON per task under OUTPUT and print the table."""
        from stsbench.files import check_outputs
        from stsbench.tasks.names import task_names

        task_names(tasks)  # a mistyped name is refused now, not after seconds of imports
        encode = encode_options(locals())  # pooler, dtype, prompt, cache...: how the model loads and encodes
        check_outputs(output=output, cache_dir=encode.cache_dir, use_cache=encode.use_cache)
        from stsbench.evaluation.run import evaluate_model
        from stsbench.results.seeds import is_seeds_folder

        command = "stsbench " + " ".join(shlex.quote(a) for a in sys.argv[1:])
        options = dict(
            data_dir=data_dir,
            output=output,
            seed=seed,
            show_progress=not quiet,
            command=command,
            bootstrap=bootstrap,
            allow_modified_data=allow_modified_data,
        )
        if is_seeds_folder(model):  # OUT of `stsbench train --seeds`: every seed, then their aggregate
            from stsbench.errors import StsbenchError
            from stsbench.evaluation.seeds import run_seeds

            if encode.prompted:  # the seeds' aggregate is filed by model only
                raise StsbenchError("--prompt and --prompt-name apply to one model, not to a seeds folder")

            show_seeds(run_seeds(model, tasks, mode.value, encode, **options), fmt)
            return
        result = evaluate_model(model, tasks, mode.value, encode, **options)
        if fmt is Format.json:
            typer.echo(json.dumps(scores_json(result)))
            return
        from rich.markup import escape
        from rich.table import Table

        from stsbench.commands._console import table_console
        from stsbench.data.integrity import MARK, modified_note
        from stsbench.encoders.resolve import prompt_suffix
        from stsbench.progress import plural

        console = table_console()
        modified = modified_files(result.results)
        for title, names, vals, intervals in score_tables(result):
            precision = "" if dtype is Dtype.float32 else f", {dtype.value}"
            # a heading line, not the table's title: rich wraps a title to the table's width (three lines
            # for a long model path in a narrow terminal), a line the terminal folds at most once
            who = escape(result.model + prompt_suffix(result.prompt, result.prompt_name))
            heading = f"[bold]{title} ({result.mode})[/bold] — {who}, pooler {result.pooler}{precision}"
            console.print(heading, soft_wrap=True, highlight=False)
            table = Table()
            shown = any(b is not None for b in intervals)
            for name in names:
                # an interval row may wrap at its space in a narrow terminal rather than lose digits
                table.add_column(name, justify="right", min_width=len(name), no_wrap=not shown)
            marked = {n for n in names if n in modified}
            marked |= {AVG} if marked else set()  # an Avg. over a modified figure is one too
            table.add_row(*(f"{v:.2f}{MARK * (n in marked)}" for n, v in zip(names, vals, strict=True)))
            if shown:
                table.add_row(*(interval_cell(b) for b in intervals))
            console.print(table)
            if shown:
                console.print(INTERVALS_NOTE[title], highlight=False)
            if marked:
                console.print(modified_note(f for n in marked for f in modified.get(n, ())), highlight=False)
        console.print(
            f"results: {plural(len(result.paths), 'file')} under {output}/  "
            f"(encode {result.timings['encode']:.1f}s, evaluate {result.timings['evaluate']:.1f}s)",
            highlight=False,
        )
