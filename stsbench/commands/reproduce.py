"""``stsbench reproduce RECIPE --out DIR``: a recipe's runs trained, evaluated, analysed and reported, resumably.

``--dry-run`` prints the plan, where each step stands in an existing folder, what the run needs and is missing
here, its cost and the published cells; ``stsbench reproduce DIR --status`` prints where a reproduction stands
(from another shell while it runs, or after) from its record, ``--status --check`` replanned on the recipe and
the data. See :mod:`stsbench.reproduce`.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import time
from functools import partial
from pathlib import Path

import typer

from stsbench import __version__
from stsbench.commands import _options as shared
from stsbench.commands._options import opt, print_table, runs_and_seeds, table_console
from stsbench.errors import Negative, RunFailed, StsbenchError
from stsbench.files import check_writable_dir, output_lock, visible_entries
from stsbench.paths import resolve_data_dir
from stsbench.progress import plural
from stsbench.reproduce import executors
from stsbench.reproduce.state import (
    STATE_FILE,
    changed_steps,
    load_state,
    mark_weights_not_kept,
    save_state,
    sequential_recipe,
    why_run,
)
from stsbench.reproduce.view import Display, counts, data_folder, session_lines
from stsbench.reproduce.view import dry_run as show_dry_run
from stsbench.reproduce.view import status as show_status
from stsbench.train.tracking import check_installed, parse_report_to


def reproduce_command(
    target: opt(
        str | None,
        help="A built-in recipe (e.g. cpu-mini, esimcse-official; --list lists them) or a recipe "
        "file; with --status, the reproduction's folder.",
        show_default=False,
        arg=True,
    ) = None,
    out: shared.OutOpt = None,
    dry_run: opt(
        bool,
        "--dry-run",
        help="Print the plan, where each step stands, what is missing here, the cost and the published "
        "cells; run nothing.",
    ) = False,
    strict: shared.StrictOpt = False,
    rerun_changed: opt(
        bool,
        "--rerun-changed",
        help="Run again the steps done by other stsbench code (changed code or libraries).",
    ) = False,
    keep_changed: opt(
        bool, "--keep-changed", help="Keep the steps done by other stsbench code; the report names them."
    ) = False,
    carry_changed: opt(
        bool,
        "--carry-changed",
        help="Witness each step done by other stsbench code (a short replay, a re-score, a re-run on a model at "
        "hand) and carry it to today's code where the witness agrees with its record; run again, with what reads "
        "it, where not (docs/reproduce.md, Carrying steps to new code).",
    ) = False,
    status: opt(
        bool,
        "--status",
        help="Print where the reproduction in TARGET stands, from its record: each step's code against "
        "today's and its sealed files (no recipe loaded, no data read).",
    ) = False,
    check: opt(
        bool,
        "--check",
        help="With --status: replan on the recipe and the data, and say what changed since each step ran.",
    ) = False,
    history: opt(
        bool,
        "--history",
        help="With --status: also each past session's wall time and what orchestration added.",
    ) = False,
    parallel: shared.ParallelOpt = 1,
    threads: opt(
        int | None,
        "--threads",
        min=1,
        help="CPU threads each step gets (its OMP_NUM_THREADS), over the OMP_NUM_THREADS you set; neither: "
        "cores/--parallel. Slurm: each job asks for N CPUs (else it gets what Slurm gives). A training's "
        "config that sets threads (the CPU mini configs: 1) keeps its own. Not in any step's key.",
        show_default=False,
    ) = None,
    per_gpu: shared.PerGpuOpt = 1,
    gpus: opt(int, "--gpus", min=0, help="GPUs per training run; more than 1 trains through torchrun.") = 0,
    executor: opt(
        str, "--executor", help="Where the steps run: local (or slurm, through submitit)."
    ) = "local",
    executor_option: opt(
        list[str] | None,
        "--executor-option",
        metavar="KEY=VALUE",
        help="A parameter of the executor (slurm: partition=..., account=...); repeat for several.",
    ) = None,
    report_to: opt(
        list[str] | None,
        "--report-to",
        metavar="NAME[,NAME]",
        help="Training also logs to tensorboard, wandb, trackio (stsbench train --report-to), each run's "
        "seeds grouped as RECIPE/RUN.",
    ) = None,
    runs: shared.RunsOpt = None,
    seeds: shared.SeedsOpt = None,
    list_: opt(
        bool,
        "--list",
        help="List the built-in recipes (or TARGET): their tables, the published cells they produce, those "
        "none can and why, claims, trainings and cost.",
    ) = False,
    format_: opt(
        str,
        "--format",
        help="With --list: table (default) or json; with --status: table (default) or line, the one line an "
        "edition's README carries.",
        show_default=False,
    ) = "table",
    data_dir: shared.DataDirOpt = None,
    allow_modified: shared.AllowModifiedDataOpt = False,
    until_decided: opt(
        bool,
        "--until-decided",
        help="After the planned seeds, add seeds to the runs an unsettled claim or published cell reads, up to "
        "the next look of the sequential plan, and look again; stop when every verdict is settled or at "
        "--max-seeds (docs/uncertainty.md, Seeds until the verdict is decided). Resumable like any run.",
    ) = False,
    max_seeds: opt(
        int | None,
        "--max-seeds",
        metavar="M",
        help="With --until-decided: the most seeds a run trains (10, default, or 20).",
    ) = None,
    refine: opt(
        bool,
        "--refine",
        help="With --until-decided: go on past supported or reversed until each claim's size is shown (by more "
        "or less than δ) or more seeds would not show it; more seeds, the same guarantee.",
    ) = False,
) -> None:
    """Reproduce a paper's table from a recipe: train every run and seed, evaluate, analyse, report the verdict.

    Rerunning the same command skips what is done, resumes what was interrupted and redoes what changed. A
    step done by other stsbench code stops the rerun in one line until --rerun-changed or --keep-changed says
    which. Exit status: 0 done, 1 a verdict says "not reproduced", 2 bad usage or something missing, 3 a
    step failed.
    """
    started = time.time()
    flag = "--check" if check else "--history"
    if (check or history) and not status:
        raise StsbenchError(f"{flag} applies to --status: stsbench reproduce DIR --status")
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
        where = out or target
        show_status(Path(where), str(where), format_ == "line", data_dir, check, history, table_console())
        return
    if format_ != "table":
        raise StsbenchError("--format applies to --list and --status")
    if target is None:
        raise StsbenchError("give a recipe (a built-in name or a file; stsbench reproduce --list lists them)")
    if sum((rerun_changed, keep_changed, carry_changed)) > 1:
        raise StsbenchError("--rerun-changed, --keep-changed and --carry-changed: give one of them")
    if strict and not dry_run:
        raise StsbenchError(
            "--strict applies to --dry-run; a run always refuses what is missing before it starts"
        )
    for given, name in ((max_seeds is not None, "--max-seeds"), (refine, "--refine")):
        if given and not until_decided:
            raise StsbenchError(f"{name} applies to --until-decided")
    # the recipe, the plan and the verdict rule only here: --status and --list --help stay light
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.plan import missing, planned, refuse_missing, seeds_to_add
    from stsbench.stats.decide import NOT_REPRODUCED

    changed = "rerun" if rerun_changed else "keep" if keep_changed else "carry" if carry_changed else "ask"
    threads = executors.step_threads(threads, executor)
    trackers = parse_report_to(report_to)
    check_installed(trackers)
    recipe = load_recipe(target)
    if runs is not None or seeds is not None:  # a bad seed: one line
        recipe = recipe.subset(*runs_and_seeds(runs, seeds))
    if until_decided:  # a maximum without constants: one line naming those allowed
        from stsbench.stats.sequential import plan as sequential_plan
        from stsbench.stats.sequential_table import TABLE

        if str(max_seeds or 10) not in (allowed := TABLE["plans"]):
            raise StsbenchError(
                f"--max-seeds {max_seeds}: give {' or '.join(allowed)} (the plans with constants)"
            )
        recipe = recipe.model_copy(
            update={"until": sequential_plan(max_seeds or 10).maximum, "refine": refine}
        )
    if out is None and not dry_run:
        raise StsbenchError(f"give the folder of the reproduction: stsbench reproduce {target} --out DIR")
    out = out or Path(recipe.name)
    home = out.expanduser()  # a file, or a used folder that is not this recipe's reproduction: one line
    if home.exists() and not home.is_dir():
        raise StsbenchError(f"--out {home} is a file; pass a folder")
    found = (state := load_state(home)).get("recipe")
    if found not in (None, recipe.name):
        raise StsbenchError(
            f"--out {home} holds a reproduction of {found}, not {recipe.name}; pass another --out"
        )
    if not (home / STATE_FILE).is_file() and visible_entries(home):
        raise StsbenchError(
            f"--out {home} is not empty and holds no reproduction; pass a new or empty folder"
        )
    console = table_console()
    default = resolve_data_dir(None, must_exist=False)
    if data_dir is None and (recorded := data_folder(home, state)) != default:
        data_dir = recorded  # where the reproduction was made: its record names it, relative to the folder
        console.print(
            f"data: {os.path.normpath(recorded)} ({home / STATE_FILE} records it; --data-dir to change)"
        )
    if dry_run:
        how = dict(changed=changed, strict=strict, parallel=parallel, gpus=gpus, threads=threads)
        show_dry_run(recipe, out, data_dir, trackers, **how, allow_modified=allow_modified, console=console)
        return
    options = dict(_key_value(o) for o in executor_option or [])
    source = str(Path(target).expanduser().resolve()) if Path(target).expanduser().is_file() else None
    check_writable_dir(out, "--out")
    from stsbench.results.write import checkout, session_code  # looked up when called: tests replace checkout

    here = checkout()
    code = session_code(here)  # on a dirty checkout, the session records what differs from its commit
    base = recipe  # as given (its subset): the sequential plan's seeds are added to it, look by look
    looks = 0  # the sessions this command records: one a look (--until-decided), each from its own start
    with output_lock(out, "--out"):
        while True:  # once; with --until-decided, once a look until every verdict is settled
            looks, began = looks + 1, started if not looks else time.time()
            state = load_state(home)
            recorded = state.get("until")
            if recorded and not until_decided:
                raise StsbenchError(
                    f"--out {home} adds seeds until its verdicts are decided: rerun with --until-decided"
                )
            if recorded and recorded["maximum"] != base.until:
                raise StsbenchError(
                    f"--out {home} adds seeds up to {recorded['maximum']}: give --max-seeds {recorded['maximum']}"
                )
            if recorded and recorded.get("refine", False) != base.refine:
                wanted = "with" if recorded.get("refine") else "without"
                raise StsbenchError(f"--out {home} adds seeds {wanted} --refine: rerun {wanted} it")
            recipe = sequential_recipe(base, state)
            mode = "rerun" if changed == "carry" else changed  # a step the carry leaves runs again
            plan, actions = planned(recipe, out, data_dir, state, mode, trackers, gpus)
            found = changed_steps(plan, state)
            if found and changed == "ask":  # steps done by other stsbench code: one line listing them
                names = ", ".join(s.id for s in found[:4])
                names += f" and {len(found) - 4} more" if len(found) > 4 else ""
                raise StsbenchError(
                    f"{len(found)} step(s) were done by other stsbench code (or libraries) than this one: {names}; "
                    "pass --carry-changed to carry each that a witness confirms (docs/reproduce.md), --rerun-changed to run "
                    "them again or --keep-changed to keep them (the report names them)"
                )
            to_run = [i for i, (action, _) in actions.items() if action == "run"]
            # before any step starts: what is missing, and how to get it
            refuse_missing(missing(plan, to_run, allow_modified))
            make = partial(
                executors.make_executor, executor, parallel=parallel, options=options, per_gpu=per_gpu
            )
            if found and changed == "carry":  # witnessed: carried, or run again below with what reads them
                from stsbench.reproduce.carry import carry

                say = partial(console.print, highlight=False, soft_wrap=True)
                witness = partial(_witnesses, make, console, gpus=gpus, threads=threads, checkout=code)
                carry(plan, state, found, witness, say, {"git_commit": here.commit, **code} if here else code)
                plan, actions = planned(recipe, out, data_dir, state, mode, trackers, gpus)
                began = time.time()  # the carry is a session of its own
                to_run = [i for i, (action, _) in actions.items() if action == "run"]
            engine = make(out=plan.out)
            for sid in to_run:  # a step done before that runs again says why first
                record = state["steps"].get(sid)
                if record and record.get("status") == "done":
                    why = why_run(plan.step(sid), record, actions) or "done by other code (--rerun-changed)"
                    if changed == "carry" and sid == "report":
                        why = "made again: a report is never carried"
                    console.print(f"{sid}: runs again: {why}", highlight=False, soft_wrap=True)
            # recipe_file: a recipe file, for --status to replan (a built-in is found by name); subset:
            # --runs/--seeds, so that --status replans the same subset
            # the recipe's own seeds, not those the sequential plan added
            seeds_run = sorted({s for r in base.runs for s in r.seeds})
            subset = {"runs": [r.name for r in base.runs], "seeds": seeds_run} if base.omitted else None
            state.update(recipe=recipe.name, title=recipe.title, stsbench=__version__, executor=executor)
            state.update(gpus=gpus, recipe_file=source, subset=subset)
            if until_decided:  # recorded before any training: a resume knows the plan and its added seeds
                chosen = {"refine": True} if base.refine else {}  # a rerun's choice is its record's (above)
                state["until"] = state.get("until") or {"maximum": base.until, "added": {}, **chosen}
            # near it: found again once moved; through the root, it would name this machine's folders
            if os.path.commonpath([plan.data_dir, plan.out]) != plan.out.anchor:
                state.update(data_dir=Path(os.path.relpath(plan.data_dir, plan.out)).as_posix())
            else:
                state.pop("data_dir", None)
            # kept without weights (an edition): stay done once a new training makes OUT/runs/
            mark_weights_not_kept(plan, state)
            display = Display(console, [s.id for s in plan.steps], plan.out)
            try:
                kw = dict(show=display, allow_modified=allow_modified, threads=threads, checkout=code)
                state = executors.run_plan(
                    plan, state, engine, started=began, gpus=gpus, changed=changed, **kw
                )
            finally:
                display.close()
            if not until_decided or any(
                r["status"] in ("failed", "skipped") for r in state["steps"].values()
            ):
                break
            verdicts = plan.out / "reproduction.json"
            added = (
                seeds_to_add(recipe, json.loads(verdicts.read_text(encoding="utf-8")))
                if verdicts.is_file()
                else {}
            )
            if not added:
                break
            for run, new in added.items():
                state["until"]["added"][run] = [*state["until"]["added"].get(run, []), *new]
            save_state(home, state)
            listed = "; ".join(f"{run}: seeds {', '.join(map(str, new))}" for run, new in added.items())
            trainings = plural(sum(map(len, added.values())), "training")
            console.print(f"next look: {trainings} added ({listed})", highlight=False, soft_wrap=True)
    for i, line in enumerate(session_lines({"sessions": state["sessions"][-looks:]}), start=1):
        this = "this session" if looks == 1 else f"this session, look {i}"
        console.print(line.replace(f"session {i}", this, 1), highlight=False)
    failed = [(i, r) for i, r in state["steps"].items() if r["status"] in ("failed", "skipped")]
    if failed:
        first = next((f"{i}: {r['error']}" for i, r in failed if r["status"] == "failed"), "")
        raise RunFailed(
            f"{counts(state)}; first failure {first}; see {plan.out}/logs/, fix the cause and rerun the same command"
        )
    console.print(f"report: {plan.out / 'report.md'}", highlight=False)
    verdicts = plan.out / "reproduction.json"
    if not verdicts.is_file():
        return
    targets = json.loads(verdicts.read_text(encoding="utf-8")).get("targets", [])
    found = ((t, c) for t in targets for c in t.get("cells", []) if c.get("verdict") == NOT_REPRODUCED)
    cells = [f"{t.get('key')}#{c.get('task')}" for t, c in found]
    if cells:  # exit status 1: the report's verdict says some published figure was not reproduced
        listed = ", ".join(cells[:3]) + (f" and {len(cells) - 3} more" if len(cells) > 3 else "")
        raise Negative(
            f"not reproduced: {listed} (the report's Reproduction section: {plan.out / 'report.md'})"
        )


def _witnesses(make, console, wplan, wstate, **run):  # noqa: ANN001, ANN202
    """Run a carry's witnesses (``OUT/carry``) through this run's executor, shown as any step."""
    display = Display(console, [s.id for s in wplan.steps], wplan.out)
    try:
        return executors.run_plan(
            wplan, wstate, make(out=wplan.out), started=time.time(), show=display, **run
        )
    finally:
        display.close()


def _list(target: str | None, format_: str) -> None:
    """``--list``: every built-in recipe (or TARGET) as a table, or as JSON (:mod:`stsbench.reproduce.estimate`)."""
    if format_ not in ("table", "json"):
        raise StsbenchError(f"--format {format_!r}: give table or json")
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.estimate import list_row, summaries, summary

    found = [summary(load_recipe(target))] if target is not None else summaries()
    if format_ == "json":
        typer.echo(json.dumps(found, indent=2))
        return
    from rich.console import Console

    # the terminal's width (COLUMNS, else the terminal's, else 100 columns when piped)
    width = shutil.get_terminal_size((100, 24)).columns
    rows = [list_row(s) for s in found]
    if width < 160:  # a table of eight columns would fold every name: a block per recipe, wrapped
        for name, flavour, tables, cells, unrepr, claims, trainings, hours in rows:
            head = f"{name} ({flavour}): {plural(int(cells), 'cell')}, {unrepr} unreproducible, "
            head += f"{plural(int(claims), 'claim')}, {plural(int(trainings), 'training')}; optimizer steps {hours}"
            typer.echo(textwrap.fill(head, width, subsequent_indent="    ", break_on_hyphens=False))
            tables = textwrap.fill(f"tables: {tables}", width, initial_indent="  ", subsequent_indent="    ")
            typer.echo(tables)
        typer.echo(textwrap.fill(LIST_FOOTER, width))
        return
    numbers = ("cells", "unreproducible", "claims", "trainings")
    columns = [
        (col, {"justify": "right" if col in numbers else "left", "no_wrap": col in (*numbers, "recipe")})
        for col in ("recipe", "flavour", "tables", *numbers, "optimizer steps")
    ]
    print_table(Console(width=width), columns, rows, caption=LIST_FOOTER, caption_justify="left")


LIST_FOOTER = (
    "cells: the published cells the recipe's runs are held against (a verdict, or set beside); unreproducible: "
    "cells of its tables that no built-in recipe can produce, each with a reason (--format json lists them), "
    "counted apart from cells, so it may exceed them; claims: the papers' claims it judges; trainings: runs x "
    "seeds; optimizer steps: the trainings' optimizer steps alone on each device with a measured step time (steps x "
    "step time); the whole cost, with set-up, dev and test evaluations, saves, analyses and the report, is the dry "
    "run's: stsbench reproduce NAME --dry-run."
)


def _key_value(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise StsbenchError(f"--executor-option {text!r}: give KEY=VALUE (e.g. partition=gpu)")
    return key.strip(), value


def register(app: typer.Typer) -> None:
    """Add ``stsbench reproduce``."""
    app.command("reproduce", no_args_is_help=True)(reproduce_command)
