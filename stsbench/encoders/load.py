"""From what the user passes (a name, a folder, a live model) to an encoder, wrapped by the embedding cache."""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path

from stsbench.encoders.base import Encoder
from stsbench.encoders.folder import clamp_max_length
from stsbench.encoders.options import EncodeOptions
from stsbench.encoders.pooling import check_pooler
from stsbench.encoders.resolve import ModelSpec, resolve_model
from stsbench.errors import StsbenchError
from stsbench.paths import default_cache_dir

log = logging.getLogger("stsbench.encoders")  # the package's logger, as before the loader had its module
SIMCSE_DEFAULT_POOLER = "cls"  # SimCSE's evaluation.py default, for a plain HF model that declares nothing


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
    options = EncodeOptions(
        pooler=pooler,
        max_length=max_length,
        device=device,
        dtype=dtype,
        prompt=prompt,
        prompt_name=prompt_name,
        revision=revision,
        cache_dir=cache_dir,
        use_cache=use_cache,
    )
    return build_encoder(model, options, tokenizer=tokenizer)


def build_encoder(model, options: EncodeOptions, *, tokenizer=None) -> Encoder:
    """:func:`load_encoder` with its keywords as one :class:`EncodeOptions` (``batch_size`` is the caller's)."""
    from stsbench.encoders.cache import CachedEncoder
    from stsbench.encoders.fingerprint import fingerprint
    from stsbench.encoders.hf import HFEncoder, SentenceTransformerEncoder
    from stsbench.encoders.prompts import check_prompt_options, choose_prompt, stored_prompts

    check_prompt_options(options.prompt, options.prompt_name)
    root = Path(options.cache_dir) if options.cache_dir is not None else default_cache_dir()
    if not isinstance(model, (str, Path)):
        from stsbench.encoders.live import live_encoder

        # a live model still equal to its folder is keyed by the folder's files
        live = live_encoder(model, tokenizer, options)
        return CachedEncoder(live, root) if options.use_cache and live.info.fingerprint else live
    spec = resolve_model(str(model), options.revision)
    text, name = choose_prompt(*stored_prompts(spec.path), options.prompt, options.prompt_name, spec.name)
    chosen = choose_pooler(spec, options.pooler)
    if chosen != "declared" and not (spec.path / "config.json").is_file():
        raise StsbenchError(
            f"{spec.path} has no config.json at its root; drop --pooler to use its declared modules"
        )
    if chosen != "declared" and (spec.kind != "sentence-transformers" or options.pooler is not None):
        # An explicit SimCSE pooler means the raw pooled vector, as SimCSE evaluates. The spec must be final
        # before the fingerprint is taken: it hashes `normalize`, so raw and normalised vectors get two keys.
        spec = replace(spec, normalize=False)
    max_length = options.max_length
    if max_length is not None:
        max_length = clamp_max_length(spec.path, max_length)  # before the fingerprint: it keys the cache
    length = max_length if max_length is not None else spec.max_length
    fp = fingerprint(spec, chosen, length, options.dtype, prompt=text)
    resolved = replace(options, pooler=chosen, max_length=max_length, prompt=text, prompt_name=name)
    if chosen == "declared":
        enc: Encoder = SentenceTransformerEncoder(spec, resolved, fingerprint=fp)
    else:
        enc = HFEncoder(spec, replace(resolved, max_length=length), fingerprint=fp)
    return CachedEncoder(enc, root) if options.use_cache else enc
