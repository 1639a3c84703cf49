"""Noise on the training embeddings: the report's Gaussian dropout and plain additive Gaussian noise.

Hristov, McLaughlin, Healy, "Enhanced Sentence Embeddings with SimCSE" (Stanford CS224N report, seed 001),
Sec. 2.2 and 4.2: "instead of setting certain activations to zero with a given probability, it assigns these
activations to a Gaussian random variable with a mean of 0 and a chosen standard deviation"; p = 0.1, mean 0,
std 0.1, on both views and on the in-batch negatives, in training only, removed afterwards.
"""

from __future__ import annotations

import torch
from torch import nn


class GaussianDropout(nn.Module):
    """The report's layer: each entry is, with probability ``p``, replaced by a draw from N(0, ``std``^2).

        y_i = x_i            with probability 1 - p
        y_i = e_i ~ N(0, s^2) with probability p

    The identity in eval mode. The replaced entries carry no gradient to ``x`` (like dropped ones).
    """

    def __init__(self, p: float = 0.1, std: float = 0.1) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0 or std < 0:
            raise ValueError("GaussianDropout needs 0 <= p <= 1 and std >= 0")
        self.p = float(p)
        self.std = float(std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (B, H) -> (B, H)
        if not self.training or self.p == 0.0:
            return x
        replace = torch.rand_like(x) < self.p
        return torch.where(replace, self.std * torch.randn_like(x), x)

    def extra_repr(self) -> str:
        return f"p={self.p}, std={self.std}"


class AdditiveGaussianNoise(nn.Module):
    """What stsbench called Gaussian dropout before: x + N(0, ``std``^2) on every entry, training only."""

    def __init__(self, std: float) -> None:
        super().__init__()
        if std < 0:
            raise ValueError("AdditiveGaussianNoise needs std >= 0")
        self.std = float(std)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (B, H) -> (B, H)
        if not self.training or self.std == 0.0:
            return x
        return x + self.std * torch.randn_like(x)

    def extra_repr(self) -> str:
        return f"std={self.std}"
