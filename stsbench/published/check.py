"""Compare a folder of results with a published row: what ``stsbench check`` runs (pure, no printing)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from stsbench.errors import FAILED, Negative, StsbenchError
from stsbench.metrics import AVG, simcse_average
from stsbench.progress import plural
from stsbench.published.cells import result_modes
from stsbench.published.registry import Entry, Paper, get_entry
from stsbench.results.mteb_layout import (
    MTEB_RESULTS_PREFIX,
    MTEB_TASKS,
    SPLIT,
    MtebModelScores,
    mteb_identity,
    pick_mteb_model,
    read_mteb_results,
)
from stsbench.results.read import TaskRecord as Measured
from stsbench.results.read import load_results, select_run
from stsbench.results.write import shown

EPS = 1e-9  # deltas are differences of 2-decimal figures: keep 0.05 within a 0.05 tolerance


class CheckFailed(Negative):
    """Measured numbers differ from the published ones by more than the tolerance, or some are missing."""


class CheckInconclusive(StsbenchError):
    """Over seeds, no figure is not reproduced but one is inconclusive: more seeds may decide (exit status 3)."""

    exit_code = FAILED


def check_failed(statuses: Iterable[str], message: str) -> StsbenchError:
    """The error a seeds check that did not pass ends with.

    :class:`CheckInconclusive` (exit 3) where every figure not reproduced is inconclusive, else
    :class:`CheckFailed` (exit 1: one not reproduced or missing).
    """
    from stsbench.stats.decide import INCONCLUSIVE, NOT_CHECKED, REPRODUCED

    left = set(statuses) - {REPRODUCED, NOT_CHECKED}
    return CheckInconclusive(message) if left == {INCONCLUSIVE} else CheckFailed(message)


@dataclass(frozen=True)
class TaskComparison:
    """One task: the measured ``reported`` figure beside the published one."""

    task: str
    published: float
    measured: Measured | None
    tolerance: float

    @property
    def value(self) -> float | None:
        """The measured figure, None when no result has this task."""
        return None if self.measured is None else self.measured.result.reported

    @property
    def delta(self) -> float | None:
        """Measured minus published (4 decimals)."""
        return None if self.value is None else round(self.value - self.published, 4)

    @property
    def status(self) -> str:
        """``OK``, ``FAIL`` (off by more than the tolerance), ``MISSING`` or ``MODIFIED`` (on non-canonical data)."""
        if self.delta is None:
            return "MISSING"
        if self.measured.result.provenance.data_modified:  # never a PASS: not the data the paper scored
            return "MODIFIED"
        return "OK" if abs(self.delta) <= self.tolerance + EPS else "FAIL"


@dataclass(frozen=True)
class Comparison:
    """A results folder against one published entry."""

    entry: Entry
    results_dir: Path
    run: tuple[str, str, str] | None  # (model, pooler, mode) of the compared results
    tolerance: float
    rows: tuple[TaskComparison, ...]
    extra_tasks: tuple[str, ...]  # measured by the same run, not in the published row
    skipped_files: tuple[Path, ...] = ()  # analysis results found under the folder, not read as scores
    training_runs: tuple[Path, ...] = ()  # `stsbench train` folders under it (checkpoints, logs), not read
    other_runs: tuple[tuple[str, str, str], ...] = ()  # runs (model, pooler, mode) the filters left out
    unverified: tuple[str, ...] = ()  # tasks whose figure no per-pair sidecar backs (see verify_result)

    @property
    def passed(self) -> bool:
        """Every published task measured and within the tolerance."""
        return all(r.status == "OK" for r in self.rows)

    @property
    def measured_average(self) -> float | None:
        """The mean of the measured figures (2 decimals, like the Avg. columns); None if one is missing."""
        return simcse_average([r.value for r in self.rows])

    @property
    def published_average(self) -> float | None:
        """The published Avg., when the entry has one."""
        return self.entry.values.get(AVG)

    def compared(self) -> str:
        """One line: which run's results were compared, and what under the folder was left out."""
        n = sum(r.measured is not None for r in self.rows) + len(self.extra_tasks)
        # the model as recorded (relative to the results folder when a local path) shown from the working folder
        run = "/".join((shown(self.run[0], self.results_dir) or "", *self.run[1:])) if self.run else "no run"
        parts = [f"compared {n} task results of {run} (model/pooler/mode) under {self.results_dir}"]
        if self.unverified:
            parts.append(f"not verifiable against pairs (no per-pair sidecar): {', '.join(self.unverified)}")
        if self.skipped_files:
            k = len(self.skipped_files)
            parts.append(f"skipped {plural(k, 'analysis file')}")
        if self.training_runs:
            parts.append(f"skipped {plural(len(self.training_runs), 'training-run folder')}")
        if self.other_runs:
            names = ", ".join("/".join(r) for r in self.other_runs[:3])
            names += f" and {len(self.other_runs) - 3} more" if len(self.other_runs) > 3 else ""
            parts.append(f"left out {plural(len(self.other_runs), 'other run')} ({names})")
        return "; ".join(parts)

    def summary(self) -> str:
        """One line: passed, or which tasks failed or are missing."""
        n = len(self.rows)
        if self.passed:
            return f"all {plural(n, 'task')} within {self.tolerance} of {self.entry.key}"
        parts = []
        failed = [r for r in self.rows if r.status == "FAIL"]
        missing = [r.task for r in self.rows if r.status == "MISSING"]
        if failed:
            offs = ", ".join(f"{r.task} {r.delta:+.2f}" for r in failed)
            off = f"differ from {self.entry.key} by more than {self.tolerance}"
            parts.append(f"{len(failed)} of {plural(n, 'task')} {off} ({offs})")
        if missing:
            parts.append(f"no result under {self.results_dir} for {', '.join(missing)}")
        modified = [r.measured.result for r in self.rows if r.status == "MODIFIED"]
        if modified:
            files = ", ".join(sorted({f for r in modified for f in r.provenance.data_modified}))
            tasks = ", ".join(r.task for r in modified)
            parts.append(
                f"{tasks} computed on data that differs from the canonical files ({files}): not comparable"
            )
        return "; ".join(parts)


