"""Carry the checked-in editions' steps over to the keys of "Keys that miss no input" (#66), once.

    python scripts/migrate_keys.py --old-tree DIR [FOLDER ...] [--data-dir DIR]

``--old-tree``: a checkout of the commit before the new keys (``git worktree add DIR 7047237``). Every step's key
changes with the new definition, so each is carried over, never recomputed, only where both hold:

1. **its old key still matches under the old definition**: the old tree's ``planned()`` (run in a process of its
   own on that tree's code) finds the record made with today's settings and data;
2. **the newly keyed inputs are shown unchanged**: an evaluation's or an analysis' results files record, in
   their provenance, the library versions and the data files' digests they ran with: each library the new key
   holds at today's major.minor, each data file at today's content; a training's ``stsbench.json`` records the
   resolution it trained with (device, ``length_buckets``) and its options (``select_on``): equal to what the new
   key resolves. A training records no library versions: the evaluations of the same machine image do, and the
   golden losses (``tests/test_golden_losses.py``) show the trainer's numbers unchanged at this commit.

A carried record gets today's key, parts and code, its files sealed as they are, and ``carried``: what it was
keyed and computed with before and the evidence. Anything else is left as it is (the next run says why it runs).
The report step is never carried: it is made again by the next ``stsbench reproduce``. Prints each folder's
status before and after.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

OLD_KEYS = """
import copy, json, sys
from pathlib import Path
from stsbench.reproduce.state import load_state, planned, recorded_recipe, same_settings
out = {}
for folder in sys.argv[2:]:
    state = load_state(Path(folder))
    trial = copy.deepcopy(state)
    plan, _ = planned(recorded_recipe(state), Path(folder), sys.argv[1], trial, "keep")
    out[folder] = {s.id: {"key": s.key, "same": same_settings(s, trial["steps"].get(s.id))} for s in plan.steps}
print(json.dumps(out))
"""


def old_keys(old_tree: Path, folders: list[Path], data_dir: Path) -> dict[str, dict[str, Any]]:
    """``{folder: {step: {"key", "same"}}}``: each step's key under the old definition, and whether it matches."""
    env = {**os.environ, "PYTHONPATH": str(old_tree)}
    code = f"import stsbench; assert stsbench.__file__.startswith({str(old_tree)!r})\n" + OLD_KEYS
    done = subprocess.run(  # in the old tree: python -c puts the working folder first on sys.path
        [sys.executable, "-c", code, str(data_dir), *(str(f.resolve()) for f in folders)],
        env=env,
        cwd=old_tree,
        capture_output=True,
        text=True,
        check=True,
    )
    found = json.loads(done.stdout)
    return {str(f): found[str(f.resolve())] for f in folders}


def _major_minor(version: str) -> str:
    return ".".join(version.split("+")[0].split(".")[:2])


def results_evidence(step: Any, folder: Path, data_dir: Path) -> str | None:
    """Why an evaluation's or analysis' results cannot be carried (None: every file's provenance agrees)."""
    from stsbench.reproduce.keys import named_digests
    from stsbench.reproduce.seals import step_files
    from stsbench.sources import LIBRARIES, library_versions

    files = [f for f in step_files(step, folder) if f.suffix == ".json"]
    if not files:
        return "no results files"
    want = library_versions(LIBRARIES[step.kind])
    for f in files:
        prov = json.loads(f.read_text(encoding="utf-8")).get("provenance")
        if prov is None:
            continue  # an aggregate (seeds.json): its seeds' files carry the provenance
        had = {k: _major_minor(v) for k, v in (prov.get("libraries") or {}).items() if k in want}
        if had != {k: v for k, v in want.items() if v != "absent"}:
            return f"{f.relative_to(folder)} ran on {had}, not {want}"
        recorded = prov.get("data_files") or {}
        # names relative to the data folder, or to a corpus' own folder (the repetition probe's wiki1m_head.txt)
        paths = {n: data_dir / n if (data_dir / n).is_file() else next(data_dir.rglob(n), data_dir / n) for n in recorded}
        now = dict(zip(paths, named_digests(paths.values(), data_dir).values(), strict=True))
        if recorded != now:
            return f"{f.relative_to(folder)} read other data ({sorted(k for k in recorded if recorded[k] != now[k])})"
        if prov.get("data_modified"):
            return f"{f.relative_to(folder)} ran on modified data"
    return None


