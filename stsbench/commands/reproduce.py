"""``stsbench reproduce RECIPE --out DIR``: a recipe's runs trained, evaluated, analysed and reported, resumably.

``--dry-run`` prints the plan, where each step stands in an existing folder, what the run needs and is missing
here, its cost and the published cells; ``stsbench reproduce DIR --status`` prints where a reproduction stands
(from another shell while it runs, or after) from its record, ``--status --check`` replanned on the recipe and
the data. See :mod:`stsbench.reproduce`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from stsbench.commands._options import AllowModifiedDataOpt, DataDirOpt
from stsbench.reproduce.executors import step_threads

TargetArg = Annotated[
    Optional[str],  # noqa: UP045
    typer.Argument(
        help="A built-in recipe (e.g. cpu-mini, esimcse-official; --list lists them) or a recipe "
        "file; with --status, the reproduction's folder.",
        show_default=False,
    ),
]


def reproduce_command(
    target: TargetArg = None,
    out: Annotated[
        Optional[Path],  # noqa: UP045 - typer on 3.10
        typer.Option("--out", "-o", help="Folder of the reproduction: runs, results, logs, report, state."),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the plan, where each step stands, what is missing here, the cost and the published "
            "cells; run nothing.",
        ),
    ] = False,
    strict: Annotated[
        bool,
        typer.Option("--strict", help="With --dry-run: exit with status 2 when something the run needs is missing."),
    ] = False,
    rerun_changed: Annotated[
        bool,
        typer.Option(
            "--rerun-changed", help="Run again the steps done by other stsbench code (changed code or libraries)."
        ),
    ] = False,
    keep_changed: Annotated[
        bool,
        typer.Option(
            "--keep-changed",
            help="Keep the steps done by other stsbench code; the report names them.",
        ),
    ] = False,
    status: Annotated[
        bool,
        typer.Option(
            "--status",
            help="Print where the reproduction in TARGET stands, from its record: each step's code against "
            "today's and its sealed files (no recipe loaded, no data read).",
        ),
    ] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="With --status: replan on the recipe and the data, and say what changed since each step ran.",
        ),
    ] = False,
    history: Annotated[
        bool,
        typer.Option(
            "--history",
            help="With --status: also each past session's wall time and what orchestration added.",
        ),
    ] = False,
    parallel: Annotated[
        int,
        typer.Option(
            "--parallel",
            min=1,
            help="Steps at once (local: each gets cores/N threads unless --threads or OMP_NUM_THREADS says, or "
            "its own GPU).",
        ),
    ] = 1,
    threads: Annotated[
        Optional[int],  # noqa: UP045
        typer.Option(
            "--threads",
            min=1,
            help="CPU threads each step gets (its OMP_NUM_THREADS), over the OMP_NUM_THREADS you set; neither: "
            "cores/--parallel. Slurm: each job asks for N CPUs (else it gets what Slurm gives). A training's "
            "config that sets threads (the CPU mini configs: 1) keeps its own. Not in any step's key.",
            show_default=False,
        ),
    ] = None,
    per_gpu: Annotated[
        int,
        typer.Option(
            "--per-gpu",
            min=1,
            help="Local, with GPUs: N steps' processes share each GPU (default 1: each its own); ignored on CPU.",
        ),
    ] = 1,
    gpus: Annotated[
        int,
        typer.Option("--gpus", min=0, help="GPUs per training run; more than 1 trains through torchrun."),
    ] = 0,
    executor: Annotated[
        str, typer.Option("--executor", help="Where the steps run: local (or slurm, through submitit).")
    ] = "local",
    executor_option: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--executor-option",
            metavar="KEY=VALUE",
            help="A parameter of the executor (slurm: partition=..., account=...); repeat for several.",
        ),
    ] = None,
    report_to: Annotated[
        Optional[list[str]],  # noqa: UP045
        typer.Option(
            "--report-to",
            metavar="NAME[,NAME]",
            help="Training also logs to tensorboard, wandb, trackio (stsbench train --report-to), each run's "
            "seeds grouped as RECIPE/RUN.",
        ),
    ] = None,
    runs: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--runs",
            metavar="NAME[,NAME]",
            help="Only these runs (a sweep's name: all its runs); the report judges what exists and says what is "
            "left out.",
        ),
    ] = None,
    seeds: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option("--seeds", metavar="S[,S]", help="Only these seeds of the runs (e.g. 1,2,3)."),
    ] = None,
    list_: Annotated[
        bool,
        typer.Option(
            "--list",
            help="List the built-in recipes (or TARGET): their tables, the published cells they produce, those "
            "none can and why, claims, trainings and cost.",
        ),
    ] = False,
    format_: Annotated[
        str,
        typer.Option(
            "--format",
            help="With --list: table (default) or json; with --status: table (default) or line, the one line an "
            "edition's README carries.",
            show_default=False,
        ),
    ] = "table",
    data_dir: DataDirOpt = None,
    allow_modified_data: AllowModifiedDataOpt = False,
) -> None:
    """Reproduce a paper's table from a recipe: train every run and seed, evaluate, analyse, report the verdict.

    Rerunning the same command skips what is done, resumes what was interrupted and redoes what changed. A
    step done by other stsbench code stops the rerun in one line until --rerun-changed or --keep-changed says
    which. Exit status: 0 done, 1 a verdict says "not reproduced", 2 bad usage or something missing, 3 a
    step failed.
    """
    from stsbench.errors import StsbenchError

    started = time.time()
    if (check or history) and not status:
        raise StsbenchError(
            f"{'--check' if check else '--history'} applies to --status: stsbench reproduce DIR --status"
        )
    if list_:
        _list(target, format_)
        return
    if status:
        if format_ not in ("table", "line"):
            raise StsbenchError(f"--format {format_!r} with --status: give table or line")
        if history and format_ == "line":
            raise StsbenchError(
                "--history with --format line: the line names no session; leave one of them out"
            )
        from stsbench.commands._console import table_console
        from stsbench.reproduce.view import status as show_status

        show_status(
            Path(out or target), str(out or target), format_ == "line", data_dir, check, history, table_console()
        )
        return
    if format_ != "table":
        raise StsbenchError("--format applies to --list and --status")
    if target is None:
        raise StsbenchError("give a recipe (a built-in name or a file; stsbench reproduce --list lists them)")
    if rerun_changed and keep_changed:
        raise StsbenchError("--rerun-changed and --keep-changed: give one of them")
    if strict and not dry_run:
        raise StsbenchError("--strict applies to --dry-run; a run always refuses what is missing before it starts")
    changed = "rerun" if rerun_changed else "keep" if keep_changed else "ask"
    threads = step_threads(threads, executor)
    from stsbench.recipes import load_recipe
    from stsbench.train.tracking import check_installed, parse_report_to

    trackers = parse_report_to(report_to)
    check_installed(trackers)
    recipe = _subset(load_recipe(target), runs, seeds)
    if out is None and not dry_run:
        raise StsbenchError(f"give the folder of the reproduction: stsbench reproduce {target} --out DIR")
    folder = out if out is not None else Path(recipe.name)
    _check_out(folder, recipe.name)
    if dry_run:
        from stsbench.commands._console import table_console
        from stsbench.reproduce.view import dry_run as show_dry_run

        show_dry_run(
            recipe, folder, data_dir, trackers, changed, strict, parallel, gpus, allow_modified_data, threads,
            table_console(),
        )
        return
    options = dict(_key_value(o) for o in executor_option or [])
    source = str(Path(target).expanduser().resolve()) if Path(target).expanduser().is_file() else None
    _run(recipe, folder, data_dir, started, executor, parallel, options, gpus, trackers, changed, source,
         per_gpu, allow_modified_data, threads)


def _list(target: str | None, format_: str) -> None:
    """``--list``: every built-in recipe (or TARGET) as a table, or as JSON (:mod:`stsbench.reproduce.estimate`)."""
    import json

    from stsbench.errors import StsbenchError
    from stsbench.progress import plural
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.estimate import hours_text, summaries, summary

    if format_ not in ("table", "json"):
        raise StsbenchError(f"--format {format_!r}: give table or json")
    found = [summary(load_recipe(target))] if target is not None else summaries()
    if format_ == "json":
        typer.echo(json.dumps(found, indent=2))
        return
    import shutil
    import textwrap

    from rich.console import Console
    from rich.table import Table

    # the terminal's width (COLUMNS, else the terminal's, else 100 columns when piped)
    width = shutil.get_terminal_size((100, 24)).columns
    rows = []
    for s in found:
        hours = "; ".join(f"{d}: {hours_text(h)}" for d, h in s["cost_hours"].items()) or "unknown"
        counts = [str(len(s["cells"])), str(len(s["unreproducible"])), str(len(s["claims"])), str(s["trainings"])]
        rows.append((s["name"], s["flavour"], ", ".join(s["tables"]), *counts, hours))
    if width < 160:  # a table of eight columns would fold every name: a block per recipe, wrapped
        for name, flavour, tables, cells, unrepr, claims, trainings, hours in rows:
            head = f"{name} ({flavour}): {plural(int(cells), 'cell')}, {unrepr} unreproducible, "
            head += f"{plural(int(claims), 'claim')}, {plural(int(trainings), 'training')}; cost {hours}"
            typer.echo(textwrap.fill(head, width, subsequent_indent="    ", break_on_hyphens=False))
            typer.echo(textwrap.fill(f"tables: {tables}", width, initial_indent="  ", subsequent_indent="    "))
        typer.echo(textwrap.fill(LIST_FOOTER, width))
        return
    table = Table(caption=LIST_FOOTER, caption_justify="left")
    for col in ("recipe", "flavour", "tables", "cells", "unreproducible", "claims", "trainings", "cost"):
        number = col in ("cells", "unreproducible", "claims", "trainings")
        table.add_column(col, justify="right" if number else "left", no_wrap=number or col == "recipe")
    for row in rows:
        table.add_row(*row)
    Console(width=width).print(table)


LIST_FOOTER = (
    "cells: the published cells the recipe's runs are held against (a verdict, or set beside); unreproducible: "
    "cells of its tables that no built-in recipe can produce, each with a reason (--format json lists them), "
    "counted apart from cells, so it may exceed them; claims: the papers' claims it judges; trainings: runs x "
    "seeds; cost: training time on each device with a measured step time (steps x step time; evaluations and "
    "analyses not counted: the dry run counts them)."
)


def _subset(recipe, runs: str | None, seeds: str | None):  # noqa: ANN001, ANN202
    """``--runs``/``--seeds``: the recipe on those (:meth:`stsbench.recipes.Recipe.subset`); bad seeds: one line."""
    from stsbench.commands._options import runs_and_seeds

    if runs is None and seeds is None:
        return recipe
    return recipe.subset(*runs_and_seeds(runs, seeds))


def _key_value(text: str) -> tuple[str, str]:
    from stsbench.errors import StsbenchError

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise StsbenchError(f"--executor-option {text!r}: give KEY=VALUE (e.g. partition=gpu)")
    return key.strip(), value


def _check_out(out: Path, recipe: str) -> None:
    """Refuse a file, or a used folder that is not this recipe's reproduction, in one line."""
    from stsbench.errors import StsbenchError
    from stsbench.output_lock import visible_entries
    from stsbench.reproduce.state import STATE_FILE, load_state

    out = out.expanduser()
    if out.exists() and not out.is_dir():
        raise StsbenchError(f"--out {out} is a file; pass a folder")
    if (out / STATE_FILE).is_file():
        found = load_state(out).get("recipe")
        if found not in (None, recipe):
            raise StsbenchError(
                f"--out {out} holds a reproduction of {found}, not {recipe}; pass another --out"
            )
    elif visible_entries(out):
        raise StsbenchError(f"--out {out} is not empty and holds no reproduction; pass a new or empty folder")


