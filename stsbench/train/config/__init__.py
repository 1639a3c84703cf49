"""The training config: typed options (:mod:`.options`), YAML/CLI loading (:mod:`.load`), resolution (:mod:`.resolve`).

The CLI (``stsbench train``, whose flags are generated from :data:`OPTIONS`) and the YAML configs (packaged in
:mod:`stsbench.configs`, or a user's file) both fill :class:`TrainConfig`; CLI flags override the YAML, the YAML overrides the method's
defaults. ``TrainConfig(...)`` from Python gets the same defaults and the same validation. What the data
and the device decide is a separate record (:class:`TrainResolution`), so the config is machine-independent.
The methods are :data:`METHODS` (:mod:`.methods`), one :class:`MethodSpec` each.

Names load on first use, and importing any of them runs no plugin: :class:`TrainConfig`'s own fields are the
options every method has, a method's options are a sub-model its spec owns (:mod:`.groups`), and the
registries' plugins are read the first time a config is built or an option looked up. A method plugin's
module may import anything here; a method name is checked before torch loads.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "AUGMENTATIONS": "augmentations",
    "AugmentationSpec": "augmentations",
    "BOOKKEEPING": "resolve",
    "EARLIER": "resolve",
    "METHODS": "methods",
    "OPTIONS": "load",
    "REQUIRED": "resolve",
    "MethodSpec": "methods",
    "Option": "load",
    "ResolvedConfig": "resolve",
    "TrainConfig": "options",
    "TrainResolution": "resolve",
    "check_complete": "resolve",
    "default_length_buckets": "resolve",
    "effective_queue_size": "resolve",
    "eval_pooler": "resolve",
    "finalize": "resolve",
    "find_method": "methods",
    "help_for": "load",
    "load_yaml": "load",
    "make_config": "load",
    "option": "stsbench.options",
    "option_fields": "groups",
    "options_model": "groups",
    "owners": "groups",
    "resume_conflicts": "resolve",
    "train_options": "load",
}
__all__ = [
    "AUGMENTATIONS",
    "AugmentationSpec",
    "BOOKKEEPING",
    "EARLIER",
    "METHODS",
    "MethodSpec",
    "OPTIONS",
    "Option",
    "REQUIRED",
    "ResolvedConfig",
    "TrainConfig",
    "TrainResolution",
    "check_complete",
    "default_length_buckets",
    "effective_queue_size",
    "eval_pooler",
    "finalize",
    "find_method",
    "help_for",
    "load_yaml",
    "make_config",
    "option",
    "option_fields",
    "options_model",
    "owners",
    "resume_conflicts",
    "train_options",
]


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = where if where.startswith("stsbench.") else f"{__name__}.{where}"
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE})


if TYPE_CHECKING:
    from stsbench.options import option
    from stsbench.train.config.augmentations import AUGMENTATIONS, AugmentationSpec
    from stsbench.train.config.groups import option_fields, options_model, owners
    from stsbench.train.config.load import OPTIONS, Option, help_for, load_yaml, make_config, train_options
    from stsbench.train.config.methods import METHODS, MethodSpec, find_method
    from stsbench.train.config.options import TrainConfig
    from stsbench.train.config.resolve import (
        BOOKKEEPING,
        EARLIER,
        REQUIRED,
        ResolvedConfig,
        TrainResolution,
        check_complete,
        default_length_buckets,
        effective_queue_size,
        eval_pooler,
        finalize,
        resume_conflicts,
    )
