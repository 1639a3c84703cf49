"""How often the one decision rule (stsbench.stats.decide) decides wrongly, measured on simulated seeds.

    OMP_NUM_THREADS=1 python benchmarks/decision_calibration.py [--draws 2000] [--seed 0] [--n 2,3,5,10]
        [--std 0.1,0.5,1.0] [--kinds directional,plateau,cell] [--out calibration.md]

For every cell of the grid (kind x design x seeds per setting n x seed std x true difference) it draws
``--draws`` sets of seeds with numpy, runs the project's own code on each (``decide.difference`` or
``decide.one_sample``, then ``decide.directional``, ``decide.equivalence`` or ``decide.reproduction``) and prints
the rate of every outcome. Kinds: *directional* (the claim A > B, δ = ``decide.DELTA``), *plateau* (|A - B| < δ,
δ = ``decide.DELTA``), *cell* (n seeds against a published figure, δ = ``decide.CELL_DELTA``). Designs: *paired*
(both settings on the same seeds: a shared per-seed effect of std s·√0.5 plus each setting's own noise of std
s·√0.5, so each setting's std is s and the paired difference's std is s), *Welch* (disjoint seed ids, each
setting's std s) and, for cells, *one-sample* (each seed's std s). The true difference runs over 0, ±δ/2, ±δ,
±2δ, ±4δ. A claim of one statement is judged exactly so by ``claims.judge`` (Holm over one statement changes
nothing); the script calls the decide functions directly for speed.

A *wrong decisive outcome* is: directional, a direction shown (supported, by more or less than δ or not) where
the truth is <= 0, "by more than δ" where it is <= δ/2, "by less than δ" where it is >= 2δ, a reversal (by less
than δ or not) where it is >= 0, "reversed, by less than δ" where it is <= -2δ, contradicted where it is > -δ,
no difference that matters where |truth| >= 2δ; plateau, supported where |truth| >= 2δ, contradicted where the
truth is 0; cell, not reproduced where the truth is 0, reproduced where |truth| >= 2δ. Each cell's wrong rate
must stay within alpha + 3·sqrt(alpha(1 - alpha)/draws) (alpha = ``decide.ALPHA``); a cell above it is marked
ABOVE BOUND and the script exits 1 (0 otherwise; 2 for a bad option). n below ``decide.MIN_SEEDS`` is
inconclusive by construction.
"""

from __future__ import annotations

import argparse
import itertools
import math
import shlex
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from stsbench.files import atomic_write_text
from stsbench.stats import decide

NS = (2, 3, 5, 10)
STDS = (0.1, 0.5, 1.0)
TRUTHS = (0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 4.0, -4.0)  # in units of δ
DESIGNS = (decide.PAIRED, decide.WELCH)
BASE = 80.0  # the figure B (or the published one) sits at, in points; the rule only sees differences
KINDS: dict[str, tuple[float, tuple[str, ...]]] = {  # δ and the outcomes, decisive first
    "directional": (decide.DELTA, decide.VERDICTS),
    "plateau": (decide.DELTA, (decide.SUPPORTED, decide.CONTRADICTED, decide.INCONCLUSIVE)),
    "cell": (decide.CELL_DELTA, (decide.REPRODUCED, decide.NOT_REPRODUCED, decide.INCONCLUSIVE)),
}


def bound(draws: int, alpha: float = decide.ALPHA) -> float:
    """The largest wrong rate accepted over ``draws`` draws: alpha plus three binomial standard errors."""
    return alpha + 3 * math.sqrt(alpha * (1 - alpha) / draws)


def wrong_outcomes(kind: str, truth: float) -> tuple[str, ...]:
    """The decisive outcomes that are wrong for ``kind`` at a true difference of ``truth`` (in units of δ)."""
    if kind == "directional":  # a direction shown the wrong way, a size shown wrong, a reversal that is none
        wrong = list(decide.DIRECTIONS) if truth <= 0 else [decide.SUPPORTED_MORE] if truth <= 0.5 else []
        wrong += [decide.REVERSED, decide.REVERSED_LESS] if truth >= 0 else []
        wrong += [decide.CONTRADICTED] if truth > -1 else []
        wrong += [decide.SUPPORTED_LESS] if truth >= 2 else []
        wrong += [decide.REVERSED_LESS] if truth <= -2 else []
        return tuple(dict.fromkeys(wrong + ([decide.NO_DIFFERENCE] if abs(truth) >= 2 else [])))
    if kind == "plateau":
        return ((decide.SUPPORTED,) if abs(truth) >= 2 else ()) + (
            (decide.CONTRADICTED,) if truth == 0 else ()
        )
    if kind == "cell":
        return ((decide.NOT_REPRODUCED,) if truth == 0 else ()) + (
            (decide.REPRODUCED,) if abs(truth) >= 2 else ()
        )
    raise ValueError(f"unknown kind {kind!r}")


