"""Momentum contrast's parts, for any method: EMA updates, FIFO queues of embeddings, the traceable distance.

ESimCSE Sec. 3.2 (momentum encoder + queue) and MoCoSE Sec. 3 (EMA target branch + queue, eq. 4).
"""

from __future__ import annotations

import torch
from torch import nn


@torch.no_grad()
def ema_update(target: nn.Module, online: nn.Module, decay: float | torch.Tensor) -> None:
    """ESimCSE eq. (6): theta_m <- lambda * theta_m + (1 - lambda) * theta_e, for every parameter.

    Buffers (position ids, ...) are copied. ``decay`` = 0 makes the target a copy of the online encoder.
    ``decay`` may be a 0-dim device tensor (MoCoSE's changing eta inside a CUDA graph, which bakes Python
    numbers in): then theta_m * eta + theta_e * (1 - eta), the same figure up to float rounding.
    """
    t_params = list(target.parameters())
    o_params = list(online.parameters())
    if len(t_params) != len(o_params):
        raise ValueError("momentum and online encoders have different parameters")
    # foreach: a few multi-tensor kernels on a GPU instead of two launches per parameter (the host-bound
    # part of an ESimCSE/MoCoSE step there); on a CPU the same per-tensor arithmetic as mul_ then add_
    online_values = [pe.detach() for pe in o_params]
    if t_params:  # a head of 0 layers (MoCoSE --projection-layers 0) has none: foreach refuses an empty list
        torch._foreach_mul_(t_params, decay)
        if isinstance(decay, torch.Tensor):
            torch._foreach_add_(t_params, torch._foreach_mul(online_values, 1.0 - decay))
        else:
            torch._foreach_add_(t_params, online_values, alpha=1.0 - decay)
    t_buffers, o_buffers = list(target.buffers()), list(online.buffers())
    if len(t_buffers) != len(o_buffers):
        raise ValueError("momentum and online encoders have different buffers")
    if t_buffers:
        torch._foreach_copy_(t_buffers, o_buffers)


class EmbeddingQueue:
    """The last ``size`` embeddings pushed, oldest first; pushing past ``size`` drops the oldest (FIFO).

    ESimCSE fills it with the momentum encoder's embeddings of the un-repeated sentences; they join the
    negatives of eq. (7) from the next step on.

    Two forms with the same contents. Growing (the default): a tensor of at most ``size`` rows, rebuilt by
    each push. Static (:meth:`make_static`, once full; what ``--cuda-graph`` replays): a ring of ``size``
    rows written in place at a head index kept on the device, read back oldest first by a gather, so a
    step's shapes and memory never change and no push reads the device from the host. Pushes and reads
    give the same rows in the same order in both forms; :meth:`clear` returns to the growing form (the
    ring's memory is kept for the next :meth:`make_static`, where a captured graph still points).
    """

    def __init__(self, size: int) -> None:
        self.size = int(size)
        self.items: torch.Tensor | None = None  # growing form: (<= size, H)
        self.ring: torch.Tensor | None = None  # static form: (size, H), row head is the oldest
        self.head: torch.Tensor | None = None  # static form: 0-dim long on the ring's device
        self.static = False

    def __len__(self) -> int:
        if self.static:
            return self.size
        return 0 if self.items is None else len(self.items)

    @property
    def full(self) -> bool:
        """Whether it holds ``size`` rows (a queue of size 0 never fills)."""
        return self.size > 0 and len(self) == self.size

    def make_static(self) -> None:
        """Switch a full queue to the static ring form (in the memory of an earlier ring, if any)."""
        if self.static:
            return
        if not self.full or self.items is None:
            raise ValueError(f"only a full queue turns static ({len(self)} of {self.size} rows)")
        if self.ring is None or self.ring.shape != self.items.shape or self.ring.device != self.items.device:
            self.ring = self.items.clone()
            self.head = torch.zeros((), dtype=torch.long, device=self.items.device)
            self._order = torch.arange(self.size, device=self.items.device)
        else:
            self.ring.copy_(self.items)
            self.head.zero_()
        self.items, self.static = None, True

    def push(self, embeddings: torch.Tensor) -> None:
        """Enqueue ``embeddings`` (B, H) and dequeue the oldest rows beyond ``size``."""
        if self.size <= 0:
            return
        new = embeddings.detach()
        if self.static:
            new = new[-self.size :].to(self.ring.dtype)
            # the len(new) oldest rows are overwritten, in order: the ring stays oldest-first from head
            self.ring.index_copy_(0, (self.head + self._order[: len(new)]) % self.size, new)
            self.head.copy_((self.head + len(new)) % self.size)
            return
        joined = new if self.items is None else torch.cat([self.items, new], dim=0)
        self.items = joined[-self.size :].clone()

    def negatives(self) -> torch.Tensor | None:
        """Return the queued embeddings (M, H), oldest first, or None while empty."""
        if self.static:
            return self.ring.index_select(0, (self.head + self._order) % self.size)
        return self.items

    def clear(self) -> None:
        """Empty the queue (the official code does it at each epoch start)."""
        self.items, self.static = None, False

    def state_dict(self) -> dict:
        """For checkpoints (the same in either form)."""
        items = self.negatives()
        return {"size": self.size, "items": None if items is None else items.cpu()}

    def load_state_dict(self, state: dict, device: torch.device | str = "cpu") -> None:
        """Restore from :meth:`state_dict` (in the growing form)."""
        self.size = int(state["size"])
        items = state["items"]
        self.items, self.static = (None if items is None else items.to(device)), False


def traceable_distance(decay: float, queue: int, batch: int) -> float:
    """MoCoSE eq. (4), for any EMA encoder with a queue: d_trace = 1 / (1 - eta) + queue_size / batch_size (steps back to the oldest key)."""
    return 1.0 / (1.0 - decay) + queue / batch
