"""How the sequential seed plan (stsbench.stats.sequential) decides, against a fixed number of seeds.

    OMP_NUM_THREADS=1 python benchmarks/sequential_calibration.py [--runs 100000] [--seed 0] [--verify 2000]
        [--out docs/calibration.md]

**The grid.** A paired contrast A > B with normal per-seed differences: δ = 0.5, seed std 0.25, 0.5 and 1.0,
true differences 0, ±δ/2, ±δ, ±2δ and ±4δ (27 cells), at most M = 10 and M = 20 seeds; ``--runs`` paths a cell
(100,000). On each path the sequential plan looks at n = 3, 4, 5, 6, ⌈0.8M⌉ and M seeds with the committed
constants, stops at the first decisive word, or by futility at the middle looks (the rule of
:func:`stsbench.stats.sequential.futile`), or at M; the fixed designs read the same path at M and at 3 seeds
with the 95% interval (common random numbers: every design reads the same seeds).

**Counted.** Wrong decisive words, a side at a time, as docs/calibration.md defines them for a statement (upper:
a direction shown where t <= 0, *by more than δ* where t <= δ, *no difference that matters* or *reversed, by less
than δ* where t <= -δ; lower the mirror image), each against 0.025 + 3 binomial SE at the cell's runs (0.0265 at
100,000); the right-decision rate (decisive and not wrong) of the plan, of M fixed seeds and of 3; the expected
seeds of the plan (mean stopping n) and its share of M; how often futility stopped it. The same for the plan with
``--refine`` (on past *supported* and *reversed* until the size is shown or out of reach,
:func:`stsbench.stats.sequential.size_futile`): its wrong words, a side at a time, against the same bound, and its
expected seeds.

**The project's words.** The paths run through :func:`stsbench.stats.sequential.simulate` (the plan vectorised,
the words by :func:`~stsbench.stats.sequential.words`, the regions of :func:`stsbench.stats.decide.directional`);
on the first ``--verify`` paths of every cell, each path's stopping look and word are also asked of
:func:`stsbench.stats.sequential.path` (a statement judged from its recorded seeds, one look at a time, by the
rule's own interval functions), and the fixed designs' words of :func:`~stsbench.stats.decide.directional`; one
disagreement stops the run (exit 1). Exit 1 too where a side lies above its bound (0 otherwise).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

from stsbench.files import atomic_write_text
from stsbench.stats import decide, sequential

DELTA = 0.5
STDS = (0.25, 0.5, 1.0)
TRUTHS = (-4, -2, -1, -0.5, 0, 0.5, 1, 2, 4)  # in δ
MAXIMA = (10, 20)
WORDS = sequential.WORDS
CODE = {w: i for i, w in enumerate(WORDS)}
UP_WRONG = {  # a word, and the truths t at or below which it is wrong upward (an interval above t)
    decide.SUPPORTED_MORE: DELTA,
    decide.SUPPORTED: 0.0,
    decide.SUPPORTED_LESS: 0.0,
    decide.NO_DIFFERENCE: -DELTA,
    decide.REVERSED_LESS: -DELTA,
}
MIRROR = {  # the same word's mirror image, wrong downward at the mirrored truths
    decide.SUPPORTED_MORE: decide.REVERSED_MORE,
    decide.SUPPORTED: decide.REVERSED,
    decide.SUPPORTED_LESS: decide.REVERSED_LESS,
    decide.NO_DIFFERENCE: decide.NO_DIFFERENCE,
    decide.REVERSED_LESS: decide.SUPPORTED_LESS,
}


def words(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    return sequential.words(low, high, DELTA)


def wrong(codes: np.ndarray, t: float) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) masks of the wrong decisive words at truth ``t``."""
    up = np.zeros(codes.shape, dtype=bool)
    down = np.zeros(codes.shape, dtype=bool)
    for word, limit in UP_WRONG.items():
        if t <= limit:
            up |= codes == CODE[word]
        if t >= -limit:
            down |= codes == CODE[MIRROR[word]]
    return up, down