def _draw(rng: np.random.Generator, design: str, n: int, std: float, diff: float, draws: int) -> tuple:
    """(A, B) seed figures, each (draws, n); B is None for a cell (A against the published BASE)."""
    if design == decide.PAIRED:
        shared = rng.normal(0.0, std * math.sqrt(0.5), (draws, n))
        own = rng.normal(0.0, std * math.sqrt(0.5), (2, draws, n))
        return BASE + diff + shared + own[0], BASE + shared + own[1]
    if design == decide.WELCH:
        x = rng.normal(0.0, std, (2, draws, n))
        return BASE + diff + x[0], BASE + x[1]
    return BASE + diff + rng.normal(0.0, std, (draws, n)), None


def _outcomes(kind: str, design: str, a: np.ndarray, b: np.ndarray | None, delta: float) -> list[str]:
    """The rule's outcome on each draw (a row of ``a``, ``b``), through the project's decide functions."""
    n = a.shape[1]
    first, second = list(range(n)), list(range(n) if design == decide.PAIRED else range(n, 2 * n))
    out = []
    for i, row in enumerate(a.tolist()):
        if kind == "cell":
            iv = decide.one_sample(row, BASE)
        else:
            iv = decide.difference(
                dict(zip(first, row, strict=True)), dict(zip(second, b[i].tolist(), strict=True))
            )
        if iv is None:  # fewer than two seeds: no interval, as claims.judge says inconclusive
            out.append(decide.INCONCLUSIVE)
        elif kind == "directional":
            out.append(decide.directional(iv, delta).outcome)
        elif kind == "plateau":
            out.append(decide.equivalence(iv, delta).outcome)
        else:
            out.append(decide.reproduction(iv, delta).outcome)
    return out


