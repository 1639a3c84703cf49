"""STS12-16, STS-B and SICK-R scored as SimCSE's SentEval fork scores them.

STS12-16 (test only): per subset Spearman and Pearson of cosine similarity vs gold; the reported figure is
``all``: Spearman over every pair of every subset concatenated; ``mean`` and ``wmean`` (weighted by subset
size) are kept too. STS-B and SICK-R: cosine Spearman on the test split (test/fasttest) or dev split (dev).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from stsbench.data.sts import STS_SUBSETS, Pairs, load_pairs, pair_files
from stsbench.encoders.base import EmbeddingTable
from stsbench.errors import StsbenchError
from stsbench.metrics import as_reported, cosine_pairs, pearson, spearman
from stsbench.tasks.base import Mode, PairScores, Task, TaskScores


def _correlations(pairs: Pairs, sims: np.ndarray, task: str, part: str) -> dict[str, float]:
    if len(sims) < 3 or np.ptp(sims) == 0:
        raise StsbenchError(
            f"{task} {part}: the model gives {'constant' if len(sims) >= 3 else 'too few'} similarities, so the "
            "correlation is undefined; check the model (all inputs map to the same vector?)"
        )
    if np.ptp(pairs.gold) == 0:
        raise StsbenchError(
            f"{task} {part}: every gold score is {pairs.gold[0]:g}, so the correlation is undefined; check the "
            "task's gold files (`stsbench data verify`)"
        )
    return {"spearman": spearman(sims, pairs.gold), "pearson": pearson(sims, pairs.gold), "n": int(len(sims))}


def pair_similarities(pairs: Pairs, table: EmbeddingTable) -> np.ndarray:
    """Cosine similarity of each pair (SentEval: NaN -> 0)."""
    return cosine_pairs(table[pairs.sent1], table[pairs.sent2])


def pair_scores(pairs: Pairs, sims: np.ndarray) -> PairScores:
    """The per-pair record of a scored task: cosine, gold, subset code and position within the subset."""
    names = pairs.subsets()
    code = {name: i for i, name in enumerate(names)}
    codes = np.array([code[s] for s in pairs.subset], dtype=np.int16)
    index = np.zeros(len(codes), dtype=np.int32)
    for code in range(len(names)):
        where = codes == code
        index[where] = np.arange(int(where.sum()), dtype=np.int32)
    return PairScores(
        np.asarray(sims, dtype=np.float64), np.asarray(pairs.gold, np.float64), codes, names, index
    )


class STSYearTask(Task):
    """STS12..STS16: several subsets, test only."""

    kind = "sts"

    def __init__(self, name: str) -> None:
        self.name = name

    def supports(self, mode: Mode) -> bool:
        """No dev split: skipped in dev mode, as SimCSE's dev table shows only STS-B and SICK-R."""
        return Mode(mode) is not Mode.dev

    def files(self, data_dir: Path, mode: Mode) -> list[Path]:
        """Input and gold file of each subset."""
        return pair_files(data_dir, self.name, "test")

    def load(self, data_dir: Path, mode: Mode) -> Pairs:
        """All subsets' pairs."""
        return load_pairs(data_dir, self.name, "test")

    def texts(self, data: Pairs) -> list[str]:
        """Both sides of every pair."""
        return data.sent1 + data.sent2

    def evaluate(self, data: Pairs, table: EmbeddingTable, mode: Mode, seed: int = 1111) -> TaskScores:
        """Per subset correlations, then ``all``, ``mean`` and ``wmean``."""
        sims = pair_similarities(data, table)
        subset = np.asarray(data.subset)
        per: dict[str, dict[str, float]] = {}
        for name in data.subsets():
            idx = np.flatnonzero(subset == name)
            per[name] = _correlations(data.select(name), sims[idx], self.name, name)
        every = _correlations(data, sims, self.name, "all subsets")
        weights = np.array([per[s]["n"] for s in per], dtype=np.float64)
        agg = {}
        for metric in ("spearman", "pearson"):
            vals = np.array([per[s][metric] for s in per])
            agg[metric] = {
                "all": every[metric],
                "mean": float(vals.mean()),
                "wmean": float(np.average(vals, weights=weights)),
            }
        details = {"subsets": per, "aggregate": agg, "split": "test"}
        reported = as_reported(agg["spearman"]["all"])
        return TaskScores(reported, "spearman_all", details, len(data), pair_scores(data, sims))


class STSSplitTask(Task):
    """STS-B and SICK-R: train/dev/test splits; reported on test (test, fasttest) or dev (dev)."""

    kind = "sts"

    def __init__(self, name: str) -> None:
        self.name = name

    @staticmethod
    def split(mode: Mode) -> str:
        """Which split a mode reports."""
        return "dev" if Mode(mode) is Mode.dev else "test"

    def files(self, data_dir: Path, mode: Mode) -> list[Path]:
        """The one split file read."""
        return pair_files(data_dir, self.name, self.split(mode))

    def load(self, data_dir: Path, mode: Mode) -> Pairs:
        """The split's pairs (SentEval also encodes train and dev here; their scores are never reported)."""
        return load_pairs(data_dir, self.name, self.split(mode))

    def texts(self, data: Pairs) -> list[str]:
        """Both sides of every pair."""
        return data.sent1 + data.sent2

    def evaluate(self, data: Pairs, table: EmbeddingTable, mode: Mode, seed: int = 1111) -> TaskScores:
        """Cosine Spearman (and Pearson) on the split."""
        split = self.split(mode)
        sims = pair_similarities(data, table)
        corr = _correlations(data, sims, self.name, split)
        details = {"split": split, split: corr}
        reported = as_reported(corr["spearman"])
        return TaskScores(reported, f"{split}_spearman", details, len(data), pair_scores(data, sims))


STS_TASKS: list[Task] = [
    *(STSYearTask(n) for n in STS_SUBSETS),
    STSSplitTask("STSBenchmark"),
    STSSplitTask("SICKRelatedness"),
]
