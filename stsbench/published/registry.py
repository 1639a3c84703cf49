"""The registry of published numbers: one YAML file per paper beside this module, one entry per table row.

A file holds ``paper`` (id, title, citation, source, notes; arxiv, venue, year and the version its tables were
read from) and ``tables``. A table holds its number as the
paper prints it, caption, metric, split (``test``/``dev``; absent where the paper does not say), kind
(``scores``, or ``analysis`` for numbers that are not task scores), decimals (2 unless given), notes and
``rows``. A row holds an id, the row label (model/method), ``values`` (column -> number, in the paper's column
order), notes, and ``printed_as`` (column -> the source text's own rendering where it differs from the number
at the table's decimals, e.g. ``"7122"`` for 71.22). A table or a row may say how its checkpoints were chosen,
``selection`` (:data:`SELECTIONS`; a row's overrides its table's), where that is not the usual dev-set choice. An entry's key is ``<paper id>/<table id>/<row id>``, or
``<paper id>/<row id>`` for a table whose id is empty. Columns that are task scores use the tasks' registered
names (:mod:`stsbench.tasks.registry`). Every row cites a publication: its paper, the version of it the table
was read from (a table's or row's ``version`` overrides the paper's, e.g. the final paper's table beside the
first preprint's) and where the numbers were read (``source``, a table's overriding the paper's). A table or row
whose figures are averages without task columns (an ``Avg.``-only row, a sweep's settings) says what the average
covers, ``avg_of`` (a task set, ``sts`` or ``transfer``, or a list of tasks), and ``avg_of_assumed: true`` where
the paper does not say and the registry reads it so (shown as an assumption wherever the cell is judged). An
analysis table names the stsbench analysis that computes its figures (``analysis: length_bias``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Literal

from stsbench.errors import StsbenchError
from stsbench.files import parse_yaml, read_yaml
from stsbench.tasks.registry import TASK_SETS
from stsbench.tasks.registry import TASKS as TASK_REGISTRY

# the papers' task sets, in their column order: what every Avg. is over (a plugin's task is in neither)
STS_TASKS = TASK_SETS["sts"]
TRANSFER_TASKS = TASK_SETS["transfer"]
TASKS = TASK_REGISTRY  # every task, the plugins' too: ``name in TASKS``, ``list(TASKS)``

Kind = Literal["scores", "analysis"]
Split = Literal["test", "dev"]
Selection = Literal["test-sets"]
# how a published row's checkpoint was chosen, where it was not on a dev set: the mark a report shows
SELECTIONS: dict[str, str] = {
    "test-sets": "selected on the test sets by the official code",
}


@dataclass(frozen=True)
class Paper:
    """Where a table comes from."""

    slug: str  # the first part of every key, e.g. ``esimcse-arxiv``
    title: str
    citation: str  # authors, title, venue, year, arXiv id
    source: str  # the text the numbers were read from (a publication's text, never a local file)
    notes: tuple[str, ...] = ()
    arxiv: str | None = None  # e.g. ``2104.08821``
    venue: str | None = None  # e.g. ``EMNLP 2021``
    year: int | None = None
    version: str | None = None  # the version the tables were read from, e.g. ``arXiv:2104.08821v1``


@dataclass(frozen=True)
class Entry:
    """One published row: a model or method's numbers in one table of one paper."""

    key: str
    paper: Paper
    table: str  # as the paper numbers it, e.g. ``Table 5``
    caption: str
    row: str  # the row label (model/method)
    metric: str  # what the numbers are
    split: Split | None  # the evaluation split, where the paper says
    kind: Kind
    decimals: int
    values: dict[str, float]  # column -> value, in the paper's order
    notes: tuple[str, ...] = ()  # the paper's, then the table's, then the row's
    printed_as: tuple[tuple[str, str], ...] = ()  # (column, the source text's rendering) where garbled
    selection: Selection | None = None  # how the checkpoint was chosen, where not on a dev set
    # the publication's version the row was read from (the row's or table's, else the paper's)
    version: str = ""
    source: str = ""  # where its numbers were read (the table's, else the paper's)
    avg_of: tuple[str, ...] = ()  # the tasks an Avg.-only row's or a sweep's figures average (see the docstring)
    avg_of_assumed: bool = False  # the paper does not say what its average covers: avg_of is our reading
    analysis: str | None = None  # an analysis table's: the stsbench analysis that computes its figures

    @property
    def cite(self) -> str:
        """The row's citation: paper, version, table."""
        return f"{self.paper.citation}; {self.version or 'version not stated'}; {self.table}"

    @property
    def selection_note(self) -> str | None:
        """The mark for :attr:`selection`, e.g. "selected on the test sets by the official code"."""
        return None if self.selection is None else SELECTIONS[self.selection]

    @property
    def task_values(self) -> dict[str, float]:
        """The columns that are task scores (what ``stsbench check`` compares)."""
        return {c: v for c, v in self.values.items() if TASKS.canonical(c) == c}

    def printed(self, column: str) -> str:
        """Render a value as the source text shows it."""
        return dict(self.printed_as).get(column) or self.format(self.values[column])

    def format(self, value: float) -> str:
        """Render a number at this table's precision."""
        return f"{value:.{self.decimals}f}"


