"""``--cuda-graph``: a whole training step replayed from one CUDA graph.

On a GPU, a BERT-base step of the papers' size (batch 64, 32 tokens) is bound by the host, not by the
device: eager PyTorch launches about a thousand kernels a step (forward, autocast casts, backward, clip,
AdamW, and for ESimCSE/MoCoSE the EMA and a momentum forward), and on a slow host each costs tens of
microseconds. Measured on an H100 (benchmarks/results/gpu_train_speed.md, 2026-11-23): SimCSE bf16 eager
43.7 ms a step; replayed from one graph 14.0 ms, and 11.2 ms with ``--compile``. Capturing forward, loss,
backward, gradient clipping, the AdamW update, the finiteness record and the method's state update (EMA,
queue) into one graph leaves one launch a step.

What a graph needs, and so what ``--cuda-graph`` asks of a run:
- static shapes: every view padded to a fixed length (``--pad-to-max-length``: ``--max-length``, and for
  ESimCSE's repeated positive the longest a repetition can make of it) in one length bucket;
- no host work inside the step: the learning rate is a device tensor the step reads, AdamW runs fused and
  capturable (its step count on the device; ``--optimizer hf-adamw``: its foreach form, capturable too), the finiteness check is recorded on the device (as without
  the graph, :class:`~stsbench.train.step.FiniteWatch`);
- state of fixed shape, updated in place (:meth:`~stsbench.train.methods.base.Method.make_static`): a queue
  turns into a ring once full (until then, steps run eagerly: a few steps at the start, and after each of
  ESimCSE's per-epoch queue resets), MoCoSE's changing EMA decay is a device tensor filled before each
  step;
- one process (DDP's all-reduce hooks are not captured here) and no fp16 gradient scaler (its
  skip-on-overflow decision is a host branch): fp32 (with ``--tf32``) or bf16.

The first :attr:`GraphedStep.EAGER` static steps run eagerly on a side stream (cuBLAS, autograd and the
optimizer state need a warm-up before capture), then the next step is captured and replayed, and every
later step copies its views into the graph's input tensors and replays (a batch of another shape, the short
last batch of an epoch, runs eagerly). Dropout draws differ from eager ones (the graph's generator advances
its own offset) but follow the same distribution; the arithmetic is the same, up to the order of float
additions in MoCoSE's EMA with a tensor decay.
"""

from __future__ import annotations

import math

import torch

from stsbench.errors import StsbenchError
from stsbench.train.methods.base import Method, Views
from stsbench.train.model import ContrastiveEncoder
from stsbench.train.step import FiniteWatch, Parts, Precision, train_step


def graph_problems(
    *, device: str, pad_to_max_length: bool, length_buckets: int | None, precision: str, world: int
) -> list[str]:
    """What stops a run from replaying its steps from a CUDA graph (empty: nothing)."""
    problems = []
    if torch.device(device).type != "cuda":
        problems.append(f"a CUDA device (not {device})")
    if not pad_to_max_length:
        problems.append("--pad-to-max-length (static shapes)")
    if length_buckets not in (None, 1):
        problems.append("--length-buckets 1")
    if precision == "fp16":
        problems.append("--precision fp32 or bf16 (fp16's gradient scaler decides on the host)")
    if world > 1:
        problems.append("one process")
    return problems


def _tensors(views: Views) -> list[torch.Tensor]:
    out: list[torch.Tensor] = []
    for tokens in (views.anchor, views.positive, views.hard_negative):
        if tokens is not None:
            out += [tokens[k] for k in sorted(tokens)]
    if views.mlm is not None:
        out += [views.mlm[0][k] for k in sorted(views.mlm[0])] + [views.mlm[1]]
    return out


