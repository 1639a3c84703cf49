"""``stsbench reproduce --list``: every built-in recipe, the published cells it produces, and the ones none can.

A recipe *produces* a cell (``KEY#COLUMN``) when one of its runs is held against it (``published``, or
``also_published``; a row's key stands for each of its cells that has a figure of ours,
:func:`stsbench.published.cells.figure_of`), or when it runs the analysis an analysis table of its ``published``
names. Its ``unreproducible`` rows and cells are those no built-in recipe can produce, each with a reason from a
closed set (:data:`stsbench.recipes.UNREPRODUCIBLE`). Every cell of every registry table but MTEB's is in some
recipe's cells or unreproducible: ``tests/test_recipes_list.py`` checks it, and that ``docs/recipes-list.md``
(this module's :func:`markdown`, run as ``python -m stsbench.reproduce.listing``) is what it prints.

The cost is the training steps the recipe's runs take (``max_steps``, or epochs over the corpus' known size, not
the files here) times the measured step time of each device :mod:`stsbench.reproduce.cost` knows.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from stsbench.recipes import Recipe, Run, load_recipe, recipe_names

MTEB_PREFIX = "mteb"


def cells_of(address: str) -> list[str]:
    """The cells an address names, ``KEY#COLUMN`` each (a row: each of its columns)."""
    from stsbench.published.registry import get_cell

    entry, column = get_cell(address)
    return [f"{entry.key}#{c}" for c in ([column] if column is not None else entry.values)]


def produced(recipe: Recipe) -> list[str]:
    """The cells ``recipe`` produces (module docstring), in recipe order, each once."""
    from stsbench.published.cells import figure_of
    from stsbench.published.registry import get_cell, get_entry

    found: dict[str, None] = {}
    for run in recipe.runs:
        for address in run.addresses:
            entry, column = get_cell(address)
            for c in [column] if column is not None else entry.values:
                if figure_of(entry, c) is not None:
                    found[f"{entry.key}#{c}"] = None
    analyses = {a.name for a in recipe.analyses}
    for key in recipe.published:
        entry = get_entry(key)
        if entry.kind == "analysis" and entry.analysis in analyses:
            found.update(dict.fromkeys(cells_of(key)))
    return list(found)


def unreproducible(recipe: Recipe) -> dict[str, str]:
    """``{cell: reason}`` of the recipe's ``unreproducible``, a row's reason given to each of its cells."""
    return {cell: reason for address, reason in recipe.unreproducible.items() for cell in cells_of(address)}


def registry_cells() -> list[str]:
    """Every cell of every registry table but MTEB's."""
    from stsbench.published.registry import load_registry

    return [f"{k}#{c}" for k, e in load_registry().items() if not k.startswith(MTEB_PREFIX) for c in e.values]


def _steps(run: Run) -> int | None:
    """One seed's optimizer steps, as the plan counts them, from the corpus' known size (None: unknown)."""
    from stsbench.data.corpora import CORPORA
    from stsbench.reproduce.plan import run_config
    from stsbench.train.schedule import run_steps

    config = run_config(run, None)
    lines = config.get("train_lines")
    if lines is None:
        name = CORPORA.canonical(str(config.get("train_file", "")))
        lines = getattr(CORPORA.get(name), "lines", None) if name else None
    epochs, batch = int(config.get("epochs", 1)), int(config.get("batch_size", 64))
    return run_steps(config.get("max_steps"), epochs, lines, batch)


def cost(recipe: Recipe) -> dict[str, float | None]:
    """Hours of training per device with a measured step time for every run's backbone and method (None: unknown)."""
    from stsbench.reproduce.cost import STEP_TIMES, step_time
    from stsbench.reproduce.plan import run_config

    runs = [(run, run_config(run, None), _steps(run)) for run in recipe.runs]
    devices = sorted({t.device for t in STEP_TIMES for _, c, _ in runs if c.get("model") in t.models})
    out: dict[str, float | None] = {}
    for device in devices:
        total: float | None = 0.0
        for run, config, steps in runs:
            row = step_time(device, config.get("model"), run.method)
            if row is None or steps is None or total is None:
                total = None
                continue
            total += steps * len(run.seeds) * row.ms / 1000
        out[device] = None if total is None else round(total / 3600, 2)
    return out


