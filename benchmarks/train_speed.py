"""Training speed of SimCSE, ESimCSE and MoCoSE on any device, beside an official-style SimCSE step, in one run.

    python benchmarks/train_speed.py                                  # all-MiniLM-L6-v2, this device
    python benchmarks/train_speed.py --device cuda --bert-base-shape --tokenizer DIR --markdown out.md
    python benchmarks/train_speed.py --device cpu --tiny-shape --steps 3 --warmup 1   # a smoke test

For each method, precision (fp32, tf32, bf16 autocast) and mode it builds stsbench's trainer from the same weights and runs the same batches:
``--warmup`` untimed steps (the first one timed alone: compilation lands there), then ``--steps`` timed ones.
Modes (:data:`MODES`): eager; graph = ``--cuda-graph`` (the step replayed from one CUDA graph; the steps
that fill a queue, the eager warm-up and the capture step untimed); compiled = ``--compile``; compiled-graph = both; all
but eager with every view padded to max length (``--pad-to-max-length``, one length bucket).
``--compile-methods`` narrows the compiled modes to some methods (a compile takes a minute or so a row).
A timed step is what the loop does per batch: get the views (tokenised, repeated, padded; from the loop's
own source, ``stsbench.train.loop``, made ahead in a thread on CUDA where the loop has it, else made in
the step), move them to the device, forward, loss, backward, clip, AdamW, the method's state update; the
loss is read on the host every ``--log-steps`` steps, as the loop logs. On CUDA each step is timed by events on the stream (no sync between
steps), on CPU by the wall clock; the table gives the median. MFU = model FLOPs of the step
(:mod:`flops`, from the model config and the views' padded shapes) / median time / the device's peak at that
precision (:data:`flops.PEAKS`; on CPU the measured fp32 matmul rate).

The baseline (:mod:`official_step`) is unsup SimCSE as the official code runs it (HF BertModel + MLP, fp16
autocast with a GradScaler, padding to the batch's longest, a host read of the loss each step) on the same
sentences. The loss check trains the first ``--check-steps`` steps twice from the same seed, through
today's loop and through the pre-issue-19 step (:mod:`legacy_step`), and prints the largest difference. Below
fp32 it also trains the old step in fp32: the largest difference bf16 makes to the old step's losses is the
spread, and the two steps in bf16 may differ by at most twice it (each a bf16 rounding of the same fp32 step).
``--profile-steps N`` runs N more steps of each row under torch.profiler (:mod:`speed_profile`): wall time a
step against the device's busy time, kernels a step, and the busy time by kind, to explain a missed goal.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from flops import cpu_matmul_rate, gpu_peak, step_flops  # noqa: E402
from legacy_step import legacy_train_step, plain_adamw  # noqa: E402
from official_step import OfficialStep  # noqa: E402
from speed_profile import profiled  # noqa: E402
from speed_report import report  # noqa: E402
from speed_timing import Clock, Run, guarded, one_line, progress, set_tf32, sync, views_source  # noqa: E402

from stsbench.data.training import read_train_file  # noqa: E402
from stsbench.errors import StsbenchError  # noqa: E402
from stsbench.train import config as train_config  # noqa: E402
from stsbench.train import loop  # noqa: E402
from stsbench.train.config import finalize, make_config  # noqa: E402
from stsbench.train.data import batch_rows  # noqa: E402
from stsbench.train.model import resolve_backbone  # noqa: E402
from stsbench.train.schedule import batches_per_epoch, linear_lr  # noqa: E402

try:  # the loop's device-side finiteness record (issue 19); the loop before it checked on the host
    from stsbench.train.step import FiniteWatch
except ImportError:
    FiniteWatch = None

SHARED = Path(os.environ.get("STSBENCH_SHARED", Path(__file__).resolve().parents[2] / "shared"))
PRECISION = {"fp32": "fp32", "tf32": "fp32", "bf16": "bf16"}  # --precision of the trainer
STATIC = {"pad_to_max_length": True, "length_buckets": 1}
MODES = {  # trainer options per mode
    "eager": {},
    "graph": {"cuda_graph": True, **STATIC},
    "compiled": {"compile": True, **STATIC},
    "compiled-graph": {"compile": True, "cuda_graph": True, **STATIC},
}


def model_folder(args: argparse.Namespace, tmp: Path) -> Path:
    """The backbone folder: ``--model``, or a random BERT of BERT-base's (or a tiny) shape saved in ``tmp``; a
    child of ``--isolate`` reads its parent's (``--row-backbone``) instead of drawing and saving it again."""
    if getattr(args, "row_backbone", None):
        return args.row_backbone
    if not (args.bert_base_shape or args.tiny_shape):
        return Path(resolve_backbone(args.model))
    from transformers import AutoTokenizer, BertConfig, BertModel

    from stsbench.encoders.resolve import embedded_model_path

    tok = AutoTokenizer.from_pretrained(args.tokenizer or embedded_model_path())
    shape = {} if args.bert_base_shape else dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2)
    if args.tiny_shape:
        shape["intermediate_size"] = 128
    torch.manual_seed(0)
    out = tmp / "backbone"
    BertModel(BertConfig(vocab_size=len(tok), **shape)).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def option_names() -> set[str]:
    """The trainer's option names (the dataclass's fields, or the typed config's)."""
    fields = getattr(train_config, "FIELDS", None)
    return set(fields) if fields is not None else set(train_config.TrainConfig.model_fields)


