"""The training loop, top to bottom.

Setup, model, data, then per step: lr, views, forward, loss, backward, step, method state (EMA, queue),
periodic dev evaluation, best checkpoint, resumable state.

Every method runs through this one loop; a method only brings its views, its loss and its state
(:mod:`stsbench.train.methods`). The run's state is one :class:`Run`; building, resuming,
evaluating and saving are named functions here, one step is :func:`~stsbench.train.step.train_step`. Under ``torchrun`` the loop runs in every process
(:mod:`stsbench.train.distributed`): each encodes its slice of the global batch, DDP keeps the weights
equal, and rank 0 alone evaluates, logs and saves.

The host reads the device once a log interval, not once a step: the loss and its parts stay tensors until
a log point, and non-finite values are recorded on the device and checked at each log, evaluation and save
point, always before anything is evaluated or saved, so a NaN never reaches a checkpoint; the error still
names the step that went bad. Steps after it (up to the check) run on NaN weights that are never kept.

**The run.** Build, resume, make a step's views, evaluate and keep the best, save the resumable state.

:class:`Run` holds what is built once (model, method, optimizer, dev set) and what changes as the run
goes (step, best score). The loop reads top to bottom over it.

**The batches.** Each step's views, made ahead in a background thread on CUDA, on demand elsewhere.

A step's views are a pure function of the step (:func:`stsbench.train.loop.batch_views`: rows from
``(seed, epoch, index)``, draws from their own generator), so making them ahead changes nothing: the same
tensors reach the step, in the same order, and a resumed run starts the thread at its saved step.

Why a thread, not a ``torch.utils.data.DataLoader`` with worker processes: a worker would need a copy of
the method (for ESimCSE and MoCoSE, with its encoders), and the work is small (tokenising 64 sentences,
ESimCSE's repetition, MLM masking, padding); the fast tokenizer releases the GIL while it encodes. The
thread gets its own copy of the tokenizer, so no tokenizer is used by two threads at once.
"""

from __future__ import annotations

import copy
import math
import random
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch

from stsbench.data.training import TrainData, load_train_data
from stsbench.errors import RunFailed, StsbenchError
from stsbench.files import output_lock
from stsbench.paths import resolve_data_dir
from stsbench.train import check_torch, distributed
from stsbench.train import checkpoint as ckpt
from stsbench.train.augment.base import check_augmentations
from stsbench.train.config import (
    ResolvedConfig,
    TrainConfig,
    check_complete,
    effective_queue_size,
    eval_pooler,
    finalize,
    resume_conflicts,
)
from stsbench.train.data import BatchOrder, length_buckets_of
from stsbench.train.evaluate import DevSet, TestSets, dev_scores, sts_test_average
from stsbench.train.graph import GraphedStep, graph_problems
from stsbench.train.log import TrainLog, TrainProgress, cpu_kind, finite_or_none
from stsbench.train.methods.base import Method, Views, build_method
from stsbench.train.model import ContrastiveEncoder, load_backbone, resolve_backbone
from stsbench.train.schedule import epoch_of, linear_lr
from stsbench.train.step import (
    FiniteWatch,
    NonFiniteLoss,
    Parts,
    Precision,
    check_tf32,
    decay_groups,
    host_values,
    make_optimizer,
    tf32,
    train_step,
)
from stsbench.train.tracking import Trackers, check_installed, open_trackers

# -- run -----------------------------------------------------------------------------------------------------


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch (dropout, new-layer initialisation)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class TrainNet(torch.nn.Module):
    """Encoder and method as one module, whose forward is the loss: what DDP wraps with several processes."""

    def __init__(self, model: ContrastiveEncoder, method: Method) -> None:
        super().__init__()
        self.model = model
        self.method = method

    def forward(self, views: Views) -> tuple[torch.Tensor, dict[str, torch.Tensor | float]]:
        return self.method.loss(self.model, views)


