"""The published registries' files as pydantic models, one per level; an unknown key is refused with the nearest.

A file of published numbers (:mod:`stsbench.published.registry`, whose docstring says what each key is): the file,
its ``paper``, its ``tables``, each table's ``rows``. The figures' file (:mod:`stsbench.published.figures`): the
file and its ``figures``. :func:`validated` turns pydantic's first error into one line naming the file, the table
and row (or figure) by id, and the key. Imported when a registry loads: reading one costs no pydantic import.
"""

from __future__ import annotations

import difflib
import re
from typing import Annotated, Any, ClassVar, TypeVar, get_args, get_origin

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    ValidationError,
    model_validator,
)

from stsbench.published.records import Entry, Kind, Paper, Renderer, Selection, Split
from stsbench.tasks.registry import TASK_SETS, TASKS


def _text_id(value: Any) -> Any:
    """An ``id`` as written: text, else an error saying to quote it.

    YAML reads an unquoted ``off`` or ``yes`` as a boolean and ``3`` as a number: turned back into text they
    would be ``False`` or another spelling, and a cell address would no longer name the row.
    """
    if isinstance(value, str):
        return value
    what = f"a {type(value).__name__}, not text"
    if isinstance(value, bool):
        what = "a boolean (YAML reads unquoted yes/no/on/off/true/false so)"
    elif isinstance(value, (int, float)):
        what = "a number, not text"
    raise ValueError(f"id {value!r} was read as {what}; quote it, e.g. id: 'off'")


def _notes(value: Any) -> Any:
    return () if value is None else (value,) if isinstance(value, str) else value


def _numbers(value: Any) -> Any:
    if (
        not isinstance(value, dict)
        or not value
        or any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value.values())
    ):
        raise ValueError(f"values must be numbers: a mapping of column -> number, found {value!r:.60}")
    return value


def _avg_of(value: Any) -> tuple[str, ...]:
    """A task set's tasks, or the tasks listed (one alone as text)."""
    if value is None:
        return ()
    if isinstance(value, str) and value in TASK_SETS:
        return tuple(TASK_SETS[value])
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or any(n not in TASKS.names() for n in names):
        raise ValueError(
            f"avg_of is a task set ({', '.join(TASK_SETS)}) or a list of task names, got {value!r}"
        )
    return tuple(names)


Id = Annotated[str, BeforeValidator(_text_id)]
Notes = Annotated[tuple[str, ...], BeforeValidator(_notes)]  # a note, or a list of notes
AvgOf = Annotated[tuple[str, ...], BeforeValidator(_avg_of)]
Text = Annotated[str, Field(min_length=1)]
Runs = Annotated[StrictInt, Field(ge=1)]  # the published figure is the mean of this many runs
BestOf = Annotated[StrictInt, Field(ge=2)]  # the figure is the best (or dev-selected) of this many runs


class _Level(BaseModel):
    """A level of a registry file: its keys are the fields, and no others (a misspelt one is not ignored)."""

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)
    LEVEL: ClassVar[str]  # what an error calls it: "a table holds ..."


class _RunCount(_Level):
    """A table or a row (their ``runs``, ``best_of``): a figure is the mean of runs or the best of them, not both."""

    @model_validator(mode="after")
    def _one_run_count(self) -> _RunCount:
        if "runs" in self.model_fields_set and self.best_of is not None:
            raise ValueError(
                f"runs: {self.runs} and best_of: {self.best_of} exclude each other (a figure is the mean of k "
                "runs or the best of K); give one"
            )
        return self


class PaperSchema(_Level):
    LEVEL = "paper"
    id: Id
    title: str
    citation: str
    source: str
    notes: Notes = ()
    arxiv: str | None = None
    venue: str | None = None
    year: StrictInt | None = None
    version: str | None = None


