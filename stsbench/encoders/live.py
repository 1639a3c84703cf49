"""Encoders for models already in memory (a transformers model, a SentenceTransformer, any ``encode``).

Accepted: a ``transformers`` model + tokenizer, a ``SentenceTransformer``, or any object with
``encode(list[str]) -> array``.

Live models have no files to hash, so their fingerprint is taken from their weights (every tensor of the
``state_dict``), their config and their tokenizer: the embedding cache stays correct when the weights change,
as it does for a folder (:mod:`stsbench.encoders.fingerprint`). A model still equal to the folder it was
loaded from takes that folder's key instead (:mod:`stsbench.encoders.origin`), so it finds what
``stsbench run`` cached. A prompt (``prompt`` / ``prompt_name``, :mod:`stsbench.encoders.prompts`) is
prepended to every text and joins the key; a ``SentenceTransformer`` brings its own stored prompts. A ``SentenceTransformer`` whose modules are
Transformer + mean/CLS Pooling (+ Normalize) runs through the same :class:`HFEncoder` as ``stsbench run`` on its
folder, so the figures are the CLI's; any other module stack is encoded by ``SentenceTransformer.encode``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from stsbench.encoders.base import Encoder, EncoderInfo
from stsbench.encoders.fingerprint import embedding_code, tokenizer_state
from stsbench.encoders.hf import HFEncoder, check_finite, pick_device
from stsbench.encoders.options import EncodeOptions
from stsbench.encoders.pooling import check_pooler
from stsbench.encoders.prompts import choose_prompt, stored_prompts
from stsbench.encoders.resolve import ModelSpec
from stsbench.errors import StsbenchError

_ST_MODES = {"mean": "avg", "cls": "cls_before_pooler"}


def _tensor_bytes(tensor) -> bytes:
    import torch

    flat = tensor.detach().cpu().contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes()


def weights_fingerprint(module, tokenizer=None, settings: dict[str, Any] | None = None) -> str:
    """Hex digest over every tensor of ``module.state_dict()``, its config, the tokenizer and ``settings``."""
    h = hashlib.sha256()
    h.update(
        json.dumps(
            {"code": embedding_code((settings or {}).get("pooler")), **(settings or {})},
            sort_keys=True,
            default=str,
        ).encode()
    )
    config = getattr(module, "config", None)
    if config is not None and hasattr(config, "to_json_string"):
        h.update(config.to_json_string(use_diff=False).encode())
    for name, tensor in sorted(module.state_dict().items()):
        h.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}\n".encode())
        h.update(_tensor_bytes(tensor))
    if tokenizer is not None:
        h.update(tokenizer_state(tokenizer).encode())
    return h.hexdigest()[:32]


def _name_of(model, name: str | None) -> str:
    if name:
        return name
    path = getattr(getattr(model, "config", None), "_name_or_path", None) or getattr(
        model, "name_or_path", None
    )
    return f"{path or type(model).__name__} (live)"


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

    ``options.prompt`` is the text to prepend (already chosen: :func:`stsbench.encoders.prompts.choose_prompt`);
    the dtype is the model's own.
    """
    import inspect

    from stsbench.encoders.origin import folder_fingerprint

    pooler = check_pooler(options.pooler or "cls")
    max_length, prompt = options.max_length, options.prompt
    if tokenizer is None:
        raise StsbenchError("a transformers model needs its tokenizer: pass tokenizer=AutoTokenizer...")
    param = next(model.parameters(), None)
    dtype = str(param.dtype).removeprefix("torch.") if param is not None else "float32"
    settings = {
        "kind": kind,
        "pooler": pooler,
        "max_length": max_length,
        "normalize": normalize,
        "lower": lower,
        **({"prompt": prompt} if prompt else {}),
    }
    same = {"max_length": max_length, "normalize": normalize, "lower": lower, "dtype": dtype}
    fp = folder_fingerprint(model, tokenizer, pooler=pooler, prompt=prompt, **same)
    spec = ModelSpec(_name_of(model, name), Path(), kind, pooler, normalize, max_length, lower)
    key = fp or weights_fingerprint(model, tokenizer, settings)
    enc = HFEncoder(spec, replace(options, pooler=pooler, dtype=dtype), fingerprint=key)
    enc.info = EncoderInfo(
        spec.name,
        "(in memory)",
        enc.info.fingerprint,
        pooler,
        max_length,
        dtype,
        kind,
        {"normalize": normalize},
        enc.info.prompt,
        enc.info.prompt_name,
    )
    device = options.device
    enc.device = str(param.device) if param is not None and device is None else pick_device(device)
    enc._tokenizer = tokenizer
    enc._model = model.to(enc.device).eval()
    enc._types = "token_type_ids" in inspect.signature(model.forward).parameters
    return enc


def _st_native(st) -> tuple[str, bool] | None:
    """(pooler, normalize) when ``st`` is Transformer + mean/CLS Pooling (+ Normalize), else None."""
    names = [type(m).__name__ for m in st]
    if names[:2] != ["Transformer", "Pooling"] or names[2:] not in ([], ["Normalize"]):
        return None
    pooling = st[1]
    mode = pooling.get_pooling_mode_str() if hasattr(pooling, "get_pooling_mode_str") else None
    cfg = pooling.get_config_dict()
    mode = mode or cfg.get("pooling_mode")
    if mode not in _ST_MODES or cfg.get("include_prompt", True) is False:
        return None
    return _ST_MODES[mode], names[2:] == ["Normalize"]


