"""Cold start: a warm-cache 7-task `stsbench run` and a mistyped name, as new processes, beside today's path.

    python benchmarks/cold_start.py [--model all-MiniLM-L6-v2] [--repeats 5] [--baseline REF] [--data-dir DIR]
        [--cache-dir DIR] [--markdown FILE] [--no-bytecode-cache]

Every embedding the run needs is put in the cache first (untimed runs). Then, ``--repeats`` times and in
rotating order (so that drift in the machine's load falls on every row alike), each of these runs as a new
process, from the interpreter's start to its exit, and the median wall seconds are shown, with the median CPU
seconds (user + system, the process and its children), which a shared machine's load sways less:

- this tree: ``stsbench run --model M --tasks sts -q --format json`` (the warm path: no torch, no scipy.stats), the
  same printing its table (rich) instead, and the same with ``--bootstrap 0`` (no intervals);
- this tree, the heavy modules imported first (when the baseline imports any): the same command after
  ``import torch, ...`` of every heavy module the baseline run imports (what the imports alone cost);
- the baseline: the same command on the package as it was at git ``--baseline`` (default ``e76d9f6``, the tree
  before issue 28; extracted with ``git archive`` into a temporary folder, same interpreter, data and cache);
- a bad task name (``--tasks STS17``), on this tree and on the baseline: the time to the one-line refusal.

Each run reports the heavy modules it imported; the runs' figures and intervals (``--format json``) must be equal.
Every run finds its modules' bytecode cached, as an installed package or any second run does: the processes get
a ``PYTHONPYCACHEPREFIX`` of their own, filled by the untimed runs, and ``PYTHONDONTWRITEBYTECODE`` is dropped.
``--no-bytecode-cache`` keeps the environment's setting instead (with ``PYTHONDONTWRITEBYTECODE`` set and no
``__pycache__`` in the tree, every run compiles the package from source, about 0.1 s).
The runs go on in the temporary folder: a relative path among the options (and in ``$STSBENCH_DATA`` or
``$STSBENCH_CACHE``) is taken from the folder the script was started in; a missing data folder is refused at once.
The load average is printed before and after: on a shared machine the absolute seconds follow the load.
Targets (issue 28): warm run at most 1.0 s, a bad name refused in under 0.5 s, on a quiet 2-core CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("torch", "transformers", "sentence_transformers", "scipy.stats", "matplotlib", "pandas", "seaborn")
WARM_TARGET_S, REFUSAL_TARGET_S = 1.0, 0.5
# runs `stsbench ARGS` as the console script does, then reports the heavy modules it imported on stderr
_WRAPPER = """\
import json, sys
for name in {first!r}:
    __import__(name)
