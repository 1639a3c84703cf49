"""``stsbench train``: SimCSE / ESimCSE / MoCoSE training to a checkpoint that ``stsbench run`` evaluates."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer

from stsbench.train.config import help_for


def _opt(name: str, *flags: str) -> typer.models.OptionInfo:
    return typer.Option(*(flags or ("--" + name.replace("_", "-"),)), help=help_for(name), show_default=False)


def _flag(name: str) -> typer.models.OptionInfo:
    dashed = name.replace("_", "-")
    return typer.Option(f"--{dashed}/--no-{dashed}", help=help_for(name), show_default=False)


Str = Optional[str]  # noqa: UP045 - typer needs Optional on 3.10
Int = Optional[int]  # noqa: UP045
Float = Optional[float]  # noqa: UP045
Bool = Optional[bool]  # noqa: UP045


def train_command(
    method: Annotated[Str, _opt("method")] = None,
    model: Annotated[Str, _opt("model", "--model", "-m")] = None,
    train_file: Annotated[Str, _opt("train_file")] = None,
    output: Annotated[Str, _opt("output", "--output", "-o")] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="YAML file of options (keys as the flags, "  # noqa: UP045
            "e.g. dup_rate: 0.32); flags given here override it.",
        ),
    ] = None,
    resume: Annotated[bool, typer.Option("--resume", help="Continue the run saved in OUTPUT/last.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an earlier run in OUTPUT.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar or messages.")] = False,
    data_dir: Annotated[Str, _opt("data_dir")] = None,
    seed: Annotated[Int, _opt("seed")] = None,
    epochs: Annotated[Int, _opt("epochs")] = None,
    max_steps: Annotated[Int, _opt("max_steps")] = None,
    batch_size: Annotated[Int, _opt("batch_size")] = None,
    lr: Annotated[Float, _opt("lr")] = None,
    warmup_steps: Annotated[Int, _opt("warmup_steps")] = None,
    weight_decay: Annotated[Float, _opt("weight_decay")] = None,
    max_grad_norm: Annotated[Float, _opt("max_grad_norm")] = None,
    max_length: Annotated[Int, _opt("max_length")] = None,
    length_buckets: Annotated[Int, _opt("length_buckets")] = None,
    pad_to_max_length: Annotated[Bool, _flag("pad_to_max_length")] = None,
    dropout: Annotated[Float, _opt("dropout")] = None,
    temperature: Annotated[Float, _opt("temperature")] = None,
    pooler: Annotated[Str, _opt("pooler")] = None,
    mlp_only_train: Annotated[Bool, _flag("mlp_only_train")] = None,
    hard_negative_weight: Annotated[Float, _opt("hard_negative_weight")] = None,
    mlm_weight: Annotated[Float, _opt("mlm_weight")] = None,
    mlm_probability: Annotated[Float, _opt("mlm_probability")] = None,
    gaussian_noise_std: Annotated[Float, _opt("gaussian_noise_std")] = None,
    precision: Annotated[Str, _opt("precision")] = None,
    compile: Annotated[Bool, _flag("compile")] = None,
    tf32: Annotated[Bool, _flag("tf32")] = None,
    cuda_graph: Annotated[Bool, _flag("cuda_graph")] = None,
    repetition: Annotated[Bool, _flag("repetition")] = None,
    repetition_kind: Annotated[Str, _opt("repetition_kind")] = None,
    dup_rate: Annotated[Float, _opt("dup_rate")] = None,
    repetition_sampling: Annotated[Str, _opt("repetition_sampling")] = None,
    momentum: Annotated[Float, _opt("momentum")] = None,
    momentum_init: Annotated[Str, _opt("momentum_init")] = None,
    queue_multiple: Annotated[Float, _opt("queue_multiple")] = None,
    queue_reset_each_epoch: Annotated[Bool, _flag("queue_reset_each_epoch")] = None,
    projection_layers: Annotated[Int, _opt("projection_layers")] = None,
    predictor_layers: Annotated[Int, _opt("predictor_layers")] = None,
    ema_decay_start: Annotated[Float, _opt("ema_decay_start")] = None,
    ema_decay_end: Annotated[Float, _opt("ema_decay_end")] = None,
    fgsm_epsilon: Annotated[Float, _opt("fgsm_epsilon")] = None,
    queue_size: Annotated[Int, _opt("queue_size")] = None,
    queue_start_size: Annotated[Int, _opt("queue_start_size")] = None,
    queue_start: Annotated[Str, _opt("queue_start")] = None,
    queue_slice: Annotated[Str, _opt("queue_slice")] = None,
    eval_steps: Annotated[Int, _opt("eval_steps")] = None,
    eval_at_start: Annotated[Bool, _flag("eval_at_start")] = None,
    eval_batch_size: Annotated[Int, _opt("eval_batch_size")] = None,
    save_steps: Annotated[Int, _opt("save_steps")] = None,
    log_steps: Annotated[Int, _opt("log_steps")] = None,
    device: Annotated[Str, _opt("device")] = None,
    threads: Annotated[Int, _opt("threads")] = None,
) -> None:
    """Train SimCSE (unsup or sup), ESimCSE or MoCoSE; keep the best STS-B dev checkpoint in OUTPUT.

    Several processes: torchrun --nproc_per_node N -m stsbench train ... (--batch-size is per process).
    """
    cli = {k: v for k, v in locals().items() if k not in ("config", "resume", "overwrite", "quiet")}
    from stsbench.io import check_writable_dir
    from stsbench.train.config import make_config

    cfg = make_config(cli, config)
    check_writable_dir(cfg.output, "--output")  # before any model or data loads, and before torch imports
    from stsbench.train.loop import train

    result = train(cfg, resume=resume, overwrite=overwrite, show_progress=not quiet)
    if not quiet and os.environ.get("RANK", "0") == "0":  # under torchrun, rank 0 alone reports
        best = "none" if result.best_dev_spearman is None else f"{result.best_dev_spearman * 100:.2f}"
        typer.echo(
            f"best STS-B dev Spearman {best} at step {result.best_step} of {result.steps} "
            f"({result.wall_seconds:.0f} s); checkpoint: {result.output}  "
            f"(evaluate: stsbench run --model {result.output} --tasks sts)"
        )


def register(app: typer.Typer) -> None:
    """Add ``stsbench train``."""
    app.command("train", no_args_is_help=True)(train_command)
