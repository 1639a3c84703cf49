"""Options, declared once: ``option(...)`` for training and analysis options alike, and what a field is.

A training option group (a pydantic model) and an analysis' config (a pydantic dataclass) declare each field
with :func:`option`: its default, help, bounds and the paper's words for it. The one CLI generator
(:func:`stsbench.commands._options.parameter`) reads a field's flag, type, choices and help from here, and a pydantic
``ValidationError`` becomes the one-line message a user sees (:func:`one_line`), the same from Python, YAML and
the CLI.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, Literal

import annotated_types
from pydantic import ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo

STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)  # a training option group's model config


def option(
    default: Any,
    help_text: str,
    *,
    short: str | None = None,
    why: str | None = None,
    label: str | None = None,
    **bounds: Any,
) -> Any:
    """A config field: default, help, bounds (``ge``, ``gt``, ``lt``, ``le``); ``why``: the refusal's reason.

    ``short``: the flag's short form (``-m``); ``label``: the option in the paper's words (``EMA decay
    weight``), for figure axes and titles.
    """
    extra = {k: v for k, v in (("short", short), ("why", why), ("label", label)) if v}
    return Field(default, description=help_text, json_schema_extra=extra or None, **bounds)


_BOUND_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def flag(name: str) -> str:
    """``dup_rate`` -> ``--dup-rate``."""
    return "--" + name.replace("_", "-")


def _members(annotation: Any) -> tuple[Any, ...]:
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return tuple(a for a in typing.get_args(annotation) if a is not type(None))
    return (annotation,)


def choices(info: FieldInfo) -> tuple[str, ...] | None:
    """The values a ``Literal`` field allows, else None."""
    for member in _members(info.annotation):
        if typing.get_origin(member) is Literal:
            return tuple(typing.get_args(member))
    return None


def kind(info: FieldInfo) -> type:
    """``bool``, ``int``, ``float`` or ``str`` (a ``Literal`` of strings is ``str``)."""
    member = _members(info.annotation)[0]
    return str if typing.get_origin(member) is Literal else member


def extra(info: FieldInfo, key: str) -> Any:
    """A value from the field's ``json_schema_extra`` (``short``, ``why``), or None."""
    return (info.json_schema_extra or {}).get(key) if isinstance(info.json_schema_extra, dict) else None


def _num(x: float) -> str:
    return f"{x:g}"


def bounds(info: FieldInfo) -> str | None:
    """The field's bounds in words: ``at least 1``, ``0 or more``, ``positive``, ``in [0, 1)``."""
    low = high = None
    for m in info.metadata:
        if isinstance(m, annotated_types.Ge):
            low = ("[", m.ge)
        elif isinstance(m, annotated_types.Gt):
            low = ("(", m.gt)
        elif isinstance(m, annotated_types.Le):
            high = ("]", m.le)
        elif isinstance(m, annotated_types.Lt):
            high = (")", m.lt)
    if low and high:
        return f"in {low[0]}{_num(low[1])}, {_num(high[1])}{high[0]}"
    if high:
        return f"at most {_num(high[1])}" if high[0] == "]" else f"below {_num(high[1])}"
    if low and low[0] == "(":
        return "positive" if low[1] == 0 else f"more than {_num(low[1])}"
    if low:
        return "0 or more" if low[1] == 0 else f"at least {_num(low[1])}"
    return None


def one_line(
    exc: ValidationError, fields: Mapping[str, FieldInfo] | Any, sources: Mapping[str, str] | None = None
) -> str:
    """The first error of ``exc`` as the line the CLI shows; ``sources``: where each option came from.

    ``fields``: the fields by name, or the model whose they are (its ``model_fields``).
    """
    error = exc.errors()[0]
    name = str(error["loc"][0]) if error["loc"] else ""
    value = error.get("input")
    where = (sources or {}).get(name)
    prefix = f"{where}: " if where else ""
    info = (fields if isinstance(fields, Mapping) else fields.model_fields).get(name)
    if error["type"] == "extra_forbidden" or info is None:
        return f"{prefix}unknown option {name!r}; see `stsbench train --help` for the options"
    if error["type"] in ("literal_error", "unknown_choice"):  # a Literal's, or a registry's names (its ctx)
        allowed = tuple((error.get("ctx") or {}).get("choices") or choices(info) or ())
        either = allowed[0] if len(allowed) == 1 else f"{', '.join(allowed[:-1])} or {allowed[-1]}"
        return f"{prefix}unknown {name.replace('_', ' ')} {value!r}; choose {either}"
    if error["type"] in _BOUND_ERRORS:
        why = extra(info, "why")
        return f"{flag(name)} {value} {why}" if why else f"{flag(name)} must be {bounds(info)}"
    if value is None:
        return f"{prefix}option {name} cannot be empty"
    return f"{prefix}option {name} must be {kind(info).__name__}, got {value!r}"


def fields_of(config_type: Any) -> dict[str, FieldInfo]:
    """The fields of a pydantic model or a dataclass (pydantic's or the standard one's), each as a ``FieldInfo``."""
    import dataclasses

    if isinstance(getattr(config_type, "model_fields", None), dict):
        return dict(config_type.model_fields)
    hints = typing.get_type_hints(config_type)
    return {
        f.name: FieldInfo.from_annotated_attribute(hints[f.name], f.default)
        for f in dataclasses.fields(config_type)
    }
