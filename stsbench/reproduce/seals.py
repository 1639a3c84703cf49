"""A training's results files, sealed by their digests in the state and verified whenever reproduce reads them.

An evaluation's results carry a per-pair sidecar that catches an edit; a training's did not: an edited ``end``
record of ``train_log.jsonl`` was accepted, and a deleted ``stsbench.json`` left the step done. Now a
training's record holds ``files``: the sha256 of its run folder's ``stsbench.json`` and ``train_log.jsonl``,
recorded when it finishes, and of the report's copies of them under ``results/train/``, recorded when the report
step copies them (paths relative to the reproduction's folder). A file missing or changed since makes the
training a step to run again, named in one line (:func:`damage`). A training recorded before this has no
``files``: it reads ``unverified`` until the next run seals what it finds (:func:`seal`), never "to run".
Weights are not sealed (hundreds of MB, and a reproduction may be shared without them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from stsbench.files import sha256_file

UNVERIFIED = "unverified"  # a done training whose files were never sealed (it finished before seals)


def training_files(folder: Path, out: Path) -> list[Path]:
    """A training's results files: its run folder's and their copies under ``OUT/results/train/`` (those there)."""
    from stsbench.reproduce.plan import training_copy
    from stsbench.results.runs import RUN_META, TRAIN_LOG

    copy = training_copy(folder, out)
    return [f for base in (folder, copy) for f in (base / RUN_META, base / TRAIN_LOG) if f.is_file()]


def digests(files: list[Path], out: Path) -> dict[str, str]:
    """``{path relative to OUT: sha256}`` of ``files``."""
    return {f.relative_to(out).as_posix(): sha256_file(f) for f in files}


def seal(record: dict[str, Any], folder: Path, out: Path, copies_only: bool = False) -> None:
    """Record in ``record["files"]`` the digests of the training's results files as they are now.

    ``copies_only``: only the report's copies (which it has just written), the run folder's kept as sealed.
    """
    files = training_files(folder, out)
    if copies_only:
        files = [f for f in files if not f.is_relative_to(folder)]
        record["files"] = {**record.get("files", {}), **digests(files, out)}
    else:
        record["files"] = digests(files, out)


def damage(record: dict[str, Any] | None, out: Path) -> str:
    """Why a done training's sealed files no longer hold (one missing or changed), else empty.

    Files under ``OUT/runs/`` are not looked for where that folder is absent altogether (a reproduction shared
    without its weights: its copies under ``results/train/`` are what it has).
    """
    if not record:
        return ""
    runs_kept = (out / "runs").exists()
    for rel, sha in sorted((record.get("files") or {}).items()):
        path = out / rel
        if rel.startswith("runs/") and not runs_kept:
            continue
        if not path.is_file():
            return f"its file {rel} is missing"
        if sha256_file(path) != sha:
            return f"its file {rel} changed since it finished"
    return ""


def unverified(record: dict[str, Any] | None) -> bool:
    """Whether a done training's record holds no sealed files (it finished before seals were kept)."""
    return bool(record) and record.get("kind") == "train" and record.get("status") == "done" and "files" not in record
