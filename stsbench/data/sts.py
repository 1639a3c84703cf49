"""Readers for STS12-16, STS-B and SICK-R, exactly as SimCSE's SentEval reads them.

Sentences are SentEval's tokens joined back with single spaces (``" ".join(s.split())``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from stsbench.data.textfile import read_lines
from stsbench.errors import StsbenchError

STS_SUBSETS: dict[str, list[str]] = {
    "STS12": ["MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"],
    # STS13 has no SMT subset in SentEval (licence), as in the papers
    "STS13": ["FNWN", "headlines", "OnWN"],
    "STS14": ["deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"],
    "STS15": ["answers-forums", "answers-students", "belief", "headlines", "images"],
    "STS16": ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"],
}
STSB_FILES = {"train": "sts-train.csv", "dev": "sts-dev.csv", "test": "sts-test.csv"}
SICK_FILES = {"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"}
STS_TASK_NAMES = [*STS_SUBSETS, "STSBenchmark", "SICKRelatedness"]


def _check_task(task: str, split: str) -> None:
    if task not in STS_TASK_NAMES:
        raise StsbenchError(f"unknown STS task {task!r}; choose from {', '.join(STS_TASK_NAMES)}")
    if task in STS_SUBSETS and split != "test":
        raise StsbenchError(f"{task} has only a test split (asked for {split!r})")


def _year_folder(data_dir: Path, task: str) -> Path:
    return Path(data_dir) / "downstream" / "STS" / f"{task}-en-test"


def subset_files(folder: Path, subset: str) -> tuple[Path, Path]:
    """An STS12-16 subset's sentence-pair file and gold file, as SentEval names them."""
    return folder / f"STS.input.{subset}.txt", folder / f"STS.gs.{subset}.txt"


def pair_files(data_dir: Path, task: str, split: str = "test") -> list[Path]:
    """Every file :func:`load_pairs` reads for ``task``'s ``split``: the one home of SentEval's STS layout.

    ``<data-dir>/downstream/STS/STS12-en-test/STS.{input,gs}.<subset>.txt`` (each subset, input then gold),
    ``downstream/STS/STSBenchmark/sts-<split>.csv``, ``downstream/SICK/SICK_{train,trial,test_annotated}.txt``.
    """
    _check_task(task, split)
    if task in STS_SUBSETS:
        return [f for s in STS_SUBSETS[task] for f in subset_files(_year_folder(data_dir, task), s)]
    root = Path(data_dir) / "downstream"
    if task == "STSBenchmark":
        return [root / "STS" / "STSBenchmark" / STSB_FILES[split]]
    return [root / "SICK" / SICK_FILES[split]]


@dataclass
class Pairs:
    """Sentence pairs with gold scores; ``subset`` names each pair's subset (or split)."""

    name: str
    sent1: list[str]
    sent2: list[str]
    gold: np.ndarray  # float64, on the file's own scale (0-5 for STS, 1-5 for SICK)
    subset: list[str] = field(default_factory=list)
    scale: tuple[float, float] = (0.0, 5.0)

    def __len__(self) -> int:
        return len(self.gold)

    def subsets(self) -> list[str]:
        """Subset names in file order."""
        return list(dict.fromkeys(self.subset))

    def select(self, subset: str) -> Pairs:
        """The pairs of one subset."""
        idx = [i for i, s in enumerate(self.subset) if s == subset]
        return Pairs(
            f"{self.name}/{subset}",
            [self.sent1[i] for i in idx],
            [self.sent2[i] for i in idx],
            self.gold[idx],
            [subset] * len(idx),
            self.scale,
        )


def _tokens(text: str) -> str:
    return " ".join(text.split())


def _score(value: str, path: Path, line: int, lo: float, hi: float) -> float:
    try:
        score = float(value)
    except ValueError:
        score = math.nan
    if not math.isfinite(score) or not lo <= score <= hi:
        raise StsbenchError(
            f"{path}:{line}: gold score {value.strip()!r} is not a number in [{lo:g}, {hi:g}]; "
            "restore the original file (`stsbench data verify`)"
        )
    return score


