"""``stsbench train --seeds 1,2,3``: what each seed's run does, how its process is told, and how it ended.

Every seed is one ordinary run, ``python -m stsbench train --seed s --output OUT/seed-<s>`` in a process of its
own, so a seed that fails (an error, a NaN, a kill) loses nothing of the others. This module plans the seeds
(:func:`plan`): with ``--resume`` a finished seed (its log ends with the ``end`` record) is kept, one with
``DIR/last`` resumes, one that died before its first save starts again, and one never started starts. It
writes the options they share (``OUT/seed-options.yaml``, :func:`write_options`), says in one line why a
process failed (:func:`failure_line`) and records the outcome in ``OUT/seeds.json`` (:func:`write_records`).
The processes are started by the local executor (:mod:`stsbench.reproduce.seed_runs`, a layer above).
"""

from __future__ import annotations

import re
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_text
from stsbench.results.runs import TRAIN_LOG, load_train_run, seed_dir, write_seed_runs
from stsbench.train.checkpoint import is_run_dir
from stsbench.train.config import TrainConfig, finalize, resume_conflicts
from stsbench.train.log import Status, continue_flags, run_status

SHARED_ONLY = ("seed", "output")  # what differs between the seeds' configs
OPTIONS_FILE = "seed-options.yaml"  # OUT/seed-options.yaml: the options every seed trains with (--config)


def parse_seeds(text: str) -> list[int]:
    """``"1,2,3"`` -> ``[1, 2, 3]``; an empty entry, a non-integer, a negative or a repeat is one line."""
    seeds: list[int] = []
    for part in text.split(","):
        item = part.strip()
        if not item:
            raise StsbenchError(f"--seeds {text!r} has an empty entry; give seeds as 1,2,3")
        if not item.lstrip("-").isdigit():
            raise StsbenchError(f"--seeds {text!r}: {item!r} is not an integer; give seeds as 1,2,3")
        if int(item) < 0:
            raise StsbenchError(f"--seeds {text!r}: seed {item} is negative; seeds are integers >= 0")
        if int(item) in seeds:
            raise StsbenchError(f"--seeds {text!r}: seed {int(item)} is given twice; list each seed once")
        seeds.append(int(item))
    return seeds


@dataclass(frozen=True)
class SeedJob:
    """One seed's run: where, what it was found as, and how its process is started."""

    seed: int
    folder: Path
    found: Status
    flags: tuple[str, ...]  # --resume / --overwrite; None of them for a new folder

    @property
    def skip(self) -> bool:
        """A finished seed is not run again."""
        return self.found == "finished"


def plan(
    out: Path, seeds: Sequence[int], cfg: TrainConfig, *, resume: bool, overwrite: bool
) -> list[SeedJob]:
    """What each seed does.

    Refuses (one line) a used folder without --resume/--overwrite, or a finished seed trained with other
    options than asked.
    """
    if is_run_dir(out):
        raise StsbenchError(
            f"--output {out} holds one training run; --seeds trains into {out}/seed-<s>/: pass another --output"
        )
    jobs = []
    for s in seeds:
        folder = seed_dir(out, s)
        found = run_status(folder)
        if found != "new" and not (resume or overwrite):
            raise StsbenchError(
                f"{folder} is not empty ({found}); pass --resume to finish the unfinished seeds, --overwrite "
                "to train every seed again, or another --output"
            )
        if overwrite:
            flags: tuple[str, ...] = ("--overwrite",)
            found = "new" if found == "new" else "started"
        else:  # a saved state resumes; a start without one starts again (a folder of foreign files is refused)
            flags = continue_flags(found)
        if found == "finished":
            _check_same_options(folder, cfg.replace(seed=s, output=str(folder)))
        jobs.append(SeedJob(s, folder, found, flags))
    return jobs


def _check_same_options(folder: Path, cfg: TrainConfig) -> None:
    run, _ = load_train_run(folder, folder.name)
    saved = run.config if run is not None else {}
    changed = resume_conflicts(saved, finalize(cfg, bool(saved.get("supervised"))))
    if changed:
        diffs = ", ".join(f"{k}: {saved.get(k)!r} (asked {cfg.to_dict().get(k)!r})" for k in changed[:3])
        raise StsbenchError(
            f"{folder} finished with other options than asked ({diffs}); use its options, "
            "--overwrite, or another --output"
        )


@dataclass
class Outcome:
    """How a seed's process ended: its exit status and, when it failed, one line saying why."""

    seed: int
    returncode: int
    error: str | None = None
    lines: list[str] = field(default_factory=list)


_RANK = re.compile(r"^\[rank(\d+)\]: ?")  # torch's prefix of a worker's stderr once its process group is up
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(:|$)")  # "RuntimeError: ...", "KeyboardInterrupt"
# torchrun's own traceback's end and its summary's rules
_TORCHRUN = re.compile(r"ChildFailedError|^[=-]{20,}$")
# torchrun's summary of a failed rank: "rank      : 1 (local_rank: 1)", "exitcode  : -9 (pid: 15285)  (SIGKILL)"
_SUMMARY = re.compile(r"^\s+(rank|exitcode)\s+: (-?\d+)")