def decisive(codes: np.ndarray) -> np.ndarray:
    return (codes != CODE[decide.INCONCLUSIVE]) & (codes != CODE[sequential.FUTILE])


def cell(maximum: int, std: float, truth: float, runs: int, seed: int, verify: int) -> dict[str, float]:
    """One cell of the grid: the plan's and the fixed designs' rates on the same ``runs`` paths."""
    rng = np.random.Generator(np.random.PCG64([seed, maximum, STDS.index(std), TRUTHS.index(truth)]))
    t = truth * DELTA
    x = rng.normal(t, std, (runs, maximum))
    at = sequential.plan(maximum)
    stop, final = sequential.simulate(x, DELTA, at)
    stop_r, final_r = sequential.simulate(x, DELTA, at, refine=True)
    for row, n, code, n_r, code_r in zip(
        x[:verify], stop[:verify], final[:verify], stop_r[:verify], final_r[:verify], strict=True
    ):
        check_path(row, at, int(n), WORDS[code])
        check_path(row, at, int(n_r), WORDS[code_r], refine=True)
    fixed = {}
    for n in (maximum, 3):
        m, s = x[:, :n].mean(axis=1), x[:, :n].std(axis=1, ddof=1)
        half = stats.t.ppf(0.975, n - 1) * s / math.sqrt(n)
        fixed[n] = words(m - half, m + half)
        for row, code in zip(x[:verify], fixed[n][:verify], strict=True):
            a = {i: float(v) for i, v in enumerate(row[:n])}
            word = decide.directional(decide.difference(a, dict.fromkeys(a, 0.0)), DELTA).outcome
            if WORDS[code] != word:
                raise SystemExit(
                    f"fixed {n}: vectorised {WORDS[code]!r}, the project's {word!r} on {row[:n]}"
                )
    up, down = wrong(final, t)
    up_r, down_r = wrong(final_r, t)

    def right(c: np.ndarray) -> float:
        return float(np.mean(decisive(c) & ~np.any(wrong(c, t), axis=0)))

    return {
        "upper": float(up.mean()),
        "lower": float(down.mean()),
        "seeds": float(stop.mean()),
        "right": right(final),
        "right_fixed": right(fixed[maximum]),
        "right_3": right(fixed[3]),
        "futile": float(np.mean(final == CODE[sequential.FUTILE])),
        "more_than_delta": float(np.mean(final == CODE[decide.SUPPORTED_MORE])),
        "refine_upper": float(up_r.mean()),
        "refine_lower": float(down_r.mean()),
        "refine_seeds": float(stop_r.mean()),
        "more_than_delta_refine": float(np.mean(final_r == CODE[decide.SUPPORTED_MORE])),
        "more_than_delta_fixed": float(np.mean(fixed[maximum] == CODE[decide.SUPPORTED_MORE])),
    }


def check_path(row: np.ndarray, at: sequential.Plan, n: int, word: str, refine: bool = False) -> None:
    """A path as the project judges a statement from its recorded seeds (:func:`sequential.path`)."""
    a = {i: float(v) for i, v in enumerate(row, start=1)}
    found = sequential.path(a, dict.fromkeys(a, 0.0), DELTA, at, refine=refine)
    if (found.n, found.decision.outcome) != (n, word):
        raise SystemExit(
            f"vectorised: {word!r} at {n}; the project's: {found.decision.outcome!r} at {found.n} on {row}"
        )


MARKER = "<!-- the sequential plan: benchmarks/sequential_calibration.py --out writes from here on -->"


