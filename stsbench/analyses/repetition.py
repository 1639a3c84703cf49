"""Repetition-bias probe (ESimCSE COLING section 5.5, Table 8).

Does repeating the words a candidate shares with a query make the model find the two more similar? For
each query q drawn from a corpus, a candidate s1 whose overlap with q lies in [min, max] (13-17 %) is
recalled at random, s2 is s1 with every overlapping word written twice, and the mean cos(q, s1) and
cos(q, s2) (x100) are compared.

Words and overlap, precisely (the paper leaves both open): a sentence's words are its whitespace-separated
tokens; a word's key is the word lowercased with leading/trailing punctuation stripped; words whose key is
empty (pure punctuation) are not counted. A word of s1 *overlaps* when its key is among the keys of q.

- ``candidate`` (default): overlap = overlapping words of s1 / words of s1, counted with repeats; so the
  share of s1 that s2 repeats (as ESimCSE's dup_rate is a share of the sentence) lies in [min, max].
- ``jaccard``: overlap = |keys(q) & keys(s1)| / |keys(q) | keys(s1)|.

Sampling (seed ``seed``): queries are taken in the order of one random permutation of the corpus; for
each, the other sentences are scanned in a fresh random permutation and the first one in range (and not
the same text) is s1. A query without such a candidate is skipped (and counted); sampling stops at ``n``
triples, or after ``max(10 n, 1000)`` queries tried (so an impossible range fails in seconds, not hours).
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from stsbench import metrics
from stsbench.data.textfile import read_lines
from stsbench.encoders.base import Encoder, embed_table
from stsbench.errors import StsbenchError

OverlapMeasure = Literal["candidate", "jaccard"]
WORDS = "whitespace tokens, lowercased, leading/trailing punctuation stripped, pure punctuation not counted"
_PUNCT = string.punctuation + "“”‘’«»…–—"


def word_key(word: str) -> str:
    """Lowercased, leading/trailing punctuation stripped ("Giant." -> "giant")."""
    return word.lower().strip(_PUNCT)


def keys_of(sentence: str) -> list[str]:
    """Return the non-empty keys of a sentence's words, in order, with repeats."""
    return [k for k in (word_key(w) for w in sentence.split()) if k]


def overlap(query: str, cand: str, measure: OverlapMeasure = "candidate") -> float:
    """Overlap of ``cand`` with ``query`` (see the module docstring); 0 when either has no words."""
    return _overlap(set(keys_of(query)), keys_of(cand), measure)


def _overlap(qkeys: set[str], ckeys: list[str], measure: str) -> float:  # one pair; see _overlap_index
    if not qkeys or not ckeys:
        return 0.0
    if measure == "candidate":
        return sum(k in qkeys for k in ckeys) / len(ckeys)
    cset = set(ckeys)
    return len(qkeys & cset) / len(qkeys | cset)


def repeat_overlap(query: str, cand: str) -> tuple[str, list[str]]:
    """``cand`` with each word that overlaps ``query`` written twice; and those words' keys (in order)."""
    qkeys = set(keys_of(query))
    out, shared = [], []
    for w in cand.split():
        out.append(w)
        k = word_key(w)
        if k and k in qkeys:
            out.append(w)
            shared.append(k)
    return " ".join(out), shared


@dataclass
class ProbeTriple:
    """One sampled (q, s1, s2); similarities are cosines in [-1, 1] (None until scored)."""

    query: str
    s1: str
    s2: str
    overlap: float
    repeated: list[str]  # keys of the words of s1 that s2 repeats
    query_line: int  # 1-based line numbers in the corpus file
    s1_line: int
    sim_q_s1: float | None = None
    sim_q_s2: float | None = None


@dataclass
class ProbeSample:
    """The triples to score and how they were drawn (None where they were read back from a file)."""

    corpus: str
    n_corpus_sentences: int | None
    triples: list[ProbeTriple]
    n_requested: int
    n_queries_without_candidate: int | None
    overlap_measure: str | None
    min_overlap: float | None
    max_overlap: float | None
    seed: int | None
    triples_from: str | None = None  # the .triples.jsonl file reused, if any