class StaticSteps:
    """Training steps with the method's state in its static form, as a CUDA graph replays them.

    Each call: the learning rate and the step number where the step reads them; while the method's state still
    grows (a queue filling) a plain eager step; then the static form (:meth:`Method.make_static`), the
    method's per-step device inputs (:meth:`Method.static_step_begin`), the step (:meth:`run`: eager
    here, captured and replayed by :class:`GraphedStep`), and the host bookkeeping after it. On any device:
    on a CPU the static form can be checked against the growing one (tests).
    """

    def __init__(
        self,
        model: ContrastiveEncoder,
        method: Method,
        optimizer: torch.optim.Optimizer,
        *,
        max_grad_norm: float,
        precision: Precision,
        watch: FiniteWatch,
    ) -> None:
        self.model, self.method, self.optimizer = model, method, optimizer
        self.precision, self.watch = precision, watch
        self.max_norm = max_grad_norm if max_grad_norm > 0 else math.inf
        self.lr: float | torch.Tensor = 0.0
        self.step_no: int | torch.Tensor = 0

    def set_step(self, lr: float, step: int) -> None:
        """The step's learning rate and number, as the step reads them (a graph: from device tensors)."""
        self.lr, self.step_no = lr, step

    def _body(self, views: Views) -> tuple[torch.Tensor, Parts]:
        """The step without zeroing the gradients (a graph keeps their memory between replays)."""
        return train_step(
            self.model,
            self.method,
            self.optimizer,
            views,
            lr=self.lr,
            max_grad_norm=self.max_norm,
            precision=self.precision,
            watch=(self.watch, self.step_no),
            zero_grad=False,
        )

    def eager(self, views: Views) -> tuple[torch.Tensor, Parts]:
        """One eager step with fresh gradients."""
        self.optimizer.zero_grad(set_to_none=True)
        out = self._body(views)
        self.optimizer.zero_grad(set_to_none=True)
        return out

    def run(self, views: Views) -> tuple[torch.Tensor, Parts]:
        """One step in the static form (here: eager)."""
        return self.eager(views)

    def __call__(self, views: Views, *, lr: float, step: int) -> tuple[torch.Tensor, Parts]:
        """Run step ``step`` (1-based, for the finiteness record) at learning rate ``lr``."""
        self.set_step(lr, step)
        if not self.method.static_ready():
            return self.eager(views)
        self.method.make_static()
        host = self.method.static_step_begin()
        loss, parts = self.run(views)
        self.method.static_step_end()
        return loss, {**parts, **host}


class GraphedStep(StaticSteps):
    """Steps (forward, loss, backward, clip, AdamW, finiteness record, EMA and queue) replayed from a CUDA graph.

    Call it as :func:`~stsbench.train.step.train_step` is called (without ``net``): it returns the loss
    and its parts as device tensors, which the next call overwrites (the loop reads them before then).
    """

    EAGER = 3  # eager warm-up steps on a side stream before the capture

    def __init__(
        self, model: ContrastiveEncoder, method: Method, optimizer: torch.optim.Optimizer, **kw
    ) -> None:
        super().__init__(model, method, optimizer, **kw)
        if self.precision.scaler is not None:
            raise StsbenchError("--cuda-graph needs --precision fp32 or bf16 (fp16 scales on the host)")
        device = next(model.parameters()).device
        self.lr = torch.zeros((), dtype=torch.float32, device=device)
        self.step_no = torch.zeros((), dtype=torch.long, device=device)
        for group in optimizer.param_groups:
            group["lr"], group["capturable"] = self.lr, True
        self.stream = torch.cuda.Stream(device)
        self.graph: torch.cuda.CUDAGraph | None = None
        self.inputs: list[torch.Tensor] = []
        self.out: tuple[torch.Tensor, Parts] | None = None
        self.eager_steps = 0

    def set_step(self, lr: float, step: int) -> None:
        """Into the device tensors the captured step reads."""
        self.lr.fill_(lr)
        self.step_no.fill_(step)

    def run(self, views: Views) -> tuple[torch.Tensor, Parts]:
        """Warm up on a side stream, then capture once and replay (eager for a batch of another shape)."""
        if self.graph is None and self.eager_steps < self.EAGER:
            self.stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.stream):
                out = self._body(views)
                self.optimizer.zero_grad(set_to_none=True)
            torch.cuda.current_stream().wait_stream(self.stream)
            self.eager_steps += 1
            return out
        if self.graph is None:
            self.inputs = _tensors(views)
            self.graph = torch.cuda.CUDAGraph()
            self.optimizer.zero_grad(set_to_none=True)
            # thread_local: the loop's view-prefetching thread pins memory meanwhile, which a global-mode
            # capture refuses (and a failed capture breaks the process's CUDA context)
            with torch.cuda.graph(self.graph, stream=self.stream, capture_error_mode="thread_local"):
                self.out = self._body(views)
        else:
            new = _tensors(views)
            if [t.shape for t in new] != [t.shape for t in self.inputs]:
                return self.eager(views)  # the short last batch of an epoch
            for static, t in zip(self.inputs, new, strict=True):
                static.copy_(t, non_blocking=True)
        self.graph.replay()
        assert self.out is not None
        return self.out
