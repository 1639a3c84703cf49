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
    name: f"stsbench.encoders.{module}"
    for module, names in {
        "resolve": ["EMBEDDED_DEFAULT"],
        "base": ["EmbeddingTable", "EncodeOptions", "Encoder", "EncoderInfo", "embed_table"],
        "load": ["load_encoder", "build_encoder", "choose_pooler", "SIMCSE_DEFAULT_POOLER"],
        "pooling": ["POOLERS"],
    }.items()
    for name in names
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'stsbench.encoders' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