class RegistryError(StsbenchError, ValueError):
    """A published-numbers file that cannot be read: one line naming the file, the table or row, and the key."""


# the keys each level of a registry file may hold (the module docstring says what each is)
KEYS = {
    "file": ("paper", "tables"),
    "paper": ("id", "title", "citation", "source", "notes", "arxiv", "venue", "year", "version"),
    "table": (
        *("id", "table", "caption", "metric", "split", "kind", "decimals", "notes", "rows", "selection"),
        *("version", "source", "avg_of", "avg_of_assumed", "analysis"),
    ),
    "row": ("id", "row", "values", "printed_as", "notes", "selection", "version", "avg_of", "avg_of_assumed"),
}


def _known(obj: Any, level: str, where: str) -> dict[str, Any]:
    """``obj``, a mapping whose keys are all :data:`KEYS`' for ``level``; else a ``RegistryError`` naming the key."""
    if not isinstance(obj, dict):
        raise RegistryError(f"published registry {where}: expected a mapping of {level} keys, found {obj!r:.60}")
    unknown = [k for k in obj if k not in KEYS[level]]
    if unknown:
        key = str(unknown[0])
        near = difflib.get_close_matches(key, KEYS[level], n=1)
        hint = f" (did you mean '{near[0]}'?)" if near else f"; a {level} holds {', '.join(KEYS[level])}"
        raise RegistryError(f"published registry {where}: unknown {level} key '{key}'{hint}")
    return obj


def _need(obj: dict[str, Any], name: str, where: str) -> Any:
    if name not in obj:
        raise RegistryError(f"published registry {where}: missing '{name}'")
    return obj[name]


def _id(obj: dict[str, Any], where: str) -> str:
    """An ``id`` (a paper's, a table's, a row's) as written: text, or a ``RegistryError`` saying how to quote it.

    YAML reads an unquoted ``off``, ``yes`` or ``true`` as a boolean and ``3`` as a number: turned back into
    text they would be ``False`` or another spelling, and a cell address would no longer name the row.
    """
    value = _need(obj, "id", where)
    if isinstance(value, str):
        return value
    what = "a boolean (YAML reads unquoted yes/no/on/off/true/false so)" if isinstance(value, bool) else (
        "a number, not text" if isinstance(value, (int, float)) else f"a {type(value).__name__}, not text"
    )
    raise RegistryError(f"published registry {where}: id {value!r} was read as {what}; quote it, e.g. id: 'off'")


