"""``stsbench report`` on runs that differ only in their seed: groups, mean ± std, the one rule's differences."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest
from helpers import run_cli
from seed_results import MEAN, SEEDS, make_seed_results, value

from stsbench.errors import StsbenchError
from stsbench.reports import collect
from stsbench.reports.collect import find_models
from stsbench.reports.seeds import seed_differences, seed_groups, significant

T_975_DF2 = 4.302652729911275  # scipy.stats.t.ppf(0.975, 2): the t quantile of 3 seeds


def _report(results: Path, out: Path, **kw) -> str:
    from stsbench.reports.render import write_report

    write_report(results, out, "seeds fixture", "stsbench report (test)", **kw)
    return (out / "report.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    return make_seed_results(tmp_path_factory.mktemp("seeds") / "results")


@pytest.fixture(scope="module")
def named(results, tmp_path_factory) -> Path:
    """The seeds, each method's group held against its ESimCSE Table 7 row by a recipe's runs file (a report
    compares only with the rows a recipe or --against names)."""
    import json

    named = tmp_path_factory.mktemp("named") / "results"
    shutil.copytree(results, named)
    rows = {"simcse": ("unsup-SimCSE", "unsup-simcse-bert-base"), "esimcse": ("ESimCSE", "esimcse-bert-base")}
    runs = [
        {
            "name": name,
            "label": label,
            "method": name,
            "sweep_of": None,
            "point": {},
            "published": [f"esimcse-arxiv/table7/{row}"],
        }
        for name, (label, row) in rows.items()
    ]
    data = {"kind": "stsbench.recipe_runs", "schema_version": 1, "recipe": "seeds-fixture", "runs": runs}
    (named / "recipe_runs.json").write_text(json.dumps(data), encoding="utf-8")
    return named


@pytest.fixture(scope="module")
def built(named, tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("seed-report")
    return out, _report(named, out)


def _rows(md: str, section: str) -> list[list[str]]:
    body = md.split(f"### {section}\n")[1].split("\n- ")[0]
    return [
        [c.strip() for c in ln.strip("|").split(" | ")] for ln in body.splitlines() if ln.startswith("| ")
    ]


def _row(rows: list[list[str]], first: str, after: str | None = None) -> list[str]:
    start = 0 if after is None else next(i for i, r in enumerate(rows) if r[0] == after)
    return next(r for r in rows[start:] if r[0] == first)


def test_runs_that_differ_only_in_the_seed_are_one_group(results):
    coll = collect(results)
    assert coll.warnings == []  # the seeds.json beside the seeds is not a result and not warned about
    groups = seed_groups(find_models(coll))
    assert [(g.label, g.n) for g in groups] == [
        ("tiny-bert", 1),
        ("unsup-SimCSE (n=3)", 3),
        ("ESimCSE (n=3)", 3),
    ]
    assert groups[1].seeds == list(SEEDS)
    assert [m.label for m in groups[1].models] == ["simcse/seed-1", "simcse/seed-2", "simcse/seed-3"]


def test_mean_std_and_the_seed_interval(built):
    _, md = built
    rows = _rows(md, "STS12-16, STS-B, SICK-R: Spearman x100")
    assert rows[0][:3] == ["model", "method", "STS12"]
    assert _row(rows, "tiny-bert")[1] == "–"  # the backbone (no seeds) keeps its single-seed row
    simcse = _row(rows, "unsup-SimCSE (n=3)")
    # seeds MEAN - 1, MEAN, MEAN + 1: mean MEAN, sample std 1
    assert simcse[2] == f"{MEAN['STS12']:.2f} ± 1.00"
    avgs = [round(sum(value("simcse", t, s) for t in MEAN) / 7, 2) for s in SEEDS]
    assert simcse[-1] == f"{sum(avgs) / 3:.2f} ± 1.00" and avgs == [74.29, 75.29, 76.29]
    half = T_975_DF2 / math.sqrt(3)
    interval = _row(rows, "↳ 95% interval over seeds", after="unsup-SimCSE (n=3)")
    assert interval[2] == f"[{MEAN['STS12'] - half:.2f}, {MEAN['STS12'] + half:.2f}]" == "[65.52, 70.48]"


def test_published_figure_inside_or_outside_the_seed_interval(built):
    _, md = built
    rows = _rows(md, "STS12-16, STS-B, SICK-R: Spearman x100")
    inside = "↳ published inside the 95% seed interval"
    # SimCSE (BERT-base, ESimCSE arXiv Table 7): STS12 68.40 in [65.52, 70.48], STS13 82.41 above [76.52, 81.48]
    simcse = _row(rows, inside, after="unsup-SimCSE (n=3)")
    assert simcse[2:4] == ["yes", "no"]
    # ESimCSE: STS14 77.25 above [71.52, 76.48]; STS-B 80.17 above [73.52, 78.48]; Avg. 78.27 in [73.88, 78.84]
    esimcse = _row(rows, inside, after="ESimCSE (n=3)")
    assert (esimcse[4], esimcse[7], esimcse[-1]) == ("no", "no", "yes")


def test_difference_to_the_baseline_paired_on_shared_seeds_against_delta(built):
    """The two methods share seeds 1-3 and each seed's offset: paired, the differences have no spread at all."""
    _, md = built
    rows = _rows(md, "STS: difference to unsup-SimCSE over seeds")
    diff = _row(rows, "ESimCSE (n=3) − unsup-SimCSE (n=3)")
    words = _row(rows, "↳ against δ = 0.50")
    p_row = _row(rows, "↳ p (beyond ±δ), Holm over the tasks")
    # Welch would see std 1.00 on each side (p 0.0036 on STS12, 0.037 on STS13); paired on the shared seeds the
    # gaps are exact: the interval is the point, read against δ
    assert diff[2] == "+5.00 [+5.00, +5.00]*" and diff[3] == "+2.50 [+2.50, +2.50]*"
    assert words[2] == "a difference that matters, no spread over seeds"
    assert diff[4] == "0.00 [0.00, 0.00]" and words[4] == "no difference that matters, no spread over seeds"
    assert p_row[2] == "<0.001" and diff[-1].startswith("+1.07 [")  # no spread: the point beyond δ, p 0
    assert "paired on the seeds the two groups share" in md


