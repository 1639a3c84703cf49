"""Encoders: the protocol, the HF / sentence-transformers loader with SimCSE's poolers, the embedding cache.

The names below are imported on first use (PEP 562), so that ``stsbench.encoders.resolve`` or ``.pooling``, which
the CLI reads to check a name, import neither numpy nor anything heavier.
"""

from __future__ import annotations

import importlib

__all__ = [
    "EMBEDDED_DEFAULT",
    "EmbeddingTable",
    "EncodeOptions",
    "Encoder",
    "EncoderInfo",
    "embed_table",
    "load_encoder",
    "POOLERS",
]
_LAZY = {
    "EMBEDDED_DEFAULT": "stsbench.encoders.resolve",
    "EmbeddingTable": "stsbench.encoders.base",
    "EncodeOptions": "stsbench.encoders.base",
    "Encoder": "stsbench.encoders.base",
    "EncoderInfo": "stsbench.encoders.base",
    "embed_table": "stsbench.encoders.base",
    "load_encoder": "stsbench.encoders.load",
    "build_encoder": "stsbench.encoders.load",
    "choose_pooler": "stsbench.encoders.load",
    "SIMCSE_DEFAULT_POOLER": "stsbench.encoders.load",
    "POOLERS": "stsbench.encoders.pooling",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'stsbench.encoders' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
