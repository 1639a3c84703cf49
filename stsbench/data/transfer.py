"""Readers of SentEval's transfer-task files (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC).

Each reader returns the text exactly as SimCSE's SentEval hands it to the batcher: SentEval splits every sentence
on whitespace (``str.split()``) and SimCSE's batcher joins the tokens back with single spaces. Encodings and line
handling follow SentEval's loaders (``binary.py``, ``sst.py``, ``trec.py``, ``mrpc.py``) so that counts and order
match it row for row; malformed input raises :class:`StsbenchError` naming the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from stsbench.data.integrity import read_lines, senteval_text
from stsbench.errors import StsbenchError, where

TREC_CLASSES: tuple[str, ...] = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")  # SentEval's tgt2idx order


@dataclass(frozen=True)
class Labelled:
    """Sentences with integer labels, in file order."""

    texts: list[str]
    labels: list[int]

    def __len__(self) -> int:
        return len(self.texts)


@dataclass(frozen=True)
class LabelledPairs:
    """Sentence pairs with integer labels, in file order."""

    a: list[str]
    b: list[str]
    labels: list[int]

    def __len__(self) -> int:
        return len(self.labels)


def read_class_file(path: Path) -> list[str]:
    """One sentence a line (MR, CR, SUBJ, MPQA), read as SentEval does: latin-1, ``str.splitlines``.

    Blank lines are kept as empty sentences (CR and MPQA have a few; SentEval embeds them too).
    """
    sentences = [senteval_text(line) for line in read_lines(path, "latin-1", splitlines=True)]
    if not any(sentences):
        raise StsbenchError(
            f"{path}: no sentences; expected one sentence a line, restore it from senteval.tar"
        )
    return sentences


def read_binary(pos_path: Path, neg_path: Path) -> Labelled:
    """Two class files: SentEval's ``pos + neg`` with labels 1 then 0."""
    pos, neg = read_class_file(pos_path), read_class_file(neg_path)
    return Labelled(texts=pos + neg, labels=[1] * len(pos) + [0] * len(neg))


def read_trec(path: Path) -> Labelled:
    """TREC ``COARSE:fine question`` lines (latin-1); the label is the coarse class, the text the question."""
    texts: list[str] = []
    labels: list[int] = []
    for i, line in enumerate(read_lines(path, "latin-1"), start=1):
        target, sep, rest = line.strip().partition(":")
        if not sep:
            raise StsbenchError(f"{where(path, i)}: expected 'COARSE:fine question', found no ':'")
        if target not in TREC_CLASSES:
            raise StsbenchError(
                f"{where(path, i)}: unknown TREC label '{target}'; expected one of {', '.join(TREC_CLASSES)}"
            )
        fine, space, question = rest.partition(" ")
        if not space:
            raise StsbenchError(f"{where(path, i)}: expected 'COARSE:fine question', found no question")
        texts.append(senteval_text(question))
        labels.append(TREC_CLASSES.index(target))
    if not texts:
        raise StsbenchError(f"{path}: no questions; restore the file from senteval.tar")
    return Labelled(texts=texts, labels=labels)


def _binary_label(raw: str, path: Path, line: int) -> int:
    if raw not in ("0", "1"):
        raise StsbenchError(
            f"{where(path, line)}: label '{raw}' is not 0 or 1; restore the file from senteval.tar"
        )
    return int(raw)


def read_sst2(path: Path) -> Labelled:
    """SST binary ``sentence<TAB>label`` lines (utf-8)."""
    texts: list[str] = []
    labels: list[int] = []
    for i, line in enumerate(read_lines(path, "utf-8"), start=1):
        cols = line.strip().split("\t")
        if len(cols) < 2:
            raise StsbenchError(f"{where(path, i)}: expected 'sentence<TAB>label', found {len(cols)} column")
        labels.append(_binary_label(cols[1], path, i))
        texts.append(senteval_text(cols[0]))
    if not texts:
        raise StsbenchError(f"{path}: no sentences; restore the file from senteval.tar")
    return Labelled(texts=texts, labels=labels)


def read_mrpc(path: Path) -> LabelledPairs:
    """MRPC: a header line, then ``Quality, #1 ID, #2 ID, #1 String, #2 String`` tab-separated (utf-8)."""
    a: list[str] = []
    b: list[str] = []
    labels: list[int] = []
    for i, line in enumerate(read_lines(path, "utf-8"), start=1):
        if i == 1:  # SentEval drops the first line unread
            continue
        cols = line.strip().split("\t")
        if len(cols) < 5:
            raise StsbenchError(
                f"{where(path, i)}: expected 5 tab-separated columns (Quality, #1 ID, #2 ID, #1 String, "
                f"#2 String), found {len(cols)}"
            )
        labels.append(_binary_label(cols[0], path, i))
        a.append(senteval_text(cols[3]))
        b.append(senteval_text(cols[4]))
    if not labels:
        raise StsbenchError(f"{path}: no sentence pairs after the header; restore the file from senteval.tar")
    return LabelledPairs(a=a, b=b, labels=labels)
