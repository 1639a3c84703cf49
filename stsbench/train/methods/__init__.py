"""Training methods, plugged into the one loop of :mod:`stsbench.train.loop`.

Each is an augmentation (``make_views``), a loss (``loss``) and optional state (``after_step``: momentum
encoder, queue). Adding a method is a subclass of :class:`Method`.

With several processes (:mod:`stsbench.train.distributed`) every loss is the loss of the global batch: the
embeddings of all processes are gathered (the local slice keeps its gradient) and queues hold the keys of
every process, so each process holds the same queue.
"""

from __future__ import annotations

import torch

from stsbench.train.config import MethodName, TrainConfig
from stsbench.train.methods.esimcse import ESimCSE
from stsbench.train.methods.mocose import MoCoSE, head
from stsbench.train.methods.simcse import Method, SupSimCSE, load_pretrained_lm_head
from stsbench.train.methods.views import Tokens, Views, encode_bucketed, encode_views
from stsbench.train.model import ContrastiveEncoder

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
]


def build_method(
    cfg: TrainConfig, tokenizer, model: ContrastiveEncoder, generator: torch.Generator | None = None
) -> Method:
    """Build the method ``cfg`` names, its new layers initialised and its state attached to ``model``."""
    config = model.backbone.config
    if cfg.method == MethodName.MOCOSE:
        mocose = MoCoSE(cfg, tokenizer, config)
        mocose.init_new_layers(generator, config.initializer_range)
        mocose.attach(model)
        return mocose.to(next(model.parameters()).device)
    if cfg.method == MethodName.ESIMCSE:
        method: Method = ESimCSE(cfg, tokenizer, config)
        method.attach(model, generator)
    elif cfg.supervised:
        method = SupSimCSE(cfg, tokenizer, config)
    else:
        method = Method(cfg, tokenizer, config)
    method.init_new_layers(generator, config.initializer_range)
    if method.mlm_loss is not None and method.mlm_head_init == "pretrained":
        method.mlm_head_loaded = load_pretrained_lm_head(method.mlm_loss.lm_head, model.backbone.name_or_path)
    return method.to(next(model.parameters()).device)
