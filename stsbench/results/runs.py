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
from typing import Literal

from typing_extensions import TypedDict

from stsbench.errors import StsbenchError
from stsbench.results.portable import resolve
from stsbench.results.schema import FIRST_VERSION, RUN_KIND, TRAIN_LOG_KIND, JsonObject
from stsbench.results.store import check_version

TRAIN_LOG = "train_log.jsonl"
RUN_META = "stsbench.json"


class RampedDistance(TypedDict):
    """MoCoSE's maximum traceable distance under a ramped EMA weight: at the first step and at the last."""

    start: float
    end: float


@dataclass(frozen=True)
class StartRecord:
    """``train_log.jsonl``'s first record: the run's shape before its first step (:mod:`stsbench.train.log`)."""

    event: Literal["start"]
    config: JsonObject | None = None  # TrainConfig as a dict (:meth:`TrainConfig.from_dict` reads it)
    kind: Literal["stsbench.train_log"] = TRAIN_LOG_KIND
    schema_version: int = FIRST_VERSION
    step: int = 0
    total_steps: int | None = None
    steps_per_epoch: int | None = None
    train_rows: int | None = None
    device: str | None = None
    processes: int | None = None
    global_batch_size: int | None = None
    traceable_distance: float | RampedDistance | None = None  # MoCoSE eq. 4; None: a method without one
    backbone_dropout: float | None = None  # the hidden dropout the backbone trains with


@dataclass(frozen=True)
class TrainRecord:
    """The loss of a step and its parts (each method's own keys: ``contrastive``, ``grad_norm``...), and the lr."""

    event: Literal["train"]
    step: int
    epoch: int | None = None
    loss: float | None = None  # null: not finite
    lr: float | None = None
    time: float | None = None


@dataclass(frozen=True)
class EvalRecord:
    """STS-B dev Spearman after ``step`` (raw, in [-1, 1]); ``best``: kept as the checkpoint."""

    event: Literal["eval"]
    step: int
    dev_spearman: float | None = None
    best: bool = False
    time: float | None = None
    sts_test_avg: float | None = None  # ``select_on: sts-test``: the mean of the seven STS test sets
    alignment: float | None = None  # l_align, l_uniform of the same embeddings (logs before them: absent)
    uniformity: float | None = None


@dataclass(frozen=True)
class CompileRecord:
    """``--compile``: the wall seconds of the first step, compilation included."""

    event: Literal["compile"]
    step: int
    seconds: float


@dataclass(frozen=True)
class NonfiniteRecord:
    """The step whose loss or gradient norm was not finite (the value as text)."""

    event: Literal["nonfinite"]
    step: int
    what: str
    value: str


@dataclass(frozen=True)
class EndRecord:
    """The run's last step and its best dev score."""

    event: Literal["end"]
    step: int | None = None
    best_step: int | None = None
    best_dev_spearman: float | None = None
    wall_seconds: float | None = None


LogRecord = StartRecord | TrainRecord | EvalRecord | CompileRecord | NonfiniteRecord | EndRecord
RECORDS: dict[str, type] = {
    "start": StartRecord,
    "train": TrainRecord,
    "eval": EvalRecord,
    "compile": CompileRecord,
    "nonfinite": NonfiniteRecord,
    "end": EndRecord,
}


@dataclass(frozen=True)
class Resolution:
    """What a run resolved where its config left an option unset (``stsbench.json``'s ``resolution``).

    Its other keys belong to the trainer.
    """

    backbone_dropout: float | None = None


@dataclass(frozen=True)
class RunMeta:
    """``stsbench.json`` of a run that saved a checkpoint: how ``stsbench run --model DIR`` evaluates it.

    ``training``: the config (:meth:`TrainConfig.from_dict` reads it); the other keys (``method``, ``backbone``,
    ``processes``...) describe the run as the trainer saw it.
    """

    training: JsonObject | None = None
    kind: Literal["stsbench.train_run"] = RUN_KIND
    schema_version: int = FIRST_VERSION
    method: str | None = None
    pooler: str | None = None  # the evaluation pooler
    queue_size: int | None = None
    resolution: Resolution | None = None
    backbone: str | None = None
    step: int | None = None  # the kept checkpoint's step
    best_dev_spearman: float | None = None
    processes: int | None = None
    global_batch_size: int | None = None
    max_length: int | None = None
    sentence_transformers: bool | None = None
    traceable_distance: float | RampedDistance | None = None


