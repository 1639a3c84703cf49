"""The console the commands print their tables on (a CLI helper, not a command: ``register_all`` skips it)."""

from __future__ import annotations

import sys


def table_console():
    """A rich console on stdout; piped or redirected, 200 columns wide instead of rich's 80, so no cell is cut."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)
