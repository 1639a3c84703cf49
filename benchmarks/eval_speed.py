"""Time the 7-task STS suite: stsbench (cold cache, warm cache) vs SimCSE's SentEval fork, one run, same threads.

    python benchmarks/eval_speed.py [--model all-MiniLM-L6-v2] [--threads 2] [--extra-dtype bfloat16] [--markdown FILE]

The oracle gets SimCSE evaluation.py's batcher over the same Hugging Face weights with the model's declared
pooling (masked mean, L2-normalised, max length 256 for all-MiniLM-L6-v2). Cold = empty embedding cache
(model load included); warm = the same call again; the opt-in row is a cold run at another --dtype
(its own cache entries, since the dtype is part of the key). CLI warm = `stsbench run` as a fresh process, imports
included. Scores of every side are printed so the timing compares equal work.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import SHARED, STS_NAMES, hf_batcher, run_oracle_sts  # noqa: E402

from stsbench.encoders import load_encoder  # noqa: E402
from stsbench.evaluate import run  # noqa: E402
from stsbench.io import atomic_write_text  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--data-dir", type=Path, default=SHARED / "data")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument(
        "--extra-dtype",
        default="bfloat16",
        help="also time a cold run at this opt-in --dtype (its scores move a little); '' to skip",
    )
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    info = load_encoder(args.model, use_cache=False).info
    normalize = bool(info.extra.get("normalize"))

    rows = []
    with tempfile.TemporaryDirectory() as cache:
        t = time.perf_counter()
        cold = run(args.model, "sts", "test", args.data_dir, cache_dir=Path(cache), show_progress=False)
        rows.append(("stsbench, cold cache", time.perf_counter() - t, cold))
        t = time.perf_counter()
        warm = run(args.model, "sts", "test", args.data_dir, cache_dir=Path(cache), show_progress=False)
        rows.append(("stsbench, warm cache", time.perf_counter() - t, warm))
        if args.extra_dtype:
            t = time.perf_counter()
            low = run(
                args.model,
                "sts",
                "test",
                args.data_dir,
                cache_dir=Path(cache),
                show_progress=False,
                dtype=args.extra_dtype,
            )
            rows.append(
                (f"stsbench, cold cache, `--dtype {args.extra_dtype}` (opt-in)", time.perf_counter() - t, low)
            )
        cmd = [
            sys.executable,
            "-m",
            "stsbench",
            "run",
            "--model",
            args.model,
            "--data-dir",
            str(args.data_dir),
            "--cache-dir",
            cache,
            "--output",
            str(Path(cache) / "out"),
            "-q",
            "--format",
            "json",
        ]
        t = time.perf_counter()
        subprocess.run(
            cmd,
            check=True,
            capture_output=True,
            env={"OMP_NUM_THREADS": str(args.threads), **__import__("os").environ},
        )
        cli_warm = time.perf_counter() - t

    batcher = hf_batcher(Path(info.path), info.pooler, normalize=normalize, max_length=info.max_length)
    t = time.perf_counter()
    oracle = run_oracle_sts(batcher, STS_NAMES, "test", args.data_dir)
    oracle_s = time.perf_counter() - t

    scores = {name: {r.task: r.reported for r in res.results} for name, _, res in rows}
    lines = [
        f"STS suite (7 tasks, test mode), {args.model}, {args.threads} CPU threads, torch {torch.__version__}",
        "",
        "| run | seconds | speed-up vs oracle | " + " | ".join(STS_NAMES) + " |",
        "|---|---:|---:|" + "---:|" * len(STS_NAMES),
        f"| SentEval fork (oracle) | {oracle_s:.1f} | 1.0x | "
        + " | ".join(f"{oracle[t]:.2f}" for t in STS_NAMES)
        + " |",
    ]
    for name, secs, _ in rows:
        lines.append(
            f"| {name} | {secs:.2f} | {oracle_s / secs:.1f}x | "
            + " | ".join(f"{scores[name][t]:.2f}" for t in STS_NAMES)
            + " |"
        )
    lines.append(
        f"| `stsbench run` CLI, warm cache (new process, imports included) | {cli_warm:.2f} | "
        f"{oracle_s / cli_warm:.1f}x | " + " | ".join("" for _ in STS_NAMES) + " |"
    )
    lines.append("")
    lines.append(f"cold run encoded {cold.results[0].config['n_sentences']} unique sentences")
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        atomic_write_text(args.markdown, text + "\n")


if __name__ == "__main__":
    main()
