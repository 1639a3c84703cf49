"""CLI command modules. Each module here defines ``register(app: typer.Typer) -> None``; cli.py finds them.

Modules whose name starts with ``_`` are the commands' shared helpers (options, console), not commands.
"""

from __future__ import annotations

import importlib
import pkgutil

import typer

# The module that adds each command, so that `stsbench <command>` imports that module alone (`train` builds its
# flags from the training config, pydantic and all; `run` on a warm cache needs none of it). A command not
# listed here (the analyses, whose commands come from their registry and its plugins) gets every module.
# tests/test_cold_start.py checks this table against what the modules register. A command is named after its
# module, but for these two.
MODULE_OF = {name: name for name in ("compare", "data", "published", "report", "reproduce", "run", "train")}
MODULE_OF.update({"check": "published", "export-mteb": "published"})


def command_modules() -> list[str]:
    """Every command module's name, in order."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def register_all(app: typer.Typer, command: str | None = None) -> None:
    """Let the command modules add their commands to ``app``: the one adding ``command`` when it is known, else all."""
    names = [MODULE_OF[command]] if command in MODULE_OF else command_modules()
    for name in names:
        importlib.import_module(f"{__name__}.{name}").register(app)