def test_report_and_compare_correct_over_the_same_family(results, tmp_path):
    """The report's differences over seeds and `stsbench compare` on the same seeds: one rule, the same words."""
    from stsbench.compare import side_from_aggregate
    from stsbench.metrics import simcse_average
    from stsbench.results.runs import build_aggregate, read_aggregate, write_aggregate
    from stsbench.stats.compare import compare_sides

    coll = collect(results)
    groups = seed_groups(find_models(coll))
    base = next(g for g in groups if g.method == "unsup-SimCSE")
    [report] = seed_differences(coll.tasks, groups, base, "sts")
    sides = []
    for method in ("simcse", "esimcse"):
        per_seed = {}
        for s in SEEDS:
            scores = {t: value(method, t, s) for t in MEAN}
            raw = {
                **scores,
                "Avg.": sum(scores.values()) / len(scores),
            }  # what `run` stores beside: unrounded
            scores["Avg."] = simcse_average(list(scores.values()))
            per_seed[s] = {"model": f"/runs/seeds/{method}/seed-{s}", "scores": scores, "raw": raw}
        agg = build_aggregate(f"/runs/seeds/{method}", "avg", "test", per_seed)
        written = write_aggregate(tmp_path, agg)
        sides.append(side_from_aggregate(read_aggregate(written), method, written))
    [compared] = compare_sides(sides).comparisons
    for row in compared.rows:
        decision = report.cells[row.task]
        iv = decision.interval
        assert [round(x, 4) for x in (iv.diff, iv.low, iv.high)] == [
            row.diff,
            row.low,
            row.high,
        ]  # compare rounds to 4
        assert row.seeds.interval.design == iv.design == "paired" and row.seeds.outcome == decision.outcome, (
            row.task
        )
        assert row.seeds.p_holm == decision.p_holm, row.task  # one family, Holm over the same tasks
        assert significant(decision) == row.significant, row.task
    assert [r.task for r in compared.rows] == list(report.cells)


def test_seed_figures_and_byte_identical_regeneration(built, named, tmp_path):
    out, md = built
    for stem in ("sts_seeds", "sts_seed_differences", "dev_curves_seeds"):
        assert (out / "figures" / f"{stem}.png").stat().st_size > 1000 and f"](figures/{stem}.svg)" in md
    assert not (out / "figures" / "training_curves.png").exists()  # one line per seed: replaced by the bands
    assert "and seaborn 0.13" in md and "\n## Seeds\n" in md
    per_seed = _rows(md, "STS: each seed")
    assert [r[0] for r in per_seed[1:4]] == ["simcse/seed-1", "simcse/seed-2", "simcse/seed-3"]
    assert per_seed[1][3] == f"{value('simcse', 'STS12', 1):.2f}"
    again = (
        out.parent / f"{out.name}-again"
    )  # beside it: the results folder is named relative to the report's
    _report(named, again)
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert all((out / f).read_bytes() == (again / f).read_bytes() for f in files)


def test_components_table_over_seeds(built):
    _, md = built
    assert "Ablation: seed" not in md and md.count("### Ablation") == 1  # no table per seed
    rows = _rows(md, "Ablation over seeds: ESimCSE's components")
    esimcse = _row(rows, "ESimCSE (n=3)")
    # kept dev 76 + (-1, 0, 1) for SimCSE, 2 more for ESimCSE
    assert esimcse[5] == "78.00 ± 1.00" and esimcse[6].startswith("+2.00 [")


def test_a_task_some_seeds_lack_shows_its_own_n(results, tmp_path):
    partial = tmp_path / "results"
    shutil.copytree(results, partial)
    (partial / "simcse__seed-3" / "avg" / "test" / "STS12.json").unlink()
    md = _report(partial, tmp_path / "out")
    simcse = _row(_rows(md, "STS12-16, STS-B, SICK-R: Spearman x100"), "unsup-SimCSE (n=3)")
    assert simcse[2] == "67.50 ± 0.71 (n=2)"
    assert simcse[-1] == "74.79 ± 0.71 (n=2)"  # Avg.: the seeds that have all 7 tasks


