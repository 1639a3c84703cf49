"""Reading a results file as its type: pydantic's ``TypeAdapter`` over the dataclass or ``TypedDict`` of its kind.

Each file kind has one definition (:mod:`stsbench.results.schema` lists them, :mod:`stsbench.results.schemas`
registers them with their JSON schema): a dataclass or, where callers index the file as a dict (an interval, a
seed aggregate, reproduce's state), a ``TypedDict``. The warm ``stsbench run`` writes and reads task results and
averages without pydantic (:func:`stsbench.results.store.build_dataclass`); every other reader validates here,
pydantic imported on first use. A file that does not match its type is one line naming the first problems.
"""

from __future__ import annotations

from functools import cache
from typing import Any, TypeVar

from stsbench.results.schema import JsonObject

T = TypeVar("T")


class Malformed(ValueError):
    """``data`` does not match its type; ``str()`` is a short summary (``missing model, pooler``)."""


@cache
def adapter(tp: Any) -> Any:
    """The ``TypeAdapter`` of ``tp`` (built once: building one is the slow part)."""
    from pydantic import TypeAdapter

    return TypeAdapter(tp)


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(x) for x in loc) or "the file"


def summary(errors: list[Any]) -> str:
    """Pydantic's errors in a few words: the missing keys first (at most three), else the first bad value."""
    missing = [_where(e["loc"]) for e in errors if e["type"] == "missing"]
    if missing:
        return "missing " + ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
    e = errors[0]
    value = repr(e.get("input"))
    value = value if len(value) <= 40 else value[:37] + "..."
    return f"bad {_where(e['loc'])}: {value} ({e['msg'][:1].lower() + e['msg'][1:]})"


def validated(tp: type[T] | Any, data: Any) -> T:
    """``data`` (parsed JSON) as ``tp``: a dataclass built, a ``TypedDict`` checked and returned as given.

    A ``TypedDict``'s keys it does not name are kept (a newer file's extra keys read, and are written back);
    raises :class:`Malformed` with :func:`summary` of what does not match.
    """
    from pydantic import ValidationError

    try:
        value = adapter(tp).validate_python(data)
    except ValidationError as exc:
        raise Malformed(summary(exc.errors(include_url=False))) from None
    return data if isinstance(data, dict) and isinstance(value, dict) else value


def json_schema(tp: Any, title: str | None = None) -> JsonObject:
    """The JSON schema of ``tp`` as files are validated (pydantic's validation mode)."""
    schema = adapter(tp).json_schema(mode="validation")
    if title:
        schema["title"] = title
    return schema
