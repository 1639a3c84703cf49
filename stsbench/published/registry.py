"""The registry of published numbers: one YAML file per paper beside this module, one entry per table row.

A file holds ``paper`` (id, title, citation, source, notes; arxiv, venue, year and the version its tables were
read from) and ``tables``; each level is a pydantic model of :mod:`stsbench.published.schema`, which refuses an
unknown key. A table holds its number as the paper prints it, caption, metric, split (``test``/``dev``; absent
where the paper does not say), kind (``scores``, or ``analysis`` for numbers that are not task scores), decimals
(2 unless given), notes and ``rows``. A row holds an id, the row label (model/method), ``values`` (column ->
number, in the paper's column order), notes, and ``printed_as`` (column -> the source text's own rendering where
it differs from the number at the table's decimals, e.g. ``"7122"`` for 71.22). A table or a row may say how its
checkpoints were chosen, ``selection`` (:data:`SELECTIONS`; a row's overrides its table's), where that is not the
usual dev-set choice. An entry's key is ``<paper id>/<table id>/<row id>``, or
``<paper id>/<row id>`` for a table whose id is empty. Columns that are task scores use the tasks' registered
names (:mod:`stsbench.tasks.registry`). Every row cites a publication: its paper, the version of it the table
was read from (a table's or row's ``version`` overrides the paper's, e.g. the final paper's table beside the
first preprint's) and where the numbers were read (``source``, a table's overriding the paper's). A table or row
whose figures are averages without task columns (an ``Avg.``-only row, a sweep's settings) says what the average
covers, ``avg_of`` (a task set, ``sts`` or ``transfer``, or a list of tasks), and ``avg_of_assumed: true`` where
the paper does not say and the registry reads it so (shown as an assumption wherever the cell is judged). An
analysis table names the stsbench analysis that computes its figures (``analysis: length_bias``). A table or a row
says how many runs a figure is where the paper does: ``runs: k``, the mean of k runs (1, a single run, unless
given), or ``best_of: K``, the best (or dev-selected) of K runs, never both on one level; a row that gives either
takes neither from its table (``Entry.runs``, ``Entry.best_of``).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.files import parse_yaml, read_yaml
from stsbench.published.records import SELECTIONS, Entry, Kind, Paper, RegistryError, Selection, Split
from stsbench.tasks.registry import TASK_SETS
from stsbench.tasks.registry import TASKS as TASK_REGISTRY

__all__ = [  # with what the modules that read the registry import from here (records' and the tasks')
    "SELECTIONS", "STS_TASKS", "TASKS", "TASK_REGISTRY", "TRANSFER_TASKS", "Entry", "Kind", "Paper", "RegistryError",
    "Selection", "Split", "file_key", "find_entries", "get_cell", "get_entry", "load_published_file", "load_registry",
    "parse_registry_file", "split_cell",
]  # fmt: skip

# the papers' task sets, in their column order: what every Avg. is over (a plugin's task is in neither)
STS_TASKS = TASK_SETS["sts"]
TRANSFER_TASKS = TASK_SETS["transfer"]
TASKS = TASK_REGISTRY  # every task, the plugins' too: ``name in TASKS``, ``list(TASKS)``


def __getattr__(name: str) -> Any:
    """``KEYS``, the keys each level of a file may hold: the schema's, imported on use (pydantic's import is slow)."""
    if name == "KEYS":
        from stsbench.published.schema import KEYS

        return KEYS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def parse_registry_file(data: Any, filename: str) -> list[Entry]:
    """Entries from one registry file's parsed YAML (raises :class:`RegistryError` on a malformed file).

    Validated by :class:`stsbench.published.schema.FileSchema`: an unknown key at any level is refused with the
    nearest known one (a misspelt ``selection`` would otherwise be ignored silently), as is a value of the wrong
    type; the line names the file, the table and the row.
    """
    from stsbench.published.schema import FileSchema, validated

    return validated(FileSchema, data, f"published registry {filename}", RegistryError).entries()


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
    found = _any_case(f"{path}#{row}", rows)
    if found is not None:
        return found
    names = [k.split("#", 1)[1] for k in rows]
    near = close_matches(row, names)
    hint = f"close matches: {', '.join(near)}" if near else f"its rows: {', '.join(names[:5])}"
    raise StsbenchError(f"published file {path} has no row '{row}'; {hint}")


def _any_case(key: str, entries: dict[str, Entry]) -> Entry | None:
    """The entry ``key`` names, in its own case or any other; None if none."""
    return entries.get(key) or {k.lower(): e for k, e in entries.items()}.get(key.lower())


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
    found = _any_case(key, registry)
    if found is not None:
        return found
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
