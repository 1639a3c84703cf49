"""``stsbench report --claims``: a table's claims judged over the report's groups of seeds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from helpers import run_cli
from seed_results import ESIMCSE_GAIN, make_seed_results

# ESimCSE's seeds are SimCSE's plus ESIMCSE_GAIN on the same seeds: STS12 +5, STS13 +2.5, 0 elsewhere, exactly
CLAIMS = [
    {"kind": "difference", "better": "esimcse", "worse": "simcse", "figure": "STS12", "published": 5.0,
     "text": "ESimCSE beats SimCSE on STS12"},
    {"kind": "ordering", "order": ["simcse", "esimcse"], "figure": "STS13"},  # reversed: ESimCSE is above
    {"kind": "plateau", "settings": ["simcse", "esimcse"], "margin": 1.0, "figure": "STS-B"},
    {"kind": "argmax", "best": "esimcse", "among": ["simcse", "esimcse"], "figure": "best-dev"},
    {"kind": "difference", "better": "esimcse", "worse": "simcse", "figure": "Avg."},  # (5 + 2.5) / 7 points
]  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    return make_seed_results(tmp_path_factory.mktemp("claims") / "results")


def test_claims_are_judged_seed_by_seed_in_the_report_and_its_json(results, tmp_path, capsys):
    from stsbench.reports import collect
    from stsbench.reports.collect import find_models
    from stsbench.reports.seeds import seed_groups

    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(CLAIMS, sort_keys=False))
    args = ["report", "--results", results, "--out", tmp_path / "rep", "--claims", tmp_path / "claims.yaml"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    state = json.loads((tmp_path / "rep" / "reproduction.json").read_text())
    claims = state["claims"]
    assert [c["verdict"] for c in claims[:3]] == ["supported, by more than δ", "contradicted", "supported"]
    (one,) = claims[0]["statements"]
    assert one["test"] == "paired t" and one["diff"] == pytest.approx(ESIMCSE_GAIN["STS12"]) and one["n"] == [3, 3]
    assert claims[0]["published"] == 5.0 and claims[2]["figure"] == "STSBenchmark"  # the alias resolved
    # best-dev: the trainings' own best STS-B dev scores, seed by seed
    groups = {g.method: g for g in seed_groups(find_models(collect(results)))}
    dev = {m: [r.best_dev_spearman * 100 for r in groups[m].runs] for m in ("unsup-SimCSE", "ESimCSE")}
    (best,) = claims[3]["statements"]
    mean = sum(dev["ESimCSE"]) / 3 - sum(dev["unsup-SimCSE"]) / 3
    assert best["diff"] == pytest.approx(mean) and set(claims[3]["best_probability"]) == {"simcse", "esimcse"}
    (avg,) = claims[4]["statements"]  # each seed's Avg.: the plain mean of its seven unrounded figures
    assert claims[4]["verdict"] == "supported, by more than δ" and avg["diff"] == pytest.approx(7.5 / 7, abs=0.01)
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Claims" in md and "| 1 | ESimCSE beats SimCSE on STS12 | difference | STS12 | 0.50 | **supported, by more than δ** |" in md
    assert "| 2 | simcse > esimcse | paired t | 3/3 | -2.50 |" in md
    assert "5 claims judged: 3 supported, by more than δ; 1 supported; 1 contradicted." in md  # the report says how many it judges
    assert claims[1]["margin"] == pytest.approx(-0.5 - claims[1]["statements"][0]["high"])  # beyond -δ by this
    assert "Claim 1: the paper reports a difference of 5.00." in md


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("- {kind: argmax, best: a, among: [a, b]}\n", "a claim names 'a': no group of this report"),
        ("- {kind: difference, better: simcse, worse: esimcse, figure: STS99}\n", "claim 1: figure 'STS99'"),
        # every figure a claim reads is a choice, the nearest named (task names alone were listed)
        ("- {kind: difference, better: simcse, worse: esimcse, figure: best-devv}\n",
         "figure 'best-devv' is not a figure a claim reads; did you mean 'best-dev'? choose from best-dev, final-dev"),
        ("- {kind: difference, better: simcse, worse: esimcse, figure: Avg}\n", "did you mean 'Avg.'?"),
        ("- {kind: plateau, settings: [simcse, esimcse]}\n", "claim 1: plateau.margin: missing; this key is required"),
        ("- {kind: peak}\n", "claim 1"),
        ("kind: argmax\n", "a claims file is a YAML list"),
        ("- [\n", "not valid YAML"),
    ],
)
def test_a_bad_claims_file_is_one_line_before_anything_is_written(results, tmp_path, capsys, text, words):
    (tmp_path / "claims.yaml").write_text(text)
    args = ["report", "--results", results, "--out", tmp_path / "rep", "--claims", tmp_path / "claims.yaml"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err, err
    assert not (tmp_path / "rep" / "report.md").exists()


def test_a_collapse_is_judged_on_each_seeds_last_dev_evaluation(results, tmp_path, capsys):
    """MoCoSE Figures 5-6: final-dev, the STS-B dev Spearman x100 of the run's last evaluation, seed by seed."""
    from stsbench.reports import collect
    from stsbench.reports.collect import find_models
    from stsbench.reports.seeds import seed_groups

    groups = {g.method: g for g in seed_groups(find_models(collect(results)))}
    last = [round([v for _, v in r.curve if v is not None][-1] * 100, 2) for r in groups["ESimCSE"].runs]
    high, low = max(last) + 1, min(last) - 1
    claims = [
        {"kind": "collapse", "settings": ["esimcse"], "below": high, "figure": "final-dev"},
        {"kind": "collapse", "settings": ["esimcse"], "below": low, "figure": "final-dev"},
    ]
    (tmp_path / "claims.yaml").write_text(yaml.safe_dump(claims, sort_keys=False))
    args = ["report", "--results", results, "--out", tmp_path / "rep", "--claims", tmp_path / "claims.yaml"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    judged = json.loads((tmp_path / "rep" / "reproduction.json").read_text())["claims"]
    (below,) = judged[0]["statements"]
    assert below["diff"] == pytest.approx(high - sum(last) / len(last)) and below["n"] == [3]
    assert judged[1]["verdict"] != "supported"  # every seed ended above the bound
    assert "last STS-B dev (training)" in (tmp_path / "rep" / "report.md").read_text()
