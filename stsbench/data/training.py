"""Training corpora read into rows: the one reader of ``--train-file`` and ``--train-dataset``.

A text file (one sentence a line; blank lines skipped) or a CSV with a header, as SimCSE's ``train.py`` reads
them: one column (any name) is unsup, ``sent0,sent1[,hard_neg]`` is sup. A corpus name (``wiki1m``) is found
in the data folder (:mod:`stsbench.data.corpora`). ``--train-dataset``: a Hugging Face ``datasets`` dataset, a
folder written by ``Dataset.save_to_disk`` (``datasets.load_from_disk``), a folder of data files or data files
(``.txt``, ``.csv``, ``.json``/``.jsonl``, ``.parquet``) or a dataset name in the local cache
(``datasets.load_dataset``; offline with ``HF_DATASETS_OFFLINE=1``); one column (``--text-column``, else
``text``, else the only column) is unsup, ``sent0,sent1[,hard_neg]`` columns are sup SimCSE. Either way the
rows are one :class:`TrainData`, whose ``identity`` the run's provenance records: the corpus name, file, lines
read and their sha256 (:func:`~stsbench.data.corpora.head_identity`), or the dataset, split, columns, rows
read, the dataset's fingerprint and the sha256 of the rows' text (for one column: of the rows as
newline-ended lines, the same digest as a text file of those lines). No torch here: the trainer tokenizes
(:mod:`stsbench.train.data`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stsbench.data.corpora import first_lines, head_identity, resolve_train_file
from stsbench.data.integrity import decode_lines
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
    """The training rows of ``cfg`` (an object with the training options): its file, corpus or dataset.

    The first ``train_lines`` of its ``train_file`` (a path or a corpus name) or of its ``train_dataset``.
    """
    if getattr(cfg, "train_dataset", None):
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


BUILDERS = {".txt": "text", ".csv": "csv", ".json": "json", ".jsonl": "json", ".parquet": "parquet"}


def read_train_dataset(
    name: str, *, split: str | None = None, column: str | None = None, rows: int | None = None
) -> TrainData:
    """The first ``rows`` rows (all: None) of ``name``'s ``split`` (default: train, or its only split)."""
    dataset, where = _load(name, split)
    columns = _columns(dataset, column, name)
    fingerprint = getattr(dataset, "_fingerprint", None)  # of the split as loaded, before the first rows
    count = len(dataset) if rows is None else min(rows, len(dataset))
    if count < len(dataset):
        dataset = dataset.select(range(count))
    values = [dataset[c] for c in columns]
    data: list[tuple[str, ...]] = []
    for index, row in enumerate(zip(*values, strict=True)):
        if any(not isinstance(v, str) for v in row):
            kinds = ", ".join(type(v).__name__ for v in row)
            raise StsbenchError(
                f"{name}: row {index} of {','.join(columns)} is {kinds}, not text; pick a text column"
            )
        fields = tuple(v.strip() for v in row)
        if all(fields):
            data.append(fields)
        elif len(columns) > 1:  # one column: blank rows are skipped, as blank lines of a text file
            raise StsbenchError(
                f"{name}: row {index} has an empty field of {','.join(columns)}; fix or drop the row"
            )
    if len(data) < 2:
        raise StsbenchError(
            f"{name} ({','.join(columns)}) holds {len(data)} sentence(s); contrastive training needs at least 2"
        )
    if len(columns) == 1:
        text = "".join(v + "\n" for v in values[0][:count]).encode("utf-8")
    else:
        text = json.dumps([list(r) for r in zip(*values, strict=True)], ensure_ascii=False).encode("utf-8")
    identity: dict[str, Any] = {
        "name": name,
        "dataset": where,
        "split": split_name(dataset, split),
        "columns": list(columns),
        "rows": count,
        "fingerprint": fingerprint,
        "sha256": hashlib.sha256(text).hexdigest(),
    }
    return TrainData(Path(where), data, columns if len(columns) > 1 else ("text",), identity)


def split_name(dataset: Any, asked: str | None) -> str | None:
    """The split the rows came from, as ``datasets`` names it (None: a dataset saved without one)."""
    split = getattr(dataset, "split", None) or asked
    return None if split is None else str(split)


def _load(name: str, split: str | None) -> tuple[Any, str]:
    """The dataset of ``split`` and where it was found (an absolute path, or the name)."""
    try:
        import datasets
    except ImportError:
        raise StsbenchError(
            "--train-dataset needs the datasets package: pip install 'stsbench[integrations]'"
        ) from None
    datasets.disable_progress_bars()
    path = Path(name).expanduser()
    try:
        if path.is_dir() and any((path / f).is_file() for f in ("state.json", "dataset_dict.json")):
            where = str(path.resolve())
            loaded = datasets.load_from_disk(where)  # what Dataset.save_to_disk wrote
        elif path.is_file():
            builder = BUILDERS.get(path.suffix.lower())
            if builder is None:
                raise StsbenchError(
                    f"--train-dataset {name}: a {path.suffix or 'suffix-less'} file; give "
                    f"{', '.join(BUILDERS)} data files, a save_to_disk folder, or use --train-file"
                )
            where = str(path.resolve())
            loaded = datasets.load_dataset(builder, data_files=where)
        else:
            where = str(path.resolve()) if path.exists() else name
            loaded = datasets.load_dataset(where)
    except StsbenchError:
        raise
    except Exception as exc:  # noqa: BLE001 - datasets raises many kinds; the user gets its first line
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise StsbenchError(
            f"--train-dataset {name}: cannot load it ({first}); pass a save_to_disk folder, data files or a "
            "dataset in the local cache"
        ) from None
    if isinstance(loaded, datasets.DatasetDict):
        splits = list(loaded)
        chosen = split or ("train" if "train" in splits else splits[0] if len(splits) == 1 else None)
        if chosen not in splits:
            raise StsbenchError(
                f"--train-dataset {name} has splits {', '.join(splits)}; pick one with --train-split"
            )
        return loaded[chosen], where
    if split is not None and loaded.split is not None and str(loaded.split) != split:
        raise StsbenchError(
            f"--train-dataset {name} holds split {loaded.split}, not {split}; drop --train-split"
        )
    return loaded, where


def _columns(dataset: Any, column: str | None, name: str) -> tuple[str, ...]:
    """The column(s) read: ``column``; else sent0,sent1[,hard_neg]; else text; else the only one."""
    names = list(dataset.column_names)
    if column is not None:
        if column not in names:
            raise StsbenchError(f"--text-column {column!r} is not a column of {name} ({', '.join(names)})")
        return (column,)
    for sup in reversed(SUP_COLUMNS):
        if set(sup) <= set(names):
            return sup
    if "text" in names:
        return ("text",)
    if len(names) == 1:
        return (names[0],)
    raise StsbenchError(f"{name} has columns {', '.join(names)}; pick the sentences with --text-column")
