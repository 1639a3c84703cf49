"""The runs a recipe declares, kept with their results: ``<results>/recipe_runs.json``.

A recipe says what its runs are: which runs a sweep's points are, the setting of each point and the published
row or cell each is held against. A report reads that here rather than working it out again from the runs'
configs, so that its Ablations tables and sweep figures set beside each setting the cell the recipe names (the one
its Reproduction section judges). ``stsbench reproduce`` writes the file before its report step
(:func:`stsbench.reproduce.plan.prepare`); a report of results without one finds sweeps by their configs alone
and sets beside them only what ``--against`` names.

``{"kind": "stsbench.recipe_runs", "schema_version": 1, "recipe": "mocose-ema-mini", "runs": [{"name":
"ema.ema_decay_start-0.85", "label": "MoCoSE (ema_decay_start=0.85)", "method": "mocose", "sweep_of": "ema",
"point": {"ema_decay_start": 0.85}, "published": ["mocose/table3/ema-decay#ema=0.85"]}, ...]}``: a run by the
folder its seeds train into (``runs/<name>/seed-<s>``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from stsbench.errors import StsbenchError
from stsbench.results.schema import FIRST_VERSION, RECIPE_RUNS_KIND, SCHEMA_VERSION, JsonObject

if TYPE_CHECKING:
    from stsbench.recipes import Recipe

RECIPE_RUNS_FILE = "recipe_runs.json"


@dataclass(frozen=True)
class DeclaredRun:
    """One run as its recipe declares it."""

    name: str  # its seeds' folder
    label: str | None
    method: str
    sweep_of: str | None = None  # the sweep or grid it is a point of
    point: JsonObject = field(default_factory=dict)  # that point's settings (option -> value)
    published: tuple[str, ...] = ()  # the rows or cells it is held against, the first one first


@dataclass(frozen=True)
class RecipeRuns:
    """``recipe_runs.json``: the recipe's name and its runs."""

    recipe: str
    runs: list[DeclaredRun]
    kind: Literal["stsbench.recipe_runs"] = RECIPE_RUNS_KIND
    schema_version: int = FIRST_VERSION


def declared_runs(recipe: Recipe) -> list[DeclaredRun]:
    """The recipe's runs as the file keeps them."""
    return [
        DeclaredRun(r.name, r.label, r.method, r.sweep_of, dict(r.point), tuple(r.addresses))
        for r in recipe.runs
    ]


def write_recipe_runs(results_dir: Path, recipe: Recipe) -> Path:
    """Record ``recipe``'s runs with the results under ``results_dir`` (atomic), the file written whole.

    What the report reads is the recipe's runs as they are now (a subset's, ``reproduce --runs``, its own): a run
    dropped from the recipe, or left out of this subset, leaves the file.
    """
    from stsbench.files import atomic_write_text

    path = Path(results_dir) / RECIPE_RUNS_FILE
    data = {
        "kind": RECIPE_RUNS_KIND,
        "schema_version": SCHEMA_VERSION,
        "recipe": recipe.name,
        "runs": [{**asdict(r), "published": list(r.published)} for r in declared_runs(recipe)],
    }
    return atomic_write_text(path, json.dumps(data, indent=2) + "\n")


def _read(path: Path) -> list[DeclaredRun]:
    from stsbench.results.validation import Malformed, validated

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StsbenchError(f"{path}: not readable JSON ({exc}); remove it or run reproduce again") from None
    try:
        if not isinstance(data, dict) or data.get("kind") != RECIPE_RUNS_KIND:
            raise Malformed("kind")
        return validated(RecipeRuns, data).runs
    except Malformed:
        raise StsbenchError(
            f"{path}: not a recipe's runs file (kind {RECIPE_RUNS_KIND!r} with its runs); remove it"
        ) from None


def read_recipe_runs(folders: Iterable[str | Path]) -> dict[str, DeclaredRun]:
    """The declared runs of ``folders`` by name (a name declared twice: the first folder's); malformed: one line."""
    found: dict[str, DeclaredRun] = {}
    for folder in folders:
        path = Path(folder) / RECIPE_RUNS_FILE
        if path.is_file():
            for run in _read(path):
                found.setdefault(run.name, run)
    return found
