"""Fingerprints: the identity of a model's embeddings, a hash of everything that changes an embedding.

A model folder is keyed by its files (:func:`fingerprint`); a live model has no files, so its tensors, config
and tokenizer are hashed (:func:`weights_fingerprint`), unless it is still the folder it was loaded from.

A live model's folder of origin: when its weights are that folder's unchanged, key it as the folder.
``stsbench run --model all-MiniLM-L6-v2`` keys its embeddings by the folder's files; a ``SentenceTransformer``
loaded from the same folder in Python has no files, so :func:`weights_fingerprint` hashes its tensors, and the
two keys never meet. Hashing the folder's tensors instead of its files would change every existing key, so the
live model is checked against its folder (:func:`folder_fingerprint`): every tensor of the folder's weights
file equals the live one (cast to the live dtype), no live parameter is missing from the file, the config and
the tokenizer are the folder's. Then the live model's embeddings are those ``stsbench run`` computes from the
folder with the same settings, and it takes the folder's key with those settings: a CLI run and a Python run
share their cache. Anything else (weights changed by training, a folder moved or deleted since, sharded or
unknown weight files) falls back to hashing the tensors.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from stsbench.encoders import pooling
from stsbench.encoders.resolve import ModelSpec, is_model_dir, resolve_model
from stsbench.errors import StsbenchError
from stsbench.sources import code_digest, library_versions, sha256_files

log = logging.getLogger(__name__)
# config entries that transformers sets while loading or that do not change an encoder's vectors
_CONFIG_NOISE = {"_name_or_path", "transformers_version", "dtype", "torch_dtype", "use_cache"}
# The libraries whose code computes the vectors: their major.minor joins the key (a patch release is taken
# to change no number; a minor one may, as transformers' attention rewrites have)
EMBEDDING_LIBRARIES = ("torch", "transformers", "sentence-transformers")


def embedding_code(pooler: str | None) -> dict[str, str]:
    """What the code that maps a (model, text) to a vector is, for the embedding key.

    The sha256 of stsbench's encoding sources (:data:`stsbench.sources.EMBEDDING_FILES`, their syntax trees: the
    built-in poolers among them), the libraries' major.minor, and for a pooler another package registered
    (``stsbench.poolers`` entry points) its package's code (:meth:`stsbench.registry.Registry.plugin`: every
    file of it, so an edited helper counts). An edited pooler, encoder or library version is a new key: a warm
    cache never answers with the vectors of other code.
    """
    code = {"stsbench": code_digest("embedding"), **library_versions(EMBEDDING_LIBRARIES)}
    if pooler is not None and pooler != "declared":
        plugin = pooling.POOLER_REGISTRY.plugin(pooler)  # looked up now: a test may swap the registry
        if plugin is not None:
            code["pooler"] = hashlib.sha256(json.dumps(plugin, sort_keys=True).encode()).hexdigest()
    return code


def tokenizer_state(tokenizer) -> str:
    """The tokenizer's rules and vocabulary as text (what its fingerprint hashes)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:  # without the truncation/padding state each call of the tokenizer leaves behind
        state = json.loads(backend.to_str())
        state.pop("truncation", None)
        state.pop("padding", None)
        return json.dumps(state, sort_keys=True)
    return json.dumps(sorted(tokenizer.get_vocab().items()))


_MODEL_SUFFIXES = {".json", ".txt", ".safetensors", ".bin", ".model", ".pt", ".pth"}
_NOT_MODEL = {"stsbench.json", "train_log.jsonl", "data_config.json", "README.md", "trainer_state.json"}


def model_files(spec: ModelSpec) -> list[Path]:
    """The files that define the model's embeddings: weights, configs, tokenizer, module configs."""
    dirs = [spec.path] + [spec.path / d for d in spec.module_dirs if d]
    listed = [f for d in dict.fromkeys(dirs) if d.is_dir() for f in sorted(d.iterdir())]
    return [f for f in listed if f.is_file() and f.suffix in _MODEL_SUFFIXES and f.name not in _NOT_MODEL]


def fingerprint(
    spec: ModelSpec, pooler: str, max_length: int | None, dtype: str, prompt: str | None = None
) -> str:
    """Hex digest over the model files' contents and every setting that changes an embedding.

    A ``prompt`` (:func:`stsbench.encoders.resolve.choose_prompt`) joins the settings: prompted and unprompted
    vectors never share a key (without one the digest is the one it was before prompts existed).
    """
    settings = dict(code=embedding_code(pooler), kind=spec.kind, pooler=pooler, max_length=max_length)
    settings.update(dtype=dtype, normalize=spec.normalize, lower=spec.do_lower_case)
    settings.update({"prompt": prompt} if prompt else {})
    h = hashlib.sha256(json.dumps(settings, sort_keys=True).encode())
    # the one byte digest, memoised by each file's stat
    for f, sha in sha256_files(model_files(spec)).items():
        h.update(f"{f.relative_to(spec.path)}:{sha}\n".encode())
    return h.hexdigest()[:32]