def build(cfg: TrainConfig | ResolvedConfig, backbone_path: Path | str, device: str):
    """Backbone, tokenizer, the encoder with its new layers, the method and the optimizer (seeded)."""
    if not isinstance(cfg, ResolvedConfig):  # a bare config: resolved against its train file first
        data = load_train_data(cfg)
        cfg = finalize(cfg, data.supervised, data.identity)
    backbone, tokenizer = load_backbone(backbone_path, cfg.dropout)
    if eval_pooler(cfg) == "cls" and getattr(backbone, "pooler", None) is None:
        raise StsbenchError(
            f"{cfg.model} has no pooler layer to hold the cls MLP at evaluation; "
            "train with --mlp-only-train or another --pooler"
        )
    generator = torch.Generator().manual_seed(cfg.seed)
    if cfg.pooler_activation == "none" and cfg.pooler == "cls" and not cfg.mlp_only_train:
        raise StsbenchError(
            "--pooler-activation none keeps no tanh, which BERT's pooler (where the checkpoint keeps the MLP) "
            "has; train it with --mlp-only-train (evaluated on [CLS], as MoCoSE)"
        )
    model = ContrastiveEncoder(
        backbone, cfg.pooler, bool(cfg.mlp_only_train), mlp_activation=cfg.pooler_activation == "tanh"
    )
    model.init_new_layers(generator, from_backbone=cfg.pooler_init == "backbone")
    model.to(device)
    method = build_method(cfg, tokenizer, model, generator=generator)
    params = decay_groups([model, method], cfg.weight_decay, cfg.weight_decay_exclude)
    optimizer = make_optimizer(
        params, lr=cfg.lr, weight_decay=cfg.weight_decay, device=device, kind=cfg.optimizer
    )
    return model, tokenizer, method, optimizer


def compile_model(
    model: ContrastiveEncoder, cfg: TrainConfig, method: Method | None = None
) -> ContrastiveEncoder:
    """``--compile``: torch.compile the backbone's forward in place; returns ``model``.

    In place, the state dict keeps its names, so checkpoints and resumes are as without it. The
    method's frozen encoders (:meth:`~stsbench.train.methods.base.Method.frozen_modules`) are compiled too.
    Compiled kernels pay off with static shapes (``--pad-to-max-length``, one length bucket); with
    shapes that change every batch torch recompiles for new lengths, then marks them dynamic.
    """
    if cfg.compile:
        for encoder in [model, *(method.frozen_modules() if method is not None else [])]:
            encoder.backbone.compile()
    return model


