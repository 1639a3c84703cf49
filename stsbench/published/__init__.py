"""The papers' and MTEB's published numbers as data (``*.yaml`` here), and checks of results against them."""

from __future__ import annotations

from stsbench.published.registry import Entry, Paper, find_entries, get_entry, load_registry

__all__ = ["Entry", "Paper", "find_entries", "get_entry", "load_registry"]
