"""What a model folder must hold before it loads, and how many token positions its model reads.

A folder that lost its tokenizer still loads in transformers 5 (an empty five-token BERT vocabulary: every word
becomes ``[UNK]``) and scores STS16 about 10 instead of 79; a half-copied or half-exported one can lack the
module folders its ``modules.json`` names. :func:`check_model_folder` refuses such folders from their file
listing alone (no weights read, nothing imported), :func:`check_vocabulary` once the tokenizer has loaded.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from stsbench.errors import StsbenchError

log = logging.getLogger(__name__)
# Left in a checkpoint folder while an export moves its files into place (stsbench.train.checkpoint): the
# folder then mixes two checkpoints until the move is finished.
EXPORT_COMMIT = ".export-ready"
WEIGHTS = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)
# sentence-transformers modules that save nothing (the embedded all-MiniLM-L6-v2 names a 2_Normalize it lacks)
_STATELESS = {"Normalize"}
# a tokenizer's vocabulary: WordPiece, BPE, sentencepiece, tiktoken, or the fast tokenizer's own file
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "vocab.json", "merges.txt")
_TOKENIZER_SUFFIXES = (".model", ".tiktoken")
# Models whose position ids start after the padding id (RoBERTa's create_position_ids_from_input_ids): their
# position table holds max_position_embeddings - pad_token_id - 1 tokens (514 rows, 512 tokens).
_PADDED_POSITIONS = {
    "roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "data2vec-text", "mpnet", "ibert",
    "roberta-prelayernorm", "xmod", "luke", "markuplm", "lilt", "layoutlmv3",
}  # fmt: skip
# Embedding matrices are padded to a multiple of 64 or 128 rows beyond the tokenizer (T5 32,100 of 32,128,
# phi-2 50,295 of 51,200: 98%); a tokenizer that covers less than this share lost its vocabulary.
MIN_COVERAGE = 0.9


def module_class(type_name: str) -> str:
    """The class of a ``modules.json`` type (``""`` for another package's module).

    ``Pooling`` for ``sentence_transformers.models.Pooling`` (<= 5.x) and for
    ``sentence_transformers.sentence_transformer.modules.pooling.Pooling`` (what ``save()`` writes in 6.x).
    """
    return type_name.rsplit(".", 1)[-1] if type_name.startswith("sentence_transformers.") else ""


def _modules(path: Path) -> list[dict]:
    try:
        modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []  # resolve_model reports an unreadable modules.json itself
    return [m for m in modules if isinstance(m, dict)] if isinstance(modules, list) else []


def transformer_dir(path: Path) -> Path | None:
    """The transformers model's folder: ``path``, the Transformer module's folder of a stack, or None (none)."""
    modules = _modules(path)
    for m in modules:
        if module_class(str(m.get("type", ""))) == "Transformer":
            return path / str(m.get("path", ""))
    return None if modules else path


def _has_tokenizer(folder: Path) -> bool:
    return any((folder / name).is_file() for name in _TOKENIZER_FILES) or any(
        f.suffix in _TOKENIZER_SUFFIXES for f in folder.iterdir() if f.is_file()
    )


def _tokenizer_elsewhere(folder: Path) -> bool:
    """A sentence-transformers Transformer that loads its tokenizer from ``tokenizer_name_or_path``."""
    try:
        cfg = json.loads((folder / "sentence_bert_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(cfg, dict) and bool(cfg.get("tokenizer_name_or_path"))


def check_model_folder(path: Path) -> None:
    """Refuse, in one line naming what is missing, a folder that cannot give the model's embeddings.

    Checked: no export left half done; every module folder ``modules.json`` names (except stateless
    ones) exists; the transformers folder holds config.json, weights and a tokenizer.
    """
    fix = "re-download or re-save the model (a checkpoint: re-run its `stsbench train` with --resume)"
    if (path / EXPORT_COMMIT).exists():
        raise StsbenchError(
            f"{path}: an export stopped while moving the new checkpoint's files into place ({EXPORT_COMMIT}/ is "
            "left), so the folder holds part of it; re-run its `stsbench train` command with --resume to finish it"
        )
    for m in _modules(path):
        sub = str(m.get("path", ""))
        if sub and module_class(str(m.get("type", ""))) not in _STATELESS and not (path / sub).is_dir():
            raise StsbenchError(
                f"{path}: modules.json names the module folder {sub}/, which is missing; {fix}"
            )
    folder = transformer_dir(path)
    if folder is None:
        return  # a stack without a transformers model (static embeddings...): sentence-transformers loads it
    if not (folder / "config.json").is_file():
        raise StsbenchError(f"{folder} has no config.json; {fix}")
    if not any((folder / w).is_file() for w in WEIGHTS):
        raise StsbenchError(f"{folder} has no weights ({' or '.join(WEIGHTS[::2])}); {fix}")
    if not _has_tokenizer(folder) and not _tokenizer_elsewhere(folder):
        raise StsbenchError(
            f"{folder} has no tokenizer (none of tokenizer.json, vocab.txt, vocab.json, "
            f"tokenizer_config.json, *.model); every word would become [UNK]: {fix}"
        )


def check_vocabulary(tokenizer, vocab_size: int | None, path: Path) -> None:
    """Refuse a tokenizer that covers less than :data:`MIN_COVERAGE` of the model's embedding rows."""
    if not vocab_size:
        return
    size = len(tokenizer)
    if size < MIN_COVERAGE * vocab_size:
        raise StsbenchError(
            f"{path}: the tokenizer holds {size} tokens for the model's {vocab_size} embeddings (config.json "
            f"vocab_size; a tokenizer must cover at least {MIN_COVERAGE:.0%} of them): its vocabulary file is "
            "missing or truncated; copy the tokenizer files of the model the weights came from"
        )


def check_token_ids(ids: list[list[int]], texts, vocab_size: int | None, name: str) -> None:
    """Refuse token ids past the embedding matrix (a tokenizer of another model): torch would fail mid-batch."""
    if not vocab_size:
        return
    for seq, text in zip(ids, texts, strict=True):
        if seq and max(seq) >= vocab_size:
            raise StsbenchError(
                f"model {name}: the tokenizer gave token id {max(seq)} for {text[:60]!r}, past the model's "
                f"{vocab_size} embeddings (config.json vocab_size); the tokenizer belongs to another model"
            )


def position_limit(config: dict) -> int | None:
    """How many tokens the model reads: max_position_embeddings, less RoBERTa's padding offset."""
    positions = config.get("max_position_embeddings")
    if not isinstance(positions, int) or positions <= 0:
        return None
    if config.get("model_type") in _PADDED_POSITIONS:
        positions -= int(config.get("pad_token_id") or 0) + 1
    return positions


def read_config(folder: Path) -> dict:
    """``folder/config.json`` as a dict ({} when absent or unreadable: the loader says why later)."""
    try:
        cfg = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return cfg if isinstance(cfg, dict) else {}


def clamp_max_length(path: Path, max_length: int) -> int:
    """``--max-length`` capped at the positions the model reads (a note when capped), as sentence-transformers does.

    Past them the position embeddings run out: a longer sentence would stop the run with a shape error.
    """
    folder = transformer_dir(path)
    limit = position_limit(read_config(folder)) if folder is not None else None
    if limit is None or max_length <= limit:
        return max_length
    log.info(
        "--max-length %d is more than %s reads (%d tokens); truncating at %d", max_length, path, limit, limit
    )
    return limit
