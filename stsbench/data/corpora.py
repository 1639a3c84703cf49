"""Training corpora by name: ``train_file: wiki1m`` is found in the data folder, wherever that is.

A :class:`Corpus` names a file under the data folder (``--data-dir``, ``$STSBENCH_DATA``, else ``./data``),
where to fetch it, and the files that hold its first lines (``wiki/wiki1m_head.txt``: the first 11,914 lines
of ``wiki1m_for_simcse.txt``). A run that reads only the first N lines (``train_lines``) takes the smallest
file that holds them, so the same command trains on the same sentences from the full corpus or from its head.
What a run read is recorded by :func:`head_identity`: the corpus name, the lines read and their sha256 (the
same whichever file held them). Another package adds corpora under the ``stsbench.corpora`` entry points.
"""

from __future__ import annotations

import hashlib
import io
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.paths import resolve_data_dir
from stsbench.registry import Registry

SIMCSE_DATASETS = "https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/resolve/main"


@dataclass(frozen=True)
class Corpus:
    """A training corpus the data folder may hold."""

    name: str
    file: str  # under the data folder
    url: str  # where `stsbench data download` (or a browser) fetches it
    description: str
    heads: tuple[tuple[str, int], ...] = ()  # (file under the data folder, its line count): its first lines
    download: str | None = None  # the command that fetches it, where stsbench has one
    lines: int | None = None  # the full file's line count, where known (a plan's steps before it is fetched)


CORPORA: Registry[Corpus] = Registry("corpus", entry_points="stsbench.corpora", normalise=str.lower)
CORPORA.register(
    "wiki1m",
    Corpus(
        name="wiki1m",
        file="wiki/wiki1m_for_simcse.txt",
        # princeton-nlp/SimCSE data/download_wiki.sh
        url=f"{SIMCSE_DATASETS}/wiki1m_for_simcse.txt",
        description="SimCSE's 10^6 English Wikipedia sentences, one a line (unsup SimCSE, ESimCSE, MoCoSE)",
        heads=(("wiki/wiki1m_head.txt", 11914),),
        download="stsbench data download --wiki",
        lines=1_000_000,  # SimCSE's 10^6 sentences: 15,625 steps of 64 an epoch
    ),
    aliases=("wiki1m_for_simcse",),
)
CORPORA.register(
    "nli",
    Corpus(
        name="nli",
        file="nli/nli_for_simcse.csv",
        # princeton-nlp/SimCSE data/download_nli.sh
        url=f"{SIMCSE_DATASETS}/nli_for_simcse.csv",
        description="SimCSE's MNLI+SNLI triplets, CSV sent0,sent1,hard_neg (sup SimCSE)",
    ),
    aliases=("nli_for_simcse",),
)


def _looks_like_name(text: str) -> bool:
    """A bare word (no folder, no suffix): meant as a corpus name rather than a file."""
    return "/" not in text and "\\" not in text and Path(text).suffix == ""


def resolve_train_file(
    train_file: str, lines: int | None = None, data_dir: str | Path | None = None, strict: bool = True
) -> tuple[Path, str | None]:
    """The file ``train_file`` names and the corpus it is (None for a plain path).

    An existing path is itself; a corpus name is the smallest file under the data folder that holds its first
    ``lines`` lines (all of it when ``lines`` is None). A bare word that is neither is refused with the nearest
    corpus name (``strict``; else returned as a path); any other path is returned as it is (the reader says
    it does not exist).
    """
    path = Path(train_file).expanduser()
    if path.exists() or not _looks_like_name(train_file):
        return path, None
    name = CORPORA.canonical(train_file)
    if name is None and not strict:
        return path, None
    if name is None:
        try:
            CORPORA.check(train_file)
        except StsbenchError as exc:
            raise StsbenchError(f"train file {train_file} does not exist, and {exc}") from None
    corpus = CORPORA.get(name)
    root = resolve_data_dir(data_dir, must_exist=False)
    candidates = [(rel, n) for rel, n in corpus.heads if lines is not None and lines <= n]
    candidates.append((corpus.file, None))
    for rel, _ in candidates:
        if (root / rel).is_file():
            return root / rel, corpus.name
    heads = "; ".join(f"{rel} serves --train-lines up to {n:,}" for rel, n in corpus.heads)
    fetch = (
        f"run `{corpus.download} --data-dir {root}`"
        if corpus.download
        else f"fetch {corpus.url} into {root / corpus.file}"
    )
    raise StsbenchError(
        f"corpus {corpus.name}: no {corpus.file} under {root}{f' ({heads})' if heads else ''}; {fetch}"
    )


def first_lines(raw: bytes, lines: int | None, path: Path) -> bytes:
    """The bytes of the first ``lines`` lines of ``raw`` (each with its newline); all of it when None."""
    if lines is None:
        return raw
    head = list(itertools.islice(io.BytesIO(raw), lines))  # a last line without its newline counts
    if len(head) < lines:
        raise StsbenchError(
            f"train file {path} holds {len(head):,} lines; --train-lines {lines:,} asks for more "
            "(use the full corpus, or fewer lines)"
        )
    return b"".join(head)


def head_identity(raw: bytes, path: Path, corpus: str | None) -> dict[str, Any]:
    """What a run trained on: corpus name (None for a plain file), file, lines read, sha256 of those bytes."""
    count = raw.count(b"\n") + (0 if raw.endswith(b"\n") or not raw else 1)
    return {
        "name": corpus,
        "file": str(Path(path).expanduser().resolve()),
        "lines": count,
        "sha256": hashlib.sha256(raw).hexdigest(),
    }
