"""The exact 2.5% and 97.5% quantiles of the ``best_of: K`` published-cell pivot, for n = 2..20 seeds, K = 2..20.

    OMP_NUM_THREADS=1 python benchmarks/best_of_quantiles.py [--draws 1000000] [--seed 0] [--check]
        [--out stsbench/stats/best_of_quantiles.json]

**What the table is.** A paper reports P, the best of K runs; we have n seeds of mean m and sample std s. Under
normal seeds of one common std σ (ours and the paper's runs alike), the pivot (m - P - Δ) / s, with Δ our true
mean less the paper's runs' true mean, has the law

    W = (Z / √n - M_K) / (χ_{n-1} / √(n-1))

Z standard normal, M_K the largest of K independent standard normals, χ_{n-1} the square root of a chi-square of
n - 1 degrees of freedom, all three independent. With q_lo and q_hi the 2.5% and 97.5% quantiles of W, the
interval [m - P - s·q_hi, m - P - s·q_lo] holds Δ with probability 0.95 (0.025 a side). The file holds q_lo and
q_hi for every n in 2..20 (rows) and K in 2..20 (columns): 361 entries each.

**How.** Monte Carlo with a fixed-seed ``numpy.random.Generator`` (PCG64), ``--draws`` draws (default 1,000,000)
shared by every entry (common random numbers): each draw takes 40 standard normals at once, one row of a
(chunk, 40) array, so the stream does not depend on the chunk size: column 0 is Z, the running sum of squares of
columns 1..19 gives χ²_1..χ²_19 (the n - 1 = 1..19 the table needs), and the running maximum of columns 20..39
gives M_1..M_20. Each entry's quantiles are ``numpy.quantile``'s (linear interpolation) on all its draws. As M_K
grows with K on every draw, both quantiles fall with K. Each quantile is rounded OUTWARD to 0.001 (q_lo down,
q_hi up), so the interval read from the table is never narrower than the simulated one. The committed file was
made by the command above with its defaults (1,000,000 draws, seed 0). ``--check`` recomputes and exits 1 where
the file differs from the recomputed table (0 where it equals it; 2 for a bad option).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stsbench.files import atomic_write_text

NS = tuple(range(2, 21))  # seeds of ours
KS = tuple(range(2, 21))  # the paper's runs, of which P is the best
P_LO, P_HI = 0.025, 0.975
STEP = 1e-3  # the rounding, outward
CHUNK = 100_000  # draws generated at once: 40 normals each, 32 MB
ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "stsbench" / "stats" / "best_of_quantiles.json"
LAW = (
    "W = (Z/sqrt(n) - M_K) / (chi_{n-1}/sqrt(n-1)): Z ~ N(0,1), M_K the max of K iid N(0,1), chi_{n-1} the square "
    "root of a chi-square with n-1 df, all independent. W is the law of (m - P - Delta)/s, m and s the mean and "
    "sample std of n normal seeds, P the best of K normal runs of the same std, Delta our true mean minus the "
    "runs' true mean."
)
ABOUT = (
    "The 2.5% (q_lo) and 97.5% (q_hi) quantiles of the best_of: K published-cell pivot W (see law): Delta lies in "
    "[m - P - s*q_hi, m - P - s*q_lo] with probability 0.95, 0.025 a side. q_lo[i][j] and q_hi[i][j] are for "
    "n[i] seeds and K = k[j] runs. Made by `OMP_NUM_THREADS=1 python benchmarks/best_of_quantiles.py` (Monte "
    "Carlo, common random numbers over all entries); do not edit by hand, rerun the script."
)


def draw(draws: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Z (draws,), χ_{n-1}/√(n-1) for each n in NS (len(NS), draws) and M_K for each K in KS (len(KS), draws).

    Generated in chunks of ``CHUNK`` draws, each a (chunk, 40) block of standard normals (the stream is the same
    whatever the chunk); what is kept is about (1 + 19 + 19) · 8 bytes a draw (312 MB at 10^6 draws).
    """
    rng = np.random.default_rng(seed)
    df = max(NS) - 1
    width = 1 + df + max(KS)
    z = np.empty(draws)
    scale = np.empty((len(NS), draws))
    best = np.empty((len(KS), draws))
    for lo in range(0, draws, CHUNK):
        hi = min(lo + CHUNK, draws)
        x = rng.standard_normal((hi - lo, width))
        z[lo:hi] = x[:, 0]
        chi2 = np.cumsum(x[:, 1 : 1 + df] ** 2, axis=1)  # column j: chi-square with j + 1 df
        for i, n in enumerate(NS):
            scale[i, lo:hi] = np.sqrt(chi2[:, n - 2] / (n - 1))
        running = np.maximum.accumulate(x[:, 1 + df :], axis=1)  # column j: the max of j + 1 normals
        for j, k in enumerate(KS):
            best[j, lo:hi] = running[:, k - 1]
    return z, scale, best


