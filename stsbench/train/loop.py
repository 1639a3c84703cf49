"""The training loop, top to bottom.

Setup, model, data, then per step: lr, views, forward, loss, backward, step, method state (EMA, queue),
periodic dev evaluation, best checkpoint, resumable state.

Every method runs through this one loop; a method only brings its views, its loss and its state
(:mod:`stsbench.train.methods`).
"""

from __future__ import annotations

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
from stsbench.train.config import RESUME_MAY_CHANGE, TrainConfig, eval_pooler, finalize, queue_size
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


def train_step(
    model: ContrastiveEncoder,
    method: Method,
    optimizer: torch.optim.Optimizer,
    views: Views,
    lr: float,
    max_grad_norm: float,
) -> tuple[float, dict[str, float]]:
    """One optimisation step: forward, loss, backward, clip, step, then the method's state update."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    model.train()
    loss, parts = method.loss(model, views)
    if not torch.isfinite(loss):
        raise NonFiniteLoss("the loss", float(loss.detach()))
    loss.backward()
    params = [p for group in optimizer.param_groups for p in group["params"]]
    norm = torch.nn.utils.clip_grad_norm_(params, max_grad_norm if max_grad_norm > 0 else math.inf)
    if not torch.isfinite(norm):
        optimizer.zero_grad(set_to_none=True)
        raise NonFiniteLoss("the gradient norm", float(norm))
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    method.after_step(model, views)
    return float(loss.detach()), {**parts, "grad_norm": float(norm)}


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

    ``on_step(step)`` is called after each completed step (after any checkpoint of that step).
    """
    started = time.perf_counter()
    # -- setup: data, output folder, device, seeds ---------------------------------------------------------
    data = read_train_file(cfg.train_file)
    finalize(cfg, data.supervised)
    backbone_path = resolve_backbone(cfg.model)
    data_dir = resolve_data_dir(cfg.data_dir)
    out = Path(cfg.output).expanduser()
    ckpt.prepare_output(out, resume, overwrite)
    device = cfg.device or ("cuda" if torch.cuda.is_available() else "cpu")
    if cfg.threads is not None:
        torch.set_num_threads(cfg.threads)
    if cfg.length_buckets is None:  # less padding pays on CPU; on a GPU one big pass is faster
        cfg.length_buckets = 4 if device == "cpu" else 1
    seed_everything(cfg.seed)

    # -- model, method, optimizer, dev set -----------------------------------------------------------------
    model, tokenizer, method, optimizer = build(cfg, backbone_path, device)
    dev = DevSet.load(data_dir, tokenizer, cfg.eval_batch_size)
    per_epoch = batches_per_epoch(len(data), cfg.batch_size)
    total = cfg.max_steps or cfg.epochs * per_epoch
    meta = {
        "method": method.name,
        "training": cfg.to_dict(),
        "backbone": cfg.model,
        "queue_size": queue_size(cfg),
    }

    step, best, best_step, elapsed_before = 0, None, None, 0.0
    if resume:
        state = ckpt.load_state(out)
        _check_resumable(state["config"], cfg)
        model.load_state_dict(state["model"])
        method.load_state_dict(state["method"])
        method.load_extra_state(state["method_extra"], device)
        optimizer.load_state_dict(state["optimizer"])
        step, best, best_step = state["step"], state["best_dev_spearman"], state["best_step"]
        elapsed_before = state["wall_seconds"]
        ckpt.set_rng_states(state["rng"])
    log = TrainLog(out / "train_log.jsonl", keep_until_step=step if resume else None)

    def evaluate_and_keep(step: int, selectable: bool = True) -> float:
        nonlocal best, best_step
        score = dev_spearman(model, dev, device)
        previous = best if best is not None else -math.inf
        improved = selectable and (best_step is None or (math.isfinite(score) and score > previous))
        if improved:
            best, best_step = finite_or_none(score), step
            ckpt.export_model(
                out, model, tokenizer, eval_pooler(cfg), {**meta, "best_dev_spearman": best, "step": step}
            )
        log.write(
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
        ckpt.save_state(
            out,
            {
                "step": step,
                "epoch": step // per_epoch,
                "config": cfg.to_dict(),
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
                "best_dev_spearman": best,
                "best_step": best_step,
                "rng": ckpt.rng_states(),
                "wall_seconds": elapsed_before + time.perf_counter() - started,
            },
        )

    # -- the loop --------------------------------------------------------------------------------------------
    with TrainProgress(total, step, show_progress) as progress:
        if not resume:
            log.write(
                {
                    "event": "start",
                    "step": 0,
                    "total_steps": total,
                    "steps_per_epoch": per_epoch,
                    "train_rows": len(data),
                    "device": device,
                    "config": cfg.to_dict(),
                }
            )
            if cfg.eval_at_start:
                progress.update(0, dev=evaluate_and_keep(0, selectable=False))
        while step < total:
            epoch, index = divmod(step, per_epoch)
            if index == 0:
                method.on_epoch_start(epoch)
            rows = batch_rows(data, cfg.seed, epoch, index, cfg.batch_size)
            rng = np.random.default_rng([cfg.seed, epoch, index, 1])
            views = method.make_views([data.rows[i] for i in rows], rows, rng).to(device)
            lr = linear_lr(step, total, cfg.lr, cfg.warmup_steps)
            try:
                loss, parts = train_step(model, method, optimizer, views, lr, cfg.max_grad_norm)
            except NonFiniteLoss as exc:
                log.write({"event": "nonfinite", "step": step + 1, "what": exc.what, "value": str(exc.value)})
                kept = f"best checkpoint (step {best_step}) in {out}" if best_step else "no checkpoint yet"
                raise StsbenchError(
                    f"{exc.what} is {exc.value} at step {step + 1} (epoch {epoch + 1}); stopped, "
                    f"{kept} kept: lower --lr or check the train file"
                ) from None
            step += 1
            if step % cfg.log_steps == 0 or step == total:
                log.write(
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
    curve = [(r["step"], r["dev_spearman"]) for r in log.records() if r.get("event") == "eval"]
    log.write(
        {
            "event": "end",
            "step": step,
            "best_step": best_step,
            "best_dev_spearman": best,
            "wall_seconds": wall,
        }
    )
    return TrainResult(out, step, best_step, best, wall, curve)
