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

The whole analysis is here: the sampling and the probe, the report's table (:func:`repetition_table`), its figure,
its figures one by one and against a published entry, and :class:`RepetitionProbe`, its options and registry entry.
"""

from __future__ import annotations

import json
import logging
import string
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal, Optional

import numpy as np
import pydantic.dataclasses

from stsbench import metrics
from stsbench.analyses import figures as afig
from stsbench.analyses.registry import Analysis, Encodes, Interval, Number, published_pairs
from stsbench.data.integrity import read_lines
from stsbench.encoders.base import Encoder, embed_table
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_text
from stsbench.options import option
from stsbench.published.registry import get_entry
from stsbench.results.write import companion_path
from stsbench.tabular import Table, fmt, fmt_delta, make_table

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
    qkeys, ckeys = set(keys_of(query)), keys_of(cand)  # one pair; all at once: _overlap_index
    if not qkeys or not ckeys:
        return 0.0
    if measure == "candidate":
        return sum(k in qkeys for k in ckeys) / len(ckeys)
    cset = set(ckeys)
    return len(qkeys & cset) / len(qkeys | cset)


def repeat_overlap(query: str, cand: str) -> tuple[str, list[str]]:
    """``cand`` with each word that overlaps ``query`` written twice; and those words' keys (in order)."""
    qkeys = set(keys_of(query))
    keyed = [(w, word_key(w)) for w in cand.split()]
    shared = [k for _, k in keyed if k and k in qkeys]
    return " ".join(x for w, k in keyed for x in ((w, w) if k and k in qkeys else (w,))), shared


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
    n_requested: int
    n_queries_without_candidate: int | None = None
    overlap_measure: str | None = None
    min_overlap: float | None = None
    max_overlap: float | None = None
    seed: int | None = None
    triples_from: str | None = None  # the .triples.jsonl file reused, if any
    triples: list[ProbeTriple] = field(default_factory=list)


@dataclass(kw_only=True)
class RepetitionResult(ProbeSample):
    """Mean similarities x100 over the scored triples, and the sample's description."""

    n_triples: int
    mean_sim_q_s1: float  # x100, as Table 8
    mean_sim_q_s2: float  # x100
    difference: float  # mean_sim_q_s2 - mean_sim_q_s1 (x100)
    words: str = WORDS

    def to_dict(self, with_triples: bool = False) -> dict[str, Any]:
        """Plain dict for JSON (the triples go to their own JSONL file unless asked for)."""
        d = asdict(self)
        return d if with_triples else {k: v for k, v in d.items() if k != "triples"}


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


def _overlap_index(keys: list[list[str]], measure: str) -> Callable[[int], np.ndarray]:
    """``f(q)`` -> the overlap of every sentence with sentence ``q`` at once (sparse word-count matrix).

    Equal to :func:`overlap` for each pair: candidate = (words of s1 whose key is in q) / (words of s1);
    jaccard = |shared keys| / |union of keys|; 0 where either side has no words.
    """
    from scipy.sparse import csr_matrix

    vocab: dict[str, int] = {}  # a key's column, in the order keys are first met
    cols = [vocab.setdefault(k, len(vocab)) for ks in keys for k in ks]
    rows = [i for i, ks in enumerate(keys) for _ in ks]
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


def draw_sample(
    corpus_path: Path,
    n: int = 100,
    seed: int = 1111,
    min_overlap: float = 0.13,
    max_overlap: float = 0.17,
    measure: OverlapMeasure = "candidate",
) -> ProbeSample:
    """Read the corpus and draw the triples (no model involved: every model is probed on the same sample).

    Up to ``n`` triples, seeded (see the module docstring); the queries skipped are counted.
    """
    if not 0.0 <= min_overlap <= max_overlap <= 1.0:
        raise StsbenchError(
            f"overlap range [{min_overlap}, {max_overlap}] is not within [0, 1] with min <= max; "
            "use e.g. --min-overlap 0.13 --max-overlap 0.17"
        )
    corpus = read_corpus(corpus_path)
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
    skipped, max_tries = 0, max(10 * n, 1000)
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
        q, c = texts[qi], texts[ci]
        s2, rep = repeat_overlap(q, c)
        triples.append(ProbeTriple(q, c, s2, float(ov[ci]), rep, corpus[qi][0], corpus[ci][0]))
    if not triples:
        raise StsbenchError(
            f"no sentence of {corpus_path} has {min_overlap:.0%}-{max_overlap:.0%} {measure} overlap with "
            f"any of the {min(len(corpus), max_tries)} queries tried; use a larger corpus or widen "
            "--min-overlap/--max-overlap"
        )
    return ProbeSample(
        str(corpus_path), len(corpus), n, skipped, measure, min_overlap, max_overlap, seed, triples=triples
    )