def with_section(existing: str, section: str) -> str:
    """``existing`` (docs/calibration.md) with everything from :data:`MARKER` on replaced by ``section``."""
    kept = existing.split(MARKER)[0].rstrip("\n")
    return f"{kept}\n\n{MARKER}\n\n{section}" if kept else f"{MARKER}\n\n{section}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--verify", type=int, default=2000, help="paths a cell also judged by the project's code"
    )
    parser.add_argument(
        "--out", type=Path, help="write the section into this Markdown file (from its marker on)"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    bound = 0.025 + 3 * math.sqrt(0.025 * 0.975 / args.runs)
    failed, lines, summary = False, [], []
    for maximum in MAXIMA:
        lines += [
            f"### At most {maximum} seeds",
            "",
            "| seed std | true diff | wrong upper | wrong lower | E[seeds] | share of M | right (plan) "
            f"| right ({maximum} fixed) | right (3 fixed) | futility | --refine: wrong upper / lower "
            "| --refine: E[seeds] | by more than δ (plan / --refine / fixed) |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        shares, gaps, worst, refined, worst_r = [], [], 0.0, [], 0.0
        for std in STDS:
            for truth in TRUTHS:
                r = cell(maximum, std, truth, args.runs, args.seed, args.verify)
                shares.append(r["seeds"] / maximum)
                gaps.append(r["right_fixed"] - r["right"])
                worst = max(worst, r["upper"], r["lower"])
                over = max(r["upper"], r["lower"]) > bound
                refined.append(r["refine_seeds"] / maximum)
                worst_r = max(worst_r, r["refine_upper"], r["refine_lower"])
                over_r = max(r["refine_upper"], r["refine_lower"]) > bound
                failed |= over or over_r
                lines.append(
                    f"| {std:g} | {truth:+g}δ | {r['upper']:.4f} | {r['lower']:.4f}{' (above)' if over else ''} "
                    f"| {r['seeds']:.2f} | {r['seeds'] / maximum:.3f} | {r['right']:.3f} | {r['right_fixed']:.3f} "
                    f"| {r['right_3']:.3f} | {r['futile']:.3f} "
                    f"| {r['refine_upper']:.4f} / {r['refine_lower']:.4f}{' (above)' if over_r else ''} "
                    f"| {r['refine_seeds']:.2f} | {r['more_than_delta']:.3f} / {r['more_than_delta_refine']:.3f} / "
                    f"{r['more_than_delta_fixed']:.3f} |"
                )
            by_std = np.mean(shares[-len(TRUTHS) :])
            summary.append(f"M {maximum}, std {std:g}: expected seeds {by_std:.3f} of M")
        lines.append("")
        summary.insert(
            len(summary) - len(STDS),
            f"**M = {maximum}**: wrong decisive words at most {worst:.4f} a side (bound {bound:.4f}); expected seeds "
            f"**{np.mean(shares):.3f}** of M averaged over the {len(shares)} cells; the right-decision rate at most "
            f"{max(gaps):.3f} below {maximum} fixed seeds in any cell. With --refine: wrong words at most "
            f"{worst_r:.4f} a side; expected seeds {np.mean(refined):.3f} of M.",
        )
    wall = time.perf_counter() - started
    command = "OMP_NUM_THREADS=1 python benchmarks/sequential_calibration.py" + "".join(
        f" --{k} {v}" for k, v in (("runs", args.runs), ("seed", args.seed), ("verify", args.verify))
    )
    section = "\n".join(
        [
            "## The sequential plan (`stsbench.stats.sequential`)",
            "",
            f"A paired contrast A > B, normal per-seed differences, δ {DELTA:g}; {args.runs:,} paths a cell, the plan "
            "and the fixed designs on the same paths (common random numbers); each look's word checked against the "
            f"project's functions on the first {args.verify:,} paths of every cell. Command `{command}`; "
            f"{wall:.0f} s. What is counted: the script's docstring; the rule: docs/uncertainty.md (Seeds until "
            "the verdict is decided).",
            "",
            *[f"- {line}" for line in summary],
            "",
            *lines,
        ]
    )
    print(section)  # noqa: T201
    if args.out:
        existing = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
        atomic_write_text(args.out, with_section(existing, section))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
