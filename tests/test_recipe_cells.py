"""A recipe's published cells reach its report's Ablations: each swept setting beside the cell the recipe holds it
against (the address its Reproduction section judges), from the runs file reproduce keeps with the results."""

from __future__ import annotations

import json

import pytest

from stsbench.errors import StsbenchError
from stsbench.recipes import load_recipe, recipe_names
from stsbench.reports.ablations import ablation_tables
from stsbench.reports.reproduction import published_figure, report_cells
from stsbench.reproduce.plan import report_args, run_config
from stsbench.results.runs import RECIPE_RUNS_FILE, TrainRun, read_recipe_runs, write_recipe_runs
from stsbench.tabular import DASH
from stsbench.train.config import make_config


def _run(name: str, method: str, config: dict, dev: float) -> TrainRun:
    """A finished seed-1 run of the recipe's run ``name``, as the report reads one (its dev score made up)."""
    path = f"train/{name}/seed-1"
    return TrainRun(
        path, "seed-1", {**config, "method": method, "seed": 1}, method, ((10, dev),), 10, dev, 10, 10, 1.0, 100,
        None, "cls", False,
    )  # fmt: skip


def _saved(run) -> dict:
    """The config a seed of ``run`` saves (every option: a swept ``None`` too)."""
    return make_config({**run_config(run, None), "seed": 1, "output": f"runs/{run.name}/seed-1"}).to_dict()


def _first_cell(run) -> str:
    """The address a run's row shows: the first it is held against that has a figure, else a dash."""
    return next((a for a in run.addresses if published_figure(a) is not None), DASH)


def _shown(recipe, tmp_path) -> dict[str, set[str]]:
    """``{recipe run: the published keys its rows in the recipe's sweep tables show}``."""
    results = tmp_path / recipe.name
    write_recipe_runs(results, recipe)
    cells = report_cells([results])
    runs = [_run(r.name, r.method, _saved(r), 0.5 + i / 100) for i, r in enumerate(recipe.runs)]
    shown: dict[str, set[str]] = {}
    for table in ablation_tables(runs, [], [], [], cells):
        if "published key" in table.frame.columns:
            for path, key in zip(table.frame["run"], table.frame["published key"], strict=True):
                shown.setdefault(path.split("/")[1], set()).add(key)  # train/<run>/seed-1
    return shown


def test_every_recipes_sweep_tables_show_the_cells_its_reproduction_judges(tmp_path):
    swept = with_cells = 0
    for name in recipe_names():
        recipe = load_recipe(name)
        if not any(r.sweep_of for r in recipe.runs):
            continue
        swept += 1
        shown = _shown(recipe, tmp_path)
        runs = {r.name: r for r in recipe.runs}
        assert {r.name for r in recipe.runs if r.sweep_of} <= set(shown), name  # every point of every sweep
        assert all(keys == {_first_cell(runs[run])} for run, keys in shown.items()), (name, shown)
        shows = any(keys != {DASH} for keys in shown.values())
        assert shows or not any(r.addresses for r in recipe.runs if r.sweep_of), name
        with_cells += shows
        if recipe.verdict:  # the Reproduction section judges what --against names: the same addresses
            args = report_args(recipe, tmp_path / name)
            judged = {args[i + 1] for i, a in enumerate(args) if a == "--against"}
            assert {f"{run}={key}" for run, keys in shown.items() for key in keys} - {f"{r}={DASH}" for r in runs} <= judged
    assert swept >= 20 and with_cells >= 20  # the papers' sweep tables: ESimCSE's, MoCoSE's and SimCSE's


def test_the_runs_file_is_the_recipes_runs_as_they_are_and_refuses_a_malformed_one(tmp_path):
    recipe = load_recipe("mocose-ema-mini")
    write_recipe_runs(tmp_path, recipe)
    whole = read_recipe_runs([tmp_path])
    assert whole["ema.ema_decay_start-0.85"].published == ("mocose/table3/ema-decay#ema=0.85",)
    assert whole["ema.ema_decay_start-0.85"].point == {"ema_decay_start": 0.85}
    subset = recipe.model_copy(update={"runs": recipe.runs[:1]})
    write_recipe_runs(tmp_path, subset)
    # written whole: the subset's runs alone, none left over from the recipe before
    assert read_recipe_runs([tmp_path]) == {recipe.runs[0].name: whole[recipe.runs[0].name]}
    (tmp_path / RECIPE_RUNS_FILE).write_text(json.dumps({"kind": "stsbench.recipe_runs", "runs": [{}]}))
    with pytest.raises(StsbenchError, match="not a recipe's runs file"):
        read_recipe_runs([tmp_path])
    (tmp_path / RECIPE_RUNS_FILE).write_text("{")
    with pytest.raises(StsbenchError, match="not readable JSON"):
        read_recipe_runs([tmp_path])


def test_another_cell_for_a_run_is_another_report(tmp_path):
    """The report step's key reads the cells the recipe holds its runs against, even without a verdict."""
    from stsbench.reproduce.plan import build_plan

    recipe = load_recipe("simcse-trajectory-mini")  # verdict: false, its cells set beside
    before = build_plan(recipe, tmp_path / "out").step("report").key
    runs = [r.model_copy(update={"published": "simcse/table4/dropout-p#p=0.2"}) if r.name == "no-dropout" else r
            for r in recipe.runs]  # fmt: skip
    after = build_plan(recipe.model_copy(update={"runs": runs}), tmp_path / "out").step("report").key
    assert before != after
