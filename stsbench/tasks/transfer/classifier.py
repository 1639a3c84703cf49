"""Logistic-regression probes trained as SentEval trains them, many models at once.

SentEval (``tools/classifier.py``, ``MLP`` with ``nhid=0``) trains one ``nn.Linear`` at a time: seed numpy and
torch with the task seed, initialise the layer, then per epoch draw ``np.random.permutation`` of the training rows,
take minibatches in that order, minimise the mean cross-entropy with Adam or RMSprop (L2 as the optimizer's
``weight_decay``, bias included); every ``epoch_size`` epochs score the dev rows, keep a copy of the model when dev
accuracy improves, and stop at the ``tenacity + 1``-th round without improvement (the count is never reset) or
after ``max_epoch`` epochs; the kept model is the result.

Here every model of a :class:`Job` (one per L2 value) and many jobs run in lockstep as one batched matrix
product per minibatch, with the gradient written out by hand. Each model keeps its own trajectory: the same
initial weights (``torch.manual_seed(seed)`` then ``nn.Linear``), the same numpy stream of permutations (a fresh
``RandomState(seed)`` per model, as SentEval reseeds the global one per model), its own early stopping; the
elementwise optimizer updates are torch's own formulas. Only the summation order inside the matrix products
differs from one-model-at-a-time training.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

Optim = Literal["adam", "rmsprop"]
# The per-minibatch tensors are small: intra-op threads cost more than they give, and on a shared machine
# (more runnable threads than cores) two threads made a fold 18x slower than one.
CPU_THREADS = 1


@dataclass(frozen=True)
class ProbeConfig:
    """SentEval's classifier settings (SimCSE's ``evaluation.py`` values by mode)."""

    optim: Optim
    batch_size: int
    tenacity: int
    epoch_size: int
    kfold: int
    max_epoch: int = 200
    seed: int = 1111
    l2_grid: tuple[float, ...] = (1e-5, 1e-4, 1e-3, 1e-2)  # SentEval: [10**t for t in range(-5, -1)]
    validation_split: float = 0.05  # dev share when the final model has no dev set of its own


@dataclass
class Job:
    """One training set and dev set, with the L2 values trained on it in lockstep."""

    train: np.ndarray  # row indices into the feature matrix, in the order SentEval holds the rows
    dev: np.ndarray
    l2: tuple[float, ...]
    rng: np.random.RandomState  # this model's numpy stream, positioned where SentEval's first epoch draws


@dataclass
class Fitted:
    """The best-on-dev models of one job, one per L2 value."""

    dev_correct: np.ndarray  # (R,) int: dev rows right at the kept model
    n_dev: int
    weights: np.ndarray  # (R, dim + 1, nclasses) float32; the last row is the bias
    epochs: np.ndarray  # (R,) epochs trained when the model stopped

    def dev_acc(self) -> list[float]:
        """Dev accuracies as SentEval computes them (``1.0 * correct / len(devX)``)."""
        return [1.0 * int(c) / self.n_dev for c in self.dev_correct]


def default_device() -> torch.device:
    """CUDA when available, else CPU."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def initial_weights(dim: int, nclasses: int, seed: int) -> torch.Tensor:
    """SentEval's initial layer: ``torch.manual_seed(seed); nn.Linear(dim, nclasses)``, as a (dim+1, C) matrix."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        layer = torch.nn.Linear(dim, nclasses)
    return torch.cat([layer.weight.detach().T, layer.bias.detach()[None]], 0).contiguous()


def augment(x: np.ndarray, device: torch.device) -> torch.Tensor:
    """Features with a ones column (the bias) and a final all-zero padding row."""
    x = torch.as_tensor(np.asarray(x, dtype=np.float32))
    out = torch.zeros(x.shape[0] + 1, x.shape[1] + 1, dtype=torch.float32)
    out[:-1, :-1] = x
    out[:-1, -1] = 1.0
    return out.to(device)


class _Optimizer:
    """torch's single-tensor Adam / RMSprop update (defaults as SentEval builds them), per-column weight decay."""

    def __init__(self, name: Optim, w: torch.Tensor, wd: torch.Tensor) -> None:
        self.name, self.wd, self.t = name, wd, 0
        self.state = [torch.zeros_like(w)] + ([torch.zeros_like(w)] if name == "adam" else [])

    def select(self, keep: torch.Tensor) -> None:
        self.wd = self.wd[keep]
        self.state = [s[keep] for s in self.state]

    def step(self, w: torch.Tensor, grad: torch.Tensor) -> None:
        self.t += 1
        grad.addcmul_(w, self.wd)  # torch: grad.add(param, alpha=weight_decay)
        if self.name == "adam":
            lr, beta1, beta2, eps = 1e-3, 0.9, 0.999, 1e-8
            exp_avg, exp_avg_sq = self.state
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            step_size = lr / (1 - beta1**self.t)
            denom = (exp_avg_sq.sqrt() / (1 - beta2**self.t) ** 0.5).add_(eps)
            w.addcdiv_(exp_avg, denom, value=-step_size)
        else:
            lr, alpha, eps = 1e-2, 0.99, 1e-8
            (square_avg,) = self.state
            square_avg.mul_(alpha).addcmul_(grad, grad, value=1 - alpha)
            w.addcdiv_(grad, square_avg.sqrt().add_(eps), value=-lr)


