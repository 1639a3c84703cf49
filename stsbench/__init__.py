"""stsbench: reproducible contrastive sentence-embedding research."""

from __future__ import annotations

__version__ = "0.1.0"
