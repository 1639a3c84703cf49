"""``stsbench published list|show`` (the published numbers), ``stsbench check`` (results against them).

And ``stsbench export-mteb`` (the ``stsbench[mteb]`` extra): a run's STS results in MTEB's results layout,
which ``check --against mteb-results:DIR`` reads back.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import typer

from stsbench.commands import _options as shared
from stsbench.commands._options import escape, opt, print_table, table_console
from stsbench.commands.run import seed_interval, seed_spread
from stsbench.errors import StsbenchError
from stsbench.metrics import AVG
from stsbench.published import backbones
from stsbench.published.backbones import Measured, of_entry, of_results
from stsbench.published.check import (
    EPS,
    check_failed,
    check_results,
    check_seeds,
    is_cell_check,
    open_question,
    verdict_cells,
)
from stsbench.published.registry import find_entries, get_cell, get_entry, load_registry
from stsbench.results.mteb_layout import MTEB_RESULTS_PREFIX
from stsbench.results.runs import TRAIN_LOG, load_train_run
from stsbench.results.write import output_of, resolve
from stsbench.stats.decide import CELL_DELTA, INCONCLUSIVE, NOT_CHECKED, REPRODUCED, signed

DIFFERENCE_ALONE = "--difference applies to --tolerance seeds only; drop it or pass --tolerance seeds"
# a status cell's colour; any other status: the caller's (bold red, a failure, unless it says otherwise)
STYLE = {"OK": "green", "within": "green", "inside": "green", REPRODUCED: "green", NOT_CHECKED: "dim"}
LEFT = ("figure", "task", "cell", "status", "verdict")  # the check tables' left-aligned columns
PAIRS_NOTE = (
    "one checkpoint: '(pairs)' is its 95% bootstrap interval over the test pairs (what the pairs move the "
    "figure by, not a training seed); outside it, the published figure is not this checkpoint's"
)
COMPARED = ("task", "measured", "published", "delta", "status")
BESIDE = "beside, not judged"  # seeds shown against a row of another model (check --beside)
SPREAD, INTERVAL, VERSUS = "mean ± std (n)", "mean's 95% interval", ("mean − published [95%]", "MDE")


def published_list(
    match: opt(
        str | None, help="Show only entries whose key, paper, table or row contains this.", arg=True
    ) = None,
    paper: opt(
        str | None, "--paper", help="Only this paper: simcse, esimcse-arxiv, esimcse-coling, mocose, mteb."
    ) = None,
    model: opt(
        str | None, "--model", help="Only rows of this model, e.g. bert-base, roberta-large, MiniLM."
    ) = None,
) -> None:
    """List the published entries: key, paper, table, row (filter with MATCH, --paper, --model)."""
    entries = find_entries(match, paper=paper, model=model)
    given = (("search", match), ("--paper", paper), ("--model", model))
    asked = ", ".join(f"{k} '{v}'" for k, v in given if v)
    if not entries:
        raise StsbenchError(f"no published entry matches {asked}; run `stsbench published list` for all")
    hint = "narrow with a search term, --paper or --model (`stsbench published list --help`)"
    title = f"Published numbers ({len(entries)} entries)"
    # the key whole, to copy into `show` and `check --against`
    columns = [("key", {"no_wrap": True}), ("paper", {}), ("table", {}), ("row", {"overflow": "fold"})]
    rows = [(e.key, e.paper.slug, e.table, e.row) for e in entries]
    print_table(table_console(), columns, rows, title=title, caption=None if asked else hint)


def published_show(key: opt(str, help="An entry key from `stsbench published list`.", arg=True)) -> None:
    """Show one published row: its values, source and notes."""
    e = get_entry(key)
    printed = dict(e.printed_as)
    shown = ["value", *(["source text shows"] if printed else [])]
    columns = [("column", {}), *((col, {"justify": "right"}) for col in shown)]
    rows = [(col, e.format(v), *([printed.get(col, "")] if printed else [])) for col, v in e.values.items()]
    console = table_console()
    console.print(f"[bold]{e.paper.title}[/bold]\n{e.paper.citation}\n{e.table}: {e.caption}")
    console.print(f"version: {e.version or 'not stated'}", highlight=False)
    console.print(f"split: {e.split or 'not stated'}; kind: {e.kind}; read from {e.source}", highlight=False)
    if e.selection_note:
        console.print(f"model selection: {e.selection_note}", highlight=False)
    # the title on its own line (a table's title wraps to the table's width), the metric as the caption
    notes = [f"- {note}" for note in e.notes]
    print_table(console, columns, rows, f"{e.key}: {e.row}", notes, caption=e.metric)


def check(
    results: opt(Path, "--results", help="Folder of results JSON (searched recursively)."),
    against: opt(
        str,
        "--against",
        help="Published entry key (`stsbench published list`), FILE.yaml#TABLE/ROW for a published file of "
        "one's own (docs/published.md), or mteb-results:DIR for a local MTEB "
        'results folder (needs `pip install "stsbench[mteb]"`).',
    ),
    tolerance: opt(
        str,
        "--tolerance",
        help="Largest allowed |measured - published|, or 'seeds': each published figure must lie inside "
        "the 95% interval over seeds (the seed aggregate of `stsbench run` on a `train --seeds` folder).",
    ) = "0.05",
    model: shared.ModelFilterOpt = None,
    pooler: shared.PoolerFilterOpt = None,
    mode: shared.ModeFilterOpt = None,
    difference: shared.DifferenceOpt = None,
    beside: opt(
        bool,
        "--beside",
        help="With --tolerance seeds: show seeds beside a row of another model or backbone, not judged, where "
        "the check would refuse them.",
    ) = False,
) -> None:
    """Compare results with a published row; fail when a task is off by more than the tolerance or missing.

    With mteb-results:DIR the row is the main scores (x100) of the run's model in an MTEB results folder
    (``stsbench export-mteb`` writes one; MTEB's own cache and results repository are read the same way).
    """
    seeds = tolerance.strip().lower() == "seeds"
    delta = CELL_DELTA if difference is None else difference
    if beside and not seeds:
        raise StsbenchError("--beside applies to --tolerance seeds only; drop it or pass --tolerance seeds")
    if getattr(load_registry().get(against), "kind", None) == "analysis":
        allowed = _tolerance(tolerance, seeds)
        if not seeds and difference is not None:
            raise StsbenchError(DIFFERENCE_ALONE)
        _check_analysis(results, against, seeds, allowed, delta, model)
    elif not against.startswith(MTEB_RESULTS_PREFIX) and is_cell_check(against):
        _check_cells(results, against, tolerance, seeds, delta, model, beside)
    elif seeds:
        _check_seeds(results, against, delta, beside, model=model, pooler=pooler, mode=mode)
    elif difference is not None:
        raise StsbenchError(DIFFERENCE_ALONE)
    else:
        c = check_results(results, against, _tolerance(tolerance), model=model, pooler=pooler, mode=mode)
        who = "/".join(c.run) if c.run else "no matching results"
        rows = [
            (r.task, _number(r.value), c.entry.format(r.published), _number(r.delta, "+"), _styled(r.status))
            for r in c.rows
        ]
        if c.published_average is not None:
            published = c.entry.format(c.published_average)
            rows.append((AVG, _number(c.measured_average), published, "", _styled(NOT_CHECKED)))
        extra = [f"not compared (no published value): {', '.join(c.extra_tasks)}"] if c.extra_tasks else []
        notes = [*_selection_note(c.entry), *extra, c.compared()]
        heading = f"[bold]{escape(who)}[/bold] {_against(c.entry)}"
        _print_check(heading, COMPARED, rows, notes, None if c.passed else c.summary(), c.summary())


def _check_analysis(
    results: Path, against: str, seeds: bool, allowed: float, delta: float, model: str | None
) -> None:
    """An analysis table's row against the analyses under ``results``: one group of seeds, or one checkpoint.

    ``--tolerance seeds``: each figure's verdict over the seeds (:func:`stsbench.analyses.check.check_analysis`);
    a number: one checkpoint's figures within it of the published ones (several seeds: use seeds).
    """
    from stsbench.analyses.check import check_analysis

    c = check_analysis(results, against, model, delta)
    _one_checkpoint(seeds, c.model, len(c.seeds), results)
    failed, statuses, rows = [], [], []
    for r in c.rows:
        v = r.verdict
        interval = seed_interval(r.seeds)
        pairs = c.pair_intervals.get(r.task) if len(c.seeds) == 1 else None
        if pairs is not None:  # one checkpoint: the interval its test pairs give, labelled so
            interval = f"[{pairs[0]:.2f}, {pairs[1]:.2f}] (pairs)"
        if seeds:
            status = "outside the pairs' interval" if c.outside_pairs(r) else v.status
        else:
            status = "missing" if v.diff is None else "within" if abs(v.diff) <= allowed else "off"
        if status not in (REPRODUCED, "within"):
            failed.append(f"{r.task} {status}")
            statuses.append(status)
        cells = (seed_spread(r.seeds), interval, f"{r.published:.2f}", *verdict_cells(v))
        rows.append((r.task, *cells, _styled(status)))
    one = [PAIRS_NOTE] if c.pair_intervals and len(c.seeds) == 1 else []
    notes = [*one, f"results: {', '.join(c.files)} under {results}"]
    e = c.entry
    heading = f"[bold]{escape(c.model)}[/bold], {len(c.seeds)} checkpoint(s) of {e.analysis}, {_against(e)}; "
    heading += "figures in points"
    columns = ("figure", SPREAD, INTERVAL, "published", *VERSUS, "verdict")
    what = (c.summary() if seeds else f"{', '.join(failed)} (tolerance {allowed:g})") if failed else None
    passed = c.summary() if seeds else f"every figure of {e.key} within {allowed:g}"
    _print_check(heading, columns, rows, notes, what, passed, statuses)


def _check_seeds(results: Path, against: str, delta: float, beside: bool, **filters: str | None) -> None:
    """``--tolerance seeds``: mean ± std (n), the seed interval, inside/outside and the verdict per row.

    Only against a row of the seeds' own model (:mod:`stsbench.published.backbones`); else refused, or ``beside``.
    """
    c = check_seeds(results, against, **filters, difference=delta)
    e, agg = c.entry, c.aggregate
    who = f"{agg['model']}/{agg['pooler']}/{agg['mode']}"
    apart = _apart(e, _seeds_measured(results, c.path, agg), who, against, beside)
    rows = []
    for r in c.rows:
        v = r.verdict
        margin = "-" if v.margin is None else signed(v.margin, v.difference)
        figures = (seed_spread(r.seeds), seed_interval(r.seeds), e.format(r.published))
        status = _styled(r.status, "yellow")  # a description, not the verdict
        word = _styled(BESIDE, "dim") if apart else _styled(v.status)
        rows.append((r.task, *figures, status, *verdict_cells(v), margin, word))
    heading = f"[bold]{escape(who)}[/bold], {len(agg['seeds'])} seeds, {_against(e)}"
    columns = ("task", SPREAD, INTERVAL, "published", "status", *VERSUS, "margin", "verdict")
    notes, statuses = [f"seed aggregate: {c.path}", *_selection_note(e)], [r.verdict.status for r in c.rows]
    failed = None if c.passed or apart else c.summary()
    _print_check(heading, columns, rows, notes, failed, apart or c.summary(), statuses)


def _apart(entry, results: Measured, who: str, address: str, beside: bool) -> str | None:  # noqa: ANN001
    """None where ``results`` may be judged against ``entry``; else refused in one line (exit 2).

    With ``beside``: the line saying they are shown beside it, not judged.
    """
    row = of_entry(entry)
    if backbones.judged(row, results):
        return None
    what = f"{address} is {row.row()}; the seeds of {who} are {results.results()}"
    if not beside:
        raise StsbenchError(
            f"{what}: a paper's row is judged only against results on its backbone, a released checkpoint's only "
            "against that model; add --beside to show them beside it, not judged"
        )
    return f"{BESIDE}: {what}"


def _seeds_measured(results: Path, path: Path, agg: dict) -> Measured:
    """What a seed aggregate's models measured: the model their trainings started from, else the models.

    A seed's training: its folder, else the training under ``results`` whose ``--output`` its name is.
    """
    from stsbench.reports.collect import collect

    base, starts, runs = output_of(path.absolute()), [], None
    for name in agg["models"].values():
        folder = Path(resolve(name, base) or name)
        run = load_train_run(folder, folder.name)[0] if (folder / TRAIN_LOG).is_file() else None
        if run is None:
            runs = collect(results).runs if runs is None else runs
            # a path recorded by its last parts (results.write.portable)
            tail = "/" + name.removeprefix(".../")
            run = next((r for r in runs if f"/{r.config.get('output')}".endswith(tail)), None)
        starts.append(None if run is None else run.config.get("model"))
    if starts and all(starts):
        return of_results(starts, trained=True)
    return of_results(agg["models"].values(), trained=False)


def _group_measured(group) -> Measured:  # noqa: ANN001
    """What a report's group of seeds measured (:class:`stsbench.reports.seeds.SeedGroup`)."""
    if group.runs:
        return of_results([str(r.config.get("model", "")) for r in group.runs], trained=True)
    return of_results([m.name for m in group.models], trained=False)


def _tolerance(tolerance: str, seeds: bool = False) -> float:
    """``--tolerance`` as a number (0 for ``seeds``); one line when it is neither a number nor ``seeds``."""
    try:
        return 0.0 if seeds else float(tolerance)
    except ValueError:
        raise StsbenchError(
            f"--tolerance {tolerance!r} is neither a number nor 'seeds'; pass e.g. 0.05, or seeds"
        ) from None


def _check_cells(
    results: Path, key: str, tolerance: str, seeds: bool, delta: float, model: str | None, beside: bool
) -> None:
    """A cell (``KEY#COLUMN``) or a row without task columns, judged on the folder's one group of seeds.

    ``--tolerance seeds``: the seeds' verdict, as the report's Reproduction section gives it (one function); a
    number: one checkpoint's figure within it of the published one (several seeds: pass ``--tolerance seeds``).
    """
    from stsbench.reports.reproduction import check_cells, spread

    allowed = _tolerance(tolerance, seeds)
    if allowed < 0:
        raise StsbenchError(f"--tolerance must be >= 0, got {allowed}")
    entry, column = get_cell(key)
    if column is None and len(entry.values) > 1:  # a sweep's row: one run's seeds are one of its settings
        columns = ", ".join(entry.values)
        raise StsbenchError(
            f"{key} is a row of {len(entry.values)} columns ({columns}); name the one the seeds ran: "
            f"--against '{key}#{next(iter(entry.values))}'"
        )
    rep = check_cells(results, key, delta, model)
    n = max((v.n for v in rep.verdicts), default=0)
    _one_checkpoint(seeds, rep.group.name, n, results, " (a number compares one checkpoint's figure)")
    apart = _apart(rep.entry, _group_measured(rep.group), rep.group.name, key, beside) if seeds else None
    e, failed, rows = rep.entry, [], []
    for v in rep.verdicts:
        if apart:
            rows.append((v.task, spread(v), e.format(v.published), *verdict_cells(v), _styled(BESIDE, "dim")))
            continue
        if seeds:
            rows.append((v.task, spread(v), e.format(v.published), *verdict_cells(v), _styled(v.status)))
            if v.status not in (REPRODUCED, NOT_CHECKED):
                why = f" ({open_question(v)})" if v.status == INCONCLUSIVE else ""
                failed.append(f"{v.task}: {v.status}{why}")
            continue
        off = None if v.mean is None else v.mean - v.published
        ok = off is not None and abs(off) <= allowed + EPS
        status = "MISSING" if off is None else "OK" if ok else "FAIL"
        status = NOT_CHECKED if v.status == NOT_CHECKED else status
        if status in ("MISSING", "FAIL"):
            failed.append(f"{v.task}: {status}" + (f" ({off:+.2f})" if off is not None else ""))
        rows.append((v.task, _number(v.mean), e.format(v.published), _number(off, "+"), _styled(status)))
    columns = ("cell", SPREAD, "published", *VERSUS, "verdict") if seeds else ("cell", *COMPARED[1:])
    heading = f"[bold]{escape(rep.group.label)}[/bold] {_against(e, rep.address)}"
    notes = [f"compared with {rep.compared_with}", *_selection_note(e)]
    what = f"{rep.address} against {rep.group.name}: {'; '.join(failed)}" if failed else None
    judged = "reproduced (or not checked)" if seeds else f"within {tolerance}"
    passed = apart or f"every cell of {rep.address} {judged}"
    statuses = [v.status for v in rep.verdicts] if seeds else ["failed"]
    _print_check(heading, columns, rows, notes, what, passed, statuses)


def _one_checkpoint(seeds: bool, name: str, n: int, results: Path, why: str = "") -> None:
    """A number as ``--tolerance`` judges one checkpoint: one line where ``results`` holds several seeds."""
    if not seeds and n > 1:
        raise StsbenchError(f"{name} has {n} seeds under {results}: judge them with --tolerance seeds{why}")


def _number(value: float | None, sign: str = "") -> str:
    """A figure at two decimals (``+`` for a delta's sign), ``-`` where none."""
    return "-" if value is None else f"{value:{sign}.2f}"


def _styled(status: str, other: str = "bold red") -> str:
    style = STYLE.get(status, other)
    return f"[{style}]{status}[/{style}]"


def _against(e, key: str | None = None) -> str:  # noqa: ANN001
    """The heading's ``vs KEY (paper, table, row 'ROW')``."""
    return (
        f"vs [bold]{escape(key or e.key)}[/bold] ({escape(e.paper.title)}, {e.table}, row '{escape(e.row)}')"
    )


def _selection_note(e) -> list[str]:  # noqa: ANN001
    """A published figure of a test-selected checkpoint says so beside the deltas."""
    note = f"[yellow]note[/yellow]: {e.key} was {e.selection_note} (stsbench selects on STS-B dev)"
    return [note] if e.selection_note else []


def _print_check(
    heading: str, columns: Iterable[str], rows, notes, failed: str | None, passed: str, statuses=("failed",)
) -> None:
    """A check's heading line, table and notes, then PASS, or ``failed`` (exit 1; 3: only inconclusive).

    ``rows``: tuples of cell strings, one per column; ``notes``: lines under the table; ``statuses``: the
    statuses that decide the failing exit status (:func:`stsbench.published.check.check_failed`).
    """
    console = table_console()
    justified = [(col, {"justify": "left" if col in LEFT else "right"}) for col in columns]
    print_table(console, justified, rows, heading, notes, soft_wrap=True)
    if failed:
        raise check_failed(statuses, failed)
    if passed.startswith(BESIDE):
        console.print(passed, highlight=False)
        return
    console.print(f"[green]PASS[/green]: {passed}", highlight=False)


def export_mteb_cmd(
    results: opt(Path, help="Folder of `stsbench run` results (searched recursively).", arg=True),
    out: shared.OutOpt,
    model_name: opt(
        str | None,
        "--model-name",
        help="MTEB's ORG/NAME for the model (default: the hub id; the embedded model's is "
        "sentence-transformers/all-MiniLM-L6-v2; required for a local folder).",
    ) = None,
    revision: opt(
        str | None,
        "--revision",
        help="The model's revision folder (default: the hub snapshot's commit, else no_revision_available).",
    ) = None,
    model: shared.ModelFilterOpt = None,
    pooler: shared.PoolerFilterOpt = None,
    mode: shared.ModeFilterOpt = None,
) -> None:
    """Write one run's STS12-16 and STSBenchmark results as MTEB task results (mteb.TaskResult) under OUT.

    MTEB reads them with ``mteb.ResultCache(cache_path=OUT).load_results()``. The main score is MTEB's: cosine
    Spearman over the test split (for STS12-16 every subset's pairs together: stsbench's ``all``), in [0, 1].
    SICKRelatedness is left out: MTEB scores it on all SICK pairs, not SentEval's test split.
    """
    from stsbench.results.mteb_layout import export_results

    done = export_results(results, out, model_name, revision, model=model, pooler=pooler, mode=mode)
    left = f"; left out (MTEB scores other pairs): {', '.join(done.left_out)}" if done.left_out else ""
    tasks = ", ".join(done.tasks)
    typer.echo(f"wrote {tasks} of {done.name}@{done.revision} to {done.folder}{left}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``export-mteb``, ``published list|show`` and ``check`` to the app (in the order of ``--help``)."""
    app.command("export-mteb")(export_mteb_cmd)
    published = typer.Typer(
        help="The papers' and MTEB's published numbers, with their sources.",
        no_args_is_help=True,
        rich_markup_mode=None,
    )
    published.command("list")(published_list)
    published.command("show")(published_show)
    app.add_typer(published, name="published")
    app.command("check")(check)