def comparable_tasks(entry: Entry) -> dict[str, float]:
    """Return the entry's task columns; ``StsbenchError`` when none can be compared with results."""
    if entry.kind != "scores":
        raise StsbenchError(
            f"{entry.key} is an analysis table ({entry.metric}), not task scores; pick an STS or transfer row"
        )
    if not entry.task_values:
        cols = ", ".join(entry.values)
        raise StsbenchError(
            f"{entry.key} has no SentEval task columns ({cols}); pick a row of an STS or transfer table"
        )
    return entry.task_values


def check_split(entry: Entry, mode: str, results_dir: Path) -> None:
    """Refuse results of a ``mode`` the row's figures may not be read from (:func:`.cells.result_modes`).

    Dev numbers against test results, test numbers against dev ones, a transfer test row against fasttest ones.
    """
    tasks = tuple(entry.task_values) or entry.avg_of
    if entry.split is not None and mode not in result_modes(entry.split, tasks):
        raise StsbenchError(
            f"{entry.key} has {entry.split}-split numbers but the results under {results_dir} were run "
            f"in {mode} mode; rerun with --mode {'dev' if entry.split == 'dev' else 'test'} "
            "or pick another row"
        )


def compare(
    entry: Entry,
    by_task: dict[str, Measured],
    results_dir: Path,
    tolerance: float = 0.05,
) -> Comparison:
    """Put each published task of ``entry`` beside the ``reported`` figure of one run (see ``select_run``)."""
    if tolerance < 0:
        raise StsbenchError(f"--tolerance must be >= 0, got {tolerance}")
    published = comparable_tasks(entry)
    runs = {m.run for m in by_task.values()}
    if len(runs) > 1:
        raise ValueError("compare() takes the results of one run; use select_run() first")
    run = runs.pop() if runs else None
    if run is not None:
        check_split(entry, run[2], results_dir)
    rows = tuple(TaskComparison(t, v, by_task.get(t), tolerance) for t, v in published.items())
    extra = tuple(sorted(t for t in by_task if t not in published))
    unverified = tuple(t for t, m in by_task.items() if not m.verified)
    return Comparison(entry, Path(results_dir), run, tolerance, rows, extra, unverified=unverified)


def mteb_entry(
    key: str, models: dict[tuple[str, str], dict[str, float]], by_task: dict[str, Measured]
) -> Entry:
    """The MTEB folder's row for the run in ``by_task``: the model with the run's MTEB name.

    That is ``export-mteb``'s name; for a local model, whose MTEB name only ``--model-name`` gave, the folder's
    only model.
    """
    folder = Path(key[len(MTEB_RESULTS_PREFIX) :]).expanduser()
    name = None
    if by_task:
        try:
            name = mteb_identity(next(iter(by_task.values())).result.model)[0]
        except StsbenchError:  # a local model
            pass
    return mteb_results_entry(key, pick_mteb_model(folder, models, name))


def mteb_results_entry(key: str, scores: MtebModelScores) -> Entry:
    """A published-registry entry for one model's scores in a local MTEB folder, for ``stsbench check``."""
    paper = Paper(
        slug=MTEB_RESULTS_PREFIX.rstrip(":"),
        title="MTEB results folder",
        citation="read through mteb.ResultCache",
        source=str(scores.folder),
    )
    return Entry(
        key=key,
        paper=paper,
        table=f"{scores.name}@{scores.revision}",
        caption="",
        row=scores.name,
        metric="MTEB main score (cosine Spearman, test split) x100",
        split=SPLIT,
        kind="scores",
        decimals=2,
        values=scores.values,
    )


def check_results(
    results_dir: Path,
    key: str,
    tolerance: float = 0.05,
    model: str | None = None,
    pooler: str | None = None,
    mode: str | None = None,
) -> Comparison:
    """Load every result under ``results_dir`` and compare the chosen run with the published entry ``key``.

    ``key`` ``mteb-results:DIR`` compares with a local MTEB results folder instead (see ``mteb_entry``).
    """
    mteb_models = None
    if key.startswith(MTEB_RESULTS_PREFIX):
        mteb_models = read_mteb_results(Path(key[len(MTEB_RESULTS_PREFIX) :]))
        tasks: Iterable[str] = MTEB_TASKS
    else:
        entry = get_entry(key)
        tasks = comparable_tasks(entry)
    skipped: list[Path] = []
    training_runs: list[Path] = []
    measured = load_results(results_dir, skipped, training_runs)
    by_task = select_run(measured, tasks, results_dir, model=model, pooler=pooler, mode=mode)
    if mteb_models is not None:
        entry = mteb_entry(key, mteb_models, by_task)
    comparison = compare(entry, by_task, results_dir, tolerance)
    others = tuple(sorted({m.run for m in measured} - {comparison.run}))
    return replace(
        comparison, skipped_files=tuple(skipped), training_runs=tuple(training_runs), other_runs=others
    )
