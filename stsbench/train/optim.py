"""The optimizers ``--optimizer`` names: torch's AdamW, or the Hugging Face Trainer's own AdamW.

The official SimCSE, ESimCSE and MoCoSE runs did not train with ``torch.optim.AdamW`` but with the AdamW of
``transformers`` that the Trainer builds (transformers v4.2.1 ``src/transformers/trainer.py``,
``Trainer.create_optimizer_and_scheduler``: ``AdamW(groups, lr, betas=(adam_beta1, adam_beta2),
eps=adam_epsilon)``, ``correct_bias`` left at its default True; MoCoSE's v4.11.3 ``Trainer.create_optimizer``
builds the same). Its update (v4.2.1 ``src/transformers/optimization.py``, ``AdamW.step``) parts from
torch's in two places:

- eps is added to ``sqrt(v)`` *before* the bias correction, which is folded into the step size:
  ``p -= lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps)``. Torch adds eps to ``sqrt(v / (1 - b2^t))``,
  so the HF epsilon is in effect ``eps / sqrt(1 - b2^t)``: 3.2e-7 instead of 1e-8 at step 1 with eps 1e-8,
  falling to eps as t grows. Parameters whose gradients are that small move by other amounts.
- weight decay is decoupled but applied *after* the Adam update, on the updated weights
  (``p -= lr * wd * p``); torch multiplies by ``1 - lr * wd`` before it.
"""

from __future__ import annotations

from collections import defaultdict

import torch

OPTIMIZERS = ("torch-adamw", "hf-adamw")


class HFAdamW(torch.optim.Optimizer):
    """The Hugging Face Trainer's AdamW (transformers v4.2.1 ``optimization.py`` ``AdamW.step``), multi-tensor.

    The same arithmetic per tensor as there, in ``torch._foreach_*`` calls (a few multi-tensor kernels on a
    GPU; on a CPU the same per-tensor kernels in a loop). ``capturable`` (set by ``--cuda-graph``, with a
    device-tensor ``lr``): the step counts live on the device and the step size is computed there, so a CUDA
    graph can replay the update; the same figures up to float rounding of the step size. ``fused`` (CPU
    parameters, not capturable): torch's one-pass fused AdamW kernel with per-step arguments that make its
    update HF's (:func:`fused_arguments`), about 5x faster on a CPU than the eight passes of the foreach
    form; the same figures up to float rounding.
    """

    def __init__(
        self,
        params,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        correct_bias: bool = True,
        capturable: bool = False,
        fused: bool = False,
    ) -> None:
        defaults = {
            "lr": lr,
            "betas": betas,
            "eps": eps,
            "weight_decay": weight_decay,
            "correct_bias": correct_bias,
            "capturable": capturable,
        }
        super().__init__(params, defaults)
        # how, not what: kept off the param groups, so checkpoints of either form load into the other
        self.fused = fused

    @torch.no_grad()
    def step(self, closure=None):
        """One update of every parameter that has a gradient (HF ``AdamW.step``)."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if self.fused and not group["capturable"]:
                params = self._fused_update(group, params)
            if params:
                self._update(group, params)
        return loss

    def _init_state(self, params: list[torch.Tensor], capturable: bool) -> None:
        for p in params:
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = torch.zeros_like(p)
                state["exp_avg_sq"] = torch.zeros_like(p)
            if capturable and not isinstance(state["step"], torch.Tensor):
                state["step"] = torch.tensor(float(state["step"]), device=p.device)

    def _fused_update(self, group: dict, params: list[torch.Tensor]) -> list[torch.Tensor]:
        """Torch's fused AdamW kernel on the parameters it can take; returns those left to the foreach form."""
        lr, wd = group["lr"], group["weight_decay"]
        if isinstance(lr, torch.Tensor) or lr * wd == 1.0:  # lr' would be 0 while HF zeroes the weights
            return params
        self._init_state(params, False)
        fusable, rest = [], []
        for p in params:
            state = self.state[p]
            tensors = (p, state["exp_avg"], state["exp_avg_sq"])
            ok = p.device.type == "cpu" and isinstance(state["step"], int)
            (fusable if ok and all(t.is_contiguous() for t in tensors) else rest).append(p)
        by_step: dict[int, list[torch.Tensor]] = defaultdict(list)
        for p in fusable:  # step counts stay per parameter: one kernel call per count
            self.state[p]["step"] += 1
            by_step[self.state[p]["step"]].append(p)
        beta1, beta2 = group["betas"]
        for step, rows in by_step.items():
            lr_t, wd_t, eps_t = fused_arguments(
                lr, wd, group["eps"], beta1, beta2, step, group["correct_bias"]
            )
            torch._fused_adamw_(
                rows,
                [p.grad for p in rows],
                [self.state[p]["exp_avg"] for p in rows],
                [self.state[p]["exp_avg_sq"] for p in rows],
                [],
                [torch.tensor(float(step))] * len(rows),
                lr=lr_t,
                beta1=beta1,
                beta2=beta2,
                weight_decay=wd_t,
                eps=eps_t,
                amsgrad=False,
                maximize=False,
            )
        return rest

    def _update(self, group: dict, params: list[torch.Tensor]) -> None:
        beta1, beta2 = group["betas"]
        capturable = group["capturable"]
        self._init_state(params, capturable)
        grads = [p.grad for p in params]
        exp_avg = [self.state[p]["exp_avg"] for p in params]
        exp_avg_sq = [self.state[p]["exp_avg_sq"] for p in params]
        # exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1); exp_avg_sq.mul_(beta2).addcmul_(grad, grad, 1 - beta2)
        torch._foreach_mul_(exp_avg, beta1)
        torch._foreach_add_(exp_avg, grads, alpha=1.0 - beta1)
        torch._foreach_mul_(exp_avg_sq, beta2)
        torch._foreach_addcmul_(exp_avg_sq, grads, grads, value=1.0 - beta2)
        denom = torch._foreach_sqrt(exp_avg_sq)
        torch._foreach_add_(denom, group["eps"])  # before the bias correction: HF's epsilon
        if capturable:
            self._capturable_step(group, params, exp_avg, denom)
        else:
            self._host_step(group, params, exp_avg, denom)
        wd = group["weight_decay"]
        if wd > 0.0:  # after the update, on the updated weights: p.add_(p, alpha=-lr * wd)
            lr = group["lr"]
            if isinstance(lr, torch.Tensor):
                torch._foreach_add_(params, torch._foreach_mul(params, lr * -wd))
            else:
                torch._foreach_add_(params, params, alpha=-lr * wd)

    def _host_step(self, group: dict, params, exp_avg, denom) -> None:
        """The step size in Python, per step count (parameters without a gradient some step lag behind)."""
        beta1, beta2 = group["betas"]
        by_step: dict[int, list[int]] = defaultdict(list)
        for i, p in enumerate(params):
            self.state[p]["step"] += 1
            by_step[self.state[p]["step"]].append(i)
        for step, rows in by_step.items():
            step_size = float(group["lr"])
            if group["correct_bias"]:
                step_size = step_size * (1.0 - beta2**step) ** 0.5 / (1.0 - beta1**step)
            torch._foreach_addcdiv_(
                [params[i] for i in rows],
                [exp_avg[i] for i in rows],
                [denom[i] for i in rows],
                value=-step_size,
            )

    def _capturable_step(self, group: dict, params, exp_avg, denom) -> None:
        """The step size on the device from device step counts: no host value, so a CUDA graph can hold it."""
        beta1, beta2 = group["betas"]
        steps = [self.state[p]["step"] for p in params]
        torch._foreach_add_(steps, 1.0)
        updates = torch._foreach_div(exp_avg, denom)
        lr = group["lr"]
        if group["correct_bias"]:
            bc1 = torch._foreach_pow(beta1, steps)  # 1 - beta1^t
            torch._foreach_neg_(bc1)
            torch._foreach_add_(bc1, 1.0)
            size = torch._foreach_pow(beta2, steps)  # lr * sqrt(1 - beta2^t) / (1 - beta1^t)
            torch._foreach_neg_(size)
            torch._foreach_add_(size, 1.0)
            torch._foreach_sqrt_(size)
            torch._foreach_div_(size, bc1)
            torch._foreach_mul_(size, lr)
            torch._foreach_mul_(updates, size)
        else:
            torch._foreach_mul_(updates, lr)
        torch._foreach_sub_(params, updates)


