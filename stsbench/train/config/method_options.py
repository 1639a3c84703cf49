"""The built-in methods: their option groups (Gaussian noise for SimCSE and ESimCSE, ESimCSE's, MoCoSE's) and specs.

:mod:`.options` assembles :class:`~stsbench.train.config.options.TrainConfig` from the groups of every
registered method (:data:`~stsbench.train.config.methods.METHODS`); adding an option to one of these groups is
one field here. Nothing here imports the config or torch: the method classes import what they need from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, model_validator

from stsbench.errors import StsbenchError
from stsbench.train.config.fields import STRICT as _STRICT
from stsbench.train.config.fields import option
from stsbench.train.config.methods import MethodName, MethodSpec

if TYPE_CHECKING:
    from stsbench.train.config.options import TrainConfig


class NoiseOptions(BaseModel):
    """The Gaussian-dropout variant (SimCSE and ESimCSE)."""

    model_config = _STRICT

    gaussian_noise_std: float = option(
        0.0,
        "Gaussian-dropout variant: add N(0, std^2) noise to the pooled embeddings of both views in "
        "training only (0: off; the report used 0.1).",
        ge=0,
    )
    gaussian_dropout_p: float = option(
        0.0,
        "The report's Gaussian dropout: replace this share of the training embeddings' entries (both views) "
        "by N(0, std^2) draws, training only (0: off; the report: 0.1).",
        ge=0,
        le=1,
    )
    gaussian_dropout_std: float = option(
        0.1, "Gaussian dropout: std of the replacing draws (the report: 0.1).", ge=0
    )


class ESimCSEOptions(BaseModel):
    """ESimCSE: word repetition (Sec. 3.2) and momentum contrast (Sec. 3.3)."""

    model_config = _STRICT

    repetition: bool = option(
        True, "ESimCSE: the positive view repeats tokens (--no-repetition: dropout views)."
    )
    repetition_kind: Literal["subword", "word", "stopword", "mask"] = option(
        "subword", "ESimCSE: subword | word | stopword (insert one) | mask (insert [MASK])."
    )
    dup_rate: float = option(0.32, "ESimCSE: maximal repetition rate dup_rate (eq. 4).", ge=0, le=1)
    repetition_sampling: Literal["paper", "official"] = option(
        "paper",
        "ESimCSE: paper (dup_len in [0, max(2, int(dup_rate*N))], fresh each "
        "batch) or official (randrange(min(10, int(dup_rate*L))), fixed per sentence).",
    )
    momentum: float = option(
        0.995,
        "ESimCSE: momentum lambda of the EMA encoder (eq. 6); 0 copies the online one.",
        why="is outside [0, 1) (eq. 6)",
        ge=0,
        lt=1,
    )
    momentum_init: Literal["copy", "random"] = option(
        "copy",
        "ESimCSE: start the momentum encoder as a copy of the online one (paper) or random (official code).",
    )
    queue_multiple: float = option(
        2.5, "ESimCSE: queue size as a multiple of the batch size (0: no momentum contrast).", ge=0
    )
    queue_reset_each_epoch: bool = option(
        False, "ESimCSE: empty the queue at each epoch start (official code)."
    )
    queue_scope: Literal["global", "process"] = option(
        "global",
        "ESimCSE with several processes: one queue of every process's keys, queue_multiple x the global "
        "batch (global), or each process its own keys, queue_multiple x its batch (process: official "
        "trainers.py:626-636).",
    )
    momentum_update: Literal["after-step", "before-step"] = option(
        "after-step",
        "ESimCSE: update the momentum encoder (eq. 6) and queue the step's keys after the optimizer step, "
        "from the stepped weights (after-step), or before it, from the weights the loss was computed with "
        "(before-step: official models.py cl_forward, trainers.py compute_loss).",
    )
    momentum_mlp: Literal["momentum", "online"] = option(
        "momentum",
        "ESimCSE: EMA over backbone + MLP, keys through the EMA'd MLP (momentum), or EMA over the backbone "
        "only, keys through the online MLP (online: official models.py:161-163, 188-189).",
    )


class MoCoSEOptions(BaseModel):
    """MoCoSE: EMA target branch, FGSM, negative queue (Sec. 3, eqs. 1-4)."""

    model_config = _STRICT

    projection_layers: int = option(1, "MoCoSE: projection layers of both branches (Table 4: 1).", ge=0)
    predictor_layers: int = option(2, "MoCoSE: predictor layers of the online branch (Table 4: 2).", ge=0)
    ema_decay_start: float = option(
        0.75,
        "MoCoSE: EMA decay eta of the target branch at the first step, ramped by a cosine.",
        why="is outside [0, 1) (eq. 2)",
        ge=0,
        lt=1,
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
    queue_size: int = option(512, "MoCoSE: negative queue size K (global across processes).", ge=0)
    queue_start_size: int = option(
        128, "MoCoSE: random entries the queue starts from (K_start; Table 7).", ge=0
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


def traceable_distance(decay: float, queue: int, batch: int) -> float:
    """MoCoSE eq. (4): d_trace = 1 / (1 - eta) + queue_size / batch_size (steps back to the oldest key)."""
    return 1.0 / (1.0 - decay) + queue / batch


def esimcse_queue_size(cfg: TrainConfig, world: int = 1) -> int:
    """ESimCSE's M = queue_multiple x batch (Sec. 5.4: 2.5x).

    The batch is the global one (``queue_scope: global``) or the process's own (``process``, each process's
    queue of its own keys, as the official code).
    """
    return int(cfg.queue_multiple * cfg.batch_size * (world if cfg.queue_scope == "global" else 1))


def mocose_queue_size(cfg: TrainConfig, world: int = 1) -> int:
    """MoCoSE's K, global across processes."""
    return cfg.queue_size


SIMCSE = MethodSpec(
    MethodName.SIMCSE,
    "SimCSE",
    "stsbench.train.methods.simcse:Method",
    (NoiseOptions,),
    supervised="stsbench.train.methods.simcse:SupSimCSE",
    about="unsup from a text file, sup from a sent0,sent1[,hard_neg] CSV",
)
ESIMCSE = MethodSpec(
    MethodName.ESIMCSE,
    "ESimCSE",
    "stsbench.train.methods.esimcse:ESimCSE",
    (NoiseOptions, ESimCSEOptions),
    queue_size=esimcse_queue_size,
)
MOCOSE = MethodSpec(
    MethodName.MOCOSE,
    "MoCoSE",
    "stsbench.train.methods.mocose:MoCoSE",
    (MoCoSEOptions,),
    # MoCoSE Sec. 4.1: weight decay 1e-6; a dev evaluation every 100 steps
    {"weight_decay": 1e-6, "eval_steps": 100},
    queue_size=mocose_queue_size,
)