def outward(q_lo: float, q_hi: float) -> tuple[float, float]:
    """``q_lo`` rounded down and ``q_hi`` up to ``STEP`` (the interval never narrower than the simulated one)."""
    lo = math.floor(round(q_lo / STEP, 6)) * STEP  # round(., 6): a quotient a hair off an integer stays on it
    hi = math.ceil(round(q_hi / STEP, 6)) * STEP
    return round(lo, 3), round(hi, 3)


def table(draws: int, seed: int) -> dict[str, Any]:
    """The whole table as the JSON object written: q_lo and q_hi per n (rows) and K (columns), with its provenance."""
    z, scale, best = draw(draws, seed)
    q_lo = [[0.0] * len(KS) for _ in NS]
    q_hi = [[0.0] * len(KS) for _ in NS]
    for i, n in enumerate(NS):
        zn = z / math.sqrt(n)
        for j in range(len(KS)):
            w = (zn - best[j]) / scale[i]
            lo, hi = np.quantile(w, [P_LO, P_HI])
            q_lo[i][j], q_hi[i][j] = outward(float(lo), float(hi))
    return {
        "about": ABOUT,
        "law": LAW,
        "draws": draws,
        "seed": seed,
        "rounding": "outward to 0.001",
        "n": list(NS),
        "k": list(KS),
        "q_lo": q_lo,
        "q_hi": q_hi,
    }


def dumps(obj: dict[str, Any]) -> str:
    """``obj`` as key-sorted JSON, two-space indented, each list of numbers (a table's row included) on one line."""

    def value(v: Any, indent: str) -> str:
        """One value: a list of lists a row a line, a flat list on one line, a scalar as ``json.dumps``."""
        if isinstance(v, list) and v and all(isinstance(r, list) for r in v):
            inner = indent + "  "
            return "[\n" + ",\n".join(inner + json.dumps(r) for r in v) + "\n" + indent + "]"
        return json.dumps(v, ensure_ascii=False, allow_nan=False)

    items = [f"  {json.dumps(key)}: {value(obj[key], '  ')}" for key in sorted(obj)]
    return "{\n" + ",\n".join(items) + "\n}\n"


def differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Where ``old`` (the file) differs from ``new`` (recomputed): one line a key or entry."""
    lines = [
        f"{key}: {old.get(key)!r} != {new[key]!r}"
        for key in new
        if key not in ("q_lo", "q_hi") and old.get(key) != new[key]
    ]
    for key in ("q_lo", "q_hi"):
        rows = old.get(key)
        if not isinstance(rows, list) or [len(r) if isinstance(r, list) else -1 for r in rows] != [
            len(KS)
        ] * len(NS):
            lines.append(f"{key}: not a {len(NS)} x {len(KS)} table")
            continue
        for i, n in enumerate(NS):
            for j, k in enumerate(KS):
                if rows[i][j] != new[key][i][j]:
                    lines.append(
                        f"{key} n={n} K={k}: {rows[i][j]!r} in the file, {new[key][i][j]!r} recomputed"
                    )
    return lines


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        sys.stderr.write(f"error: {message}\n")
        sys.exit(2)


def main(argv: Sequence[str] | None = None) -> int:
    """Compute the table and write it (or, with ``--check``, compare it with the file: 1 where they differ)."""
    ap = _Parser(prog="best_of_quantiles.py", description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=1_000_000, help="Monte Carlo draws, shared by every entry")
    ap.add_argument("--seed", type=int, default=0, help="the numpy Generator's seed")
    ap.add_argument("--out", default=str(OUT), help="the JSON file written (atomically) or checked")
    ap.add_argument(
        "--check", action="store_true", help="recompute and exit 1 if --out differs; write nothing"
    )
    args = ap.parse_args(argv)
    if args.seed < 0 or args.draws < 1000:
        ap.error("--seed must be >= 0 and --draws >= 1000")
    start = time.perf_counter()
    new = table(args.draws, args.seed)
    code = 0
    if args.check:
        try:
            old = json.loads(Path(args.out).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"cannot read {args.out}: {exc}", file=sys.stderr)
            old = {}
        lines = differences(old, new) if isinstance(old, dict) else ["the file is not a JSON object"]
        for line in lines:
            print(line, file=sys.stderr)
        print(
            f"{args.out}: {'differs' if lines else 'equals the recomputed table'} ({len(lines)} differences)"
        )
        code = 1 if lines else 0
    else:
        atomic_write_text(args.out, dumps(new))
        print(f"wrote {args.out}: {len(NS) * len(KS)} entries, {args.draws} draws, seed {args.seed}")
    print(f"{time.perf_counter() - start:.1f} s wall")
    return code


if __name__ == "__main__":
    sys.exit(main())
