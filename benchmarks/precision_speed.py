"""Training step time and loss of fp32 against bf16 / fp16 autocast (``--precision``), on a CUDA device.

    python benchmarks/precision_speed.py --method mocose                    # all-MiniLM-L6-v2
    python benchmarks/precision_speed.py --bert-base-shape --tokenizer DIR  # BERT-base shape, random weights

Each precision trains the same backbone from the same weights on the same batches (``--steps`` timed after
``--warmup``); the table gives the median step time, the speed-up over fp32 and how far each step's loss is
from fp32's. ``--bert-base-shape`` builds a randomly initialised model of BERT-base's size (12 layers, 768
dims) with the tokenizer in ``--tokenizer``: the step time of the papers' backbone without its weights.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from stsbench.data.training import read_train_file
from stsbench.train.config import finalize, make_config
from stsbench.train.data import batch_rows
from stsbench.train.loop import Precision, build, seed_everything, train_step
from stsbench.train.model import resolve_backbone
from stsbench.train.schedule import linear_lr

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "wiki" / "wiki1m_head.txt"


def bert_base_shape(tokenizer_dir: Path, out: Path) -> Path:
    """Save a random BERT-base-sized model with the tokenizer of ``tokenizer_dir`` in ``out``."""
    from transformers import AutoTokenizer, BertConfig, BertModel

    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(tokenizer_dir)
    BertModel(BertConfig(vocab_size=len(tok))).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def run(precision: str, args: argparse.Namespace, model_path: str, data) -> tuple[list[float], list[float]]:
    cfg = make_config(
        {
            "method": args.method,
            "model": model_path,
            "train_file": str(args.train_file),
            "output": "-",
            "batch_size": args.batch_size,
            "precision": precision,
            "device": args.device,
            "length_buckets": 1,
            "dropout": 0.0,  # the same function under every precision: only the arithmetic differs
        }
    )
    cfg = finalize(cfg, data.supervised)
    seed_everything(cfg.seed)
    model, _, method, optimizer = build(cfg, resolve_backbone(cfg.model), args.device)
    total = args.warmup + args.steps
    method.start(total)
    amp = Precision(precision, args.device)
    times, losses = [], []
    for step in range(total):
        rows = batch_rows(data, 42, 0, step, args.batch_size)
        views = method.make_views([data.rows[i] for i in rows], rows, np.random.default_rng([42, step]))
        views = views.to(args.device)
        torch.cuda.synchronize()
        start = time.perf_counter()
        lr = linear_lr(step, total, cfg.lr)
        loss, _ = train_step(
            model, method, optimizer, views, lr=lr, max_grad_norm=cfg.max_grad_norm, precision=amp
        )
        torch.cuda.synchronize()
        if step >= args.warmup:
            times.append(time.perf_counter() - start)
        losses.append(float(loss))  # the step returns a device tensor: read it after the timing
    return times, losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--method", default="mocose", choices=["simcse", "esimcse", "mocose"])
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--bert-base-shape", action="store_true", help="random weights of BERT-base's size")
    parser.add_argument("--tokenizer", type=Path, help="tokenizer folder for --bert-base-shape")
    parser.add_argument("--train-file", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--precisions", default="fp32,bf16,fp16")
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        raise SystemExit("error: no CUDA device; --precision bf16/fp16 is a CUDA feature")
    data = read_train_file(args.train_file)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model
        if args.bert_base_shape:
            if args.tokenizer is None:
                raise SystemExit("error: --bert-base-shape needs --tokenizer DIR")
            model = str(bert_base_shape(args.tokenizer, Path(tmp) / "bert-base-shape"))
        results = {p: run(p, args, model, data) for p in args.precisions.split(",")}
    name = "BERT-base shape, random weights" if args.bert_base_shape else args.model
    print(
        f"{args.method}, {name}, batch {args.batch_size}, {args.steps} timed steps (+{args.warmup}), "
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}"
    )
    print("| precision | median s/step | speed-up vs fp32 | loss, step 1 | mean abs loss diff vs fp32 |")
    print("|---|---:|---:|---:|---:|")
    base_t, base_l = results.get("fp32", next(iter(results.values())))
    for p, (t, losses) in results.items():
        diff = statistics.mean(abs(a - b) for a, b in zip(losses, base_l, strict=True))
        print(
            f"| {p} | {statistics.median(t):.4f} | {statistics.median(base_t) / statistics.median(t):.2f}x "
            f"| {losses[0]:.4f} | {diff:.4f} |"
        )


if __name__ == "__main__":
    main()
