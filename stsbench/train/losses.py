"""The contrastive losses of SimCSE, ESimCSE and MoCoSE (InfoNCE with a queue), and SimCSE's MLM loss.

Shapes: B sentences a batch, H the embedding size, M queued negatives, T tokens, V the vocabulary.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def cosine_matrix(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """sim(a_i, b_j) = a_i . b_j / (|a_i| |b_j|) for all pairs (ESimCSE eq. 3): (B, H) x (K, H) -> (B, K).

    At least float32, also under bf16/fp16 autocast: the losses are computed in full precision.
    """
    dtype = torch.promote_types(torch.promote_types(a.dtype, b.dtype), torch.float32)
    with torch.autocast(a.device.type, enabled=False):
        a, b = a.to(dtype), b.to(dtype)
        return F.normalize(a, dim=-1, eps=1e-8) @ F.normalize(b, dim=-1, eps=1e-8).T


class InfoNCE(nn.Module):
    """Unsup SimCSE, ESimCSE eq. (2); with queued negatives ESimCSE eq. (7); with hard negatives sup SimCSE.

        l_i = -log e^{s(h_i,h_i+)/tau} / (sum_{j=1..B} e^{s(h_i,h_j+)/tau} + sum_{m=1..M} e^{s(h_i,q_m)/tau})

    averaged over the batch. Without negatives (``negatives=None`` or M = 0) it is eq. (2). Sup SimCSE (Gao et
    al., 2021, eq. 5): the negatives are the rows' hard negatives h_j- (M = B), and ``hard_negative_weight`` w
    is added to the logit of the row's own, s(h_i,h_i-)/tau + w (SimCSE's code: after dividing by tau); w = 0
    is the paper's loss.
    """

    def __init__(self, temperature: float = 0.05, hard_negative_weight: float = 0.0) -> None:
        super().__init__()
        self.temperature = temperature
        self.hard_negative_weight = hard_negative_weight

    def forward(
        self, anchor: torch.Tensor, positive: torch.Tensor, negatives: torch.Tensor | None = None
    ) -> torch.Tensor:
        logits = cosine_matrix(anchor, positive) / self.temperature  # (B, B), positives on the diagonal
        if negatives is not None and len(negatives) > 0:
            others = cosine_matrix(anchor, negatives) / self.temperature  # (B, M)
            if self.hard_negative_weight:  # each row's own hard negative
                others = others + self.hard_negative_weight * torch.eye(
                    len(anchor), dtype=others.dtype, device=others.device
                )
            logits = torch.cat([logits, others], dim=1)  # (B, B + M)
        labels = torch.arange(len(anchor), device=anchor.device)  # (B,)
        return F.cross_entropy(logits, labels)


SupervisedInfoNCE = InfoNCE  # sup SimCSE's loss: InfoNCE over its hard negatives, with their weight


class MLMLoss(nn.Module):
    """SimCSE's auxiliary masked-language-model loss: mean cross-entropy over the masked tokens.

        l_mlm = -(1/|masked|) sum_{(b, t) masked} log softmax(W h_{b,t})[x_{b,t}]

    added to the contrastive loss as l + lambda * l_mlm (SimCSE, Sec. 6.2 / Appendix; lambda = 0.1 there).
    """

    def __init__(self, lm_head: nn.Module) -> None:
        super().__init__()
        self.lm_head = lm_head

    def forward(self, hidden: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        # hidden: (B, T, H) last layer of the masked input; labels: (B, T), -100 where not masked
        logits = self.lm_head(hidden)  # (B, T, V)
        total = F.cross_entropy(
            logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100, reduction="sum"
        )
        # the mean over the masked tokens, read on the device (no host branch: --cuda-graph captures it);
        # nothing masked (a tiny batch) gives 0 and no gradient, not 0/0
        return total / (labels != -100).sum().clamp(min=1)
