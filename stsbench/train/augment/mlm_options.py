"""The options and registry entries of the MLM augmentations (no torch): the classes are in :mod:`.mlm`."""

from __future__ import annotations

from pydantic import BaseModel

from stsbench.options import option
from stsbench.train.config.options import AugmentationSpec


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
