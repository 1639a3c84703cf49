"""Analyses over seeds: every seed analysed by default, the report's mean ± std and interval, `check` on analysis rows."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from helpers import mock_pairs, run_cli
from seed_results import ALIGN, LD_GT, LD_LE, SEEDS, analysis_value, make_seed_results

T_975_DF2 = 4.302652729911275  # scipy.stats.t.ppf(0.975, 2): the t quantile of 3 seeds


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    return make_seed_results(tmp_path_factory.mktemp("analysis-seeds") / "results", analyses=True)


@pytest.fixture(scope="module")
def built(results, tmp_path_factory) -> tuple[Path, str]:
    from stsbench.reports.render import write_report

    out = tmp_path_factory.mktemp("analysis-seeds-report")
    write_report(results, out, "analysis seeds", "stsbench report (test)")
    return out, (out / "report.md").read_text(encoding="utf-8")


def _table(md: str, title: str) -> list[list[str]]:
    body = md.split(f"### {title}\n")[1].split("\n- ")[0]
    return [
        [c.strip() for c in ln.strip("|").split(" | ")] for ln in body.splitlines() if ln.startswith("| ")
    ]


def test_a_length_bias_result_as_numbers(results):
    from stsbench.analyses.registry import get_analysis
    from stsbench.reports import collect

    records = collect(results).analyses
    (rec,) = [
        r
        for r in records
        if r.variant == "length_bias_tokens" and r.model.name == "/runs/seeds/simcse/seed-1"
    ]
    numbers = get_analysis("length_bias").numbers(rec.result)
    by = {(n.row, n.column): n for n in numbers}
    gt = analysis_value(LD_GT, 1) * 100
    le = analysis_value(LD_LE, 1) * 100
    assert by[("|cos - g'| x100, LD > 3", "STS12")].value == pytest.approx(gt)
    assert by[("|cos - g'| x100, LD <= 3", "Avg.")].value == pytest.approx(le)
    assert by[("gap (LD <= 3 minus LD > 3)", "Avg.")].value == pytest.approx(le - gt)
    assert [n.row for n in numbers if n.headline] == [
        "|cos - g'| x100, LD > 3",
        "|cos - g'| x100, LD <= 3",
        "gap (LD <= 3 minus LD > 3)",
    ]
    rho = by[("Spearman x100, LD <= 3", "STS12")].value
    assert rho == pytest.approx(rec.result.datasets[0].threshold_groups[0].spearman * 100)


def test_the_report_summarises_each_figure_over_seeds_with_the_score_tables_function(built):
    from stsbench.stats.seeds import seed_summary

    out, md = built
    rows = _table(md, "Alignment and uniformity over seeds (align_uniform_dev)")
    assert rows[0] == ["model", "figure", "l_align", "l_uniform"]
    simcse = next(r for r in rows if r[0] == "unsup-SimCSE (n=3)")
    values = [analysis_value(ALIGN["simcse"], s) for s in SEEDS]
    s = seed_summary(values)
    assert simcse[2] == f"{s.mean:.4f} ± {s.std:.4f}" == "0.2000 ± 0.0100"
    interval = rows[rows.index(simcse) + 1]
    half = T_975_DF2 * 0.01 / math.sqrt(3)
    assert interval[0] == "↳ 95% interval over seeds"
    assert interval[2] == f"[{s.low:.4f}, {s.high:.4f}]" == f"[{0.2 - half:.4f}, {0.2 + half:.4f}]"
    # the per-checkpoint layout is kept for models without seeds only: no row per seed here
    assert "simcse/seed-1" not in md.split("## Alignment and uniformity")[1].split("## ")[0].split("```")[0]
    gap = next(r for r in _table(md, "Length bias over seeds (length_bias_tokens)") if r[1].startswith("gap"))
    assert gap[-1] == "2.00 ± 0.00"  # LD <= 3 minus LD > 3, x100: 18 - 16 on every seed


def test_every_seed_value_is_written_beside_the_figures_and_drawn(built):
    out, md = built
    with (out / "figures" / "align_uniform_dev_seeds.csv").open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    align = [r for r in rows if r["column"] == "l_align" and r["group"] == "ESimCSE (n=3)"]
    assert [int(r["seed"]) for r in align] == list(SEEDS)
    assert [float(r["value"]) for r in align] == pytest.approx(
        [analysis_value(ALIGN["esimcse"], s) for s in SEEDS]
    )
    assert (out / "figures" / "align_uniform_dev_seeds.svg").is_file()
    assert "figures/length_bias_tokens_seeds.svg" in md
    assert "`align_uniform_dev_seeds.csv` beside the figures" in md


def test_check_judges_an_analysis_row_over_the_seeds(results, capsys):
    code, out, err = run_cli(
        [
            "check",
            "--results",
            results,
            "--against",
            "esimcse-coling/table1/length-diff-gt-3",
            "--tolerance",
            "seeds",
            "--model",
            "simcse",
            "--difference",
            "6",
        ],
        capsys,
    )
    # LD > 3: 16.00 ± 1.00 over 3 seeds, published 16.34 of one run: -0.34 ± 4.97 inside ±6: reproduced
    assert code == 0, err
    assert "16.00 ± 1.00 (3)" in out and "16.34" in out and "reproduced" in out and "PASS" in out
    code, out, err = run_cli(
        ["check", "--results", results, "--against", "esimcse-coling/table7/simcse-ld-gt-3",
         "--tolerance", "seeds", "--model", "simcse"],
        capsys,
    )  # fmt: skip
    assert code == 1 and "not reproduced" in out and "STS12 not reproduced" in err and "Traceback" not in err


def test_check_on_analyses_refuses_in_one_line(results, tmp_path, capsys):
    def check(*args: object) -> tuple[int, str]:
        code, _, err = run_cli(["check", "--results", *args], capsys)
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        return code, err

    code, err = check(results, "--against", "esimcse-coling/table7/simcse-ld-gt-3", "--tolerance", "seeds")
    assert code == 2 and "pick one with --model" in err and "/runs/seeds/esimcse" in err
    code, err = check(results, "--against", "esimcse-coling/table8/simcse", "--tolerance", "seeds")
    assert code == 2 and "no repetition_probe results" in err and "stsbench repetition-probe" in err
    code, err = check(results, "--against", "esimcse-coling/table1/length-diff-gt-3", "--model", "simcse")
    assert code == 2 and "3 seeds" in err and "--tolerance seeds" in err
    words = tmp_path / "words"
    make_seed_results(words, analyses=True)
    for path in words.glob("analyses/*/avg/length_bias_tokens.json"):
        path.write_text(path.read_text().replace('"tokens"', '"words"'))
    code, err = check(words, "--against", "esimcse-coling/table1/length-diff-gt-3", "--tolerance", "seeds")
    assert code == 2 and "counts length differences in tokens" in err and "--unit tokens" in err


def test_a_claim_on_an_analysis_figure_is_judged_seed_by_seed(results, tmp_path):
    from stsbench.errors import StsbenchError
    from stsbench.reports.render import write_report
    from stsbench.reports.reproduction import load_claims

    claims = tmp_path / "claims.yaml"
    claims.write_text(
        "- {kind: difference, better: unsup-SimCSE, worse: ESimCSE, published: 1.13,\n"
        '   figure: "length_bias_tokens:gap (LD <= 3 minus LD > 3):Avg.", text: "ESimCSE shrinks the gap",\n'
        "   delta: 0.5, delta_reason: x100 like the STS figures}\n"
    )
    without = tmp_path / "without.yaml"  # an analysis figure has its own units: its claim must say its delta
    without.write_text(claims.read_text().replace(",\n   delta: 0.5, delta_reason: x100 like the STS figures}", "}"))
    with pytest.raises(StsbenchError, match="is an analysis figure, in that analysis' units: give the claim a delta"):
        load_claims(without)
    files = write_report(results, tmp_path / "out", "t", "stsbench report (test)", claims=load_claims(claims))
    (judged,) = files.report.claims
    (statement,) = judged.statements
    # per seed, SimCSE's gap x100 is 2.0 and ESimCSE's 0.5, 1.0, 1.5: paired differences 1.5, 1.0, 0.5
    assert (
        statement.diff == pytest.approx(1.0) and statement.interval.n == (3, 3) and statement.test.startswith("paired")
    )
    assert judged.delta == 0.5 and judged.delta_reason == "x100 like the STS figures"


def test_a_claim_on_analysis_results_a_recipe_does_not_make_is_refused(tmp_path):
    from stsbench.errors import StsbenchError
    from stsbench.recipes import load_recipe

    text = Path("stsbench/recipes/cpu-mini.yaml").read_text().replace("{unit: tokens}", "{unit: words}")
    (tmp_path / "r.yaml").write_text(text.replace("name: cpu-mini", "name: r", 1))
    with pytest.raises(
        StsbenchError, match="reads length_bias_tokens results, which the recipe's analyses do not"
    ):
        load_recipe(tmp_path / "r.yaml")
    bad = text.replace("length_bias_tokens:gap", "no_such_analysis_x:gap")
    (tmp_path / "b.yaml").write_text(bad.replace("name: cpu-mini", "name: b", 1))
    with pytest.raises(StsbenchError, match="is not the results of an analysis with figures"):
        load_recipe(tmp_path / "b.yaml")


def test_a_recipe_analyses_every_seed_by_default(tmp_path):
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.plan import build_plan

    plan = build_plan(load_recipe("cpu-mini"), tmp_path)
    ids = [s.id for s in plan.steps if s.kind == "analysis" and s.id.startswith("analysis/3-align_uniform/")]
    assert ids == [f"analysis/3-align_uniform/{r}/seed-{s}" for r in (
        "simcse", "esimcse", "esimcse-wr-only", "esimcse-mc-only", "mocose") for s in range(1, 6)]  # fmt: skip


def test_the_align_uniform_map_is_coloured_by_each_checkpoints_sts_avg(built):
    from seed_results import MEAN, value

    from stsbench.reports import paper_figures as align_map

    out, md = built
    data = out / "figures" / "align_uniform_dev_map.csv"
    with data.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 6 and {r["group"] for r in rows} == {"unsup-SimCSE (n=3)", "ESimCSE (n=3)"}
    first = next(r for r in rows if r["checkpoint"] == "esimcse/seed-1")
    avg = round(sum(round(value("esimcse", t, 1), 2) for t in MEAN) / 7, 2)
    assert float(first["sts_avg"]) == pytest.approx(avg) and float(first["l_align"]) == pytest.approx(0.29)
    assert "as SimCSE Figure 3 (data: `align_uniform_dev_map.csv`)" in md
    ax, colorbar = align_map.draw_map(data).axes
    # SimCSE Figure 3: l_uniform across, l_align up, the colour the STS Avg.
    assert ax.get_xlabel() == r"$\ell_{uniform}$" and ax.get_ylabel() == r"$\ell_{align}$"
    assert colorbar.get_ylabel() == "STS Avg. (7 test sets)" and "not produced here" in ax.get_title()


def test_a_paper_figure_under_its_number_and_caption_with_its_claims_verdict(results, tmp_path, capsys):
    from stsbench.reports.render import write_report
    from stsbench.reports.reproduction import load_claims

    claims = tmp_path / "claims.yaml"
    claims.write_text(
        '- {kind: difference, better: ESimCSE, worse: unsup-SimCSE, figure: "align_uniform_dev:STS-B dev:l_align",\n'
        "   paper_figure: simcse/figure3, text: ESimCSE aligns worse here, delta: 0.05, delta_reason: a test's}\n"
    )
    out = tmp_path / "out"
    write_report(
        results, out, "t", "stsbench report (test)", claims=load_claims(claims),
        figures=["simcse/figure3", "mocose/figure7"],
    )  # fmt: skip
    md = (out / "report.md").read_text()
    block = md.split("## SimCSE Figure 3\n")[1].split("\n## ")[0]
    assert "*$\\ell_{\\rm align}$ - $\\ell_{\\rm uniform}$ plot of models based on BERT_{base}." in block
    assert "The paper's claim: \"Pre-trained embeddings have good alignment but poor uniformity" in block
    # ESimCSE's l_align is 0.30 against 0.20 on every seed: the claimed direction holds
    assert "Judged here: ESimCSE aligns worse here — **supported, by more than δ** (Claims)." in block
    assert "](figures/align_uniform_dev_map.svg)" in block
    spectra = md.split("## MoCoSE Figure 7\n")[1].split("\n## ")[0]
    assert "Not drawn in this report: none of its results are under the report's folders." in spectra
    code, _, err = run_cli(
        ["report", "--results", results, "--out", tmp_path / "x", "--figures", "simcse/fig3"], capsys
    )
    assert code == 2 and "unknown figure 'simcse/fig3'; did you mean simcse/figure3" in err
    assert not (tmp_path / "x" / "report.md").exists()


def test_one_checkpoint_gets_a_bootstrap_interval_over_pairs(tmp_path, capsys):
    import json

    from stsbench.analyses.length_bias import (
        BOOTSTRAP_ROW,
        length_bias_from_table,
        length_bias_table7,
        word_count,
    )

    pairs, table = mock_pairs()
    r = length_bias_from_table([pairs, pairs], table, word_count)
    iv = r.bootstrap["intervals"]
    assert set(iv) == {"LD <= 3 Avg.", "LD > 3 Avg.", "gap"} and r.bootstrap["replicates"] == 1000
    le, gt = (next(a.mean_abs_diff for a in r.average if a.label == g) * 100 for g in ("<=3", ">3"))
    assert (
        iv["LD <= 3 Avg."][0] <= le <= iv["LD <= 3 Avg."][1]
        and iv["LD > 3 Avg."][0] <= gt <= iv["LD > 3 Avg."][1]
    )
    assert iv["gap"][0] <= le - gt <= iv["gap"][1]
    assert length_bias_from_table([pairs, pairs], table, word_count).bootstrap == r.bootstrap  # seeded
    rows = length_bias_table7("words", {"one": r}).frame.values.tolist()
    assert rows[-1][0] == BOOTSTRAP_ROW and rows[-1][-1] == f"[{iv['gap'][0]:.2f}, {iv['gap'][1]:.2f}]"
    # check on one released checkpoint: the published Avg. against that interval, labelled as the pairs'
    one = make_seed_results(tmp_path / "r", analyses=True)
    for path in (one / "analyses").glob("*/avg/length_bias_tokens.json"):
        if path.parent.parent.name != "simcse__seed-1":
            path.unlink()
    path = one / "analyses" / "simcse__seed-1" / "avg" / "length_bias_tokens.json"
    data = json.loads(path.read_text())
    data["result"]["bootstrap"] = {"intervals": {"LD > 3 Avg.": [14.9, 15.4]}, "replicates": 1000, "seed": 0}
    path.write_text(json.dumps(data))
    code, out, err = run_cli(
        [
            "check",
            "--results",
            one,
            "--against",
            "esimcse-coling/table1/length-diff-gt-3",
            "--tolerance",
            "seeds",
        ],
        capsys,
    )
    assert code == 1 and "[14.90, 15.40] (pairs)" in out and "16.34" in out, err
    assert "outside the checkpoint's 95% bootstrap interval over pairs" in err
