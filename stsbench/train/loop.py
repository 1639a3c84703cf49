"""The training loop, top to bottom.

Setup, model, data, then per step: lr, views, forward, loss, backward, step, method state (EMA, queue),
periodic dev evaluation, best checkpoint, resumable state.

Every method runs through this one loop; a method only brings its views, its loss and its state
(:mod:`stsbench.train.methods`). Under ``torchrun`` the loop runs in every process
(:mod:`stsbench.train.distributed`): each encodes its slice of the global batch, DDP keeps the weights
equal, and rank 0 alone evaluates, logs and saves.
"""

from __future__ import annotations

import contextlib
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

import numpy as np
import torch

from stsbench.errors import StsbenchError
from stsbench.paths import resolve_data_dir
from stsbench.train import checkpoint as ckpt
from stsbench.train import distributed
from stsbench.train.config import (
    RESUME_MAY_CHANGE,
    TrainConfig,
    effective_queue_size,
    eval_pooler,
    finalize,
)
from stsbench.train.data import batch_rows, batches_per_epoch, read_train_file
from stsbench.train.evaluate import DevSet, dev_spearman
from stsbench.train.log import TrainLog, TrainProgress, finite_or_none
from stsbench.train.methods import Method, Views, build_method
from stsbench.train.model import ContrastiveEncoder, load_backbone, resolve_backbone
from stsbench.train.schedule import linear_lr


class NonFiniteLoss(RuntimeError):
    """The loss (or the gradient norm) of a step is NaN or infinite."""

    def __init__(self, what: str, value: float) -> None:
        super().__init__(f"{what} is {value}")
        self.what, self.value = what, value


@dataclass
class TrainResult:
    """What a finished run returns (the same numbers are in ``DIR/train_log.jsonl``)."""

    output: Path
    steps: int
    best_step: int | None
    best_dev_spearman: float | None
    wall_seconds: float
    dev_curve: list[tuple[int, float | None]]


def seed_everything(seed: int) -> None:
    """Seed Python, numpy and torch (dropout, new-layer initialisation)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class Precision:
    """``--precision``: autocast to bf16/fp16 on CUDA (fp16 with a gradient scaler), or plain fp32.

    The losses cast to fp32 themselves (:func:`stsbench.train.losses.cosine_matrix`).
    """

    def __init__(self, name: str = "fp32", device: str = "cpu") -> None:
        self.name = name
        self.device_type = torch.device(device).type
        if name != "fp32" and self.device_type != "cuda":
            raise StsbenchError(f"--precision {name} needs a CUDA device; on {device} train with fp32")
        self.dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(name)
        self.scaler = torch.amp.GradScaler("cuda") if name == "fp16" else None

    def autocast(self):
        """The forward's context: autocast for bf16/fp16, nothing for fp32."""
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device_type, dtype=self.dtype)


class TrainNet(torch.nn.Module):
    """Encoder and method as one module, whose forward is the loss: what DDP wraps with several processes."""

    def __init__(self, model: ContrastiveEncoder, method: Method) -> None:
        super().__init__()
        self.model = model
        self.method = method

    def forward(self, views: Views) -> tuple[torch.Tensor, dict[str, float]]:
        return self.method.loss(self.model, views)


def train_step(
    model: ContrastiveEncoder,
    method: Method,
    optimizer: torch.optim.Optimizer,
    views: Views,
    lr: float,
    max_grad_norm: float,
    net: Callable[[Views], tuple[torch.Tensor, dict[str, float]]] | None = None,
    precision: Precision | None = None,
) -> tuple[float, dict[str, float]]:
    """One optimisation step: forward, loss, backward, clip, step, then the method's state update.

    ``net`` computes the loss (the DDP wrapper with several processes; default ``method.loss`` on
    ``model``). Returns the loss (of the global batch) and its parts for the log.
    """
    precision = precision or Precision()
    for group in optimizer.param_groups:
        group["lr"] = lr
    model.train()
    with precision.autocast():
        loss, parts = net(views) if net is not None else method.loss(model, views)
    logged = parts.pop("loss", float(loss.detach()))  # the backward loss is it, scaled: finite alike
    if not math.isfinite(logged):
        raise NonFiniteLoss("the loss", logged)
    scaler = precision.scaler
    (scaler.scale(loss) if scaler is not None else loss).backward()
    if scaler is not None:
        scaler.unscale_(optimizer)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    norm = torch.nn.utils.clip_grad_norm_(params, max_grad_norm if max_grad_norm > 0 else math.inf)
    if scaler is not None:  # an overflow skips the step and lowers the scale: fp16's normal course
        scaler.step(optimizer)
        scaler.update()
    elif not torch.isfinite(norm):
        optimizer.zero_grad(set_to_none=True)
        raise NonFiniteLoss("the gradient norm", float(norm))
    else:
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    method.after_step(model, views)
    return logged, {**parts, "grad_norm": float(norm)}


