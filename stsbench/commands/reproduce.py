"""``stsbench reproduce RECIPE --out DIR``: a recipe's runs trained, evaluated, analysed and reported, resumably.

``--dry-run`` prints the plan, its cost and the published cells; ``stsbench reproduce DIR --status`` prints
where a reproduction stands (from another shell while it runs, or after). See :mod:`stsbench.reproduce`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from stsbench.commands._options import DataDirOpt

TargetArg = Annotated[
    str,
    typer.Argument(
        help="A built-in recipe (e.g. cpu-mini, esimcse-official; docs/reproduce.md lists them) or a recipe "
        "file; with --status, the reproduction's folder.",
        show_default=False,
    ),
]


def reproduce_command(
    target: TargetArg,
    out: Annotated[
        Optional[Path],  # noqa: UP045 - typer on 3.10
        typer.Option("--out", "-o", help="Folder of the reproduction: runs, results, logs, report, state."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan, its cost and the published cells; run nothing.")
    ] = False,
    status: Annotated[
        bool, typer.Option("--status", help="Print the state of the reproduction in TARGET.")
    ] = False,
    parallel: Annotated[
        int,
        typer.Option(
            "--parallel", min=1, help="Steps at once (local: each gets cores/N threads, or its own GPU)."
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
    data_dir: DataDirOpt = None,
) -> None:
    """Reproduce a paper's table from a recipe: train every run and seed, evaluate, analyse, report the verdict.

    Rerunning the same command skips what is done, resumes what was interrupted and redoes what changed.
    """
    from stsbench.errors import StsbenchError

    started = time.time()
    if status:
        _status(Path(out or target))
        return
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.plan import build_plan
    from stsbench.train.tracking import check_installed, parse_report_to

    trackers = parse_report_to(report_to)
    check_installed(trackers)
    recipe = load_recipe(target)
    if out is None and not dry_run:
        raise StsbenchError(f"give the folder of the reproduction: stsbench reproduce {target} --out DIR")
    folder = out if out is not None else Path(recipe.name)
    _check_out(folder, recipe.name)
    if dry_run:
        _dry_run(build_plan(recipe, folder, data_dir, trackers))
        return
    options = dict(_key_value(o) for o in executor_option or [])
    _run(recipe, folder, data_dir, started, executor, parallel, options, gpus, trackers)


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


def _run(recipe, out, data_dir, started, executor, parallel, options, gpus, report_to=None) -> None:  # noqa: ANN001
    from stsbench import __version__
    from stsbench.commands._console import table_console
    from stsbench.errors import StsbenchError
    from stsbench.files import check_writable_dir
    from stsbench.output_lock import output_lock
    from stsbench.reproduce.executors import make_executor
    from stsbench.reproduce.plan import build_plan
    from stsbench.reproduce.scheduler import run_plan
    from stsbench.reproduce.state import load_state
    from stsbench.reproduce.view import Display, counts, session_lines

    check_writable_dir(out, "--out")
    with output_lock(out, "--out"):
        plan = build_plan(recipe, out, data_dir, report_to)
        state = load_state(plan.out)
        state.update(recipe=recipe.name, title=recipe.title, stsbench=__version__, executor=executor)
        engine = make_executor(executor, out=plan.out, parallel=parallel, options=options)
        console = table_console()
        display = Display(console, [s.id for s in plan.steps])
        try:
            state = run_plan(plan, state, engine, started=started, gpus=gpus, show=display)
        finally:
            display.close()
    for line in session_lines({"sessions": state["sessions"][-1:]}):
        console.print(line.replace("session 1", "this session"), highlight=False)
    failed = [(i, r) for i, r in state["steps"].items() if r["status"] in ("failed", "skipped")]
    if failed:
        first = next((f"{i}: {r['error']}" for i, r in failed if r["status"] == "failed"), "")
        raise StsbenchError(
            f"{counts(state)}; first failure {first}; see {plan.out}/logs/, fix the cause and rerun the same command"
        )
    console.print(f"report: {plan.out / 'report.md'}", highlight=False)


def _status(out: Path) -> None:
    from stsbench.commands._console import table_console
    from stsbench.errors import StsbenchError
    from stsbench.reproduce.state import STATE_FILE, load_state
    from stsbench.reproduce.view import session_lines, table

    if not (out / STATE_FILE).is_file():
        raise StsbenchError(
            f"{out} holds no reproduction ({STATE_FILE}); give the --out of stsbench reproduce"
        )
    state = load_state(out)
    console = table_console()
    console.print(table(state, [i for i in state.get("order", []) if i in state["steps"]] or None))
    for line in session_lines(state):
        console.print(line, highlight=False)


def _dry_run(plan) -> None:  # noqa: ANN001
    from collections import Counter

    from stsbench.commands._console import table_console
    from stsbench.published.registry import get_entry
    from stsbench.reproduce.cost import duration, estimates

    console = table_console()
    recipe = plan.recipe
    trains = [s for s in plan.steps if s.kind == "train"]
    console.print(f"{recipe.name}: {recipe.title}", highlight=False, markup=False)
    console.print(f"into {plan.out} (data: {plan.data_dir})", highlight=False, markup=False)
    console.print(f"runs ({len(trains)} trainings):", highlight=False, markup=False)
    for run in recipe.runs:
        steps = sorted({s.total_steps for s in trains if s.id.startswith(f"train/{run.name}/")}, key=str)
        against = f", held against {run.published}" if run.published else ""
        console.print(
            f"  {run.name}: {run.method}, config {run.config}, seeds {','.join(map(str, run.seeds))}, "
            f"{'/'.join('unknown' if s is None else f'{s:,}' for s in steps)} steps each{against}",
            highlight=False,
        )
    kinds = Counter(s.kind for s in plan.steps)
    console.print(
        "plan: " + ", ".join(f"{n} {k}" for k, n in kinds.items()) + " step(s)", highlight=False, markup=False
    )
    for s in plan.steps:
        console.print(
            f"  {s.id}  [{s.key[:12]}]" + (f"  after {len(s.deps)}" if s.deps else ""),
            highlight=False,
            markup=False,
        )
    console.print("estimated training time (steps x measured step time):", highlight=False, markup=False)
    for e in estimates(plan):
        source = f"  ({'; '.join(e.sources)})" if e.sources else ""
        console.print(f"  {e.device}: {duration(e.seconds)}{source}", highlight=False, markup=False)
    judged = "with a verdict" if recipe.verdict else "set beside, no verdict"
    console.print(f"published cells ({judged}):", highlight=False, markup=False)
    for key in recipe.published:
        entry = get_entry(key)
        cells = ", ".join(f"{t} {entry.format(v)}" for t, v in entry.values.items())  # table's precision
        # soft_wrap: a citation is one line however long (a pipe's 200 columns cut it mid-reference)
        console.print(f"  {key}: {cells}", highlight=False, markup=False, soft_wrap=True)
        console.print(f"    {entry.cite}", highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add ``stsbench reproduce``."""
    app.command("reproduce", no_args_is_help=True)(reproduce_command)
