"""SimCSE's options and spec (what the config reads, without torch): the class is in :mod:`.simcse`."""

from __future__ import annotations

from stsbench.train.config.options import FixedMaskOptions, MethodSpec, NoiseOptions

SPEC = MethodSpec(
    "simcse",
    "SimCSE",
    "stsbench.train.methods.simcse:SimCSE",
    (NoiseOptions, FixedMaskOptions),
    supervised="stsbench.train.methods.simcse:SupSimCSE",
    about="unsup from a text file, sup from a sent0,sent1[,hard_neg] CSV",
    variant=lambda config: "sup-SimCSE" if config.get("supervised") else "unsup-SimCSE",
)
