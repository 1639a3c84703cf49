"""Each step's views, made ahead in a background thread on CUDA, on demand elsewhere.

A step's views are a pure function of the step (:func:`stsbench.train.run.batch_views`: rows from
``(seed, epoch, index)``, draws from their own generator), so making them ahead changes nothing: the same
tensors reach the step, in the same order, and a resumed run starts the thread at its saved step.

Why a thread, not a ``torch.utils.data.DataLoader`` with worker processes: a worker would need a copy of
the method (for ESimCSE and MoCoSE, with its encoders), and the work is small (tokenising 64 sentences,
ESimCSE's repetition, MLM masking, padding); the fast tokenizer releases the GIL while it encodes. The
thread gets its own copy of the tokenizer, so no tokenizer is used by two threads at once.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

import torch

from stsbench.train.methods.views import Views


def prefetch_depth(device: str) -> int:
    """Steps made ahead: 4 on CUDA; 0 elsewhere, where the step itself keeps every CPU core busy."""
    return 4 if torch.device(device).type == "cuda" else 0


class Batches:
    """The views of steps ``start`` to ``stop - 1``, in order, on ``device``.

    ``depth`` > 0: a background thread makes up to ``depth`` steps ahead (in pinned memory on CUDA, so
    the copy to the device does not block); 0: each step's views are made when asked. Use as a context
    manager, so that the thread stops with the run, however it ends.
    """

    def __init__(
        self, make: Callable[[int], Views], *, start: int, stop: int, device: str, depth: int
    ) -> None:
        self.make, self.device, self.depth = make, device, depth
        self.pin = depth > 0 and torch.device(device).type == "cuda"
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self._thread = None
        if depth > 0:
            self._thread = threading.Thread(target=self._work, args=(start, stop), daemon=True)
            self._thread.start()

    def _put(self, item: tuple) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _work(self, start: int, stop: int) -> None:
        try:
            for step in range(start, stop):
                views = self.make(step)
                if self.pin:
                    views = views.map(torch.Tensor.pin_memory)
                if not self._put((step, views)):
                    return
        except BaseException as exc:  # handed to the main thread, which raises it at its next get
            self._put((None, exc))

    def get(self, step: int) -> Views:
        """The views of ``step`` on the device (steps must be asked for in order)."""
        if self._thread is None:
            return self.make(step).to(self.device)
        made, item = self._queue.get()
        if made is None:
            raise item
        if made != step:
            raise RuntimeError(f"the views of step {made} came for step {step}")  # a caller skipped a step
        return item.to(self.device, non_blocking=self.pin)

    def close(self) -> None:
        """Stop the thread (it may be waiting to hand over a step nobody will ask for)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Batches:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
