"""Carry the checked-in editions' analysis steps over to "one analysis, one module" (#75), once.

    python scripts/carry_analyses.py --old-tree DIR --data-dir ../shared/data [--dry-run] [FOLDER ...]

#75 moved each analysis' tables, figures and numbers into its own module and made ``stsbench.tabular`` import
pandas lazily: the analysis code digest moved, no analysis' computation, settings or data did, and no training
or evaluation key moved. ``--old-tree``: a checkout of the commit before it (``git worktree add DIR 2259d80``).
An analysis step is carried, never recomputed, only where both hold:

(a) its recorded key and code equal those the base commit's plan computes for it on the recorded recipe and data
    (it was done and current at the base);
(b) its recorded key and key parts (the analysis' options, the model's, data digests) equal today's plan's; the
    libraries, which the code digest holds, are the base's by (a), computed in this same environment.

A training or evaluation step whose code moved is not carried but listed (none is expected: their closures hold
no analysis module). A carried record gets today's code and ``carried``: this script's commit, the code it had,
the base, the evidence and the carry-over before it (``earlier``); ``--status`` counts the carried steps in the
line each edition's README carries. Report steps are made again by ``stsbench reproduce --rerun-changed``.
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

BASE = "2259d80"
OLD = """
import json, sys
from pathlib import Path
from stsbench.reproduce.plan import build_plan
from stsbench.reproduce.state import load_state, recorded_recipe
out = {}
for folder in sys.argv[2:]:
    state = load_state(Path(folder))
    plan = build_plan(recorded_recipe(state), Path(folder), sys.argv[1], gpus=state.get("gpus", 0))
    out[folder] = {s.id: {"key": s.key, "code": s.code, "parts": s.parts} for s in plan.steps}
print(json.dumps(out))
"""


def old_plan(old_tree: Path, folders: list[Path], data_dir: Path) -> dict[str, dict[str, dict]]:
    """``{folder: {step: {"key", "code", "parts"}}}`` as the base commit's code plans them."""
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


def carry(
    folder: Path, data_dir: Path, old: dict[str, dict], commit: str, dry: bool
) -> tuple[dict, list[str]]:
    """Carry ``folder``'s analysis steps over (module docstring): counts by kind, and why the others stayed."""
    from stsbench.files import atomic_write_json
    from stsbench.reproduce.plan import build_plan
    from stsbench.reproduce.state import STATE_FILE, load_state, recorded_recipe

    state = load_state(folder)
    plan = build_plan(recorded_recipe(state), folder, data_dir.resolve(), gpus=state.get("gpus", 0))
    new = copy.deepcopy(state)
    counts: dict[str, int] = {}
    stayed = []
    for step in plan.steps:
        rec = new["steps"].get(step.id)
        if step.kind == "report" or not rec or rec.get("status") != "done" or rec.get("code") == step.code:
            continue
        was = old.get(step.id)
        if step.kind != "analysis":
            stayed.append(f"{step.id}: a {step.kind} step whose code moved (not carried by this script)")
            continue
        if was is None or rec.get("key") != was["key"] or rec.get("code") != was["code"]:
            stayed.append(f"{step.id}: not done and current at {BASE}")
            continue
        if rec.get("key") != step.key or rec.get("parts") != step.parts:
            stayed.append(f"{step.id}: its recorded inputs differ from today's plan")
            continue
        rec["carried"] = {
            "by": f"scripts/carry_analyses.py (#75), in commit {commit}",
            "base": BASE,
            "code": rec["code"],
            "evidence": (
                f"key and code current at {BASE}; key and its parts (options, model, data digests) equal today's "
                "plan's; the code moved only by #75's one-module analyses and the lazy pandas import"
            ),
            "on": time.strftime("%Y-%m-%d", time.gmtime()),
            "earlier": rec.get("carried"),  # the carry-over before this one, if any
        }
        rec["code"] = step.code
        counts[step.kind] = counts.get(step.kind, 0) + 1
    if not dry:
        atomic_write_json(folder / STATE_FILE, new)
    return counts, stayed


def main() -> int:
    """Carry every edition under reports/ (or the folders named)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--old-tree", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--dry-run", action="store_true", help="check and count; write nothing")
    parser.add_argument("folders", nargs="*", type=Path)
    args = parser.parse_args()
    root = Path(__file__).resolve().parents[1]
    folders = args.folders or sorted(p.parent for p in (root / "reports").glob("*/reproduce.json"))
    commit = subprocess.run(
        ["git", "log", "-1", "--format=%h", "--", "scripts/carry_analyses.py"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    old = old_plan(args.old_tree.resolve(), folders, args.data_dir)
    for folder in folders:
        counts, stayed = carry(folder, args.data_dir, old[str(folder)], commit, args.dry_run)
        print(f"{folder.name}: carried {counts or 'none'}; {len(stayed)} stayed")  # noqa: T201
        for line in stayed:
            print(f"  {line}")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
