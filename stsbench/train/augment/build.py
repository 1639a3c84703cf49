"""A run's ``--augment`` augmentations, built from the registry (what a method's views apply)."""

from __future__ import annotations

from typing import Any

from stsbench.errors import StsbenchError
from stsbench.train.augment.base import (
    Augmentation,
    EmbeddingAugmentation,
    TextAugmentation,
    TokenAugmentation,
)
from stsbench.train.config.options import AUGMENTATIONS, augment_names

BASES = {"text": TextAugmentation, "tokens": TokenAugmentation, "embeddings": EmbeddingAugmentation}


def build_augmentation(name: str, cfg: Any, tokenizer: Any, views: str = "declared") -> Augmentation:
    """The augmentation ``name`` for a run: its class built as ``cls(cfg, tokenizer)``, its views set.

    ``views``: the views it acts on, its spec's (``declared``: a method's own augmentation, as ESimCSE's
    repetition) or those given (``--augment-views``).
    """
    spec = AUGMENTATIONS[name]
    cls = spec.augmentation_class()
    base = BASES[spec.stage]
    if not (isinstance(cls, type) and issubclass(cls, base)):
        raise StsbenchError(
            f"augmentation {name!r}: its class {cls!r} is not a {base.__name__} (its stage is {spec.stage})"
        )
    aug = cls(cfg, tokenizer)
    aug.name, aug.views = spec.name, spec.views if views == "declared" else views
    return aug


def build_augmentations(cfg: Any, tokenizer: Any) -> list[Augmentation]:
    """The config's ``augment`` augmentations, in order (none: []), on its ``augment_views``."""
    views = getattr(cfg, "augment_views", "declared")
    names = augment_names(getattr(cfg, "augment", "none"))
    return [build_augmentation(name, cfg, tokenizer, views) for name in names]


def check_augmentations(cfg: Any) -> None:
    """What the config's augmentations need is on this machine (one line if not): before anything is written."""
    for name in augment_names(getattr(cfg, "augment", "none")):
        AUGMENTATIONS[name].augmentation_class().check(cfg)
