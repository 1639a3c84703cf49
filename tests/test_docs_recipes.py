"""docs/recipes.md: its recipe runs through ``stsbench reproduce``, and its tables name every recipe key."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from helpers import DATA, ROOT, block_after, tiny_folder

PAGE = ROOT / "docs" / "recipes.md"
MARK = "<!-- recipe -->"


def page_recipe() -> str:
    """The text of the page's recipe: the fenced block after ``<!-- recipe -->``."""
    return block_after(PAGE, MARK)


def test_the_tables_name_every_key_of_a_recipe():
    from stsbench.recipes import Analysis, Recipe, Run

    text = PAGE.read_text(encoding="utf-8")
    top, run = text.split("Each run:", 1)
    assert set(re.findall(r"^\| `(\w+)` \|", top, flags=re.M)) == set(Recipe.model_fields)
    assert set(re.findall(r"^\| `(\w+)` \|", run.split("\n\n", 2)[1], flags=re.M)) == set(Run.model_fields)
    analysis = text.split("Each analysis (", 1)[1].split("\n\n", 1)[0].split("):", 1)[1]
    assert set(re.findall(r"`(\w+)` \(", analysis)) | {"name"} == set(Analysis.model_fields)


@pytest.mark.slow  # a whole reproduction (six step processes): 15-22 s; the floors' job leaves it to the main one
def test_the_pages_recipe_reproduces_on_a_tiny_bert(tmp_path_factory, tmp_path):
    """The recipe as the page shows it, on tiny substitutes: the tiny BERT as every run's model and as the
    baseline, 2 steps of batch 4, its corpus file 30 lines; every other key as on the page."""
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    tiny = tiny_folder(tmp_path_factory)
    recipe = yaml.safe_load(page_recipe())
    small = {
        **{"model": str(tiny / "tiny"), "max_steps": 2, "eval_steps": 2, "batch_size": 4},
        **{"eval_batch_size": 64, "eval_at_start": False},  # one dev check, at the end
    }
    for run in recipe["runs"]:
        run["overrides"] = {**run["overrides"], **small}
    recipe["baseline"]["model"] = str(tiny / "tiny")
    corpus = tmp_path / recipe["runs"][0]["overrides"]["train_file"]  # relative: to where reproduce runs
    corpus.parent.mkdir(parents=True)
    shutil.copy(tiny / "train.txt", corpus)
    (tmp_path / "my-simcse.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False))

    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "stsbench", "reproduce", "my-simcse.yaml", "--out", "runs/my-simcse", "--parallel", "2"],
        cwd=tmp_path,
        env={**os.environ, "STSBENCH_DATA": str(DATA)},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "runs" / "my-simcse"
    report = (out / "report.md").read_text()
    assert recipe["report"]["title"] in report and "unsup-SimCSE" in report
    for seed in recipe["runs"][0]["seeds"]:
        assert (out / "runs" / "simcse" / f"seed-{seed}" / "stsbench.json").is_file()
    assert list((out / "results").rglob("STSBenchmark.json")), "no evaluation written"
