"""From what the user passes (a name, a folder, a live model) to an encoder, wrapped by the embedding cache.

A name or a folder is resolved (:mod:`stsbench.encoders.resolve`), its pooler, length and prompt chosen, and
its files fingerprinted; nothing heavy loads until a text is missing from the cache. A model already in memory
is accepted too: a ``transformers`` model + tokenizer, a ``SentenceTransformer``, or any object with
``encode(list[str]) -> array``.

Live models have no files to hash, so their fingerprint is taken from their weights (every tensor of the
``state_dict``), their config and their tokenizer: the embedding cache stays correct when the weights change,
as it does for a folder (:mod:`stsbench.encoders.fingerprint`). A model still equal to the folder it was
loaded from takes that folder's key instead (:func:`stsbench.encoders.fingerprint.folder_fingerprint`), so it
finds what ``stsbench run`` cached. A prompt (``prompt`` / ``prompt_name``) is prepended to every text and
joins the key; a ``SentenceTransformer`` brings its own stored prompts. A ``SentenceTransformer`` whose
modules are Transformer + mean/CLS Pooling (+ Normalize) runs through the same :class:`HFEncoder` as
``stsbench run`` on its folder, so the figures are the CLI's; any other module stack is encoded by
``SentenceTransformer.encode``.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from stsbench.encoders.base import EncodeOptions, Encoder, EncoderInfo
from stsbench.encoders.cache import CachedEncoder
from stsbench.encoders.fingerprint import fingerprint, folder_fingerprint, origin_folder, weights_fingerprint
from stsbench.encoders.hf import HFEncoder, SentenceTransformerEncoder, check_finite, pick_device
from stsbench.encoders.pooling import check_pooler
from stsbench.encoders.resolve import (
    ModelSpec,
    active_pooling,
    check_prompt_options,
    choose_prompt,
    clamp_max_length,
    resolve_model,
    stored_prompts,
)
from stsbench.errors import StsbenchError
from stsbench.paths import default_cache_dir

log = logging.getLogger("stsbench.encoders")  # the package's logger, as before the loader had its module
SIMCSE_DEFAULT_POOLER = "cls"  # SimCSE's evaluation.py default, for a plain HF model that declares nothing
_LIVE_OPTIONS = ("pooler", "max_length", "device", "prompt", "prompt_name")  # what a live model reads of them


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
    ``encode``): see :func:`as_encoder`; a transformers model then needs ``tokenizer``.
    ``prompt`` / ``prompt_name``: the text prepended to every sentence, or the name of one the model stores
    (:func:`stsbench.encoders.resolve.choose_prompt`); it keys the cache and is recorded with the results.
    """
    options = {k: v for k, v in locals().items() if k not in ("model", "tokenizer")}  # EncodeOptions' fields
    return build_encoder(model, EncodeOptions(**options), tokenizer=tokenizer)


def build_encoder(model, options: EncodeOptions, *, tokenizer=None) -> Encoder:
    """:func:`load_encoder` with its keywords as one :class:`EncodeOptions` (``batch_size`` is the caller's)."""
    check_prompt_options(options.prompt, options.prompt_name)
    root = Path(options.cache_dir) if options.cache_dir is not None else default_cache_dir()
    if not isinstance(model, (str, Path)):
        # a live model still equal to its folder is keyed by the folder's files
        live = as_encoder(model, tokenizer, **{k: getattr(options, k) for k in _LIVE_OPTIONS})
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
    # clamped before the fingerprint: it keys the cache
    max_length = clamp_max_length(spec.path, options.max_length) if options.max_length is not None else None
    length = max_length if max_length is not None else spec.max_length
    fp = fingerprint(spec, chosen, length, options.dtype, prompt=text)
    resolved = replace(options, pooler=chosen, max_length=max_length, prompt=text, prompt_name=name)
    if chosen == "declared":
        enc: Encoder = SentenceTransformerEncoder(spec, resolved, fingerprint=fp)
    else:
        enc = HFEncoder(spec, replace(resolved, max_length=length), fingerprint=fp)
    return CachedEncoder(enc, root) if options.use_cache else enc


def _name_of(model, name: str | None) -> str:
    config = getattr(model, "config", None)
    path = getattr(config, "_name_or_path", None) or getattr(model, "name_or_path", None)
    return name or f"{path or type(model).__name__} (live)"