def _run(recipe, out, data_dir, started, executor, parallel, options, gpus, report_to=None, changed="ask", source=None, per_gpu=1, allow_modified=False, threads=None) -> None:  # noqa: ANN001
    from stsbench import __version__
    from stsbench.commands._console import table_console
    from stsbench.errors import RunFailed
    from stsbench.files import check_writable_dir
    from stsbench.output_lock import output_lock
    from stsbench.reproduce.executors import make_executor, run_plan
    from stsbench.reproduce.plan import missing, refuse_missing
    from stsbench.reproduce.state import load_state, planned, why_run
    from stsbench.reproduce.view import Display, counts, session_lines
    from stsbench.results.checkout import checkout, session_code

    check_writable_dir(out, "--out")
    code = session_code(checkout())  # on a dirty checkout, the session records what differs from its commit
    console = table_console()
    with output_lock(out, "--out"):
        state = load_state(Path(out).expanduser())
        plan, actions = planned(recipe, out, data_dir, state, changed, report_to, gpus)
        _refuse_changed(plan, state, changed)
        to_run = [i for i, (action, _) in actions.items() if action == "run"]
        refuse_missing(missing(plan, to_run, allow_modified))  # before any step starts: what, and how to get it
        engine = make_executor(executor, out=plan.out, parallel=parallel, options=options, per_gpu=per_gpu)
        for sid in to_run:  # a step done before that runs again says why first
            record = state["steps"].get(sid)
            if record and record.get("status") == "done":
                why = why_run(plan.step(sid), record, actions) or "done by other code (--rerun-changed)"
                console.print(f"{sid}: runs again: {why}", highlight=False, soft_wrap=True)
        state.update(recipe=recipe.name, title=recipe.title, stsbench=__version__, executor=executor, gpus=gpus)
        if os.path.commonpath([plan.data_dir, plan.out]) != plan.out.anchor:  # near it: found again once moved
            state.update(data_dir=Path(os.path.relpath(plan.data_dir, plan.out)).as_posix())
        else:  # through the root, it would name this machine's folders
            state.pop("data_dir", None)
        state["recipe_file"] = source  # a recipe file, for --status to replan (a built-in is found by name)
        # --runs/--seeds, so that --status replans the same subset
        seeds_run = sorted({s for r in recipe.runs for s in r.seeds})
        state["subset"] = {"runs": [r.name for r in recipe.runs], "seeds": seeds_run} if recipe.omitted else None
        display = Display(console, [s.id for s in plan.steps], plan.out)
        try:
            state = run_plan(
                plan, state, engine, started=started, gpus=gpus, changed=changed, show=display,
                allow_modified=allow_modified, threads=threads, checkout=code,
            )
        finally:
            display.close()
    for line in session_lines({"sessions": state["sessions"][-1:]}):
        console.print(line.replace("session 1", "this session"), highlight=False)
    failed = [(i, r) for i, r in state["steps"].items() if r["status"] in ("failed", "skipped")]
    if failed:
        first = next((f"{i}: {r['error']}" for i, r in failed if r["status"] == "failed"), "")
        raise RunFailed(
            f"{counts(state)}; first failure {first}; see {plan.out}/logs/, fix the cause and rerun the same command"
        )
    console.print(f"report: {plan.out / 'report.md'}", highlight=False)
    _verdict(plan.out)