sys.argv = ['stsbench', *{args!r}]
from stsbench.cli import main
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = [m for m in {heavy!r} if m in sys.modules]
print('\\n' + json.dumps({{'code': code, 'heavy': heavy, 'from': sys.modules['stsbench'].__file__}}), file=sys.stderr)
"""


PYCACHE: Path | None = None  # the runs' bytecode cache (main() sets it; None: the environment's setting)


def stsbench_process(
    args: list[str], tree: Path | None, first: tuple[str, ...] = ()
) -> tuple[float, dict, str]:
    """Wall seconds of ``stsbench ARGS`` in a new interpreter (package from ``tree``), its status and stdout.

    ``status["cpu"]``: the process's CPU seconds (user + system), which a shared machine's load sways less;
    ``status["tail"]``: the last lines (at most 5) of its stderr, to say why a run failed.
    """
    env = dict(os.environ)
    if PYCACHE is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    if tree is not None:  # ahead of the editable install's finder, which comes after sys.path
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    code = _WRAPPER.format(first=first, args=[str(a) for a in args], heavy=HEAVY)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(  # run from elsewhere: `python -c` puts the working folder first on sys.path
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        cwd=tempfile.gettempdir(),
    )
    took = time.perf_counter() - start
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = now.ru_utime - used.ru_utime + now.ru_stime - used.ru_stime
    lines = [line for line in done.stderr.splitlines() if line.strip()] or [""]
    try:  # its status is the last line; the five before it say why a run failed
        status = json.loads(lines[-1])
    except json.JSONDecodeError:  # the wrapper itself failed (an import, say): its stderr ends with why
        command, said = " ".join(map(str, args)), "\n".join(lines[-5:])
        raise SystemExit(f"error: stsbench {command} broke its process; its stderr ends:\n{said}") from None
    tail = "\n".join(lines[-6:-1])
    want = (tree or ROOT) / "stsbench" / "__init__.py"
    if Path(status["from"]).resolve() != want.resolve():
        raise SystemExit(f"error: the run imported stsbench from {status['from']}, not {want}")
    return took, {**status, "cpu": cpu, "tail": tail}, done.stdout


def extract(ref: str, into: Path) -> Path:
    """The ``stsbench/`` package as it was at git ``ref``, unpacked under ``into``."""
    tar = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "stsbench"], capture_output=True, check=False
    )
    if tar.returncode:
        raise SystemExit(
            f"error: git archive {ref} failed: {tar.stderr.decode().strip()}; pass --baseline REF"
        )
    with tarfile.open(fileobj=BytesIO(tar.stdout)) as archive:
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.10.12 / 3.11.4
        archive.extractall(into, **safe)
    return into


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The options, every path among them absolute (see :func:`resolve_paths`); a missing data folder exits 2."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="all-MiniLM-L6-v2", help="a name or a local model folder")
    ap.add_argument("--data-dir", type=Path, help="default: $STSBENCH_DATA, else ./data")
    ap.add_argument(
        "--cache-dir", type=Path, help="embedding cache (default: $STSBENCH_CACHE, else the user's)"
    )
    ap.add_argument("--repeats", type=int, default=5, help="timed runs of each row (the median is shown)")
    ap.add_argument(
        "--baseline", default="e76d9f6", help="git ref of today's path (default: before issue 28)"
    )
    ap.add_argument("--markdown", type=Path, help="also write the table here")
    ap.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep the environment's PYTHONDONTWRITEBYTECODE/PYTHONPYCACHEPREFIX (default: a bytecode cache of "
        "the benchmark's own)",
    )
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    args = resolve_paths(args, Path.cwd())
    if not args.data_dir.is_dir():
        ap.exit(
            2, f"error: no data folder at {args.data_dir}; pass --data-dir (the folder holding downstream/)\n"
        )
    return args


def resolve_paths(args: argparse.Namespace, start: Path) -> argparse.Namespace:
    """``args`` with its paths absolute, a relative one taken from ``start`` (the folder the script was started
    from): the runs go on in another folder. The data folder defaults to ``$STSBENCH_DATA``, else ``./data``, the
    cache to ``$STSBENCH_CACHE`` where set (else the run's own default, the user's cache); ``--model`` where it
    names a path there."""
    data_dir = args.data_dir or Path(os.environ.get("STSBENCH_DATA") or "data")
    cache_dir = args.cache_dir or (
        Path(os.environ["STSBENCH_CACHE"]) if os.environ.get("STSBENCH_CACHE") else None
    )
    model = start / Path(args.model).expanduser()
    return argparse.Namespace(
        **{
            **vars(args),
            "data_dir": (start / data_dir.expanduser()).resolve(),
            "cache_dir": None if cache_dir is None else (start / cache_dir.expanduser()).resolve(),
            "markdown": None if args.markdown is None else (start / args.markdown.expanduser()).resolve(),
            "model": str(model.resolve()) if model.exists() else args.model,
        }
    )


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def main() -> None:
    global PYCACHE
    args = parse_args()
    common = ["--model", args.model, "--tasks", "sts", "-q"]
    common += ["--data-dir", args.data_dir]
    common += ["--cache-dir", args.cache_dir] if args.cache_dir else []
    with tempfile.TemporaryDirectory() as tmp:
        PYCACHE = None if args.no_bytecode_cache else Path(tmp) / "pycache"
        base = extract(args.baseline, Path(tmp) / "baseline")
        out = Path(tmp) / "out"
        warm, bad = ["run", *common, "--format", "json"], ["run", "--tasks", "STS17"]
        # untimed: fill the embedding cache (and this tree's bytecode, the table's rich included)
        for argv in (warm, ["run", *common]):
            _, status, _ = stsbench_process([*argv, "--output", out / "warm-up"], None)
            if status["code"] != 0:
                code, tail = status["code"], status["tail"]
                raise SystemExit(
                    f"error: the warm-up run failed (exit code {code}); its stderr ends:\n{tail}"
                )
        _, status, _ = stsbench_process([*warm, "--output", out / "baseline-up"], base)
        before = tuple(status["heavy"])  # what today's path imports on a warm run
        rows = {  # label: (arguments, package tree (None: this one), modules imported first, exit code 0)
            "`stsbench run`, warm cache: this tree": (warm, None, (), True),
            "the same printing its table (no `--format json`)": (["run", *common], None, (), True),
            "the same with `--bootstrap 0` (no intervals)": ([*warm, "--bootstrap", "0"], None, (), True),
            f"the same on the baseline ({args.baseline})": (warm, base, (), True),
            "bad task name (`--tasks STS17`): this tree": (bad, None, (), False),
            f"bad task name on the baseline ({args.baseline})": (bad, base, (), False),
        }
        if before:  # what the baseline's heavy imports alone cost
            rows[f"the same, {', '.join(before)} imported first"] = (warm, None, before, True)
        secs: dict[str, list[float]] = {label: [] for label in rows}
        cpu: dict[str, list[float]] = {label: [] for label in rows}
        heavy: dict[str, list[str]] = {}
        printed: list[dict] = []
        load_before = load()
        for i in range(args.repeats):
            labels = list(rows)
            for label in labels[i % len(labels) :] + labels[: i % len(labels)]:
                argv, tree, first, good = rows[label]
                argv = [*argv, "--output", out / f"{labels.index(label)}-{i}"] if good else argv
                took, status, stdout = stsbench_process(argv, tree, first)
                if (status["code"] == 0) != good:
                    raise SystemExit(f"error: {label}: exit code {status['code']}")
                secs[label].append(took)
                cpu[label].append(status["cpu"])
                heavy[label] = status["heavy"]
                if good and "--format" in argv:
                    # the tasks' figures only: a tree before #27 printed the Avg. among them (run JSON version 1)
                    got = json.loads(stdout)
                    printed.append(
                        {
                            k: {t: v for t, v in (got.get(k) or {}).items() if t != "Avg."} or None
                            for k in ("scores", "intervals")
                        }
                    )
        load_after = load()
    # every run gives the same figures, and the same intervals where it computes them
    intervals = next(r["intervals"] for r in printed if r["intervals"] is not None)
    same = all(r["scores"] == printed[0]["scores"] and r["intervals"] in (None, intervals) for r in printed)
    lines = [
        f"Cold start, {args.model}, 7 STS tasks (test mode), warm embedding cache; each row a new process, "
        f"median of {args.repeats} (min in brackets); Python {sys.version.split()[0]}, {os.cpu_count()} CPUs; "
        f"bytecode {'as the environment has it' if args.no_bytecode_cache else 'cached'}; "
        f"load average (1/5/15 min) {load_before} before, {load_after} after",
        "",
        "| run | seconds | CPU seconds | heavy modules imported |",
        "|---|---:|---:|---|",
    ]
    for label, values in secs.items():
        used = cpu[label]
        cells = (
            f"{statistics.median(values):.2f} ({min(values):.2f}) | "
            f"{statistics.median(used):.2f} ({min(used):.2f}) | {', '.join(heavy[label]) or '-'}"
        )
        lines.append(f"| {label} | {cells} |")
    warm_s = statistics.median(secs["`stsbench run`, warm cache: this tree"])
    refusal_s = statistics.median(secs["bad task name (`--tasks STS17`): this tree"])
    lines += [
        "",
        f"figures and intervals equal on every warm run: {'yes' if same else 'NO'} "
        f"({', '.join(f'{v:.2f}' for v in printed[0]['scores'].values())})",
        f"targets: warm run <= {WARM_TARGET_S} s: {'met' if warm_s <= WARM_TARGET_S else 'not met'} "
        f"({warm_s:.2f} s); bad name < {REFUSAL_TARGET_S} s: "
        f"{'met' if refusal_s < REFUSAL_TARGET_S else 'not met'} ({refusal_s:.2f} s)",
    ]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n", encoding="utf-8")
    if not same:
        raise SystemExit("error: the warm runs' figures differ")


if __name__ == "__main__":
    main()
