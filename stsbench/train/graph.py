"""``--cuda-graph``: a whole training step replayed from one CUDA graph.

On a GPU, a BERT-base step of the papers' size (batch 64, 32 tokens) is bound by the host, not by the
device: eager PyTorch launches about a thousand kernels a step (forward, autocast casts, backward, clip,
AdamW), and on a slow host each costs tens of microseconds. Measured on an H100 (benchmarks/results/
gpu_train_speed.md, 2026-11-23): SimCSE bf16 eager 43.7 ms a step; replayed from one graph 14.0 ms, and
11.2 ms with ``--compile``. Capturing forward, loss, backward, gradient clipping, the AdamW update and the
finiteness record into one graph leaves one launch a step.

What a graph needs, and so what ``--cuda-graph`` asks of a run:
- static shapes: every view padded to ``--max-length`` (``--pad-to-max-length``) in one length bucket;
- no host work inside the step: the learning rate is a device tensor the step reads, AdamW runs fused and
  capturable (its step count on the device), the finiteness check is recorded on the device (as without
  the graph, :class:`~stsbench.train.step.FiniteWatch`);
- a method whose step is only its loss: unsup/sup SimCSE (with MLM or Gaussian noise, too). ESimCSE and
  MoCoSE update an EMA encoder and a queue whose size grows until full after the step: refused.
- one process (DDP's all-reduce hooks are not captured here) and no fp16 gradient scaler (its
  skip-on-overflow decision is a host branch): fp32 (with ``--tf32``) or bf16.

The first :attr:`GraphedStep.EAGER` steps run eagerly on a side stream (cuBLAS, autograd and the optimizer
state need a warm-up before capture), then the next step is captured and replayed, and every later step
copies its views into the graph's input tensors and replays (a batch of another shape, the short last
batch of an epoch, runs eagerly). Dropout draws differ from eager ones (the
graph's generator advances its own offset) but follow the same distribution; the arithmetic is the same.
"""

from __future__ import annotations

import math

import torch

from stsbench.errors import StsbenchError
from stsbench.train.config import MethodName
from stsbench.train.methods import Method, Views
from stsbench.train.model import ContrastiveEncoder
from stsbench.train.step import FiniteWatch, Parts, Precision


def graph_problems(
    *,
    method: str,
    device: str,
    pad_to_max_length: bool,
    length_buckets: int | None,
    precision: str,
    world: int,
) -> list[str]:
    """What stops a run from replaying its steps from a CUDA graph (empty: nothing)."""
    problems = []
    if torch.device(device).type != "cuda":
        problems.append(f"a CUDA device (not {device})")
    if method != MethodName.SIMCSE:
        problems.append(
            f"--method simcse ({method} updates an EMA encoder and a growing queue after each step)"
        )
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


class GraphedStep:
    """A SimCSE step (forward, loss, backward, clip, AdamW, finiteness record) replayed from a CUDA graph.

    Call it as :func:`~stsbench.train.step.train_step` is called (without ``net``): it returns the loss
    and its parts as device tensors, which the next call overwrites (the loop reads them before then).
    """

    EAGER = 3  # eager warm-up steps on a side stream before the capture

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
        if type(method).after_step is not Method.after_step:
            raise StsbenchError(
                f"--cuda-graph: {method.name} updates state after each step; train without it"
            )
        if precision.scaler is not None:
            raise StsbenchError("--cuda-graph needs --precision fp32 or bf16 (fp16 scales on the host)")
        self.model, self.method, self.optimizer = model, method, optimizer
        self.precision, self.watch = precision, watch
        self.max_norm = max_grad_norm if max_grad_norm > 0 else math.inf
        device = next(model.parameters()).device
        self.lr = torch.zeros((), dtype=torch.float32, device=device)
        self.step_no = torch.zeros((), dtype=torch.long, device=device)
        for group in optimizer.param_groups:
            group["lr"], group["capturable"] = self.lr, True
        self.params = [p for group in optimizer.param_groups for p in group["params"]]
        self.stream = torch.cuda.Stream(device)
        self.graph: torch.cuda.CUDAGraph | None = None
        self.inputs: list[torch.Tensor] = []
        self.out: tuple[torch.Tensor, Parts] | None = None
        self.eager_steps = 0

    def _body(self, views: Views) -> tuple[torch.Tensor, Parts]:
        self.model.train()
        with self.precision.autocast():
            loss, parts = self.method.loss(self.model, views)
        logged = parts.pop("loss", None)
        logged = loss.detach().double() if logged is None else logged
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.params, self.max_norm)
        self.watch.record(self.step_no, logged, norm)
        self.optimizer.step()
        return logged, {**parts, "grad_norm": norm.detach()}

    def __call__(self, views: Views, *, lr: float, step: int) -> tuple[torch.Tensor, Parts]:
        """Run step ``step`` (1-based, for the finiteness record) at learning rate ``lr``."""
        self.lr.fill_(lr)
        self.step_no.fill_(step)
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
                # the short last batch of an epoch: an eager step (fresh gradients, the same optimizer)
                self.optimizer.zero_grad(set_to_none=True)
                out = self._body(views)
                self.optimizer.zero_grad(set_to_none=True)
                return out
            for static, t in zip(self.inputs, new, strict=True):
                static.copy_(t, non_blocking=True)
        self.graph.replay()
        assert self.out is not None
        return self.out
