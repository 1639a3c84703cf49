"""Recipes as data: every built-in one validates, names only what exists, and cpu-mini is what was run."""

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
from stsbench.recipes import load_recipe, recipe_names, run_options

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
    from stsbench.train.config.options import METHODS

    recipe = load_recipe(name)
    assert recipe.name == name and recipe.report.title
    for key in recipe.published:
        assert get_entry(key).key == key
    for run in recipe.runs:
        assert run.method in METHODS and run.config in config_names()
        assert run.corpus is None or run.corpus.name in CORPORA
        assert run.evaluate is None or task_names(list(run.evaluate.tasks))  # None: a dev table's best dev
        assert run.published is None or run.published.split("#")[0] in recipe.published
    for analysis in recipe.analyses:
        assert analysis.name in ANALYSES
    if recipe.flavour in ("paper", "official"):  # supervised SimCSE and the report's layer: one setting each
        single = ("simcse-sup-bert-base", "simcse-sup-roberta-base", "simcse-sup-roberta-large")
        assert all(
            r.config.endswith(f"-{recipe.flavour}") or "gaussian" in r.config or r.config in single
            for r in recipe.runs
        )


def test_paper_and_official_flavours_differ_only_in_their_configs():
    flavoured = {n.removesuffix("-paper") for n in recipe_names() if n.endswith("-paper")}
    assert flavoured == {n.removesuffix("-official") for n in recipe_names() if n.endswith("-official")}
    assert {"simcse-unsup", "esimcse", "esimcse-ablation", "mocose", "esimcse-dup-rate", "mocose-ema"} <= flavoured
    for table in flavoured:
        paper, official = load_recipe(f"{table}-paper"), load_recipe(f"{table}-official")
        assert paper.published == official.published
        assert [r.config.replace("-paper", "") for r in paper.runs] == [
            r.config.replace("-official", "") for r in official.runs
        ]


def test_simcse_recipes_reproduce_the_final_paper():
    for flavour in ("paper", "official"):
        recipe = load_recipe(f"simcse-unsup-{flavour}")
        assert recipe.published[0] == "simcse/emnlp-table5/unsup-simcse-bert-base"
        assert get_entry(recipe.runs[0].published).values["Avg."] == 76.25  # the final paper's, not v1's 74.54


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
        "evaluate: {tasks: [sts, transfer], mode: test}": "evaluate: {tasks: [STS-C], mode: test}",
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
    with pytest.raises(StsbenchError, match=r"unknown key 'colour'; remove it or check its spelling"):
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


def test_a_recipe_file_that_is_not_there_says_so_without_the_built_in_list(tmp_path, monkeypatch, capsys):
    """`stsbench reproduce foo.yaml` with no foo.yaml once answered with the ~50 built-in recipes' names."""
    from helpers import run_cli

    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli(["reproduce", "foo.yaml", "--out", tmp_path / "o"], capsys)
    line = err.strip()
    assert code == 2 and len(line.splitlines()) == 1 and "Traceback" not in line, err
    assert line == (
        "error: no recipe file foo.yaml (no such file; a built-in recipe is named without .yaml: "
        "`stsbench reproduce --list`)"
    )
    assert "choose from" not in line and "cpu-mini" not in line
    with pytest.raises(
        StsbenchError, match=r"no recipe file cpu-mni\.yml .*did you mean the built-in recipe cpu-mini"
    ):
        load_recipe("cpu-mni.yml")
    # a built-in's name with .yaml: the built-in, as before
    assert load_recipe("CPU-MINI.yaml").name == "cpu-mini"
    code, out, err = run_cli(["reproduce", "--list"], capsys)  # the command the line names lists them
    assert code == 0 and "cpu-mini" in out, err


def test_a_wheel_holds_every_config_and_recipe_and_no_shared_path(tmp_path):
    """`pip wheel --no-deps .` packages the configs, the recipes and the published registry."""
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


def test_a_recipes_report_baseline_names_a_run_or_a_method_and_a_claim_may_name_its_baseline_model(tmp_path):
    """report --baseline finds a group by a run's name or a method's (a run's label is neither): at load time."""
    from stsbench.recipes import load_recipe

    text = (Path(__file__).resolve().parents[1] / "stsbench" / "recipes" / "mocose-collapse-mini.yaml").read_text()
    for given, ok in (("symmetric", True), ("MoCoSE", True), ("MoCoSE, EMA 0, no predictor", False)):
        (tmp_path / "r.yaml").write_text(text.replace("  baseline: symmetric", f"  baseline: {given}"))
        if ok:
            assert load_recipe(str(tmp_path / "r.yaml")).report.baseline == given
        else:
            with pytest.raises(StsbenchError, match="names no run and no method: give a run's name"):
                load_recipe(str(tmp_path / "r.yaml"))
    # the backbone beside the trained models in a claim (MoCoSE Figure 7: BERT-base's spectrum)
    (claim,) = [c for c in load_recipe("mocose-paper").claims if c.kind == "argmax"]
    assert "bert-base-uncased" in claim.settings()


