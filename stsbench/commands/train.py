"""``stsbench train``: SimCSE / ESimCSE / MoCoSE training to a checkpoint that ``stsbench run`` evaluates.

Its options are generated from the training config (:data:`stsbench.train.config.OPTIONS`): one flag per
field, with the field's type, choices, help text and defaults, grouped by the methods they belong to.
Every flag defaults to None ("not given"), so the YAML file and the method's defaults decide the rest.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from stsbench.commands._generate import parameter
from stsbench.train.config import OPTIONS, Option, help_for, option_fields
from stsbench.train.config.methods import method_labels

FIRST = ("method", "model", "train_file", "output")  # shown first in --help, before --config
REPEATABLE = ("report_to", "augment")  # given several times, or once comma-separated


def _parameter(opt: Option) -> inspect.Parameter:
    """One config field as a typer option, through the one generator; not given (None): YAML and defaults decide."""
    return parameter(
        opt.name,
        option_fields()[opt.name],
        default=None,
        help_text=help_for(opt.name),
        choices=opt.choices,
        panel=None if opt.group == "Options" else opt.group,
        repeatable=opt.name in REPEATABLE,
        show_default=False,
    )


def _fixed(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


RUN_PARAMETERS = [
    _fixed(
        "config",
        Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option(
                "--config",
                help="A config shipped with stsbench by name (e.g. simcse-bert-base-official; docs/training.md "
                "lists them) or a YAML file of options (keys as the flags, e.g. dup_rate: 0.32); flags given here "
                "override it.",
            ),
        ],
        None,
    ),
    _fixed(
        "resume",
        Annotated[bool, typer.Option("--resume", help="Continue the run saved in OUTPUT/last.")],
        False,
    ),
    _fixed(
        "overwrite",
        Annotated[bool, typer.Option("--overwrite", help="Replace an earlier run in OUTPUT.")],
        False,
    ),
    _fixed(
        "quiet", Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or messages.")], False
    ),
    _fixed(
        "seeds",
        Annotated[
            Optional[str],  # noqa: UP045
            typer.Option(
                "--seeds",
                help="Train one run per seed (e.g. 1,2,3,4,5) into OUTPUT/seed-<s>/ and write OUTPUT/seeds.json; "
                "with --resume, finish the unfinished seeds.",
                rich_help_panel="Several seeds",
            ),
        ],
        None,
    ),
    _fixed(
        "parallel",
        Annotated[
            int,
            typer.Option(
                "--parallel",
                min=1,
                help="With --seeds: train N seeds at once (CPU: cores/N threads each; CUDA: a GPU each, a seed "
                "waiting while every GPU is taken).",
                rich_help_panel="Several seeds",
            ),
        ],
        1,
    ),
    _fixed(
        "per_gpu",
        Annotated[
            int,
            typer.Option(
                "--per-gpu",
                min=1,
                help="With --seeds on CUDA: N seeds' processes share each GPU (default 1: a GPU each); ignored "
                "on CPU.",
                rich_help_panel="Several seeds",
            ),
        ],
        1,
    ),
]


def train_command(**options: Any) -> None:  # its help: train_command.__doc__ below, naming the methods
    from stsbench.errors import StsbenchError
    from stsbench.files import check_writable_dir
    from stsbench.train.config import make_config
    from stsbench.train.lifeline import follow_parent

    follow_parent()  # a seed's process of `train --seeds` ends with it (no-op otherwise)
    run = {
        name: options.pop(name)
        for name in ("config", "resume", "overwrite", "quiet", "seeds", "parallel", "per_gpu")
    }
    for name in REPEATABLE:  # typer gives a list; the config takes "a,b" (checked there)
        if options.get(name) is not None:
            options[name] = ",".join(options[name])
    cfg = make_config(options, run["config"])
    check_writable_dir(cfg.output, "--output")  # before any model or data loads, and before torch imports
    if run["seeds"] is not None:
        train_seeds_command(cfg, options, run)
        return
    if run["parallel"] != 1:
        raise StsbenchError("--parallel runs several seeds at once; give them with --seeds 1,2,3")
    if run["per_gpu"] != 1:
        raise StsbenchError(
            "--per-gpu shares a GPU among several seeds' processes; give them with --seeds 1,2,3"
        )
    from stsbench.train.loop import train

    result = train(cfg, resume=run["resume"], overwrite=run["overwrite"], show_progress=not run["quiet"])
    if not run["quiet"] and os.environ.get("RANK", "0") == "0":  # under torchrun, rank 0 alone reports
        best = "none" if result.best_dev_spearman is None else f"{result.best_dev_spearman * 100:.2f}"
        typer.echo(
            f"best STS-B dev Spearman {best} at step {result.best_step} of {result.steps} "
            f"({result.wall_seconds:.0f} s); checkpoint: {result.output}  "
            f"(evaluate: stsbench run --model {result.output} --tasks sts)"
        )


def train_seeds_command(cfg: Any, options: dict[str, Any], run: dict[str, Any]) -> None:
    """``--seeds``: every seed's run (:mod:`stsbench.reproduce.seed_runs`), then a table of their best dev scores."""
    from stsbench.errors import RunFailed, StsbenchError
    from stsbench.reproduce.seed_runs import train_seeds
    from stsbench.train.config import load_yaml
    from stsbench.train.seeds import parse_seeds

    seeds = parse_seeds(run["seeds"])
    if options.get("seed") is not None:
        raise StsbenchError("--seeds and --seed: give the seeds with --seeds alone")
    given = {
        **(load_yaml(run["config"]) if run["config"] else {}),
        **{k: v for k, v in options.items() if v is not None},
    }
    quiet = run["quiet"]
    path, records = train_seeds(
        cfg,
        seeds,
        given,
        parallel=run["parallel"],
        per_gpu=run["per_gpu"],
        resume=run["resume"],
        overwrite=run["overwrite"],
        quiet=quiet,
        forward=_forward if not quiet else lambda seed, line: None,
    )
    _print_seeds(path, records)
    failed = [r for r in records if r["status"] != "finished"]
    if failed:
        names = ", ".join(str(r["seed"]) for r in failed)
        raise RunFailed(
            f"seed(s) {names} failed (see above); fix the cause, then finish them with the same command and --resume"
        )


