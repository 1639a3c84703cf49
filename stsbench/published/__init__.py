"""The papers' and MTEB's published numbers as data (``*.yaml`` here), and checks of results against them.

Its names load on first use (the registry's module imports the records and schema beside it, which import this
package: an eager import here would be a cycle, and so would a declaration to type checkers).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["Entry", "Paper", "find_entries", "get_entry", "load_registry"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module("stsbench.published.registry"), name)
    globals()[name] = value
    return value
