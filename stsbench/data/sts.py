"""Readers of STS tasks' files, exactly as SimCSE's SentEval reads STS12-16, STS-B and SICK-R.

What to read is a task's :class:`~stsbench.data.sts_spec.STSSpec` (the built-ins can be named).

Sentences are SentEval's tokens joined back with single spaces (``" ".join(s.split())``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from stsbench.data.integrity import read_lines, senteval_text
from stsbench.data.sts_spec import BUILTIN_STS, STSSpec
from stsbench.errors import StsbenchError

# the built-in tasks' layouts by name (their specs: :mod:`stsbench.data.sts_spec`)
BUILTIN: dict[str, STSSpec] = {spec.name: spec for spec in BUILTIN_STS}
STS_SUBSETS: dict[str, list[str]] = {s.name: list(s.subsets) for s in BUILTIN_STS if s.subsets}


def spec_of(task: str | STSSpec) -> STSSpec:
    """``task`` itself, or the built-in STS task it names (a plugin's task is passed as its spec)."""
    if isinstance(task, STSSpec):
        return task
    if task not in BUILTIN:
        raise StsbenchError(f"unknown STS task {task!r}; choose from {', '.join(BUILTIN)}")
    return BUILTIN[task]


def _check_split(spec: STSSpec, split: str) -> None:
    if spec.subsets and split != "test":
        raise StsbenchError(f"{spec.name} has only a test split (asked for {split!r})")
    if spec.splits and split not in spec.splits:
        raise StsbenchError(f"{spec.name} has no {split!r} split; it has {', '.join(spec.splits)}")


def pair_files(data_dir: Path, task: str | STSSpec, split: str = "test") -> list[Path]:
    """Every file :func:`load_pairs` reads for ``task``'s ``split``: the one home of the STS layouts.

    Built-ins: ``<data-dir>/downstream/STS/STS12-en-test/STS.{input,gs}.<subset>.txt`` (each subset, input then
    gold), ``downstream/STS/STSBenchmark/sts-<split>.csv``, ``downstream/SICK/SICK_{train,trial,test_annotated}.txt``.
    """
    spec = spec_of(task)
    _check_split(spec, split)
    root = spec.root(data_dir)
    if spec.subsets:
        return [root / f"STS.{kind}.{s}.txt" for s in spec.subsets for kind in ("input", "gs")]
    return [root / spec.splits[split]]


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


def read_subsets(spec: STSSpec, files: list[Path]) -> Pairs:
    """The STS12-16 layout (``files``: :func:`pair_files`'): every subset's pairs concatenated, names kept.

    Pairs whose gold line is empty are dropped (SentEval).
    """
    s1, s2, y, sub = [], [], [], []
    for subset, inp, gs in zip(spec.subsets, files[::2], files[1::2], strict=True):
        lines = read_lines(inp, splitlines=True)
        golds = read_lines(gs, splitlines=True)
        if len(golds) != len(lines):
            raise StsbenchError(
                f"{gs}: {len(golds)} gold lines for {len(lines)} sentence pairs in {inp.name}; "
                "the file is truncated or extended, restore it (`stsbench data verify`)"
            )
        for no, (line, gold) in enumerate(zip(lines, golds, strict=True), start=1):
            parts = line.split("\t")
            if len(parts) != 2:
                raise StsbenchError(
                    f"{inp}:{no}: expected two tab-separated sentences, found {len(parts)} field(s); "
                    "restore the original file (`stsbench data verify`)"
                )
            if gold == "":
                continue
            y.append(_score(gold, gs, no, *spec.scale))
            s1.append(senteval_text(parts[0]))
            s2.append(senteval_text(parts[1]))
            sub.append(subset)
    return Pairs(spec.name, s1, s2, np.asarray(y, dtype=np.float64), sub, spec.scale)


def load_pairs(data_dir: Path, task: str | STSSpec, split: str = "test") -> Pairs:
    """An STS task's pairs (a built-in's name or any :class:`~stsbench.data.sts_spec.STSSpec`), as SentEval reads them.

    STS12..16 (test only): every subset; STS-B: gold column 4, sentences 5 and 6; SICK-R: a header, sentences
    1 and 2, gold 3 (1-5).
    """
    spec = spec_of(task)
    files = pair_files(data_dir, spec, split)
    if spec.subsets:
        return read_subsets(spec, files)
    (path,) = files
    s1, s2, y = [], [], []
    lines = read_lines(path)
    start = 1 if spec.header else 0
    if len(lines) <= start:
        raise StsbenchError(f"{path}: no sentence pairs; restore the original file (`stsbench data verify`)")
    gold_col, a_col, b_col = spec.columns
    need = max(spec.columns) + 1
    for no, line in enumerate(lines[start:], start=start + 1):
        fields = line.strip().split("\t")
        if len(fields) < need:
            raise StsbenchError(
                f"{path}:{no}: expected at least {need} tab-separated columns, found {len(fields)}; "
                "restore the original file (`stsbench data verify`)"
            )
        y.append(_score(fields[gold_col], path, no, *spec.scale))
        s1.append(senteval_text(fields[a_col]))
        s2.append(senteval_text(fields[b_col]))
    return Pairs(spec.name, s1, s2, np.asarray(y, dtype=np.float64), [split] * len(y), spec.scale)
