"""The training methods: one :class:`MethodSpec` each, all in one :data:`METHODS` registry.

A spec owns everything stsbench needs to know of a method: its class (a lazy ``"module:attr"`` target, so
that naming and checking methods imports no torch), the option groups it adds to the config, its paper's
defaults where they differ from SimCSE's, the class that trains on sentence pairs (if any) and the size of
its queue. The config (:mod:`.options`: the ``method`` choices, the fields, the refusals), the CLI
(``--method`` and its option panels), :func:`stsbench.train.methods.build_method` and the resolution all read
the registry. Another package adds a method under the ``stsbench.methods`` entry-point group::

    [project.entry-points."stsbench.methods"]
    toy = "my_package.toy:SPEC"

Entry points are read when a config is first built or an option first looked up, never at import: the
module holding a spec may import :class:`~stsbench.train.config.options.TrainConfig` as any module may.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from stsbench.errors import StsbenchError
from stsbench.registry import Registry, load_target

if TYPE_CHECKING:
    from stsbench.train.config.options import TrainConfig


@dataclass(frozen=True)
class MethodSpec:
    """A training method: what the config, the CLI, the resolution and ``build_method`` read of it.

    ``method``: its :class:`~stsbench.train.methods.base.Method` subclass or ``"module:attr"``; ``options``: the
    option groups (pydantic models of ``option(...)`` fields) it takes beyond the common ones, which may be
    shared with other methods; ``defaults``: its paper's values where they differ from the fields' defaults;
    ``supervised``: the class that trains on ``sent0,sent1[,hard_neg]`` CSV files (None: one sentence a
    line only); ``queue_size(cfg, processes)``: the negatives it queues at most (None: no queue); ``about``:
    what ``--method NAME`` trains on, for ``--help``; ``augment_views``: the views an ``--augment``
    augmentation may target (one sentence a line; () refuses every one).

    What reports, checks and dry runs ask of a method, it answers here: ``variant(config)``: what reports call
    a run of it (the papers' row names: ``unsup-SimCSE``, ``word repetition only``; None: :attr:`label`);
    ``components(config)``: the paper's components the run used, by name (an ablation table's columns);
    ``traceable_distance``: its runs log MoCoSE's maximum traceable distance (a momentum target), which figures
    draw against; ``model_options``: its options that name models it loads, which ``reproduce`` checks are
    here before it starts.
    """

    name: str
    label: str
    method: Any
    options: tuple[type[BaseModel], ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    supervised: Any = None
    queue_size: Callable[[TrainConfig, int], int] | None = None
    about: str = ""
    augment_views: tuple[str, ...] = ("anchor", "positive", "both")  # the views --augment may target
    variant: Callable[[Mapping[str, Any]], str] | None = None
    components: Callable[[Mapping[str, Any]], dict[str, bool]] | None = None
    traceable_distance: bool = False
    model_options: tuple[str, ...] = ()

    def run_label(self, config: Mapping[str, Any]) -> str:
        """What reports call a run of this method with ``config`` (its saved options)."""
        return self.variant(config) if self.variant is not None else self.label

    def used(self, config: Mapping[str, Any]) -> dict[str, bool]:
        """The paper's components a run with ``config`` used, by name (none for a method without components)."""
        return self.components(config) if self.components is not None else {}

    def accepts(self, name: str) -> bool:
        """Whether option ``name`` belongs to this method (options of no method's group belong to all)."""
        if any(name in group.model_fields for group in self.options):
            return True
        return not any(name in group.model_fields for spec in METHODS.values() for group in spec.options)

    def method_class(self, supervised: bool = False) -> type:
        """The class to build: :attr:`supervised`'s for a sentence-pair train file, else :attr:`method`'s."""
        target = self.supervised if supervised else self.method
        if target is None:
            raise StsbenchError(f"{self.label} trains on one sentence a line, not on sentence pairs")
        try:
            return load_target(target)
        except (ImportError, AttributeError) as exc:
            raise StsbenchError(f"method {self.name!r}: its class {target!r} failed to load: {exc}") from None


METHODS: Registry[MethodSpec] = Registry("method", entry_points="stsbench.methods")
"""Every training method by name: the built-ins (their specs in ``stsbench/train/methods/*_options.py``), then plugins."""
# the built-ins, one line each: a method's spec is in its options module beside its class
METHODS.register("simcse", "stsbench.train.methods.simcse_options:SPEC")
METHODS.register("esimcse", "stsbench.train.methods.esimcse_options:SPEC")
METHODS.register("mocose", "stsbench.train.methods.mocose_options:SPEC")


def method_specs() -> list[MethodSpec]:
    """Every registered method's spec, loaded and checked (a plugin's target must be a spec of its own name)."""
    return METHODS.specs(MethodSpec)


def find_method(name: object) -> MethodSpec | None:
    """The spec of the method ``name`` names exactly, or None (no method, or an unknown one)."""
    return METHODS.get(name) if isinstance(name, str) and name in METHODS.names() else None


def method_choices() -> str:
    """``--method``'s help: each name with what it trains on, ``simcse (...), esimcse or mocose``."""
    parts = [f"{spec.name} ({spec.about})" if spec.about else spec.name for spec in method_specs()]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"


def method_labels() -> str:
    """The methods for ``stsbench train``'s help: ``SimCSE (unsup or sup), ESimCSE or MoCoSE``."""
    parts = [f"{spec.label} (unsup or sup)" if spec.supervised else spec.label for spec in method_specs()]
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} or {parts[-1]}"
