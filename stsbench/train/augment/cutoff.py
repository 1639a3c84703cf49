"""Token cut-off, feature cut-off and position shuffle (embeddings stage): MoCoSE Table 5's augmentations.

MoCoSE (Cao et al., 2022) applies them inside its embedding layer (official ``mocose.py:153-176, 245-266``), on
every call of it: the online branch's and the target branch's (which reads the online embedding layer), each
call drawing afresh. Both flavours are here, chosen by ``--embedding-augment-tokens``:

- ``all`` (the official code): the positions are every one of the padded batch, [CLS], [SEP] and padding
  included. ``token_cut_off`` zeroes the word embeddings of max(1, int(T p)) of the T positions of each
  sentence; ``feature_cut_off`` zeroes max(1, int(H p)) of the H features of each sentence at every position;
  ``position_ids_shuffle`` permutes the position ids once for the whole batch (its ``position_ids`` buffer is
  one row), padding included;
- ``content`` (the paper's reading, as ConSERT, Yan et al., 2021, describes cut-off and shuffle): each
  sentence's own content word-pieces only, [CLS], [SEP] and padding untouched: max(1, int(n p)) of its n
  content tokens cut, the features cut at those tokens only, each sentence's content positions permuted on
  their own.

The official code applies them to the word embeddings after FGSM and before the type and position embeddings,
LayerNorm and dropout are added; so does stsbench (the FGSM gradient is that of the unaugmented views). The
official evaluation also passes through them (``sent_emb`` is not handed to the embedding layer,
``mocose.py:468-475``), so its test embeddings were cut and shuffled as well; stsbench evaluates the encoder
without them, as the paper describes (docs/training.md says so).

Draws come from torch's generator on the embeddings' device, seeded by the run.

The options and registry entries are here too; torch is imported when an augmentation runs, so that building
the config and the CLI imports none.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from stsbench.options import option
from stsbench.train.augment.base import EmbeddingAugmentation
from stsbench.train.config.options import AugmentationSpec, share

if TYPE_CHECKING:
    import torch

    Tokens = dict[str, torch.Tensor]


def first_ranks(scores: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """(B, N) bool: per row, the ``counts[b]`` entries of highest ``scores`` (a uniform subset for uniform scores)."""
    order = scores.argsort(dim=1, descending=True, stable=True)
    ranks = order.argsort(dim=1, stable=True)
    return ranks < counts[:, None]


class EmbeddingCutoff(EmbeddingAugmentation):
    """The positions an embeddings-stage augmentation of MoCoSE may touch, by ``--embedding-augment-tokens``."""

    def positions(self, special: torch.Tensor) -> torch.Tensor:
        """(B, T) bool: the positions it may touch (every one, or the content word-pieces)."""
        import torch

        if self.cfg.embedding_augment_tokens == "all":
            return torch.ones_like(special)
        return ~special


class TokenCutoff(EmbeddingCutoff):
    """Zero the word embeddings of max(1, int(n p)) of a sentence's n positions (n: all T, or its content)."""

    def embeddings(self, model, batch: Tokens, special: torch.Tensor) -> Tokens:
        import torch

        x = batch["inputs_embeds"]
        allowed = self.positions(special)
        n = allowed.sum(dim=1)
        counts = torch.where(n > 0, (n * self.cfg.token_cutoff_rate).long().clamp(min=1), 0)
        scores = torch.where(allowed, torch.rand(allowed.shape, device=x.device), -1.0)
        cut = first_ranks(scores, counts) & allowed
        return {**batch, "inputs_embeds": x.masked_fill(cut[..., None], 0.0)}


class FeatureCutoff(EmbeddingCutoff):
    """Zero max(1, int(H p)) of the H features of each sentence, at its positions (all T, or its content)."""

    def embeddings(self, model, batch: Tokens, special: torch.Tensor) -> Tokens:
        import torch

        x = batch["inputs_embeds"]
        rows, _, hidden = x.shape
        count = max(1, int(hidden * self.cfg.feature_cutoff_rate))
        counts = torch.full((rows,), count, device=x.device)
        features = first_ranks(torch.rand(rows, hidden, device=x.device), counts)  # (B, H)
        cut = self.positions(special)[:, :, None] & features[:, None, :]
        return {**batch, "inputs_embeds": x.masked_fill(cut, 0.0)}


class PositionShuffle(EmbeddingCutoff):
    """Permute the position ids: one permutation of all T for the batch, or each sentence's content on its own."""

    def embeddings(self, model, batch: Tokens, special: torch.Tensor) -> Tokens:
        import torch

        x = batch["inputs_embeds"]
        rows, width = x.shape[:2]
        base = batch.get("position_ids")
        if base is None:
            base = model.position_ids(rows, width, x.device)
        if self.cfg.embedding_augment_tokens == "all":  # official: shuffled[perm[j]] = j, one perm a batch
            perm = torch.randperm(width, device=x.device)
            shuffled = torch.empty_like(base[0]).scatter_(0, perm, base[0])
            return {**batch, "position_ids": shuffled.expand(rows, width)}
        allowed = self.positions(special)
        big = torch.tensor(float("inf"), device=x.device)
        # content positions in a random order, then the others in order; and the content positions in order
        drawn = torch.where(allowed, torch.rand(rows, width, device=x.device), big).argsort(
            dim=1, stable=True
        )
        ordered = torch.where(allowed, torch.zeros((), device=x.device), big).argsort(dim=1, stable=True)
        shuffled = base.clone().scatter_(1, ordered, base.gather(1, drawn))
        return {**batch, "position_ids": shuffled}


# -- options and registry entries ------------------------------------------------------------------------


class EmbeddingTokensOptions(BaseModel):
    """Which positions MoCoSE Table 5's embeddings-stage augmentations touch."""

    embedding_augment_tokens: Literal["content", "all"] = option(
        "content",
        "token-cutoff, feature-cutoff, position-shuffle: each sentence's content word-pieces only (content: "
        "the paper, as ConSERT) or every position of the padded batch, [CLS], [SEP] and padding included, "
        "one shuffle for the batch (all: official mocose.py:153-176).",
    )


class TokenCutoffOptions(BaseModel):
    """MoCoSE Table 5's token dropout (cut-off of whole word embeddings)."""

    token_cutoff_rate: float = share(
        0.1, "token-cutoff: the share p of positions whose word embedding is zeroed (Table 5: 0.1)."
    )


class FeatureCutoffOptions(BaseModel):
    """MoCoSE Table 5's feature dropout (cut-off of embedding features)."""

    feature_cutoff_rate: float = share(
        0.01, "feature-cutoff: the share p of embedding features zeroed per sentence (Table 5: 0.01, 0.1)."
    )


# both branches: the embeddings stage acts on either branch's input embeddings
_embeddings = partial(AugmentationSpec.of, __name__, "embeddings", views="both")
TOKEN_CUTOFF = _embeddings("token-cutoff", TokenCutoffOptions, EmbeddingTokensOptions)
FEATURE_CUTOFF = _embeddings("feature-cutoff", FeatureCutoffOptions, EmbeddingTokensOptions)
POSITION_SHUFFLE = _embeddings(
    "position-shuffle", EmbeddingTokensOptions, about="MoCoSE Table 5's position shuffle"
)