def _number(value: Any, name: str, where: str) -> int:
    """An integer key's value (``year``, ``decimals``), or a ``RegistryError`` naming it."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise RegistryError(f"published registry {where}: '{name}' must be an integer, found {value!r:.40}")
    return value


def _notes(obj: dict[str, Any]) -> tuple[str, ...]:
    notes = obj.get("notes") or ()
    return (notes,) if isinstance(notes, str) else tuple(str(n) for n in notes)


def parse_registry_file(data: dict[str, Any], filename: str) -> list[Entry]:
    """Entries from one registry file's parsed YAML (raises :class:`RegistryError` on a malformed file).

    An unknown key at any level is refused (a misspelt ``selection`` would otherwise be ignored silently), as is a
    value of the wrong type.
    """
    data = _known(data, "file", filename)
    p = _known(_need(data, "paper", filename), "paper", f"{filename} paper")
    paper = Paper(
        slug=_id(p, f"{filename} paper"),
        title=str(_need(p, "title", filename)),
        citation=str(_need(p, "citation", filename)),
        source=str(_need(p, "source", filename)),
        notes=_notes(p),
        arxiv=None if p.get("arxiv") is None else str(p["arxiv"]),
        venue=None if p.get("venue") is None else str(p["venue"]),
        year=None if p.get("year") is None else _number(p["year"], "year", f"{filename} paper"),
        version=None if p.get("version") is None else str(p["version"]),
    )
    entries = []
    tables = _need(data, "tables", filename)
    if not isinstance(tables, list):
        raise RegistryError(f"published registry {filename}: 'tables' must be a list of tables")
    for t in tables:
        t = _known(t, "table", f"{filename} table")
        tid = _id(t, filename)
        where = f"{filename} table '{tid}'"
        kind, split = t.get("kind", "scores"), t.get("split")
        if kind not in ("scores", "analysis") or split not in ("test", "dev", None):
            raise RegistryError(f"published registry {where}: kind must be scores|analysis, split test|dev")
        rows = _need(t, "rows", where)
        if not isinstance(rows, list):
            raise RegistryError(f"published registry {where}: 'rows' must be a list of rows")
        for r in rows:
            r = _known(r, "row", f"{where} row")
            rid = _id(r, f"{where} row")
            selection = r.get("selection", t.get("selection"))
            if selection is not None and selection not in SELECTIONS:
                raise RegistryError(
                    f"published registry {where} row '{rid}': selection must be one of {', '.join(SELECTIONS)}"
                )
            values = _need(r, "values", f"{where} row '{rid}'")
            if not isinstance(values, dict) or not values or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in values.values()
            ):
                raise RegistryError(f"published registry {where} row '{rid}': values must be numbers")
            printed_as = r.get("printed_as") or {}
            if not isinstance(printed_as, dict):
                raise RegistryError(f"published registry {where} row '{rid}': printed_as maps columns to text")
            printed = {str(c): str(s) for c, s in printed_as.items()}
            if not set(printed) <= set(values):
                raise RegistryError(f"published registry {where} row '{rid}': printed_as names unknown columns")
            avg_of = _avg_of(r.get("avg_of", t.get("avg_of")), f"{where} row '{rid}'")
            assumed = r.get("avg_of_assumed", t.get("avg_of_assumed", False))
            if not isinstance(assumed, bool) or (assumed and not avg_of):
                raise RegistryError(f"published registry {where} row '{rid}': avg_of_assumed is true|false, with avg_of")
            entries.append(
                Entry(
                    key="/".join(part for part in (paper.slug, tid, rid) if part),
                    paper=paper,
                    table=str(_need(t, "table", where)),
                    caption=str(t.get("caption", "")),
                    row=str(_need(r, "row", where)),
                    metric=str(_need(t, "metric", where)),
                    split=split,
                    kind=kind,
                    decimals=_number(t.get("decimals", 2), "decimals", where),
                    values={str(c): float(v) for c, v in values.items()},
                    notes=paper.notes + _notes(t) + _notes(r),
                    printed_as=tuple(printed.items()),
                    selection=selection,
                    version=str(r.get("version") or t.get("version") or paper.version or ""),
                    source=str(t.get("source") or paper.source),
                    avg_of=avg_of,
                    avg_of_assumed=assumed,
                    analysis=str(t["analysis"]) if t.get("analysis") else None,
                )
            )
    return entries


def _avg_of(value: Any, where: str) -> tuple[str, ...]:
    """``avg_of`` as task names: a task set's, or the listed tasks; an unknown name is a ``RegistryError``."""
    if value is None:
        return ()
    if isinstance(value, str) and value in TASK_SETS:
        return tuple(TASK_SETS[value])
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or any(n not in TASK_REGISTRY.names() for n in names):
        raise RegistryError(
            f"published registry {where}: avg_of is a task set ({', '.join(TASK_SETS)}) or a list of task names, "
            f"got {value!r}"
        )
    return tuple(names)


