"""The option groups of the methods and augmentations, gathered on first use: what each option belongs to.

:class:`~stsbench.train.config.options.TrainConfig` holds the options every method has as its own fields and
a method's options as a sub-model its spec owns (:func:`options_model`: the method's groups and every
augmentation's). Nothing here runs at import: the registries' plugins are read the first time a config is
built or an option is looked up, so that importing the config imports no plugin, and a plugin's module may
import the config at run time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from pydantic import BaseModel, create_model
from pydantic.fields import FieldInfo

from stsbench.errors import StsbenchError
from stsbench.options import STRICT
from stsbench.train.config.augmentations import augmentation_specs
from stsbench.train.config.common_options import CommonOptions
from stsbench.train.config.methods import METHODS, MethodSpec, method_specs
from stsbench.train.config.shared_options import SelectionOptions


@dataclass(frozen=True)
class Groups:
    """Every method's option groups, then every augmentation's, each once; what each option belongs to."""

    groups: tuple[type[BaseModel], ...]
    of_methods: frozenset[type[BaseModel]]  # the groups some method takes (the others: augmentations' only)
    group_of: Mapping[str, type[BaseModel]]  # an option of a method's or an augmentation's group -> the group
    augmentation_of: Mapping[str, tuple[str, ...]]  # an augmentation's option -> the augmentations taking it
    fields: Mapping[
        str, FieldInfo
    ]  # every option, in the saved config's order: common, the groups, selection


def _gather() -> Groups:
    owner = dict.fromkeys((*CommonOptions.model_fields, *SelectionOptions.model_fields), "the common options")
    groups: list[type[BaseModel]] = []
    augmentation_of: dict[str, tuple[str, ...]] = {}
    # an augmentation's options are every method's, checked by TrainConfig._augmentations_fit
    sources = [(f"method {m.name!r}", None, m.options) for m in method_specs()]
    sources += [(f"augmentation {a.name!r}", a.name, a.options) for a in augmentation_specs()]
    for who, augmentation, options in sources:
        for group in options:
            if group in groups:
                if augmentation is not None:  # a group several augmentations share (a flavour of theirs)
                    for name in group.model_fields:
                        augmentation_of[name] = (*augmentation_of.get(name, ()), augmentation)
                continue
            for name in group.model_fields:
                if name in owner:
                    raise StsbenchError(
                        f"{who}: option {name!r} of {group.__name__} is already one of {owner[name]}; give it "
                        "another name"
                    )
                owner[name] = group.__name__
                if augmentation is not None:
                    augmentation_of[name] = (augmentation,)
            groups.append(group)
    fields = {
        **CommonOptions.model_fields,
        **{n: f for g in groups for n, f in g.model_fields.items()},
        **SelectionOptions.model_fields,
    }
    group_of = {name: group for group in groups for name in group.model_fields}
    of_methods = frozenset(g for m in method_specs() for g in m.options)
    return Groups(tuple(groups), of_methods, group_of, augmentation_of, fields)


@cache
def option_groups() -> Groups:
    """The groups of every registered method and augmentation (plugins' included), read once."""
    return _gather()


def option_fields() -> Mapping[str, FieldInfo]:
    """Every training option's field, in the order a saved config lists them."""
    return option_groups().fields


def owners(name: str) -> list[MethodSpec]:
    """The methods option ``name`` belongs to."""
    return [spec for spec in METHODS.values() if spec.accepts(name)]


@cache
def options_model(method: str | None) -> type[BaseModel]:
    """The sub-model of ``method``'s own options: its groups and every augmentation's (None: every group)."""
    found = option_groups()
    spec = METHODS.get(method) if method is not None else None
    mine = [g for g in found.groups if spec is None or g in spec.options or g not in found.of_methods]
    label = spec.label if spec is not None else "Any method"
    name = "".join(ch for ch in label.title() if ch.isalnum()) + "MethodOptions"
    if not mine:
        return create_model(name, __base__=_Empty)
    return create_model(name, __base__=tuple(reversed(mine)))


class _Empty(BaseModel):
    """The options of a method without groups of its own, and no augmentation's."""

    model_config = STRICT
