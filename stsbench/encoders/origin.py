"""A live model's folder of origin: when its weights are that folder's unchanged, key it as the folder.

``stsbench run --model all-MiniLM-L6-v2`` keys its embeddings by the folder's files
(:func:`stsbench.encoders.fingerprint.fingerprint`); a ``SentenceTransformer`` loaded from the same folder in
Python has no files, so :func:`stsbench.encoders.live.weights_fingerprint` hashes its tensors, and the two
keys never meet. Hashing the folder's tensors instead of its files would change every existing key, so the
live model is checked against its folder: every tensor of the folder's weights file equals the live one
(cast to the live dtype), no live parameter is missing from the file, the config and the tokenizer are the
folder's. Then the live model's embeddings are those ``stsbench run`` computes from the folder with the same
settings, and it takes the folder's key with those settings: a CLI run and a Python run share their cache.
Anything else (weights changed by training, a folder moved or deleted since, sharded or unknown weight
files) falls back to hashing the tensors.
"""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

from stsbench.encoders.fingerprint import fingerprint, tokenizer_state
from stsbench.encoders.resolve import ModelSpec, is_model_dir, resolve_model
from stsbench.errors import StsbenchError

log = logging.getLogger(__name__)
# config entries that transformers sets while loading or that do not change an encoder's vectors
_CONFIG_NOISE = {"_name_or_path", "transformers_version", "dtype", "torch_dtype", "use_cache"}


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


def _file_tensors(folder: Path) -> dict | None:
    import torch

    if (folder / "model.safetensors").is_file():
        from safetensors.torch import load_file

        return load_file(str(folder / "model.safetensors"), device="cpu")
    if (folder / "pytorch_model.bin").is_file():
        return torch.load(folder / "pytorch_model.bin", map_location="cpu", weights_only=True)
    return None  # sharded or another format: not worth reading here


def same_weights(model, folder: Path) -> bool:
    """Every tensor of ``folder``'s weights equals ``model``'s, and every parameter of ``model`` is in the file."""
    import torch

    try:
        stored = _file_tensors(folder)
    except Exception:  # unreadable: the live model cannot be shown to be the folder's
        return False
    if stored is None:
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


def _same_config(model, folder: Path) -> bool:
    try:
        stored = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    from transformers import AutoConfig

    try:
        theirs = AutoConfig.from_pretrained(folder).to_dict() if stored else {}
    except Exception:  # a config transformers cannot read: the live model cannot be shown to be this one
        return False
    mine = model.config.to_dict()
    keys = (set(mine) | set(theirs)) - _CONFIG_NOISE
    return all(mine.get(k) == theirs.get(k) for k in keys)


def _same_tokenizer(tokenizer, folder: Path) -> bool:
    from transformers import AutoTokenizer

    try:
        theirs = AutoTokenizer.from_pretrained(folder)
    except Exception:
        return False
    return tokenizer_state(tokenizer) == tokenizer_state(theirs)


def folder_fingerprint(
    model,
    tokenizer,
    *,
    pooler: str,
    max_length: int | None,
    normalize: bool,
    lower: bool,
    dtype: str,
    prompt: str | None,
) -> str | None:
    """The key ``stsbench run`` gives the folder ``model`` came from with these settings; None if it changed."""
    folder = origin_folder(model)
    if folder is None:
        return None
    try:
        spec: ModelSpec = resolve_model(str(folder))
    except StsbenchError:
        return None
    weights = spec.path if (spec.path / "config.json").is_file() else None
    if weights is None or not (_same_config(model, weights) and _same_tokenizer(tokenizer, weights)):
        return None
    if not same_weights(model, weights):
        log.info("%s: the live model's weights differ from the folder's; its tensors key the cache", folder)
        return None
    # the settings the live encoder runs with are hashed as a run on the folder with them would hash them
    spec = replace(spec, normalize=normalize, do_lower_case=lower)
    return fingerprint(spec, pooler, max_length, dtype, prompt=prompt)
