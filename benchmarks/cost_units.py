"""Measure the unit times reproduce's cost estimate prices a plan with (``stsbench.reproduce.estimate.UNIT_TIMES``).

    OMP_NUM_THREADS=1 python benchmarks/cost_units.py [--model all-MiniLM-L6-v2] [--markdown FILE]

Each unit is measured as reproduce's steps spend it, through the CLI in new processes on one thread:

- one sentence encoded, and the set-up of an evaluation or analysis (process start, imports, model load,
  scoring): ``stsbench run --no-cache`` on STS-B dev and on the seven STS test sets, after a first run of each
  has made the bootstrap resamples (cached once per machine): the difference of the two over the difference of
  their unique sentences is one sentence's encoding, the rest of STS-B dev's run the set-up (the warm run's
  time, embeddings read from the cache and no model loaded, is printed beside it);
- a training's set-up, its resumable saves and best checkpoints: one ``stsbench train`` run with a step time
  logged at every step (``--log-steps 1``), no evaluation before training, one evaluation (kept) and one save
  after its last step. Its ``train_log.jsonl`` splits its wall time: the set-up is what comes before the first
  step (the process' time outside the run, and the run's time to its first step less one step), the save is
  the end record less the evaluation's, the keep is the evaluation less a dev evaluation's encoding;
- set-up of an analysis whose sentences the evaluation cached (no model loaded): ``stsbench spectrum`` on STS-B
  test after the STS test run, the median of ``--repeats``;
- a report: ``stsbench report`` on the checked-in editions named by ``--reports``, the mean.

Printed, and written with ``--markdown``: each unit, with what it was measured on. Copy the row into
``UNIT_TIMES``; ``tests/test_reproduce.py`` checks them against this file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from oracle import SHARED  # noqa: E402

from stsbench.files import atomic_write_text  # noqa: E402


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="all-MiniLM-L6-v2")
    ap.add_argument("--config", default="simcse-minilm-cpu", help="the training's packaged config")
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("STSBENCH_DATA") or SHARED / "data"))
    ap.add_argument("--steps", type=int, default=4, help="the training's optimizer steps")
    ap.add_argument("--repeats", type=int, default=3, help="runs from the cache (the median is printed)")
    ap.add_argument(
        "--reports", default="mocose-ema-mini,esimcse-dup-rate-mini", help="editions whose report is timed"
    )
    ap.add_argument("--markdown", type=Path)
    return ap.parse_args()


def cli(args: list[str], env: dict[str, str]) -> float:
    """Wall seconds of ``stsbench ARGS`` in a new process (exits on failure with its output)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "stsbench", *args], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"stsbench {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")
    return seconds


def unique(data_dir: Path, tasks: list[str], mode: str) -> int:
    from stsbench.reproduce.estimate import task_texts, union_of

    found = union_of([task_texts(data_dir, t, mode, False) for t in tasks])
    assert found is not None, f"data of {tasks} not found in {data_dir}"
    return len(found)