def fused_arguments(
    lr: float, wd: float, eps: float, beta1: float, beta2: float, step: int, correct_bias: bool
) -> tuple[float, float, float]:
    """The (lr, weight decay, eps) that make torch's AdamW step at count ``step`` the HF step.

    Torch: ``p' = (1 - lr' wd') p - lr' / bc1 * m / (sqrt(v) / sqrt(bc2) + eps')``, bc = 1 - beta^t.
    HF: ``p' = (1 - lr wd) (p - s * m / (sqrt(v) + eps))``, s = lr sqrt(bc2) / bc1 (lr without ``correct_bias``).
    Multiplying torch's fraction by sqrt(bc2) / sqrt(bc2): equal for eps' = eps / sqrt(bc2),
    lr' = (1 - lr wd) s bc1 / sqrt(bc2) (= (1 - lr wd) lr with the correction) and lr' wd' = lr wd.
    """
    bc1, bc2_sqrt = 1.0 - beta1**step, (1.0 - beta2**step) ** 0.5
    decay = 1.0 - lr * wd
    lr_t = decay * lr if correct_bias else decay * lr * bc1 / bc2_sqrt
    return lr_t, (lr * wd / lr_t if lr_t else 0.0), eps / bc2_sqrt


def make_optimizer(
    params: list[torch.nn.Parameter] | list[dict],
    *,
    lr: float,
    weight_decay: float,
    device: str,
    kind: str = "torch-adamw",
) -> torch.optim.Optimizer:
    """``--optimizer``: torch's AdamW (fused on CUDA, torch's default elsewhere) or the HF Trainer's (:class:`HFAdamW`).

    ``params``: a list, or parameter groups with their own weight decay
    (:func:`stsbench.train.step.decay_groups`). torch-adamw keeps torch's per-tensor loop on CPU, so CPU
    runs stay bit-identical to earlier ones; hf-adamw takes the fused CPU kernel there (its foreach form on
    CUDA, which ``--cuda-graph`` makes capturable). Both take betas (0.9, 0.999) and eps 1e-8, the Trainer's
    defaults (``adam_beta1``, ``adam_beta2``, ``adam_epsilon``) and torch's.
    """
    if kind == "hf-adamw":
        cpu = torch.device(device).type == "cpu"
        return HFAdamW(params, lr=lr, weight_decay=weight_decay, eps=1e-8, fused=cpu)
    if kind != "torch-adamw":
        raise ValueError(f"unknown optimizer {kind!r}; choose from {', '.join(OPTIMIZERS)}")
    fused = True if torch.device(device).type == "cuda" else None
    return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, fused=fused)
