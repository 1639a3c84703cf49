"""A mock SentEval folder with scores one can work out by hand, and the encoder that gives them (MTEB's ``mteb/mocks``).

:func:`write_mock_data` writes every file the readers parse, in SentEval's layout and formats: STS12-16 with all their
subsets (one pair a subset with an empty gold line, which SentEval drops), STS-B and SICK (train, dev, test),
MR, CR, SUBJ, MPQA, SST2, TREC and MRPC, a few rows each. Any encoder scores it (the plumbing tests use the tiny
BERTs and :class:`~stsbench.encoders.base.MockEncoder`); :class:`HandEncoder` gives each mock sentence a vector set
by hand, so that the figures are rank formulas (``tests/test_mocks.py`` works them out):

- STS: a task's pairs are ranked ``k = 0..n-1`` (subset by subset, in file order); pair ``k``'s two vectors have
  cosine :func:`cosine_of` ``(k, n)``, rising with ``k``, and its gold rises with ``k`` in equal steps too, except
  where :data:`SWAPS` swaps the golds of two neighbours. Ranks and values are then linear in each other, so
  Spearman = Pearson = ``1 - 6 sum(d^2) / (n (n^2 - 1))`` with ``sum(d^2) = 2`` per swap.
- Transfer: each class has its own axis, so every task is separable (accuracy 100), except that two of MR's
  positive sentences get the negative class' vector: no linear probe tells them apart, 38 of 40 (95.0). So in
  fasttest mode: test mode's Adam probe keeps SentEval's initial layer on so few rows (so does SentEval's fork).

:func:`treat_as_canonical` makes a run take the mock files as the canonical data (for them only), so that a
plumbing test sees what a run on the real data shows; without it a run refuses them as modified data.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from stsbench.data.sts_spec import BUILTIN_STS
from stsbench.encoders.base import EncoderInfo

PAIRS_PER_SUBSET = 6
DIM = 8
# STS-B and SICK-R: pairs per split (test and dev have golds above 4, which align_uniform's positives need)
SPLIT_PAIRS = {"train": 6, "dev": 11, "test": 11}
SICK_PAIRS = {"train": 5, "dev": 9, "test": 9}
# (task, split) -> the ranks k whose golds are swapped with k + 1 (STS12-16: ranks over all subsets, in order)
SWAPS: dict[tuple[str, str], tuple[int, ...]] = {
    ("STS12", "test"): (1,),  # inside MSRpar (ranks 0-5)
    ("STS13", "test"): (2, 13),  # inside FNWN (0-5) and OnWN (12-17)
    ("STS14", "test"): (5,),  # across deft-forum (0-5) and deft-news (6-11): each subset keeps its order
    ("STS15", "test"): (0, 6, 12),  # one inside each of the first three subsets
    ("STS16", "test"): (7, 9),  # both inside headlines (6-11)
    ("STSBenchmark", "test"): (3, 7),
    ("STSBenchmark", "dev"): (0,),
    ("SICKRelatedness", "test"): (1, 4, 6),
    ("SICKRelatedness", "dev"): (2, 5),
}
BINARY = {  # task -> folder, label-1 file, label-0 file (as stsbench.tasks.transfer reads them)
    "MR": ("MR", "rt-polarity.pos", "rt-polarity.neg"),
    "CR": ("CR", "custrev.pos", "custrev.neg"),
    "SUBJ": ("SUBJ", "subj.objective", "subj.subjective"),
    "MPQA": ("MPQA", "mpqa.pos", "mpqa.neg"),
}
PER_CLASS = 20  # binary tasks: sentences a class (10 stratified folds of 2 + 2)
MR_FLIPPED = 2  # MR positives that get the negative axis
TREC_CLASSES = ("ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM")

_NOUNS = "man woman dog cat child bird horse farmer train river city garden kitchen book song guitar ball tree house boat".split()
_VERBS = "sees holds reads finds likes paints cleans carries watches follows".split()
_ADJS = "small big red old new quiet happy green dark warm".split()
_TAILS = ("", " today", " in the park", " near the old bridge", " after a long and quiet day")


def sentence(i: int) -> str:
    """The ``i``-th mock sentence: distinct for every ``i`` below 2,000, of 7 to 13 tokens."""
    noun, verb, adj = _NOUNS[(i // 10) % 20], _VERBS[(i // 200) % 10], _ADJS[i % 10]
    return f"a {adj} {noun} {verb} the {_NOUNS[(7 * i + 3) % 20]}{_TAILS[i % 5]} ."


def cosine_of(k: int, n: int) -> float:
    """Pair ``k`` of ``n``'s cosine: equal steps from -0.8 to 0.9."""
    return -0.8 + 1.7 * k / (n - 1)


def gold_ranks(n: int, swaps: Sequence[int]) -> list[int]:
    """The rank of each pair's gold: ``k``, with each ``k`` in ``swaps`` exchanged with ``k + 1``."""
    ranks = list(range(n))
    for k in swaps:
        ranks[k], ranks[k + 1] = ranks[k + 1], ranks[k]
    return ranks


class HandEncoder:
    """The vectors set by hand for the mock sentences (a table lookup); any other text is an error."""

    def __init__(self, vectors: dict[str, np.ndarray], name: str = "hand") -> None:
        self.vectors = vectors
        digest = hashlib.sha256(repr(sorted((t, v.tobytes()) for t, v in vectors.items())).encode())
        self.info = EncoderInfo(name, "(mock)", digest.hexdigest()[:32], "table", None, "float32", "mock")
        self.n_encoded = 0

    def encode(self, texts: Sequence[str], batch_size: int = 128, show_progress: bool = True) -> np.ndarray:
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            raise KeyError(f"not a mock sentence: {missing[0]!r}")
        self.n_encoded += len(texts)
        return np.stack([self.vectors[t] for t in texts]).astype(np.float32)