def training_evidence(step: Any, folder: Path) -> str | None:
    """Why a training cannot be carried (None: its recorded resolution and options are what the new key holds)."""
    from stsbench.reproduce.plan import training_copy
    from stsbench.results.runs import RUN_META

    assert step.folder is not None
    meta = json.loads((training_copy(step.folder, folder) / RUN_META).read_text(encoding="utf-8"))
    resolution, options = meta.get("resolution") or {}, meta.get("training") or {}
    device = "cuda" if step.config.get("device", "cpu") not in (None, "cpu") else "cpu"
    if resolution.get("device") != device:
        return f"trained on {resolution.get('device')}, keyed for {device}"
    from stsbench.train.config import default_length_buckets

    buckets = options.get("length_buckets") or default_length_buckets(device, bool(options.get("pad_to_max_length")))
    if resolution.get("length_buckets") != buckets:
        return f"trained with length_buckets {resolution.get('length_buckets')}, keyed with {buckets}"
    if options.get("select_on", "stsb-dev") != step.config.get("select_on", "stsb-dev"):
        return "selected its checkpoint on other data"
    return None


EVIDENCE = {
    "train": "resolution (device, length_buckets) and select_on as recorded in its stsbench.json; libraries: "
    "this machine image's (the editions' evaluations record torch 2.13, transformers 5.24, tokenizers 0.23); "
    "trainer numbers: tests/test_golden_losses.py passes at this commit",
    "evaluate": "its results' provenance: libraries at today's major.minor, data files at today's content",
    "analysis": "its results' provenance: libraries at today's major.minor, data files at today's content",
}


def carry(folder: Path, data_dir: Path, old: dict[str, Any]) -> tuple[str, str, list[str]]:
    """Carry ``folder``'s steps over (module docstring); its status lines before and after, and what stayed."""
    from stsbench.files import atomic_write_json
    from stsbench.reproduce.plan import build_plan
    from stsbench.reproduce.seals import seal
    from stsbench.reproduce.state import load_state, recorded_changed, recorded_recipe, state_path
    from stsbench.reproduce.view import status_line

    state = load_state(folder)
    before = status_line(state, recorded_changed(state, folder), str(folder))
    plan = build_plan(recorded_recipe(state), folder, data_dir, gpus=state.get("gpus", 0))
    new = copy.deepcopy(state)
    stayed = []
    for step in plan.steps:
        rec = new["steps"].get(step.id)
        if step.kind == "report" or not rec or rec.get("status") != "done":
            continue
        if not old.get(step.id, {}).get("same"):
            stayed.append(f"{step.id}: its key did not match under the old definition")
            continue
        why = training_evidence(step, folder) if step.kind == "train" else results_evidence(step, folder, data_dir)
        if why:
            stayed.append(f"{step.id}: {why}")
            continue
        rec["carried"] = {
            "on": "2026-11-27",
            "by": "scripts/migrate_keys.py (#66)",
            "key": old[step.id]["key"],
            "code": rec.get("code"),
            "evidence": EVIDENCE[step.kind],
        }
        rec.update(key=step.key, parts=step.parts, code=step.code)
        seal(rec, step, folder)
    atomic_write_json(state_path(folder), new)
    after = status_line(new, recorded_changed(new, folder), str(folder))
    return before, after, stayed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--old-tree", type=Path, required=True)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("STSBENCH_DATA", "../shared/data")))
    args = parser.parse_args()
    folders = args.folders or sorted(p.parent for p in Path("reports").glob("*/reproduce.json"))
    data = args.data_dir.resolve()
    old = old_keys(args.old_tree.resolve(), folders, data)
    for folder in folders:
        before, after, stayed = carry(folder.absolute(), data, old[str(folder)])
        print(f"{folder}\n  before: {before}\n  after:  {after}")  # noqa: T201
        for line in stayed:
            print(f"  not carried: {line}")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
