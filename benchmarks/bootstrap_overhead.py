"""What the STS intervals cost end to end: a warm-cache 7-task `stsbench run` with --bootstrap 0 and with B.

    python benchmarks/bootstrap_overhead.py [--model all-MiniLM-L6-v2] [--bootstrap 1000] [--repeats 3]
        [--cache-dir DIR] [--threads N] [--markdown FILE]

The cache is warmed first (one run, not timed). Then, ``--repeats`` times, in alternating order so that drift in
the machine's load falls on both sides alike: `stsbench run` as a new process (imports and model set-up included,
what a user waits for) and the same evaluation in this process (``stsbench.evaluation.run.evaluate``), each with
``--bootstrap 0`` and ``--bootstrap B``. Printed: the median seconds of each, the difference and the ratio, the
bootstrap's own time as the run records it, and whether both give the same figures (they must: the bootstrap
adds intervals, never changes a figure). Issue 18's bar: B = 1000 adds at most 3 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eval_speed import cli, in_process, scores_of  # noqa: E402
from oracle import SHARED  # noqa: E402

from stsbench.files import atomic_write_text  # noqa: E402

LIMIT_S = 3.0  # issue 18, acceptance 4


def timed(args, bootstrap: int) -> tuple[float, dict[str, float], float]:
    """``stsbench.evaluation.run.evaluate`` here: wall seconds, the figures, the bootstrap's own seconds."""
    took, result = in_process(args, args.cache_dir, bootstrap=bootstrap)
    return took, scores_of(result), result.timings.get("bootstrap", 0.0)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="a name or a local model folder")
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("STSBENCH_DATA") or SHARED / "data"))
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(os.environ["STSBENCH_CACHE"]) if os.environ.get("STSBENCH_CACHE") else None,
        help="embedding cache (default: $STSBENCH_CACHE, else a temporary folder the first run fills)",
    )
    ap.add_argument("--bootstrap", type=int, default=1000, help="B of the timed runs with intervals")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each kind (the median is shown)")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    args = ap.parse_args()
    if args.bootstrap < 1 or args.repeats < 1:
        ap.error("--bootstrap and --repeats must be >= 1")
    return args


def row(label: str, off: list[float], on: list[float], extra: str = "") -> str:
    a, b = statistics.median(off), statistics.median(on)
    return f"| {label} | {a:.2f} | {b:.2f} | {b - a:+.2f} | {b / a:.2f}x | {extra} |"


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    secs: dict[tuple[str, int], list[float]] = {}
    figures: dict[int, list[dict[str, float]]] = {}
    own: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        args.cache_dir = args.cache_dir or Path(tmp) / "cache"
        cli(args, args.cache_dir, Path(tmp) / "warm-up")  # fills the cache (and the OS file cache) untimed
        timed(args, 0)
        for i in range(args.repeats):
            order = (0, args.bootstrap) if i % 2 == 0 else (args.bootstrap, 0)
            for b in order:
                took, scores = cli(args, args.cache_dir, Path(tmp) / f"out-{i}-{b}", ("--bootstrap", str(b)))
                secs.setdefault(("cli", b), []).append(took)
                figures.setdefault(b, []).append(scores)
                took, scores, boot = timed(args, b)
                secs.setdefault(("lib", b), []).append(took)
                figures[b].append(scores)
                if b:
                    own.append(boot)
    same = all(f == figures[0][0] for fs in figures.values() for f in fs)
    on = args.bootstrap
    lines = [
        f"Warm-cache STS suite (7 tasks, test mode), {args.model}, {args.threads} CPU thread(s), "
        f"torch {torch.__version__}; median of {args.repeats} runs each",
        "",
        f"| run | --bootstrap 0 (s) | --bootstrap {on} (s) | difference (s) | ratio | |",
        "|---|---:|---:|---:|---:|---|",
        row("`stsbench run` CLI (new process)", secs[("cli", 0)], secs[("cli", on)]),
        row(
            "`stsbench.evaluation.run.evaluate` (in process)",
            secs[("lib", 0)],
            secs[("lib", on)],
            f"bootstrap itself: {statistics.median(own):.2f} s",
        ),
        "",
        f"figures identical with and without intervals: {'yes' if same else 'NO'} "
        f"({', '.join(f'{v:.2f}' for v in figures[0][0].values())})",
    ]
    worst = statistics.median(secs[("cli", on)]) - statistics.median(secs[("cli", 0)])
    lines.append(f"issue 18 bar (+{LIMIT_S:.0f} s at most): {'met' if worst <= LIMIT_S else 'NOT met'}")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        atomic_write_text(args.markdown, text + "\n")
    if not same:
        raise SystemExit("error: the figures differ between --bootstrap 0 and --bootstrap B")


if __name__ == "__main__":
    main()
