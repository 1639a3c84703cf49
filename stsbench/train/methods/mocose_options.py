"""MoCoSE's options and spec (what the config reads, without torch): the class is in :mod:`.mocose`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, model_validator

from stsbench.errors import StsbenchError
from stsbench.options import STRICT as _STRICT
from stsbench.options import option
from stsbench.train.config.options import MethodSpec

if TYPE_CHECKING:
    from stsbench.train.config.options import TrainConfig


class MoCoSEOptions(BaseModel):
    """MoCoSE: EMA target branch, FGSM, negative queue (Sec. 3, eqs. 1-4)."""

    model_config = _STRICT

    projection_layers: int = option(
        1, "MoCoSE: projection layers of both branches (Table 4: 1).", ge=0, label="projection layers"
    )
    predictor_layers: int = option(
        2, "MoCoSE: predictor layers of the online branch (Table 4: 2).", ge=0, label="predictor layers"
    )
    out_size: int | None = option(
        None,
        "MoCoSE: width D of the projection's output, the predictor and the queued keys (the official "
        "config.out_size; Table 6(a)'s 'prediction dimension'); default: the backbone's hidden size. The "
        "encoder's pooled embedding, which evaluation reads, keeps the hidden size.",
        ge=1,
        label="embedding dimension",
    )
    ema_decay_start: float = option(
        0.75,
        "MoCoSE: EMA decay eta of the target branch at the first step, ramped by a cosine.",
        why="is outside [0, 1) (eq. 2)",
        ge=0,
        lt=1,
        label="EMA decay weight",
    )
    ema_decay_end: float = option(
        0.95,
        "MoCoSE: EMA decay eta at the end of the schedule (1: the official code's).",
        why="is outside [0, 1] (eq. 2)",
        ge=0,
        le=1,
    )
    ema_schedule: Literal["run", "steps", "fixed"] = option(
        "run",
        "MoCoSE: eta by a cosine over the run (paper Sec. 4.1), over --ema-schedule-steps (official: "
        "end 1, 15000 steps, mocose.py:43), or fixed at --ema-decay-start.",
    )
    ema_schedule_steps: int = option(
        15000, "MoCoSE: length of the 'steps' EMA schedule (official mocose.py:34: 15000).", ge=1
    )
    target_view: Literal["augmented", "clean"] = option(
        "augmented",
        "MoCoSE: the target branch sees the augmented view (dropout + FGSM, paper Alg. 1 and official) or "
        "clean tokens in eval mode.",
    )
    target_embeddings: Literal["shared", "target"] = option(
        "shared",
        "MoCoSE, augmented target view: the target encoder reads the online embedding layer's output "
        "(shared: paper Sec. 3 and official mocose.py:507-514), or the online word embeddings through the "
        "target's own EMA'd position, type and LayerNorm embeddings (target: stsbench before).",
    )
    key_gradient: Literal["stop", "official"] = option(
        "stop",
        "MoCoSE: stop-gradient at the keys (paper) or the official code's (keys undetached, target "
        "projection trained and EMA'd, target encoder frozen).",
    )
    fgsm_epsilon: float = option(
        5e-9, "MoCoSE: FGSM step on the online branch's input embeddings (eq. 1; 0: off).", ge=0
    )
    queue_size: int = option(
        512, "MoCoSE: negative queue size K (global across processes).", ge=0, label="queue size"
    )
    queue_start_size: int = option(
        128,
        "MoCoSE: random entries the queue starts from (K_start; Table 7).",
        ge=0,
        label="initial queue size",
    )
    queue_start: Literal["random", "batches", "official"] = option(
        "random",
        "MoCoSE: start the queue from --queue-start-size random entries, empty (filled by the first batches), "
        "or as the official code (K random entries, the loss reads the newest counter + K_start, the "
        "counter starting at K_start = --queue-start-size, then all held, more than K until the counter "
        "passes K; mocose.py dequeue_and_enqueue).",
    )
    queue_slice: str | None = option(
        None,
        "MoCoSE: the queue positions that join the loss, newest first, as START:END[,START:END] "
        "(Table 8: 256:768; default: all).",
        label="queue slice",
    )

    @model_validator(mode="after")
    def _queue_fits(self) -> MoCoSEOptions:
        if not self.queue_start_size <= self.queue_size:
            raise StsbenchError(
                f"--queue-start-size {self.queue_start_size} must be between 0 and --queue-size {self.queue_size}"
            )
        if self.queue_slice is not None:
            parse_slices(self.queue_slice, self.queue_size)
        return self


def parse_slices(spec: str, size: int) -> list[tuple[int, int]]:
    """``"0:256,768:1024"`` -> ``[(0, 256), (768, 1024)]``: queue positions, newest first (MoCoSE Table 8)."""
    out = []
    for part in spec.split(","):
        bounds = part.strip().split(":")
        try:
            start, end = (int(b) for b in bounds)
        except ValueError:
            raise StsbenchError(
                f"--queue-slice {spec!r}: expected START:END[,START:END] with whole numbers, e.g. 256:768"
            ) from None
        if not 0 <= start < end <= size:
            raise StsbenchError(
                f"--queue-slice {part.strip()!r}: need 0 <= START < END <= --queue-size ({size})"
            )
        out.append((start, end))
    return out


def queue_size(cfg: TrainConfig, world: int = 1) -> int:
    """MoCoSE's K, global across processes."""
    return cfg.queue_size


SPEC = MethodSpec(
    "mocose",
    "MoCoSE",
    "stsbench.train.methods.mocose:MoCoSE",
    (MoCoSEOptions,),
    # MoCoSE Sec. 4.1: weight decay 1e-6; a dev evaluation every 100 steps
    {"weight_decay": 1e-6, "eval_steps": 100},
    queue_size=queue_size,
    # a branch's augmentations (MoCoSE Table 5): text and tokens stages make the target its own view (the
    # official nlpaug ones: the target only), the embeddings stage acts on either branch's input embeddings
    augment_views=("online", "target", "both"),
    traceable_distance=True,  # 1 / (1 - EMA weight) + queue / batch (eq. 4)
)
