"""Option groups that several methods take: the Gaussian-dropout variant and one dropout mask for both views.

A method's own options live in its options module (``stsbench/train/methods/<name>_options.py``); a group here
is one that more than one method takes. Nothing here imports the config or torch.
"""

from __future__ import annotations

from pydantic import BaseModel

from stsbench.train.config.fields import STRICT as _STRICT
from stsbench.train.config.fields import option


class NoiseOptions(BaseModel):
    """The Gaussian-dropout variant (SimCSE and ESimCSE)."""

    model_config = _STRICT

    gaussian_noise_std: float = option(
        0.0,
        "Gaussian-dropout variant: add N(0, std^2) noise to the pooled embeddings of both views in "
        "training only (0: off; the report used 0.1).",
        ge=0,
    )
    gaussian_dropout_p: float = option(
        0.0,
        "The report's Gaussian dropout: replace this share of the training embeddings' entries (both views) "
        "by N(0, std^2) draws, training only (0: off; the report: 0.1).",
        ge=0,
        le=1,
    )
    gaussian_dropout_std: float = option(
        0.1, "Gaussian dropout: std of the replacing draws (the report: 0.1).", ge=0
    )


class FixedMaskOptions(BaseModel):
    """SimCSE Table 4's "Fixed 0.1": both views through one dropout mask."""

    model_config = _STRICT

    fixed_dropout_mask: bool = option(
        False,
        "One dropout mask for both views (SimCSE Table 4's 'Fixed 0.1'): each sentence is encoded once and its "
        "embedding is both x and x+; only where the two views are the same tokens.",
    )