def _forward(seed: int, line: str) -> None:
    """A seed's output line on stderr, marked with its seed."""
    typer.echo(f"seed {seed}: {line}", err=True)


def _print_seeds(path: Path, records: list[dict[str, Any]]) -> None:
    import json

    from rich.markup import escape
    from rich.table import Table

    from stsbench.commands._console import table_console

    table = Table()
    for col in ("seed", "status", "best step", "best dev"):
        table.add_column(col, justify="right" if col != "status" else "left")
    for r in records:
        dev = r["best_dev_spearman"]
        status = r["status"] if r["error"] is None else f"{r['status']}: {escape(r['error'])}"
        table.add_row(
            str(r["seed"]), status, str(r["best_step"] or "-"), "-" if dev is None else f"{dev * 100:.2f}"
        )
    console = table_console()
    console.print(table)
    best = json.loads(path.read_text(encoding="utf-8"))["best_dev_spearman"]
    if best is not None:
        spread = "" if best["std"] is None else f" ± {best['std'] * 100:.2f}"
        interval = (
            ""
            if best["low"] is None
            else f", 95% interval [{best['low'] * 100:.2f}, {best['high'] * 100:.2f}]"
        )
        console.print(
            f"best STS-B dev Spearman over {best['n']} finished seed(s): {best['mean'] * 100:.2f}{spread}{interval}",
            highlight=False,
        )
    console.print(
        f"seeds: {path}  (evaluate: stsbench run --model {path.parent} --tasks sts)", highlight=False
    )


train_command.__doc__ = f"""Train {method_labels()}; keep the best STS-B dev checkpoint in OUTPUT.

    Several processes: torchrun --nproc_per_node N -m stsbench train ... (--batch-size is per process).
    """
train_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [_parameter(OPTIONS[n]) for n in FIRST]
    + RUN_PARAMETERS
    + [_parameter(opt) for name, opt in OPTIONS.items() if name not in FIRST]
)


def register(app: typer.Typer) -> None:
    """Add ``stsbench train``."""
    app.command("train", no_args_is_help=True)(train_command)
