"""``stsbench run``: evaluate a model on STS and transfer tasks."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from stsbench.commands import _options as shared
from stsbench.commands._options import Dtype, Format, encode_options, escape, opt, print_table, table_console
from stsbench.data.integrity import MARK, modified_note
from stsbench.encoders.resolve import EMBEDDED_DEFAULT, prompt_suffix
from stsbench.errors import StsbenchError
from stsbench.files import check_outputs
from stsbench.progress import plural
from stsbench.tasks.base import Mode
from stsbench.tasks.registry import task_names

Interval = tuple[float, float]


def _bounds(interval: dict | None) -> Interval | None:
    return None if interval is None else (interval["low"], interval["high"])


def score_tables(run) -> list[tuple[str, list[str], list[float], list[Interval | None]]]:
    """(title, task names + ``Avg.``, values, their 95% intervals or None) per task kind, in SimCSE's layout.

    The STS Avg.'s interval comes from resampling every STS task jointly; the transfer Avg. has none.
    """
    from stsbench.metrics import AVG, simcse_average  # numpy: not on the path that refuses a bad name

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
    bounds = ((n, b) for _, names, _, found in tables for n, b in zip(names[:-1], found[:-1], strict=True))
    intervals = {name: list(b) for name, b in bounds if b is not None}
    # the keys in docs/results.md's order
    out = {"kind": SCORES_KIND, "schema_version": SCORES_VERSION, "model": run.model}
    out.update(prompt=getattr(run, "prompt", None), prompt_name=getattr(run, "prompt_name", None))
    out.update(mode=run.mode, pooler=run.pooler, scores={r.task: r.reported for r in run.results})
    out.update(intervals=intervals, averages={title: vals[-1] for title, _, vals, _ in tables})
    out.update(average_intervals={title: list(b[-1]) for title, _, _, b in tables if b[-1] is not None})
    # modified_data: the figures computed on non-canonical files, and which files
    return {**out, "skipped": list(run.skipped), "modified_data": modified_files(run.results)}


INTERVALS_NOTE = {
    "STS": "95% intervals: percentile bootstrap over pairs (by subset for STS12-16; Avg.: tasks jointly)",
    "Transfer": "95% intervals: Wilson for a fixed test set, t over the folds for k-fold figures",
}


def seed_spread(row: dict | None) -> str:
    """``76.02 ± 0.41 (5)`` for one task of a seed aggregate (``76.02 (1)`` with one seed), ``-`` for none."""
    if row is None:
        return "-"
    std = "" if row["std"] is None else f" ± {row['std']:.2f}"
    return f"{row['mean']:.2f}{std} ({row['n']})"


def seed_interval(row: dict | None) -> str:
    """The 95% interval over seeds of one task of a seed aggregate, ``-`` where it has none."""
    return "-" if row is None or row["low"] is None else f"[{row['low']:.2f}, {row['high']:.2f}]"


def show_seeds(seeds_run, fmt: Format) -> None:
    """Each seed's figures, mean ± std (n) and the 95% interval over seeds per task; or the aggregate as JSON."""
    agg = seeds_run.aggregate
    if fmt is Format.json:  # as its file holds it (paths relative to the output) when it was written
        from stsbench.results.runs import portable_aggregate
        from stsbench.results.write import output_of

        where = seeds_run.path
        typer.echo(json.dumps(portable_aggregate(agg, output_of(where)) if where is not None else agg))
        return
    from stsbench.metrics import AVG

    tasks = agg["tasks"]
    # per seed, the tasks computed on modified data; its averages are marked when any of its tasks is (the
    # safe side: no figure on modified data goes unmarked), the mean when any seed's figure is
    modified = {s: modified_files(seeds_run.results[s].results) for s in agg["seeds"]}
    marked = {s: {t for t in tasks if t in m or (AVG in t and m)} for s, m in modified.items()}
    any_seed = set().union(*marked.values())
    rows = [
        [f"seed {s}", *(f"{r['values'][i]:.2f}{MARK * (t in marked[s])}" for t, r in tasks.items())]
        for i, s in enumerate(agg["seeds"])
    ]
    rows.append(["mean ± std (n)", *(seed_spread(r) + MARK * (t in any_seed) for t, r in tasks.items())])
    rows.append(["95% interval", *map(seed_interval, tasks.values())])
    files = (f for m in modified.values() for v in m.values() for f in v)
    notes = [*([modified_note(files)] if any_seed else []), f"seed aggregate: {seeds_run.path}"]
    heading = f"[bold]{escape(agg['model'])}[/bold] ({agg['mode']}, pooler {agg['pooler']}): "
    heading += f"{len(agg['seeds'])} seed(s)"
    columns = [("", {}), *((name, {"justify": "right", "no_wrap": True}) for name in tasks)]
    print_table(table_console(), columns, rows, heading, notes)


