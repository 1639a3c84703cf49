"""How a model is loaded and encoded: one value carried from the CLI or the Python API to the encoder.

``stsbench run``'s options and ``stsbench.evaluate``'s keywords become one :class:`EncodeOptions` where they
are read (the commands, the public functions); the evaluation, the analyses and the loader pass it on whole. A
plain frozen dataclass: the warm ``stsbench run`` imports it, and neither pydantic nor anything heavy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class EncodeOptions:
    """What the user asked for; the loader resolves it per model (pooler, length and prompt it declares)."""

    pooler: str | None = None  # None: as the model declares (else SimCSE's cls)
    max_length: int | None = None  # None: no truncation (sentence-transformers models: their max_seq_length)
    device: str | None = None  # None: cuda when available, else cpu
    dtype: str = "float32"  # models loaded by name; a live model runs in the dtype it has
    prompt: str | None = None  # prepended to every text (stsbench.encoders.prompts)
    prompt_name: str | None = None  # a prompt the model stores, by name
    revision: str | None = None  # branch, tag or commit of a hub id
    batch_size: int = 128
    cache_dir: Path | None = None  # the embedding cache's folder (None: $STSBENCH_CACHE, else the user cache)
    use_cache: bool = True  # False: neither read nor write the embedding cache

    @property
    def prompted(self) -> bool:
        """Whether a prompt or a stored prompt's name was asked for."""
        return self.prompt is not None or self.prompt_name is not None
