"""The fork server against a process per step: a reproduction's wall and CPU seconds, side by side in one run.

    OMP_NUM_THREADS=1 python benchmarks/fork_server.py [--repeats 3] [--data-dir DIR] [--parallel 2]
        [--work DIR] [--markdown FILE]

Two recipes, each reproduced ``--repeats`` times with ``STSBENCH_FORK_SERVER=0`` (every step a process of its own,
importing its libraries) and with the fork server (every step a fork of one process that imported them once),
in alternating order so that drift in the machine's load falls on both alike:

- ``tiny``: the tests' tiny recipe (``tests/helpers.py``, ``tiny.yaml``: a tiny BERT trained 6 steps with two
  seeds, their evaluation, two analyses, the report), each repeat into a fresh folder: 6 steps (an untimed
  warm-up first, so that every timed run finds the trained weights' embeddings cached alike);
- ``cached-analyses``: ``benchmarks/recipes/cached-analyses.yaml``, 20 analysis steps on all-MiniLM-L6-v2 (ten
  analyses on the embedded model and on a 1-step training of it). An untimed warm-up reproduces it once (its
  embeddings cached, its training done); each repeat then reproduces into a copy of that folder whose analysis
  and report steps were dropped from its ``reproduce.json``, so that exactly those 21 steps run.

Wall seconds from the start of ``stsbench reproduce`` to its exit; CPU seconds: user + system of it and of every
process below it, the server's own imports included (``getrusage(RUSAGE_CHILDREN)``: each process is waited
for by its parent). The medians are shown, with the ratios (plain / fork server). The server's resident memory
is sampled from ``/proc`` while it runs (its largest; its forks' own memory not counted). The tiny recipe's
training losses must be equal bit for bit across every run, and each run must run every step it should (its
session's ``steps_run``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RECIPE = ROOT / "benchmarks" / "recipes" / "cached-analyses.yaml"
SERVER = "stsbench.reproduce.forkserver"


def _is_server(pid: str) -> bool:
    try:
        return SERVER in (Path("/proc") / pid / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def _server_rss(stop: threading.Event, seen: list[int]) -> None:
    """The fork server's resident memory (kB), sampled every 0.5 s until ``stop``; its forks (the same command
    line, the server their parent) left out."""
    while not stop.wait(0.5):
        for proc in Path("/proc").iterdir():
            try:
                if not proc.name.isdigit() or not _is_server(proc.name):
                    continue
                status = (proc / "status").read_text()
                if _is_server(status.split("PPid:")[1].split()[0]):  # a step forked from the server
                    continue
                seen.append(int(status.split("VmRSS:")[1].split()[0]))
            except (OSError, IndexError, ValueError):
                continue


def reproduce(recipe: Path, out: Path, data_dir: Path, parallel: int, fork: bool, steps: int) -> dict:
    """One ``stsbench reproduce``: its wall and CPU seconds, and the server's largest RSS (fork only)."""
    env = {**os.environ, "STSBENCH_FORK_SERVER": "1" if fork else "0"}
    cmd = [sys.executable, "-m", "stsbench", "reproduce", str(recipe), "--out", str(out)]
    cmd += ["--data-dir", str(data_dir), "--parallel", str(parallel)]
    stop, rss = threading.Event(), []
    sampler = threading.Thread(target=_server_rss, args=(stop, rss), daemon=True)
    sampler.start()
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)  # noqa: S603
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN)
    stop.set()
    sampler.join()
    state = json.loads((out / "reproduce.json").read_text())
    statuses = {r["status"] for r in state["steps"].values()}
    ran = state["sessions"][-1]["steps_run"]
    if done.returncode not in (0, 1) or statuses != {"done"} or ran != steps:  # 1: a verdict, not a failure
        sys.exit(
            f"{recipe.name} ({'fork' if fork else 'plain'}): exit {done.returncode}, {ran} steps run "
            f"(expected {steps}), statuses {sorted(statuses)}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
        )
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall": wall, "cpu": cpu, "rss_mb": max(rss, default=0) / 1024}


def losses(out: Path) -> list:
    """Every logged loss of every training of ``out``, in order."""
    found = []
    for log in sorted((out / "runs").rglob("train_log.jsonl")):
        found += [json.loads(x).get("loss") for x in log.read_text().splitlines() if '"loss"' in x]
    return found