@lru_cache(maxsize=1)
def load_registry() -> dict[str, Entry]:
    """Every published entry, by key, in file and table order."""
    registry: dict[str, Entry] = {}
    files = sorted(
        (f for f in resources.files(__package__).iterdir() if f.name.endswith(".yaml") and f.name != FIGURES),
        key=lambda f: f.name,
    )
    for f in files:
        data = parse_yaml(f.read_text(encoding="utf-8"), f"published registry {f.name}", RegistryError)
        for entry in parse_registry_file(data, f.name):
            if entry.key in registry:
                raise RegistryError(f"published registry {f.name}: duplicate key '{entry.key}'")
            registry[entry.key] = entry
    return registry


# a key naming a published file of one's own: FILE.yaml#TABLE/ROW (or FILE.yaml alone for a one-row file)
FILE_SUFFIXES = (".yaml", ".yml")
FIGURES = "figures.yaml"  # the figures' registry (stsbench.published.figures), not a paper's tables
FILE_SCHEMA_DOC = "docs/published.md"


def file_key(key: str) -> tuple[str, str] | None:
    """``(file, TABLE/ROW)`` when ``key`` names a row of a published file of one's own, else None.

    A key is a file's when the part before its first ``#`` ends with ``.yaml`` or ``.yml``.
    """
    path, _, row = key.partition("#")
    return (path, row) if path.lower().endswith(FILE_SUFFIXES) else None


def split_cell(address: str) -> tuple[str, str | None]:
    """``(row key, column)`` of a cell address ``KEY#COLUMN``; ``(key, None)`` for a row's key.

    ``simcse/table4/dropout-p#p=0.1``; a published file's row takes one more ``#``:
    ``mine.yaml#table1/ours#STS12``. A registry key holds no ``#``, a file's holds one.
    """
    in_file = file_key(address)
    if in_file is None:
        key, _, column = address.partition("#")
        return key, column or None
    path, rest = in_file
    row, _, column = rest.partition("#")
    return f"{path}#{row}", column or None


def get_cell(address: str) -> tuple[Entry, str | None]:
    """The row a cell address names and its column (None: the whole row); an unknown column is one line."""
    key, column = split_cell(address)
    entry = get_entry(key)
    if column is not None and column not in entry.values:
        near = close_matches(column, list(entry.values))
        hint = f"; did you mean {near[0]}?" if near else f"; its columns: {', '.join(entry.values)}"
        raise StsbenchError(f"published row {entry.key} has no column {column!r}{hint}")
    return entry, column


def load_published_file(path: str) -> dict[str, Entry]:
    """The rows of a published file of one's own, by key ``FILE#TABLE/ROW`` (``FILE#ROW`` for an unnamed table).

    The file has the registry's schema (:func:`parse_registry_file`, documented in ``docs/published.md``) and is
    validated the same way; a missing, unreadable or malformed file is one line naming it.
    """
    expected = f"a YAML file in the registry's schema ({FILE_SCHEMA_DOC})"
    data = read_yaml(path, f"published file {path}", expected, RegistryError)
    rows: dict[str, Entry] = {}
    for entry in parse_registry_file(data, path):
        key = f"{path}#{entry.key.removeprefix(entry.paper.slug).lstrip('/')}"
        if key in rows:
            raise RegistryError(f"published registry {path}: duplicate row '{key}'")
        rows[key] = replace(entry, key=key)
    return rows


