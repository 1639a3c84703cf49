"""The typer app: parse options, call one library function, show the result.

Commands live in ``stsbench/commands/``; heavy imports happen inside each command.
"""

from __future__ import annotations

import sys

import typer

from stsbench.commands import register_all
from stsbench.errors import StsbenchError

app = typer.Typer(
    name="stsbench",
    help="Reproducible contrastive sentence-embedding research: evaluate, analyse, train, report.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
register_all(app)


def main() -> None:
    """Console entry point: user errors become one line on stderr and exit code 2."""
    try:
        # standalone_mode=False returns typer.Exit's code instead of exiting with it
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except StsbenchError as exc:
        typer.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        sys.exit(130)
    except SystemExit:
        raise
    except Exception as exc:
        # typer's (vendored) click usage errors: one line, with where to look
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            if not exc.format_message():  # `stsbench` with no command: help was shown
                sys.exit(0)
            ctx = getattr(exc, "ctx", None)
            where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            typer.echo(f"error: {exc.format_message()}{where}", err=True)
            sys.exit(exc.exit_code or 2)
        if type(exc).__name__ == "Abort":
            sys.exit(1)
        raise
