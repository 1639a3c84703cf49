"""Recipes as data (#25): every built-in one validates, names only what exists, and cpu-mini is what was run."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from stsbench.configs import config_names, config_path
from stsbench.errors import StsbenchError
from stsbench.published.registry import get_entry
from stsbench.recipes import load_recipe, recipe_names
from stsbench.recipes.check import run_options

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
REPLICATION = ROOT / "reports" / "cpu-mini-replication"


def test_the_built_in_recipes_cover_the_tables_stsbench_can_address():
    names = set(recipe_names())
    for table in ("simcse-unsup", "esimcse", "esimcse-ablation", "mocose"):
        assert {f"{table}-paper", f"{table}-official"} <= names, table
    assert {"gaussian-dropout", "cpu-mini"} <= names


@pytest.mark.parametrize("name", recipe_names())
def test_every_built_in_recipe_validates_and_names_what_exists(name):
    from stsbench.analyses.registry import ANALYSES
    from stsbench.data.corpora import CORPORA
    from stsbench.tasks.registry import task_names
    from stsbench.train.config.methods import METHODS

    recipe = load_recipe(name)
    assert recipe.name == name and recipe.report.title
    for key in recipe.published:
        assert get_entry(key).key == key
    for run in recipe.runs:
        assert run.method in METHODS and run.config in config_names()
        assert run.corpus is None or run.corpus.name in CORPORA
        assert task_names(list(run.evaluate.tasks))
        assert run.published is None or run.published in recipe.published
    for analysis in recipe.analyses:
        assert analysis.name in ANALYSES
    if recipe.flavour in ("paper", "official"):
        assert all(r.config.endswith(f"-{recipe.flavour}") or "gaussian" in r.config for r in recipe.runs)


def test_paper_and_official_flavours_differ_only_in_their_configs():
    for table in ("simcse-unsup", "esimcse", "esimcse-ablation", "mocose"):
        paper, official = load_recipe(f"{table}-paper"), load_recipe(f"{table}-official")
        assert paper.published == official.published
        assert [r.config.replace("-paper", "") for r in paper.runs] == [
            r.config.replace("-official", "") for r in official.runs
        ]


def test_simcse_recipes_reproduce_the_final_paper():
    for flavour in ("paper", "official"):
        recipe = load_recipe(f"simcse-unsup-{flavour}")
        assert recipe.published == ("simcse/emnlp-table5/unsup-simcse-bert-base",)
        assert get_entry(recipe.runs[0].published).values["Avg."] == 76.25


@pytest.mark.skipif(
    not (SHARED_DATA / "wiki" / "wiki1m_head.txt").is_file(), reason="../shared/data not beside"
)
def test_cpu_mini_resolves_to_the_configs_the_checked_in_replication_trained_with():
    """Each run x seed of cpu-mini gives the saved run's config: same train file (the 11,914-line head), every
    option the same (the runs were trained by `stsbench reproduce cpu-mini`, train_lines included)."""
    from stsbench.train.config import finalize, make_config, resume_conflicts

    recipe = load_recipe("cpu-mini")
    runs = sorted(p.name for p in (REPLICATION / "results" / "train").iterdir())
    assert sorted(r.name for r in recipe.runs) == runs
    for run in recipe.runs:
        assert run.seeds == (1, 2, 3, 4, 5)
        for seed in run.seeds:
            meta = REPLICATION / "results" / "train" / run.name / f"seed-{seed}" / "stsbench.json"
            saved = json.loads(meta.read_text(encoding="utf-8"))["training"]
            options = {**run_options(run, seed, saved["output"]), "data_dir": str(SHARED_DATA)}
            resolved = finalize(make_config(options, config_path(run.config)), False)
            # The saved path is the training machine's; here the same file lies under this clone's ../shared/data.
            train_file = Path(resolved.to_dict()["train_file"])
            assert train_file.parent.parent.resolve() == SHARED_DATA.resolve(), (run.name, seed)
            assert train_file.parts[-2:] == Path(saved["train_file"]).parts[-2:], (run.name, seed)
            here = {**saved, "train_file": str(train_file)}
            assert resume_conflicts(here, resolved) == [], (run.name, seed)
    assert recipe.report.title in (REPLICATION / "report.md").read_text(encoding="utf-8")


def test_a_user_recipe_is_a_file_and_bad_names_are_one_line(tmp_path):
    good = tmp_path / "mine.yaml"
    text = (ROOT / "stsbench" / "recipes" / "simcse-unsup-paper.yaml").read_text(encoding="utf-8")
    good.write_text(text.replace("name: simcse-unsup-paper", "name: mine"))
    assert load_recipe(good).name == "mine"
    cases = {
        "simcse/emnlp-table5/unsup-simcse-bert-base\n": "simcse/emnlp-table5/unsup-simcse-bert\n",
        "config: simcse-bert-base-paper": "config: simcse-bert-base-papr",
        "method: simcse": "method: simcsee",
        "evaluate: {tasks: [sts], mode: test}": "evaluate: {tasks: [STS-C], mode: test}",
        "{name: align_uniform}": "{name: align_uniformity}",
        "corpus: {name: wiki1m}": "corpus: {name: wiki2m}",
    }
    expected = {
        "config: simcse-bert-base-paper": "did you mean 'simcse-bert-base-paper'",
        "method: simcse": "did you mean 'simcse'",
        "{name: align_uniform}": "did you mean 'align_uniform'",
        "corpus: {name: wiki1m}": "did you mean 'wiki1m'",
    }
    for old, new in cases.items():
        bad = tmp_path / "bad.yaml"
        assert old in text, old
        bad.write_text(text.replace(old, new, 1))
        with pytest.raises(StsbenchError) as err:
            load_recipe(bad)
        assert "\n" not in str(err.value) and str(bad) in str(err.value), str(err.value)
        assert expected.get(old, "") in str(err.value), str(err.value)
    bad.write_text(text.replace("    seeds: [1, 2, 3, 4, 5]", "    seeds: [1, 1]"))
    with pytest.raises(StsbenchError, match=r"seeds repeat"):
        load_recipe(bad)
    bad.write_text(text + "colour: blue\n")
    with pytest.raises(StsbenchError, match=r"colour: Extra inputs are not permitted"):
        load_recipe(bad)
    bad.write_text(
        text.replace(
            "runs:\n",
            "runs:\n  - name: x\n    method: simcse\n    config: simcse-bert-base-paper\n    seeds: [1]\n    overrides: {dup_rat: 0.3}\n",
            1,
        )
    )
    with pytest.raises(
        StsbenchError, match=r"run x: unknown training option 'dup_rat'; did you mean dup_rate"
    ):
        load_recipe(bad)
    with pytest.raises(StsbenchError, match=r"unknown recipe 'cpu-mni'; did you mean 'cpu-mini'"):
        load_recipe("cpu-mni")


def test_a_wheel_holds_every_config_and_recipe_and_no_shared_path(tmp_path):
    """#25 acceptance 6: `pip wheel --no-deps .` packages the configs, the recipes and the published registry."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            str(ROOT),
            "-w",
            str(tmp_path),
        ],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("stsbench-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        for config in config_names():
            assert f"stsbench/configs/{config}.yaml" in names, config
        for recipe in recipe_names():
            assert f"stsbench/recipes/{recipe}.yaml" in names, recipe
        assert {"stsbench/published/simcse.yaml", "stsbench/data/manifest.json"} <= names
        for name in names:
            if name.startswith("stsbench/") and name.endswith((".yaml", ".json", ".py", ".md", ".j2")):
                assert b"../shared" not in zf.read(name), name


def test_a_recipes_claims_name_its_runs_and_a_task(tmp_path):
    """A claim's settings are the recipe's runs, its figure a task or best-dev: else one line naming it."""
    from stsbench.recipes import load_recipe

    text = (Path(__file__).resolve().parents[1] / "stsbench" / "recipes" / "cpu-mini.yaml").read_text(encoding="utf-8")
    good = text + "claims:\n  - {kind: argmax, best: esimcse, among: [simcse, esimcse], figure: STS-B}\n"
    (tmp_path / "good.yaml").write_text(good)
    (claim,) = load_recipe(str(tmp_path / "good.yaml")).claims
    assert claim.best == "esimcse" and claim.mode == "test"
    for extra, words in (
        ("  - {kind: argmax, best: a, among: [a, simcse]}\n", "claim 1 names ['a'], not among the runs"),
        ("  - {kind: difference, better: esimcse, worse: simcse, figure: STS99}\n", "figure 'STS99'"),
        ("  - {kind: plateau, settings: [simcse, esimcse], margin: -1}\n", "margin"),
    ):
        (tmp_path / "bad.yaml").write_text(text + "claims:\n" + extra)
        with pytest.raises(StsbenchError, match=re.escape(words)):
            load_recipe(str(tmp_path / "bad.yaml"))
