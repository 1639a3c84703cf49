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
    except Exception as exc:  # click usage errors and friends
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(1)
        raise