def summary(recipe: Recipe) -> dict[str, Any]:
    """One recipe as ``--list --format json`` gives it."""
    from stsbench.published.registry import split_cell

    made = produced(recipe)
    tables = sorted({split_cell(c)[0].rsplit("/", 1)[0] for c in [*made, *unreproducible(recipe)]})
    return {
        "name": recipe.name,
        "title": recipe.title,
        "flavour": recipe.flavour,
        "tables": tables,
        "cells": made,
        "unreproducible": unreproducible(recipe),
        "figures": list(recipe.figures),
        "analyses": sorted({a.name for a in recipe.analyses}),
        "claims": [c.text or c.kind for c in recipe.claims],
        "trainings": sum(len(r.seeds) for r in recipe.runs),
        "cost_hours": cost(recipe),
    }


def summaries(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """:func:`summary` of each built-in recipe (or of ``names``), in name order."""
    return [summary(load_recipe(n)) for n in (names if names is not None else recipe_names())]


def hours_text(value: float | None) -> str:
    """A cost as the list shows it: hours, minutes below a tenth of an hour, or unknown."""
    return (
        "unknown" if value is None else f"{value:,.1f} h" if value >= 0.1 else f"{math.ceil(value * 60)} min"
    )


def _figures_lines(found: list[dict[str, Any]]) -> list[str]:
    """The papers' experimental figures (stsbench.published.figures): the recipes that draw each, or what is missing."""
    from stsbench.published.figures import load_figures

    by: dict[str, list[str]] = {}
    for s in found:
        for key in s["figures"]:
            by.setdefault(key, []).append(s["name"])
    lines = ["", "## The papers' figures", "", "| figure | shows | drawn by | recipes |", "|---|---|---|---|"]
    for key, f in load_figures().items():
        if f.out_of_scope:
            drawn = f"out of scope: {f.out_of_scope}"
        else:
            drawn = f"`{f.renderer}`" + (f" ({f.setting})" if f.setting else "") if f.drawn else f"missing: {f.missing}"
        recipes = ", ".join(f"`{n}`" for n in by.get(key, [])) or "none"
        lines.append(f"| `{key}`{' (cited only)' if f.ref_only else ''} | {f.shows} | {drawn} | {recipes} |")
    return lines


def markdown(found: list[dict[str, Any]] | None = None) -> str:
    """``docs/recipes-list.md``: the recipes' table, then every unreproducible cell with its reason."""
    found = summaries() if found is None else found
    lines = [
        "# The built-in recipes and the published cells they produce",
        "",
        "Generated by `python -m stsbench.reproduce.listing > docs/recipes-list.md` from `stsbench reproduce --list "
        "--format json` (`tests/test_recipes_list.py` keeps it true). Cells: the published cells a recipe's runs "
        "are held against or its analyses compute; unreproducible: the cells of its tables no built-in recipe can "
        "produce, with the reason ([Recipes](recipes.md)). Cost: training hours on one device of the measured step "
        "times (`benchmarks/results/`), unknown where a backbone or method was not measured.",
        "",
        "| recipe | flavour | tables | cells | unreproducible | claims | trainings | cost |",
        "|---|---|---|---:|---:|---:|---:|---|",
    ]
    for s in found:
        hours = "; ".join(f"{d}: {hours_text(h)}" for d, h in s["cost_hours"].items()) or "unknown"
        lines.append(
            f"| `{s['name']}` | {s['flavour']} | {', '.join(s['tables'])} | {len(s['cells'])} | "
            f"{len(s['unreproducible'])} | {len(s['claims'])} | {s['trainings']} | {hours} |"
        )
    lines += _figures_lines(found)
    lines += [
        "",
        "## Cells no built-in recipe produces",
        "",
        "| cell | reason | listed by |",
        "|---|---|---|",
    ]
    every: dict[str, tuple[str, list[str]]] = {}
    for s in found:
        for cell, reason in s["unreproducible"].items():
            every.setdefault(cell, (reason, []))[1].append(s["name"])
    for cell in sorted(every):
        reason, by = every[cell]
        lines.append(f"| `{cell}` | {reason} | {', '.join(by)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m stsbench.reproduce.listing > docs/recipes-list.md
    import sys

    sys.stdout.write(markdown())