def build(method: str, precision: str, mode: str, args, model_dir: Path, data):
    """Config, trainer parts and the method's schedule span, seeded as ``stsbench train`` seeds them."""
    options = {
        "method": method,
        "model": str(model_dir),
        "train_file": str(args.train_file),
        "output": "-",
        "batch_size": args.batch_size,
        "max_length": args.max_length,
        "precision": PRECISION[precision],
        "device": args.device,
        "length_buckets": args.length_buckets or (4 if args.device == "cpu" else 1),
    }
    options.update(MODES[mode])
    if args.optimizer:
        options["optimizer"] = args.optimizer
    if precision == "tf32" and "tf32" in option_names():
        options["tf32"] = True
    missing = [k for k in options if k not in option_names()]
    if missing:
        raise StsbenchError(f"this stsbench's trainer has no {', '.join(missing)} option")
    cfg = finalize(make_config(options), data.supervised)  # a new, resolved record where the config is typed
    if hasattr(cfg, "on_device"):
        cfg = cfg.on_device(args.device)
    set_tf32(precision == "tf32")
    loop.seed_everything(cfg.seed)
    model, _, m, optimizer = loop.build(cfg, model_dir, args.device)
    if "compile" in options and hasattr(loop, "compile_model"):  # the backbones, in place
        takes_method = "method" in inspect.signature(loop.compile_model).parameters
        loop.compile_model(model, cfg, m) if takes_method else loop.compile_model(model, cfg)
    m.start(args.warmup + args.steps)
    return cfg, model, m, optimizer, loop.Precision(cfg.precision, args.device)


def batch(data, cfg, step: int):
    """Rows and views rng of step ``step`` (0-based), as the loop draws them (wrapping round the epochs)."""
    epoch, index = divmod(step, batches_per_epoch(len(data), cfg.batch_size))
    rows = batch_rows(data, seed=cfg.seed, epoch=epoch, index=index, batch_size=cfg.batch_size)
    return rows, np.random.default_rng([cfg.seed, epoch, index, 1])


def sentence_tokens(tokenizer, data, rows, max_length: int) -> int:
    """Non-padding tokens of the batch's sentences, each counted once (what tokens/s counts)."""
    enc = tokenizer([data.rows[i][0] for i in rows], truncation=True, max_length=max_length)
    return sum(len(ids) for ids in enc["input_ids"])


