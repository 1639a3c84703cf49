"""Crop, word deletion and deleting one word (tokens stage): SimCSE's Table 2 augmentations (Gao et al., 2021, v1).

SimCSE has no official code for them; the paper names them only ("crop k%", "word deletion k%", "delete one
word"), so these are our reading, stated here and in docs/training.md:

- ``crop`` (``--crop-rate k``): keep one continuous span of ceil((1 - k) N) of the sentence's N content
  word-pieces (special tokens excluded, and kept where they are), its start uniform over the possible ones;
- ``word-deletion`` (``--word-deletion-rate k``): delete round(k N) of the sentence's N whitespace words, drawn
  uniformly without replacement (a word is all its word-pieces), never all of them;
- ``delete-one-word``: delete one whitespace word, drawn uniformly (none from a one-word sentence).

Each acts on the whole sentence, before it is cut to ``--max-length`` (so a crop of a long sentence keeps a span
of all of it, not of its first tokens), on the positive view x+ by default (the paper does not say which view;
``--augment-views both`` augments the anchor as well, each view drawn on its own).
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np
from pydantic import BaseModel

from stsbench.train.augment.base import TokenAugmentation
from stsbench.train.augment.repetition import group_units
from stsbench.train.config.options import AugmentationSpec, share


class CropOptions(BaseModel):
    """SimCSE Table 2's crop k%."""

    crop_rate: float = share(
        0.1, "crop: the share k of content word-pieces cut away (Table 2: 0.1-0.3).", label="crop ratio"
    )


class WordDeletionOptions(BaseModel):
    """SimCSE Table 2's word deletion k%."""

    word_deletion_rate: float = share(
        0.1,
        "word-deletion: the share k of whitespace words deleted (Table 2: 0.1-0.3).",
        label="word deletion rate",
    )


def kept(ids: list[int], drop: set[int]) -> list[int]:
    """``ids`` without the positions in ``drop``."""
    return [t for i, t in enumerate(ids) if i not in drop]


class Crop(TokenAugmentation):
    """Keep one continuous span of ceil((1 - k) N) content word-pieces."""

    before_truncation = True

    def tokens(self, ids, special, offsets, rng: np.random.Generator, row: int) -> list[int]:
        content = [i for i, s in enumerate(special) if not s]
        keep = math.ceil((1.0 - self.cfg.crop_rate) * len(content))
        if keep >= len(content):
            return list(ids)
        start = int(rng.integers(0, len(content) - keep + 1))
        return kept(ids, set(content[:start] + content[start + keep :]))


class WordDeletion(TokenAugmentation):
    """Delete round(k N) of the N whitespace words (at most N - 1)."""

    before_truncation = True
    needs_offsets = True

    def share(self, words: int) -> int:
        return min(round(self.cfg.word_deletion_rate * words), words - 1)

    def tokens(self, ids, special, offsets, rng: np.random.Generator, row: int) -> list[int]:
        units = group_units(special, offsets, words=True)
        count = self.share(len(units)) if units else 0
        if count <= 0:
            return list(ids)
        chosen = rng.choice(len(units), size=count, replace=False)
        return kept(ids, {p for u in chosen for p in units[int(u)]})


class DeleteOneWord(WordDeletion):
    """Delete one whitespace word (none from a one-word sentence)."""

    def share(self, words: int) -> int:
        return min(1, words - 1)


_tokens = partial(AugmentationSpec.of, __name__, "tokens")
CROP = _tokens("crop", CropOptions)
WORD_DELETION = _tokens("word-deletion", WordDeletionOptions)
DELETE_ONE_WORD = _tokens("delete-one-word", about="SimCSE Table 2's delete one word")
