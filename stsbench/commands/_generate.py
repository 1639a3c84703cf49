"""The one CLI generator: a typed option (a training option, an analysis' option) as a typer parameter.

Both ``stsbench train`` and every analysis command build their flags here from the fields' declarations
(:func:`stsbench.options.option`): the flag is ``--`` + the name with ``-`` for ``_``, a ``bool`` is
``--flag/--no-flag``, a ``Literal`` a choice typer shows and checks, the help the field's.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal, Optional

import typer
from pydantic.fields import FieldInfo

from stsbench import options


def parameter(
    name: str,
    info: FieldInfo,
    *,
    default: Any,
    help_text: str | None = None,
    choices: tuple[str, ...] | None = None,
    panel: str | None = None,
    repeatable: bool = False,
    show_default: bool = True,
) -> inspect.Parameter:
    """``info`` as a keyword-only typer parameter; ``default`` None: the option may be left out (``Optional``).

    ``choices``: the values allowed where they are not the field's ``Literal`` (a registry's names);
    ``repeatable``: given several times, or once comma-separated (a list of its type).
    """
    flag = options.flag(name)
    kind = options.kind(info)
    short = options.extra(info, "short")
    decls = [f"{flag}/--no-{flag[2:]}"] if kind is bool else [flag, *([short] if short else [])]
    allowed = choices or options.choices(info)
    annotation: Any = Literal[allowed] if allowed else kind  # a Literal: typer shows and checks the choices
    if repeatable:
        annotation = list[annotation]  # type: ignore[valid-type]
    if default is None:
        annotation = Optional[annotation]  # noqa: UP045 - typer needs Optional on 3.10
    declared = typer.Option(
        *decls,
        help=help_text if help_text is not None else info.description,
        show_default=show_default,
        rich_help_panel=panel,
        **({"metavar": "NAME[,NAME]"} if repeatable else {}),
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=Annotated[annotation, declared]
    )