class _Writer:
    """Writes the files and records each sentence's vector."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.vectors: dict[str, np.ndarray] = {}
        self.next = 0

    def new(self, vector: np.ndarray) -> str:
        text = sentence(self.next)
        self.next += 1
        self.vectors[text] = vector.astype(np.float32)
        return text

    def axis(self, i: int) -> np.ndarray:
        v = np.zeros(DIM)
        v[i] = 1.0
        return v

    def pair(self, k: int, n: int) -> tuple[str, str]:
        c = cosine_of(k, n)
        other = np.zeros(DIM)
        other[:2] = c, np.sqrt(1.0 - c * c)
        return self.new(self.axis(0)), self.new(other)

    def write(self, rel: str, lines: list[str], header: str | None = None) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"{line}\n" for line in ([header] if header else []) + lines), "utf-8")


def _sts(w: _Writer) -> None:
    for spec in BUILTIN_STS:
        if spec.subsets:
            n = PAIRS_PER_SUBSET * len(spec.subsets)
            golds = gold_ranks(n, SWAPS[(spec.name, "test")])
            for s, subset in enumerate(spec.subsets):
                inputs, gs = [], []
                for k in range(s * PAIRS_PER_SUBSET, (s + 1) * PAIRS_PER_SUBSET):
                    a, b = w.pair(k, n)
                    inputs.append(f"{a}\t{b}")
                    gs.append(f"{5 * golds[k] / (n - 1):.6f}")
                if s == len(spec.subsets) - 1:  # a pair without gold: SentEval drops it, nothing encodes it
                    inputs.insert(2, f"an unscored pair {s} .\tits gold line is empty .")
                    gs.insert(2, "")
                w.write(f"{spec.folder}/STS.input.{subset}.txt", inputs)
                w.write(f"{spec.folder}/STS.gs.{subset}.txt", gs)
            continue
        sick = spec.name == "SICKRelatedness"
        sizes = SICK_PAIRS if sick else SPLIT_PAIRS
        for split, file in spec.splits.items():
            n = sizes[split]
            golds = gold_ranks(n, SWAPS.get((spec.name, split), ()))
            rows = []
            for k in range(n):
                a, b = w.pair(k, n)
                if sick:  # 1-5: pair_ID, sentence_A, sentence_B, relatedness_score, entailment_judgment
                    rows.append(f"{k + 1}\t{a}\t{b}\t{1 + 4 * golds[k] / (n - 1):.6f}\tNEUTRAL")
                else:  # genre, file, year, id, score (0-5), sentence 1, sentence 2
                    rows.append(
                        f"main-captions\tMSRvid\t2012test\t{k:04d}\t{5 * golds[k] / (n - 1):.6f}\t{a}\t{b}"
                    )
            header = (
                "pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment" if sick else None
            )
            w.write(f"{spec.folder}/{file}", rows, header)


def _transfer(w: _Writer) -> None:
    pos, neg = w.axis(2), w.axis(3)
    for task, (folder, pos_file, neg_file) in BINARY.items():
        flipped = MR_FLIPPED if task == "MR" else 0
        w.write(
            f"downstream/{folder}/{pos_file}", [w.new(neg if i < flipped else pos) for i in range(PER_CLASS)]
        )
        w.write(f"downstream/{folder}/{neg_file}", [w.new(neg) for _ in range(PER_CLASS)])
    for split, n in (("train", 16), ("dev", 8), ("test", 8)):  # SST2: sentence, tab, label
        w.write(
            f"downstream/SST/binary/sentiment-{split}",
            [f"{w.new(pos if i % 2 else neg)} \t{i % 2}" for i in range(n)],
        )
    for file, per_class in (("train_5500.label", 10), ("TREC_10.label", 2)):  # COARSE:fine question
        lines = [
            f"{c}:other {w.new(w.axis(2 + i))}" for i, c in enumerate(TREC_CLASSES) for _ in range(per_class)
        ]
        w.write(f"downstream/TREC/{file}", lines)
    header = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String"
    for split, n in (("train", 20), ("test", 10)):  # a paraphrase: the same vector; else another axis
        rows = []
        for i in range(n):
            label = i % 2
            rows.append(f"{label}\t{100 + i}\t{200 + i}\t{w.new(pos)}\t{w.new(pos if label else neg)}")
        w.write(f"downstream/MRPC/msr_paraphrase_{split}.txt", rows, header)


def write_mock_data(root: Path) -> tuple[Path, HandEncoder]:
    """Write the mock SentEval folder under ``root`` (``root/downstream/...``); returns it and its encoder."""
    w = _Writer(Path(root))
    _sts(w)
    _transfer(w)
    return Path(root), HandEncoder(w.vectors)


def treat_as_canonical(monkeypatch, root: Path) -> None:
    """Make the data check take the files under ``root``, as they are now, as canonical (other files unchanged)."""
    from stsbench.data import integrity

    known = {
        p.absolute().as_posix(): integrity.checksum_entry(p)
        for p in sorted(Path(root).rglob("*"))
        if p.is_file()
    }
    real = integrity._canonical

    def canonical(data_dir: Path, path: Path):
        meta = known.get(Path(path).absolute().as_posix())
        return (integrity.relative(data_dir, path), meta) if meta is not None else real(data_dir, path)

    monkeypatch.setattr(integrity, "_canonical", canonical)
