"""The training config: typed options and their YAML/CLI loading (:mod:`.options`), resolution (:mod:`.resolve`).

The CLI (``stsbench train``, whose flags are generated from :data:`OPTIONS`) and the YAML configs (packaged in
:mod:`stsbench.configs`, or a user's file) both fill :class:`TrainConfig`; CLI flags override the YAML, the YAML overrides the method's
defaults. ``TrainConfig(...)`` from Python gets the same defaults and the same validation. What the data
and the device decide is a separate record (:class:`TrainResolution`), so the config is machine-independent.
The methods are :data:`METHODS`, one :class:`MethodSpec` each.

Names load on first use, and importing any of them runs no plugin: :class:`TrainConfig`'s own fields are the
options every method has, a method's options are a sub-model its spec owns, and the
registries' plugins are read the first time a config is built or an option looked up. A method plugin's
module may import anything here; a method name is checked before torch loads. The names of :mod:`.resolve` load
here too, but are not declared to type checkers: :mod:`.resolve` imports :mod:`.options`, and a declaration here
would make an import circle.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# each name this package exports lazily, by the module that holds it
_WHERE = {
    **dict.fromkeys(
        "AUGMENTATIONS AugmentationSpec METHODS OPTIONS REQUIRED MethodSpec Option TrainConfig "
        "check_complete find_method help_for load_yaml make_config option_fields options_model owners "
        "train_options".split(),
        "options",
    ),
    **dict.fromkeys(
        "BOOKKEEPING EARLIER ResolvedConfig TrainResolution default_length_buckets effective_queue_size "
        "eval_pooler finalize resume_conflicts".split(),
        "resolve",
    ),
    "option": "stsbench.options",
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
    from stsbench.train.config.options import (
        AUGMENTATIONS,
        METHODS,
        OPTIONS,
        REQUIRED,
        AugmentationSpec,
        MethodSpec,
        Option,
        TrainConfig,
        check_complete,
        find_method,
        help_for,
        load_yaml,
        make_config,
        option_fields,
        options_model,
        owners,
        train_options,
    )
