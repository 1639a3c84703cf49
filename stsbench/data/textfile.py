"""Reading a data file with errors that name the file and line."""

from __future__ import annotations

from pathlib import Path

from stsbench.errors import StsbenchError


def read_lines(path: Path, encoding: str = "utf-8", splitlines: bool = False) -> list[str]:
    """Lines of ``path`` without line ends.

    ``splitlines=True`` splits as ``str.splitlines`` (what SentEval's STS12-16 reader does, which also
    breaks on form feeds and Unicode separators); otherwise lines break on newlines only, as ``for line in f``.
    """
    path = Path(path)
    if not path.is_file():
        raise StsbenchError(f"missing data file {path}; run `stsbench data verify` to see what is missing")
    return decode_lines(path.read_bytes(), path, encoding, splitlines)


def decode_lines(raw: bytes, path: Path, encoding: str = "utf-8", splitlines: bool = False) -> list[str]:
    """:func:`read_lines` of bytes already read from ``path`` (named in errors)."""
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise StsbenchError(
            f"{path}:{line}: bytes that are not {encoding} ({raw[exc.start : exc.end]!r}); "
            "restore the original file (`stsbench data verify`)"
        ) from None
    if splitlines:
        return text.splitlines()
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines
