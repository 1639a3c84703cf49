"""Rewrite the absolute paths a results folder recorded before #36.10 as the writers record them now.

    python scripts/portable_paths.py reports/cpu-mini-replication [--check]

For a folder made on this machine, where it still is (the paths it records are this machine's): task results,
STS averages and analyses (``model.name``/``model.path``, ``provenance.command``, the probe's corpus) relative to
the ``--output`` they were written under, seed aggregates (``model``, ``models``) likewise, the training copies
under ``results/train/`` (``stsbench.json``, ``train_log.jsonl``) relative to their own folder, the data folder
by its name, ``reproduce.json``'s step logs and training folders relative to the folder, ``timings.log``'s
command lines relative to the repository root they ran in. The functions are the
writers' own (:mod:`stsbench.results.write`); only path strings change: every number, and every file without
an absolute path, stays byte for byte (the script checks it). The report is regenerated afterwards with the
command in the folder's README. ``--check``: change nothing, exit 1 when some file would change.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from stsbench.files import atomic_write_bytes, to_json
from stsbench.results.schema import ANALYSIS_KIND, AVERAGE_KIND, SEED_AGGREGATE_KIND, TASK_KIND
from stsbench.results.write import (
    analysis_path,
    portable,
    portable_command,
    portable_result,
    portable_training,
)

REPO = Path(__file__).resolve().parents[1]


def _strings(value: Any) -> list[Any]:
    """Every leaf of a JSON value, strings replaced by a marker: what must not change but paths."""
    if isinstance(value, dict):
        return [(k, _strings(v)) for k, v in sorted(value.items())]
    if isinstance(value, list):
        return [_strings(v) for v in value]
    return "<str>" if isinstance(value, str) else value


def _data_dir(data: dict[str, Any]) -> str | None:
    """The data folder of an analysis: its command's ``--data-dir``, else the probe corpus' folder."""
    corpus = (data.get("config") or {}).get("corpus")
    if isinstance(corpus, str) and Path(corpus).is_absolute():
        return str(Path(corpus).parent)
    return None


def rewrite_json(path: Path, root: Path) -> str | None:
    """The new text of one JSON file of the results (None: nothing to change)."""
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict):
        return None
    kind = data.get("kind")
    if kind in (TASK_KIND, AVERAGE_KIND):
        new = portable_result(data, path.parents[3])
    elif kind == ANALYSIS_KIND:
        output = path.parents[2]
        new = portable_result(data, output, _data_dir(data))
        assert analysis_path(output, _model(new), path.stem) == path, path  # the layout the base assumes
    elif kind == SEED_AGGREGATE_KIND:
        output = path.parents[3]
        new = {**data, "model": portable(data["model"], output)}
        new["models"] = {s: portable(m, output) for s, m in data["models"].items()}
    elif path.name == "stsbench.json" and path.is_relative_to(root / "results" / "train"):
        new = portable_training(data, path.parent)
    else:
        return None
    if new == data:
        return None
    assert _strings(new) == _strings(data), f"{path}: more than path strings would change"
    assert to_json(data) == text, f"{path}: not as the writers write it; rewriting would change more than paths"
    return to_json(new)


def _model(data: dict[str, Any]) -> Any:
    from stsbench.results.schema import ModelInfo

    return ModelInfo(**data["model"])


def rewrite_log(path: Path) -> str | None:
    """The new text of a training copy's ``train_log.jsonl``."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    out = []
    for line in lines:
        rec = json.loads(line)
        new = portable_training(rec, path.parent)
        assert _strings(new) == _strings(rec), f"{path}: more than path strings would change"
        out.append(line if new == rec else json.dumps(new, sort_keys=True) + "\n")
    return None if out == lines else "".join(out)


def rewrite_timings(path: Path) -> str | None:
    """``timings.log``: ``<seconds> s: <command>`` lines, each command relative to the repository root."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    given = [ln.split("--data-dir ", 1)[1].split()[0] for ln in lines if "--data-dir /" in ln]
    data = given[0] if given and len(set(given)) == 1 else None  # the probe's lines name no --data-dir
    out = []
    for line in lines:
        head, sep, command = line.partition(": stsbench ")
        if not sep or line.startswith("#"):
            out.append(line)
            continue
        new = portable_command("stsbench " + command.rstrip("\n"), REPO, data)
        out.append(f"{head}: {new}\n")
    return None if out == lines else "".join(out)


def rewrite_state(path: Path, root: Path) -> str | None:
    """``reproduce.json``: each step's ``log`` and training ``folder`` relative to the reproduction's folder."""
    state = json.loads(path.read_text(encoding="utf-8"))
    for record in state.get("steps", {}).values():
        for key in ("log", "folder"):
            if isinstance(record.get(key), str):
                record[key] = portable(record[key], root)
    new = to_json(state)
    return None if new == path.read_text(encoding="utf-8") else new


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    root = args.folder.resolve()
    changes: dict[Path, str] = {}
    for path in sorted((root / "results").rglob("*")):
        if path.suffix == ".json":
            new = rewrite_json(path, root)
        elif path.name == "train_log.jsonl":
            new = rewrite_log(path)
        else:
            continue
        if new is not None:
            changes[path] = new
    if (root / "reproduce.json").is_file():
        new = rewrite_state(root / "reproduce.json", root)
        if new is not None:
            changes[root / "reproduce.json"] = new
    if (root / "timings.log").is_file():
        new = rewrite_timings(root / "timings.log")
        if new is not None:
            changes[root / "timings.log"] = new
    for path, text in changes.items():
        sys.stdout.write(f"{'would rewrite' if args.check else 'rewrote'} {path.relative_to(root)}\n")
        if not args.check:
            atomic_write_bytes(path, text.encode("utf-8"))
    sys.stderr.write(f"{len(changes)} file(s)\n")
    return 1 if args.check and changes else 0


if __name__ == "__main__":
    sys.exit(main())
