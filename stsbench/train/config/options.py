"""Every training option, typed: its default (the paper's), its bounds, its help text, the methods it belongs to.

:class:`TrainConfig` is a frozen pydantic model, validated on construction, from Python, YAML or the CLI
alike. Its own fields are the options every method has (:class:`CommonOptions`,
:class:`~stsbench.train.config.shared_options.SelectionOptions`); those of some methods only, the option groups of
the registered methods (:data:`~stsbench.train.config.methods.METHODS`; the built-ins' in
``train/methods/<name>_options.py``), are its sub-model ``method_options``, built for its method on first use
(:mod:`~stsbench.train.config.groups`), read and given flat all the same. Each method's
:class:`~stsbench.train.config.methods.MethodSpec` says which groups it takes and where its paper's defaults
differ from SimCSE's; a config refuses options of another method and gets its method's defaults.
Defaults are SimCSE's unsupervised BERT-base settings (Gao et al., 2021, ``run_unsup_example.sh``),
ESimCSE's (Wu et al., 2022, Sec. 4.1 and 5) and MoCoSE's (Cao et al., 2022, Sec. 4.1, Tables 3-8).

Adding an option is one field in its group, ``name: type = option(default, help, ge=..., ...)`` (a
``Literal`` for a choice): the flag, its ``--help`` line and choices, the YAML key, the type and bound checks
with their one-line messages, the refusal for other methods and the reports' view of it follow. A rule
between fields is a ``model_validator`` of the group raising :class:`StsbenchError`; a method whose paper
uses another default is one entry in its :class:`MethodSpec` ``defaults``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError, ValidationInfo, model_validator

from stsbench.errors import StsbenchError
from stsbench.options import STRICT as _STRICT
from stsbench.options import flag, one_line
from stsbench.train.config.augmentations import AUGMENTATIONS, TARGETS, augment_names
from stsbench.train.config.common_options import CommonOptions
from stsbench.train.config.groups import option_fields, option_groups, options_model, owners
from stsbench.train.config.methods import find_method
from stsbench.train.config.shared_options import SelectionOptions

__all__ = ["CommonOptions", "SelectionOptions", "TrainConfig", "owners"]


class TrainConfig(SelectionOptions, CommonOptions):
    """A training run's options, machine-independent (saved with every checkpoint); validated on construction.

    The options every method has are fields; a method's own (and the augmentations') are
    :attr:`method_options`, a sub-model its spec owns (:func:`~stsbench.train.config.groups.options_model`),
    read as attributes of the config all the same (``cfg.dup_rate``), and given flat, as the CLI flags and the
    YAML keys are. Options not given take the method's defaults (its ``MethodSpec``); options of another
    method are refused; every refusal is a one-line :class:`StsbenchError`. What the data and the device
    decide is not here but in :class:`stsbench.train.config.resolve.TrainResolution`.
    """

    model_config = _STRICT

    # the method's own options (a sub-model of its spec's, built by _split; Any: validated there, not here)
    method_options: Any = Field(default_factory=lambda: options_model(None)())

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise StsbenchError(one_line(exc, type(self))) from None

    def __getattr__(self, name: str) -> Any:
        own = self.__dict__.get("method_options") if not name.startswith("_") else None
        if own is not None:
            if name in type(own).model_fields:
                return getattr(own, name)
            info = option_fields().get(name)
            if info is not None:  # another method's option: at its default, as a saved config lists it
                return info.default
        return super().__getattr__(name)  # type: ignore[misc]

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data: Any, info: ValidationInfo) -> Any:
        """Flat options in: the method's own go to its sub-model; those of another method are refused."""
        if not isinstance(data, dict) or "method_options" in data:
            return data
        method = data.get("method")
        spec = find_method(method)
        common = cls.model_fields
        known = option_fields()
        if spec is not None:
            foreign = sorted(n for n in data if n in known and n not in common and not spec.accepts(n))
            if foreign:
                flags = ", ".join("--" + n.replace("_", "-") for n in foreign)
                them = owners(foreign[0])
                plural = "s" if len(foreign) > 1 else ""
                raise StsbenchError(
                    f"{flags}: {' or '.join(s.label for s in them)} option{plural}, not for {spec.label}; "
                    f"use with {' or '.join(f'--method {s.name}' for s in them)}"
                )
        model = options_model(spec.name if spec is not None else None)
        own = {n: v for n, v in data.items() if n in model.model_fields}
        try:
            options = model.model_validate(own)
        except ValidationError as exc:
            raise StsbenchError(one_line(exc, model, (info.context or {}).get("sources"))) from None
        return {**{n: v for n, v in data.items() if n not in own}, "method_options": options}

    def __reduce__(
        self,
    ) -> tuple:  # pickled as the options given: the sub-model's class is built, not importable
        return (_rebuilt, ({n: getattr(self, n) for n in self.given()},))

    def given(self) -> set[str]:
        """The options given to this config (the others are defaults), flat."""
        return (self.model_fields_set - {"method_options"}) | self.method_options.model_fields_set

    @model_validator(mode="after")
    def _augmentations_fit(self) -> TrainConfig:
        """Each --augment fits the method's views; an augmentation's option is given with the augmentation."""
        used = augment_names(self.augment)

        def views(name: str) -> str:
            return AUGMENTATIONS[name].views if self.augment_views == "declared" else self.augment_views

        spec = find_method(self.method)
        takes = spec.augment_views if spec is not None else TARGETS
        problems = [
            f"--augment {name}: it augments the {views(name)} view(s), and {spec.label} takes "
            f"augmentations of {', '.join(takes) or 'no view'}; drop it, or train a method that takes it"
            for name in used
            if views(name) not in takes
        ]
        taking = option_groups().augmentation_of
        problems += [
            f"{flag(name)} is an option of the augmentation{'s' if len(taking[name]) > 1 else ''} "
            f"{' or '.join(taking[name])}; add --augment {taking[name][0]}, or drop {flag(name)}"
            for name in sorted(self.given() & taking.keys())
            if not set(taking[name]) & set(used) and getattr(self, name) != option_fields()[name].default
        ]
        if used and getattr(self, "fixed_dropout_mask", False):
            problems.append(
                f"--fixed-dropout-mask: one mask for both views needs them to be the same tokens, and --augment "
                f"{','.join(used)} makes them differ; drop one of the two"
            )
        if problems:
            raise StsbenchError(problems[0])
        return self

    @model_validator(mode="after")
    def _method_defaults(self) -> TrainConfig:
        spec = find_method(self.method)
        given = self.given()
        for name, value in (spec.defaults if spec else {}).items():
            if name not in given:  # frozen: set once, here, before anyone sees it
                holder = self if name in type(self).model_fields else self.method_options
                object.__setattr__(holder, name, value)
        return self

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of every option (every method's: another's at its default), in saved order."""
        values = {**self.model_dump(exclude={"method_options"}), **self.method_options.model_dump()}
        return {name: values.get(name, info.default) for name, info in option_fields().items()}

    def replace(self, **changes: Any) -> TrainConfig:
        """A new config: the options given to this one, with ``changes`` (validated again)."""
        return TrainConfig(**{**{n: getattr(self, n) for n in self.given()}, **changes})

    @classmethod
    def from_dict(cls, saved: Mapping[str, Any]) -> TrainConfig:
        """The config of a saved flat dict (``to_dict()`` or a run's saved ``training``).

        A saved dict holds every option; those of other methods at their defaults are dropped, and so are
        keys that are not options (``supervised``, a resolution's).
        """
        spec = find_method(saved.get("method"))
        fields = option_fields()
        keep = {
            n: v
            for n, v in saved.items()
            if n in fields and (spec is None or spec.accepts(n) or v != fields[n].default)
        }
        # a run saved before the view options existed ran these behaviours, whatever today's defaults
        before = {
            n: v
            for n, v in BEFORE_VIEW_OPTIONS.items()
            if n not in saved and (spec is None or spec.accepts(n))
        }
        return cls(**before, **keep)


def _rebuilt(given: dict[str, Any]) -> TrainConfig:
    return TrainConfig(**given)


# what stsbench did before the options of its views (target view and embeddings, MLM views and head) existed,
# where today's default differs: a run saved before them is read as it ran
BEFORE_VIEW_OPTIONS: dict[str, Any] = {
    "target_view": "clean",
    "target_embeddings": "target",
    "mlm_views": "anchor",
    "mlm_head_init": "random",
}
