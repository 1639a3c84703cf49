"""SimCSE's poolers over a Hugging Face encoder's outputs (SimCSE ``evaluation.py`` batcher)."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported by whoever calls pool(); the CLI starts without it
    import torch


class Pooler(str, Enum):
    """How token states become one sentence vector."""

    cls = "cls"  # HF pooler_output: dense + tanh over [CLS]
    cls_before_pooler = "cls_before_pooler"  # last hidden state of [CLS]
    avg = "avg"  # masked mean of the last layer
    avg_first_last = "avg_first_last"  # masked mean of (hidden_states[1] + last) / 2
    avg_top2 = "avg_top2"  # masked mean of (last two layers) / 2


POOLERS = [p.value for p in Pooler]


def check_pooler(name: str) -> str:
    """``name`` if it is a pooler; else ``StsbenchError`` naming the nearest one and every choice."""
    if name in POOLERS:
        return name
    import difflib

    from stsbench.errors import StsbenchError

    near = difflib.get_close_matches(name.lower(), POOLERS, n=1, cutoff=0.6)
    hint = f"did you mean '{near[0]}'? " if near else ""
    raise StsbenchError(f"unknown pooler '{name}'; {hint}choose from: {', '.join(POOLERS)}")
# sentence-transformers' Pooling module (its ``1_Pooling/config.json``): the one ``pooling_mode_*`` flag set for
# each pooler it computes alone. Its ``cls`` is ``cls_before_pooler`` plus a Dense+tanh module (train/checkpoint.py
# writes that stack); avg_first_last and avg_top2 it cannot express.
ST_POOLING_MODES = {"cls_before_pooler": "pooling_mode_cls_token", "avg": "pooling_mode_mean_tokens"}


def needs_hidden_states(pooler: str) -> bool:
    """Whether the forward pass must return every layer."""
    return pooler in (Pooler.avg_first_last, Pooler.avg_top2)


def _masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # (B, T, H) x (B, T) -> (B, H); SimCSE divides the masked sum by the token count
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1)


def pool(outputs, attention_mask: torch.Tensor, pooler: str) -> torch.Tensor:
    """Sentence embeddings ``(B, H)`` from a ``transformers`` model output (``return_dict=True``)."""
    p = Pooler(pooler)
    if p is Pooler.cls:
        if getattr(outputs, "pooler_output", None) is None:
            raise ValueError("the model has no pooler layer; use --pooler cls_before_pooler or avg")
        return outputs.pooler_output
    if p is Pooler.cls_before_pooler:
        return outputs.last_hidden_state[:, 0]
    if p is Pooler.avg:
        return _masked_mean(outputs.last_hidden_state, attention_mask)
    hs = outputs.hidden_states
    if p is Pooler.avg_first_last:
        return _masked_mean((hs[1] + hs[-1]) / 2.0, attention_mask)
    return _masked_mean((hs[-1] + hs[-2]) / 2.0, attention_mask)