@dataclass(frozen=True)
class TrainRun:
    """One ``stsbench train`` output folder: its config, its dev curve and how it ended."""

    path: str  # the run folder, relative to the scanned folder
    name: str  # the run folder's name
    config: JsonObject  # TrainConfig as a dict (from stsbench.json, else the log's start record)
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
    traceable_distance: float | RampedDistance | None = None
    # (step, l_align, l_uniform) of each dev evaluation's STS-B dev embeddings (logs before they were kept: none)
    trajectory: tuple[tuple[int, float | None, float | None], ...] = ()

    @property
    def resolved_config(self) -> JsonObject:
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


def read_log(path: Path) -> tuple[list[LogRecord], list[str]]:
    """The records of a ``train_log.jsonl``, each as its type; a line that is not one is a warning, skipped.

    A record of an ``event`` this stsbench does not know (a newer trainer's) is passed over without a word.
    """
    from stsbench.results.validation import Malformed, validated

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
            check_version(path, rec, "training log", default=FIRST_VERSION)
        except StsbenchError as exc:
            bad.append(f"{exc} (line {no}); skipped it")
            continue
        kind = RECORDS.get(rec.get("event"))  # type: ignore[arg-type]
        if kind is None:
            continue
        try:
            records.append(validated(kind, rec))
        except Malformed as exc:
            bad.append(f"{path}:{no}: malformed {rec['event']!r} record ({exc}); skipped it")
    return records, bad


def read_run_meta(path: Path) -> tuple[RunMeta | None, str | None]:
    """A run's ``stsbench.json`` as :class:`RunMeta`, or None and the warning saying why it is not used."""
    from stsbench.results.validation import Malformed, validated

    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"{path}: not a readable JSON file ({exc}); the run's log is used alone"
    if not isinstance(meta, dict) or meta.get("kind", RUN_KIND) != RUN_KIND:
        return None, f"{path}: not a checkpoint description (a JSON object); ignored"
    try:
        check_version(path, meta, "checkpoint description", default=FIRST_VERSION)
    except StsbenchError as exc:
        return None, f"{exc}; the run's log is used alone"
    try:
        return validated(RunMeta, meta), None
    except Malformed as exc:
        return None, f"{path}: malformed checkpoint description ({exc}); the run's log is used alone"


def load_train_run(folder: Path, rel: str) -> tuple[TrainRun | None, list[str]]:
    """Read one run folder (``train_log.jsonl``, and ``stsbench.json`` when there is a checkpoint)."""
    log = folder / TRAIN_LOG
    records, warnings = read_log(log)
    meta: RunMeta | None = None
    if (folder / RUN_META).is_file():
        meta, warning = read_run_meta(folder / RUN_META)
        warnings += [warning] if warning else []
    start = next((r for r in records if isinstance(r, StartRecord)), None)
    end = next((r for r in reversed(records) if isinstance(r, EndRecord)), None)
    config = (meta.training if meta else None) or (start.config if start else None)
    if not isinstance(config, dict) or "method" not in config:
        warnings.append(f"{log}: no training config (no 'start' record, no {RUN_META}); run skipped")
        return None, warnings
    evals = [r for r in records if isinstance(r, EvalRecord)]
    curve = tuple((r.step, r.dev_spearman) for r in evals)
    trajectory = tuple(
        (r.step, r.alignment, r.uniformity)
        for r in evals
        if r.alignment is not None or r.uniformity is not None
    )
    selected = [(r.step, r.dev_spearman) for r in evals if r.best]
    best_step, best_dev = selected[-1] if selected else (None, None)
    if end is not None and end.best_step is not None:
        best_step, best_dev = end.best_step, end.best_dev_spearman
    resolved = meta.resolution.backbone_dropout if meta and meta.resolution else None
    run = TrainRun(
        path=rel,
        name=folder.name,
        config=config,
        method=str(config["method"]),
        curve=curve,
        best_step=best_step,
        best_dev_spearman=best_dev,
        total_steps=start.total_steps if start else None,
        steps_done=end.step if end else None,
        wall_seconds=end.wall_seconds if end else None,
        train_rows=start.train_rows if start else None,
        queue_size=meta.queue_size if meta else None,
        eval_pooler=meta.pooler if meta else None,
        has_checkpoint=meta is not None,
        folder=str(folder),
        backbone_dropout=resolved if resolved is not None else (start.backbone_dropout if start else None),
        traceable_distance=start.traceable_distance if start else None,
        trajectory=trajectory,
    )
    return run, warnings
