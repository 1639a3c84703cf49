"""Write each checked-in edition's generated parts into its README: the status line and the figures' blocks.

    python scripts/edition_status.py            # every reports/*/ with a reproduce.json; --check: only compare

- The status line follows the marker ``<!-- status: ... -->``: `stsbench reproduce DIR --status --format line`.
- The verdicts block, between ``<!-- verdicts: ... -->`` and ``<!-- /verdicts -->`` (after the status line where a
  README has none yet): every claim's verdict, margin, deciding statements and P(best), every published target's
  cells, quoted from ``reproduction.json`` as the report prints them, and the scale's legend
  (:data:`stsbench.stats.decide.LEGEND`).
- The findings block, between ``<!-- findings: ... -->`` and ``<!-- /findings -->`` (only where the README has its
  markers): the alignment-uniformity table of an edition that draws trajectories, read from its figures' CSVs.

No figure of a verdict (margin, interval, P(best)) stands in a README outside these blocks; tests/test_editions.py
holds each README to this script's output at the commit ("done, changed code" is a true status too) and its prose
to no signed decimal and no bracketed interval.
"""

from __future__ import annotations

import csv
import difflib
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- status: `stsbench reproduce {where} --status --format line` writes the next line -->"
VERDICTS = "<!-- verdicts: `python scripts/edition_status.py` writes this block from reproduction.json -->"
VERDICTS_END = "<!-- /verdicts -->"
FINDINGS = (
    "<!-- findings: `python scripts/edition_status.py` writes this block from figures/align_uniform_trajectories.csv"
    " and figures/dev_curves_seeds.csv -->"
)
FINDINGS_END = "<!-- /findings -->"
OLD_VERDICTS = (
    "<!-- verdicts: `python scripts/edition_status.py` writes the next line from reproduction.json -->"
)
SHOWN = 3  # a claim with more statements shows its deciding ones only (every one: the report's "Claims")
FIGURES = {"best-dev": "best STS-B dev (training)", "final-dev": "last STS-B dev (training)"}


def _fmt(value: float | None, digits: int) -> str:
    from stsbench.tabular import fmt

    return fmt(value, digits)


def _margin(value: float | None, digits: int) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:+.{digits}f}"


def _statement(s: dict, digits: int, deciding: bool) -> str:
    span = "" if s.get("low") is None else f" [{_fmt(s['low'], digits)}, {_fmt(s['high'], digits)}]"
    if span and s.get("look") is not None:  # a sequential look's: named with its level
        span += f" ({s['interval_name']})"
    word = s["outcome"] + (f" ({s['note']})" if s.get("note") else "")
    tail = ", deciding" if deciding else ""
    return (
        f"  - `{s['what']}`: {_fmt(s.get('diff'), digits)}{span}, *{word}*, "
        f"margin {_margin(s.get('margin'), digits)}{tail}"
    )


def _claim(i: int, c: dict, every: bool = False) -> list[str]:
    """A claim's lines: its word, margin, δ and figure, its statements' words and P(best); then its statements.

    ``every``: each statement, however many (a sequential edition's: each at its own look).
    """
    from stsbench.reports.scores import delta_digits
    from stsbench.stats.decide import VERDICTS as WORDS

    d = delta_digits(c.get("delta"))
    word = c["verdict"] + (f" ({c['qualifier']})" if c.get("qualifier") else "")
    delta = "bound" if c.get("delta") is None else _fmt(c["delta"], 2)
    figure = FIGURES.get(c.get("figure"), c.get("figure"))
    statements = c.get("statements") or []
    outcomes = [s["outcome"] for s in statements]
    counts = ", ".join(
        f"{outcomes.count(v)} {v}" for v in dict.fromkeys([*WORDS, *outcomes]) if v in outcomes
    )
    head = f"- claim {i} *{word}*, margin {_margin(c.get('margin'), d)} (δ {delta}; {figure}"
    head += f"; statements: {counts})" if len(statements) > 1 else ")"
    margin = c.get("margin")
    deciding = [
        margin is not None
        and s.get("margin") is not None
        and math.isclose(s["margin"], margin, abs_tol=1e-12)
        for s in statements
    ]
    lines = [head]
    if len(statements) <= SHOWN or every:
        lines += [
            _statement(s, d, len(statements) > 1 and on) for s, on in zip(statements, deciding, strict=True)
        ]
    else:
        chosen = [s for s, on in zip(statements, deciding, strict=True) if on][:1]
        lines += [_statement(s, d, True) for s in chosen]
        lines[-1] += f' (the other {len(statements) - len(chosen)}: the report\'s "Claims")'
    if c.get("best_probability"):
        lines.append("  - P(best): " + ", ".join(f"{k} {p:.2f}" for k, p in c["best_probability"].items()))
    return lines


