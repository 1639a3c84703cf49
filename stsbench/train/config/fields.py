"""The pieces every option group is made of: ``option(...)`` and the strict model config."""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field


def option(
    default: Any,
    help_text: str,
    *,
    short: str | None = None,
    why: str | None = None,
    label: str | None = None,
    **bounds,
) -> Any:
    """A config field: default, help, bounds (``ge``, ``gt``, ``lt``, ``le``); ``why``: the refusal's reason.

    ``label``: the option in the paper's words (``EMA decay weight``), for figure axes and titles.
    """
    extra = {k: v for k, v in (("short", short), ("why", why), ("label", label)) if v}
    return Field(default, description=help_text, json_schema_extra=extra or None, **bounds)


STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)