def _refuse_changed(plan, state, changed: str) -> None:  # noqa: ANN001
    """One line listing the steps done by other stsbench code, unless --rerun-changed or --keep-changed."""
    from stsbench.errors import StsbenchError
    from stsbench.reproduce.state import changed_steps

    found = changed_steps(plan, state)
    if found and changed == "ask":
        names = ", ".join(s.id for s in found[:4]) + (f" and {len(found) - 4} more" if len(found) > 4 else "")
        raise StsbenchError(
            f"{len(found)} step(s) were done by other stsbench code (or libraries) than this one: {names}; "
            "pass --rerun-changed to run them again or --keep-changed to keep them (the report names them)"
        )


def _verdict(out: Path) -> None:
    """Exit status 1 when the report's verdict says some published figure was not reproduced."""
    import json

    from stsbench.errors import Negative
    from stsbench.stats.decide import NOT_REPRODUCED

    path = out / "reproduction.json"
    if not path.is_file():
        return
    data = json.loads(path.read_text(encoding="utf-8"))
    cells = [
        f"{t.get('key')}#{c.get('task')}"
        for t in data.get("targets", [])
        for c in t.get("cells", [])
        if c.get("verdict") == NOT_REPRODUCED
    ]
    if cells:
        listed = ", ".join(cells[:3]) + (f" and {len(cells) - 3} more" if len(cells) > 3 else "")
        raise Negative(f"not reproduced: {listed} (the report's Reproduction section: {out / 'report.md'})")


def register(app: typer.Typer) -> None:
    """Add ``stsbench reproduce``."""
    app.command("reproduce", no_args_is_help=True)(reproduce_command)
