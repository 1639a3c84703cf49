"""``stsbench train``: SimCSE / ESimCSE / MoCoSE training to a checkpoint that ``stsbench run`` evaluates.

Its options are generated from the training config (:data:`stsbench.train.config.OPTIONS`): one flag per
field, with the field's type, choices, help text and defaults, grouped by the methods they belong to.
Every flag defaults to None ("not given"), so the YAML file and the method's defaults decide the rest.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import typer

from stsbench.train.config import OPTIONS, Option, help_for

FIRST = ("method", "model", "train_file", "output")  # shown first in --help, before --config


def _parameter(opt: Option) -> inspect.Parameter:
    """One config field as a typer option: ``--flag/--no-flag`` for booleans, choices for Literals."""
    if opt.kind is bool:
        decls = [f"{opt.flag}/--no-{opt.flag[2:]}"]
    else:
        decls = [opt.flag, *([opt.short] if opt.short else [])]
    info = typer.Option(
        *decls,
        help=help_for(opt.name),
        show_default=False,
        rich_help_panel=None if opt.group == "Options" else opt.group,
    )
    kind = Literal[opt.choices] if opt.choices else opt.kind  # a Literal: typer shows and checks the choices
    annotation = Annotated[Optional[kind], info]  # noqa: UP045 - typer needs Optional on 3.10
    return inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation)


def _fixed(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


RUN_PARAMETERS = [
    _fixed(
        "config",
        Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option(
                "--config",
                help="YAML file of options (keys as the flags, e.g. dup_rate: 0.32); flags given here override it.",
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
]


def train_command(**options: Any) -> None:
    """Train SimCSE (unsup or sup), ESimCSE or MoCoSE; keep the best STS-B dev checkpoint in OUTPUT.

    Several processes: torchrun --nproc_per_node N -m stsbench train ... (--batch-size is per process).
    """
    from stsbench.io import check_writable_dir
    from stsbench.train.config import make_config

    run = {name: options.pop(name) for name in ("config", "resume", "overwrite", "quiet")}
    cfg = make_config(options, run["config"])
    check_writable_dir(cfg.output, "--output")  # before any model or data loads, and before torch imports
    from stsbench.train.loop import train

    result = train(cfg, resume=run["resume"], overwrite=run["overwrite"], show_progress=not run["quiet"])
    if not run["quiet"] and os.environ.get("RANK", "0") == "0":  # under torchrun, rank 0 alone reports
        best = "none" if result.best_dev_spearman is None else f"{result.best_dev_spearman * 100:.2f}"
        typer.echo(
            f"best STS-B dev Spearman {best} at step {result.best_step} of {result.steps} "
            f"({result.wall_seconds:.0f} s); checkpoint: {result.output}  "
            f"(evaluate: stsbench run --model {result.output} --tasks sts)"
        )


train_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [_parameter(OPTIONS[n]) for n in FIRST]
    + RUN_PARAMETERS
    + [_parameter(opt) for name, opt in OPTIONS.items() if name not in FIRST]
)


def register(app: typer.Typer) -> None:
    """Add ``stsbench train``."""
    app.command("train", no_args_is_help=True)(train_command)
