"""What a run reports while it trains: ``DIR/train_log.jsonl`` and a rich progress bar on stderr.

The log's records, one JSON object a line, each built where :mod:`stsbench.train.loop` writes it (``event`` names the kind):
``start`` (once, before the first step), ``compile`` (``--compile``: the first step's seconds),
``train`` (every ``--log-steps`` steps and the last), ``eval`` (every ``--eval-steps``), ``nonfinite``
(the step that stopped a run) and ``end``.

What a training run's folder holds is read here too, without torch: ``reproduce --dry-run`` and ``--status`` ask it.

The names of a run folder's saved state live here, and :mod:`stsbench.train.checkpoint` (which writes them, and imports torch) takes them from here.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Literal

from stsbench.files import visible_entries
from stsbench.results.runs import TRAIN_LOG
from stsbench.results.schema import SCHEMA_VERSION, TRAIN_LOG_KIND


def cpu_kind() -> str:
    """The CPU model here (``/proc/cpuinfo``'s model name, else the platform's): what a carry's tolerance asks."""
    import platform

    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    found = next(
        (line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("model name")), ""
    )
    return found or platform.processor() or platform.machine()


def finite_or_none(x: float | None) -> float | None:
    """JSON has no NaN: a non-finite number is logged as null."""
    return None if x is None or not math.isfinite(x) else float(x)


class TrainLog:
    """Appends one JSON object a line; on resume, drops the records written after the saved step."""

    def __init__(self, path: Path, keep_until_step: int | None = None) -> None:
        self.path = path
        if keep_until_step is not None and path.is_file():
            kept = [
                ln
                for ln in path.read_text(encoding="utf-8").splitlines()
                if ln.strip() and json.loads(ln).get("step", 0) <= keep_until_step
            ]
            path.write_text("".join(ln + "\n" for ln in kept), encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` (non-finite numbers as null); the ``start`` record says the file's kind and version."""
        if record.get("event") == "start":
            record = {"kind": TRAIN_LOG_KIND, "schema_version": SCHEMA_VERSION, **record}
        clean = {k: finite_or_none(v) if isinstance(v, float) else v for k, v in record.items()}
        size = self.path.stat().st_size if self.path.is_file() else 0
        try:
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(clean, sort_keys=True) + "\n")
        except OSError as exc:  # a full disk: no half line, which would make the log unreadable on resume
            if self.path.is_file():
                os.truncate(self.path, size)
            if exc.filename is None:
                exc.filename = str(self.path)
            raise

    def records(self) -> list[dict[str, Any]]:
        """Everything logged so far."""
        if not self.path.is_file():
            return []
        return [json.loads(ln) for ln in self.path.read_text(encoding="utf-8").splitlines() if ln.strip()]


class TrainProgress:
    """A rich bar with loss, lr and the last dev score; plain lines instead when stderr is not a terminal."""

    def __init__(self, total: int, start: int, enabled: bool = True) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.enabled = enabled
        self.live = enabled and self.console.is_terminal
        self.total = total
        self.fields = {"loss": "-", "lr": "-", "dev": "-"}
        self._progress = None
        if self.live:
            import rich.progress as rp

            self._progress = rp.Progress(
                rp.TextColumn("train"),
                rp.BarColumn(),
                rp.MofNCompleteColumn(),
                rp.TimeElapsedColumn(),
                rp.TimeRemainingColumn(),
                rp.TextColumn("loss {task.fields[loss]}  lr {task.fields[lr]}  dev {task.fields[dev]}"),
                console=self.console,
            )
            self._task = self._progress.add_task("train", total=total, completed=start, **self.fields)

    def __enter__(self) -> TrainProgress:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(
        self,
        step: int,
        loss: float | None = None,
        lr: float | None = None,
        dev: float | None = None,
        line: bool = False,
    ) -> None:
        """Move the bar to ``step``; ``line`` also prints a plain line when there is no live bar."""
        if loss is not None:
            self.fields["loss"] = f"{loss:.4f}"
        if lr is not None:
            self.fields["lr"] = f"{lr:.2e}"
        if dev is not None:
            self.fields["dev"] = f"{dev * 100:.2f}" if math.isfinite(dev) else "nan"
        if self._progress is not None:
            self._progress.update(self._task, completed=step, **self.fields)
        elif self.enabled and line:
            f = self.fields
            self.console.print(
                f"step {step}/{self.total}  loss {f['loss']}  lr {f['lr']}  dev {f['dev']}", highlight=False
            )

    def message(self, text: str) -> None:
        """Print a line above the bar (evaluations, checkpoints)."""
        if self.enabled:
            self.console.print(text, highlight=False)


# -- status --------------------------------------------------------------------------------------------------


LAST = "last"  # DIR/last/: the state a run resumes from
STATE_FILE = "state.pt"

Status = Literal["finished", "resumable", "started", "new"]


def run_status(folder: Path) -> Status:
    """Say what a seed's folder holds.

    ``finished`` (its log ends with the ``end`` record), ``resumable`` (``DIR/last``), ``started`` (files, no
    saved state) or ``new`` (absent or empty).
    """
    if _last_event(folder / TRAIN_LOG) == "end":
        return "finished"
    if (folder / LAST / STATE_FILE).is_file():
        return "resumable"
    if visible_entries(folder):  # a seed's lock file alone is no start
        return "started"
    return "new"


def continue_flags(status: Status) -> tuple[str, ...]:
    """The ``train`` flags that carry on in a folder of ``status``.

    ``--resume`` a saved state, ``--overwrite`` the files of a start that saved none, nothing for a new folder (a
    finished one is the caller's to keep).
    """
    return {"resumable": ("--resume",), "started": ("--overwrite",)}.get(status, ())


def _last_event(log: Path) -> str | None:
    try:
        lines = [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln.strip()]
        record = json.loads(lines[-1]) if lines else None
    except (OSError, ValueError):
        return None
    return record.get("event") if isinstance(record, dict) else None