def main() -> None:
    args = parse_args()
    from stsbench.tasks.registry import STS_TASK_NAMES

    work = Path(tempfile.mkdtemp(prefix="cost-units-"))
    env = {**os.environ, "OMP_NUM_THREADS": "1", "STSBENCH_DATA": str(args.data_dir), "PYTHONUNBUFFERED": "1"}
    env["STSBENCH_CACHE"] = str(work / "cache")
    model = ["run", "--model", args.model, "--output", str(work / "results")]
    dev = [*model, "--tasks", "STSBenchmark", "--mode", "dev"]
    test = [*model, "--tasks", "sts", "--mode", "test"]
    primed = cli(dev, env) + cli(test, env)  # fills the cache of bootstrap resamples (made once per machine)
    warm = statistics.median(cli(dev, env) for _ in range(args.repeats))  # embeddings cached: no model loaded
    cold_dev = cli([*dev, "--no-cache"], env)
    cold_test = cli([*test, "--no-cache"], env)
    n_dev = unique(args.data_dir, ["STSBenchmark"], "dev")
    n_test = unique(args.data_dir, list(STS_TASK_NAMES), "test")
    # two runs that differ in the sentences they encode: their difference is the encoding, the rest the set-up
    encode_ms = 1000 * (cold_test - cold_dev) / (n_test - n_dev)
    setup = cold_dev - n_dev * encode_ms / 1000

    # an analysis on sentences the evaluation cached: STS-B test's spectrum after the STS test run
    spectrum = ["spectrum", "--model", args.model, "--output", str(work / "results" / "analyses")]
    cached_setup = statistics.median(cli(spectrum, env) for _ in range(args.repeats))

    out = work / "train"
    train = ["train", "--config", args.config, "--model", args.model, "--max-steps", str(args.steps)]
    train += ["--eval-steps", str(args.steps), "--save-steps", str(args.steps), "--log-steps", "1"]
    train += ["--no-eval-at-start", "--threads", "1", "--output", str(out)]
    wall = cli(train, env)
    log = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    steps = {r["step"]: r["time"] for r in log if r.get("event") == "train"}
    (evaluation,) = [r for r in log if r.get("event") == "eval"]
    (end,) = [r for r in log if r.get("event") == "end"]
    assert evaluation["best"], "the run's one evaluation keeps the checkpoint"
    step_s = statistics.median(steps[i + 1] - steps[i] for i in range(1, args.steps))
    train_setup = wall - end["wall_seconds"] + steps[1] - step_s
    save = end["wall_seconds"] - evaluation["time"]
    keep = max(0.0, evaluation["time"] - steps[args.steps] - n_dev * encode_ms / 1000)

    report_s = []
    for edition in args.reports.split(","):
        results = ROOT / "reports" / edition / "results"
        report_s.append(
            cli(["report", "--results", str(results), "--out", str(work / f"report-{edition}")], env)
        )
    report = statistics.mean(report_s)

    rows = [
        (
            "train_setup_s",
            train_setup,
            f"`stsbench train --config {args.config}`, {args.steps} steps: before its first step",
        ),
        (
            "setup_s",
            setup,
            f"`stsbench run --no-cache` on STS-B dev ({n_dev:,} sentences), less their encoding",
        ),
        (
            "cached_setup_s",
            cached_setup,
            f"`stsbench spectrum` on the cached STS-B test, median of {args.repeats}",
        ),
        (
            "encode_ms",
            encode_ms,
            f"`--no-cache` STS test ({n_test:,} sentences) less STS-B dev, over the sentences between them",
        ),
        ("save_s", save, "the training's one resumable save"),
        ("keep_s", keep, "the training's one best checkpoint, less its dev evaluation's encoding"),
        (
            "report_s",
            report,
            f"`stsbench report` on {args.reports} (mean; {', '.join(f'{s:.1f}' for s in report_s)} s)",
        ),
    ]
    import torch

    header = [
        f"Cost units, {args.model}, CPU, 1 thread (OMP_NUM_THREADS=1), torch {torch.__version__}",
        "",
        f"- date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; load average at the end {os.getloadavg()[0]:.2f}",
        "- command: `OMP_NUM_THREADS=1 python benchmarks/cost_units.py"
        + (f" --markdown {args.markdown}`" if args.markdown else "`"),
        f"- the training's median step: {step_s:.2f} s (batch of {args.config}); its process: {wall:.1f} s",
        f"- `stsbench run --no-cache`: STS-B dev {cold_dev:.1f} s, STS test {cold_test:.1f} s (after a first run of "
        f"each, {primed:.1f} s in all, made the bootstrap resamples); STS-B dev from the cache: {warm:.2f} s",
        f"- the training's evaluation (kept): {evaluation['time'] - steps[args.steps]:.1f} s",
        "",
        "| unit | value | measured on |",
        "|---|---:|---|",
    ]
    text = "\n".join([*header, *(f"| {name} | {value:.3f} | {what} |" for name, value, what in rows)]) + "\n"
    print(text)
    if args.markdown:
        atomic_write_text(args.markdown, text)
    import shutil

    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