class RowSchema(_RunCount):
    LEVEL = "row"
    id: Id
    row: str
    values: Annotated[dict[str, float], BeforeValidator(_numbers)]
    printed_as: Annotated[dict[str, str], BeforeValidator(lambda v: {} if v is None else v)] = {}
    notes: Notes = ()
    # these: the table's where the row does not give its own (RowSchema.inherit, RowSchema.run_count)
    selection: Selection | None = None
    version: str | None = None
    avg_of: AvgOf = ()
    avg_of_assumed: StrictBool = False
    runs: Runs = 1
    best_of: BestOf | None = None

    @model_validator(mode="after")
    def _printed_columns(self) -> RowSchema:
        stray = [c for c in self.printed_as if c not in self.values]
        if stray:
            raise ValueError(f"printed_as names columns not in values: {', '.join(stray)}")
        return self

    def inherit(self, table: TableSchema, name: str) -> Any:
        """The row's ``name`` where it gives one (even null), else its table's."""
        return getattr(self if name in self.model_fields_set else table, name)

    def run_count(self, table: TableSchema) -> dict[str, Any]:
        """``runs`` and ``best_of``: the row's where it gives either key, else its table's (one answer, two keys)."""
        own = self if self.model_fields_set & {"runs", "best_of"} else table
        return {"runs": own.runs, "best_of": own.best_of}


class TableSchema(_RunCount):
    LEVEL = "table"
    id: Id
    table: str
    caption: str = ""
    metric: str
    split: Split | None = None
    kind: Kind = "scores"
    decimals: StrictInt = 2
    notes: Notes = ()
    rows: list[RowSchema]
    selection: Selection | None = None
    version: str | None = None
    source: str | None = None
    avg_of: AvgOf = ()
    avg_of_assumed: StrictBool = False
    analysis: str | None = None
    runs: Runs = 1
    best_of: BestOf | None = None

    @model_validator(mode="after")
    def _assumed_with_avg_of(self) -> TableSchema:
        for r in self.rows:
            if r.inherit(self, "avg_of_assumed") and not r.inherit(self, "avg_of"):
                raise ValueError(
                    f"row '{r.id}': avg_of_assumed: true needs avg_of (the row's or its table's)"
                )
        return self


class FileSchema(_Level):
    LEVEL = "file"
    paper: PaperSchema
    tables: list[TableSchema]

    def entries(self) -> list[Entry]:
        """The file's rows, in table and row order; a row's settings override its table's, its table's the paper's."""
        p = self.paper
        paper = Paper(p.id, p.title, p.citation, p.source, p.notes, p.arxiv, p.venue, p.year, p.version)
        return [
            Entry(
                key="/".join(part for part in (paper.slug, t.id, r.id) if part),
                paper=paper,
                table=t.table,
                caption=t.caption,
                row=r.row,
                metric=t.metric,
                split=t.split,
                kind=t.kind,
                decimals=t.decimals,
                values={c: float(v) for c, v in r.values.items()},
                notes=paper.notes + t.notes + r.notes,
                printed_as=tuple(r.printed_as.items()),
                selection=r.inherit(t, "selection"),
                version=r.version or t.version or paper.version or "",
                source=t.source or paper.source,
                avg_of=r.inherit(t, "avg_of"),
                avg_of_assumed=r.inherit(t, "avg_of_assumed"),
                analysis=t.analysis or None,
                **r.run_count(t),
            )
            for t in self.tables
            for r in t.rows
        ]


# the keys each level of a published-numbers file may hold (docs/published.md's tables name each)
KEYS: dict[str, tuple[str, ...]] = {
    m.LEVEL: tuple(m.model_fields) for m in (FileSchema, PaperSchema, TableSchema, RowSchema)
}


Blank = Annotated[str, BeforeValidator(lambda v: "" if v is None else v)]  # absent or null: empty


class FigureEntry(_Level):
    """One experimental figure of a seed paper (keyed ``<paper>/<id>``), as its file holds it."""

    LEVEL = "figure"
    paper: Text
    id: Text
    figure: Text  # "Figure 8"
    caption: Blank = ""
    shows: Text
    x: Text
    y: Text
    claim: Blank = ""
    numbers: Annotated[dict[str, Any], BeforeValidator(lambda v: {} if v is None else v)] = {}
    source: Text
    ref_only: StrictBool = False
    out_of_scope: str | None = None
    renderer: Renderer | None = None
    setting: str | None = None  # a sweep's or grid's option
    missing: str | None = None
    notes: Notes = ()

    @property
    def key(self) -> str:
        """``<paper>/<id>``."""
        return f"{self.paper}/{self.id}"

    @property
    def drawn(self) -> bool:
        """Whether stsbench has a renderer for it."""
        return self.renderer is not None

    @model_validator(mode="after")
    def _drawn_or_why_not(self) -> FigureEntry:
        if self.renderer in ("sweep", "grid") and not self.setting:
            raise ValueError(f"a {self.renderer} figure names its setting")
        if self.renderer is None and not (self.missing or self.out_of_scope):
            raise ValueError("without a renderer, say what is missing or why it is out of scope")
        return self