def sample_from_file(path: Path) -> ProbeSample:
    """Read a sample saved by an earlier run (:func:`write_triples`), to probe more models on it."""
    triples = read_triples(path)
    return ProbeSample("(from triples file)", None, len(triples), triples_from=str(path), triples=triples)


def repetition_probe(
    encoder: Encoder, sample: ProbeSample, batch_size: int = 128, show_progress: bool = True
) -> RepetitionResult:
    """Mean cos(q, s1) and cos(q, s2) x100 over the sample (one encoding pass, through the cache)."""
    texts = (t for x in sample.triples for t in (x.query, x.s1, x.s2))
    table = embed_table(encoder, texts, batch_size, show_progress)
    q = table[[t.query for t in sample.triples]]
    s1 = metrics.cosine_pairs(q, table[[t.s1 for t in sample.triples]])
    s2 = metrics.cosine_pairs(q, table[[t.s2 for t in sample.triples]])
    pairs = zip(sample.triples, s1, s2, strict=True)
    scored = [replace(t, sim_q_s1=float(a), sim_q_s2=float(b)) for t, a, b in pairs]
    a, b = 100.0 * float(np.mean(s1)), 100.0 * float(np.mean(s2))
    # how and from where the sample was drawn, its triples scored
    drawn = {f.name: getattr(sample, f.name) for f in fields(ProbeSample)} | {"triples": scored}
    return RepetitionResult(**drawn, n_triples=len(s1), mean_sim_q_s1=a, mean_sim_q_s2=b, difference=b - a)


def write_triples(path: Path, triples: list[ProbeTriple]) -> Path:
    """One JSON object a line (atomic)."""
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
            texts = (d["query"], d["s1"], d["s2"])
            lines = (int(d["query_line"]), int(d["s1_line"]))
            out.append(ProbeTriple(*texts, float(d["overlap"]), list(d["repeated"]), *lines))
        except (ValueError, KeyError, TypeError):
            raise StsbenchError(
                f"{path}:{no}: not a triple written by `stsbench repetition-probe`; "
                "pass the .triples.jsonl file it saved"
            ) from None
    if not out:
        raise StsbenchError(f"{path} holds no triples; pass the .triples.jsonl file a probe run saved")
    return out


PROBE_ROWS = ("esimcse-coling/table8/simcse", "esimcse-coling/table8/esimcse")


def repetition_table(variant: str, results: dict[str, Any]) -> Table:
    """ESimCSE COLING Table 8 layout: mean sim(q, s1) and sim(q, s2) x100, measured and published."""
    columns = ["model", "Sim<q,s1>", "Sim<q,s2>", "difference", "triples"]
    rows = []
    for key in PROBE_ROWS:
        e = get_entry(key)
        a, b = e.values["Sim<q,s1>"], e.values["Sim<q,s2>"]
        rows.append([f"{e.row}-BERT-base (published)", fmt(a), fmt(b), fmt_delta(b - a), "100"])
    for label, r in results.items():
        rows.append(
            [label, fmt(r.mean_sim_q_s1), fmt(r.mean_sim_q_s2), fmt_delta(r.difference), str(r.n_triples)]
        )
    first = next(iter(results.values()))
    sample = (
        f"{first.n_triples} queries from {Path(first.corpus).name}, a candidate s1 with "
        f"{fmt(first.min_overlap, 0, 100)}-{fmt(first.max_overlap, 0, 100)} % {first.overlap_measure} overlap, "
        f"seed {first.seed}"
        if first.min_overlap is not None
        else f"{first.n_triples} triples read from {Path(first.triples_from or first.corpus).name}"
    )
    notes = [
        f"Mean cosine x100; s2 is s1 with every word it shares with q written twice. Here: {sample}.",
        "Published: esimcse-coling/table8/* (BERT-base, 100 wiki queries, 13-17 % overlap).",
    ]
    return make_table(variant, "Repetition probe, ESimCSE COLING Table 8 layout", columns, rows, notes)


def repetition_numbers(result: Any) -> list[Number]:
    """Table 8's two mean similarities x100 and their difference."""
    row = "mean cosine x100"
    return [
        Number(row, "Sim<q,s1>", result.mean_sim_q_s1),
        Number(row, "Sim<q,s2>", result.mean_sim_q_s2),
        Number(row, "difference", result.difference, headline=True),
    ]


def repetition_published(result: Any, entry: Any) -> dict[str, tuple[float, float, Interval]] | str:
    """COLING Table 8's Sim<q,s1> and Sim<q,s2> (x100): the sample may differ from the paper's 100 queries."""
    return published_pairs({"Sim<q,s1>": result.mean_sim_q_s1, "Sim<q,s2>": result.mean_sim_q_s2}, entry)