def _pad(rows: list[np.ndarray], width: int, fill: int) -> np.ndarray:
    out = np.full((len(rows), width), fill, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def _epoch_batches(
    jobs: list[Job], live: np.ndarray, y_ext: np.ndarray, n_pad: int, steps: int, b: int, c: int
) -> tuple[np.ndarray, torch.Tensor, torch.Tensor]:
    """One epoch of each live job: row indices per step ``(S, F*B)`` and the loss gradient's constant parts.

    SentEval's loss is the batch-mean cross-entropy; its gradient w.r.t. the logits, as torch computes it, is
    ``g - softmax * sum(g)`` (log_softmax backward) with ``g = -1/b`` at the target (nll_loss backward), where
    ``b`` is the batch's row count (smaller for the last batch). Padding rows get zeros.
    """
    order = [jobs[i].train[jobs[i].rng.permutation(len(jobs[i].train))] for i in live]
    f = len(order)
    idx = _pad(order, steps * b, n_pad).reshape(f, steps, b).transpose(1, 0, 2)  # (S, F, B)
    nrows = np.minimum(
        np.array([len(o) for o in order])[None, :] - np.arange(steps)[:, None] * b, b
    )  # (S, F)
    inv = np.where(idx != n_pad, (np.float32(-1.0) / nrows.astype(np.float32))[..., None], np.float32(0))
    g_tgt = np.zeros((steps, f, c, 1, b), dtype=np.float32)
    np.put_along_axis(g_tgt, y_ext[idx][:, :, None, None, :], inv[:, :, None, None, :], axis=2)
    return (
        np.ascontiguousarray(idx.reshape(steps, f * b)),
        torch.from_numpy(g_tgt),
        torch.from_numpy(np.ascontiguousarray(inv[:, :, None, None, :])),
    )


def _train_chunk(
    x: torch.Tensor, y: np.ndarray, nclasses: int, jobs: list[Job], w0: torch.Tensor, cfg: ProbeConfig
) -> list[Fitted]:
    """Train jobs that share the number of minibatches per epoch, in lockstep.

    All models of all jobs are one ``(F, C*R, D)`` tensor (row ``c*R + r``: class ``c`` of job's model ``r``), so a
    minibatch is two ``bmm``s: logits ``W @ Xb^T`` laid out ``(F, C, R, B)`` and gradient ``G @ Xb``.
    """
    dev = x.device
    n_pad = x.shape[0] - 1  # index of the zero row
    nj, nreg, c, b, dim = len(jobs), len(jobs[0].l2), nclasses, cfg.batch_size, x.shape[1]
    steps = math.ceil(len(jobs[0].train) / b)
    w = w0.T[None, :, None, :].expand(nj, c, nreg, dim).reshape(nj, c * nreg, dim).contiguous()
    best_w = w.clone()
    wd = torch.tensor([[v for _ in range(c) for v in j.l2] for j in jobs], dtype=torch.float32)
    opt = _Optimizer(cfg.optim, w, wd[:, :, None].to(dev))
    y_ext = np.append(np.asarray(y, dtype=np.int64), 0)
    n_dev = [len(j.dev) for j in jobs]
    x_dev = x[torch.from_numpy(_pad([j.dev for j in jobs], max(n_dev), n_pad)).to(dev)]  # (F, Nd, D)
    y_dev = torch.from_numpy(_pad([y[j.dev] for j in jobs], max(n_dev), -1)).to(dev)[:, None, :]

    live = np.arange(nj)  # jobs with a model still training
    best = np.full((nj, nreg), -1, dtype=np.int64)
    count = np.zeros((nj, nreg), dtype=np.int64)
    active = np.ones((nj, nreg), dtype=bool)
    stopped_at = np.zeros((nj, nreg), dtype=np.int64)
    final_w = np.zeros((nj, nreg, dim, c), dtype=np.float32)
    nepoch = 0
    while len(live) and nepoch <= cfg.max_epoch:
        f = len(live)
        for _ in range(cfg.epoch_size):
            idx, g_tgt, g_sum = _epoch_batches(jobs, live, y_ext, n_pad, steps, b, c)
            idx_t, g_tgt, g_sum = torch.from_numpy(idx).to(dev), g_tgt.to(dev), g_sum.to(dev)
            for s in range(steps):
                xb = torch.index_select(x, 0, idx_t[s]).view(f, b, dim)
                p = torch.bmm(w, xb.transpose(1, 2)).view(f, c, nreg, b).log_softmax(1).exp_()
                g = (g_tgt[s] - p * g_sum[s]).view(f, c * nreg, b)
                opt.step(w, torch.bmm(g, xb))
        nepoch += cfg.epoch_size

        # SentEval's early stopping, per model: keep a copy on improvement, stop at the (tenacity+1)-th miss
        pred = torch.bmm(w, x_dev.transpose(1, 2)).view(f, c, nreg, -1).argmax(1)  # (F, R, Nd)
        correct = (pred == y_dev).sum(2).cpu().numpy()
        act = active[live]
        improved = act & (correct > best[live])
        missed = act & ~improved
        best[live] = np.where(improved, correct, best[live])
        active[live] = act & ~(missed & (count[live] >= cfg.tenacity))
        count[live] += missed
        stopped_at[live] = np.where(act, nepoch, stopped_at[live])
        if improved.any():
            best_w = torch.where(torch.from_numpy(np.tile(improved, (1, c)))[:, :, None].to(dev), w, best_w)
        done = ~active[live].any(1) | (nepoch > cfg.max_epoch)
        if done.any():
            out = np.flatnonzero(done)
            final_w[live[out]] = best_w[out].view(len(out), c, nreg, dim).permute(0, 2, 3, 1).cpu().numpy()
            keep = np.flatnonzero(~done)
            live, keep_t = live[keep], torch.from_numpy(keep).to(dev)
            w, best_w, x_dev, y_dev = w[keep_t], best_w[keep_t], x_dev[keep_t], y_dev[keep_t]
            opt.select(keep_t)
    return [
        Fitted(dev_correct=best[i].copy(), n_dev=n_dev[i], weights=final_w[i], epochs=stopped_at[i])
        for i in range(nj)
    ]


@contextmanager
def _cpu_threads(device: torch.device, n: int) -> Iterator[None]:
    prev = torch.get_num_threads()
    if device.type == "cpu":
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(prev)


def train_probes(
    x: np.ndarray | torch.Tensor,
    y: np.ndarray,
    nclasses: int,
    jobs: list[Job],
    cfg: ProbeConfig,
    device: torch.device | None = None,
    max_jobs: int = 16,
) -> list[Fitted]:
    """Train every job's models on rows of ``x`` (``(n, dim)`` features, or :func:`augment`'s output).

    Jobs run in lockstep chunks of at most ``max_jobs`` with the same number of minibatches per epoch.
    """
    device = device or default_device()
    xt = x if isinstance(x, torch.Tensor) else augment(x, device)
    w0 = initial_weights(xt.shape[1] - 1, nclasses, cfg.seed).to(device)
    y = np.asarray(y, dtype=np.int64)
    if len({len(j.l2) for j in jobs}) != 1:
        raise ValueError("all jobs of one call must train the same number of L2 values")
    groups: dict[int, list[int]] = {}
    for i, j in enumerate(jobs):
        groups.setdefault(math.ceil(len(j.train) / cfg.batch_size), []).append(i)
    out: list[Fitted | None] = [None] * len(jobs)
    with torch.inference_mode(), _cpu_threads(device, CPU_THREADS):
        for members in groups.values():
            for k in range(0, len(members), max_jobs):
                chunk = members[k : k + max_jobs]
                for i, fit in zip(
                    chunk, _train_chunk(xt, y, nclasses, [jobs[i] for i in chunk], w0, cfg), strict=True
                ):
                    out[i] = fit
    return [o for o in out if o is not None]


def predict(weights: np.ndarray, x: np.ndarray, device: torch.device | None = None) -> np.ndarray:
    """Class indices ``argmax(x @ W + b)`` for one model's ``(dim + 1, C)`` weights."""
    device = device or default_device()
    with torch.inference_mode():
        logits = augment(x, device)[:-1] @ torch.from_numpy(weights).to(device)
        return logits.argmax(1).cpu().numpy()