SWEEP = """\
name: sweep-test
title: a sweep
flavour: mini
published: [esimcse-arxiv/table9/dup-rate, mocose/table4/proj-1]
verdict: false
verdict_reason: a test sweep
runs:
  - name: dup
    label: ESimCSE
    method: esimcse
    config: esimcse-minilm-cpu
    overrides: {max_steps: 5}
    seeds: [1, 2, 3]
    evaluate: null
    sweep: {option: dup_rate, values: [0.08, 0.32]}
    published: "esimcse-arxiv/table9/dup-rate#dup_rate={dup_rate}"
  - name: heads
    method: mocose
    config: mocose-minilm-cpu
    seeds: [1]
    grid: [{option: projection_layers, values: [1, 2]}, {option: predictor_layers, values: [1, 2]}]
claims:
  - {kind: argmax, best: dup.dup_rate-0.32, among: [dup], figure: best-dev}
  - {kind: difference, better: dup.dup_rate-0.32, worse: dup.dup_rate-0.08, figure: best-dev}
report: {title: t}
"""


def test_a_sweep_and_a_grid_are_runs_named_by_their_settings_each_held_against_its_cell(tmp_path):
    (tmp_path / "r.yaml").write_text(SWEEP)
    recipe = load_recipe(str(tmp_path / "r.yaml"))
    names = [r.name for r in recipe.runs]
    assert names == [
        "dup.dup_rate-0.08",
        "dup.dup_rate-0.32",
        "heads.projection_layers-1.predictor_layers-1",
        "heads.projection_layers-1.predictor_layers-2",
        "heads.projection_layers-2.predictor_layers-1",
        "heads.projection_layers-2.predictor_layers-2",
    ]  # the grid's first axis outermost
    dup = recipe.run("dup.dup_rate-0.32")
    assert dup.overrides == {"max_steps": 5, "dup_rate": 0.32} and dup.point == {"dup_rate": 0.32}
    assert dup.published == "esimcse-arxiv/table9/dup-rate#dup_rate=0.32" and dup.sweep_of == "dup"
    assert dup.evaluate is None and dup.label == "ESimCSE (dup_rate=0.32)"
    assert recipe.claims[0].among == ("dup.dup_rate-0.08", "dup.dup_rate-0.32")  # the sweep's name: its runs
    assert list(recipe.sweeps()) == ["dup", "heads"]
    from stsbench.reproduce.plan import build_plan

    plan = build_plan(recipe, tmp_path / "out", SHARED_DATA)
    assert not any(s.id.startswith("evaluate/dup") for s in plan.steps)  # its figure: the training's best dev
    assert {s.id for s in plan.steps if s.kind == "evaluate"} == {f"evaluate/{n}" for n in names[2:]}
    # what a sweep may not be: one line each, naming the file
    for old, new, words in (
        ("values: [0.08, 0.32]", "values: [0.08]", "needs two values or more"),
        ("values: [0.08, 0.32]", "values: [0.08, 0.08]", "values repeat"),
        ("#dup_rate={dup_rate}", "#dup_rate={dup}", "cannot be filled"),
        ("#dup_rate={dup_rate}", "#dup_rate=0.3", "has no column 'dup_rate=0.3'"),
        ("overrides: {max_steps: 5}", "overrides: {max_steps: 5, dup_rate: 0.1}", "swept and also in its overrides"),
        ("    evaluate: null\n", "    evaluate: null\n    sweep_of: x\n", "filled by sweep or grid"),
        ("option: predictor_layers,", "option: predictor_layer,", "run heads: its sweep's option 'predictor_layer' is not a training option; did you mean predictor_layers?"),
    ):
        (tmp_path / "bad.yaml").write_text(SWEEP.replace(old, new, 1))
        with pytest.raises(StsbenchError, match=re.escape(words)):
            load_recipe(str(tmp_path / "bad.yaml"))


