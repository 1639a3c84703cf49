"""What a task is: the texts it needs, and scores computed from their embeddings."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: the task registry imports this module and stays numpy-free
    import numpy as np

    from stsbench.encoders.base import EmbeddingTable


class Mode(str, Enum):
    """SimCSE's evaluation modes."""

    test = "test"  # test splits, full transfer protocol (kfold 10, adam)
    dev = "dev"  # dev splits, fast transfer protocol
    fasttest = "fasttest"  # test splits, fast transfer protocol


@dataclass
class PairScores:
    """An STS task's pairs as scored: what its figure is computed from (the ``<task>.pairs.npz`` sidecar).

    Spearman of ``cosine`` against ``gold`` over every pair is the reported figure (STS12-16: ``all``).
    """

    cosine: np.ndarray  # float64 (n,): each pair's cosine similarity (NaN -> 0)
    gold: np.ndarray  # float64 (n,): the gold score
    subset: np.ndarray  # int16 (n,): the pair's subset, an index into ``subsets``
    subsets: list[str]  # subset names in SentEval's order (STS-B, SICK-R: the split)
    index: np.ndarray  # int32 (n,): the pair's position within its subset as loaded (aligns models' pairs)

    def __len__(self) -> int:
        return len(self.gold)


@dataclass
class TaskScores:
    """A task's outcome: the reported figure and everything behind it (JSON-serialisable but ``pairs``)."""

    reported: float  # the paper's figure: x100, rounded to 2 decimals
    metric: str  # what ``reported`` is, e.g. ``spearman_all`` or ``test_acc``
    details: dict[str, Any] = field(default_factory=dict)
    n_pairs: int | None = None
    pairs: PairScores | None = field(default=None, repr=False)  # STS tasks; written as a sidecar, not JSON


class Task(ABC):
    """One evaluation task (STS12, STSBenchmark, MR, ...)."""

    name: str
    kind: str  # ``sts`` or ``transfer``
    data_subdir: str  # folder under ``<data-dir>/downstream``
    version: int = 1  # recorded in each result; results of another version of the task are not compared
    aliases: tuple[str, ...] = ()  # other names ``--tasks`` accepts; the first is the column reports print

    def path(self, data_dir: Path) -> Path:
        """The task's folder."""
        return Path(data_dir) / "downstream" / self.data_subdir

    def supports(self, mode: Mode) -> bool:
        """Whether the task has a split for ``mode`` (STS12-16 have no dev split)."""
        return True

    @abstractmethod
    def files(self, data_dir: Path, mode: Mode) -> list[Path]:
        """The data files this task reads in ``mode`` (for checksums in provenance)."""

    @abstractmethod
    def load(self, data_dir: Path, mode: Mode) -> Any:
        """Read and validate the data (raises ``StsbenchError`` naming file and line)."""

    @abstractmethod
    def texts(self, data: Any) -> list[str]:
        """Every text the task will look up in the embedding table."""

    @abstractmethod
    def evaluate(self, data: Any, table: EmbeddingTable, mode: Mode, seed: int = 1111) -> TaskScores:
        """Scores from embeddings (no printing, no files)."""