def live_hf_encoder(
    model,
    tokenizer,
    options: EncodeOptions,
    *,
    normalize: bool = False,
    lower: bool = False,
    name: str | None = None,
    kind: str = "hf-live",
) -> HFEncoder:
    """:class:`HFEncoder` around a loaded ``transformers`` model and tokenizer (SimCSE's default pooler ``cls``).

    ``options.prompt`` is the text to prepend (already chosen: :func:`stsbench.encoders.resolve.choose_prompt`);
    the dtype is the model's own.
    """
    pooler = check_pooler(options.pooler or "cls")
    max_length, prompt = options.max_length, options.prompt
    if tokenizer is None:
        raise StsbenchError("a transformers model needs its tokenizer: pass tokenizer=AutoTokenizer...")
    param = next(model.parameters(), None)
    dtype = str(param.dtype).removeprefix("torch.") if param is not None else "float32"
    spec = ModelSpec(_name_of(model, name), Path(), kind, pooler, normalize, max_length, lower)
    key = folder_fingerprint(model, tokenizer, spec, dtype, prompt)
    if key is None:
        same = {"max_length": max_length, "normalize": normalize, "lower": lower}
        settings = {"kind": kind, "pooler": pooler, **same, **({"prompt": prompt} if prompt else {})}
        key = weights_fingerprint(model, tokenizer, settings)
    enc = HFEncoder(spec, replace(options, pooler=pooler, dtype=dtype), fingerprint=key)
    enc.info = replace(enc.info, path="(in memory)")
    live = param is not None and options.device is None  # where the model is, unless asked otherwise
    enc.device = str(param.device) if live else pick_device(options.device)
    enc.attach(model, tokenizer)
    return enc


def _st_native(st) -> tuple[str, bool] | None:
    """(pooler, normalize) when ``st`` is Transformer + mean/CLS Pooling (+ Normalize), else None."""
    names = [type(m).__name__ for m in st]
    native = names[:2] == ["Transformer", "Pooling"] and names[2:] in ([], ["Normalize"])
    pooler = active_pooling(st[1].get_config_dict()) if native else None
    return None if pooler is None else (pooler, names[2:] == ["Normalize"])


class ObjectEncoder:
    """Any object with ``encode(list[str]) -> array``, described by ``info``; cached only with a fingerprint.

    ``info.prompt`` is passed to a ``SentenceTransformer``'s ``encode(prompt=...)`` (``prompt_keyword``: its
    Pooling may leave the prompt's tokens out) and prepended to the texts of any other object.
    """

    def __init__(self, obj, info: EncoderInfo, *, prompt_keyword: bool = False) -> None:
        self.obj = obj
        self.info = info
        self.prompt = info.prompt or ""
        self.prompt_keyword = prompt_keyword
        self.n_encoded = 0

    def encode(self, texts: Sequence[str], batch_size: int = 128, show_progress: bool = True) -> np.ndarray:
        """Call the object's ``encode`` (with ``batch_size`` when it takes one); float32 ``(n, d)``."""
        if len(texts) == 0:
            return np.zeros((0, 0), dtype=np.float32)
        inputs = list(texts) if self.prompt_keyword else [self.prompt + t for t in texts]
        extra = {"prompt": self.prompt} if self.prompt_keyword else {}
        try:
            out = self.obj.encode(inputs, batch_size=batch_size, **extra)
        except TypeError:
            out = self.obj.encode(inputs, **extra)
        if hasattr(out, "detach"):
            out = out.detach().float().cpu().numpy()
        vecs = np.asarray(out, dtype=np.float32)
        if vecs.ndim != 2 or len(vecs) != len(texts):
            raise StsbenchError(
                f"{self.info.name}.encode returned shape {vecs.shape} for {len(texts)} texts; "
                "it must return one row per text"
            )
        self.n_encoded += len(texts)
        return check_finite(vecs, texts, self.info.name)


def _object_info(
    name: str, fingerprint: str | None, kind: str, prompt: str | None, prompt_name: str | None
) -> EncoderInfo:
    """The :class:`EncoderInfo` of an object that encodes by its own ``encode`` (in memory, float32)."""
    return EncoderInfo(
        name, "(in memory)", fingerprint or "", "declared", None, "float32", kind, {}, prompt, prompt_name
    )