def repetition_figure(results: dict[str, RepetitionResult], stem: Path) -> list[Path]:
    """Mean sim(q, s1) and sim(q, s2) x100 per model (ESimCSE Table 8), the difference written above."""
    plt = afig.pyplot()
    labels = list(results)
    fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(labels), 3.4))
    x = np.arange(len(labels))
    a = [r.mean_sim_q_s1 for r in results.values()]
    b = [r.mean_sim_q_s2 for r in results.values()]
    ax.bar(x - 0.18, a, 0.36, label="sim(q, s1)")
    ax.bar(x + 0.18, b, 0.36, label="sim(q, s2): overlap repeated")
    for k, r in enumerate(results.values()):
        ax.text(x[k], max(a[k], b[k]), f"{r.difference:+.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel("mean cosine x100")
    first = next(iter(results.values()))
    ax.set_title(
        f"Repetition probe: {first.n_triples} triples, {first.min_overlap:.0%}-{first.max_overlap:.0%} "
        f"{first.overlap_measure} overlap",
        fontsize=8,
    )
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=2)
    return afig.laid_out(fig, stem)


log = logging.getLogger("stsbench")
FEWER = "warning: only %d of %d queries found a candidate with %.0f%%-%.0f%% overlap; the probe uses those"


@pydantic.dataclasses.dataclass(frozen=True)
class RepetitionConfig:
    """Options of ``stsbench repetition-probe``."""

    corpus: Optional[Path] = option(None, "Sentences, one a line (e.g. wiki1m_for_simcse.txt).")  # noqa: UP045 - typer
    n: int = option(100, "Number of queries (triples).", ge=1)
    seed: int = option(1111, "Random seed.")
    min_overlap: float = option(0.13, "Lowest overlap of a candidate.", ge=0, le=1)
    max_overlap: float = option(0.17, "Highest overlap of a candidate.", ge=0, le=1)
    overlap: OverlapMeasure = option(
        "candidate", "candidate: share of s1's words found in q; jaccard: word sets."
    )
    triples: Optional[Path] = option(None, "Reuse the triples a previous run saved (.triples.jsonl).")  # noqa: UP045


class RepetitionProbe(Analysis):
    """ESimCSE COLING 5.5: whether repeating shared words raises similarity."""

    name = "repetition_probe"
    command = "repetition-probe"
    title = "Repetition probe"
    make = "stsbench repetition-probe --model MODEL --corpus wiki1m_for_simcse.txt --output RESULTS/analyses"
    help = "Probe whether repeating shared words raises similarity (ESimCSE COLING 5.5, Table 8)."
    config_type = RepetitionConfig
    result_type = RepetitionResult
    uses_data_dir = False

    def prepare(self, config: RepetitionConfig) -> Any:
        """Draw one sample before any model loads, so every model is probed on the same triples."""
        if config.triples is not None:
            return sample_from_file(config.triples)
        if config.corpus is None:
            raise StsbenchError(
                "give --corpus FILE (sentences, one a line) or --triples FILE (a saved sample)"
            )
        sample = draw_sample(
            config.corpus, config.n, config.seed, config.min_overlap, config.max_overlap, config.overlap
        )
        if len(sample.triples) < config.n:
            log.warning(
                FEWER, len(sample.triples), config.n, 100 * config.min_overlap, 100 * config.max_overlap
            )
        return sample

    def data_files(self, config: Any, data_dir: Path | None, prepared: Any) -> tuple[Path, list[Path]]:
        """The corpus, or the triples file reused."""
        source = Path(config.triples if config.triples is not None else config.corpus)  # type: ignore[arg-type]
        return source.parent, [source]

    def encodes(self, config: RepetitionConfig) -> Encodes:
        """Each triple's query and its two candidates: at most ``3 n`` sentences."""
        return Encodes(sentences=3 * config.n)

    def record(self, config: RepetitionConfig) -> dict[str, Any]:
        """``triples`` is stored as ``triples_from``."""
        return {("triples_from" if k == "triples" else k): v for k, v in super().record(config).items()}

    def compute(self, encoder: Any, config: Any, *, data_dir: Path | None, prepared: Any, batch_size: int):
        """:func:`stsbench.analyses.repetition.repetition_probe` on the prepared sample."""
        return repetition_probe(encoder, prepared, batch_size)

    def extra_files(self, result: Any, path: Path) -> list[Path]:
        """The scored triples, ``<stem>.triples.jsonl`` (``--triples`` reads them back)."""
        return [write_triples(companion_path(path, ".triples.jsonl"), result.triples)]

    table_builders = (repetition_table,)
    draw = staticmethod(repetition_figure)
    number_builder = staticmethod(repetition_numbers)
    published_builder = staticmethod(repetition_published)