class ObjectEncoder:
    """Any object with ``encode(list[str]) -> array``; cached only when given a ``fingerprint``.

    A ``prompt`` is passed to a ``SentenceTransformer``'s ``encode(prompt=...)`` (its Pooling may leave the
    prompt's tokens out) and prepended to the texts of any other object.
    """

    def __init__(
        self,
        obj,
        *,
        name: str | None = None,
        fingerprint: str | None = None,
        kind: str = "object",
        prompt: str | None = None,
        prompt_name: str | None = None,
        prompt_keyword: bool = False,
    ) -> None:
        self.obj = obj
        self.n_encoded = 0
        self.prompt = prompt or ""
        self.prompt_keyword = prompt_keyword
        self.info = EncoderInfo(
            name or type(obj).__name__,
            "(in memory)",
            fingerprint or "",
            "declared",
            None,
            "float32",
            kind,
            {},
            prompt or None,
            prompt_name if prompt else None,
        )

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
    stored prompts of the folder it was loaded from). ``hash_memo`` is no longer read: every file digest shares one
    memo (:func:`stsbench.sources.sha256_files`); it is accepted so that callers passing it keep working.
    """
    options = EncodeOptions(
        pooler=pooler, max_length=max_length, device=device, prompt=prompt, prompt_name=prompt_name
    )
    return live_encoder(model, tokenizer, options, name=name, fingerprint=fingerprint)


def live_encoder(
    model,
    tokenizer,
    options: EncodeOptions,
    *,
    name: str | None = None,
    fingerprint: str | None = None,
) -> Encoder:
    """:func:`as_encoder` with its keywords as one :class:`EncodeOptions` (its dtype and cache unused here)."""
    pooler, max_length, prompt, prompt_name = (
        options.pooler,
        options.max_length,
        options.prompt,
        options.prompt_name,
    )
    if isinstance(model, Encoder):
        if not options.prompted:
            return model
        text, chosen = choose_prompt({}, None, prompt, prompt_name, model.info.name)
        wrapped = ObjectEncoder(model, prompt=text, prompt_name=chosen)  # prepends the prompt to its texts
        fp = _with_prompt(model.info.fingerprint, text)
        wrapped.info = replace(model.info, fingerprint=fp, prompt=text, prompt_name=chosen if text else None)
        return wrapped
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:  # pragma: no cover - a core dependency
        SentenceTransformer = ()  # noqa: N806
    if isinstance(model, SentenceTransformer):
        where = name or "SentenceTransformer (live)"
        prompts = {k: v or "" for k, v in (getattr(model, "prompts", None) or {}).items()}
        text, chosen = choose_prompt(
            prompts, getattr(model, "default_prompt_name", None), prompt, prompt_name, where
        )
        asked = replace(options, prompt=text, prompt_name=chosen)
        native = _st_native(model)
        if native is not None and pooler is None:
            st_pooler, normalize = native
            return live_hf_encoder(
                model[0].auto_model,
                model[0].tokenizer,
                replace(asked, pooler=st_pooler, max_length=max_length or model.max_seq_length),
                normalize=normalize,
                lower=bool(getattr(model[0], "do_lower_case", False)),
                name=name or _name_of(model[0].auto_model, None),
                kind="sentence-transformers-live",
            )
        if pooler is not None:
            return live_hf_encoder(
                model[0].auto_model,
                model[0].tokenizer,
                asked,
                name=name,
                kind="sentence-transformers-live",
            )
        # modules without weights (pooling, normalisation) change embeddings too: their configs join the key
        stack = [
            [type(m).__name__, m.get_config_dict() if hasattr(m, "get_config_dict") else repr(m)]
            for m in model
        ]
        settings = {
            "kind": "sentence-transformers-full-live",
            "modules": stack,
            "max_length": model.max_seq_length,
            **({"prompt": text} if text else {}),
        }
        fp = _with_prompt(fingerprint, text) or weights_fingerprint(
            model, getattr(model, "tokenizer", None), settings
        )
        return ObjectEncoder(
            model,
            name=where,
            fingerprint=fp,
            kind="sentence-transformers-full-live",
            prompt=text,
            prompt_name=chosen,
            prompt_keyword=True,
        )
    if hasattr(model, "state_dict") and hasattr(model, "config") and callable(model):
        from stsbench.encoders.origin import origin_folder

        folder = origin_folder(model)
        stored = stored_prompts(folder) if folder is not None else ({}, None)
        text, chosen = choose_prompt(*stored, prompt, prompt_name, _name_of(model, name))
        return live_hf_encoder(model, tokenizer, replace(options, prompt=text, prompt_name=chosen), name=name)
    if callable(getattr(model, "encode", None)):
        text, chosen = choose_prompt({}, None, prompt, prompt_name, name or type(model).__name__)
        return ObjectEncoder(
            model, name=name, fingerprint=_with_prompt(fingerprint, text), prompt=text, prompt_name=chosen
        )
    raise StsbenchError(
        f"cannot evaluate a {type(model).__name__}: pass a model name or folder, a transformers model with "
        "its tokenizer, a SentenceTransformer, or an object with encode(list[str]) -> array"
    )
