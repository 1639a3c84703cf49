"""The results file schema (one JSON per model x task). Every key is documented here.

Layout on disk: ``<output>/<model_slug>/<pooler>/<mode>/<task>.json``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA_VERSION = 1


@dataclass
class Provenance:
    """Where a number came from."""

    stsbench_version: str
    git_commit: str | None  # commit of the stsbench checkout, None when installed from a wheel
    created_at: str  # ISO 8601 UTC; ignored when comparing runs
    libraries: dict[str, str]  # torch, transformers, sentence-transformers, numpy, scipy, python
    device: str  # e.g. ``cpu`` or ``cuda:0 (NVIDIA H100)``
    data_files: dict[str, str]  # path relative to the data dir -> sha256
    timings: dict[
        str, float
    ]  # seconds: ``encode`` (this run's whole encoding pass), ``evaluate``; ignored when comparing
    command: str | None = None  # the command line that produced it, when run from the CLI


@dataclass
class ModelInfo:
    """The encoder evaluated."""

    name: str  # as given by the user
    path: str  # resolved weights folder
    fingerprint: str  # the embedding-cache key (weights, config, tokenizer, pooler, max length, dtype)
    pooler: str
    max_length: int | None
    dtype: str
    kind: str


@dataclass
class TaskResult:
    """One (model, task) result."""

    task: str  # SentEval's name, e.g. ``STS12``
    task_type: str  # ``sts`` | ``transfer``
    mode: str  # ``test`` | ``dev`` | ``fasttest``
    reported: float  # the paper's figure: x100 rounded to 2 decimals
    metric: str  # what ``reported`` is: ``spearman_all``, ``test_spearman``, ``test_acc``, ``dev_acc``...
    scores: dict[str, Any]  # everything behind it (per subset / split / fold), raw correlations in [-1, 1]
    model: ModelInfo
    config: dict[str, Any]  # seed, batch size and every option that changes the outcome
    provenance: Provenance
    n_pairs: int | None = None
    schema_version: int = SCHEMA_VERSION
    kind: str = field(default="stsbench.task_result")

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TaskResult:
        """Inverse of :meth:`to_dict` (raises ``KeyError``/``TypeError`` on a foreign file)."""
        d = dict(d)
        d["model"] = ModelInfo(**d["model"])
        d["provenance"] = Provenance(**d["provenance"])
        return cls(**d)