def _file_entry(path: str, row: str) -> Entry:
    rows = load_published_file(path)
    if not row:
        if len(rows) == 1:
            return next(iter(rows.values()))
        raise StsbenchError(
            f"published file {path} holds {len(rows)} rows; name one as {path}#TABLE/ROW "
            f"({', '.join(k.split('#', 1)[1] for k in list(rows)[:5])}{', ...' if len(rows) > 5 else ''})"
        )
    key = f"{path}#{row}"
    by_lower = {k.lower(): e for k, e in rows.items()}
    if key.lower() in by_lower:
        return by_lower[key.lower()]
    names = [k.split("#", 1)[1] for k in rows]
    near = close_matches(row, names)
    hint = f"close matches: {', '.join(near)}" if near else f"its rows: {', '.join(names[:5])}"
    raise StsbenchError(f"published file {path} has no row '{row}'; {hint}")


def close_matches(key: str, keys: list[str], n: int = 5) -> list[str]:
    """Keys that start with ``key`` or look like it, best first."""
    low = key.lower()
    prefixed = [k for k in keys if k.lower().startswith(low)]
    similar = difflib.get_close_matches(low, [k.lower() for k in keys], n=n, cutoff=0.5)
    by_lower = {k.lower(): k for k in keys}
    return list(dict.fromkeys([*prefixed, *(by_lower[s] for s in similar)]))[:n]


def get_entry(key: str) -> Entry:
    """Look up ``key`` (case-insensitive); an unknown key raises ``StsbenchError`` naming close matches.

    ``FILE.yaml#TABLE/ROW`` is a row of a published file of one's own (:func:`load_published_file`).
    """
    in_file = file_key(key)
    if in_file is not None:
        return _file_entry(*in_file)
    registry = load_registry()
    if key in registry:
        return registry[key]
    by_lower = {k.lower(): e for k, e in registry.items()}
    if key.lower() in by_lower:
        return by_lower[key.lower()]
    near = close_matches(key, list(registry))
    hint = f"close matches: {', '.join(near)}" if near else f"none of the {len(registry)} keys is close"
    raise StsbenchError(f"unknown published key '{key}'; {hint} (all keys: `stsbench published list`)")


def _squash(text: str) -> str:
    """Lower case, letters and digits only: ``SimCSE-BERT _{base}`` and ``simcse-bert-base`` meet."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def find_entries(match: str | None = None, paper: str | None = None, model: str | None = None) -> list[Entry]:
    """Entries that pass every filter given (any case); all when none is.

    ``match``: in the key, paper title, table or row. ``paper``: the paper's slug (the keys' first part)
    or the start of slugs, e.g. ``esimcse`` for both ESimCSE versions; an unknown one raises ``StsbenchError``
    naming the slugs. ``model``: in the row label or the key's last part, ignoring case, spaces and
    punctuation (``bert-base`` finds ``SimCSE-BERT _{base}``).
    """
    entries = list(load_registry().values())
    if paper:
        slugs = sorted({e.paper.slug for e in entries})
        low = paper.lower()
        wanted = [s for s in slugs if s == low] or [s for s in slugs if s.startswith(low)]
        if not wanted:
            raise StsbenchError(f"no paper '{paper}'; papers: {', '.join(slugs)}")
        entries = [e for e in entries if e.paper.slug in wanted]
    if model:
        low = _squash(model)
        entries = [e for e in entries if low in _squash(e.row) or low in _squash(e.key.rsplit("/", 1)[-1])]
    if match:
        low = match.lower()
        entries = [
            e for e in entries if any(low in s.lower() for s in (e.key, e.paper.title, e.table, e.row))
        ]
    return entries
