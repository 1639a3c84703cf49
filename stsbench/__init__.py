"""stsbench: reproducible contrastive sentence-embedding research.

The Python API (imported on first use, so ``import stsbench`` and the CLI stay light)::

    import stsbench
    run = stsbench.evaluate("all-MiniLM-L6-v2")          # or a SentenceTransformer, a transformers model +
    print({r.task: r.reported for r in run.results})      # tokenizer=..., or any object with encode()
    stsbench.analyze("length_bias", model)                # every registered analysis, the same way
    stsbench.MockEncoder()                                # a deterministic encoder for tests
    stsbench.model_path("all-MiniLM-L6-v2")               # the folder --model loads (the embedded copy: offline)
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["MockEncoder", "__version__", "analyze", "as_encoder", "evaluate", "load_encoder", "model_path"]

_LAZY = {
    "analyze": ("stsbench.api", "analyze"),
    "as_encoder": ("stsbench.encoders.load", "as_encoder"),
    "evaluate": ("stsbench.api", "evaluate"),
    "load_encoder": ("stsbench.encoders", "load_encoder"),
    "MockEncoder": ("stsbench.encoders.base", "MockEncoder"),
    "model_path": ("stsbench.encoders.resolve", "model_path"),
}


def __getattr__(name: str):
    # PEP 562: each public name imports its module on first use (the CLI and `import stsbench` stay light)
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value  # looked up once
        return value
    raise AttributeError(f"module 'stsbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])
