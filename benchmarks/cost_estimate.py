"""A tiny recipe's cost estimate against its measured wall time: the dry run's figure, then the run itself.

    OMP_NUM_THREADS=1 python benchmarks/cost_estimate.py [--steps 4] [--eval-steps 1] [--markdown FILE]

The recipe: unsup SimCSE on all-MiniLM-L6-v2 (``simcse-minilm-cpu``), two seeds of ``--steps`` steps with a dev
evaluation every ``--eval-steps`` (the case the estimate once missed: evaluations every step), each seed
evaluated on the seven STS test sets, alignment and uniformity on each seed, and the report. The estimate is the
one ``stsbench reproduce --dry-run`` prints for this machine (``CPU, 1 thread``: one step at a time); the run is
``stsbench reproduce`` in a new process with a fresh embedding cache, ``--parallel 1``. Printed: the estimate's
parts, each kind of step's measured seconds (from the reproduction's ``reproduce.json``), the wall time and
measured / estimated, which a quiet machine keeps within 1.5 either way.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from oracle import SHARED  # noqa: E402

from stsbench.files import atomic_write_text  # noqa: E402

RECIPE = """\
name: cost-check
title: "The cost estimate's check: SimCSE on all-MiniLM-L6-v2, {steps} steps, two seeds"
flavour: mini
verdict: false
verdict_reason: a benchmark of the cost estimate
runs:
  - name: simcse
    method: simcse
    config: simcse-minilm-cpu
    overrides: {{max_steps: {steps}, eval_steps: {eval_steps}}}
    seeds: [1, 2]
    evaluate: {{tasks: [sts], mode: test}}
analyses:
  - {{name: align_uniform}}
report:
  title: "The cost estimate's check"
"""


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--eval-steps", type=int, default=1)
    ap.add_argument("--data-dir", type=Path, default=Path(os.environ.get("STSBENCH_DATA") or SHARED / "data"))
    ap.add_argument("--markdown", type=Path)
    return ap.parse_args()


def main() -> None:
    args = parse_args()
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.estimate import count, duration, price
    from stsbench.reproduce.plan import build_plan

    work = Path(tempfile.mkdtemp(prefix="cost-estimate-"))
    recipe_file = work / "cost-check.yaml"
    recipe_file.write_text(RECIPE.format(steps=args.steps, eval_steps=args.eval_steps))
    out = work / "out"
    plan = build_plan(load_recipe(recipe_file), out, args.data_dir)
    counts = count(plan)
    estimate = price(counts, "CPU, 1 thread")
    assert estimate.seconds is not None and not estimate.missing, estimate

    env = {**os.environ, "OMP_NUM_THREADS": "1", "STSBENCH_DATA": str(args.data_dir), "PYTHONUNBUFFERED": "1"}
    env["STSBENCH_CACHE"] = str(work / "cache")
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "stsbench",
            "reproduce",
            str(recipe_file),
            "--out",
            str(out),
            "--parallel",
            "1",
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"the reproduction failed:\n{done.stdout}\n{done.stderr}")
    state = json.loads((out / "reproduce.json").read_text())
    kinds: dict[str, float] = defaultdict(float)
    for step_id, record in state["steps"].items():
        kinds[step_id.split("/")[0]] += float(record.get("seconds") or 0)

    ratio = wall / estimate.seconds
    lines = [
        f"Cost estimate against the measured run, {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, CPU, 1 thread",
        "",
        "- command: `OMP_NUM_THREADS=1 python benchmarks/cost_estimate.py"
        + (f" --markdown {args.markdown}`" if args.markdown else "`"),
        f"- the recipe: SimCSE on all-MiniLM-L6-v2, 2 seeds x {args.steps} steps, a dev evaluation every "
        f"{args.eval_steps}, STS test evaluations, align_uniform on each seed, the report",
        f"- counted: {counts.line()}",
        f"- load average at the end: {os.getloadavg()[0]:.2f}",
        "",
        "| part | estimated s |",
        "|---|---:|",
        *(f"| {name} | {seconds:.1f} |" for name, seconds in estimate.parts.items()),
        f"| **total** | **{estimate.seconds:.1f}** |",
        "",
        "| step kind | measured s (reproduce.json) |",
        "|---|---:|",
        *(f"| {kind} | {seconds:.1f} |" for kind, seconds in kinds.items()),
        f"| **wall, the whole command** | **{wall:.1f}** |",
        "",
        f"measured / estimated: {ratio:.2f} ({duration(wall)} against {duration(estimate.seconds)}; "
        f"within 1.5 either way: {'holds' if 1 / 1.5 <= ratio <= 1.5 else 'FAILS'})",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        atomic_write_text(args.markdown, text)
    import shutil

    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
