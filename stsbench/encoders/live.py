"""Encoders for models already in memory (a transformers model, a SentenceTransformer, any ``encode``).

Accepted: a ``transformers`` model + tokenizer, a ``SentenceTransformer``, or any object with
``encode(list[str]) -> array``.

Live models have no files to hash, so their fingerprint is taken from their weights (every tensor of the
``state_dict``), their config and their tokenizer: the embedding cache stays correct when the weights change,
as it does for a folder (:mod:`stsbench.encoders.fingerprint`). A ``SentenceTransformer`` whose modules are
Transformer + mean/CLS Pooling (+ Normalize) runs through the same :class:`HFEncoder` as ``stsbench run`` on its
folder, so the figures are the CLI's; any other module stack is encoded by ``SentenceTransformer.encode``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stsbench.encoders.base import Encoder, EncoderInfo
from stsbench.encoders.fingerprint import EMBEDDING_CODE_VERSION
from stsbench.encoders.hf import HFEncoder, check_finite, pick_device
from stsbench.encoders.pooling import check_pooler
from stsbench.encoders.resolve import ModelSpec
from stsbench.errors import StsbenchError

_ST_MODES = {"mean": "avg", "cls": "cls_before_pooler"}


def _tensor_bytes(tensor) -> bytes:
    import torch

    flat = tensor.detach().cpu().contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes()


def _tokenizer_state(tokenizer) -> str:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:  # without the truncation/padding state each call of the tokenizer leaves behind
        state = json.loads(backend.to_str())
        state.pop("truncation", None)
        state.pop("padding", None)
        return json.dumps(state, sort_keys=True)
    return json.dumps(sorted(tokenizer.get_vocab().items()))


def weights_fingerprint(module, tokenizer=None, settings: dict[str, Any] | None = None) -> str:
    """Hex digest over every tensor of ``module.state_dict()``, its config, the tokenizer and ``settings``."""
    h = hashlib.sha256()
    h.update(
        json.dumps({"code": EMBEDDING_CODE_VERSION, **(settings or {})}, sort_keys=True, default=str).encode()
    )
    config = getattr(module, "config", None)
    if config is not None and hasattr(config, "to_json_string"):
        h.update(config.to_json_string(use_diff=False).encode())
    for name, tensor in sorted(module.state_dict().items()):
        h.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}\n".encode())
        h.update(_tensor_bytes(tensor))
    if tokenizer is not None:
        h.update(_tokenizer_state(tokenizer).encode())
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
    *,
    pooler: str | None = None,
    max_length: int | None = None,
    normalize: bool = False,
    lower: bool = False,
    name: str | None = None,
    device: str | None = None,
    kind: str = "hf-live",
) -> HFEncoder:
    """:class:`HFEncoder` around a loaded ``transformers`` model and tokenizer (SimCSE's default pooler ``cls``)."""
    import inspect

    pooler = check_pooler(pooler or "cls")
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
    }
    spec = ModelSpec(_name_of(model, name), Path(), kind, pooler, normalize, max_length, lower)
    enc = HFEncoder(
        spec,
        pooler=pooler,
        max_length=max_length,
        fingerprint=weights_fingerprint(model, tokenizer, settings),
        device=device,
        dtype=dtype,
    )
    enc.info = EncoderInfo(
        spec.name,
        "(in memory)",
        enc.info.fingerprint,
        pooler,
        max_length,
        dtype,
        kind,
        {"normalize": normalize},
    )
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
    """Any object with ``encode(list[str]) -> array``; cached only when given a ``fingerprint``."""

    def __init__(
        self, obj, *, name: str | None = None, fingerprint: str | None = None, kind: str = "object"
    ) -> None:
        self.obj = obj
        self.n_encoded = 0
        self.info = EncoderInfo(
            name or type(obj).__name__, "(in memory)", fingerprint or "", "declared", None, "float32", kind
        )

    def encode(self, texts: Sequence[str], batch_size: int = 128, show_progress: bool = True) -> np.ndarray:
        """Call the object's ``encode`` (with ``batch_size`` when it takes one); float32 ``(n, d)``."""
        if len(texts) == 0:
            return np.zeros((0, 0), dtype=np.float32)
        try:
            out = self.obj.encode(list(texts), batch_size=batch_size)
        except TypeError:
            out = self.obj.encode(list(texts))
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


def as_encoder(
    model,
    tokenizer=None,
    *,
    pooler: str | None = None,
    max_length: int | None = None,
    device: str | None = None,
    name: str | None = None,
    fingerprint: str | None = None,
) -> Encoder:
    """An uncached :class:`Encoder` for a live model (see the module docstring for what each kind becomes)."""
    if isinstance(model, Encoder):
        return model
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:  # pragma: no cover - a core dependency
        SentenceTransformer = ()  # noqa: N806
    if isinstance(model, SentenceTransformer):
        native = _st_native(model)
        if native is not None and pooler is None:
            st_pooler, normalize = native
            return live_hf_encoder(
                model[0].auto_model,
                model[0].tokenizer,
                pooler=st_pooler,
                max_length=max_length or model.max_seq_length,
                normalize=normalize,
                lower=bool(getattr(model[0], "do_lower_case", False)),
                name=name or _name_of(model[0].auto_model, None),
                device=device,
                kind="sentence-transformers-live",
            )
        if pooler is not None:
            return live_hf_encoder(
                model[0].auto_model,
                model[0].tokenizer,
                pooler=pooler,
                max_length=max_length,
                name=name,
                device=device,
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
        }
        fp = fingerprint or weights_fingerprint(model, getattr(model, "tokenizer", None), settings)
        return ObjectEncoder(
            model,
            name=name or "SentenceTransformer (live)",
            fingerprint=fp,
            kind="sentence-transformers-full-live",
        )
    if hasattr(model, "state_dict") and hasattr(model, "config") and callable(model):
        return live_hf_encoder(
            model, tokenizer, pooler=pooler, max_length=max_length, name=name, device=device
        )
    if callable(getattr(model, "encode", None)):
        return ObjectEncoder(model, name=name, fingerprint=fingerprint)
    raise StsbenchError(
        f"cannot evaluate a {type(model).__name__}: pass a model name or folder, a transformers model with "
        "its tokenizer, a SentenceTransformer, or an object with encode(list[str]) -> array"
    )
