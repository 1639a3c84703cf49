"""The three kinds of augmentation, and their building from the registry; a method applies them to its views.

:mod:`stsbench.train.config.options` says what each stage is.

A subclass overrides the one call of its stage. Every augmentation is built once per run as
``cls(cfg, tokenizer)`` (``cfg``: the run's resolved config, where its options are), with :attr:`views` (the
views it targets) set from its spec; a method applies it in :meth:`~stsbench.train.methods.base.Method.make_views`
(text, tokens) or before encoding (embeddings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stsbench.errors import StsbenchError
from stsbench.train.config.options import AUGMENTATIONS, augment_names

if TYPE_CHECKING:
    import numpy as np
    import torch

    from stsbench.train.model import ContrastiveEncoder

    Tokens = dict[str, torch.Tensor]


# -- base ----------------------------------------------------------------------------------------------------


class Augmentation:
    """Base of the three stages: built from the run's config and tokenizer."""

    stage = ""
    name = ""  # its registry name (set when built)
    views = "positive"  # the views it targets (set from its spec when built)

    def __init__(self, cfg: Any, tokenizer: Any) -> None:
        self.cfg = cfg
        self.tokenizer = tokenizer

    @classmethod
    def check(cls, cfg: Any) -> None:
        """Before anything is written: what it needs is on this machine (a library, a model), else one line."""

    def prepare(self, model: ContrastiveEncoder) -> None:
        """Once the model is built, before training: load what it needs of it (the MLM ones: its LM head)."""

    def targets(self, view: str) -> bool:
        """Whether it augments ``view`` (``anchor``/``online`` or ``positive``/``target``)."""
        return self.views == "both" or self.views == view


class TextAugmentation(Augmentation):
    """String to string, before tokenization."""

    stage = "text"

    def corpus(self, texts: list[str]) -> int:
        """Before the first step: every sentence the run will read; returns how many it computed.

        An augmentation computed once per sentence (the nlpaug ones) does it here, in the main process.
        """
        return 0

    def texts(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        """The augmented texts of a batch (one per text, in order)."""
        raise NotImplementedError


class TokenAugmentation(Augmentation):
    """Token ids to token ids, after tokenization and truncation, before padding."""

    stage = "tokens"
    needs_offsets = False  # whether :meth:`tokens` reads character offsets (word-level units)
    before_truncation = False  # True: on the whole sentence, before it is cut to --max-length

    def tokens(
        self,
        ids: list[int],
        special: list[int],
        offsets: list[tuple[int, int]] | None,
        rng: np.random.Generator,
        row: int,
    ) -> list[int]:
        """One sentence's augmented ids; ``special`` marks its special tokens, ``row`` is its corpus row."""
        raise NotImplementedError

    def batch(
        self,
        seqs: list[list[int]],
        specials: list[list[int]],
        offsets: list[list[tuple[int, int]] | None],
        rng: np.random.Generator,
        rows: list[int],
    ) -> list[list[int]]:
        """The batch's augmented ids, sentence by sentence with :meth:`tokens`; override to work on all at once."""
        return [
            self.tokens(ids, special, where, rng, row)
            for ids, special, where, row in zip(seqs, specials, offsets, rows, strict=True)
        ]

    def longest(self, length: int) -> int:
        """The most tokens :meth:`tokens` can make of ``length`` (``--pad-to-max-length`` pads to it)."""
        return length


class EmbeddingAugmentation(Augmentation):
    """On a view's input embeddings (or position ids) inside the forward pass."""

    stage = "embeddings"

    def embeddings(self, model: ContrastiveEncoder, batch: Tokens, special: torch.Tensor) -> Tokens:
        """The view's model inputs, changed: ``inputs_embeds`` (B, T, H) given, and may be changed, ``position_ids``.

        ``batch`` holds ``inputs_embeds`` (the word embeddings of its ids, after any FGSM step) and
        ``attention_mask``, and ``position_ids`` once an earlier augmentation set them; ``special``: (B, T)
        bool, True at its special tokens and padding. Draw with torch's generator (seeded by the run).
        """
        raise NotImplementedError


# -- build ---------------------------------------------------------------------------------------------------


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
