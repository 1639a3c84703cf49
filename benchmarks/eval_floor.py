"""How fast can a cold STS suite get in fp32 on this CPU? The arithmetic floor beside stsbench's eager forward pass.

    python benchmarks/eval_floor.py [--model all-MiniLM-L6-v2] [--threads 2] [--sample 4000]
                                    [--oracle-seconds S] [--compile] [--markdown FILE]

Counts the tokens stsbench's cold run sends through the model (each distinct token sequence once), the
dense-layer FLOPs they need (from the model's config) and times this CPU's fp32 matrix multiply at the model's
own layer shapes: their quotient is a lower bound on the cold run for any fp32 engine, before attention,
activations, LayerNorm, tokenization and model loading. It then profiles stsbench's encoder on a random sample
of the sentences to split the forward pass into matrix multiplies and the rest; `--compile` times
torch.compile (inductor, frozen weights, dynamic shapes) on the same sample, compile included and steady state.
With `--oracle-seconds` (the oracle row of eval_speed.py) it prints the best speed-up the floor allows.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import SHARED  # noqa: E402

from stsbench.encoders import load_encoder  # noqa: E402
from stsbench.encoders.base import unique_texts  # noqa: E402
from stsbench.encoders.hf import HFEncoder, length_batches  # noqa: E402
from stsbench.files import atomic_write_text  # noqa: E402
from stsbench.tasks.registry import resolve_tasks  # noqa: E402


def matmul_rate(m: int, shapes: list[tuple[int, int, int]], repeats: int = 5, calls: int = 10) -> float:
    """fp32 GFLOP/s of ``torch.mm`` over one pass of ``shapes`` (k, n, how many), best of ``repeats``."""
    mats = [(torch.randn(m, k), torch.randn(n, k).t(), count) for k, n, count in shapes]
    flops = sum(2 * m * a.shape[1] * b.shape[1] * count for a, b, count in mats)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(calls):
            for a, b, count in mats:
                for _ in range(count):
                    torch.mm(a, b)
        best = min(best, (time.perf_counter() - t) / calls)
    return flops / best / 1e9


def profile_encode(enc: HFEncoder, texts: list[str]) -> tuple[float, dict[str, float]]:
    """Wall seconds of ``enc.encode(texts)`` and the self CPU seconds of its operators, grouped."""
    from torch.profiler import ProfilerActivity, profile

    groups = {
        "matrix multiplies (addmm, mm, bmm)": ("aten::addmm", "aten::mm", "aten::bmm"),
        "attention kernel": ("aten::_scaled_dot_product_flash_attention_for_cpu",),
        "GELU": ("aten::gelu",),
        "LayerNorm": ("aten::native_layer_norm",),
        "copies and adds": ("aten::copy_", "aten::add", "aten::add_"),
    }
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        t = time.perf_counter()
        enc.encode(texts, show_progress=False)
        wall = time.perf_counter() - t
    per_op = {e.key: e.self_cpu_time_total / 1e6 for e in prof.key_averages()}
    out = {g: sum(per_op.get(op, 0.0) for op in ops) for g, ops in groups.items()}
    out["everything else (other operators, Python)"] = wall - sum(out.values())
    return wall, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--data-dir", type=Path, default=SHARED / "data")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--sample", type=int, default=4000, help="sentences profiled (and compiled)")
    ap.add_argument("--oracle-seconds", type=float, help="the oracle's time from eval_speed.py")
    ap.add_argument("--compile", action="store_true", help="also time torch.compile on the sample")
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    texts = unique_texts(t.texts(t.load(args.data_dir, "test")) for t in resolve_tasks("sts"))
    enc = load_encoder(args.model, use_cache=False)
    if not isinstance(enc, HFEncoder):
        sys.exit(
            f"{args.model} runs through sentence-transformers; this benchmark reads a transformers model"
        )
    distinct = {tuple(ids) for ids in enc.tokenize(texts)}
    lengths = [len(ids) for ids in distinct]
    padded = sum(len(b) * max(lengths[i] for i in b) for b in length_batches(lengths, 128))
    cfg = enc._model.config
    h, inter, layers = cfg.hidden_size, cfg.intermediate_size, cfg.num_hidden_layers
    dense = layers * 2 * (4 * h * h + 2 * h * inter) * sum(lengths)
    scores = layers * 4 * h * sum(n * n for n in lengths)  # QK^T and attention-weighted V
    m = 128 * sorted(lengths)[len(lengths) // 2]
    rate = matmul_rate(m, [(h, h, 4), (h, inter, 1), (inter, h, 1)])
    floor = dense / (rate * 1e9)

    rows = [
        ("sentences (test split, 7 tasks) / distinct token sequences", f"{len(texts):,} / {len(distinct):,}"),
        ("tokens without padding / in stsbench's batches of 128", f"{sum(lengths):,} / {padded:,}"),
        ("dense-layer FLOPs (QKV, attention output, FFN)", f"{dense / 1e12:.2f} TFLOP"),
        ("attention-score FLOPs", f"{scores / 1e12:.3f} TFLOP"),
        (f"fp32 `torch.mm` at the model's layer shapes, {m} rows, best of 5", f"{rate:.0f} GFLOP/s"),
        ("**floor: dense layers alone at that rate**", f"**{floor:.1f} s**"),
    ]
    enc.encode(texts[:256], show_progress=False)  # first-call set-up out of the timings
    t = time.perf_counter()
    enc.encode(texts, show_progress=False)
    eager = time.perf_counter() - t
    rows.append(("stsbench's eager encode of all of them (tokenization included)", f"{eager:.1f} s"))
    random.seed(0)
    sample = random.sample(texts, min(args.sample, len(texts)))
    sample_tokens = sum(len(ids) for ids in {tuple(i) for i in enc.tokenize(sample)})
    wall, parts = profile_encode(enc, sample)
    rows.append((f"the same, {len(sample)}-sentence sample under the profiler", f"{wall:.2f} s"))
    mm = parts["matrix multiplies (addmm, mm, bmm)"]
    sample_dense = dense * sample_tokens / sum(lengths)
    for name, secs in parts.items():
        note = f" ({sample_dense / mm / 1e9:.0f} GFLOP/s)" if name.startswith("matrix") else ""
        rows.append((f"  of which {name}", f"{secs:.2f} s, {100 * secs / wall:.0f}%{note}"))
    if args.compile:
        import tempfile

        import torch._inductor.config as inductor

        os.environ["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp()  # compile from nothing, as a user would
        inductor.freezing = True
        t = time.perf_counter()
        enc.encode(sample, show_progress=False)
        sample_eager = time.perf_counter() - t
        eager_model = enc._model
        enc._model = torch.compile(eager_model, dynamic=True)
        t = time.perf_counter()
        enc.encode(sample, show_progress=False)
        first = time.perf_counter() - t
        t = time.perf_counter()
        enc.encode(sample, show_progress=False)
        steady = time.perf_counter() - t
        enc._model = eager_model
        rows.append(("torch.compile on the sample: first pass (compile included)", f"{first:.1f} s"))
        rows.append(("eager on the sample, no profiler", f"{sample_eager:.2f} s"))
        gain = f"{steady:.2f} s ({100 * (steady / sample_eager - 1):+.0f}% vs eager)"
        rows.append(("torch.compile on the sample: second pass", gain))
    if args.oracle_seconds:
        rows.append(("oracle (from eval_speed.py)", f"{args.oracle_seconds:.1f} s"))
        rows.append(("best speed-up the floor allows", f"{args.oracle_seconds / floor:.1f}x"))
        rows.append(("speed-up of the eager encode alone", f"{args.oracle_seconds / eager:.1f}x"))

    lines = [
        f"fp32 floor of the cold STS suite, {args.model}, {args.threads} CPU threads, torch {torch.__version__}",
        "",
        "| quantity | value |",
        "|---|---:|",
        *(f"| {k} | {v} |" for k, v in rows),
        "",
        f"token lengths: {min(lengths)} to {max(lengths)}, {len(set(lengths))} distinct",
    ]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        atomic_write_text(args.markdown, text + "\n")


if __name__ == "__main__":
    main()