def build(cfg: TrainConfig, backbone_path: Path | str, device: str):
    """Backbone, tokenizer, the encoder with its new layers, the method and the optimizer (seeded)."""
    backbone, tokenizer = load_backbone(backbone_path, cfg.dropout)
    if eval_pooler(cfg) == "cls" and getattr(backbone, "pooler", None) is None:
        raise StsbenchError(
            f"{cfg.model} has no pooler layer to hold the cls MLP at evaluation; "
            "train with --mlp-only-train or another --pooler"
        )
    generator = torch.Generator().manual_seed(cfg.seed)
    model = ContrastiveEncoder(backbone, cfg.pooler, bool(cfg.mlp_only_train))
    model.init_new_layers(generator)
    model.to(device)
    method = build_method(cfg, tokenizer, model, generator)
    params = [p for p in chain(model.parameters(), method.parameters()) if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    return model, tokenizer, method, optimizer


def _check_resumable(saved: dict, cfg: TrainConfig) -> None:
    now = cfg.to_dict()
    changed = sorted(
        k for k in set(saved) | set(now) if k not in RESUME_MAY_CHANGE and saved.get(k) != now.get(k)
    )
    if changed:
        diffs = ", ".join(f"{k}: {saved.get(k)!r} -> {now.get(k)!r}" for k in changed[:4])
        raise StsbenchError(
            f"--resume with other options than the saved run ({diffs}); use the same options "
            "or start again with --overwrite"
        )


def train(
    cfg: TrainConfig,
    resume: bool = False,
    overwrite: bool = False,
    show_progress: bool = True,
    on_step: Callable[[int], None] | None = None,
) -> TrainResult:
    """Train ``cfg.method`` and keep the best STS-B dev checkpoint in ``cfg.output``.

    ``on_step(step)`` is called after each completed step (after any checkpoint of that step). Under
    ``torchrun`` every process calls this; ``cfg.batch_size`` is the batch of one process.
    """
    started = time.perf_counter()
    # -- setup: data, output folder, processes, device, seeds ------------------------------------------------
    data = read_train_file(cfg.train_file)
    finalize(cfg, data.supervised)
    backbone_path = resolve_backbone(cfg.model)
    data_dir = resolve_data_dir(cfg.data_dir)
    out = Path(cfg.output).expanduser()
    ctx = distributed.setup(cfg.device)
    world, rank, main = ctx.world, ctx.rank, ctx.main
    try:
        device = ctx.device
        precision = Precision(cfg.precision, device)
        if main:
            ckpt.prepare_output(out, resume, overwrite)
        distributed.barrier()
        if cfg.threads is not None:
            torch.set_num_threads(cfg.threads)
        if cfg.length_buckets is None:  # less padding pays on CPU; on a GPU one big pass is faster
            cfg.length_buckets = 4 if device == "cpu" else 1
        seed_everything(cfg.seed + rank)  # dropout differs between processes; new layers use cfg.seed

        # -- model, method, optimizer, dev set -------------------------------------------------------------
        model, tokenizer, method, optimizer = build(cfg, backbone_path, device)
        dev = DevSet.load(data_dir, tokenizer, cfg.eval_batch_size) if main else None
        per_epoch = batches_per_epoch(len(data), cfg.batch_size, world)
        total = cfg.max_steps or cfg.epochs * per_epoch
        method.start(total)
        net = None
        if world > 1:
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
            "backbone": cfg.model,
            "queue_size": effective_queue_size(cfg, world),
            "processes": world,
            "global_batch_size": cfg.batch_size * world,
        }
        distance = method.traceable_distance(cfg.batch_size * world)
        if distance is not None:
            meta["traceable_distance"] = distance

        step, best, best_step, elapsed_before = 0, None, None, 0.0
        if resume:
            state = ckpt.load_state(out)
            _check_resumable(state["config"], cfg)
            saved_world = int(state.get("processes", 1))
            if saved_world != world:
                raise StsbenchError(
                    f"--resume with {world} process(es), but the run was saved by {saved_world}; "
                    "resume with the same number"
                )
            model.load_state_dict(state["model"])
            method.load_state_dict(state["method"])
            method.load_extra_state(state["method_extra"], device)
            optimizer.load_state_dict(state["optimizer"])
            if precision.scaler is not None and "scaler" in state:
                precision.scaler.load_state_dict(state["scaler"])
            step, best, best_step = state["step"], state["best_dev_spearman"], state["best_step"]
            elapsed_before = state["wall_seconds"]
            ckpt.set_rng_states(state["rng_per_rank"][rank] if "rng_per_rank" in state else state["rng"])
        log = TrainLog(out / "train_log.jsonl", keep_until_step=step if resume else None) if main else None

        def write(record: dict) -> None:
            if log is not None:
                log.write(record)

        def evaluate_and_keep(step: int, selectable: bool = True) -> float | None:
            nonlocal best, best_step
            if not main:
                return None
            score = dev_spearman(model, dev, device)
            previous = best if best is not None else -math.inf
            improved = selectable and (best_step is None or (math.isfinite(score) and score > previous))
            if improved:
                best, best_step = finite_or_none(score), step
                ckpt.export_model(
                    out,
                    model,
                    tokenizer,
                    eval_pooler(cfg),
                    {**meta, "best_dev_spearman": best, "step": step},
                )
            write(
                {
                    "event": "eval",
                    "step": step,
                    "dev_spearman": score,
                    "best": improved,
                    "time": elapsed_before + time.perf_counter() - started,
                }
            )
            note = (
                "best, saved"
                if improved
                else "before training"
                if not selectable
                else f"best {previous * 100:.2f}"
            )
            progress.message(f"step {step}: STS-B dev Spearman {score * 100:.2f}  ({note})")
            return score

        def save_resumable(step: int) -> None:
            rngs = distributed.all_objects(ckpt.rng_states())  # every process's, for an exact resume
            if not main:
                return
            ckpt.save_state(
                out,
                {
                    "step": step,
                    "epoch": step // per_epoch,
                    "config": cfg.to_dict(),
                    "processes": world,
                    "model": model.state_dict(),
                    "method": method.state_dict(),
                    "method_extra": method.extra_state(),
                    "optimizer": optimizer.state_dict(),
                    "scheduler": {
                        "name": "linear",
                        "step": step,
                        "total": total,
                        "warmup_steps": cfg.warmup_steps,
                    },
                    **({"scaler": precision.scaler.state_dict()} if precision.scaler is not None else {}),
                    "best_dev_spearman": best,
                    "best_step": best_step,
                    "rng": rngs[0],
                    "rng_per_rank": rngs,
                    "wall_seconds": elapsed_before + time.perf_counter() - started,
                },
            )

        # -- the loop --------------------------------------------------------------------------------------
        with TrainProgress(total, step, show_progress and main) as progress:
            if not resume:
                write(
                    {
                        "event": "start",
                        "step": 0,
                        "total_steps": total,
                        "steps_per_epoch": per_epoch,
                        "train_rows": len(data),
                        "device": device,
                        "processes": world,
                        "global_batch_size": cfg.batch_size * world,
                        **({"traceable_distance": distance} if distance is not None else {}),
                        "config": cfg.to_dict(),
                    }
                )
                if distance is not None:
                    progress.message(f"maximum traceable distance: {_describe(distance)}")
                if cfg.eval_at_start:
                    progress.update(0, dev=evaluate_and_keep(0, selectable=False))
            while step < total:
                epoch, index = divmod(step, per_epoch)
                if index == 0:
                    method.on_epoch_start(epoch)
                rows = batch_rows(data, cfg.seed, epoch, index, cfg.batch_size, rank, world)
                rng = np.random.default_rng([cfg.seed, epoch, index, 1] + ([rank] if world > 1 else []))
                views = method.make_views([data.rows[i] for i in rows], rows, rng).to(device)
                lr = linear_lr(step, total, cfg.lr, cfg.warmup_steps)
                try:
                    loss, parts = train_step(
                        model, method, optimizer, views, lr, cfg.max_grad_norm, net, precision
                    )
                except NonFiniteLoss as exc:
                    write({"event": "nonfinite", "step": step + 1, "what": exc.what, "value": str(exc.value)})
                    kept = (
                        f"best checkpoint (step {best_step}) in {out}" if best_step else "no checkpoint yet"
                    )
                    raise StsbenchError(
                        f"{exc.what} is {exc.value} at step {step + 1} (epoch {epoch + 1}); stopped, "
                        f"{kept} kept: lower --lr or check the train file"
                    ) from None
                step += 1
                if step % cfg.log_steps == 0 or step == total:
                    write(
                        {
                            "event": "train",
                            "step": step,
                            "epoch": epoch + 1,
                            "loss": loss,
                            "lr": lr,
                            **parts,
                            "time": elapsed_before + time.perf_counter() - started,
                        }
                    )
                progress.update(step, loss=loss, lr=lr, line=step % cfg.log_steps == 0)
                if step % cfg.eval_steps == 0 or step == total:
                    progress.update(step, dev=evaluate_and_keep(step))
                if step % cfg.save_steps == 0 or step == total:
                    save_resumable(step)
                if on_step is not None:
                    on_step(step)

        wall = elapsed_before + time.perf_counter() - started
        curve = (
            [(r["step"], r["dev_spearman"]) for r in log.records() if r.get("event") == "eval"]
            if log is not None
            else []
        )
        write(
            {
                "event": "end",
                "step": step,
                "best_step": best_step,
                "best_dev_spearman": best,
                "wall_seconds": wall,
            }
        )
        distributed.barrier()
        return TrainResult(out, step, best_step, best, wall, curve)
    finally:
        if world > 1:
            distributed.cleanup()


def _describe(distance) -> str:
    if isinstance(distance, dict):
        return f"d = {distance['start']:.1f} at the first step, {distance['end']:.1f} at the last (eq. 4)"
    return f"d = {distance:.1f} (MoCoSE eq. 4)"