def calibrate(
    kinds: Sequence[str] = tuple(KINDS),
    ns: Sequence[int] = NS,
    stds: Sequence[float] = STDS,
    truths_in_deltas: Sequence[float] = TRUTHS,
    designs: Sequence[str] = DESIGNS,
    draws: int = 2000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """One row per kind x design x n x std x truth: each outcome's rate, the wrong rate, the bound, ``ok``.

    Cells use the one-sample design whatever ``designs`` says. Each cell draws from its own generator, seeded by
    ``seed`` and the cell's place in the full grid, so a cell's rates do not depend on which others are run.
    """
    if draws < 1 or seed < 0 or any(n < 2 for n in ns) or any(not s > 0 for s in stds):
        raise ValueError("draws >= 1, seed >= 0, n >= 2 and std > 0 are needed")
    limit = bound(draws)
    rows = []
    for kind in kinds:
        delta, outcomes = KINDS[kind]
        cell_designs = (decide.ONE_SAMPLE,) if kind == "cell" else designs
        for design, n, std, truth in itertools.product(cell_designs, ns, stds, truths_in_deltas):
            key = [seed, list(KINDS).index(kind), [*DESIGNS, decide.ONE_SAMPLE].index(design), n]
            key += [round(std * 1e6), round(truth * 1e6) + 10**9]
            a, b = _draw(np.random.default_rng(key), design, n, std, truth * delta, draws)
            got = Counter(_outcomes(kind, design, a, b, delta))
            if set(got) - set(outcomes):
                raise RuntimeError(f"{kind}: unexpected outcomes {sorted(set(got) - set(outcomes))}")
            rates = {o: got[o] / draws for o in outcomes}
            wrong = wrong_outcomes(kind, truth)
            rate = sum(rates[o] for o in wrong)
            rows.append(
                {
                    "kind": kind,
                    "design": design,
                    "n": n,
                    "std": std,
                    "truth": truth,
                    "true_diff": truth * delta,
                    "delta": delta,
                    "draws": draws,
                    "rates": rates,
                    "wrong_outcomes": wrong,
                    "wrong": rate if wrong else None,
                    "bound": limit,
                    "ok": not wrong or rate <= limit,
                    "few": n < decide.MIN_SEEDS,
                }
            )
    return rows


def _truth(t: float, unit: str = "δ") -> str:
    return "0" if t == 0 else f"{t:+g}{unit}"


def markdown(rows: list[dict[str, Any]], draws: int, summary: str) -> str:
    """The rows as a Markdown table per kind, with the designs' stds, the bound and ``summary``."""
    lines = [
        "# Operating characteristics of the decision rule (stsbench.stats.decide)",
        "",
        f"{draws} draws a cell; alpha = {decide.ALPHA}; a wrong rate above alpha + 3·sqrt(alpha(1 - alpha)/draws)"
        f" = {bound(draws):.4f} is ABOVE BOUND. Paired: a shared per-seed effect of std s·√0.5 plus each setting's"
        " own noise of std s·√0.5 (each setting's std s, the paired difference's std s); Welch: disjoint seeds, each"
        " setting's std s; one-sample (cells): each seed's std s against the published figure. Rows with"
        f" n < {decide.MIN_SEEDS} (decide.MIN_SEEDS) are inconclusive by construction.",
        "",
    ]
    for kind, (delta, outcomes) in KINDS.items():
        mine = [r for r in rows if r["kind"] == kind]
        if not mine:
            continue
        lines += [f"## {kind} (δ = {delta:g} points)", ""]
        lines.append(
            "| design | n | std | true diff | "
            + " | ".join(outcomes)
            + " | wrong outcomes | wrong | status |"
        )
        lines.append("|---|---:|---:|---:|" + "---:|" * len(outcomes) + "---|---:|---|")
        for r in mine:
            rates = " | ".join(f"{r['rates'][o]:.4f}" for o in outcomes)
            wrong = f"{r['wrong']:.4f}" if r["wrong"] is not None else "–"
            status = ("ok" if r["ok"] else "ABOVE BOUND") if r["wrong_outcomes"] else "–"
            status += f" (n < {decide.MIN_SEEDS}: inconclusive by construction)" if r["few"] else ""
            names = " + ".join(r["wrong_outcomes"]) or "none"
            lines.append(
                f"| {r['design']} | {r['n']} | {r['std']:g} | {_truth(r['truth'])} ({_truth(r['true_diff'], '')}) | {rates}"
                f" | {names} | {wrong} | {status} |"
            )
        lines.append("")
    return "\n".join([*lines, summary, ""])


def _positive_int(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return int(text)


def _natural(text: str) -> int:
    if not text.strip().isdigit():
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return int(text)


def _list(convert, check, what: str):
    def parse(text: str) -> tuple:
        try:
            values = tuple(convert(x) for x in text.split(","))
        except ValueError:
            values = ()
        if not values or not all(check(v) for v in values):
            raise argparse.ArgumentTypeError(f"expected a comma list of {what}, got {text!r}")
        return values

    return parse


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """A bad option: one line on stderr, exit 2."""
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the grid, print (and with ``--out`` write) the table; 1 if a wrong rate is above its bound."""
    ap = _Parser(prog="decision_calibration.py", description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=_positive_int, default=2000, help="simulated seed sets a cell")
    ap.add_argument("--seed", type=_natural, default=0, help="numpy generator seed")
    ap.add_argument(
        "--n", type=_list(int, lambda n: n >= 2, "integers >= 2"), default=NS, help="seeds per setting"
    )
    ap.add_argument(
        "--std",
        type=_list(float, lambda s: math.isfinite(s) and s > 0, "positive numbers"),
        default=STDS,
        help="seed std, in points",
    )
    ap.add_argument(
        "--kinds",
        type=_list(str.strip, lambda k: k in KINDS, "of " + ", ".join(KINDS)),
        default=tuple(KINDS),
        help="which decisions",
    )
    ap.add_argument("--out", help="also write the Markdown here (atomically)")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    rows = calibrate(args.kinds, args.n, args.std, TRUTHS, DESIGNS, args.draws, args.seed)
    wall = time.perf_counter() - start
    judged = [r for r in rows if r["wrong"] is not None]
    worst = max(judged, key=lambda r: r["wrong"], default=None)
    above = [r for r in rows if not r["ok"]]
    where = (
        "none"
        if worst is None
        else (
            f"{worst['wrong']:.4f} ({' + '.join(worst['wrong_outcomes'])}) at {worst['kind']}, {worst['design']},"
            f" n = {worst['n']}, std {worst['std']:g}, true diff {_truth(worst['truth'])}"
        )
    )
    command = "python benchmarks/decision_calibration.py " + shlex.join(
        sys.argv[1:] if argv is None else argv
    )
    summary = (
        f"**Summary**: {len(rows)} cells, {len(above)} above the bound; worst wrong rate {where}; bound "
        f"{bound(args.draws):.4f} (alpha {decide.ALPHA} + 3 SE at {args.draws} draws); command `{command.strip()}`;"
        f" {wall:.1f} s wall, 1 process."
    )
    text = markdown(rows, args.draws, summary)
    print(text)
    if args.out:
        atomic_write_text(args.out, text)
    for r in above:
        print(
            f"ABOVE BOUND: {r['kind']} {r['design']} n={r['n']} std={r['std']:g} truth={_truth(r['truth'])}:"
            f" wrong {r['wrong']:.4f} > {r['bound']:.4f}",
            file=sys.stderr,
        )
    return 1 if above else 0


if __name__ == "__main__":
    sys.exit(main())
