"""Carry the checked-in editions' steps over to the code keys of #73's first commit, once.

    python scripts/carry_verdict_rule.py --old-tree DIR --data-dir ../shared/data

#73 took the verdict rule (``stats/decide.py``), the executors and the package's ``__init__`` out of every
training's, evaluation's and analysis' code closure. No step's key (its settings and data) moved, only the digest
of the code that computes it. ``--old-tree``: a checkout of the commit before (5e6c609, ``git worktree add DIR
5e6c609``). A step is carried, never recomputed, only where all hold:

1. its recorded key equals the key the old tree's plan computes for it, and its recorded code equals the old
   tree's code digest (it was done and current at the base commit);
2. its recorded inputs (the key's parts: resolved config, data digests, corpus) equal today's plan's, and its key
   is today's;
3. it is a training, an evaluation or an analysis (the report is made again by the next ``stsbench reproduce``).

A carried record gets today's code digest and ``carried``: the commit that holds this script, the code it had,
the base commit and the evidence. Anything else is left as it is (the next run says why it runs).
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BASE = "5e6c609"
OLD = """
import json, sys
from pathlib import Path
from stsbench.reproduce.plan import build_plan
from stsbench.reproduce.state import load_state, recorded_recipe
out = {}
for folder in sys.argv[2:]:
    state = load_state(Path(folder))
    plan = build_plan(recorded_recipe(state), Path(folder), sys.argv[1], gpus=state.get("gpus", 0))
    out[folder] = {s.id: {"key": s.key, "code": s.code} for s in plan.steps}
print(json.dumps(out))
"""


def old_plan(old_tree: Path, folders: list[Path], data_dir: Path) -> dict[str, dict[str, dict[str, str]]]:
    """``{folder: {step: {"key", "code"}}}`` as the old tree's code plans them."""
    code = f"import stsbench; assert stsbench.__file__.startswith({str(old_tree)!r})\n" + OLD
    done = subprocess.run(
        [sys.executable, "-c", code, str(data_dir.resolve()), *(str(f.resolve()) for f in folders)],
        env={**os.environ, "PYTHONPATH": str(old_tree)},
        cwd=old_tree,
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout)
    return {str(f): found[str(f.resolve())] for f in folders}


def carry(folder: Path, data_dir: Path, old: dict[str, dict[str, str]], commit: str) -> tuple[int, list[str]]:
    """Carry ``folder``'s steps over (module docstring): how many, and why the others stayed."""
    from stsbench.files import atomic_write_json
    from stsbench.reproduce.plan import build_plan
    from stsbench.reproduce.state import load_state, recorded_recipe, state_path

    state = load_state(folder)
    plan = build_plan(recorded_recipe(state), folder, data_dir.resolve(), gpus=state.get("gpus", 0))
    new = copy.deepcopy(state)
    carried, stayed = 0, []
    for step in plan.steps:
        rec = new["steps"].get(step.id)
        if step.kind == "report" or not rec or rec.get("status") != "done":
            continue
        was = old.get(step.id)
        if was is None or rec.get("key") != was["key"] or rec.get("code") != was["code"]:
            stayed.append(f"{step.id}: not done and current at {BASE}")
            continue
        if rec.get("key") != step.key or rec.get("parts") != step.parts:
            stayed.append(f"{step.id}: its recorded inputs differ from today's plan")
            continue
        if rec["code"] == step.code:
            continue
        rec["carried"] = {
            "by": f"scripts/carry_verdict_rule.py (#73), in commit {commit}",
            "base": BASE,
            "code": rec["code"],
            "evidence": "key and code current at the base commit; key and its parts (resolved config, data "
            "digests, corpus) equal today's plan's; the code moved only by the closure leaving out the verdict "
            "rule, the executors and the package's __init__ (tests/test_keys_inputs.py)",
            "on": time.strftime("%Y-%m-%d", time.gmtime()),
        }
        rec["code"] = step.code
        carried += 1
    atomic_write_json(state_path(folder), new)
    return carried, stayed


def main() -> int:
    """Carry every edition under reports/ (or the folders named)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old-tree", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("folders", nargs="*", type=Path)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    folders = args.folders or sorted(p.parent for p in (root / "reports").glob("*/reproduce.json"))
    commit = subprocess.run(
        ["git", "log", "-1", "--format=%h", "--", "scripts/carry_verdict_rule.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    old = old_plan(args.old_tree.resolve(), folders, args.data_dir)
    for folder in folders:
        n, stayed = carry(folder, args.data_dir, old[str(folder)], commit)
        print(f"{folder.name}: {n} carried; {len(stayed)} stayed")  # noqa: T201
        for line in stayed:
            print(f"  {line}")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
