"""The options and registry entries of token cut-off, feature cut-off and position shuffle (no torch).

The augmentations are in :mod:`stsbench.train.augment.cutoff`, which says what each does in both flavours.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from stsbench.options import option
from stsbench.train.config.options import AugmentationSpec


class EmbeddingTokensOptions(BaseModel):
    """Which positions MoCoSE Table 5's embeddings-stage augmentations touch."""

    embedding_augment_tokens: Literal["content", "all"] = option(
        "content",
        "token-cutoff, feature-cutoff, position-shuffle: each sentence's content word-pieces only (content: "
        "the paper, as ConSERT) or every position of the padded batch, [CLS], [SEP] and padding included, "
        "one shuffle for the batch (all: official mocose.py:153-176).",
    )


class TokenCutoffOptions(BaseModel):
    """MoCoSE Table 5's token dropout."""

    token_cutoff_rate: float = option(
        0.1,
        "token-cutoff: the share p of positions whose word embedding is zeroed (Table 5: 0.1).",
        gt=0,
        lt=1,
    )


class FeatureCutoffOptions(BaseModel):
    """MoCoSE Table 5's feature dropout."""

    feature_cutoff_rate: float = option(
        0.01,
        "feature-cutoff: the share p of embedding features zeroed per sentence (Table 5: 0.01, 0.1).",
        gt=0,
        lt=1,
    )


TOKEN_CUTOFF = AugmentationSpec(
    "token-cutoff",
    "embeddings",
    "stsbench.train.augment.cutoff:TokenCutoff",
    views="both",
    options=(TokenCutoffOptions, EmbeddingTokensOptions),
    about="MoCoSE Table 5's token dropout (cut-off of whole word embeddings)",
)
FEATURE_CUTOFF = AugmentationSpec(
    "feature-cutoff",
    "embeddings",
    "stsbench.train.augment.cutoff:FeatureCutoff",
    views="both",
    options=(FeatureCutoffOptions, EmbeddingTokensOptions),
    about="MoCoSE Table 5's feature dropout (cut-off of embedding features)",
)
POSITION_SHUFFLE = AugmentationSpec(
    "position-shuffle",
    "embeddings",
    "stsbench.train.augment.cutoff:PositionShuffle",
    views="both",
    options=(EmbeddingTokensOptions,),
    about="MoCoSE Table 5's position shuffle",
)