def failure_line(returncode: int, lines: Sequence[str]) -> str | None:
    """The one line a failed process is reported with; None when it succeeded.

    Its first ``error:`` line, else the signal that killed it, else its exit status and the first exception
    of its first traceback (where there is none, its last line). Under torchrun the lines are its workers'
    (``[rankN]:`` prefixes read, the rank named) and never torchrun's own traceback or summary; where no
    worker said why, the summary's root cause: the rank and its signal or status.
    """
    if returncode == 0:
        return None
    found = _first_error(lines)
    if found is not None and found[0] == "error":
        return found[1]
    if returncode < 0:
        return f"killed by {_signal_name(-returncode)}"
    if found is None:
        found = ("", _root_cause(lines) or "")
    if not found[1]:
        last = next((ln.strip() for ln in reversed(lines) if ln.strip() and not _TORCHRUN.search(ln)), "")
        found = ("", last[:200])
    return f"exited with status {returncode}" + (f" ({found[1]})" if found[1] else "")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _first_error(lines: Sequence[str]) -> tuple[str, str] | None:
    """("error", its text) for the first ``error:`` line, or ("exception", the first traceback's exception).

    The lines of each ``[rankN]:`` prefix (and of none) are read apart, as their writes interleave; a traceback
    ending in torchrun's ``ChildFailedError`` is torchrun's own and skipped.
    """
    open_tracebacks: set[str] = set()  # the prefixes whose traceback has begun and not yet said its exception
    for raw in lines:
        match = _RANK.match(raw)
        prefix, body = (match.group(0), raw[match.end() :]) if match else ("", raw)
        label = f"rank {match.group(1)}: " if match else ""
        if body.startswith("error: "):
            return "error", body[len("error: ") :]
        if body.startswith("Traceback (most recent call last):"):
            open_tracebacks.add(prefix)
        elif prefix in open_tracebacks and _EXCEPTION.match(body):
            open_tracebacks.discard(prefix)
            if "ChildFailedError" not in body:
                return "exception", f"{label}{body.strip()}"[:200]
    return None


def _root_cause(lines: Sequence[str]) -> str | None:
    """The root cause of torchrun's summary (its last failure listed): ``rank 1 killed by SIGKILL``, or None."""
    rank = code = None
    for line in lines:
        match = _SUMMARY.match(line)
        if match and match.group(1) == "rank":
            rank, code = match.group(2), None
        elif match:
            code = int(match.group(2))
    if rank is None or code is None:
        return None
    return f"rank {rank} " + (
        f"killed by {_signal_name(-code)}" if code < 0 else f"exited with status {code}"
    )


def seed_args(job: SeedJob, config_file: Path, *, threads: int | None, quiet: bool) -> tuple[str, ...]:
    """The command line after ``stsbench`` of ``job``'s process: the shared options, its seed, folder and flags.

    ``threads``: the CPU threads it is given (``--threads``), where it shares the cores with other seeds.
    """
    args = ["train", "--config", str(config_file), "--seed", str(job.seed), "--output", str(job.folder)]
    args += [*job.flags, *(["--threads", str(threads)] if threads else []), *(["--quiet"] if quiet else [])]
    return tuple(args)


def write_options(out: Path, cfg: TrainConfig, given: Mapping[str, Any]) -> Path:
    """``OUT/seed-options.yaml``: the options as given (``given``: the YAML file's and the flags), but the seed.

    In OUT, not a temporary folder: nothing is left behind when this process is killed outright. Where the
    run reports to a tracker, the seeds are one group there (``run_group``).
    """
    import yaml

    config_file = out / OPTIONS_FILE
    options = {k: str(v) if isinstance(v, Path) else v for k, v in given.items() if k not in SHARED_ONLY}
    if cfg.report_to != "none" and cfg.run_group is None:  # the seeds as one group in W&B and trackio
        options["run_group"] = f"{out.name}/{cfg.method}"
    atomic_write_text(config_file, yaml.safe_dump(options, sort_keys=True))
    return config_file


def seed_record(job: SeedJob, outcome: Outcome | None) -> dict[str, Any]:
    """One seed's entry of ``seeds.json``, read from its run folder."""
    run, _ = load_train_run(job.folder, job.folder.name) if (job.folder / TRAIN_LOG).is_file() else (None, [])
    finished = run_status(job.folder) == "finished" and (outcome is None or outcome.error is None)
    error = None if finished else (outcome.error if outcome else "not finished")
    return {
        "seed": job.seed,
        "status": "finished" if finished else "failed",
        "error": error,
        "best_step": run.best_step if run else None,
        "best_dev_spearman": run.best_dev_spearman if run else None,
        "steps": run.steps_done if run else None,
    }


def write_records(
    out: Path, cfg: TrainConfig, jobs: Sequence[SeedJob], outcomes: Mapping[int, Outcome]
) -> tuple[Path, list[dict[str, Any]]]:
    """``OUT/seeds.json`` from every seed's folder and how its process ended; its path and the records."""
    records = [seed_record(j, outcomes.get(j.seed)) for j in jobs]
    training = {k: v for k, v in cfg.to_dict().items() if k not in SHARED_ONLY}
    return write_seed_runs(out, records, training), records
