"""Experiment tracking: the loop's log records, sent to TensorBoard, Weights & Biases and trackio as well.

The loop logs through one small interface, :class:`Tracker`; each integration is the library itself
(``torch.utils.tensorboard.SummaryWriter``, ``wandb``, ``trackio``), none reads or writes another's files.
Every record that reaches ``train_log.jsonl`` reaches the trackers through :func:`scalars`, so each sink
gets the same series: ``train/loss``, ``train/lr``, ``train/<part>`` (contrastive, mlm, grad_norm, MoCoSE's
ema_decay...), ``eval/dev_spearman``, ``eval/alignment``, ``eval/uniformity``; the resolved config at the start, the best dev score at the end.

Where each writes: TensorBoard ``OUTPUT/tensorboard/`` (``tensorboard --logdir`` over a ``--seeds`` or
``reproduce`` folder shows one run per seed folder); W&B ``OUTPUT/wandb/`` (online or ``WANDB_MODE=offline``,
as wandb is set up), grouped by ``run_group``; trackio its local store (``TRACKIO_DIR``), project
``tracking_project``, the run named ``run_name`` in group ``run_group``.
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError

# each needs the package of its name (TensorBoard: torch's SummaryWriter writes through tensorboard's)
TRACKERS = ("tensorboard", "wandb", "trackio")
# the W&B run id, so that --resume continues the same run; in wandb's folder, not OUTPUT's top level, whose
# .json files are the model's (its fingerprint, the embedding cache's key, reads them)
ID_FILE = Path("wandb") / "stsbench-run-id.txt"
NOT_SCALARS = ("event", "step", "epoch", "time", "kind", "schema_version")


@dataclass(frozen=True)
class Tracker:
    """What the loop sends one tracker (opened with the run's resolved config): scalars by step, a summary at the end.

    ``log(values, step)``: the scalars of optimizer step ``step`` (0: before training); ``close()``: flush and
    finish; ``summary(values)``: what the run ends with (best dev score and its step), None where the tracker
    keeps none (trackio).
    """

    log: Callable[[dict[str, float], int], Any]
    close: Callable[[], Any]
    summary: Callable[[dict[str, Any]], Any] | None = None


def comma_names(value: str | list[str] | tuple[str, ...] | None, check: Callable[[str], str]) -> list[str]:
    """``"a, b"``, a list of such, or None (``none``) -> each name through ``check``, each once, in order."""
    items = [value] if isinstance(value, str) or value is None else list(value)
    parts = (part.strip() for item in items for part in str(item if item is not None else "none").split(","))
    return list(dict.fromkeys(check(part) for part in parts if part))


def parse_report_to(value: str | list[str] | tuple[str, ...] | None) -> str:
    """``"wandb, tensorboard"`` or a list of names -> ``"tensorboard,wandb"``; ``none`` alone is none."""

    def known(name: str) -> str:
        if name.lower() not in ("none", *TRACKERS):
            choices = ", ".join(TRACKERS)
            raise StsbenchError(
                f"--report-to {name.lower()!r}: unknown; choose from none, {choices} (comma-separated)"
            )
        return name.lower()

    names = comma_names(value, known)
    if "none" in names and len(names) > 1:
        raise StsbenchError("--report-to none with a tracker: give the trackers alone, or none")
    # one spelling of each choice: the saved config compares equal
    return ",".join(n for n in TRACKERS if n in names) or "none"


def chosen(report_to: str) -> list[str]:
    """The trackers a ``report_to`` value names."""
    return [n for n in report_to.split(",") if n in TRACKERS]


def check_installed(report_to: str) -> None:
    """One line naming the extra when a chosen tracker's library is missing (before any model loads)."""
    for name in chosen(report_to):
        if importlib.util.find_spec(name) is None:
            raise StsbenchError(
                f"--report-to {name} needs the {name} package: pip install 'stsbench[tracking]'"
            )


def scalars(record: dict[str, Any]) -> dict[str, float]:
    """The numbers of a log record as tracker series; non-finite ones (null in the log) are left out."""
    event = record.get("event")
    if event == "eval":
        return _finite({f"eval/{k}": record.get(k) for k in ("dev_spearman", "alignment", "uniformity")})
    if event != "train":
        return {}
    numbers = {k: v for k, v in record.items() if isinstance(v, int | float) and not isinstance(v, bool)}
    return _finite({f"train/{k}": v for k, v in numbers.items() if k not in NOT_SCALARS})


def _finite(values: dict[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in values.items() if v is not None and math.isfinite(float(v))}


class Trackers:
    """The chosen trackers as one: each log record goes to every one of them."""

    def __init__(self, trackers: list[Tracker]) -> None:
        self.trackers = trackers

    def record(self, record: dict[str, Any]) -> None:
        """Send a ``train_log.jsonl`` record."""
        event = record.get("event")
        for tracker in self.trackers:
            if event == "end" and tracker.summary is not None:
                tracker.summary(
                    {k: record[k] for k in ("best_dev_spearman", "best_step", "step", "wall_seconds")}
                )
            values = scalars(record)
            if values:
                tracker.log(values, int(record["step"]))

    def close(self) -> None:
        """Finish every tracker (all of them, even when one fails)."""
        errors = []
        for tracker in self.trackers:
            try:
                tracker.close()
            except Exception as exc:  # noqa: BLE001 - the others still finish; the first error is raised
                errors.append(exc)
        if errors:
            raise errors[0]


def open_trackers(cfg: Any, out: Path, resume_step: int | None) -> Trackers | None:
    """Start the trackers of ``cfg.report_to`` for the run in ``out``, each given the resolved config ``cfg``.

    The run is ``cfg.run_name``, default the output folder's name under its group ``cfg.run_group``, in the
    project ``cfg.tracking_project``; ``resume_step``: the saved step a resumed run goes on from.
    """
    names = chosen(cfg.report_to)
    if not names:
        return None
    check_installed(cfg.report_to)
    group = cfg.run_group
    config = {**cfg.to_dict(), "resolution": cfg.resolution.to_dict()}
    name = cfg.run_name or (f"{group}/{out.name}" if group else out.name)
    # the run's project, group, name and config (options and resolution), as wandb.init and trackio.init
    # both take them
    common: dict[str, Any] = {"project": cfg.tracking_project, "group": group, "name": name, "config": config}
    opened: list[Tracker] = []
    try:
        for tracker in names:
            if tracker == "tensorboard":
                opened.append(_tensorboard(out / "tensorboard", config, resume_step))
            elif tracker == "wandb":
                import wandb

                # reinit: a run of its own, beside any the caller has open
                run_id = _wandb_id(out, resume_step)
                run = wandb.init(**common, id=run_id, resume="allow", dir=str(out), reinit="create_new")
                opened.append(Tracker(run.log, run.finish, run.summary.update))
            else:
                import trackio

                mode = "allow" if resume_step is not None else "never"  # a new run (--overwrite): a new one
                run = trackio.init(**common, resume=mode, embed=False, auto_log_gpu=False, auto_log_cpu=False)
                # no summary: trackio keeps none; the best score is the eval series' at best_step (its config
                # is stored once, at the first log, and a row of its own would be a series the log lacks)
                opened.append(Tracker(run.log, run.finish))
    except BaseException:
        Trackers(opened).close()
        raise
    return Trackers(opened)


def _wandb_id(out: Path, resume_step: int | None) -> str:
    """A new run's W&B id, or the id a resumed run kept in ``OUTPUT/wandb/stsbench-run-id.txt``."""
    path = out / ID_FILE
    if resume_step is not None and path.is_file():
        return path.read_text(encoding="utf-8").strip()
    import secrets

    run_id = secrets.token_hex(4)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(run_id + "\n", encoding="utf-8")
    return run_id


def _tensorboard(logdir: Path, config: dict[str, Any], resume_step: int | None) -> Tracker:
    """``torch.utils.tensorboard.SummaryWriter`` into ``OUTPUT/tensorboard``; a resume purges the steps after its save."""
    from torch.utils.tensorboard import SummaryWriter

    # purge_step: events at or after it (written after the saved state, before a kill) are dropped
    writer = SummaryWriter(str(logdir), purge_step=None if resume_step is None else resume_step + 1)
    text = json.dumps(config, indent=2, sort_keys=True)
    writer.add_text("config", "```\n" + text + "\n```", resume_step or 0)

    def log(values: dict[str, float], step: int) -> None:
        for key, value in values.items():
            writer.add_scalar(key, value, step)

    def summary(values: dict[str, Any]) -> None:
        writer.add_text("summary", json.dumps(values, sort_keys=True), int(values.get("step") or 0))

    return Tracker(log, writer.close, summary)