@dataclass
class Run:
    """Everything one process of a run holds: built once by :func:`setup`, then ``step`` and ``best`` move."""

    cfg: ResolvedConfig  # the config and what the data and the device resolved it to
    out: Path
    data: TrainData
    ctx: distributed.Context
    precision: Precision
    model: ContrastiveEncoder
    tokenizer: Any
    method: Method
    optimizer: torch.optim.Optimizer
    net: torch.nn.Module | None  # DDP over (model, method) with several processes
    dev: DevSet | None  # rank 0 alone evaluates
    tests: TestSets | None  # select_on: sts-test (rank 0)
    order: BatchOrder  # which rows make each batch (shuffled, or within length buckets)
    total: int
    meta: dict[str, Any]  # what every exported checkpoint's stsbench.json holds
    watch: FiniteWatch
    started: float = field(default_factory=time.perf_counter)
    log: TrainLog | None = None
    trackers: Trackers | None = None  # --report-to: the same records to TensorBoard, W&B, trackio
    step: int = 0
    best: float | None = None  # the selection score of the kept checkpoint (STS-B dev, or the test-set mean)
    best_step: int | None = None
    best_dev: float | None = None  # the kept checkpoint's STS-B dev Spearman
    elapsed_before: float = 0.0  # seconds of the run's earlier life (before a resume)

    @property
    def device(self) -> str:
        """The device this process trains on."""
        return self.ctx.device

    @property
    def per_epoch(self) -> int:
        """Steps an epoch."""
        return self.order.per_epoch

    def elapsed(self) -> float:
        """Wall seconds of the whole run so far, across resumes."""
        return self.elapsed_before + time.perf_counter() - self.started

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` to the log and send it to the trackers (rank 0 alone has them)."""
        if self.log is not None:
            self.log.write(record)
        if self.trackers is not None:
            self.trackers.record(record)


def setup(
    cfg: ResolvedConfig,
    *,
    data: TrainData,
    ctx: distributed.Context,
    backbone_path: Path | str,
    data_dir: Path,
    resume: bool,
    overwrite: bool,
    started: float,
) -> Run:
    """Output folder, threads, seeds, model, method, optimizer, dev set, the run's length; DDP if several."""
    device = ctx.device
    precision = Precision(cfg.precision, device)
    check_tf32(cfg.tf32, device)  # TF32 itself is on around each training step only (loop.py)
    if cfg.cuda_graph:
        problems = graph_problems(
            device=device,
            pad_to_max_length=cfg.pad_to_max_length,
            length_buckets=cfg.length_buckets,
            precision=cfg.precision,
            world=ctx.world,
        )
        if problems:
            raise StsbenchError(f"--cuda-graph needs {'; '.join(problems)}")
    out = Path(cfg.output).expanduser()
    if ctx.main:
        ckpt.prepare_output(out, resume, overwrite)
    distributed.barrier()
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    cfg = cfg.on_device(device, ctx.world)  # length_buckets by device: in the resolution, not the config
    seed_everything(cfg.seed + ctx.rank)  # dropout differs between processes; new layers use cfg.seed
    model, tokenizer, method, optimizer = build(cfg, backbone_path, device)
    cfg = cfg.with_backbone_dropout(getattr(model.backbone.config, "hidden_dropout_prob", None))
    compile_model(model, cfg, method)
    dev = DevSet.load(data_dir, tokenizer, cfg.eval_batch_size) if ctx.main else None
    on_tests = ctx.main and cfg.select_on == "sts-test"
    tests = TestSets.load(data_dir, tokenizer, cfg.eval_batch_size) if on_tests else None
    buckets = None
    if cfg.batch_buckets is not None:  # ESimCSE COLING Table 6: every batch from one bucket of lengths
        texts = [row[0] for row in data.rows]
        buckets = length_buckets_of(texts, cfg.batch_buckets, cfg.batch_bucket_unit, tokenizer)
    order = BatchOrder(len(data), cfg.batch_size, ctx.world, buckets)
    total = cfg.max_steps or cfg.epochs * order.per_epoch
    augment_corpus(method, data, order, total, cfg.seed, ctx)
    method.start(total)
    net = None
    if ctx.world > 1:
        from torch.nn.parallel import DistributedDataParallel

        net = DistributedDataParallel(
            TrainNet(model, method),
            device_ids=[ctx.local_rank] if device.startswith("cuda") else None,
            find_unused_parameters=True,  # e.g. BERT's own pooler, computed but not in the loss
            broadcast_buffers=False,
        )
    meta = {
        "method": method.name,
        "training": cfg.to_dict(),
        "resolution": cfg.resolution.to_dict(),
        "backbone": cfg.model,
        "queue_size": effective_queue_size(cfg, ctx.world),
        "processes": ctx.world,
        "global_batch_size": cfg.batch_size * ctx.world,
    }
    if buckets is not None:  # what the buckets hold, as measured on this corpus
        meta["batch_buckets"] = {
            "spec": cfg.batch_buckets,
            "unit": cfg.batch_bucket_unit,
            "sizes": order.sizes(),
        }
    distance = method.traceable_distance(cfg.batch_size * ctx.world)
    if distance is not None:
        meta["traceable_distance"] = distance
    return Run(
        cfg=cfg,
        out=out,
        data=data,
        ctx=ctx,
        precision=precision,
        model=model,
        tokenizer=tokenizer,
        method=method,
        optimizer=optimizer,
        net=net,
        dev=dev,
        tests=tests,
        order=order,
        total=total,
        meta=meta,
        watch=FiniteWatch(device),
        started=started,
    )


def augment_corpus(method: Method, data: TrainData, order: BatchOrder, total: int, seed: int, ctx) -> None:
    """Text augmentations computed once per sentence: every sentence this process will read, before step 1."""
    texts = [a for a in method.augmentations if a.stage == "text"]
    if not texts:
        return
    rows: set[int] = set()
    for step in range(total):
        epoch, index = divmod(step, order.per_epoch)
        rows.update(int(r) for r in order.rows(seed, epoch, index, ctx.rank))
    sentences = [data.rows[r][0] for r in sorted(rows)]
    for aug in texts:
        aug.corpus(sentences)


def check_resumable(saved: dict, cfg: ResolvedConfig) -> None:
    """Refuse to resume with options that change what is computed (one line naming the first four)."""
    now = cfg.to_dict()
    changed = resume_conflicts(saved, cfg)
    if changed:
        diffs = ", ".join(f"{k}: {saved.get(k)!r} -> {now.get(k)!r}" for k in changed[:4])
        raise StsbenchError(
            f"--resume with other options than the saved run ({diffs}); use the same options "
            "or start again with --overwrite"
        )


def restore(run: Run) -> None:
    """Load ``DIR/last`` into ``run``: weights, method state, optimizer, scaler, step, best, RNG streams."""
    state = ckpt.load_state(run.out)
    check_resumable(state["config"], run.cfg)
    saved_world = int(state.get("processes", 1))
    if saved_world != run.ctx.world:
        raise StsbenchError(
            f"--resume with {run.ctx.world} process(es), but the run was saved by {saved_world}; "
            "resume with the same number"
        )
    run.model.load_state_dict(state["model"])
    run.method.load_state_dict(state["method"])
    per_rank = state.get("method_extra_per_rank")
    run.method.load_extra_state(per_rank[run.ctx.rank] if per_rank else state["method_extra"], run.device)
    run.optimizer.load_state_dict(state["optimizer"])
    if run.precision.scaler is not None and "scaler" in state:
        run.precision.scaler.load_state_dict(state["scaler"])
    run.step, run.best_dev, run.best_step = state["step"], state["best_dev_spearman"], state["best_step"]
    run.best = state.get("best_selection", run.best_dev)
    run.elapsed_before = state["wall_seconds"]
    states = state["rng_per_rank"][run.ctx.rank] if "rng_per_rank" in state else state["rng"]
    ckpt.set_rng_states(states, run.device)


def batch_views(run: Run, step: int) -> Views:
    """The views of step ``step`` (0-based) for this process, on the CPU.

    A pure function of ``(seed, epoch, index, rank)``, which is why a resumed run needs no sampler state.
    """
    cfg, ctx = run.cfg, run.ctx
    epoch, index = divmod(step, run.per_epoch)
    rows = run.order.rows(cfg.seed, epoch, index, ctx.rank)
    rng = np.random.default_rng([cfg.seed, epoch, index, 1] + ([ctx.rank] if ctx.world > 1 else []))
    return run.method.make_views([run.data.rows[i] for i in rows], rows, rng)


def evaluate(run: Run, progress: TrainProgress, *, selectable: bool = True) -> None:
    """STS-B dev Spearman of the model now, said; exported as the best checkpoint if it beats the best so far.

    The best by STS-B dev, or with ``select_on: sts-test`` by the mean of the seven STS test sets (MoCoSE's
    official selection; the dev score is logged beside it). ``selectable=False``: the backbone before
    training, logged but never kept. Rank 0 alone evaluates.
    """
    if not run.ctx.main:
        return
    scores = dev_scores(run.model, run.dev, run.device)
    dev = scores.spearman
    tests = sts_test_average(run.model, run.tests, run.device) if run.tests is not None else None
    score = dev if tests is None else tests
    previous = run.best if run.best is not None else -math.inf
    improved = selectable and (run.best_step is None or (math.isfinite(score) and score > previous))
    if improved:
        run.best, run.best_dev, run.best_step = finite_or_none(score), finite_or_none(dev), run.step
        extra = {**run.meta, "best_dev_spearman": run.best_dev, "step": run.step}
        if tests is not None:
            extra["best_sts_test_avg"] = run.best
        ckpt.export_model(
            run.out, model=run.model, tokenizer=run.tokenizer, eval_pooler=eval_pooler(run.cfg), meta=extra
        )
    # best: kept as the checkpoint; sts_test_avg: what select_on: sts-test kept it by; alignment and uniformity:
    # l_align and l_uniform of the same dev embeddings (stsbench align-uniform --split dev), null when not finite
    record = {"event": "eval", "step": run.step, "dev_spearman": dev, "best": improved, "time": run.elapsed()}
    if tests is not None:
        record["sts_test_avg"] = tests
    if scores.alignment is not None or scores.uniformity is not None:
        record |= {
            "alignment": finite_or_none(scores.alignment),
            "uniformity": finite_or_none(scores.uniformity),
        }
    run.write(record)
    on = "" if tests is None else f"STS test mean {tests * 100:.2f}, "
    note = "best, saved" if improved else f"best {previous * 100:.2f}" if selectable else "before training"
    progress.message(f"step {run.step}: STS-B dev Spearman {dev * 100:.2f}  ({on}{note})")
    progress.update(run.step, dev=dev)


def save_resumable(run: Run) -> None:
    """Write ``DIR/last``: everything :func:`restore` needs to go on bit for bit (every process's RNGs)."""
    rngs = distributed.all_objects(ckpt.rng_states(run.device))
    extras = distributed.all_objects(run.method.extra_state()) if run.method.state_per_process else None
    if not run.ctx.main:
        return
    cfg, step, scaler = run.cfg, run.step, run.precision.scaler
    state = {
        "step": step,
        "epoch": step // run.per_epoch,
        "config": cfg.to_dict(),
        "resolution": cfg.resolution.to_dict(),
        "processes": run.ctx.world,
        "model": run.model.state_dict(),
        "method": run.method.state_dict(),
        "method_extra": run.method.extra_state(),
        **({"method_extra_per_rank": extras} if extras is not None else {}),
        "optimizer": run.optimizer.state_dict(),
        "scheduler": {"name": "linear", "step": step, "total": run.total, "warmup_steps": cfg.warmup_steps},
        **({"scaler": scaler.state_dict()} if scaler is not None else {}),
        "best_dev_spearman": run.best_dev,
        "best_selection": run.best,
        "best_step": run.best_step,
        "rng": rngs[0],
        "rng_per_rank": rngs,
        "wall_seconds": run.elapsed(),
    }
    ckpt.save_state(run.out, state)


# -- batches -------------------------------------------------------------------------------------------------


def prefetch_depth(device: str) -> int:
    """Steps made ahead: 4 on CUDA; 0 elsewhere, where the step itself keeps every CPU core busy."""
    return 4 if torch.device(device).type == "cuda" else 0


class Batches:
    """The views of steps ``start`` to ``stop - 1``, in order, on ``device``.

    ``depth`` > 0: a worker thread makes up to ``depth`` steps ahead (in pinned memory on CUDA, so the copy
    to the device does not block); 0: each step's views are made when asked. Use as a context manager, so
    that the thread stops with the run, however it ends.
    """

    def __init__(
        self, make: Callable[[int], Views], *, start: int, stop: int, device: str, depth: int
    ) -> None:
        self.make, self.device, self.depth, self.stop = make, device, depth, stop
        self.pin = depth > 0 and torch.device(device).type == "cuda"
        self.pool = ThreadPoolExecutor(1) if depth > 0 else None
        self.ahead: deque[tuple[int, Future]] = deque()  # the steps asked of the thread, in order
        self.next = start
        self._fill()

    def _made(self, step: int) -> Views:
        views = self.make(step)
        return views.map(torch.Tensor.pin_memory) if self.pin else views

    def _fill(self) -> None:
        while self.pool is not None and len(self.ahead) < self.depth and self.next < self.stop:
            self.ahead.append((self.next, self.pool.submit(self._made, self.next)))
            self.next += 1

    def get(self, step: int) -> Views:
        """The views of ``step`` on the device (steps must be asked for in order)."""
        if self.pool is None:
            return self.make(step).to(self.device)
        made, views = self.ahead.popleft()
        if made != step:
            raise RuntimeError(f"the views of step {made} came for step {step}")  # a caller skipped a step
        self._fill()
        return views.result().to(self.device, non_blocking=self.pin)  # the thread's error raised here

    def close(self) -> None:
        """Stop the thread (the steps made ahead that nobody will ask for are dropped)."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Batches:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
            run.trackers = open_trackers(run.cfg, run.out, run.step if resume else None)
            if run.trackers is not None:
                held.callback(run.trackers.close)
        graphed = None  # --cuda-graph: the step replayed from one CUDA graph (made after a resume's restore)
        if cfg.cuda_graph:
            graphed = GraphedStep(
                run.model,
                run.method,
                run.optimizer,
                max_grad_norm=cfg.max_grad_norm,
                precision=run.precision,
                watch=run.watch,
            )
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
                    run.write({"event": "compile", "step": run.step, "seconds": time.perf_counter() - tick})
                after_step(run, progress, loss=loss, parts=parts, lr=lr)
                if on_step is not None:
                    on_step(run.step)
        return finish(run)
    finally:
        held.close()
        if ctx.world > 1:
            distributed.cleanup()


class Witnessed(Exception):
    """A replay reached the step it witnesses (``train --witness-steps``)."""


def witness_until(steps: int) -> Callable[[int], None]:
    """An ``on_step`` that stops a run after ``steps`` steps, its log and evaluations as the whole run's."""

    def stop(step: int) -> None:
        if step >= steps:
            raise Witnessed(step)

    return stop


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
    distance, dropout = run.meta.get("traceable_distance"), run.cfg.backbone_dropout
    record = {"event": "start", "step": 0, "total_steps": run.total, "steps_per_epoch": run.per_epoch}
    record |= {
        "train_rows": len(run.data),
        "device": run.device,
        "processes": run.ctx.world,
        "cpu": cpu_kind(),
    }
    if run.device.startswith("cuda"):  # the GPU kind a carry of this run needs
        record["gpu"] = torch.cuda.get_device_name(run.device)
    record["global_batch_size"] = run.cfg.batch_size * run.ctx.world
    if distance is not None:  # MoCoSE eq. 4, where the method has one
        record["traceable_distance"] = distance
    if dropout is not None:  # the hidden dropout the backbone trains with (dropout, else its own config's)
        record["backbone_dropout"] = dropout
    run.write({**record, "config": run.cfg.to_dict()})
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
        epoch = epoch_of(step, run.per_epoch)
        record = {"event": "train", "step": step, "epoch": epoch, "loss": value, "lr": lr, **numbers}
        run.write({**record, "time": run.elapsed()})
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
        # the value as text: JSON has no NaN
        run.write({"event": "nonfinite", "step": exc.step, "what": exc.what, "value": str(exc.value)})
        epoch = epoch_of(exc.step, run.per_epoch)
        kept = (
            f"best checkpoint (step {run.best_step}) in {run.out}" if run.best_step else "no checkpoint yet"
        )
        raise RunFailed(
            f"{exc.what} is {exc.value} at step {exc.step} (epoch {epoch}); stopped, "
            f"{kept} kept: lower --lr or check the train file"
        ) from None


def finish(run: Run) -> TrainResult:
    """The end record, and what the run returns."""
    wall = run.elapsed()
    records = run.log.records() if run.log is not None else []
    curve = [(r["step"], r["dev_spearman"]) for r in records if r.get("event") == "eval"]
    best = {"best_step": run.best_step, "best_dev_spearman": run.best_dev}
    run.write({"event": "end", "step": run.step, **best, "wall_seconds": wall})
    distributed.barrier()
    return TrainResult(run.out, run.step, run.best_step, run.best_dev, wall, curve)


def _describe(distance) -> str:
    if isinstance(distance, dict):
        return f"d = {distance['start']:.1f} at the first step, {distance['end']:.1f} at the last (eq. 4)"
    return f"d = {distance:.1f} (MoCoSE eq. 4)"