def test_one_seed_per_method_keeps_the_single_seed_layout(results, tmp_path):
    single = tmp_path / "results"
    shutil.copytree(results, single)
    for method in ("simcse", "esimcse"):
        for seed in (2, 3):
            shutil.rmtree(single / f"{method}__seed-{seed}")
    md = _report(single, tmp_path / "out")
    assert "(n=" not in md and "\n## Seeds\n" not in md and "seaborn" not in md
    assert "| simcse/seed-1 | unsup-SimCSE | 67.00 |" in md


def test_baseline_by_folder_or_method_and_a_bad_baseline(results, tmp_path, capsys):
    out = tmp_path / "out"
    code, _, _ = run_cli(["report", "--results", results, "--out", out, "--baseline", "esimcse"], capsys)
    assert code == 0
    rows = _rows((out / "report.md").read_text(encoding="utf-8"), "STS: difference to ESimCSE over seeds")
    assert _row(rows, "unsup-SimCSE (n=3) − ESimCSE (n=3)")[2].startswith("-5.00 [")
    assert "### STS: difference to ESimCSE over seeds" in _report(results, tmp_path / "m", baseline="ESimCSE")
    bad = tmp_path / "bad"
    code, _, err = run_cli(["report", "--results", results, "--out", bad, "--baseline", "SimCSE"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert (
        "--baseline 'SimCSE': no such method or seed group; choose one of:" in err and "unsup-SimCSE" in err
    )
    assert not (bad / "report.md").exists()


def test_forest_plot(tmp_path):
    from stsbench.reports.seeds import forest_plot

    rows = [("ESimCSE: STS-B", 1.2, 0.3, 2.1, True), ("MoCoSE: STS-B", -0.4, -1.5, 0.7, False)]
    paths = forest_plot(rows, tmp_path / "forest.png")
    assert [p.name for p in paths] == ["forest.png", "forest.svg"]
    assert paths[0].read_bytes()[:4] == b"\x89PNG" and paths[1].read_bytes().startswith(b"<?xml")
    first = [p.read_bytes() for p in paths]
    assert [p.read_bytes() for p in forest_plot(rows, tmp_path / "forest")] == first
    with pytest.raises(StsbenchError, match="no differences to draw"):
        forest_plot([], tmp_path / "empty")


def test_components_over_seeds_without_a_simcse_group(results):
    from stsbench.reports.ablations import component_table

    coll = collect(results)
    esimcse = [g for g in seed_groups(find_models(coll)) if g.method == "ESimCSE"]
    table = component_table(esimcse, coll.tasks, 1)
    row = table.frame.iloc[0].tolist()
    assert row[0] == "ESimCSE (n=3)" and row[5] == "78.00 ± 1.00" and row[6] == "–"


def test_a_result_evaluated_twice_is_not_another_seed(results, tmp_path):
    from stsbench.reports.scores import score_table

    copy = tmp_path / "results"
    shutil.copytree(results, copy)
    shutil.copytree(copy / "simcse__seed-1", copy / "again" / "simcse__seed-1")  # seed 1 evaluated twice
    coll = collect(copy)
    rows = [list(r) for r in score_table(coll.tasks, find_models(coll), "sts").frame.itertuples(index=False)]
    simcse = _row(rows, "unsup-SimCSE (n=3)")  # still 3 seeds, not 4 figures
    assert simcse[2] == f"{MEAN['STS12']:.2f} ± 1.00"


def test_a_seed_key_never_collides_with_another_models_seed():
    from types import SimpleNamespace

    from stsbench.reports.reproduction import group_figures
    from stsbench.reports.seeds import SeedGroup, best_devs, seed_ids

    assert seed_ids([3, 1, 0]) == [3, 1, 0]  # seeds 1 and 0 are seeds, not places
    assert seed_ids([None]) == [0] and seed_ids([None, None]) == [0, 1]  # no seed anywhere: places
    with pytest.raises(StsbenchError, match=r"seeds \[3, None\]: a group mixes trained models with and"):
        seed_ids([3, None])  # the second model's place, 1, could be a seed of the group

    def model(key: str, seed: int | None, dev: float) -> SimpleNamespace:
        run = SimpleNamespace(config={"seed": seed}, best_dev_spearman=dev)
        return SimpleNamespace(key=key, run=run)

    group = SeedGroup("g", None, (model("a", 1, 0.80), model("b", 0, 0.82)))  # seed 1 at place 0
    assert group.seed_ids == [1, 0]
    assert group_figures([], group)[1] == {1: pytest.approx(80.0), 0: pytest.approx(82.0)}
    assert best_devs(group.runs) == {1: pytest.approx(80.0), 0: pytest.approx(82.0)}
    with pytest.raises(StsbenchError, match="with and without an int seed"):
        group_figures([], SeedGroup("g", None, (model("a", 1, 0.80), model("b", None, 0.82))))
