"""Training methods, plugged into the one loop of :mod:`stsbench.train.loop`.

Each is an augmentation (``make_views``), a loss (``loss``) and optional state (``after_step``: momentum
encoder, queue): a subclass of :class:`~stsbench.train.methods.simcse.Method` (in ``simcse.py``: the base is
unsup SimCSE), named with its option groups and defaults by a
:class:`~stsbench.train.config.methods.MethodSpec` in the method registry
(:data:`~stsbench.train.config.methods.METHODS`), which :func:`build_method` reads.

With several processes (:mod:`stsbench.train.distributed`) every loss is the loss of the global batch: the
embeddings of all processes are gathered (the local slice keeps its gradient) and queues hold the keys of
every process, so each process holds the same queue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

from stsbench.errors import StsbenchError
from stsbench.train.config.methods import METHODS
from stsbench.train.methods.esimcse import ESimCSE
from stsbench.train.methods.mocose import MoCoSE, head
from stsbench.train.methods.simcse import Method, SupSimCSE, load_pretrained_lm_head
from stsbench.train.methods.views import Tokens, Views, encode_bucketed, encode_views
from stsbench.train.model import ContrastiveEncoder

if TYPE_CHECKING:
    from stsbench.train.config import ResolvedConfig

__all__ = [
    "ESimCSE",
    "Method",
    "MoCoSE",
    "SupSimCSE",
    "Tokens",
    "Views",
    "build_method",
    "encode_bucketed",
    "encode_views",
    "head",
    "load_pretrained_lm_head",
]


def build_method(
    cfg: ResolvedConfig, tokenizer, model: ContrastiveEncoder, generator: torch.Generator | None = None
) -> Method:
    """Build the method ``cfg`` names (its spec's class; sentence pairs: its ``supervised`` one) for ``model``."""
    cls = METHODS[cfg.method].method_class(cfg.supervised)
    if not (isinstance(cls, type) and issubclass(cls, Method)):
        raise StsbenchError(f"method {cfg.method!r}: its class {cls!r} is not a subclass of Method")
    return cls.build(cfg, tokenizer, model, generator)
