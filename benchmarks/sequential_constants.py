"""The repeated-confidence-interval constants of the sequential seed plan (stats/sequential.py), M = 10 and 20.

    OMP_NUM_THREADS=1 python benchmarks/sequential_constants.py [--paths 4000000] [--seed 0] [--check]
        [--out stsbench/stats/sequential_table.py]

**What the table is.** A reproduction that adds seeds until its verdict is decided looks at n = 3, 4, 5, 6,
⌈0.8M⌉ and M seeds (M the most it may train). At each look it reads the 8 words off (m - c_n·s/√n,
m + c_n·s/√n), m and s the mean and sample std of the per-seed differences. With constants c_n chosen so that

    P(T_n > c_n at some look) = 0.025,   T_n = √n (m_n - μ) / s_n,

the intervals at all looks cover the true μ together with 0.95 (0.025 a side, by symmetry), whatever the stopping:
a word read at any look is as sure as one read at a fixed n. The 0.025 is spent over the looks by the
Hwang-Shih-DeCani function with γ = -5 on the information fraction t = n/M,
α(t) = 0.025·(1 - e^{5t})/(1 - e^{5}): the first look spends α(3/M), each later look what α adds. The first
constant is exact (T_3 is t with 2 degrees of freedom); each later one is the largest value that no more than
N·(α(t_k) - α(t_{k-1})) of the N simulated paths not stopped before exceed, its paths stopping there.

Two designs. **Paired** (a contrast with every setting on every seed, or one setting's seeds against a fixed
number): the per-seed differences are normal, T_n as above. **Cell** (our seeds against one published run of our
law, a figure that does not change between looks): the pivot (m_n - P - Δ) / (s_n·√(1/n + 1)), with P = one
run's figure, shares that run's noise at every look, so its constants are its own. A claim of m statements
(paired contrasts) judges each at 0.025/m a side (Bonferroni, the same spending): constants for m = 1..6.

**How.** Monte Carlo with a fixed-seed ``numpy.random.Generator`` (PCG64), ``--paths`` paths (default 4,000,000)
shared by both designs and both M (common random numbers): each path is one row of 21 standard normals, column 0
the published run's noise, columns 1..M the seeds, so the stream does not depend on the chunk size. Every
constant is rounded UP to three significant figures (a wider interval, never a narrower one) before the paths it
stops are taken out. The table is written as a Python module (``stsbench/stats/sequential_table.py``): code, so
the key of every step that reads it holds its content. The committed one was made by the command above with its
defaults. ``--check`` recomputes
and exits 1 where the file differs (0 where it equals it; 2 for a bad option).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from stsbench.stats.sequential import round_up  # the rounding the package's Bonferroni constants share

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "stsbench" / "stats" / "sequential_table.py"
ALPHA = 0.025  # a side
GAMMA = -5.0  # Hwang-Shih-DeCani
MAXIMA = (10, 20)
DESIGNS = ("paired", "cell")
COLUMNS = 1 + max(MAXIMA)
CHUNK = 250_000
STATEMENTS = 6  # the most statements of a claim the table holds constants for


def looks(maximum: int) -> list[int]:
    """The looks of a plan of at most ``maximum`` seeds: 3, 4, 5, 6, ⌈0.8M⌉ and M (each once, in order)."""
    return sorted({3, 4, 5, 6, math.ceil(0.8 * maximum), maximum})


def spent(t: float) -> float:
    """Hwang-Shih-DeCani: the one-sided α spent by information fraction ``t``."""
    return ALPHA * (1 - math.exp(-GAMMA * t)) / (1 - math.exp(-GAMMA))



def pivots(paths: int, seed: int) -> dict[tuple[str, int], np.ndarray]:
    """``{(design, M): (paths, looks) array}`` of the pivot at each look of every path."""
    rng = np.random.Generator(np.random.PCG64(seed))
    out = {(d, m): np.empty((paths, len(looks(m)))) for d in DESIGNS for m in MAXIMA}
    for start in range(0, paths, CHUNK):
        z = rng.standard_normal((min(CHUNK, paths - start), COLUMNS))
        published, seeds = z[:, 0], z[:, 1:]
        total, squares = np.cumsum(seeds, axis=1), np.cumsum(seeds**2, axis=1)
        for m in MAXIMA:
            for j, n in enumerate(looks(m)):
                mean = total[:, n - 1] / n
                sd = np.sqrt((squares[:, n - 1] - n * mean**2) / (n - 1))
                out["paired", m][start : start + len(z), j] = math.sqrt(n) * mean / sd
                out["cell", m][start : start + len(z), j] = (mean - published) / (sd * math.sqrt(1 / n + 1))
    return out


def constants(pivot: np.ndarray, maximum: int, statements: int = 1) -> list[float]:
    """Each look's constant, rounded up, the paths crossing one taken out before the next look's.

    ``statements``: a claim's m statements, each at 0.025/m a side (Bonferroni), the same spending.
    """
    ns, paths = looks(maximum), pivot.shape[0]
    alive = np.ones(paths, dtype=bool)
    out, before = [], 0.0
    for j, n in enumerate(ns):
        budget = (spent(n / maximum) - before) / statements
        if j == 0:  # exact: T_3 is Student's t with 2 degrees of freedom (the cell's pivot too)
            c = float(stats.t.ppf(1 - budget, n - 1))
        else:
            values = np.sort(pivot[alive, j])[::-1]
            c = float(values[int(paths * budget)])  # no more than paths * budget exceed it
        c = round_up(c)
        alive &= pivot[:, j] <= c
        out.append(c)
        before = spent(n / maximum)
    return out


def table(paths: int, seed: int) -> dict[str, Any]:
    """The file's content: the plan's looks, the spending and each design's constants for M = 10 and 20."""
    found = pivots(paths, seed)
    plans = {
        str(m): {
            "looks": looks(m),
            "spent": [round(spent(n / m), 6) for n in looks(m)],
            # a claim's statements (paired contrasts) at 0.025/m a side each; a cell is one statement
            "paired": {str(k): constants(found["paired", m], m, k) for k in range(1, STATEMENTS + 1)},
            "cell": {"1": constants(found["cell", m], m)},
        }
        for m in MAXIMA
    }
    return {
        "about": "Repeated-confidence-interval constants of the sequential seed plan (benchmarks/sequential_constants.py)",
        "alpha_a_side": ALPHA,
        "spending": f"Hwang-Shih-DeCani, gamma {GAMMA:g}, on t = n/M",
        "rounding": "each constant rounded up to three significant figures",
        "paths": paths,
        "seed": seed,
        "plans": plans,
    }


