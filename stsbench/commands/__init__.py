"""CLI command modules. Each module here defines ``register(app: typer.Typer) -> None``; cli.py finds them.

Modules whose name starts with ``_`` are the commands' shared helpers (options, console), not commands.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer


def register_all(app: typer.Typer) -> None:
    """Import every command module in this package and let it add its commands to ``app``."""
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{mod.name}")
        module.register(app)
