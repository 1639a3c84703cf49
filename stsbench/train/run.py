"""A training run's explicit state, and what a run does besides its steps.

Build, resume, make a step's views, evaluate and keep the best, save the resumable state.

:class:`Run` holds what is built once (model, method, optimizer, dev set) and what changes as the run
goes (step, best score). The loop (:mod:`stsbench.train.loop`) reads top to bottom over it.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from stsbench.data.training import TrainData, load_train_data
from stsbench.errors import StsbenchError
from stsbench.train import checkpoint as ckpt
from stsbench.train import distributed
from stsbench.train.config import (
    ResolvedConfig,
    TrainConfig,
    effective_queue_size,
    eval_pooler,
    finalize,
    resume_conflicts,
)
from stsbench.train.data import BatchOrder, length_buckets_of
from stsbench.train.evaluate import DevSet, TestSets, dev_scores, sts_test_average
from stsbench.train.graph import graph_problems
from stsbench.train.log import TrainLog, eval_record, finite_or_none
from stsbench.train.methods.base import Method, build_method
from stsbench.train.methods.views import Views
from stsbench.train.model import ContrastiveEncoder, load_backbone
from stsbench.train.step import FiniteWatch, Precision, check_tf32, decay_groups, make_optimizer
from stsbench.train.tracking import Trackers


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
    per_epoch: int
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
    per_epoch = order.per_epoch
    total = cfg.max_steps or cfg.epochs * per_epoch
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
        per_epoch=per_epoch,
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


def evaluate_and_keep(run: Run, *, selectable: bool = True) -> tuple[float, str] | None:
    """STS-B dev Spearman of the model now; export it as the best checkpoint if it beats the best so far.

    The best by STS-B dev, or with ``select_on: sts-test`` by the mean of the seven STS test sets (MoCoSE's
    official selection; the dev score is logged beside it). ``selectable=False``: the backbone before
    training, logged but never kept. Returns the dev score and a note for the terminal (rank 0), None elsewhere.
    """
    if not run.ctx.main:
        return None
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
    run.write(
        eval_record(
            step=run.step,
            score=dev,
            best=improved,
            time=run.elapsed(),
            sts_test_avg=tests,
            alignment=scores.alignment,
            uniformity=scores.uniformity,
        )
    )
    on = "" if tests is None else f"STS test mean {tests * 100:.2f}, "
    note = (
        f"{on}best, saved"
        if improved
        else f"{on}before training"
        if not selectable
        else f"{on}best {previous * 100:.2f}"
    )
    return dev, note


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
