"""From what the user passes (a name, a folder, a live model) to an encoder, wrapped by the embedding cache."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

from stsbench.encoders.base import Encoder
from stsbench.encoders.folder import clamp_max_length
from stsbench.encoders.pooling import check_pooler
from stsbench.encoders.resolve import ModelSpec, resolve_model
from stsbench.errors import StsbenchError
from stsbench.paths import default_cache_dir

log = logging.getLogger("stsbench.encoders")  # the package's logger, as before the loader had its module
SIMCSE_DEFAULT_POOLER = "cls"  # SimCSE's evaluation.py default, for a plain HF model that declares nothing


def _hash_memo(cache_dir: Path | None) -> tuple[dict[str, str], Path | None]:
    if cache_dir is None:
        return {}, None
    path = cache_dir / "file_hashes.json"
    try:
        return json.loads(path.read_text()), path
    except (OSError, ValueError):
        return {}, path


def choose_pooler(spec: ModelSpec, pooler: str | None) -> str:
    """``--pooler`` if given, else what the model declares, else SimCSE's default (with a warning)."""
    if pooler is not None:
        return check_pooler(pooler)
    if spec.pooler is not None:
        return spec.pooler
    if spec.kind == "sentence-transformers-full":
        return "declared"
    log.info(
        "%s declares no pooling; using SimCSE's default --pooler %s "
        "(unsupervised SimCSE/ESimCSE checkpoints need --pooler cls_before_pooler)",
        spec.name,
        SIMCSE_DEFAULT_POOLER,
    )
    return SIMCSE_DEFAULT_POOLER


def load_encoder(
    model,
    pooler: str | None = None,
    max_length: int | None = None,
    device: str | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    dtype: str = "float32",
    tokenizer=None,
    revision: str | None = None,
    prompt: str | None = None,
    prompt_name: str | None = None,
) -> Encoder:
    """Resolve ``model``, choose its pooler, and return an encoder (wrapped by the cache unless ``use_cache=False``).

    Nothing heavy is loaded here: the network is only built when a text is missing from the cache.
    ``model`` may also be a live object (a ``SentenceTransformer``, a ``transformers`` model, anything with
    ``encode``): see :func:`stsbench.encoders.live.as_encoder`; a transformers model then needs ``tokenizer``.
    ``prompt`` / ``prompt_name``: the text prepended to every sentence, or the name of one the model stores
    (:mod:`stsbench.encoders.prompts`); it keys the cache and is recorded with the results.
    """
    from stsbench.encoders.cache import CachedEncoder
    from stsbench.encoders.fingerprint import fingerprint
    from stsbench.encoders.hf import HFEncoder, SentenceTransformerEncoder
    from stsbench.encoders.prompts import check_prompt_options, choose_prompt, stored_prompts
    from stsbench.files import atomic_write_text

    check_prompt_options(prompt, prompt_name)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    memo, memo_path = _hash_memo(root if use_cache else None)
    before = dict(memo)
    if not isinstance(model, (str, Path)):
        from stsbench.encoders.live import as_encoder

        live = as_encoder(
            model,
            tokenizer,
            pooler=pooler,
            max_length=max_length,
            device=device,
            prompt=prompt,
            prompt_name=prompt_name,
            hash_memo=memo,  # a live model still equal to its folder is keyed by the folder's files
        )
        if memo_path is not None and memo != before:
            atomic_write_text(memo_path, json.dumps(memo, indent=1, sort_keys=True))
        return CachedEncoder(live, root) if use_cache and live.info.fingerprint else live
    spec = resolve_model(str(model), revision)
    text, name = choose_prompt(*stored_prompts(spec.path), prompt, prompt_name, spec.name)
    chosen = choose_pooler(spec, pooler)
    if chosen != "declared" and not (spec.path / "config.json").is_file():
        raise StsbenchError(
            f"{spec.path} has no config.json at its root; drop --pooler to use its declared modules"
        )
    if chosen != "declared" and (spec.kind != "sentence-transformers" or pooler is not None):
        # An explicit SimCSE pooler means the raw pooled vector, as SimCSE evaluates. The spec must be final
        # before the fingerprint is taken: it hashes `normalize`, so raw and normalised vectors get two keys.
        spec = replace(spec, normalize=False)
    if max_length is not None:
        max_length = clamp_max_length(spec.path, max_length)  # before the fingerprint: it keys the cache
    length = max_length if max_length is not None else spec.max_length
    fp = fingerprint(spec, chosen, length, dtype, memo, prompt=text)
    if memo_path is not None and memo != before:
        atomic_write_text(memo_path, json.dumps(memo, indent=1, sort_keys=True))
    common = {"fingerprint": fp, "device": device, "dtype": dtype, "prompt": text, "prompt_name": name}
    if chosen == "declared":
        enc: Encoder = SentenceTransformerEncoder(spec, max_length=max_length, **common)
    else:
        enc = HFEncoder(spec, pooler=chosen, max_length=length, **common)
    return CachedEncoder(enc, root) if use_cache else enc
