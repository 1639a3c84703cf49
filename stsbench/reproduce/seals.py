"""What a step wrote, sealed by its digests in the state and verified whenever reproduce reads it.

An edited ``end`` record of ``train_log.jsonl`` was accepted, an evaluation or an analysis counted as done when one
``seeds.json`` or any JSON of its folder was there, and what it held was read unverified. Now each step's record
holds ``files``: the sha256 of every file it wrote that a later step (or the reader of the reproduction) reads,
recorded when it finishes (paths relative to the reproduction's folder): a training's ``stsbench.json`` and
``train_log.jsonl`` (and the report's copies of them under ``results/train/``, recorded when the report step copies
them), an evaluation's results folders (each seed's and the aggregate's ``seeds.json``), an analysis' results files,
the report's ``report.md``. A step is done only while every file it sealed is there and unchanged: one missing or
changed makes it a step to run again, named in one line (:func:`damage`). A step recorded before seals has no
``files``: it reads ``unverified`` until the next run seals what it finds (:func:`seal`), never "to run".
Weights are not sealed (hundreds of MB, and a reproduction may be shared without them).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stsbench.files import sha256_file

if TYPE_CHECKING:
    from stsbench.reproduce.plan import Step

UNVERIFIED = "unverified"  # a done step whose files were never sealed (it finished before seals)


def training_files(folder: Path, out: Path) -> list[Path]:
    """A training's results files: its run folder's and their copies under ``OUT/results/train/`` (those there)."""
    from stsbench.reproduce.plan import training_copy
    from stsbench.results.runs import RUN_META, TRAIN_LOG

    copy = training_copy(folder, out)
    return [f for base in (folder, copy) for f in (base / RUN_META, base / TRAIN_LOG) if f.is_file()]


def step_files(step: Step, out: Path) -> list[Path]:
    """The files ``step`` wrote, as its plan names them (:attr:`Step.outputs`: patterns relative to ``out``)."""
    if step.kind == "train":
        assert step.folder is not None
        return training_files(step.folder, out)
    found = {f for pattern in step.outputs for f in out.glob(pattern) if f.is_file()}
    return sorted(f for f in found if not f.name.startswith("."))  # not a lock's or a temporary file


def digests(files: Iterable[Path], out: Path) -> dict[str, str]:
    """``{path relative to OUT: sha256}`` of ``files``."""
    return {f.relative_to(out).as_posix(): sha256_file(f) for f in files}


def seal(record: dict[str, Any], step: Step, out: Path, copies_only: bool = False) -> None:
    """Record in ``record["files"]`` the digests of the files ``step`` wrote, as they are now.

    ``copies_only``: a training's copies under ``results/train/`` only (the report step has just written them),
    its run folder's kept as sealed.
    """
    files = step_files(step, out)
    if copies_only:
        assert step.folder is not None
        files = [f for f in files if not f.is_relative_to(step.folder)]
        record["files"] = {**record.get("files", {}), **digests(files, out)}
    else:
        record["files"] = digests(files, out)


def damage(record: dict[str, Any] | None, out: Path) -> str:
    """Why a done step's sealed files no longer hold (one missing or changed), else empty.

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
    """Whether a done step's record holds no sealed files (it finished before seals were kept)."""
    return bool(record) and record.get("status") == "done" and "files" not in record