def verdicts(edition: Path) -> list[str] | None:
    """The README's verdicts block (between its markers), quoted from ``reproduction.json``; None where none."""
    from stsbench.stats.decide import legend

    path = edition / "reproduction.json"
    if not path.is_file():
        return None
    found = json.loads(path.read_text(encoding="utf-8"))
    claims = found.get("claims") or []
    targets = found.get("targets") or []
    if not claims and not targets:
        return None
    plan = found.get("sequential")
    level = (
        f"the sequential plan's repeated intervals, each statement at its look of at most {plan['maximum']} seeds"
        if plan
        else f"{found.get('level', 0.95):.0%} intervals over seeds"
    )
    lines = [
        f"Verdicts, quoted from [`reproduction.json`](reproduction.json) (rule {found.get('rule', 1)}; "
        f'{level}, figures as the report\'s "Claims" prints them):',
        "",
    ]
    for i, c in enumerate(claims, start=1):
        lines += _claim(i, c, every=bool(plan))
    for t in targets:
        counts: dict[str, int] = {}
        for cell in t["cells"]:
            counts[cell["verdict"]] = counts.get(cell["verdict"], 0) + 1
        cells = ", ".join(f"{n} {v}" for v, n in counts.items()) or "no cells"
        lines.append(f"- published `{t.get('key') or t.get('address')}`: {cells}")
    return [*lines, "", legend(bool(plan))]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def findings(edition: Path) -> list[str] | None:
    """The alignment-uniformity table of an edition that draws trajectories; None where a CSV is missing.

    The mean over seeds at step 0 and at the last step, and the best STS-B dev, read from
    ``figures/align_uniform_trajectories.csv`` and ``figures/dev_curves_seeds.csv``.
    """
    from statistics import fmean

    paths = [edition / "figures" / n for n in ("align_uniform_trajectories.csv", "dev_curves_seeds.csv")]
    if not all(p.is_file() for p in paths):
        return None
    points, dev = _rows(paths[0]), _rows(paths[1])
    groups = list(dict.fromkeys(r["group"] for r in points))
    last = max(int(r["step"]) for r in points)

    def mean(group: str, step: int, column: str) -> float:
        return fmean(float(r[column]) for r in points if r["group"] == group and int(r["step"]) == step)

    best: dict[str, dict[str, float]] = {}
    for r in dev:  # the kept checkpoint: the best dev evaluation after step 0 (step 0 is never kept)
        if int(r["step"]) > 0 and r["dev_spearman_x100"]:
            seeds = best.setdefault(r["group"], {})
            seeds[r["seed"]] = max(seeds.get(r["seed"], -math.inf), float(r["dev_spearman_x100"]))
    seeds = {g: len({r["seed"] for r in points if r["group"] == g}) for g in groups}
    n = next(iter(seeds.values())) if len(set(seeds.values())) == 1 else None
    start = {(f"{mean(g, 0, 'l_uniform'):.4f}", f"{mean(g, 0, 'l_align'):.4f}") for g in groups}
    shared = len(start) == 1
    over = f"the {n} seeds" if n else "each setting's seeds"
    lines = [f"Mean over {over}, from the CSVs" + (":" if not shared else "")]
    if shared:
        u, a = next(iter(start))
        lines[0] += f" (step 0 is the same backbone for all: l_uniform {u}, l_align {a}):"
    head = ["setting"] + ([] if shared else ["l_uniform at step 0", "l_align at step 0"])
    head += [f"l_uniform at step {last}", f"l_align at step {last}", "best STS-B dev (mean of seeds)"]
    lines += ["", "| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for g in groups:
        name = g.rsplit(" (n=", 1)[0]
        cells = [] if shared else [f"{mean(g, 0, 'l_uniform'):.4f}", f"{mean(g, 0, 'l_align'):.4f}"]
        cells += [f"{mean(g, last, 'l_uniform'):.4f}", f"{mean(g, last, 'l_align'):.4f}"]
        cells.append(f"{fmean(best[g].values()):.2f}" if best.get(g) else "–")
        lines.append("| " + " | ".join([name, *cells]) + " |")
    return lines


# each block: its opening marker, its closing one, what writes it, and whether a README lacking it gets one
BLOCKS: list[tuple[str, str, Callable[[Path], list[str] | None], bool]] = [
    (VERDICTS, VERDICTS_END, verdicts, True),
    (FINDINGS, FINDINGS_END, findings, False),
]


def expected(edition: Path) -> str:
    """The status line of ``edition`` (a folder under reports/), as the README carries it."""
    from stsbench.reproduce.state import load_state, recorded_changed
    from stsbench.reproduce.view import status_line

    state = load_state(edition)
    return "Status: " + status_line(state, recorded_changed(state), f"reports/{edition.name}")


def carried(readme: Path, where: str) -> tuple[list[str], int]:
    """The README's lines and the index of its status line (the line after the marker); -1 when absent."""
    lines = readme.read_text(encoding="utf-8").split("\n")
    marker = MARKER.format(where=where)
    return lines, (lines.index(marker) + 1 if marker in lines else -1)


def generated_spans(lines: list[str]) -> list[tuple[int, int]]:
    """``(first, last)`` line indices of each generated part, markers included.

    The status marker and its line; every block from its opening marker to its closing one.
    """
    spans = []
    for i, line in enumerate(lines):
        if line.startswith("<!-- status: "):
            spans.append((i, min(i + 1, len(lines) - 1)))
        for start, end, _, _ in BLOCKS:
            if line == start:
                close = lines.index(end, i) if end in lines[i:] else len(lines) - 1
                spans.append((i, close))
    return spans


def render(edition: Path, text: str) -> str:
    """The README ``text`` of ``edition`` with its status line and every generated block written afresh.

    A README carrying the old one-line verdicts (its marker and the line after) gets the block in their place; one
    with neither gets the block after its status line. Raises ValueError where the status marker is missing or a
    block is not closed.
    """
    lines = text.split("\n")
    marker = MARKER.format(where=f"reports/{edition.name}")
    if marker not in lines or lines.index(marker) + 1 >= len(lines):
        raise ValueError(f"reports/{edition.name}/README.md: no status marker")
    at = lines.index(marker) + 1
    lines[at] = expected(edition)
    if OLD_VERDICTS in lines:  # the one line the script wrote before the block
        i = lines.index(OLD_VERDICTS)
        lines[i : i + 2] = [VERDICTS, VERDICTS_END]
    for start, end, write, insert in BLOCKS:
        body = write(edition)
        if start not in lines:
            if body is not None and insert:
                lines[at + 1 : at + 1] = ["", start, *body, end]
            continue
        i = lines.index(start)
        if end not in lines[i:]:
            raise ValueError(f"reports/{edition.name}/README.md: {start} has no {end}")
        j = lines.index(end, i)
        if body is None:  # nothing to quote any more: the block goes, its markers with it
            lines[i : j + 1] = []
            if i > 0 and i < len(lines) and lines[i - 1] == "" and lines[i] == "":
                del lines[i]
        else:
            lines[i + 1 : j] = body
    return "\n".join(lines)


def differences(edition: Path, text: str) -> list[str]:
    """Where ``text`` (the edition's README) differs from what this script writes: a unified diff, empty if none."""
    try:
        fresh = render(edition, text)
    except ValueError as exc:
        return [str(exc)]
    where = f"reports/{edition.name}/README.md"
    return list(
        difflib.unified_diff(text.split("\n"), fresh.split("\n"), where, f"{where} (generated)", lineterm="")
    )


def editions(root: Path = ROOT) -> list[Path]:
    """Every checked-in edition: a folder under reports/ with a reproduce.json."""
    return [p.parent for p in sorted((root / "reports").glob("*/reproduce.json"))]


def main(argv: list[str]) -> int:
    """Rewrite (or with --check compare) every edition's generated parts; exit 1 where one differs.

    Also 1 where a README cannot be written: no status marker, a block not closed.
    """
    check = "--check" in argv
    differ = failed = 0
    for edition in editions():
        readme = edition / "README.md"
        text = readme.read_text(encoding="utf-8")
        try:
            fresh = render(edition, text)
        except ValueError as exc:
            print(exc, file=sys.stderr)  # noqa: T201
            failed += 1
            continue
        if fresh != text:
            differ += 1
            if check:
                print("\n".join(differences(edition, text)), file=sys.stderr)  # noqa: T201
            else:
                readme.write_text(fresh, encoding="utf-8")
        said = "differs" if check and fresh != text else "written" if fresh != text else "as generated"
        print(f"{edition.name}: {said}")  # noqa: T201
    return 1 if failed or (check and differ) else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
