"""The seven SentEval transfer tasks SimCSE reports: MR, CR, SUBJ, MPQA, SST2, TREC, MRPC.

The task kinds, then each task as a module attribute, the lazy target :mod:`stsbench.tasks.registry` names
(``stsbench.tasks.transfer.tasks:MR``): importing this module imports torch, which a task lookup never does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from stsbench.data.transfer import Labelled, LabelledPairs, read_binary, read_mrpc, read_sst2, read_trec
from stsbench.encoders.base import EmbeddingTable
from stsbench.tasks.base import Mode, Task, TaskScores
from stsbench.tasks.transfer import validation
from stsbench.tasks.transfer.classifier import ProbeConfig

# SimCSE's evaluation.py: classifier settings per mode
_FAST = {"optim": "rmsprop", "batch_size": 128, "tenacity": 3, "epoch_size": 2, "kfold": 5}
_FULL = {"optim": "adam", "batch_size": 64, "tenacity": 5, "epoch_size": 4, "kfold": 10}
# the classifier settings each result records (with SentEval's nhid and the L2 grid)
_RECORDED = ("optim", "batch_size", "tenacity", "epoch_size", "kfold", "max_epoch", "seed")


def probe_config(mode: Mode, seed: int = 1111) -> ProbeConfig:
    """The classifier settings SimCSE's ``evaluation.py`` passes to SentEval in ``mode``."""
    return ProbeConfig(**(_FULL if Mode(mode) is Mode.test else _FAST), seed=seed)


def senteval_order(labels: list[int], *keys: list[str]) -> np.ndarray:
    """Row order after SentEval's "sort to reduce padding": by token counts of ``keys``, then label (stable)."""
    return np.array(
        sorted(range(len(labels)), key=lambda i: (*(len(k[i].split()) for k in keys), labels[i])),
        dtype=np.int64,
    )


def _in_senteval_order(data: Labelled) -> Labelled:
    order = senteval_order(data.labels, data.texts)
    return Labelled([data.texts[i] for i in order], [data.labels[i] for i in order])


def _scores(
    res: validation.ProtocolResult,
    mode: Mode,
    cfg: ProbeConfig,
    n_dev: int,
    n_test: int,
    extra: dict[str, Any] | None = None,
) -> TaskScores:
    dev = Mode(mode) is Mode.dev
    details = {
        "dev_acc": res.dev_acc,
        "test_acc": res.test_acc,
        "n_dev": n_dev,
        "n_test": n_test,
        "classifier": {
            **{name: getattr(cfg, name) for name in _RECORDED},
            "nhid": 0,
            "l2_grid": list(cfg.l2_grid),
        },
        **res.details,
        **(extra or {}),
    }
    return TaskScores(
        reported=res.dev_acc if dev else res.test_acc,
        metric="dev_acc" if dev else "test_acc",
        details=details,
    )


class TransferTask(Task):
    """A SentEval transfer task: a frozen-embedding logistic-regression probe."""

    kind = "transfer"
    device: torch.device | None = None  # None: CUDA when available, else CPU


@dataclass
class BinaryTask(TransferTask):
    """MR, CR, SUBJ, MPQA: two class files, nested k-fold (``InnerKFoldClassifier``)."""

    name: str
    data_subdir: str
    pos_file: str  # label 1 (SUBJ: the objective sentences, as SentEval reads them)
    neg_file: str  # label 0

    def files(self, data_dir: Path, mode: Mode) -> list[Path]:
        return [self.path(data_dir) / self.pos_file, self.path(data_dir) / self.neg_file]

    def load(self, data_dir: Path, mode: Mode) -> Labelled:
        return _in_senteval_order(read_binary(*self.files(data_dir, mode)))

    def texts(self, data: Labelled) -> list[str]:
        return data.texts

    def evaluate(self, data: Labelled, table: EmbeddingTable, mode: Mode, seed: int = 1111) -> TaskScores:
        cfg = probe_config(mode, seed)
        res = validation.inner_kfold(table[data.texts], np.array(data.labels), 2, cfg, self.device)
        return _scores(res, mode, cfg, len(data), len(data))


@dataclass
class SST2Task(TransferTask):
    """SST2: train/dev/test files (``SplitClassifier``)."""

    name: str = "SST2"
    data_subdir: str = "SST/binary"
    splits = ("train", "dev", "test")

    def files(self, data_dir: Path, mode: Mode) -> list[Path]:
        return [self.path(data_dir) / f"sentiment-{s}" for s in self.splits]

    def load(self, data_dir: Path, mode: Mode) -> dict[str, Labelled]:
        return {
            split: _in_senteval_order(read_sst2(path))
            for split, path in zip(self.splits, self.files(data_dir, mode), strict=True)
        }

    def texts(self, data: dict[str, Labelled]) -> list[str]:
        return [t for s in self.splits for t in data[s].texts]

    def evaluate(
        self, data: dict[str, Labelled], table: EmbeddingTable, mode: Mode, seed: int = 1111
    ) -> TaskScores:
        cfg = probe_config(mode, seed)
        keys = {"train": "train", "valid": "dev", "test": "test"}
        x = {k: table[data[s].texts] for k, s in keys.items()}
        y = {k: np.array(data[s].labels) for k, s in keys.items()}
        res = validation.split(x, y, 2, cfg, self.device)
        return _scores(res, mode, cfg, len(data["dev"]), len(data["test"]))


