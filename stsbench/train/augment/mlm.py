"""MLM replacement and [MASK] filling (tokens stage): SimCSE Table 2's "MLM 15%" and ESimCSE's masked prediction.

Both fill [MASK] tokens with the top-1 prediction of a frozen masked language model: the backbone's own
pretraining checkpoint, encoder and LM head as saved (``AutoModelForMaskedLM`` from the backbone's folder), in
eval mode, never trained. A backbone saved without its LM head is refused in one line (a random head would fill
the masks with noise; all-MiniLM-L6-v2 has none). Every [MASK] of the batch is filled in one forward pass, each by
its position's most likely token that is not a special token.

- ``mlm`` (``--mlm-replace-rate k``, SimCSE Table 2, no official code, so our reading): round(k n) of a
  sentence's n content word-pieces (at least one), drawn uniformly without replacement, become [MASK] and are
  filled; with ``crop`` (``--augment crop,mlm``: "Crop 10% + MLM 15%") the crop comes first, on the whole
  sentence, and the MLM after the cut to ``--max-length``;
- ``mask-fill``: fills the [MASK] tokens an earlier augmentation inserted: after ESimCSE's repetition with
  ``--repetition-kind mask`` it is ESimCSE COLING Table 5's "inserting masked prediction" ([MASK] inserted where
  repetition would duplicate, then predicted).

The options and registry entries are here too; torch is imported when an augmentation runs, so that building
the config and the CLI imports none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel

from stsbench.errors import StsbenchError
from stsbench.options import option
from stsbench.train.augment.base import TokenAugmentation
from stsbench.train.config.options import AugmentationSpec

if TYPE_CHECKING:
    import torch


class FrozenMaskedLM:
    """A backbone's pretraining checkpoint with its LM head, frozen, that fills [MASK] tokens (top-1)."""

    def __init__(self, path: str, name: str, tokenizer: Any, device: torch.device | str, who: str) -> None:
        import torch
        from transformers import AutoModelForMaskedLM

        refuse = (
            f"{who}: {name} has no pretrained MLM head, which the MLM augmentations predict with (a random head "
            "would fill the masks with noise); train from a backbone saved with its pretraining head "
            "(bert-base-uncased, roberta-base), or drop the augmentation"
        )
        try:
            model, info = AutoModelForMaskedLM.from_pretrained(path, output_loading_info=True)
        except (ValueError, OSError, KeyError):  # no masked-LM class for this model type, or no such folder
            raise StsbenchError(refuse) from None
        prefix = f"{model.base_model_prefix}."
        # the head's weights were not saved
        if any(not key.startswith(prefix) for key in info["missing_keys"]):
            raise StsbenchError(refuse)
        self.model = model.to(device).eval().requires_grad_(False)
        self.device = device
        self.pad_id = tokenizer.pad_token_id
        self.mask_id = tokenizer.mask_token_id
        self.special = torch.tensor(sorted(set(tokenizer.all_special_ids)), device=device)

    def fill(self, seqs: list[list[int]]) -> list[list[int]]:
        """Each sequence with its [MASK] tokens replaced by their top-1 non-special prediction, in one pass."""
        import torch

        if not any(self.mask_id in ids for ids in seqs):
            return [list(ids) for ids in seqs]
        width = max(len(ids) for ids in seqs)
        ids = torch.full((len(seqs), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(seqs), width), dtype=torch.long)
        for row, seq in enumerate(seqs):
            ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
            mask[row, : len(seq)] = 1
        ids, mask = ids.to(self.device), mask.to(self.device)
        where = ids == self.mask_id
        with torch.no_grad():  # the frozen model: no graph
            logits = self.model(input_ids=ids, attention_mask=mask).logits[where]  # (masks, vocab)
        logits[:, self.special] = -torch.inf
        filled = ids.clone()
        filled[where] = logits.argmax(dim=-1)
        return [filled[row, : len(seq)].tolist() for row, seq in enumerate(seqs)]


class MaskedPrediction(TokenAugmentation):
    """Base of the MLM augmentations: the frozen masked LM, loaded from the backbone at :meth:`prepare`."""

    lm: FrozenMaskedLM | None = None

    def prepare(self, model) -> None:
        """Load the backbone's pretraining checkpoint with its LM head (refused in one line without one)."""
        backbone = model.backbone
        path = getattr(backbone.config, "_name_or_path", "") or getattr(backbone, "name_or_path", "")
        device = next(model.parameters()).device
        self.lm = FrozenMaskedLM(
            path, self.cfg.model or path, self.tokenizer, device, f"--augment {self.name}"
        )

    def tokens(self, ids, special, offsets, rng, row) -> list[int]:
        return self.batch([ids], [special], [offsets], rng, [row])[0]

    def masked(self, seqs, specials, rng) -> list[list[int]]:
        """The sequences with the positions to predict set to [MASK]."""
        raise NotImplementedError

    def batch(self, seqs, specials, offsets, rng, rows) -> list[list[int]]:
        if self.lm is None:
            raise StsbenchError(f"--augment {self.name}: prepare() was not called with the model")
        return self.lm.fill(self.masked(seqs, specials, rng))


class MLMReplacement(MaskedPrediction):
    """``mlm``: round(k n) of the n content word-pieces (at least one) masked, then predicted."""

    def masked(self, seqs, specials, rng: np.random.Generator) -> list[list[int]]:
        out = []
        for ids, special in zip(seqs, specials, strict=True):
            content = [i for i, s in enumerate(special) if not s]
            ids = list(ids)
            if content:
                count = min(len(content), max(1, round(self.cfg.mlm_replace_rate * len(content))))
                for pick in rng.choice(len(content), size=count, replace=False):
                    ids[content[int(pick)]] = self.tokenizer.mask_token_id
            out.append(ids)
        return out


class MaskFill(MaskedPrediction):
    """``mask-fill``: the [MASK] tokens already in the view (an earlier augmentation's) predicted."""

    def masked(self, seqs, specials, rng) -> list[list[int]]:
        return [list(ids) for ids in seqs]


# -- options and registry entries ------------------------------------------------------------------------


class MLMReplaceOptions(BaseModel):
    """SimCSE Table 2's MLM k%."""

    mlm_replace_rate: float = option(
        0.15,
        "mlm: the share k of content word-pieces masked and replaced by the frozen pretrained MLM's top-1 "
        "prediction (Table 2: 0.15).",
        gt=0,
        le=1,
    )


MLM = AugmentationSpec(
    "mlm",
    "tokens",
    "stsbench.train.augment.mlm:MLMReplacement",
    options=(MLMReplaceOptions,),
    about="SimCSE Table 2's MLM k% (the backbone's own pretrained MLM, frozen, predicts)",
)
MASK_FILL = AugmentationSpec(
    "mask-fill",
    "tokens",
    "stsbench.train.augment.mlm:MaskFill",
    about="fills the [MASK]s an earlier augmentation inserted (ESimCSE's inserting masked prediction)",
)
