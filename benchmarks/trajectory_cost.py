"""What logging alignment and uniformity at each dev evaluation costs the trainer (SimCSE Figure 2's trajectories).

    python benchmarks/trajectory_cost.py [--model all-MiniLM-L6-v2] [--repeats 5] [--threads N] [--markdown FILE]

Three ways to get a dev evaluation's figures from the model being trained, timed side by side in this process
on the real STS-B dev (1,500 pairs), in rotating order so that drift in the machine's load falls on all alike:

- ``spearman``: the dev evaluation as it was before (encode the dev sentences, score the Spearman): the baseline;
- ``+ geometry``: the trainer's evaluation now (:func:`stsbench.train.evaluate.dev_scores`): the same encoding,
  then l_align and l_uniform of the same embeddings;
- ``checkpoint + analysis``: what SimCSE Figure 2 otherwise takes for each point: export the checkpoint, load it,
  and run ``stsbench align-uniform --split dev`` on it (no embedding cache).

Printed: the median seconds of each, what the geometry adds to an evaluation, the same per training run for a
given number of evaluations (``--evals``; SimCSE Figure 2's recipes evaluate every 10 steps), and the check that
the logged values equal the analysis of the exported checkpoint.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import SHARED  # noqa: E402

from stsbench.files import atomic_write_text  # noqa: E402


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="the backbone (a name or a local folder)")
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("STSBENCH_DATA") or SHARED / "data"))
    ap.add_argument("--repeats", type=int, default=5, help="timed runs of each kind (the median is shown)")
    ap.add_argument("--evals", type=int, default=6, help="dev evaluations of one run, for the per-run line")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    args = ap.parse_args()
    if args.repeats < 1 or args.evals < 1:
        ap.error("--repeats and --evals must be >= 1")
    return args


def main() -> None:
    from stsbench.analyses.geometry import align_uniform
    from stsbench.data.training import load_train_data
    from stsbench.encoders.load import load_encoder
    from stsbench.tasks.base import Mode
    from stsbench.train import checkpoint as ckpt
    from stsbench.train.config import eval_pooler, finalize, make_config
    from stsbench.train.evaluate import DevSet, _embedded, dev_scores
    from stsbench.train.loop import build
    from stsbench.train.model import resolve_backbone

    args = parse_args()
    torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        train = Path(tmp) / "train.txt"
        train.write_text("a sentence\nanother one\n")
        cfg = make_config(
            {
                "method": "simcse",
                "model": args.model,
                "train_file": str(train),
                "output": str(Path(tmp) / "run"),
            }
        )
        data = load_train_data(cfg)
        cfg = finalize(cfg, data.supervised, data.identity)
        model, tokenizer, _, _ = build(cfg, resolve_backbone(cfg.model), "cpu")
        pooler = eval_pooler(cfg)  # what the trainer exports its checkpoints with
        dev = DevSet.load(args.data_dir, tokenizer, args.batch_size)

        def spearman() -> None:
            table = _embedded(model, dev.tokenizer, dev.texts, dev.batch_size, "cpu")
            dev.task.evaluate(dev.data, table, Mode.dev)

        def geometry() -> None:
            dev_scores(model, dev, "cpu")

        def analysis() -> None:
            out = Path(tmp) / "ckpt"
            ckpt.export_model(out, model=model, tokenizer=tokenizer, eval_pooler=pooler, meta={})
            encoder = load_encoder(str(out), device="cpu", use_cache=False)
            align_uniform(encoder, args.data_dir, "dev", batch_size=args.batch_size, show_progress=False)

        kinds = {"spearman": spearman, "+ geometry": geometry, "checkpoint + analysis": analysis}
        for run in kinds.values():
            run()  # warm-up, untimed
        secs: dict[str, list[float]] = {k: [] for k in kinds}
        for i in range(args.repeats):
            names = list(kinds)
            for name in names[i % 3 :] + names[: i % 3]:
                t0 = time.perf_counter()
                kinds[name]()
                secs[name].append(time.perf_counter() - t0)
        logged = dev_scores(model, dev, "cpu")
        out = Path(tmp) / "ckpt"
        analysed = align_uniform(
            load_encoder(str(out), device="cpu", use_cache=False), args.data_dir, "dev",
            batch_size=args.batch_size, show_progress=False,
        )  # fmt: skip
    base = statistics.median(secs["spearman"])
    lines = [
        f"Dev evaluation of {args.model} on STS-B dev ({len(dev.data)} pairs, {len(dev.texts)} sentences), "
        f"{args.threads} thread(s), median of {args.repeats}:",
        "",
        "| evaluation | seconds | against the Spearman alone |",
        "|---|---|---|",
    ]
    for name, values in secs.items():
        m = statistics.median(values)
        lines.append(f"| {name} | {m:.3f} | {m / base:.3f}x ({m - base:+.3f} s) |")
    extra = statistics.median(secs["+ geometry"]) - base
    lines += [
        "",
        f"Per run of {args.evals} dev evaluations: the trajectory adds {extra * args.evals:+.2f} s; exporting and "
        f"analysing a checkpoint at each would add {(statistics.median(secs['checkpoint + analysis'])) * args.evals:.1f} s.",
        f"Logged = analysis of the exported checkpoint: l_align {logged.alignment:.6f} vs {analysed.alignment:.6f}, "
        f"l_uniform {logged.uniformity:.6f} vs {analysed.uniformity:.6f} "
        f"({'equal' if (logged.alignment, logged.uniformity) == (analysed.alignment, analysed.uniformity) else 'DIFFERENT'}).",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.markdown:
        atomic_write_text(args.markdown, text)


if __name__ == "__main__":
    main()
