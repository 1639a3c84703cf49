"""`stsbench reproduce --list`: every published cell is some recipe's, or listed as unreproducible with a reason."""

from __future__ import annotations

import json

import pytest
from helpers import DATA, ROOT, run_cli

from stsbench.published.registry import load_registry
from stsbench.recipes import UNREPRODUCIBLE, recipe_names
from stsbench.reproduce.estimate import MTEB_PREFIX, markdown


def registry_cells() -> list[str]:
    """Every cell of every registry table but MTEB's."""
    return [f"{k}#{c}" for k, e in load_registry().items() if not k.startswith(MTEB_PREFIX) for c in e.values]


@pytest.fixture(scope="module")
def listed() -> list[dict]:
    from stsbench.reproduce.estimate import summaries

    return summaries()


def test_every_cell_of_every_table_is_produced_or_unreproducible_for_a_reason(listed, capsys):
    code, out, err = run_cli(["reproduce", "--list", "--format", "json"], capsys)
    assert code == 0, err
    found = json.loads(out)
    assert found == json.loads(json.dumps(listed))  # the command prints the listing module's summaries
    assert [s["name"] for s in found] == recipe_names()
    keys = {"name", "title", "flavour", "tables", "cells", "unreproducible", "figures", "analyses", "claims", "trainings"}
    assert all(keys | {"cost_hours"} == set(s) for s in found)
    produced = {c for s in found for c in s["cells"]}
    unreproducible = {c: r for s in found for c, r in s["unreproducible"].items()}
    every = set(registry_cells())
    assert every and not any(c.startswith("mteb") for c in every)
    assert every - produced - set(unreproducible) == set()  # each cell accounted for
    assert (produced | set(unreproducible)) <= every
    assert produced & set(unreproducible) == set()  # a cell some recipe produces is not called unreproducible
    assert set(unreproducible.values()) <= set(UNREPRODUCIBLE)
    # the checked-in list (docs/recipes-list.md) is this one
    page = (ROOT / "docs" / "recipes-list.md").read_text(encoding="utf-8")
    assert page == markdown(listed), "run: python -m stsbench.reproduce.estimate > docs/recipes-list.md"
    listed_cells = {
        line.split("`")[1]
        for line in page.split("## Cells no built-in recipe produces")[1].splitlines()
        if line.startswith("| `")
    }
    assert listed_cells == set(unreproducible)


def test_the_list_as_a_table_and_its_one_line_errors(capsys):
    code, out, _ = run_cli(["reproduce", "--list"], capsys)
    assert code == 0 and "esimcse-dup-rate-mini" in out and "unreproducible" in out
    # the hours are the optimizer steps' alone (mocose-collapse-mini's 0.4 h read as its cost beside a dry run's 37 min)
    assert "optimizer steps" in out and "cost" not in out.replace("the whole cost", "") and "--dry-run" in out, out
    code, out, _ = run_cli(["reproduce", "mocose-ema-mini", "--list", "--format", "json"], capsys)
    (one,) = json.loads(out)
    assert one["cells"][0] == "mocose/table3/ema-decay#ema=0.5" and one["trainings"] == 18
    assert one["claims"] == ["an EMA decay weight of 0.85 gives the best STS Avg. (Table 3: 76.49)"]
    code, _, err = run_cli(["reproduce", "--list", "--format", "yaml"], capsys)
    assert code == 2 and "give table or json" in err
    code, _, err = run_cli(["reproduce", "cpu-mini", "--dry-run", "--format", "json"], capsys)
    assert code == 2 and "--format applies to --list" in err
    code, _, err = run_cli(["reproduce", "--dry-run"], capsys)
    assert code == 2 and "give a recipe" in err


@pytest.mark.slow  # 39 plans: about 30 s; the floors' job leaves it to the main one
@pytest.mark.skipif(not (DATA / "downstream").is_dir(), reason="../shared/data not beside")
def test_every_built_in_recipe_plans_a_dry_run(tmp_path, capsys):
    """Each built-in recipe's dry run exits 0 here, listing what this machine lacks (BERT-base, wiki1m, NLI)."""
    for name in recipe_names():
        code, out, err = run_cli(
            ["reproduce", name, "--dry-run", "--out", str(tmp_path / name), "--data-dir", str(DATA)], capsys
        )
        assert code == 0, (name, err)
        assert out.startswith(f"{name}: ") and "one step at a time (counted parts" in out, name


def test_the_list_reads_recipes_not_the_trainer_and_wraps_to_the_terminal():
    """The list once took ~20 s (1,552 parses of the same configs, scipy and pandas for a recipe's claims) and
    printed 200 columns whatever the terminal; now it imports no torch, scipy or pandas and fits COLUMNS."""
    import os
    import subprocess
    import sys

    script = (
        "import sys\n"
        "sys.argv = ['stsbench', 'reproduce', '--list']\n"
        "from stsbench.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'torch', 'transformers', 'scipy', 'pandas', 'matplotlib'})\n"
        "print('IMPORTED', heavy)\n"
    )
    env = {**os.environ, "COLUMNS": "80"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "IMPORTED []"
    assert max(len(line) for line in lines) <= 80
    text = " ".join(lines)
    assert "counted apart from cells, so it may exceed them" in text and "cpu-mini" in text
