"""Several processes, one training run: torch.distributed as ``torchrun`` (or Accelerate's launcher) sets it up.

    torchrun --nproc_per_node 4 -m stsbench train --config simcse-bert-base-paper ...

Every process reads the same global batch (``batch_size`` x world size rows, the same order everywhere) and
encodes its own slice of it; the weights stay equal through ``DistributedDataParallel``. The contrastive
losses see the embeddings of *every* process: :func:`gather_with_grad` concatenates them (rank order, as the
rows of the global batch) and only the process's own slice carries a gradient, SimCSE's ``cl_forward`` way.
Each process then computes the loss of the whole global batch; since DDP averages the gradients of the N
processes, :func:`loss_scale` (= N) makes the averaged gradient the gradient of that loss, so N processes with
batch B take the same step as one process with batch N*B (``ddp_gradient: global``). The official SimCSE and
ESimCSE code (``models.py`` ``cl_forward``, the same gather) leaves the loss as it is, so its DDP step takes
1/N of that gradient (``ddp_gradient: average``, scale 1).

Single process (no ``WORLD_SIZE`` or ``WORLD_SIZE=1``): every function here is the identity.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from stsbench.errors import StsbenchError


@dataclass(frozen=True)
class Context:
    """Where this process stands: its rank among ``world`` processes and its device."""

    rank: int = 0
    world: int = 1
    local_rank: int = 0
    device: str = "cpu"

    @property
    def main(self) -> bool:
        """Rank 0 evaluates, logs and saves."""
        return self.rank == 0


def setup(device: str | None) -> Context:
    """Join the process group ``torchrun`` describes in the environment (no-op for one process).

    The backend is NCCL on CUDA, gloo on CPU. ``device`` (``--device``) may name ``cpu`` or ``cuda``; with
    several processes each takes ``cuda:LOCAL_RANK``.
    """
    if device is not None:
        from stsbench.encoders.hf import check_device

        check_device(device)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    cuda = torch.cuda.is_available() and (device is None or device.startswith("cuda"))
    if world <= 1:
        return Context(device=device or ("cuda" if cuda else "cpu"))
    if device is not None and device.startswith("cuda:"):
        raise StsbenchError(
            "--device cuda:N with several processes: each process takes cuda:LOCAL_RANK; pass --device cuda"
        )
    rank, local = int(os.environ["RANK"]), int(os.environ.get("LOCAL_RANK", "0"))
    if cuda:
        torch.cuda.set_device(local)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if cuda else "gloo")
    return Context(rank, world, local, f"cuda:{local}" if cuda else "cpu")


def active() -> bool:
    """Tell whether this process is one of several."""
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def world_size() -> int:
    """Number of processes (1 without torch.distributed)."""
    return dist.get_world_size() if active() else 1


def loss_scale(ddp_gradient: str = "global") -> float:
    """Factor on the global loss before backward: N, so that DDP's average is its gradient (``global``), or 1.

    ``average`` (the official SimCSE/ESimCSE code): each process back-propagates the global loss through its
    own slice and DDP averages, which is 1/N of the global loss's gradient.
    """
    return float(world_size()) if ddp_gradient == "global" else 1.0


def _all_gather(x: torch.Tensor) -> list[torch.Tensor]:
    parts = [torch.empty_like(x) for _ in range(dist.get_world_size())]
    dist.all_gather(parts, x.detach().contiguous())
    return parts


def gather(x: torch.Tensor) -> torch.Tensor:
    """Concatenate ``x`` (B, ...) of every process in rank order, without gradient: (N*B, ...)."""
    return torch.cat(_all_gather(x)) if active() else x


def gather_with_grad(x: torch.Tensor) -> torch.Tensor:
    """As :func:`gather`, but this process's own slice is ``x`` itself and keeps its gradient."""
    if not active():
        return x
    parts = _all_gather(x)
    parts[dist.get_rank()] = x
    return torch.cat(parts)


def all_objects(obj):
    """Return ``[obj of rank 0, obj of rank 1, ...]`` (``[obj]`` for one process)."""
    if not active():
        return [obj]
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def barrier() -> None:
    """Wait for every process."""
    if active():
        dist.barrier()


def cleanup() -> None:
    """Leave the process group."""
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
