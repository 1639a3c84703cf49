"""Write each checked-in edition's status line into its README, as `stsbench reproduce DIR --status --format line`.

    python scripts/edition_status.py            # every reports/*/ with a reproduce.json; --check: only compare

The line follows the marker ``<!-- status -->`` in ``reports/<edition>/README.md``; tests/test_editions.py
holds each README to this command's output at the commit ("done, changed code" is a true status too).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- status: `stsbench reproduce {where} --status --format line` writes the next line -->"
VERDICTS = "<!-- verdicts: `python scripts/edition_status.py` writes the next line from reproduction.json -->"


def verdicts(edition: Path) -> str | None:
    """The README's line of verdicts, quoted from ``reproduction.json`` (None where the edition has none)."""
    import json

    path = edition / "reproduction.json"
    if not path.is_file():
        return None
    found = json.loads(path.read_text(encoding="utf-8"))
    parts = []
    for i, c in enumerate(found.get("claims") or [], start=1):
        word = c["verdict"] + (f" ({c['qualifier']})" if c.get("qualifier") else "")
        margin = "" if c.get("margin") is None else f", margin {c['margin']:+.3f}"
        parts.append(f"claim {i} *{word}*{margin}")
    for t in found.get("targets") or []:
        counts: dict[str, int] = {}
        for cell in t["cells"]:
            counts[cell["verdict"]] = counts.get(cell["verdict"], 0) + 1
        parts.append(f"{t.get('key') or t.get('address')}: " + ", ".join(f"{n} {v}" for v, n in counts.items()))
    if not parts:
        return None
    return f"Verdicts (quoted from `reproduction.json`, rule {found.get('rule', 1)}): {'; '.join(parts)}."


def expected(edition: Path) -> str:
    """The status line of ``edition`` (a folder under reports/), as the README carries it."""
    from stsbench.reproduce.state import load_state, recorded_changed
    from stsbench.reproduce.view import status_line

    state = load_state(edition)
    return "Status: " + status_line(state, recorded_changed(state, edition), f"reports/{edition.name}")


def carried(readme: Path, where: str) -> tuple[list[str], int]:
    """The README's lines and the index of its status line (the line after the marker); -1 when absent."""
    lines = readme.read_text(encoding="utf-8").split("\n")
    marker = MARKER.format(where=where)
    return lines, (lines.index(marker) + 1 if marker in lines else -1)


def main(argv: list[str]) -> int:
    """Rewrite (or with --check compare) every edition's status and verdicts lines; exit 1 where one differs."""
    check = "--check" in argv
    differ = 0
    for state_file in sorted((ROOT / "reports").glob("*/reproduce.json")):
        edition = state_file.parent
        readme = edition / "README.md"
        lines, at = carried(readme, f"reports/{edition.name}")
        line = expected(edition)
        if at < 0 or at >= len(lines):
            print(f"{readme}: no status marker", file=sys.stderr)  # noqa: T201
            differ += 1
            continue
        before = list(lines)
        lines[at] = line
        said = verdicts(edition)
        if said is not None and VERDICTS not in lines:  # the verdicts' line, after the status line
            lines[at + 1 : at + 1] = ["", VERDICTS, said]
        if said is not None:
            lines[lines.index(VERDICTS) + 1] = said
        if lines != before:
            differ += 1
            if not check:
                readme.write_text("\n".join(lines), encoding="utf-8")
        print(f"{edition.name}: {line}")  # noqa: T201
    return 1 if check and differ else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
