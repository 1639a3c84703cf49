"""The training step as stsbench ran it before issue 19 (commit f2b8460): the reference of train_speed's loss check.

Per step: forward, then the loss and every part read on the host (``float``), a host-side finiteness check,
backward, clip, a second read of the gradient norm, torch's default AdamW (the per-tensor loop on CPU,
``foreach`` on CUDA), then the method's state update. The views come from ``method.make_views`` on the
step's rows (tokenised per step). Kept here so that the new loop's first losses can be compared with
today's in the same run after the loop itself has changed.
"""

from __future__ import annotations

import math

import torch


def plain_adamw(optimizer: torch.optim.Optimizer) -> torch.optim.AdamW:
    """Today's optimizer over the same parameters and hyper-parameters as ``optimizer``."""
    params = [p for group in optimizer.param_groups for p in group["params"]]
    group = optimizer.param_groups[0]
    return torch.optim.AdamW(params, lr=group["lr"], weight_decay=group["weight_decay"])


def legacy_train_step(
    model, method, optimizer, views, *, lr: float, max_grad_norm: float, precision=None
) -> float:
    """One step the pre-issue-19 way; returns the logged loss (a float, read on the host)."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    model.train()
    autocast = precision.autocast() if precision is not None else torch.autocast("cpu", enabled=False)
    with autocast:
        loss, parts = method.loss(model, views)
    parts = {k: float(v) for k, v in parts.items()}  # every part read on the host, as before
    logged = parts.pop("loss", float(loss.detach()))
    if not math.isfinite(logged):
        raise FloatingPointError(f"the loss is {logged}")
    scaler = precision.scaler if precision is not None else None
    (scaler.scale(loss) if scaler is not None else loss).backward()
    if scaler is not None:
        scaler.unscale_(optimizer)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    norm = torch.nn.utils.clip_grad_norm_(params, max_grad_norm if max_grad_norm > 0 else math.inf)
    if scaler is not None:
        scaler.step(optimizer)
        scaler.update()
    elif not torch.isfinite(norm):
        raise FloatingPointError(f"the gradient norm is {float(norm)}")
    else:
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    method.after_step(model, views)
    return logged
