"""Time the bootstrap of the 7 STS figures and Avg. (B = 1000) against the warm-cache STS run it adds to.

    python benchmarks/bootstrap_speed.py [--model all-MiniLM-L6-v2] [--B 1000] [--repeat 3]
    python benchmarks/bootstrap_speed.py --synthetic        # no model, no data: the true task sizes and subsets

Default: the real pair sets. Each STS task's pairs are loaded from the data folder as `stsbench run` loads
them, their cosines come from the model through the embedding cache (warm after the first run), and each
task's figure is checked against the run's reported figure. Then, best of ``--repeat``: the in-process
warm-cache `stsbench run` of the 7 STS tasks, and ``bootstrap_figures`` at ``--B`` over the same pairs
(stratified by subset, every task jointly for Avg.). ``--synthetic`` times the bootstrap alone over 18,850
synthetic pairs with each task's true size and subset sizes (cosine = gold + noise, gold rounded as the
files' gold is).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from stsbench.stats.bootstrap import PairSet, bootstrap_figures, percentile_interval

SHARED = Path(
    os.environ.get("STSBENCH_SHARED", Path(__file__).resolve().parents[2] / "shared")
)  # as oracle.py

# subset sizes of each task's test set as stsbench.data.sts.load_pairs reads /work/shared/data (SentEval order)
SIZES = {
    "STS12": [750, 750, 459, 750, 399],
    "STS13": [189, 750, 561],
    "STS14": [450, 300, 750, 750, 750, 750],
    "STS15": [375, 750, 375, 750, 750],
    "STS16": [254, 249, 230, 244, 209],
    "STSBenchmark": [1379],
    "SICKRelatedness": [4927],
}


def synthetic_sets(seed: int = 0) -> list[PairSet]:
    rng = np.random.default_rng(seed)
    sets = []
    for task, sizes in SIZES.items():
        n = sum(sizes)
        gold = np.round(rng.uniform(0, 5, n), 1)
        strata = np.repeat(np.arange(len(sizes), dtype=np.int16), sizes)
        sets.append(PairSet(task, gold + rng.normal(size=n), gold, strata))
    return sets


def real_sets(args) -> tuple[list[PairSet], float, dict[str, float]]:
    """The real pair sets, the best warm-cache in-process `stsbench run` seconds, and its figures."""
    from stsbench.encoders import embed_table, load_encoder
    from stsbench.evaluation.run import evaluate as run
    from stsbench.tasks.base import Mode
    from stsbench.tasks.registry import resolve_tasks
    from stsbench.tasks.sts import pair_similarities

    common = {"data_dir": args.data_dir, "show_progress": False, "batch_size": 128}
    run(args.model, "sts", "test", **common)  # fills the cache if it is cold
    best, result = float("inf"), None
    for _ in range(args.repeat):
        t = time.perf_counter()
        result = run(args.model, "sts", "test", **common)
        best = min(best, time.perf_counter() - t)
    reported = {r.task: r.reported for r in result.results}
    encoder = load_encoder(args.model)
    sets = []
    for task in resolve_tasks("sts"):
        pairs = task.load(args.data_dir, Mode.test)
        table = embed_table(encoder, task.texts(pairs), show_progress=False)
        names = pairs.subsets()
        strata = np.array([names.index(s) for s in pairs.subset], dtype=np.int16)
        sets.append(PairSet(task.name, pair_similarities(pairs, table), pairs.gold, strata))
    return sets, best, reported


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="a name or a local model folder")
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("STSBENCH_DATA") or SHARED / "data"))
    ap.add_argument("--B", type=int, default=1000, help="bootstrap replicates")
    ap.add_argument("--seed", type=int, default=1111)
    ap.add_argument("--repeat", type=int, default=3, help="time each step this often, keep the best")
    ap.add_argument(
        "--synthetic", action="store_true", help="synthetic pairs of the true sizes; no model, no data"
    )
    args = ap.parse_args()
    if args.synthetic:
        sets, warm, reported = synthetic_sets(), None, {}
    else:
        sets, warm, reported = real_sets(args)
    for s in sets:
        if s.task in reported and round(s.figure() * 100, 2) != reported[s.task]:
            raise SystemExit(
                f"error: {s.task}: the pairs give {s.figure() * 100:.2f}, the run {reported[s.task]}"
            )
    best, reps = float("inf"), {}
    for _ in range(args.repeat):
        t = time.perf_counter()
        reps = bootstrap_figures(sets, args.B, args.seed)
        best = min(best, time.perf_counter() - t)
    n = sum(s.n for s in sets)
    source = "synthetic pairs of the true sizes" if args.synthetic else f"{args.model}, real pairs"
    print(f"bootstrap of {len(sets)} STS tasks + Avg., {n} pairs, B = {args.B} ({source}), 1 process")
    for task, samples in reps.items():
        low, high = percentile_interval(samples)
        figure = f"{reported[task]:.2f} " if task in reported else ""
        print(f"  {task:16s} {figure}[{100 * low:.2f}, {100 * high:.2f}]")
    print(f"bootstrap_figures: {best:.2f} s (best of {args.repeat})")
    if warm is not None:
        print(
            f"warm-cache `stsbench run` of the 7 STS tasks, in process: {warm:.2f} s (best of {args.repeat})"
        )
        print(f"the bootstrap adds {best:.2f} s, {100 * best / warm:.0f}% of the warm run")


if __name__ == "__main__":
    main()
