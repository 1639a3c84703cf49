"""Fingerprints: a hash of everything that changes an embedding."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from stsbench.encoders.resolve import ModelSpec
from stsbench.sources import sha256_files

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
    from stsbench.sources import code_digest, library_versions

    code = {"stsbench": code_digest("embedding"), **library_versions(EMBEDDING_LIBRARIES)}
    if pooler is not None and pooler != "declared":
        from stsbench.encoders.pooling import POOLER_REGISTRY

        plugin = POOLER_REGISTRY.plugin(pooler)
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
    files: list[Path] = []
    for d in dict.fromkeys(dirs):
        if d.is_dir():
            files += [
                f
                for f in sorted(d.iterdir())
                if f.is_file() and f.suffix in _MODEL_SUFFIXES and f.name not in _NOT_MODEL
            ]
    return files


def fingerprint(
    spec: ModelSpec,
    pooler: str,
    max_length: int | None,
    dtype: str,
    prompt: str | None = None,
) -> str:
    """Hex digest over the model files' contents and every setting that changes an embedding.

    A ``prompt`` (:mod:`stsbench.encoders.prompts`) joins the settings: prompted and unprompted vectors never
    share a key (without one the digest is the one it was before prompts existed).
    """
    h = hashlib.sha256()
    settings = {
        "code": embedding_code(pooler),
        "kind": spec.kind,
        "pooler": pooler,
        "max_length": max_length,
        "dtype": dtype,
        "normalize": spec.normalize,
        "lower": spec.do_lower_case,
    }
    if prompt:
        settings["prompt"] = prompt
    h.update(json.dumps(settings, sort_keys=True).encode())
    for f, sha in sha256_files(
        model_files(spec)
    ).items():  # the one byte digest, memoised by each file's stat
        h.update(f"{f.relative_to(spec.path)}:{sha}\n".encode())
    return h.hexdigest()[:32]
