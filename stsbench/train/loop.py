"""The training loop, top to bottom.

Setup, model, data, then per step: lr, views, forward, loss, backward, step, method state (EMA, queue),
periodic dev evaluation, best checkpoint, resumable state.

Every method runs through this one loop; a method only brings its views, its loss and its state
(:mod:`stsbench.train.methods`). The run's state is one :class:`~stsbench.train.run.Run`; building,
resuming, evaluating and saving are named functions of :mod:`stsbench.train.run`, one step is
:func:`~stsbench.train.step.train_step`. Under ``torchrun`` the loop runs in every process
(:mod:`stsbench.train.distributed`): each encodes its slice of the global batch, DDP keeps the weights
equal, and rank 0 alone evaluates, logs and saves.

The host reads the device once a log interval, not once a step: the loss and its parts stay tensors until
a log point, and non-finite values are recorded on the device and checked at each log, evaluation and save
point, always before anything is evaluated or saved, so a NaN never reaches a checkpoint; the error still
names the step that went bad. Steps after it (up to the check) run on NaN weights that are never kept.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import torch

from stsbench.data.training import load_train_data
from stsbench.errors import RunFailed
from stsbench.files import output_lock
from stsbench.paths import resolve_data_dir
from stsbench.train import check_torch, distributed
from stsbench.train.augment.build import check_augmentations
from stsbench.train.batches import Batches, prefetch_depth
from stsbench.train.config import TrainConfig, check_complete, finalize
from stsbench.train.graph import GraphedStep
from stsbench.train.log import (
    TrainLog,
    TrainProgress,
    compile_record,
    end_record,
    nonfinite_record,
    start_record,
    train_record,
)
from stsbench.train.model import resolve_backbone
from stsbench.train.run import (
    Run,
    TrainNet,
    batch_views,
    build,
    compile_model,
    evaluate_and_keep,
    restore,
    save_resumable,
    seed_everything,
    setup,
)
from stsbench.train.schedule import linear_lr
from stsbench.train.step import NonFiniteLoss, Parts, Precision, host_values, tf32, train_step
from stsbench.train.tracking import Trackers, check_installed, open_trackers

# what benchmarks and tests import from here
__all__ = [
    "Precision",
    "TrainNet",
    "TrainResult",
    "build",
    "compile_model",
    "seed_everything",
    "train",
    "train_step",
]


@dataclass
class TrainResult:
    """What a finished run returns (the same numbers are in ``DIR/train_log.jsonl``)."""

    output: Path
    steps: int
    best_step: int | None
    best_dev_spearman: float | None
    wall_seconds: float
    dev_curve: list[tuple[int, float | None]]


def train(
    cfg: TrainConfig,
    resume: bool = False,
    overwrite: bool = False,
    show_progress: bool = True,
    on_step: Callable[[int], None] | None = None,
) -> TrainResult:
    """Train ``cfg.method`` and keep the best STS-B dev checkpoint in ``cfg.output``.

    ``on_step(step)`` is called after each completed step (after any checkpoint of that step); as
    finiteness is checked at log, evaluation and save points only, it may see steps after a bad one,
    up to the check that stops the run. Under ``torchrun`` every process calls this; ``cfg.batch_size``
    is the batch of one process.
    """
    started = time.perf_counter()
    check_torch(torch.__version__)  # an older torch failed steps in, on an API it lacks
    check_complete(cfg)
    check_installed(cfg.report_to)  # a missing tracker library is one line before anything loads
    check_augmentations(cfg)  # an augmentation's library or model missing: one line, nothing written
    data = load_train_data(cfg)  # a corpus name resolved in the data folder, its first train_lines lines
    cfg = finalize(cfg, data.supervised, data.identity)  # a new record: the caller's config is not changed
    backbone_path, data_dir = resolve_backbone(cfg.model), resolve_data_dir(cfg.data_dir)
    ctx = distributed.setup(cfg.device)
    held = ExitStack()
    try:
        if ctx.main:  # one writer per output folder for the whole run (rank 0 writes for every process)
            held.enter_context(output_lock(cfg.output))
        run = setup(
            cfg,
            data=data,
            ctx=ctx,
            backbone_path=backbone_path,
            data_dir=data_dir,
            resume=resume,
            overwrite=overwrite,
            started=started,
        )
        if resume:
            restore(run)
        if ctx.main:  # rank 0 alone logs (a resume cuts the log back to the saved step)
            run.log = TrainLog(run.out / "train_log.jsonl", keep_until_step=run.step if resume else None)
            run.trackers = start_trackers(run, resume)
            if run.trackers is not None:
                held.callback(run.trackers.close)
        graphed = cuda_graph_step(run)
        progress = TrainProgress(run.total, run.step, show_progress and ctx.main)
        with progress, step_views(run) as batches:
            if not resume:
                begin(run, progress)
            first = run.step
            while run.step < run.total:
                epoch, index = divmod(run.step, run.per_epoch)
                if index == 0:
                    run.method.on_epoch_start(epoch)
                views = batches.get(run.step)
                lr = linear_lr(run.step, run.total, peak=cfg.lr, warmup_steps=cfg.warmup_steps)
                tick = time.perf_counter()
                with tf32(cfg.tf32):  # the step alone: evaluations and the rest compute in fp32
                    if graphed is not None:
                        loss, parts = graphed(views, lr=lr, step=run.step + 1)
                    else:
                        loss, parts = train_step(
                            run.model,
                            run.method,
                            run.optimizer,
                            views,
                            lr=lr,
                            max_grad_norm=cfg.max_grad_norm,
                            net=run.net,
                            precision=run.precision,
                            watch=(run.watch, run.step + 1),
                        )
                run.step += 1
                if cfg.compile and run.step == first + 1:
                    run.write(compile_record(run.step, time.perf_counter() - tick))
                after_step(run, progress, loss=loss, parts=parts, lr=lr)
                if on_step is not None:
                    on_step(run.step)
        return finish(run)
    finally:
        held.close()
        if ctx.world > 1:
            distributed.cleanup()


def start_trackers(run: Run, resume: bool) -> Trackers | None:
    """``--report-to``: the trackers, given the resolved config (options and resolution)."""
    cfg = run.cfg
    return open_trackers(
        cfg.report_to,
        run.out,
        {**cfg.to_dict(), "resolution": cfg.resolution.to_dict()},
        project=cfg.tracking_project,
        group=cfg.run_group,
        name=cfg.run_name,
        resume_step=run.step if resume else None,
    )


def cuda_graph_step(run: Run) -> GraphedStep | None:
    """``--cuda-graph``: the step replayed from one CUDA graph (made after a resume restored the optimizer)."""
    if not run.cfg.cuda_graph:
        return None
    return GraphedStep(
        run.model,
        run.method,
        run.optimizer,
        max_grad_norm=run.cfg.max_grad_norm,
        precision=run.precision,
        watch=run.watch,
    )


def step_views(run: Run) -> Batches:
    """The run's views step by step, from its current step; made ahead in a thread on CUDA.

    The thread gets its own copy of the tokenizer (the checkpoint keeps the run's).
    """
    depth = prefetch_depth(run.device)
    if depth > 0:
        run.method.tokenizer = copy.deepcopy(run.tokenizer)
    make = partial(batch_views, run)
    return Batches(make, start=run.step, stop=run.total, device=run.device, depth=depth)


def begin(run: Run, progress: TrainProgress) -> None:
    """A fresh run's start record, its traceable distance, and the dev score before training."""
    distance = run.meta.get("traceable_distance")
    run.write(
        start_record(
            total=run.total,
            per_epoch=run.per_epoch,
            train_rows=len(run.data),
            device=run.device,
            processes=run.ctx.world,
            global_batch_size=run.cfg.batch_size * run.ctx.world,
            distance=distance,
            config=run.cfg.to_dict(),
            backbone_dropout=run.cfg.backbone_dropout,
        )
    )
    if distance is not None:
        progress.message(f"maximum traceable distance: {_describe(distance)}")
    if run.cfg.eval_at_start:
        evaluate(run, progress, selectable=False)


def after_step(run: Run, progress: TrainProgress, *, loss: torch.Tensor, parts: Parts, lr: float) -> None:
    """The periodic work after a step: finiteness check, log, dev evaluation, resumable state.

    The check comes first at every point that reads the device, evaluates or saves.
    """
    cfg, step = run.cfg, run.step
    last = step == run.total
    log_now = step % cfg.log_steps == 0 or last
    eval_now = step % cfg.eval_steps == 0 or last
    save_now = step % cfg.save_steps == 0 or last
    if log_now or eval_now or save_now:
        check_finite(run)
    if log_now:
        value, numbers = host_values(loss, parts)
        epoch = (step - 1) // run.per_epoch + 1
        run.write(train_record(step=step, epoch=epoch, loss=value, lr=lr, parts=numbers, time=run.elapsed()))
        progress.update(step, loss=value, lr=lr, line=step % cfg.log_steps == 0)
    else:
        progress.update(step, lr=lr)
    if eval_now:
        evaluate(run, progress)
    if save_now:
        save_resumable(run)


def check_finite(run: Run) -> None:
    """Stop the run if a step since the last check had a NaN or infinite loss or gradient norm.

    The error names that step (and its epoch); the best checkpoint and the resumable state on disk are
    from before it, as every save is preceded by this check.
    """
    try:
        run.watch.check()
    except NonFiniteLoss as exc:
        run.write(nonfinite_record(exc.step, exc.what, exc.value))
        epoch = (exc.step - 1) // run.per_epoch + 1
        kept = (
            f"best checkpoint (step {run.best_step}) in {run.out}" if run.best_step else "no checkpoint yet"
        )
        raise RunFailed(
            f"{exc.what} is {exc.value} at step {exc.step} (epoch {epoch}); stopped, "
            f"{kept} kept: lower --lr or check the train file"
        ) from None


def evaluate(run: Run, progress: TrainProgress, *, selectable: bool = True) -> None:
    """Evaluate on STS-B dev, keep the model if it is the best so far, and say so."""
    result = evaluate_and_keep(run, selectable=selectable)
    if result is None:
        return
    score, note = result
    progress.message(f"step {run.step}: STS-B dev Spearman {score * 100:.2f}  ({note})")
    progress.update(run.step, dev=score)


def finish(run: Run) -> TrainResult:
    """The end record, and what the run returns."""
    wall = run.elapsed()
    records = run.log.records() if run.log is not None else []
    curve = [(r["step"], r["dev_spearman"]) for r in records if r.get("event") == "eval"]
    run.write(
        end_record(step=run.step, best_step=run.best_step, best_dev_spearman=run.best_dev, wall_seconds=wall)
    )
    distributed.barrier()
    return TrainResult(run.out, run.step, run.best_step, run.best_dev, wall, curve)


def _describe(distance) -> str:
    if isinstance(distance, dict):
        return f"d = {distance['start']:.1f} at the first step, {distance['end']:.1f} at the last (eq. 4)"
    return f"d = {distance:.1f} (MoCoSE eq. 4)"
