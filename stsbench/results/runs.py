"""Training runs as results: one ``stsbench train --output DIR`` folder read into a :class:`TrainRun`.

Reads ``DIR/train_log.jsonl`` and, when the run saved a checkpoint, ``DIR/stsbench.json`` (both documented
in :mod:`stsbench.results.schema`). Records and files carry ``kind`` and ``schema_version`` since those
keys were added; older ones without them read as version 1. Every other file in a run folder (weights,
tokenizer, ``last/``) belongs to the checkpoint and is not read. Tolerant like the report: a bad line or a
bad ``stsbench.json`` is a warning naming it, and the rest of the run is used.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.results.portable import resolve
from stsbench.results.schema import RUN_KIND, TRAIN_LOG_KIND
from stsbench.results.store import check_version

TRAIN_LOG = "train_log.jsonl"
RUN_META = "stsbench.json"


@dataclass(frozen=True)
class TrainRun:
    """One ``stsbench train`` output folder: its config, its dev curve and how it ended."""

    path: str  # the run folder, relative to the scanned folder
    name: str  # the run folder's name
    config: dict[str, Any]  # TrainConfig as a dict (from stsbench.json, else the log's start record)
    method: str  # ``simcse`` | ``esimcse``
    curve: tuple[tuple[int, float | None], ...]  # (step, STS-B dev Spearman in [-1, 1]) per evaluation
    best_step: int | None
    best_dev_spearman: float | None
    total_steps: int | None
    steps_done: int | None  # the ``end`` record's step; None while a run is unfinished
    wall_seconds: float | None
    train_rows: int | None
    queue_size: int | None
    eval_pooler: str | None  # from stsbench.json: what ``stsbench run --model DIR`` evaluates with
    has_checkpoint: bool
    folder: str = ""  # the run folder as read (what a relative ``output`` is relative to)
    # the hidden dropout the backbone trained with (``dropout``, else the backbone's own; None: not recorded)
    backbone_dropout: float | None = None
    # MoCoSE's maximum traceable distance (eq. 4) as the start record gives it: a number, or for a ramped EMA
    # weight ``{"start": d0, "end": d1}``; None for a method without one
    traceable_distance: float | dict[str, float] | None = None
    # (step, l_align, l_uniform) of each dev evaluation's STS-B dev embeddings (logs before they were kept: none)
    trajectory: tuple[tuple[int, float | None, float | None], ...] = ()

    @property
    def resolved_config(self) -> dict[str, Any]:
        """The config with what the run resolved where it left an option unset: ``dropout``, the backbone's own.

        What runs are grouped by: an unset dropout and the backbone's value spelt out are one setting.
        """
        if self.config.get("dropout") is None and self.backbone_dropout is not None:
            return {**self.config, "dropout": self.backbone_dropout}
        return self.config

    @property
    def output(self) -> str:
        """The ``--output`` the run was given (what a task result's ``model.path`` points at), absolute.

        A copy of a run's files records it relative to the copy's folder (:mod:`stsbench.results.portable`);
        files written before record it absolute.
        """
        given = self.config.get("output")
        if not given:
            return ""
        return str(Path(resolve(str(given), self.folder or ".") or "").absolute())


def _read_jsonl(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    records, bad = [], []
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            bad.append(f"{path}:{no}: not a JSON line; skipped it")
            continue
        if not isinstance(rec, dict):
            bad.append(f"{path}:{no}: not a JSON object; skipped it")
            continue
        if rec.get("kind", TRAIN_LOG_KIND) != TRAIN_LOG_KIND:
            bad.append(f"{path}:{no}: not a training-log record ({rec.get('kind')!r}); skipped it")
            continue
        try:
            check_version(path, rec, "training log", default=1)
        except StsbenchError as exc:
            bad.append(f"{exc} (line {no}); skipped it")
            continue
        records.append(rec)
    return records, bad


def load_train_run(folder: Path, rel: str) -> tuple[TrainRun | None, list[str]]:
    """Read one run folder (``train_log.jsonl``, and ``stsbench.json`` when there is a checkpoint)."""
    log = folder / TRAIN_LOG
    records, warnings = _read_jsonl(log)
    meta: dict[str, Any] = {}
    meta_path = folder / RUN_META
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            warnings.append(f"{meta_path}: not a readable JSON file ({exc}); the run's log is used alone")
            meta = {}
        if not isinstance(meta, dict) or meta.get("kind", RUN_KIND) != RUN_KIND:
            warnings.append(f"{meta_path}: not a checkpoint description (a JSON object); ignored")
            meta = {}
        else:
            try:
                check_version(meta_path, meta, "checkpoint description", default=1)
            except StsbenchError as exc:
                warnings.append(f"{exc}; the run's log is used alone")
                meta = {}
    start = next((r for r in records if r.get("event") == "start"), None)
    end = next((r for r in reversed(records) if r.get("event") == "end"), None)
    config = meta.get("training") or (start or {}).get("config")
    if not isinstance(config, dict) or "method" not in config:
        warnings.append(f"{log}: no training config (no 'start' record, no {RUN_META}); run skipped")
        return None, warnings
    curve = tuple(
        (int(r["step"]), r.get("dev_spearman"))
        for r in records
        if r.get("event") == "eval" and isinstance(r.get("step"), int)
    )
    trajectory = tuple(
        (int(r["step"]), r.get("alignment"), r.get("uniformity"))
        for r in records
        if r.get("event") == "eval" and isinstance(r.get("step"), int) and "alignment" in r
    )
    selected = [
        (int(r["step"]), r.get("dev_spearman"))
        for r in records
        if r.get("event") == "eval" and r.get("best") and isinstance(r.get("step"), int)
    ]
    best_step, best_dev = selected[-1] if selected else (None, None)
    if end is not None and end.get("best_step") is not None:
        best_step, best_dev = end.get("best_step"), end.get("best_dev_spearman")
    run = TrainRun(
        path=rel,
        name=folder.name,
        config=config,
        method=str(config["method"]),
        curve=curve,
        best_step=best_step,
        best_dev_spearman=best_dev,
        total_steps=(start or {}).get("total_steps"),
        steps_done=(end or {}).get("step"),
        wall_seconds=(end or {}).get("wall_seconds"),
        train_rows=(start or {}).get("train_rows"),
        queue_size=meta.get("queue_size"),
        eval_pooler=meta.get("pooler"),
        has_checkpoint=bool(meta),
        folder=str(folder),
        backbone_dropout=(meta.get("resolution") or {}).get(
            "backbone_dropout", (start or {}).get("backbone_dropout")
        ),
        traceable_distance=(start or {}).get("traceable_distance"),
        trajectory=trajectory,
    )
    return run, warnings