def drop_analyses(warm: Path, out: Path) -> None:
    """``warm`` copied to ``out`` without its analysis and report steps' records: a rerun runs exactly those."""
    shutil.copytree(warm, out)
    state = json.loads((out / "reproduce.json").read_text())
    state["steps"] = {
        k: v for k, v in state["steps"].items() if not (k.startswith("analysis/") or k == "report")
    }
    (out / "reproduce.json").write_text(json.dumps(state))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(os.environ.get("STSBENCH_DATA", ROOT.parent / "shared" / "data")),
    )
    parser.add_argument(
        "--work", type=Path, default=None, help="Keep the runs' folders here (default: a temporary one)."
    )
    parser.add_argument("--markdown", type=Path, default=None)
    args = parser.parse_args()
    data_dir = args.data_dir.resolve()
    if not (data_dir / "downstream").is_dir():
        sys.exit(f"--data-dir {data_dir}: no downstream/ in it; give the benchmark data's folder")
    sys.path.insert(0, str(ROOT / "tests"))
    from helpers import TINY, tiny_recipes  # the tests' tiny recipe: a tiny BERT, made here

    work = args.work or Path(tempfile.mkdtemp(prefix="stsbench-fork-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    tiny = tiny_recipes(work / "tiny-recipe", {"tiny.yaml": TINY}) / "tiny.yaml"
    print("warm-up: each recipe once, every step a process (their embeddings cached)", flush=True)
    warm = work / "cached-warm"
    if not (warm / "reproduce.json").is_file():
        reproduce(RECIPE, warm, data_dir, args.parallel, False, steps=23)
    if not (
        work / "tiny-warm" / "reproduce.json"
    ).is_file():  # its trainings' embeddings cached for every run
        reproduce(tiny, work / "tiny-warm", data_dir, args.parallel, False, steps=6)
    load = os.getloadavg()[0]
    rows: dict[tuple[str, bool], list[dict]] = {}
    seen_losses: list = []
    for i in range(args.repeats):
        for fork in (i % 2 == 0, i % 2 != 0):  # alternating which goes first
            name = f"{'fork' if fork else 'plain'}-{i}"
            out = work / f"tiny-{name}"
            rows.setdefault(("tiny", fork), []).append(reproduce(tiny, out, data_dir, args.parallel, fork, 6))
            seen_losses.append(losses(out))
            out = work / f"cached-{name}"
            drop_analyses(warm, out)
            rows.setdefault(("cached-analyses", fork), []).append(
                reproduce(RECIPE, out, data_dir, args.parallel, fork, 21)
            )
            print(
                f"repeat {i + 1}, {'fork server' if fork else 'plain'}: "
                f"tiny {rows[('tiny', fork)][-1]['wall']:.1f} s, "
                f"cached {rows[('cached-analyses', fork)][-1]['wall']:.1f} s",
                flush=True,
            )
    if any(x != seen_losses[0] for x in seen_losses) or not seen_losses[0]:
        sys.exit("the tiny recipe's training losses differ between runs")
    lines = [
        f"Fork server against a process per step: median of {args.repeats} runs each, --parallel {args.parallel}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, {os.cpu_count()} cores, "
        f"load {load:.2f} before and {os.getloadavg()[0]:.2f} after",
        "",
        "| recipe | steps | wall, plain (s) | wall, fork server (s) | wall ratio | CPU, plain (s) "
        "| CPU, fork server (s) | CPU ratio | server RSS (MB) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for recipe, steps in (("tiny", 6), ("cached-analyses", 21)):
        plain, fork = rows[(recipe, False)], rows[(recipe, True)]
        med = {
            k: (statistics.median(r[k] for r in plain), statistics.median(r[k] for r in fork))
            for k in ("wall", "cpu")
        }
        rss = max(r["rss_mb"] for r in fork)
        lines.append(
            f"| {recipe} | {steps} | {med['wall'][0]:.1f} | {med['wall'][1]:.1f} | {med['wall'][0] / med['wall'][1]:.2f}x "
            f"| {med['cpu'][0]:.1f} | {med['cpu'][1]:.1f} | {med['cpu'][0] / med['cpu'][1]:.2f}x | {rss:.0f} |"
        )
    lines += [
        "",
        f"tiny recipe: {len(seen_losses[0])} logged losses, equal bit for bit in all {len(seen_losses)} runs",
    ]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