def show_run(result, dtype: Dtype, output: Path) -> None:
    """One table per task kind (SimCSE's layout), a row of 95% intervals where there are, the files written."""
    from stsbench.metrics import AVG

    console = table_console()
    modified = modified_files(result.results)
    precision = "" if dtype is Dtype.float32 else f", {dtype.value}"
    who = escape(result.model + prompt_suffix(result.prompt, result.prompt_name))
    for title, names, vals, intervals in score_tables(result):
        shown = any(b is not None for b in intervals)
        marked = {n for n in names if n in modified}
        marked |= {AVG} if marked else set()  # an Avg. over a modified figure is one too
        rows = [[f"{v:.2f}{MARK * (n in marked)}" for n, v in zip(names, vals, strict=True)]]
        if shown:
            rows.append(["" if b is None else f"[{b[0]:.1f}, {b[1]:.1f}]" for b in intervals])
        notes = [INTERVALS_NOTE[title]] if shown else []
        if marked:
            notes.append(modified_note(f for n in marked for f in modified.get(n, ())))
        # an interval row may wrap at its space in a narrow terminal rather than lose digits
        columns = [(n, {"justify": "right", "no_wrap": not shown, "min_width": len(n)}) for n in names]
        heading = f"[bold]{title} ({result.mode})[/bold] — {who}, pooler {result.pooler}{precision}"
        print_table(console, columns, rows, heading, notes)
    timings = f"(encode {result.timings['encode']:.1f}s, evaluate {result.timings['evaluate']:.1f}s)"
    console.print(f"results: {plural(len(result.paths), 'file')} under {output}/  {timings}", highlight=False)


def run_cmd(
    model: shared.ModelOpt = EMBEDDED_DEFAULT,
    tasks: opt(str, "--tasks", "-t", help="sts | transfer | full, or task names, comma-separated.") = "sts",
    mode: opt(Mode, "--mode", help="test | dev | fasttest (SimCSE's meaning).") = Mode.test,
    pooler: shared.PoolerOpt = None,
    data_dir: shared.DataDirOpt = None,
    output: shared.OutputOpt = Path("results"),
    cache_dir: shared.CacheDirOpt = None,
    no_cache: shared.NoCacheOpt = False,
    batch_size: shared.BatchSizeOpt = 128,
    max_length: shared.MaxLengthOpt = None,
    device: shared.DeviceOpt = None,
    dtype: shared.DtypeOpt = Dtype.float32,
    seed: shared.SeedOpt = 1111,
    bootstrap: shared.BootstrapOpt = 1000,
    fmt: shared.FormatOpt = Format.table,
    quiet: shared.QuietOpt = False,
    revision: opt(
        str | None, "--revision", help="Branch, tag or commit of a hub --model (default main)."
    ) = None,
    allow_modified_data: shared.AllowModifiedDataOpt = False,
    prompt: shared.PromptOpt = None,
    prompt_name: shared.PromptNameOpt = None,
) -> None:
    """Evaluate MODEL on the tasks; write one results JSON per task under OUTPUT and print the table."""
    task_names(tasks)  # a mistyped name is refused now, not after seconds of imports
    encode = encode_options(locals())  # pooler, dtype, prompt, cache...: how the model loads and encodes
    check_outputs(output=output, cache_dir=encode.cache_dir, use_cache=encode.use_cache)
    from stsbench.evaluation.run import evaluate_model
    from stsbench.results.runs import is_seeds_folder

    options = dict(data_dir=data_dir, output=output, seed=seed, show_progress=not quiet, bootstrap=bootstrap)
    options.update(allow_modified_data=allow_modified_data, command=shared.command_line())
    if is_seeds_folder(model):  # OUT of `stsbench train --seeds`: every seed, then their aggregate
        from stsbench.evaluation.run import run_seeds

        if encode.prompted:  # the seeds' aggregate is filed by model only
            raise StsbenchError("--prompt and --prompt-name apply to one model, not to a seeds folder")

        show_seeds(run_seeds(model, tasks, mode.value, encode, **options), fmt)
        return
    result = evaluate_model(model, tasks, mode.value, encode, **options)
    if fmt is Format.json:
        typer.echo(json.dumps(scores_json(result)))
        return
    show_run(result, dtype, output)


def register(app: typer.Typer) -> None:
    """Add ``run``."""
    app.command("run")(run_cmd)