def render(made: dict[str, Any]) -> str:
    """The table as the Python module stsbench reads (code, so every key that reads it holds its content)."""

    def plain(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    lines = [
        '"""The sequential seed plan\'s constants: made by benchmarks/sequential_constants.py, do not edit."""',
        "",
        "TABLE = {",
    ]
    lines += [f"    {plain(k)}: {plain(v)}," for k, v in made.items() if k != "plans"]
    lines.append('    "plans": {')
    for m, plan in made["plans"].items():
        lines.append(f"        {plain(m)}: {{")
        lines += [f"            {plain(k)}: {plain(plan[k])}," for k in ("looks", "spent")]
        for design in DESIGNS:
            lines.append(f"            {plain(design)}: {{")
            lines += [f"                {plain(k)}: {plain(c)}," for k, c in plan[design].items()]
            lines.append("            },")
        lines.append("        },")
    lines += ["    },", "}", ""]
    return "\n".join(lines)


def read(path: Path) -> dict[str, Any] | None:
    """The TABLE of a module :func:`render` wrote; None where there is none."""
    if not path.is_file():
        return None
    space: dict[str, Any] = {}
    exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), space)  # noqa: S102 - our own table
    return space.get("TABLE")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=4_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument(
        "--check", action="store_true", help="exit 1 where --out differs from the recomputed table"
    )
    args = parser.parse_args(argv)
    if args.paths < 10_000:
        parser.error("--paths must be at least 10000")
    started = time.perf_counter()
    made = table(args.paths, args.seed)
    for m, plan in made["plans"].items():
        for design in DESIGNS:
            for k, found in plan[design].items():
                print(f"M {m} {design}, {k} statement(s): looks {plan['looks']} constants {found}")  # noqa: T201
    print(f"{args.paths:,} paths in {time.perf_counter() - started:.0f} s")  # noqa: T201
    if args.check:
        same = read(args.out) == made
        print("the file equals the recomputed table" if same else f"{args.out} differs")  # noqa: T201
        return 0 if same else 1
    tmp = args.out.with_suffix(".tmp")
    tmp.write_text(render(made), encoding="utf-8")
    tmp.replace(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
