"""ESimCSE's options and spec (what the config reads, without torch): the class is in :mod:`.esimcse`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from stsbench.options import STRICT as _STRICT
from stsbench.options import option
from stsbench.train.config.options import FixedMaskOptions, MethodSpec, NoiseOptions

if TYPE_CHECKING:
    from stsbench.train.config.options import TrainConfig


class ESimCSEOptions(BaseModel):
    """ESimCSE: word repetition (Sec. 3.2) and momentum contrast (Sec. 3.3)."""

    model_config = _STRICT

    repetition: bool = option(
        True, "ESimCSE: the positive view repeats tokens (--no-repetition: dropout views)."
    )
    repetition_kind: Literal["subword", "word", "stopword", "mask"] = option(
        "subword",
        "ESimCSE: subword | word | stopword (insert one) | mask (insert [MASK]).",
        label="repetition",
    )
    dup_rate: float = option(
        0.32, "ESimCSE: maximal repetition rate dup_rate (eq. 4).", ge=0, le=1, label="dup_rate"
    )
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
        2.5,
        "ESimCSE: queue size as a multiple of the batch size (0: no momentum contrast).",
        ge=0,
        label="queue size (multiple of the batch size)",
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


def queue_size(cfg: TrainConfig, world: int = 1) -> int:
    """ESimCSE's M = queue_multiple x batch (Sec. 5.4: 2.5x).

    The batch is the global one (``queue_scope: global``) or the process's own (``process``, each process's
    queue of its own keys, as the official code).
    """
    return int(cfg.queue_multiple * cfg.batch_size * (world if cfg.queue_scope == "global" else 1))


def components_of(config: Mapping[str, Any]) -> dict[str, bool]:
    """The components a run used (an option it lacks, saved before it existed, at its default)."""
    fields = ESimCSEOptions.model_fields
    repetition = config.get("repetition", fields["repetition"].default)
    queue = config.get("queue_multiple", fields["queue_multiple"].default)
    return {"word repetition": bool(repetition), "momentum contrast": float(queue) > 0}


def ablation_row(config: Mapping[str, Any]) -> str:
    """A run's row in ESimCSE's ablation (arXiv Tables 6-7, COLING Table 4).

    ``word repetition only`` is ESimCSE with ``queue_multiple 0``; ``momentum contrast only`` with
    ``--no-repetition`` (dropout views, the queue kept).
    """
    used = components_of(config)
    repetition, momentum = used["word repetition"], used["momentum contrast"]
    if repetition and momentum:
        return "ESimCSE"
    if repetition:
        return "word repetition only"
    return "momentum contrast only" if momentum else "ESimCSE, neither component"


SPEC = MethodSpec(
    "esimcse",
    "ESimCSE",
    "stsbench.train.methods.esimcse:ESimCSE",
    (NoiseOptions, FixedMaskOptions, ESimCSEOptions),
    queue_size=queue_size,
    variant=ablation_row,
    components=components_of,
    traceable_distance=True,
)