def test_a_subset_of_runs_and_seeds_keeps_what_can_be_judged_and_says_what_is_left_out(tmp_path, capsys):
    from helpers import run_cli

    from stsbench.reproduce.plan import build_plan

    (tmp_path / "r.yaml").write_text(SWEEP)
    recipe = load_recipe(str(tmp_path / "r.yaml"))
    part = recipe.subset(["dup"], [1, 2])
    assert [r.name for r in part.runs] == ["dup.dup_rate-0.08", "dup.dup_rate-0.32"]
    assert {r.seeds for r in part.runs} == {(1, 2)} and len(part.claims) == 2
    one = recipe.subset(["dup.dup_rate-0.32", "heads"])
    assert [c.kind for c in one.claims] == []  # an argmax among one, a difference missing a side: not judged
    assert any("claim 1 not judged" in line for line in one.omitted)
    assert any(line.startswith("runs not run (--runs): dup.dup_rate-0.08") for line in one.omitted)
    args = build_plan(part, tmp_path / "out", SHARED_DATA).step("report").args
    note = args[args.index("--note") + 1]
    assert note.startswith("A subset of recipe sweep-test: runs not run (--runs): heads.") and "seeds not run" in note
    with pytest.raises(StsbenchError, match="no run or sweep of sweep-test has that name"):
        recipe.subset(["nope"])
    with pytest.raises(StsbenchError) as raised:  # the nearest run, and the runs a sweep expands to
        recipe.subset(["dup.dup_rate-0.3"])
    assert "did you mean dup.dup_rate-0.32?" in str(raised.value)
    assert "its runs: dup (a sweep: dup.dup_rate-0.08, dup.dup_rate-0.32); heads" in str(raised.value)
    code, _, err = run_cli(["reproduce", str(tmp_path / "r.yaml"), "--dry-run", "--seeds", "1,x"], capsys)
    assert code == 2 and "whole numbers" in err
    code, out, _ = run_cli(
        ["reproduce", str(tmp_path / "r.yaml"), "--dry-run", "--runs", "dup", "--data-dir", str(SHARED_DATA)], capsys
    )
    assert code == 0 and "left out: runs not run (--runs): heads." in out


@pytest.mark.parametrize("figure", ["Avg.", "STS-B"])
def test_a_claim_on_a_figure_the_recipe_never_measures_is_refused_when_it_loads(tmp_path, capsys, figure):
    """`figure: Avg.` on runs with `evaluate: null` once passed the dry run and judged 0 of 0 seeds."""
    from helpers import run_cli

    from stsbench.errors import StsbenchError
    from stsbench.recipes import load_recipe

    text = Path("stsbench/recipes/esimcse-dup-rate-mini.yaml").read_text(encoding="utf-8")
    assert "figure: best-dev," in text
    bad = text.replace("name: esimcse-dup-rate-mini", "name: mine", 1).replace("figure: best-dev,", f"figure: {figure},")
    (tmp_path / "mine.yaml").write_text(bad, encoding="utf-8")
    with pytest.raises(StsbenchError, match=r"claim 1: figure .* \(test\) of run dup-rate.dup_rate-0.08 is never measured \(evaluate: null"):
        load_recipe(tmp_path / "mine.yaml")
    code, _, err = run_cli(["reproduce", str(tmp_path / "mine.yaml"), "--out", str(tmp_path / "o"), "--dry-run"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "best-dev, final-dev" in err, err
    load_recipe("esimcse-dup-rate-mini")  # its own claim, on best-dev, every training measures


def test_a_withheld_verdict_says_why(tmp_path, capsys):
    """The dry run once said 'set beside, no verdict' without saying why; a recipe must say it."""
    from helpers import run_cli

    from stsbench.errors import StsbenchError
    from stsbench.recipes import load_recipe

    text = Path("stsbench/recipes/simcse-dropout-mini.yaml").read_text(encoding="utf-8")
    reason = load_recipe("simcse-dropout-mini").verdict_reason
    assert reason and "read from seminar slides" in reason
    code, out, err = run_cli(["reproduce", "simcse-dropout-mini", "--out", str(tmp_path / "o"), "--dry-run"], capsys)
    assert code == 0 and f"published cells (no verdict: {reason}):" in out.replace("\n", " "), out + err
    bare = "\n".join(ln for ln in text.splitlines() if not ln.startswith("verdict_reason:"))
    (tmp_path / "bare.yaml").write_text(bare.replace("name: simcse-dropout-mini", "name: bare", 1), encoding="utf-8")
    with pytest.raises(StsbenchError, match="verdict: false needs a verdict_reason"):
        load_recipe(tmp_path / "bare.yaml")


def test_a_misspelt_sweep_option_is_blamed_on_the_sweep_with_the_nearest_option(tmp_path):
    """It was once blamed on a claim naming the sweep's runs, or on one expanded run."""
    (tmp_path / "r.yaml").write_text(SWEEP.replace("option: dup_rate", "option: dup_rat"))
    with pytest.raises(StsbenchError) as raised:
        load_recipe(str(tmp_path / "r.yaml"))
    assert "run dup: its sweep's option 'dup_rat' is not a training option; did you mean dup_rate?" in str(raised.value)