@dataclass
class RepetitionResult:
    """Mean similarities x100 over the triples, and the sample's description."""

    corpus: str
    n_corpus_sentences: int | None
    n_requested: int
    n_triples: int
    n_queries_without_candidate: int | None
    overlap_measure: str | None
    min_overlap: float | None
    max_overlap: float | None
    seed: int | None
    triples_from: str | None
    mean_sim_q_s1: float  # x100, as Table 8
    mean_sim_q_s2: float  # x100
    difference: float  # mean_sim_q_s2 - mean_sim_q_s1 (x100)
    words: str = WORDS
    triples: list[ProbeTriple] = field(default_factory=list)

    def to_dict(self, with_triples: bool = False) -> dict[str, Any]:
        """Plain dict for JSON (the triples go to their own JSONL file unless asked for)."""
        d = asdict(self)
        if not with_triples:
            d.pop("triples")
        return d


def read_corpus(path: Path) -> list[tuple[int, str]]:
    """Non-empty lines of a one-sentence-a-line file as ``(line number, text with single spaces)``."""
    lines = read_lines(Path(path))
    out = [(no, " ".join(t.split())) for no, t in enumerate(lines, start=1) if t.strip()]
    if len(out) < 2:
        raise StsbenchError(
            f"{path} has {len(out)} non-empty line(s); the probe needs a corpus of sentences, "
            "one a line (e.g. wiki1m_for_simcse.txt)"
        )
    return out


def _check_range(min_overlap: float, max_overlap: float) -> None:
    if not 0.0 <= min_overlap <= max_overlap <= 1.0:
        raise StsbenchError(
            f"overlap range [{min_overlap}, {max_overlap}] is not within [0, 1] with min <= max; "
            "use e.g. --min-overlap 0.13 --max-overlap 0.17"
        )


def _overlap_index(keys: list[list[str]], measure: str) -> Callable[[int], np.ndarray]:
    """``f(q)`` -> the overlap of every sentence with sentence ``q`` at once (sparse word-count matrix).

    Equal to :func:`overlap` for each pair: candidate = (words of s1 whose key is in q) / (words of s1);
    jaccard = |shared keys| / |union of keys|; 0 where either side has no words.
    """
    from scipy.sparse import csr_matrix

    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, ks in enumerate(keys):
        for k in ks:
            rows.append(i)
            cols.append(vocab.setdefault(k, len(vocab)))
    shape = (len(keys), max(len(vocab), 1))
    counts = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=shape)  # duplicates summed: word counts
    counts.sum_duplicates()
    present = counts.copy()
    present.data[:] = 1.0
    n_words = np.asarray(counts.sum(axis=1)).ravel()
    n_keys = np.asarray(present.sum(axis=1)).ravel()
    qsets = [sorted({vocab[k] for k in ks}) for ks in keys]

    def overlaps(q: int) -> np.ndarray:
        ind = np.zeros(shape[1])
        ind[qsets[q]] = 1.0
        out = np.zeros(shape[0])
        if not qsets[q]:
            return out
        if measure == "candidate":
            np.divide(counts @ ind, n_words, out=out, where=n_words > 0)
        else:
            shared = present @ ind
            np.divide(shared, len(qsets[q]) + n_keys - shared, out=out, where=n_keys > 0)
        return out

    return overlaps


def sample_triples(
    corpus: Sequence[tuple[int, str]],
    n: int = 100,
    seed: int = 1111,
    min_overlap: float = 0.13,
    max_overlap: float = 0.17,
    measure: OverlapMeasure = "candidate",
    source: str = "the corpus",
) -> tuple[list[ProbeTriple], int]:
    """Draw up to ``n`` triples (seeded, see the module docstring) and count the queries skipped."""
    _check_range(min_overlap, max_overlap)
    if measure not in ("candidate", "jaccard"):
        raise StsbenchError(f"unknown overlap measure {measure!r}; choose candidate or jaccard")
    if n < 1:
        raise StsbenchError(f"--n must be at least 1 (got {n})")
    rng = np.random.default_rng(seed)
    texts = [text for _, text in corpus]
    ov_all = _overlap_index([keys_of(t) for t in texts], measure)
    same_text: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        same_text.setdefault(t, []).append(i)
    triples: list[ProbeTriple] = []
    skipped = 0
    max_tries = max(10 * n, 1000)
    for tried, qi in enumerate(rng.permutation(len(corpus)).tolist()):
        if len(triples) == n or tried == max_tries:
            break
        ov = ov_all(qi)
        # a small tolerance so 2/15 = 0.1333.. and 1/6 = 0.1666.. sit in [0.13, 0.17] however rounded
        ok = (ov >= min_overlap - 1e-12) & (ov <= max_overlap + 1e-12)
        ok[same_text[texts[qi]]] = False  # the query itself and its duplicates
        order = rng.permutation(len(corpus))  # the candidates' random order: the first one in range is s1
        hits = order[ok[order]]
        if hits.size == 0:
            skipped += 1
            continue
        ci = int(hits[0])
        s2, rep = repeat_overlap(texts[qi], texts[ci])
        triples.append(
            ProbeTriple(texts[qi], texts[ci], s2, float(ov[ci]), rep, corpus[qi][0], corpus[ci][0])
        )
    if not triples:
        raise StsbenchError(
            f"no sentence of {source} has {min_overlap:.0%}-{max_overlap:.0%} {measure} overlap with "
            f"any of the {min(len(corpus), max_tries)} queries tried; use a larger corpus or widen "
            "--min-overlap/--max-overlap"
        )
    return triples, skipped


