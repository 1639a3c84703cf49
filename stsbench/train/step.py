"""One optimisation step, with no host sync in it.

The step returns the loss and its parts as tensors on the device and records non-finite values on the
device too (:class:`FiniteWatch`); the loop reads both once a log interval (``--log-steps``), and always
before an evaluation or a checkpoint. On a GPU every ``float(tensor)`` waits for the queued kernels, so
one read a step (four or more today: the loss, each part, the gradient norm's finiteness) keeps the GPU
idle between steps; on a CPU the order of work, and so every figure, is the same either way.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable

import torch

from stsbench.errors import StsbenchError
from stsbench.train.methods.base import Method
from stsbench.train.methods.views import Views
from stsbench.train.model import ContrastiveEncoder
from stsbench.train.optim import make_optimizer  # noqa: F401  (its home is optim; importable here too)

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
        self.what.copy_(
            torch.where(new, (~loss_bad).long(), self.what)
        )  # the loss is named first, as it fails first
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