class FiguresSchema(_Level):
    LEVEL = "file"
    figures: list[FigureEntry]


M = TypeVar("M", bound=_Level)


def validated(model: type[M], data: Any, where: str, error: type[Exception]) -> M:
    """``data`` as ``model``; else ``error``: ``{where} table 't1' row 'r': unknown row key 'x' (did you mean ...)``."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()  # an unknown key first: a misspelt required key is also reported missing
        err = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        raise error(_line(err, model, data, where)) from None


# pydantic's errors in the registry's words: {name} the key, {found} its value, {choices} a Literal's
_SAID = {
    "missing": "missing '{name}'",
    "dict_type": "'{name}' must be a mapping, found {found}",
    "list_type": "'{name}' must be a list of {name}",
    "int_type": "'{name}' must be an integer, found {found}",
    "string_type": "'{name}' must be text, found {found}",
    "string_too_short": "'{name}' is empty",
    "bool_type": "{name} is true or false, found {found}",
    "literal_error": "{name} must be one of {choices}, found {found}",
    "greater_than_equal": "'{name}' must be at least {ge}, found {found}",
}


def _line(err: Any, model: type[_Level], data: Any, where: str) -> str:
    """One error of pydantic's in the registry's words, at the table and row (by id) or figure it is in."""
    rest, node, kind = list(err["loc"]), data, err["type"]
    while rest and (sub := _sub_level(model, rest[0])) is not None:
        sub_model, many = sub
        items = node.get(rest[0]) if isinstance(node, dict) else None
        if many and len(rest) > 1 and isinstance(rest[1], int):
            i = rest[1]
            node = items[i] if isinstance(items, list) and i < len(items) else None
            where, rest = f"{where} {sub_model.LEVEL} {_label(node, i)}", rest[2:]
        elif not many and (len(rest) > 1 or kind != "missing"):
            node, where, rest = items, f"{where} {sub_model.LEVEL}", rest[1:]
        else:
            break
        model = sub_model
    name, found = (str(rest[0]) if rest else ""), f"{err.get('input')!r:.40}"
    if kind == "extra_forbidden":
        near = difflib.get_close_matches(name, list(model.model_fields), n=1)
        hint = (
            f" (did you mean '{near[0]}'?)"
            if near
            else f"; a {model.LEVEL} holds {', '.join(model.model_fields)}"
        )
        text = f"unknown {model.LEVEL} key '{name}'{hint}"
    elif not rest and kind in ("model_type", "dict_type"):
        text = f"expected a mapping of {model.LEVEL} keys, found {err.get('input')!r:.60}"
    elif kind == "value_error":
        text = str(err["msg"]).removeprefix("Value error, ")
    elif kind in _SAID:
        ctx = err.get("ctx") or {}
        choices = ", ".join(re.findall(r"'([^']*)'", str(ctx.get("expected", ""))))
        text = _SAID[kind].format(name=name, found=found, choices=choices, ge=ctx.get("ge"))
    else:
        text = f"{'.'.join(map(str, rest)) or model.LEVEL}: {err['msg']}, found {found}"
    return f"{where}: {text}"


def _sub_level(model: type[_Level], key: Any) -> tuple[type[_Level], bool] | None:
    """The model a key of ``model`` holds (one, or a list of them: ``many``); None for a plain value."""
    info = model.model_fields.get(key) if isinstance(key, str) else None
    if info is None:
        return None
    many = get_origin(info.annotation) is list
    inner = get_args(info.annotation)[0] if many else info.annotation
    return (inner, many) if isinstance(inner, type) and issubclass(inner, _Level) else None


def _label(node: Any, i: int) -> str:
    """A table, row or figure as an error names it: by its id (a figure's ``paper/id``), else by its place."""
    if isinstance(node, dict) and isinstance(node.get("id"), str):
        return f"'{node['paper']}/{node['id']}'" if isinstance(node.get("paper"), str) else f"'{node['id']}'"
    return str(i + 1)
