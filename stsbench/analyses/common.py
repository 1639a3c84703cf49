"""What every analysis shares: the seven length-bias tasks, their short names and pair-data loading."""

from __future__ import annotations

from pathlib import Path

from stsbench.data.sts import SICK_FILES, STS_SUBSETS, STSB_FILES, Pairs, load_pairs

# ESimCSE COLING Table 7's seven test sets, in its column order
LENGTH_TASKS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]
SHORT_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}


def short_name(task: str) -> str:
    """Name a task as the papers' columns do (STS-B, SICK-R)."""
    return SHORT_NAMES.get(task, task)


def pair_files(data_dir: Path, task: str, split: str) -> list[Path]:
    """List the files :func:`stsbench.data.sts.load_pairs` reads (for checksums in provenance)."""
    root = Path(data_dir) / "downstream"
    if task in STS_SUBSETS:
        folder = root / "STS" / f"{task}-en-test"
        return [folder / f"STS.{kind}.{s}.txt" for s in STS_SUBSETS[task] for kind in ("input", "gs")]
    if task == "STSBenchmark":
        return [root / "STS" / "STSBenchmark" / STSB_FILES[split]]
    return [root / "SICK" / SICK_FILES[split]]


def load_many(data_dir: Path, tasks: list[str], split: str) -> list[Pairs]:
    """``load_pairs`` for each task (STS12-16 only have test)."""
    return [load_pairs(data_dir, t, split) for t in tasks]