def time_stsbench(method: str, precision: str, mode: str, args, model_dir: Path, data) -> Run:
    """Warm-up, then ``args.steps`` timed steps of stsbench's trainer."""
    run = Run(method, precision, mode)
    cfg, model, m, optimizer, amp = build(method, precision, mode, args, model_dir, data)
    config = model.backbone.config
    # the loop's device-side finiteness record, where it has one (the old loop checked on the host)
    watch = FiniteWatch(args.device) if FiniteWatch is not None else None
    graphed, warmup = None, args.warmup
    if MODES[mode].get("cuda_graph"):
        from stsbench.train.graph import GraphedStep

        graphed = GraphedStep(
            model, m, optimizer, max_grad_norm=cfg.max_grad_norm, precision=amp, watch=watch
        )
        # untimed: the steps that fill a queue (eager until it is full), the eager warm-up, the capture
        queue = getattr(m, "queue", None)
        fill = 0 if queue is None or queue.size <= 0 else -(-(queue.size - len(queue)) // cfg.batch_size)
        warmup = max(warmup, fill + GraphedStep.EAGER + 1)
    timed_end = warmup + args.steps
    total = timed_end + args.profile_steps  # the profiled steps come after the timed ones
    optimizer_ms = time_optimizer_steps(optimizer) if torch.device(args.device).type == "cpu" else None
    plan = [batch(data, cfg, step) for step in range(total)]
    run.tokens = [
        sentence_tokens(m.tokenizer, data, rows, cfg.max_length) for rows, _ in plan[warmup:timed_end]
    ]
    clock = Clock(args.device)

    def make(step: int):
        rows, rng = plan[step]
        return m.make_views([data.rows[i] for i in rows], rows, rng)

    def one_step(source, step: int):
        """What the loop does per batch; returns the views."""
        views = source.get(step)
        lr = linear_lr(step, total, cfg.lr, cfg.warmup_steps)
        if graphed is not None:
            loss, _ = graphed(views, lr=lr, step=step + 1)
        else:
            checks = {"watch": (watch, step + 1)} if watch is not None else {}
            loss, _ = loop.train_step(
                model,
                m,
                optimizer,
                views,
                lr=lr,
                max_grad_norm=cfg.max_grad_norm,
                precision=amp,
                **checks,
            )
        if (step + 1) % args.log_steps == 0:  # the loop's one read per log interval
            if watch is not None:
                watch.check()
            float(loss)
        return views

    with views_source(make, stop=total, device=args.device) as source:
        for step in range(timed_end):
            if step in (0, warmup):
                sync(args.device)
            started = time.perf_counter()
            timed = step >= warmup
            if timed:
                clock.start()
            views = one_step(source, step)
            if timed:
                clock.stop()
                pos = views.positive if views.positive is not None else views.anchor
                widths = (views.anchor["input_ids"].shape[1], pos["input_ids"].shape[1])
                fgsm = getattr(cfg, "fgsm_epsilon", 0) > 0
                run.flops.append(step_flops(method, config, len(plan[step][0]), widths, fgsm))
            if step == 0:
                sync(args.device)
                run.first_s = time.perf_counter() - started
        run.ms = clock.ms()
        if args.profile_steps:  # after the timing: a profiler that fails costs the profile, not the row
            try:
                with profiled(args.device, args.profile_steps) as run.profile:
                    for step in range(timed_end, total):
                        one_step(source, step)
            except Exception as exc:
                run.profile = {"error": one_line(exc)}
    if optimizer_ms:  # the optimizer's own share of the timed steps (CPU: the wall clock, no queued kernels)
        own = float(np.median(optimizer_ms[warmup:timed_end]))
        print(
            f"{method} {precision} {mode}: optimizer {getattr(cfg, 'optimizer', 'torch-adamw')} step {own:.1f} ms "
            f"(median), {100 * own / float(np.median(run.ms)):.1f}% of the median step",
            flush=True,
        )
    return run


def time_optimizer_steps(optimizer) -> list[float]:
    """Wrap ``optimizer.step`` to record the wall milliseconds of each call (CPU only: a GPU step is queued)."""
    inner, times = optimizer.step, []

    def step(*args, **kwargs):
        started = time.perf_counter()
        out = inner(*args, **kwargs)
        times.append(1e3 * (time.perf_counter() - started))
        return out

    optimizer.step = step
    return times


def time_official(args, model_dir: Path, data) -> Run:
    """The official-style SimCSE step on the same batches (fp16 autocast on CUDA, fp32 on CPU)."""
    total = args.warmup + args.steps
    cfg = make_config(
        {
            "method": "simcse",
            "model": str(model_dir),
            "train_file": str(args.train_file),
            "output": "-",
            "batch_size": args.batch_size,
            "max_length": args.max_length,
        }
    )
    plan = [batch(data, cfg, step)[0] for step in range(total)]
    texts = [[data.rows[i][0] for i in rows] for rows in plan]
    loop.seed_everything(cfg.seed)
    step_fn = OfficialStep(
        model_dir,
        device=args.device,
        max_length=args.max_length,
        total_steps=total,
        pretokenized_texts=sorted({t for b in texts for t in b}) if args.baseline_pretokenized else None,
    )
    run = Run("official", step_fn.precision, "eager")
    config = step_fn.model.bert.config
    run.tokens = [
        sentence_tokens(step_fn.tokenizer, data, rows, args.max_length) for rows in plan[args.warmup :]
    ]
    clock = Clock(args.device)
    for step, batch_texts in enumerate(texts):
        if step in (0, args.warmup):
            sync(args.device)
        started = time.perf_counter()
        if step >= args.warmup:
            clock.start()
        _, width = step_fn(batch_texts)
        if step >= args.warmup:
            clock.stop()
            run.flops.append(step_flops("official", config, len(batch_texts), (width, width)))
        if step == 0:
            sync(args.device)
            run.first_s = time.perf_counter() - started
    run.ms = clock.ms()
    return run


def check_losses(method: str, precision: str, legacy: bool, args, model_dir: Path, data) -> list[float]:
    """The first ``--check-steps`` losses of today's loop (or the pre-issue-19 step) at ``precision``."""
    cfg, model, m, optimizer, amp = build(method, precision, "eager", args, model_dir, data)
    if legacy:
        optimizer = plain_adamw(optimizer)
    got = []
    for step in range(args.check_steps):
        rows, rng = batch(data, cfg, step)
        views = m.make_views([data.rows[i] for i in rows], rows, rng).to(args.device)
        lr = linear_lr(step, args.warmup + args.steps, cfg.lr, cfg.warmup_steps)
        step_fn = legacy_train_step if legacy else loop.train_step
        loss = step_fn(model, m, optimizer, views, lr=lr, max_grad_norm=cfg.max_grad_norm, precision=amp)
        got.append(loss if legacy else loss[0])
    del model, m, optimizer
    return [float(x) for x in got]


def max_gap(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


def loss_check(method: str, precision: str, args, model_dir: Path, data) -> tuple[float, float | None]:
    """Today's loop against the pre-issue-19 step over the first ``--check-steps`` steps, same seed and batches.

    Returns the largest |loss difference| and, below fp32, the spread that precision itself causes: the
    largest |loss difference| between the old step at ``precision`` and at fp32 (what the bound is set from).
    """
    new = check_losses(method, precision, False, args, model_dir, data)
    old = check_losses(method, precision, True, args, model_dir, data)
    spread = None
    if precision not in ("fp32", "tf32"):
        spread = max_gap(old, check_losses(method, "fp32", True, args, model_dir, data))
    return max_gap(new, old), spread


def backbone_arguments(ap: argparse.ArgumentParser, cuda: bool) -> None:
    """--device, the backbone (--model or a random shape, --tokenizer) and --data-dir: shared with epoch_speed.py."""
    ap.add_argument("--device", default="cuda" if cuda else "cpu", help="cuda, cuda:1 or cpu")
    ap.add_argument(
        "--model", default="all-MiniLM-L6-v2", help="backbone folder or name (without a --*-shape)"
    )
    shape = ap.add_mutually_exclusive_group()
    shape.add_argument("--bert-base-shape", action="store_true", help="random BERT-base (BertConfig())")
    shape.add_argument("--tiny-shape", action="store_true", help="random 2-layer, 64-wide BERT (smoke tests)")
    ap.add_argument(
        "--tokenizer", type=Path, help="tokenizer of the random shapes (default: all-MiniLM-L6-v2's)"
    )
    ap.add_argument(
        "--data-dir",
        type=Path,
        help="folder holding wiki/wiki1m_head.txt, and downstream/ for dev evaluations (default: "
        "$STSBENCH_DATA, else ../shared/data)",
    )


def parse_args() -> argparse.Namespace:
    cuda = torch.cuda.is_available()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    backbone_arguments(ap, cuda)
    ap.add_argument("--train-file", type=Path, help="default: DATA_DIR/wiki/wiki1m_head.txt")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--max-length", type=int, default=32)
    ap.add_argument("--steps", type=int, default=30, help="timed steps per row")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps per row first (>= 1)")
    ap.add_argument("--log-steps", type=int, default=10, help="read the loss on the host every N steps")
    ap.add_argument("--methods", default="simcse,esimcse,mocose")
    ap.add_argument("--precisions", default="fp32,tf32,bf16" if cuda else "fp32")
    ap.add_argument(
        "--modes",
        default="eager,graph,compiled-graph,compiled" if cuda else "eager",
        help=f"of {', '.join(MODES)} (graph modes: CUDA only)",
    )
    ap.add_argument(
        "--compile-precisions",
        default="bf16" if cuda else "fp32",
        help="the precisions the compiled modes run (each compile takes a minute or so)",
    )
    ap.add_argument(
        "--compile-methods",
        help="the methods the compiled modes run (default: --methods; gpu_suite.sh: simcse, the compiled row "
        "that the epoch runs)",
    )
    ap.add_argument("--length-buckets", type=int, help="eager rows (default: the loop's, 4 on CPU, 1 on GPU)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the official-style step")
    ap.add_argument(
        "--baseline-pretokenized",
        action="store_true",
        help="baseline tokenises up front (official datasets.map), pads per step",
    )
    ap.add_argument(
        "--profile-steps",
        type=int,
        default=0,
        help="profile this many more steps a row after its timed ones (torch.profiler): where the time goes",
    )
    ap.add_argument("--check-steps", type=int, default=20, help="loss check steps (0: none)")
    ap.add_argument("--check-precisions", default="fp32,bf16" if cuda else "fp32")
    ap.add_argument("--threads", type=int, help="torch CPU threads")
    ap.add_argument(
        "--optimizer",
        help="the trainer's --optimizer (torch-adamw, hf-adamw; default: the trainer's); on CPU each row also "
        "prints its optimizer step's median time and share of the step",
    )
    ap.add_argument("--peak-tflops", type=float, help="the device's peak for MFU when it is not in the table")
    ap.add_argument("--markdown", type=Path, help="also write the report here")
    ap.add_argument(
        "--isolate",
        choices=("auto", "yes", "no"),
        default="auto",
        help="time each row in a process of its own (auto: each graphed or compiled row on CUDA; eager rows, "
        "which run first, stay in this process). A CUDA graph capture that fails leaves the device's generator "
        "marked as capturing, and every later dropout of that process then fails ('Offset increment outside "
        "graph capture': the 2026-11-23 compile rows), so such a row must not share a process. A process costs "
        "about 20 s on an H200 (imports, the model), too much for a row that captures nothing",
    )
    ap.add_argument("--row", help=argparse.SUPPRESS)  # METHOD:PRECISION:MODE, a child of --isolate
    ap.add_argument("--row-json", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--row-backbone", type=Path, help=argparse.SUPPRESS)  # the parent's drawn backbone folder
    args = ap.parse_args()
    unknown = set(filter(None, args.modes.split(","))) - set(MODES)
    if unknown:
        ap.error(f"--modes: {', '.join(sorted(unknown))} unknown; use {', '.join(MODES)}")
    if args.warmup < 1 or args.steps < 1:
        ap.error("--warmup and --steps must be at least 1")
    if args.profile_steps < 0:
        ap.error("--profile-steps must be 0 (no profile) or more")
    if torch.device(args.device).type == "cuda" and not cuda:
        ap.error("--device cuda, but torch sees no CUDA device")
    data_dir = args.data_dir or Path(os.environ.get("STSBENCH_DATA") or SHARED / "data")
    args.train_file = args.train_file or data_dir / "wiki" / "wiki1m_head.txt"
    return args


def peaks(args, config) -> dict[str, float | None]:
    """Peak FLOP/s per precision: the GPU table (or --peak-tflops), on CPU the measured fp32 matmul rate."""
    if torch.device(args.device).type != "cuda":
        rate = cpu_matmul_rate(config, args.batch_size * args.max_length)
        return {p: rate for p in ("fp32", "tf32", "bf16", "fp16")}
    name = torch.cuda.get_device_name(torch.device(args.device))
    if args.peak_tflops:
        return {p: args.peak_tflops * 1e12 for p in ("fp32", "tf32", "bf16", "fp16")}
    return {p: gpu_peak(name, p) for p in ("fp32", "tf32", "bf16", "fp16")}


def run_header(args) -> dict[str, str]:
    """Device, versions, date and command for the report."""
    import transformers

    cuda = "cuda" in args.device
    if args.bert_base_shape:
        shape = "BERT-base shape, random weights"
    else:
        shape = "tiny random BERT" if args.tiny_shape else args.model
    return {
        "device": torch.cuda.get_device_name(torch.device(args.device))
        if cuda
        else f"CPU, {torch.get_num_threads()} threads",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python " + " ".join(shlex.quote(a) for a in sys.argv),
        "shape": shape,
    }


def prepared(args: argparse.Namespace):
    """``--threads`` set, and the train file read: its rows, or the one-line error and exit."""
    if args.threads:
        torch.set_num_threads(args.threads)
    try:
        return read_train_file(args.train_file)
    except StsbenchError as exc:
        sys.exit(f"error: {exc}")


def row_in_child(method: str, precision: str, mode: str, backbone: Path) -> Run:
    """One timed row in a fresh process (``--isolate``): this script's arguments, with ``--row``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "row.json"
        cmd = [
            sys.executable,
            __file__,
            *sys.argv[1:],
            "--row",
            f"{method}:{precision}:{mode}",
            "--row-json",
            str(out),
            "--row-backbone",
            str(backbone),
        ]
        print(f"[train_speed] {method} {precision} {mode}: own process", file=sys.stderr, flush=True)
        began = time.perf_counter()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL)
        print(
            f"[train_speed]   its process took {time.perf_counter() - began:.1f} s",
            file=sys.stderr,
            flush=True,
        )
        if out.is_file():
            return Run(**json.loads(out.read_text()))
        return Run(method, precision, mode, error=f"its process exited {done.returncode} without a result")


def main() -> None:
    args = parse_args()
    data = prepared(args)
    methods = [m for m in args.methods.split(",") if m]
    modes = [m for m in args.modes.split(",") if m]
    runs: list[Run] = []
    checks: list[tuple[str, str, float | None, float | None, str | None]] = []
    header = run_header(args)

    def write() -> str:  # after every row: a run cut short by a time limit still leaves its table
        text = report(header=header, args=args, config=config, runs=runs, checks=checks, peak=peak)
        if args.markdown:
            from stsbench.files import atomic_write_text

            atomic_write_text(args.markdown, text + "\n")
        return text

    on_cuda = torch.device(args.device).type == "cuda"

    def timed_rows(mode: str, precisions: str, which: list[str]) -> None:
        isolate = args.isolate == "yes" or (args.isolate == "auto" and on_cuda and mode != "eager")
        for precision in [p for p in precisions.split(",") if p]:
            for method in which:
                if isolate:
                    runs.append(row_in_child(method, precision, mode, model_dir))
                else:
                    label = f"{method} {precision} {mode}"
                    run, error = guarded(label, time_stsbench, method, precision, mode, args, model_dir, data)
                    runs.append(run or Run(method, precision, mode, error=error))
                progress(runs[-1])
                write()

    with tempfile.TemporaryDirectory() as tmp:
        try:
            model_dir = model_folder(args, Path(tmp))
        except StsbenchError as exc:
            sys.exit(f"error: {exc}")
        if args.row:  # a child of --isolate: this one row, as JSON
            method, precision, mode = args.row.split(":")
            label = f"{method} {precision} {mode} (own process)"
            run, error = guarded(label, time_stsbench, method, precision, mode, args, model_dir, data)
            row = run or Run(method, precision, mode, error=error)
            args.row_json.write_text(json.dumps(dataclasses.asdict(row)))
            return
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(model_dir)
        peak = peaks(args, config)
        # quick rows first, compilation (a minute or more a row) last
        if "eager" in modes:
            timed_rows("eager", args.precisions, methods)
        if not args.no_baseline:
            set_tf32(False)
            run, error = guarded("official-style baseline", time_official, args, model_dir, data)
            precision = "fp16" if "cuda" in args.device else "fp32"
            runs.append(run or Run("official", precision, "eager", error=error))
            progress(runs[-1])
            write()
        for precision in [p for p in args.check_precisions.split(",") if p and args.check_steps > 0]:
            for method in methods:
                label = f"loss check {method} {precision}"
                got, error = guarded(label, loss_check, method, precision, args, model_dir, data)
                gap, spread = got if got else (None, None)
                checks.append((method, precision, gap, spread, error))
                print(
                    f"[train_speed]   max abs loss difference {gap}, {precision} vs fp32 spread {spread}",
                    file=sys.stderr,
                    flush=True,
                )
                write()
        if "graph" in modes:
            timed_rows("graph", args.precisions, methods)
        compiled = [m for m in (args.compile_methods or args.methods).split(",") if m]
        for mode in ("compiled-graph", "compiled"):  # a minute or more each: last
            if mode in modes:
                timed_rows(mode, args.compile_precisions, compiled)
    print(write())


if __name__ == "__main__":
    main()
