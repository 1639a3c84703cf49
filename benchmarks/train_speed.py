"""Steps per second of SimCSE, ESimCSE and MoCoSE on the same backbone, batches and data, in one run.

    python benchmarks/train_speed.py                       # all-MiniLM-L6-v2, batch 64, max length 32
    python benchmarks/train_speed.py --steps 30 --threads 1

A step is what the trainer does per batch: build the views (ESimCSE: repetition), forward, loss, backward,
clip, AdamW step, and the method's state update (ESimCSE: EMA of the momentum encoder, one no-grad forward
of the un-repeated batch, enqueue). MoCoSE's step also holds its target-branch forward and, with FGSM on,
a second online forward and backward to the input embeddings. Dev evaluation and checkpoints are not timed.
The methods take turns on the same batch so that load from other processes on the machine falls on all alike.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import torch

from stsbench.train.config import METHOD_NAMES, finalize, make_config
from stsbench.train.data import batch_rows, read_train_file
from stsbench.train.loop import build, seed_everything, train_step
from stsbench.train.model import resolve_backbone
from stsbench.train.schedule import linear_lr

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wiki" / "wiki1m_head.txt"


def setup(method: str, args: argparse.Namespace, data):
    cfg = make_config(
        {
            "method": method,
            "model": args.model,
            "train_file": str(args.train_file),
            "output": "-",
            "batch_size": args.batch_size,
            "max_length": args.max_length,
            "pooler": args.pooler,
            "length_buckets": args.length_buckets,
        }
    )
    finalize(cfg, data.supervised)
    seed_everything(cfg.seed)
    model, _, m, optimizer = build(cfg, resolve_backbone(cfg.model), "cpu")
    m.start(args.warmup + args.steps)
    return cfg, model, m, optimizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--train-file", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=32)
    parser.add_argument("--pooler", default="cls", help="cls (SimCSE's default, with the MLP) or avg ...")
    parser.add_argument("--steps", type=int, default=20, help="timed steps per method")
    parser.add_argument("--warmup", type=int, default=2, help="untimed steps per method first")
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument(
        "--length-buckets", type=int, default=4, help="as stsbench train (4: its CPU default)"
    )
    parser.add_argument(
        "--methods", default="simcse,esimcse,mocose", help="comma-separated; simcse is the reference"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    data = read_train_file(args.train_file)
    names = ["simcse", *[m for m in args.methods.split(",") if m and m != "simcse"]]
    runs = {name: setup(name, args, data) for name in names}
    times: dict[str, list[float]] = {name: [] for name in runs}
    lengths: dict[str, list[tuple[int, int]]] = {name: [] for name in runs}
    total = args.warmup + args.steps
    for step in range(total):
        rows = batch_rows(data, 42, 0, step, args.batch_size)
        for name, (cfg, model, method, optimizer) in runs.items():
            rng = np.random.default_rng([cfg.seed, 0, step, 1])
            start = time.perf_counter()
            views = method.make_views([data.rows[i] for i in rows], rows, rng)
            train_step(
                model,
                method,
                optimizer,
                views,
                lr=linear_lr(step, total, cfg.lr),
                max_grad_norm=cfg.max_grad_norm,
            )
            took = time.perf_counter() - start
            if step >= args.warmup:
                times[name].append(took)
                pos = views.positive if views.positive is not None else views.anchor
                lengths[name].append((views.anchor["input_ids"].shape[1], pos["input_ids"].shape[1]))
    print(
        f"model {args.model}, batch {args.batch_size}, max length {args.max_length}, pooler {args.pooler}, "
        f"{args.steps} timed steps each (+{args.warmup} warm-up), threads {torch.get_num_threads()}, "
        f"length buckets {args.length_buckets}, "
        f"data {args.train_file.name}"
    )
    for name, ts in times.items():
        a = np.mean([x[0] for x in lengths[name]])
        p = np.mean([x[1] for x in lengths[name]])
        print(
            f"{name:8s} {1 / statistics.median(ts):.3f} steps/s (median {statistics.median(ts):.3f} s/step, "
            f"mean {statistics.mean(ts):.3f} s), padded lengths: anchor {a:.1f}, positive {p:.1f}"
        )
    for name in names[1:]:
        ratio_median = statistics.median(times[name]) / statistics.median(times["simcse"])
        ratio_total = sum(times[name]) / sum(times["simcse"])
        per_step = sorted(e / s for e, s in zip(times[name], times["simcse"], strict=True))
        print(
            f"{METHOD_NAMES[name]} / SimCSE step time: {ratio_median:.3f} (medians), {ratio_total:.3f} "
            f"(totals), paired per-batch ratios {per_step[0]:.2f}..{per_step[-1]:.2f} "
            f"(median {statistics.median(per_step):.3f})"
        )


if __name__ == "__main__":
    main()