def draw_sample(
    corpus_path: Path,
    n: int = 100,
    seed: int = 1111,
    min_overlap: float = 0.13,
    max_overlap: float = 0.17,
    measure: OverlapMeasure = "candidate",
) -> ProbeSample:
    """Read the corpus and draw the triples (no model involved: every model is probed on the same sample)."""
    _check_range(min_overlap, max_overlap)
    corpus = read_corpus(corpus_path)
    triples, skipped = sample_triples(corpus, n, seed, min_overlap, max_overlap, measure, str(corpus_path))
    return ProbeSample(
        str(corpus_path), len(corpus), triples, n, skipped, measure, min_overlap, max_overlap, seed
    )


def sample_from_file(path: Path) -> ProbeSample:
    """Read a sample saved by an earlier run (:func:`write_triples`), to probe more models on it."""
    triples = read_triples(path)
    return ProbeSample(
        "(from triples file)", None, triples, len(triples), None, None, None, None, None, str(path)
    )


def repetition_probe(
    encoder: Encoder, sample: ProbeSample, batch_size: int = 128, show_progress: bool = True
) -> RepetitionResult:
    """Mean cos(q, s1) and cos(q, s2) x100 over the sample (one encoding pass, through the cache)."""
    table = embed_table(
        encoder, (t for x in sample.triples for t in (x.query, x.s1, x.s2)), batch_size, show_progress
    )
    q = table[[t.query for t in sample.triples]]
    s1 = metrics.cosine_pairs(q, table[[t.s1 for t in sample.triples]])
    s2 = metrics.cosine_pairs(q, table[[t.s2 for t in sample.triples]])
    scored = [
        ProbeTriple(**{**asdict(t), "sim_q_s1": float(a), "sim_q_s2": float(b)})
        for t, a, b in zip(sample.triples, s1, s2, strict=True)
    ]
    a, b = 100.0 * float(np.mean(s1)), 100.0 * float(np.mean(s2))
    return RepetitionResult(
        sample.corpus,
        sample.n_corpus_sentences,
        sample.n_requested,
        len(scored),
        sample.n_queries_without_candidate,
        sample.overlap_measure,
        sample.min_overlap,
        sample.max_overlap,
        sample.seed,
        sample.triples_from,
        a,
        b,
        b - a,
        triples=scored,
    )


def write_triples(path: Path, triples: list[ProbeTriple]) -> Path:
    """One JSON object a line (atomic)."""
    from stsbench.files import atomic_write_text

    text = "".join(
        json.dumps(asdict(t), ensure_ascii=False, sort_keys=True, allow_nan=False) + "\n" for t in triples
    )
    return atomic_write_text(path, text)


def read_triples(path: Path) -> list[ProbeTriple]:
    """Triples saved by :func:`write_triples` (similarities are recomputed when scored)."""
    out = []
    for no, line in enumerate(read_lines(Path(path)), start=1):
        if not line.strip():
            continue
        try:
            d = json.loads(line)
            out.append(
                ProbeTriple(
                    d["query"],
                    d["s1"],
                    d["s2"],
                    float(d["overlap"]),
                    list(d["repeated"]),
                    int(d["query_line"]),
                    int(d["s1_line"]),
                )
            )
        except (ValueError, KeyError, TypeError):
            raise StsbenchError(
                f"{path}:{no}: not a triple written by `stsbench repetition-probe`; "
                "pass the .triples.jsonl file it saved"
            ) from None
    if not out:
        raise StsbenchError(f"{path} holds no triples; pass the .triples.jsonl file a probe run saved")
    return out
