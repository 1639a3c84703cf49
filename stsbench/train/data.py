"""Training corpora and batches: read the file, order it by (seed, epoch), tokenize a batch.

The data order is a pure function of ``(seed, epoch)``, so a resumed run only needs the step number to
find its place; no sampler state is saved.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from stsbench.data.corpora import first_lines, head_identity, resolve_train_file
from stsbench.data.textfile import decode_lines
from stsbench.errors import StsbenchError, where

SUP_COLUMNS = (("sent0", "sent1"), ("sent0", "sent1", "hard_neg"))


@dataclass
class TrainData:
    """Rows of 1 (unsup), 2 (pairs) or 3 (pairs + hard negative) sentences."""

    path: Path
    rows: list[tuple[str, ...]]
    columns: tuple[str, ...]
    identity: dict | None = None  # corpus name, file, lines read, their sha256 (corpora.head_identity)

    @property
    def supervised(self) -> bool:
        """Sentence pairs (sup SimCSE) rather than single sentences."""
        return len(self.columns) > 1

    def __len__(self) -> int:
        return len(self.rows)


def load_train_data(cfg) -> TrainData:
    """The training rows of a config: its train file, corpus name or ``datasets`` dataset, its first ``train_lines``."""
    if getattr(cfg, "train_dataset", None):
        from stsbench.train.dataset import read_train_dataset

        return read_train_dataset(
            cfg.train_dataset, split=cfg.train_split, column=cfg.text_column, rows=cfg.train_lines
        )
    path, corpus = resolve_train_file(cfg.train_file, cfg.train_lines, cfg.data_dir)
    return read_train_file(path, cfg.train_lines, corpus=corpus)


def read_train_file(path: str | Path, lines: int | None = None, corpus: str | None = None) -> TrainData:
    """Read a ``.txt`` file (one sentence a line; blank lines skipped) or a CSV with a header.

    CSV headers as SimCSE's ``train.py``: one column (any name) is unsup; ``sent0,sent1[,hard_neg]`` is sup.
    ``lines``: read the first N lines only (a CSV's header is one). ``corpus``: the corpus name the file is,
    recorded with the lines read and their sha256 in :attr:`TrainData.identity`.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise StsbenchError(f"train file {path} does not exist; pass --train-file with a text or CSV file")
    if path.is_dir():
        raise StsbenchError(f"train file {path} is a folder; pass a text or CSV file")
    raw = first_lines(path.read_bytes(), lines, path)
    if path.suffix.lower() == ".csv":
        data = _read_csv(path, raw)
    else:
        stripped = [ln.strip() for ln in decode_lines(raw, path)]
        data = TrainData(path, [(ln,) for ln in stripped if ln], ("text",))
    data.identity = head_identity(raw, path, corpus)
    if len(data) == 0:
        raise StsbenchError(f"train file {path} holds no sentences; pass a file with one sentence a line")
    if len(data) < 2:
        raise StsbenchError(f"train file {path} holds 1 sentence; contrastive training needs at least 2")
    return data


def _read_csv(path: Path, raw: bytes) -> TrainData:
    text = "\n".join(decode_lines(raw, path))
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    if header is None:
        return TrainData(path, [], ("text",))
    header = tuple(h.strip() for h in header)
    if len(header) > 1 and header not in SUP_COLUMNS:
        raise StsbenchError(
            f"{where(path, 1)}: header {','.join(header)!r}; expected one column (unsup) or "
            "sent0,sent1[,hard_neg] (sup SimCSE)"
        )
    rows = []
    for row in reader:
        no = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header) or any(not c.strip() for c in row):
            raise StsbenchError(
                f"{where(path, no)}: expected {len(header)} non-empty field(s) "
                f"({','.join(header)}), found {len(row)}; fix or remove the row"
            )
        rows.append(tuple(c.strip() for c in row))
    return TrainData(path, rows, header)


def epoch_order(n: int, seed: int, epoch: int) -> np.ndarray:
    """Return the row order of ``epoch``: a permutation that depends only on ``(seed, epoch)``."""
    return np.random.default_rng([seed, epoch, 0x5EED]).permutation(n)


def batch_rows(
    data: TrainData, seed: int, epoch: int, index: int, batch_size: int, rank: int = 0, world: int = 1
) -> np.ndarray:
    """Row indices of process ``rank``'s slice of batch ``index`` of ``epoch``.

    The global batch is ``batch_size`` x ``world`` rows, in the same order on every process; process ``rank``
    takes its ``rank``-th ``batch_size`` rows (one process: the whole batch).
    """
    order = epoch_order(len(data), seed, epoch)
    start = (index * world + rank) * batch_size
    return order[start : start + batch_size]


def tokenize(tokenizer, texts: list[str], max_length: int | None, offsets: bool = False) -> dict:
    """Token ids per text (unpadded lists), their special-token masks and, if asked, character offsets."""
    enc = tokenizer(
        texts,
        truncation=max_length is not None,
        max_length=max_length,
        return_special_tokens_mask=True,
        return_offsets_mapping=offsets,
    )
    return dict(enc)


def pad(seqs: list[list[int]], pad_id: int, length: int | None = None) -> dict[str, torch.Tensor]:
    """Right-pad id lists to the longest, or to ``length`` if longer.

    Returns ``input_ids``, ``attention_mask`` and ``token_type_ids``. The type ids are zeros; the encoder drops them for models without segments.
    """
    longest = max([len(s) for s in seqs] + [length or 0])
    ids = torch.full((len(seqs), longest), pad_id, dtype=torch.long)
    mask = torch.zeros((len(seqs), longest), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
        mask[i, : len(s)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}


def mlm_mask(
    input_ids: torch.Tensor, special: torch.Tensor, tokenizer, probability: float, rng: np.random.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Mask as BERT (``DataCollatorForLanguageModeling``) and return (masked ids, labels, -100 elsewhere).

    ``probability`` of the real tokens are picked; of those 80% become [MASK], 10% a random token, 10% stay.

    ``special`` is True on special and padding positions, which are never picked.
    """
    shape = tuple(input_ids.shape)
    picked = (rng.random(shape) < probability) & ~special.numpy()
    labels = input_ids.clone()
    labels[~torch.from_numpy(picked)] = -100
    u = rng.random(shape)
    to_mask = picked & (u < 0.8)
    to_random = picked & (u >= 0.8) & (u < 0.9)
    ids = input_ids.clone()
    ids[torch.from_numpy(to_mask)] = tokenizer.mask_token_id
    random_ids = torch.from_numpy(rng.integers(0, len(tokenizer), size=shape))
    ids[torch.from_numpy(to_random)] = random_ids[torch.from_numpy(to_random)]
    return ids, labels