def _with_prompt(fingerprint: str | None, prompt: str | None) -> str | None:
    """A caller's own fingerprint, keyed apart for a prompt (the object cannot know it was prompted)."""
    if not fingerprint or not prompt:
        return fingerprint
    return hashlib.sha256(f"{fingerprint}\0prompt:{prompt}".encode()).hexdigest()[:32]


def as_encoder(
    model,
    tokenizer=None,
    *,
    pooler: str | None = None,
    max_length: int | None = None,
    device: str | None = None,
    name: str | None = None,
    fingerprint: str | None = None,
    prompt: str | None = None,
    prompt_name: str | None = None,
    hash_memo: dict[str, str] | None = None,
) -> Encoder:
    """An uncached :class:`Encoder` for a live model (see the module docstring for what each kind becomes).

    ``prompt_name`` is looked up in a ``SentenceTransformer``'s ``prompts`` (a transformers model: in the
    stored prompts of the folder it was loaded from). ``hash_memo`` is no longer read: every file digest shares
    one memo (:func:`stsbench.sources.sha256_files`); it is accepted so that callers passing it keep working.
    """
    options = EncodeOptions(
        pooler=pooler, max_length=max_length, device=device, prompt=prompt, prompt_name=prompt_name
    )
    if isinstance(model, Encoder):
        if not options.prompted:
            return model
        text, chosen = choose_prompt({}, None, prompt, prompt_name, model.info.name)
        fp = _with_prompt(model.info.fingerprint, text)
        # its own info, prompted; the wrapper prepends the prompt to its texts
        return ObjectEncoder(model, replace(model.info, fingerprint=fp, prompt=text, prompt_name=chosen))
    if _is_sentence_transformer(model):
        where = name or "SentenceTransformer (live)"
        prompts = {k: v or "" for k, v in model.prompts.items()}
        text, chosen = choose_prompt(prompts, model.default_prompt_name, prompt, prompt_name, where)
        asked = replace(options, prompt=text, prompt_name=chosen)
        native = _st_native(model) if pooler is None else None
        if native is not None:  # run by stsbench with the pooler its modules compute
            asked = replace(asked, pooler=native[0], max_length=max_length or model.max_seq_length)
        # run by stsbench: the pooler asked for (raw vectors) or the declared one
        if asked.pooler is not None:
            first = model[0]
            lower = native is not None and bool(getattr(first, "do_lower_case", False))
            declared = {"normalize": native is not None and native[1], "lower": lower}
            kind = "sentence-transformers-live"
            return live_hf_encoder(first.auto_model, first.tokenizer, asked, name=name, kind=kind, **declared)
        # modules without weights (pooling, normalisation) change embeddings too: their configs join the key
        stack = [
            [type(m).__name__, m.get_config_dict() if hasattr(m, "get_config_dict") else repr(m)]
            for m in model
        ]
        kind = "sentence-transformers-full-live"
        settings = {"kind": kind, "modules": stack, "max_length": model.max_seq_length}
        settings.update({"prompt": text} if text else {})
        own_tokenizer = getattr(model, "tokenizer", None)  # None when the first module has none
        fp = _with_prompt(fingerprint, text) or weights_fingerprint(model, own_tokenizer, settings)
        return ObjectEncoder(model, _object_info(where, fp, kind, text, chosen), prompt_keyword=True)
    if hasattr(model, "state_dict") and hasattr(model, "config") and callable(model):
        folder = origin_folder(model)
        stored = stored_prompts(folder) if folder is not None else ({}, None)
        text, chosen = choose_prompt(*stored, prompt, prompt_name, _name_of(model, name))
        return live_hf_encoder(model, tokenizer, replace(options, prompt=text, prompt_name=chosen), name=name)
    if callable(getattr(model, "encode", None)):
        where = name or type(model).__name__
        text, chosen = choose_prompt({}, None, prompt, prompt_name, where)
        return ObjectEncoder(
            model, _object_info(where, _with_prompt(fingerprint, text), "object", text, chosen)
        )
    raise StsbenchError(
        f"cannot evaluate a {type(model).__name__}: pass a model name or folder, a transformers model with "
        "its tokenizer, a SentenceTransformer, or an object with encode(list[str]) -> array"
    )


def _is_sentence_transformer(model) -> bool:
    from sentence_transformers import SentenceTransformer

    return isinstance(model, SentenceTransformer)