def weights_fingerprint(module, tokenizer=None, settings: dict[str, Any] | None = None) -> str:
    """Hex digest over every tensor of ``module.state_dict()``, its config, the tokenizer and ``settings``."""
    import torch

    settings = {"code": embedding_code((settings or {}).get("pooler")), **(settings or {})}
    h = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode())
    config = getattr(module, "config", None)
    if config is not None and hasattr(config, "to_json_string"):
        h.update(config.to_json_string(use_diff=False).encode())
    for name, tensor in sorted(module.state_dict().items()):
        h.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}\n".encode())
        h.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    if tokenizer is not None:
        h.update(tokenizer_state(tokenizer).encode())
    return h.hexdigest()[:32]


def origin_folder(model) -> Path | None:
    """The model folder ``model`` (a transformers model) was loaded from, if it still exists."""
    name = getattr(getattr(model, "config", None), "_name_or_path", None)
    if not name or not Path(name).is_dir():
        return None
    folder = Path(name).resolve()
    # a sentence-transformers stack whose Transformer module sits in a subfolder: the stack is the parent's
    if not (folder / "modules.json").is_file() and (folder.parent / "modules.json").is_file():
        folder = folder.parent
    return folder if is_model_dir(folder) else None


def same_weights(model, folder: Path) -> bool:
    """Every tensor of ``folder``'s weights equals ``model``'s, and every parameter of ``model`` is in the file."""
    import torch
    from safetensors.torch import load_file

    try:  # sharded or another format: not worth reading here
        if (folder / "model.safetensors").is_file():
            stored = load_file(str(folder / "model.safetensors"), device="cpu")
        elif (folder / "pytorch_model.bin").is_file():
            stored = torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
        else:
            return False
    except Exception:  # unreadable: the live model cannot be shown to be the folder's
        return False
    live = model.state_dict()
    prefix = f"{getattr(model, 'base_model_prefix', '')}."
    found = set()
    for key, tensor in stored.items():
        name = key if key in live else key.removeprefix(prefix)
        if name not in live:
            if key.endswith("position_ids"):
                continue  # a buffer older checkpoints saved and newer models rebuild
            return False
        mine = live[name]
        if mine.shape != tensor.shape or not torch.equal(mine.detach().cpu(), tensor.to(mine.dtype)):
            return False
        found.add(name)
    return {n for n, _ in model.named_parameters()} <= found


def _same_config_and_tokenizer(model, tokenizer, folder: Path) -> bool:
    from transformers import AutoConfig, AutoTokenizer

    try:
        stored = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        theirs = AutoConfig.from_pretrained(folder).to_dict() if stored else {}
        their_tokenizer = AutoTokenizer.from_pretrained(folder)
    except Exception:  # a config or tokenizer that does not load: the live model cannot be this one
        return False
    mine = model.config.to_dict()
    keys = (set(mine) | set(theirs)) - _CONFIG_NOISE
    same_config = all(mine.get(k) == theirs.get(k) for k in keys)
    return same_config and tokenizer_state(tokenizer) == tokenizer_state(their_tokenizer)


def folder_fingerprint(model, tokenizer, live: ModelSpec, dtype: str, prompt: str | None) -> str | None:
    """The key ``stsbench run`` gives the folder ``model`` came from with ``live``'s settings; None if it changed.

    ``live``: the pooler, length, normalisation and lower-casing the live model runs with.
    """
    folder = origin_folder(model)
    if folder is None:
        return None
    try:
        spec: ModelSpec = resolve_model(str(folder))
    except StsbenchError:
        return None
    weights = spec.path if (spec.path / "config.json").is_file() else None
    if weights is None or not _same_config_and_tokenizer(model, tokenizer, weights):
        return None
    if not same_weights(model, weights):
        log.info("%s: the live model's weights differ from the folder's; its tensors key the cache", folder)
        return None
    # the settings the live encoder runs with are hashed as a run on the folder with them would hash them
    spec = replace(spec, normalize=live.normalize, do_lower_case=live.do_lower_case)
    return fingerprint(spec, live.pooler, live.max_length, dtype, prompt=prompt)
