"""One optimisation step, with no host sync in it.

The step returns the loss and its parts as tensors on the device and records non-finite values on the
device too (:class:`FiniteWatch`); the loop reads both once a log interval (``--log-steps``), and always
before an evaluation or a checkpoint. On a GPU every ``float(tensor)`` waits for the queued kernels, so
one read a step (four or more today: the loss, each part, the gradient norm's finiteness) keeps the GPU
idle between steps; on a CPU the order of work, and so every figure, is the same either way.

**The optimizers.** The optimizers ``--optimizer`` names: torch's AdamW, or the Hugging Face Trainer's own AdamW.

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

import contextlib
import math
from collections import defaultdict
from collections.abc import Callable

import torch

from stsbench.errors import StsbenchError
from stsbench.train.methods.base import Method, Views
from stsbench.train.model import ContrastiveEncoder

# -- optim ---------------------------------------------------------------------------------------------------


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


Parts = dict[str, "torch.Tensor | float"]


class NonFiniteLoss(RuntimeError):
    """The loss (or the gradient norm) of a step is NaN or infinite; ``step`` is the 1-based step."""

    def __init__(self, what: str, value: float, step: int | None = None) -> None:
        super().__init__(f"{what} is {value}")
        self.what, self.value, self.step = what, value, step


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


def check_tf32(enabled: bool, device: str) -> None:
    """``--tf32`` needs a CUDA device: refused in one line elsewhere."""
    if enabled and torch.device(device).type != "cuda":
        raise StsbenchError(f"--tf32 needs a CUDA device; on {device} train without it")


@contextlib.contextmanager
def tf32(enabled: bool):
    """``--tf32`` within the block: fp32 matmuls and convolutions on CUDA run on TF32 tensor cores (10-bit mantissa).

    Off by default: SimCSE's runs are fp32 (or fp16), and TF32 changes every figure at the 1e-3 level. The loop
    holds it around the training step alone (a CUDA graph captured inside keeps its TF32 kernels), so that the
    dev evaluation and everything after training compute in full fp32; torch's two switches are process-wide,
    so they are set on entry and put back as they were on exit.
    """
    if not enabled:
        yield
        return
    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def decay_groups(
    modules: list[torch.nn.Module], weight_decay: float, exclude: str = "none"
) -> list[torch.nn.Parameter] | list[dict]:
    """The trainable parameters of ``modules``, as AdamW takes them under ``--weight-decay-exclude``.

    ``none``: one list, every parameter decayed. ``bias-layernorm``: two groups, the second (weight decay 0)
    holding every parameter whose name contains ``bias`` and every ``nn.LayerNorm`` weight, the Hugging Face
    Trainer's rule (``Trainer.create_optimizer``: by LayerNorm type and "bias" in transformers 4.11.3, which
    MoCoSE's code ran; by the names "bias" and "LayerNorm.weight" in 4.2.1, SimCSE's and ESimCSE's, the same
    set on BERT).
    """
    named, seen = [], set()  # in ``module.parameters()`` order, a tied parameter once
    for module in modules:
        for name, m in module.named_modules():
            for p_name, p in m.named_parameters(recurse=False):
                if p.requires_grad and id(p) not in seen:
                    seen.add(id(p))
                    named.append(
                        (f"{name}.{p_name}" if name else p_name, p, isinstance(m, torch.nn.LayerNorm))
                    )
    if exclude == "none":
        return [p for _, p, _ in named]
    kept = [p for n, p, norm in named if not (norm or "bias" in n)]
    exempt = [p for n, p, norm in named if norm or "bias" in n]
    return [{"params": kept, "weight_decay": weight_decay}, {"params": exempt, "weight_decay": 0.0}]


class FiniteWatch:
    """The first step whose loss (or gradient norm) is NaN or infinite, recorded on the device.

    :meth:`record` costs a few tiny kernels and no sync; :meth:`check` reads the record once (one sync)
    and raises :class:`NonFiniteLoss` naming the step that went bad, its value and what it was.
    """

    WHAT = ("the loss", "the gradient norm")

    def __init__(self, device: torch.device | str) -> None:
        self.first = torch.zeros((), dtype=torch.long, device=device)  # 0: every step so far was finite
        self.what = torch.zeros((), dtype=torch.long, device=device)  # index into WHAT
        self.value = torch.zeros((), dtype=torch.float64, device=device)

    def record(self, step: int | torch.Tensor, loss: torch.Tensor, grad_norm: torch.Tensor | None) -> None:
        """Remember ``step`` (1-based; a device tensor under a CUDA graph) if it is the first with a non-finite loss or ``grad_norm``."""
        loss_bad = ~torch.isfinite(loss)
        bad = loss_bad if grad_norm is None else loss_bad | ~torch.isfinite(grad_norm)
        new = bad & (self.first == 0)
        # in place: a CUDA graph (--cuda-graph) replays this record on the same tensors every step
        self.first.copy_(torch.where(new, step, self.first))
        # the loss is named first, as it fails first
        self.what.copy_(torch.where(new, (~loss_bad).long(), self.what))
        value = (
            loss.double() if grad_norm is None else torch.where(loss_bad, loss.double(), grad_norm.double())
        )
        self.value.copy_(torch.where(new, value, self.value))

    def check(self) -> None:
        """Raise :class:`NonFiniteLoss` if a recorded step went bad (one host sync)."""
        first, what, value = torch.stack([self.first.double(), self.what.double(), self.value]).tolist()
        if first:
            raise NonFiniteLoss(self.WHAT[int(what)], value, int(first))


def host_values(loss: torch.Tensor, parts: Parts) -> tuple[float, dict[str, float]]:
    """The loss and its parts as Python floats, read from the device in one sync (float64 is exact for them)."""
    names = [k for k, v in parts.items() if isinstance(v, torch.Tensor)]
    values = torch.stack([loss.double(), *(parts[k].double() for k in names)]).tolist()
    return values[0], {**parts, **dict(zip(names, values[1:], strict=True))}


def train_step(
    model: ContrastiveEncoder,
    method: Method,
    optimizer: torch.optim.Optimizer,
    views: Views,
    *,
    lr: float | torch.Tensor,
    max_grad_norm: float,
    net: Callable[[Views], tuple[torch.Tensor, Parts]] | None = None,
    precision: Precision | None = None,
    watch: tuple[FiniteWatch, int | torch.Tensor] | None = None,
    zero_grad: bool = True,
) -> tuple[torch.Tensor, Parts]:
    """One optimisation step: forward, loss, backward, clip, the method's pre-step update, step, its post-step update.

    ``net`` computes the loss (the DDP wrapper with several processes; default ``method.loss`` on
    ``model``). Returns the loss of the global batch (float64, on the device) and its parts for the log,
    ``grad_norm`` among them, all unsynced. ``watch = (FiniteWatch, step)`` records a non-finite loss or
    gradient norm of this step (fp16: the loss only, as the scaler skips overflowing steps itself); the
    step is taken anyway, and the loop checks the watch before anything is evaluated or saved.

    Under ``--cuda-graph`` (:class:`~stsbench.train.graph.GraphedStep`) this is the step captured: ``lr``
    and the watch's step are device tensors filled before each replay, and the gradients are zeroed
    outside the graph (``zero_grad=False``), where they keep the graph's memory.
    """
    precision = precision or Precision()
    for group in optimizer.param_groups:
        group["lr"] = lr
    model.train()
    with precision.autocast():
        loss, parts = net(views) if net is not None else method.loss(model, views)
    logged = parts.pop("loss", None)
    logged = loss.detach().double() if logged is None else logged
    scaler = precision.scaler
    (scaler.scale(loss) if scaler is not None else loss).backward()
    if scaler is not None:
        scaler.unscale_(optimizer)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    norm = torch.nn.utils.clip_grad_norm_(params, max_grad_norm if max_grad_norm > 0 else math.inf)
    if watch is not None:
        watch[0].record(watch[1], logged, norm if scaler is None else None)
    method.before_step(model, views)  # on the weights the loss saw (ESimCSE --momentum-update before-step)
    if scaler is not None:  # an overflow skips the step and lowers the scale: fp16's normal course
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    if zero_grad:
        optimizer.zero_grad(set_to_none=True)
    method.after_step(model, views)
    return logged, {**parts, "grad_norm": norm.detach()}
