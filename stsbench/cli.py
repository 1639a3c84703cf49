"""The typer app: parse options, call one library function, show the result.

Commands live in ``stsbench/commands/``; heavy imports happen inside each command, and ``stsbench <command>``
imports only the module that adds that command (:data:`stsbench.commands.MODULE_OF`).
"""

from __future__ import annotations

import logging
import sys

import typer

from stsbench.commands import register_all
from stsbench.commands._options import opt, with_suggestion
from stsbench.errors import INTERRUPTED as INTERRUPTED_STATUS
from stsbench.errors import StsbenchError, os_error_line


def build_app(command: str | None = None) -> typer.Typer:
    """The typer app: with every command, or with the commands of the module that adds ``command`` only."""
    app = typer.Typer(
        name="stsbench",
        help="Reproducible contrastive sentence-embedding research: evaluate, analyse, train, report.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        add_completion=False,
        rich_markup_mode=None,  # click's plain help: flags without a <bool> metavar, long names never cut
    )
    # a group even when one command is registered (typer would otherwise run that command without its name)
    app.callback()(_group)
    register_all(app, command)
    return app


def _show_version(value: bool) -> None:
    if value:
        from stsbench import __version__

        typer.echo(f"stsbench {__version__}")
        raise typer.Exit()


def _group(
    version: opt(
        bool, "--version", is_eager=True, callback=_show_version, help="Show stsbench's version and exit."
    ) = False,
) -> None:
    pass  # the group's help is Typer(help=...)'s


def __getattr__(name: str):
    # `stsbench.cli.app`, every command registered, is built on first use: main() builds only what it runs
    if name == "app":
        globals()["app"] = value = build_app()
        return value
    raise AttributeError(f"module 'stsbench.cli' has no attribute {name!r}")


_PREFIX = {logging.INFO: "note", logging.WARNING: "warning"}


class _StderrHandler(logging.Handler):
    """The library's log records (``logging.getLogger("stsbench")``) as the CLI shows notes: one line on stderr.

    ``note: ...`` for INFO, ``warning: ...`` for WARNING, ``error: ...`` above; written through ``typer.echo``
    to whatever ``sys.stderr`` is at that moment (a test's capture included).
    """

    def emit(self, record: logging.LogRecord) -> None:
        prefix = _PREFIX.get(record.levelno, "error" if record.levelno > logging.WARNING else "debug")
        typer.echo(f"{prefix}: {record.getMessage()}", err=True)


def show_library_log() -> None:
    """Send the library's notes and warnings to stderr (once, however often the CLI runs in one process)."""
    logger = logging.getLogger("stsbench")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        logger.addHandler(_StderrHandler())
    logger.setLevel(logging.INFO)


INTERRUPTED = (
    "interrupted; what was finished is kept (encoded batches in the embedding cache, results files written, "
    "saved checkpoints): rerun the same command to go on from there (train: with --resume)"
)


def _interrupted() -> None:
    """Ctrl-C / SIGINT: one line and the shell's exit status for it (128 + SIGINT)."""
    typer.echo(f"error: {INTERRUPTED}", err=True)
    sys.exit(INTERRUPTED_STATUS)


def _suggested(line: str) -> str:
    """An error line with the nearest known model added where it names a model not found (mistyped)."""
    try:
        return with_suggestion(line)
    except Exception:  # noqa: BLE001 - a hint must never hide the error it adds to
        return line


def main() -> None:
    """Console entry point: user errors become one line on stderr and the exit status of :mod:`stsbench.errors`."""
    show_library_log()
    try:
        # standalone_mode=False returns typer.Exit's code instead of exiting with it
        # the command word: the first argument, when not an option such as --help
        args = sys.argv[1:]
        code = build_app(args[0] if args and not args[0].startswith("-") else None)(standalone_mode=False)
        if code == INTERRUPTED_STATUS:  # typer turns Ctrl-C inside a command into a silent Exit(130)
            _interrupted()
        if isinstance(code, int) and code:
            sys.exit(code)
    except StsbenchError as exc:  # "error", or what the error says it is (an open question: "open")
        typer.echo(f"{getattr(exc, 'word', 'error')}: {_suggested(str(exc))}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        _interrupted()
    except OSError as exc:  # a full disk, a read-only or forbidden folder: one line naming it
        if (line := os_error_line(exc)) is None:
            raise
        typer.echo(f"error: {line}", err=True)
        sys.exit(2)
    except Exception as exc:
        # typer's (vendored) click usage errors: one line, with where to look
        if hasattr(exc, "format_message") and hasattr(exc, "exit_code"):
            if type(exc).__name__ == "NoArgsIsHelpError":  # `stsbench` or a group with no command: its help
                typer.echo(exc.format_message())
                sys.exit(0)
            ctx = getattr(exc, "ctx", None)
            where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
            typer.echo(f"error: {exc.format_message()}{where}", err=True)
            sys.exit(exc.exit_code or 2)
        if type(exc).__name__ == "Abort":  # click's Ctrl-C or end of input at a prompt
            _interrupted()
        raise
