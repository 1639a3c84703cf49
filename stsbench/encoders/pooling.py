"""SimCSE's poolers over a Hugging Face encoder's outputs (SimCSE ``evaluation.py`` batcher), in a registry.

A pooler is a function ``(outputs, attention_mask) -> (B, H)`` over a ``transformers`` model output
(``return_dict=True``) registered in :data:`POOLER_REGISTRY` (a :class:`stsbench.registry.Registry`); one that
reads ``outputs.hidden_states`` says so with ``hidden_states = True``. Another package adds one under the
``stsbench.poolers`` entry-point group. Names are checked without importing torch: the CLI refuses a mistyped
``--pooler`` before anything heavy loads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stsbench.registry import Registry

if TYPE_CHECKING:  # torch is imported by whoever calls pool(); the CLI starts without it
    import torch


def _masked_mean(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    # (B, T, H) x (B, T) -> (B, H); SimCSE divides the masked sum by the token count
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1)


def cls_pooler(outputs, attention_mask: torch.Tensor) -> torch.Tensor:
    """``cls``: HF pooler_output, dense + tanh over [CLS]."""
    if getattr(outputs, "pooler_output", None) is None:
        raise ValueError("the model has no pooler layer; use --pooler cls_before_pooler or avg")
    return outputs.pooler_output


def cls_before_pooler(outputs, attention_mask: torch.Tensor) -> torch.Tensor:
    """``cls_before_pooler``: the last hidden state of [CLS]."""
    return outputs.last_hidden_state[:, 0]


def avg(outputs, attention_mask: torch.Tensor) -> torch.Tensor:
    """``avg``: masked mean of the last layer."""
    return _masked_mean(outputs.last_hidden_state, attention_mask)


def avg_first_last(outputs, attention_mask: torch.Tensor) -> torch.Tensor:
    """``avg_first_last``: masked mean of (hidden_states[1] + last) / 2 (hidden_states[0] is the embeddings)."""
    hs = outputs.hidden_states
    return _masked_mean((hs[1] + hs[-1]) / 2.0, attention_mask)


def avg_top2(outputs, attention_mask: torch.Tensor) -> torch.Tensor:
    """``avg_top2``: masked mean of (the last two layers) / 2."""
    hs = outputs.hidden_states
    return _masked_mean((hs[-1] + hs[-2]) / 2.0, attention_mask)


avg_first_last.hidden_states = True  # type: ignore[attr-defined]
avg_top2.hidden_states = True  # type: ignore[attr-defined]

POOLER_REGISTRY: Registry = Registry("pooler", entry_points="stsbench.poolers")
POOLERS = ["cls", "cls_before_pooler", "avg", "avg_first_last", "avg_top2"]  # SimCSE's five, in its order
for _name, _fn in zip(POOLERS, [cls_pooler, cls_before_pooler, avg, avg_first_last, avg_top2], strict=True):
    POOLER_REGISTRY.register(_name, _fn)  # plugins are in POOLER_REGISTRY.names()

# sentence-transformers' Pooling module (its ``1_Pooling/config.json``): the one ``pooling_mode_*`` flag set for
# each pooler it computes alone. Its ``cls`` is ``cls_before_pooler`` plus a Dense+tanh module (train/checkpoint.py
# writes that stack); avg_first_last and avg_top2 it cannot express.
ST_POOLING_MODES = {"cls_before_pooler": "pooling_mode_cls_token", "avg": "pooling_mode_mean_tokens"}


def check_pooler(name: str) -> str:
    """``name`` if it is a registered pooler; else ``StsbenchError`` naming the nearest one and every choice."""
    return POOLER_REGISTRY.check(name)


def needs_hidden_states(pooler: str) -> bool:
    """Whether the forward pass must return every layer."""
    return bool(getattr(POOLER_REGISTRY.get(pooler), "hidden_states", False))


def pool(outputs, attention_mask: torch.Tensor, pooler: str) -> torch.Tensor:
    """Sentence embeddings ``(B, H)`` from a ``transformers`` model output (``return_dict=True``)."""
    return POOLER_REGISTRY.get(pooler)(outputs, attention_mask)
