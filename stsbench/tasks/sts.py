"""STS tasks scored as SimCSE's SentEval fork scores STS12-16, STS-B and SICK-R.

One class runs every STS task from its declaration (:class:`~stsbench.data.sts_spec.STSSpec`). STS12-16
(test only): per subset Spearman and Pearson of cosine similarity vs gold; the reported figure is
``all``: Spearman over every pair of every subset concatenated; ``mean`` and ``wmean`` (weighted by subset
size) are kept too. STS-B and SICK-R: cosine Spearman on the test split (test/fasttest) or dev split (dev).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from stsbench.data.sts import Pairs, load_pairs, pair_files
from stsbench.data.sts_spec import STSSpec
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


class STSTask(Task):
    """An STS task run from its declaration (:class:`~stsbench.data.sts_spec.STSSpec`): files, reader, aggregation."""

    kind = "sts"

    def __init__(self, spec: STSSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.version = spec.version
        self.aliases = spec.aliases

    def __repr__(self) -> str:
        return f"STSTask({self.name!r}, version={self.version})"

    def split(self, mode: Mode) -> str:
        """Which split a mode reports (STS12-16: test)."""
        return self.spec.split_for(Mode(mode).value)

    def supports(self, mode: Mode) -> bool:
        """STS12-16 have no dev split: skipped in dev mode, as SimCSE's dev table shows only STS-B and SICK-R."""
        return self.spec.supports(Mode(mode).value)

    def files(self, data_dir: Path, mode: Mode) -> list[Path]:
        """The files read: each subset's input and gold file, or the one split file."""
        return pair_files(data_dir, self.spec, self.split(mode))

    def load(self, data_dir: Path, mode: Mode) -> Pairs:
        """Every subset's pairs, or the split's (SentEval also encodes train and dev; never reported)."""
        return load_pairs(data_dir, self.spec, self.split(mode))

    def texts(self, data: Pairs) -> list[str]:
        """Both sides of every pair."""
        return data.sent1 + data.sent2

    def evaluate(self, data: Pairs, table: EmbeddingTable, mode: Mode, seed: int = 1111) -> TaskScores:
        """Cosine Spearman (and Pearson): per subset then ``all``/``mean``/``wmean``, or on the split."""
        sims = cosine_pairs(table[data.sent1], table[data.sent2])  # SentEval: NaN -> 0
        if self.spec.aggregation == "all":
            return self._over_subsets(data, sims)
        split = self.split(mode)
        corr = _correlations(data, sims, self.name, split)
        details = {"split": split, split: corr}
        reported = as_reported(corr["spearman"])
        return TaskScores(reported, f"{split}_spearman", details, len(data), pair_scores(data, sims))

    def _over_subsets(self, data: Pairs, sims: np.ndarray) -> TaskScores:
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
