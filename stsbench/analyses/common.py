"""What every analysis shares: the typed result envelope, pair-data loading and file naming."""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stsbench.data.sts import SICK_FILES, STS_SUBSETS, STSB_FILES, Pairs, load_pairs
from stsbench.results.schema import ModelInfo, Provenance

ANALYSIS_SCHEMA_VERSION = 1
# ESimCSE COLING Table 7's seven test sets, in its column order
LENGTH_TASKS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]
SHORT_NAMES = {"STSBenchmark": "STS-B", "SICKRelatedness": "SICK-R"}


@dataclass
class AnalysisResult:
    """One (model, analysis) results file: the analysis' own typed result plus who and where it came from.

    Layout on disk: ``<output>/<model_slug>/<pooler>/<analysis>.json``.
    """

    analysis: str  # ``length_bias`` | ``align_uniform`` | ``spectrum`` | ``repetition_probe``
    result: dict[str, Any]  # the analysis dataclass as a dict (see its module for every key)
    model: ModelInfo
    config: dict[str, Any]  # every option that changes the numbers
    provenance: Provenance
    schema_version: int = ANALYSIS_SCHEMA_VERSION
    kind: str = field(default="stsbench.analysis_result")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


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


def slug(text: str) -> str:
    """Make a model name or path safe as a file name."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", text.strip("/\\")).strip("_.")
    return s or "model"


def figure_stem(analysis: str, labels: list[str]) -> str:
    """Name a figure ``<analysis>__<model1>+<model2>``; a hash instead when that gets long."""
    from stsbench.results.store import model_slug

    joined = "+".join(slug(model_slug(x)) for x in labels)
    if len(joined) > 80:
        joined = f"{len(labels)}models-{hashlib.sha256(joined.encode()).hexdigest()[:10]}"
    return f"{analysis}__{joined}"
