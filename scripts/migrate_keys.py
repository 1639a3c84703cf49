"""Migrate reproductions' ``reproduce.json`` to the keys of #51, once: by what their inputs are, not where they lie.

    python scripts/migrate_keys.py [FOLDER ...] [--data-dir DIR]

Default: every checked-in edition (``reports/*/reproduce.json``). A step recorded before #51 was keyed with its
data files' absolute paths, the report's folders as given and its code's bytes. For each folder the plan is built
from today's inputs in that old way, under each spelling the data folder and the folder may have been given with
(as given, absolute, with links resolved), and the spelling under which most records match is the one they were
made with: each matching record is rewritten with today's key and, where it ran today's code, today's code digest
(:func:`stsbench.reproduce.state.migrated`). A record that matches under no spelling is left as it is (the rerun
then says which part of its key changed). Prints each folder's status before and after: the migration moves no
step from one state to another.
"""

from __future__ import annotations

import argparse
import copy
import os
from pathlib import Path

from stsbench.reproduce.state import (
    STATE_FILE,
    load_state,
    planned,
    recorded_changed,
    recorded_recipe,
    save_state,
)
from stsbench.reproduce.view import status_line


def spellings(path: Path) -> list[Path]:
    """``path`` as it may have been given: relative to here (as is), absolute, and with its links resolved."""
    found = [path, Path(os.path.abspath(path)), path.absolute(), path.resolve()]  # noqa: PTH100 - normalised
    return list(dict.fromkeys(found))


def migrate(folder: Path, data_dir: Path) -> tuple[str, str, int]:
    """Rewrite ``folder``'s state in today's keys; its status line before and after, and how many moved."""
    state = load_state(folder)
    before = status_line(state, recorded_changed(state, folder), str(folder))
    recipe = recorded_recipe(state)
    best: tuple[int, dict] | None = None
    for out in spellings(folder):
        for data in spellings(data_dir):
            trial = copy.deepcopy(state)
            plan, _ = planned(recipe, out, data, trial, "keep")
            matched = sum(trial["steps"].get(s.id, {}).get("key") == s.key for s in plan.steps)
            if best is None or matched > best[0]:
                best = (matched, trial)
    assert best is not None
    moved = sum(best[1]["steps"][i] != state["steps"][i] for i in state["steps"])
    if moved:
        save_state(folder, best[1])
    after = status_line(best[1], recorded_changed(best[1], folder), str(folder))
    return before, after, moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("STSBENCH_DATA", "../shared/data")))
    args = parser.parse_args()
    folders = args.folders or sorted(p.parent for p in Path("reports").glob(f"*/{STATE_FILE}"))
    for folder in folders:
        before, after, moved = migrate(folder, args.data_dir)
        print(f"{folder}: {moved} record(s) rewritten\n  before: {before}\n  after:  {after}")  # noqa: T201


if __name__ == "__main__":
    main()