@dataclass
class TRECTask(TransferTask):
    """TREC: six coarse question classes, k-fold on train then test (``KFoldClassifier``)."""

    name: str = "TREC"
    data_subdir: str = "TREC"

    def files(self, data_dir: Path, mode: Mode) -> list[Path]:
        return [self.path(data_dir) / "train_5500.label", self.path(data_dir) / "TREC_10.label"]

    def load(self, data_dir: Path, mode: Mode) -> dict[str, Labelled]:
        return {
            split: _in_senteval_order(read_trec(path))
            for split, path in zip(("train", "test"), self.files(data_dir, mode), strict=True)
        }

    def texts(self, data: dict[str, Labelled]) -> list[str]:
        return data["train"].texts + data["test"].texts

    def evaluate(
        self, data: dict[str, Labelled], table: EmbeddingTable, mode: Mode, seed: int = 1111
    ) -> TaskScores:
        cfg = probe_config(mode, seed)
        tr, te = data["train"], data["test"]
        res = validation.kfold(
            table[tr.texts], np.array(tr.labels), table[te.texts], np.array(te.labels), 6, cfg, self.device
        )
        return _scores(res, mode, cfg, len(tr), len(te))


def f1_binary(y: np.ndarray, yhat: np.ndarray) -> float:
    """F1 of class 1 (``sklearn.metrics.f1_score`` default), 0 when there is no positive at all."""
    y, yhat = np.asarray(y).ravel(), np.asarray(yhat).ravel()
    tp = int(((y == 1) & (yhat == 1)).sum())
    denom = int((y == 1).sum() + (yhat == 1).sum())
    return 2 * tp / denom if denom else 0.0


@dataclass
class MRPCTask(TransferTask):
    """MRPC: pairs as ``[|u - v|, u * v]``, k-fold on train then test; accuracy and F1."""

    name: str = "MRPC"
    data_subdir: str = "MRPC"

    def files(self, data_dir: Path, mode: Mode) -> list[Path]:
        return [self.path(data_dir) / f"msr_paraphrase_{s}.txt" for s in ("train", "test")]

    def load(self, data_dir: Path, mode: Mode) -> dict[str, LabelledPairs]:
        out = {}
        for split, path in zip(("train", "test"), self.files(data_dir, mode), strict=True):
            d = read_mrpc(path)
            order = senteval_order(d.labels, d.a, d.b)
            out[split] = LabelledPairs(
                [d.a[i] for i in order], [d.b[i] for i in order], [d.labels[i] for i in order]
            )
        return out

    def texts(self, data: dict[str, LabelledPairs]) -> list[str]:
        return [t for s in ("train", "test") for t in data[s].a + data[s].b]

    def evaluate(
        self, data: dict[str, LabelledPairs], table: EmbeddingTable, mode: Mode, seed: int = 1111
    ) -> TaskScores:
        cfg = probe_config(mode, seed)

        def features(p: LabelledPairs) -> np.ndarray:
            u, v = table[p.a], table[p.b]
            return np.c_[np.abs(u - v), u * v]

        tr, te = data["train"], data["test"]
        res = validation.kfold(
            features(tr), np.array(tr.labels), features(te), np.array(te.labels), 2, cfg, self.device
        )
        f1 = round(100 * f1_binary(np.array(te.labels), res.yhat), 2)
        scores = _scores(res, mode, cfg, len(tr), len(te), {"test_f1": f1})
        scores.n_pairs = len(te)
        return scores


MR = BinaryTask("MR", "MR", "rt-polarity.pos", "rt-polarity.neg")
CR = BinaryTask("CR", "CR", "custrev.pos", "custrev.neg")
SUBJ = BinaryTask("SUBJ", "SUBJ", "subj.objective", "subj.subjective")
MPQA = BinaryTask("MPQA", "MPQA", "mpqa.pos", "mpqa.neg")
SST2 = SST2Task()
TREC = TRECTask()
MRPC = MRPCTask()
# SimCSE's order: MR, CR, SUBJ, MPQA, SST2, TREC, MRPC
TRANSFER_TASKS: list[Task] = [MR, CR, SUBJ, MPQA, SST2, TREC, MRPC]
