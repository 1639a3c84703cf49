"""The training config: typed options (:mod:`.options`), YAML/CLI loading (:mod:`.load`), resolution (:mod:`.resolve`).

The CLI (``stsbench train``, whose flags are generated from :data:`OPTIONS`) and the YAML files under
``configs/`` both fill :class:`TrainConfig`; CLI flags override the YAML, the YAML overrides the method's
defaults. ``TrainConfig(...)`` from Python gets the same defaults and the same validation. What the data
and the device decide is a separate record (:class:`TrainResolution`), so the config is machine-independent.
"""

from stsbench.train.config.load import OPTIONS, Option, help_for, load_yaml, make_config
from stsbench.train.config.options import (
    METHOD_NAMES,
    METHODS,
    MethodName,
    MethodSpec,
    TrainConfig,
    parse_slices,
)
from stsbench.train.config.resolve import (
    BOOKKEEPING,
    REQUIRED,
    ResolvedConfig,
    TrainResolution,
    check_complete,
    default_length_buckets,
    effective_queue_size,
    eval_pooler,
    finalize,
    resume_conflicts,
    traceable_distance,
)

__all__ = [
    "BOOKKEEPING",
    "METHODS",
    "METHOD_NAMES",
    "OPTIONS",
    "REQUIRED",
    "MethodName",
    "MethodSpec",
    "Option",
    "ResolvedConfig",
    "TrainConfig",
    "TrainResolution",
    "check_complete",
    "default_length_buckets",
    "effective_queue_size",
    "eval_pooler",
    "finalize",
    "help_for",
    "load_yaml",
    "make_config",
    "parse_slices",
    "resume_conflicts",
    "traceable_distance",
]
