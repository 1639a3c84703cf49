"""The augmentation registry: every augmentation by name, its stage, the views it targets and its options.

The papers' augmentations act at three stages, and an augmentation declares which:

- ``text``: string to string before tokenization (nlpaug-style: synonyms, typos, back-translation);
- ``tokens``: token ids to token ids after tokenization, before padding (crop, deletion, repetition, MLM
  replacement);
- ``embeddings``: on a view's input embeddings or position ids inside the forward pass (cut-off, shuffle).

It also declares the views it targets by default: ``anchor`` (x), ``positive`` (x+), ``online`` and ``target``
(a momentum method's branches) or ``both``; a method's spec says which it takes
(:attr:`~stsbench.train.config.methods.MethodSpec.augment_views`), and the config refuses others in one line. ``--augment
NAME[,NAME]`` adds augmentations to a run, applied in the order given within each stage; their randomness comes
from the run's seeded generators (the batch's numpy generator for text and tokens, torch's for embeddings), so
a run is as deterministic with them as without. An augmentation's option groups join the training config
(every method takes them; a non-default value without the augmentation is refused). Another package adds one
under the ``stsbench.augmentations`` entry points::

    [project.entry-points."stsbench.augmentations"]
    swap = "my_package.swap:SPEC"

No torch here: configs name and check augmentations without importing one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from stsbench.errors import StsbenchError
from stsbench.registry import Registry, load_target

STAGES = ("text", "tokens", "embeddings")
TARGETS = ("anchor", "positive", "online", "target", "both")
NONE = "none"


@dataclass(frozen=True)
class AugmentationSpec:
    """An augmentation: its class, its stage, the views it targets, its option groups, a line for ``--help``.

    ``augmentation``: a :class:`~stsbench.train.augment.base.Augmentation` subclass or ``"module:attr"``;
    ``model_options``: its options that name models (``reproduce`` checks those are here before it starts).
    """

    name: str
    stage: str
    augmentation: Any
    views: str = "positive"
    options: tuple[type[BaseModel], ...] = ()
    about: str = ""
    model_options: tuple[
        str, ...
    ] = ()  # its options naming models it loads (comma-separated): reproduce's checks

    def __post_init__(self) -> None:
        if self.stage not in STAGES:
            raise StsbenchError(
                f"augmentation {self.name!r}: stage {self.stage!r}; choose from {', '.join(STAGES)}"
            )
        if self.views not in TARGETS:
            raise StsbenchError(
                f"augmentation {self.name!r}: views {self.views!r}; choose from {', '.join(TARGETS)}"
            )

    def augmentation_class(self) -> type:
        """The class to build (imported now)."""
        try:
            return load_target(self.augmentation)
        except (ImportError, AttributeError) as exc:
            raise StsbenchError(
                f"augmentation {self.name!r}: its class {self.augmentation!r} failed to load: {exc}"
            ) from None


AUGMENTATIONS: Registry[AugmentationSpec] = Registry("augmentation", entry_points="stsbench.augmentations")
"""Every augmentation by name: the built-ins, then plugins."""
AUGMENTATIONS.register("repetition", "stsbench.train.augment.repetition:SPEC")
AUGMENTATIONS.register("crop", "stsbench.train.augment.deletion:CROP")
AUGMENTATIONS.register("word-deletion", "stsbench.train.augment.deletion:WORD_DELETION")
AUGMENTATIONS.register("delete-one-word", "stsbench.train.augment.deletion:DELETE_ONE_WORD")
AUGMENTATIONS.register("mlm", "stsbench.train.augment.mlm_options:MLM")
AUGMENTATIONS.register("mask-fill", "stsbench.train.augment.mlm_options:MASK_FILL")
AUGMENTATIONS.register("typos", "stsbench.train.augment.text_options:TYPOS")
AUGMENTATIONS.register("back-translation", "stsbench.train.augment.text_options:BACK_TRANSLATION")
AUGMENTATIONS.register("synonyms", "stsbench.train.augment.text_options:SYNONYMS")
AUGMENTATIONS.register("paraphrase", "stsbench.train.augment.text_options:PARAPHRASE")
AUGMENTATIONS.register("token-cutoff", "stsbench.train.augment.cutoff_options:TOKEN_CUTOFF")
AUGMENTATIONS.register("feature-cutoff", "stsbench.train.augment.cutoff_options:FEATURE_CUTOFF")
AUGMENTATIONS.register("position-shuffle", "stsbench.train.augment.cutoff_options:POSITION_SHUFFLE")


def augmentation_specs() -> list[AugmentationSpec]:
    """Every registered augmentation's spec, loaded and checked (a plugin's must be a spec of its own name)."""
    return AUGMENTATIONS.specs(AugmentationSpec)


def parse_augment(value: str | list[str] | tuple[str, ...] | None) -> str:
    """``"repetition, toy"`` or a list of names -> ``"repetition,toy"`` (order kept, each once); ``none``: none."""
    items = [value] if isinstance(value, str) or value is None else list(value)
    names: list[str] = []
    for item in items:
        for part in str(item if item is not None else NONE).split(","):
            name = part.strip()
            if not name or name == NONE:
                continue
            name = AUGMENTATIONS.check(name)  # an unknown name: one line with the nearest
            if name not in names:
                names.append(name)
    return ",".join(names) or NONE


def augment_names(value: str) -> list[str]:
    """The names of a config's canonical ``augment`` (none: [])."""
    return [] if value == NONE else value.split(",")