def read_sts_subset(folder: Path, subset: str) -> tuple[list[str], list[str], list[float]]:
    """One STS12-16 subset: pairs whose gold line is empty are dropped (SentEval)."""
    inp, gs = subset_files(folder, subset)
    lines = read_lines(inp, splitlines=True)
    golds = read_lines(gs, splitlines=True)
    if len(golds) != len(lines):
        raise StsbenchError(
            f"{gs}: {len(golds)} gold lines for {len(lines)} sentence pairs in {inp.name}; "
            "the file is truncated or extended, restore it (`stsbench data verify`)"
        )
    s1, s2, y = [], [], []
    for no, (line, gold) in enumerate(zip(lines, golds, strict=True), start=1):
        parts = line.split("\t")
        if len(parts) != 2:
            raise StsbenchError(
                f"{inp}:{no}: expected two tab-separated sentences, found {len(parts)} field(s); "
                "restore the original file (`stsbench data verify`)"
            )
        if gold == "":
            continue
        y.append(_score(gold, gs, no, 0.0, 5.0))
        s1.append(_tokens(parts[0]))
        s2.append(_tokens(parts[1]))
    return s1, s2, y


def read_sts_task(data_dir: Path, task: str) -> Pairs:
    """STS12..STS16: every subset's pairs concatenated, subset names kept."""
    _check_task(task, "test")
    folder = _year_folder(data_dir, task)
    s1: list[str] = []
    s2: list[str] = []
    y: list[float] = []
    sub: list[str] = []
    for subset in STS_SUBSETS[task]:
        a, b, g = read_sts_subset(folder, subset)
        s1 += a
        s2 += b
        y += g
        sub += [subset] * len(g)
    return Pairs(task, s1, s2, np.asarray(y, dtype=np.float64), sub, (0.0, 5.0))


def _read_columns(
    path: Path, cols: tuple[int, int, int], skip_header: bool, lo: float, hi: float, name: str, split: str
) -> Pairs:
    s1, s2, y = [], [], []
    lines = read_lines(path)
    start = 1 if skip_header else 0
    if len(lines) <= start:
        raise StsbenchError(f"{path}: no sentence pairs; restore the original file (`stsbench data verify`)")
    gold_col, a_col, b_col = cols
    need = max(cols) + 1
    for no, line in enumerate(lines[start:], start=start + 1):
        fields = line.strip().split("\t")
        if len(fields) < need:
            raise StsbenchError(
                f"{path}:{no}: expected at least {need} tab-separated columns, found {len(fields)}; "
                "restore the original file (`stsbench data verify`)"
            )
        y.append(_score(fields[gold_col], path, no, lo, hi))
        s1.append(_tokens(fields[a_col]))
        s2.append(_tokens(fields[b_col]))
    return Pairs(name, s1, s2, np.asarray(y, dtype=np.float64), [split] * len(y), (lo, hi))


def read_stsb(data_dir: Path, split: str) -> Pairs:
    """STS Benchmark split (``train``/``dev``/``test``): gold column 4, sentences columns 5 and 6."""
    (path,) = pair_files(data_dir, "STSBenchmark", split)
    return _read_columns(path, (4, 5, 6), False, 0.0, 5.0, "STSBenchmark", split)


def read_sick(data_dir: Path, split: str) -> Pairs:
    """SICK relatedness split (``train``/``dev`` = trial/``test``): header, sentences 1 and 2, gold 3 (1-5)."""
    (path,) = pair_files(data_dir, "SICKRelatedness", split)
    return _read_columns(path, (3, 1, 2), True, 1.0, 5.0, "SICKRelatedness", split)


def load_pairs(data_dir: Path, task: str, split: str = "test") -> Pairs:
    """Any STS task's pairs: STS12..16 (test only), ``STSBenchmark`` or ``SICKRelatedness`` (any split)."""
    _check_task(task, split)
    if task in STS_SUBSETS:
        return read_sts_task(data_dir, task)
    if task == "STSBenchmark":
        return read_stsb(data_dir, split)
    return read_sick(data_dir, split)
