"""Published cells (KEY#COLUMN): what each is compared with, and one verdict from `check` and the report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import run_cli

from stsbench.errors import StsbenchError
from stsbench.published.check import cells, figure_of, is_cell_check
from stsbench.published.registry import get_cell, get_entry, split_cell
from stsbench.recipes import load_recipe
from stsbench.reports.reproduction import Target, check_cells, parse_against
from stsbench.results.runs import write_recipe_runs

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "report_results" / "results"
CPU_MINI = ROOT / "reports" / "cpu-mini-replication" / "results"
SWEEP_RUN = FIXTURE / "train" / "esimcse-dup0.16-tiny"  # a training run no result was computed from


def test_cell_addresses_and_their_one_line_errors():
    assert split_cell("simcse/table4/dropout-p#p=0.1") == ("simcse/table4/dropout-p", "p=0.1")
    assert split_cell("simcse/table4/dropout-p") == ("simcse/table4/dropout-p", None)
    assert split_cell("mine.yaml#table1/ours#STS12") == ("mine.yaml#table1/ours", "STS12")
    assert split_cell("mine.yaml#table1/ours") == ("mine.yaml#table1/ours", None)
    entry, column = get_cell("esimcse-arxiv/table9/dup-rate#dup_rate=0.32")
    assert column == "dup_rate=0.32" and entry.values[column] == 84.85
    with pytest.raises(StsbenchError, match=r"has no column 'dup_rate=0.3'; did you mean dup_rate=0.32\?"):
        get_cell("esimcse-arxiv/table9/dup-rate#dup_rate=0.3")
    # --against: GROUP= is what precedes the first '=' only where no '#' does (a column may hold '=')
    assert parse_against(["esimcse-arxiv/table9/dup-rate#dup_rate=0.32"]) == [
        Target("esimcse-arxiv/table9/dup-rate#dup_rate=0.32")
    ]
    assert parse_against(["dup-rate.dup_rate-0.32=esimcse-arxiv/table9/dup-rate#dup_rate=0.32"]) == [
        Target("esimcse-arxiv/table9/dup-rate#dup_rate=0.32", "dup-rate.dup_rate-0.32")
    ]
    assert is_cell_check("mocose/table5/typos")  # an Avg.-only row
    assert is_cell_check("simcse/sts/unsup-simcse-bert-base#STS12")
    assert not is_cell_check("simcse/sts/unsup-simcse-bert-base")  # a score row: check's task-by-task rule


def test_what_each_cell_is_compared_with():
    dev_sweep = figure_of(get_entry("esimcse-arxiv/table9/dup-rate"), "dup_rate=0.32")
    assert (
        dev_sweep is not None and dev_sweep.kind == "best-dev"
    )  # the training's own best dev: no extra step
    dev_row = figure_of(get_entry("esimcse-arxiv/table6/esimcse-bert-base"), "STSBenchmark")
    assert dev_row is not None and dev_row.kind == "best-dev"
    ema = figure_of(get_entry("mocose/table3/ema-decay"), "ema=0.85")
    assert ema is not None and ema.kind == "avg" and len(ema.tasks) == 7 and ema.assumed
    assert "assumed" in ema.describe()
    avg_only = figure_of(get_entry("mocose/table6b/batch-64"), "Avg.")
    assert avg_only is not None and avg_only.assumed and avg_only.mode == "test"
    row_avg = figure_of(get_entry("simcse/sts/unsup-simcse-bert-base"), "Avg.")
    assert row_avg is not None and not row_avg.assumed and row_avg.tasks[0] == "STS12"  # the row's own tasks
    transfer = figure_of(get_entry("simcse/table9/wo-mlm"), "Avg. transfer")
    assert transfer is not None and transfer.tasks[0] == "MR" and transfer.mode == "dev"
    assert (
        figure_of(get_entry("simcse/table9/wo-mlm"), "Avg. other") is None
    )  # no figure of ours: not checked
    with pytest.raises(StsbenchError, match="analysis table"):
        cells("esimcse-coling/table1/length-diff-gt-3")


def _seeds_of(run: Path, out: Path, best: dict[int, float], model: str = "bert-base-uncased") -> Path:
    """``out/seed-<s>``: copies of one training run, each with its own seed and best STS-B dev (a fraction).

    ``model``: what their configs say they started from (the tiny run's stand-in for the papers' BERT-base, the
    backbone of the rows they are held against).
    """
    for seed, dev in best.items():
        folder = out / f"seed-{seed}"
        shutil.copytree(run, folder)
        meta = json.loads((folder / "stsbench.json").read_text())
        meta["training"].update(seed=seed, output=f"seed-{seed}", model=model)
        meta["best_dev_spearman"] = dev
        (folder / "stsbench.json").write_text(json.dumps(meta))
        records = [json.loads(x) for x in (folder / "train_log.jsonl").read_text().splitlines()]
        for r in records:
            if r["event"] == "start":
                r["config"].update(seed=seed, output=f"seed-{seed}", model=model)
            if r["event"] == "end":
                r["best_dev_spearman"] = dev
        (folder / "train_log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return out


def _report_verdicts(results: Path, out: Path, against: str, capsys) -> list[dict]:
    code, _, err = run_cli(
        ["report", "--results", str(results), "--out", str(out), "--against", against], capsys
    )
    assert code == 0, err
    (target,) = json.loads((out / "reproduction.json").read_text())["targets"]
    return target["cells"]


def test_check_judges_a_sweep_cell_as_the_report_does(tmp_path, capsys):
    """A dev sweep's cell: the seeds' best dev scores against the published one, one verdict from both."""
    address = "esimcse-arxiv/table9/dup-rate#dup_rate=0.16"
    far = _seeds_of(SWEEP_RUN, tmp_path / "far", {1: 0.2713, 2: 0.2790, 3: 0.2751})
    near = _seeds_of(SWEEP_RUN, tmp_path / "near", {1: 0.8190, 2: 0.8212, 3: 0.8201})
    for folder, expected in ((far, "not reproduced"), (near, "reproduced")):
        rep = check_cells(folder, address)
        (v,) = rep.verdicts
        assert v.status == expected and v.n == 3
        # unrounded: the training's best dev Spearman x100, as tests read it
        assert v.values == pytest.approx((27.13, 27.9, 27.51) if folder == far else (81.9, 82.12, 82.01))
        code, out, err = run_cli(
            ["check", "--results", str(folder), "--against", address, "--tolerance", "seeds"], capsys
        )
        assert (code, expected in out) == ((0, True) if expected == "reproduced" else (1, True)), out + err
        (cell,) = _report_verdicts(folder, tmp_path / f"report-{folder.name}", f"ESimCSE={address}", capsys)
        assert (cell["verdict"], cell["values"], cell["mean"]) == (v.status, list(v.values), v.mean)
    # a number compares one checkpoint, and refuses several seeds in one line
    code, _, err = run_cli(
        ["check", "--results", str(far), "--against", address, "--tolerance", "0.05"], capsys
    )
    assert code == 2 and "judge them with --tolerance seeds" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run_cli(
        ["check", "--results", str(far / "seed-1"), "--against", address, "--tolerance", "60"], capsys
    )
    assert code == 0 and "27.13" in out and "PASS" in out


@pytest.mark.skipif(not CPU_MINI.is_dir(), reason="the checked-in CPU mini-replication is absent")
def test_check_judges_an_avg_only_row_as_the_report_does(tmp_path, capsys):
    """MoCoSE Table 6(b)'s Avg.-only row on the checked-in MoCoSE seeds: the assumed seven-task Avg., one verdict."""
    address = "mocose/table6b/batch-64"
    rep = check_cells(CPU_MINI, address, group="mocose")
    (v,) = rep.verdicts
    # MiniLM, 50 steps: 1.5 above 77.25, a figure of one run (k = 1): (m - P) ± t·s·sqrt(1/5 + 1) reaches δ = 1
    assert v.task == "Avg." and v.n == 5 and v.status == "inconclusive" and "one run" in v.note
    assert "assumed" in rep.compared_with
    code, out, err = run_cli(
        [
            "check",
            "--results",
            str(CPU_MINI),
            "--against",
            address,
            "--tolerance",
            "seeds",
            "--model",
            "mocose",
        ],
        capsys,
    )
    # MiniLM's seeds against a row whose backbone its paper does not name: refused in one line naming both, unless shown beside it
    assert code == 2 and len(err.strip().splitlines()) == 1, out + err
    assert "mocose/table6b/batch-64 is a row naming no backbone stsbench can read" in err  # MoCoSE's ablations
    assert "trained from all-MiniLM-L6-v2 (MiniLM-L6)" in err
    code, out, err = run_cli(
        ["check", "--results", str(CPU_MINI), "--against", address, "--tolerance", "seeds", "--model", "mocose"]
        + ["--beside"],
        capsys,
    )
    assert code == 0 and "beside, not judged" in out and "assumed" in out.replace("\n", " "), out + err
    assert "PASS" not in out and v.status not in out
    mocose = tmp_path / "mocose"  # the MoCoSE seeds alone: their report is 5 figures, the whole edition's 43
    for part in [*CPU_MINI.glob("mocose__seed-*"), CPU_MINI / "runs__mocose", CPU_MINI / "train" / "mocose"]:
        shutil.copytree(part, mocose / part.relative_to(CPU_MINI))
    (cell,) = _report_verdicts(mocose, tmp_path / "report", f"mocose={address}", capsys)
    assert (cell["verdict"], cell["values"], cell["mean"]) == (v.status, list(v.values), v.mean)
    # several groups and none named: one line naming them
    code, _, err = run_cli(
        ["check", "--results", str(CPU_MINI), "--against", address, "--tolerance", "seeds"], capsys
    )
    assert code == 2 and "name one with --model" in err and len(err.strip().splitlines()) == 1


def test_a_dev_sweep_over_seeds_is_one_row_per_setting_and_its_claim_is_judged(tmp_path, capsys):
    """Two dup rates x three seeds of training runs alone (no evaluation: a recipe's evaluate null)."""
    results = tmp_path / "results"
    low = _seeds_of(SWEEP_RUN, results / "dup-rate.dup_rate-0.16", {1: 0.40, 2: 0.41, 3: 0.42})
    high = _seeds_of(SWEEP_RUN, results / "dup-rate.dup_rate-0.32", {1: 0.45, 2: 0.46, 3: 0.47})
    for folder in high.iterdir():  # the same runs at dup_rate 0.32
        meta = json.loads((folder / "stsbench.json").read_text())
        meta["training"]["dup_rate"] = 0.32
        (folder / "stsbench.json").write_text(json.dumps(meta))
    assert low.is_dir()
    write_recipe_runs(results, load_recipe("esimcse-dup-rate-mini"))  # its runs' cells, as reproduce keeps them
    claims = tmp_path / "claims.yaml"
    claims.write_text(
        "- {kind: argmax, best: dup-rate.dup_rate-0.32, among: [dup-rate.dup_rate-0.16, dup-rate.dup_rate-0.32],"
        " figure: best-dev}\n"
    )
    out = tmp_path / "report"
    code, _, err = run_cli(
        [
            "report",
            "--results",
            str(results),
            "--out",
            str(out),
            "--claims",
            str(claims),
            "--baseline",
            "ESimCSE",
        ],
        capsys,
    )
    assert code == 0, err
    md = (out / "report.md").read_text()
    table = md.split("### Sweep over seeds: dup_rate (ESimCSE)")[1].split("\n- ")[0]
    lines = [x for x in table.splitlines() if x.startswith("| 0.")]
    assert lines[0].startswith("| 0.16 | 41.00 ± 1.00 (n=3) | [38.52, 43.48] |")
    assert lines[1].startswith("| 0.32 | 46.00 ± 1.00 (n=3) | [43.52, 48.48] |")
    assert "| 82.01 | esimcse-arxiv/table9/dup-rate#dup_rate=0.16 |" in lines[0]
    (claim,) = json.loads((out / "reproduction.json").read_text())["claims"]
    assert claim["verdict"] == "supported, by more than δ"  # +5 points every seed, seed by seed


def test_a_group_selected_on_the_test_sets_says_so_wherever_it_is_shown(tmp_path, capsys):
    """select_on: sts-test (MoCoSE's official selection) is on offer, never the default, and marked."""
    from stsbench.reports.seeds import TEST_SELECTED

    folder = _seeds_of(SWEEP_RUN, tmp_path / "results" / "picked", {1: 0.40, 2: 0.41})
    for seed in (1, 2):
        meta_path = folder / f"seed-{seed}" / "stsbench.json"
        meta = json.loads(meta_path.read_text())
        meta["training"]["select_on"] = "sts-test"
        meta_path.write_text(json.dumps(meta))
    rep = check_cells(folder, "esimcse-arxiv/table9/dup-rate#dup_rate=0.16")
    assert rep.group.test_selected and rep.group.label.endswith(TEST_SELECTED)
    out = tmp_path / "report"
    against = "picked=esimcse-arxiv/table9/dup-rate#dup_rate=0.16"
    code, _, err = run_cli(
        [
            "report",
            "--results",
            str(tmp_path / "results"),
            "--out",
            str(out),
            "--baseline",
            "ESimCSE",
            "--against",
            against,
        ],
        capsys,
    )
    assert code == 0, err
    assert (
        f"ESimCSE (n=2){TEST_SELECTED} vs esimcse-arxiv/table9/dup-rate#dup_rate=0.16"
        in (out / "report.md").read_text()
    )


def test_a_grid_over_seeds_is_one_table_with_a_cell_per_pair_of_settings(tmp_path):
    """Two fields x two values x two seeds of training runs alone: one grid table, no sweep tables beside."""
    from stsbench.reports.collect import collect
    from stsbench.reports.render import ReportSpec, build_report

    results = tmp_path / "results"
    dev = 0.40
    for rate in (0.16, 0.32):
        for multiple in (1.0, 2.5):
            folder = _seeds_of(SWEEP_RUN, results / f"r{rate}-q{multiple}", {1: dev, 2: dev + 0.02})
            dev += 0.01
            for seed in (1, 2):
                meta_path = folder / f"seed-{seed}" / "stsbench.json"
                meta = json.loads(meta_path.read_text())
                meta["training"].update(dup_rate=rate, queue_multiple=multiple)
                meta_path.write_text(json.dumps(meta))
    report = build_report(collect(results), ReportSpec("t", "stsbench report"), tmp_path / "figures")
    tables = {t.title: t for s in report.sections for t in s.tables}
    grid = tables["Grid over seeds: dup_rate x queue_multiple (ESimCSE)"]
    assert list(grid.frame.columns)[1:] == ["1", "2.5"]
    assert grid.frame.iloc[0].tolist() == ["0.16", "41.00 ± 1.41 (n=2)", "42.00 ± 1.41 (n=2)"]
    assert grid.frame.iloc[1].tolist() == ["0.32", "43.00 ± 1.41 (n=2)", "44.00 ± 1.41 (n=2)"]
    assert not any(title.startswith("Sweep over seeds") for title in tables)


def test_a_runs_cell_is_the_first_it_is_held_against_with_a_figure_and_the_note_cites_its_version():
    from stsbench.reports.reproduction import cited, published_cell, published_figure

    run = type("Run", (), {"path": "train/dup.dup_rate-0.32/seed-1"})()  # what published_cell reads of a run
    cells = {"dup.dup_rate-0.32": ["esimcse-arxiv/table9/dup-rate#dup_rate=0.32"]}
    assert published_cell(run, cells) == ("esimcse-arxiv/table9/dup-rate#dup_rate=0.32", 84.85)
    assert published_cell(run, {}) is None and published_cell(run, {"other": ["mocose/table6b/batch-64"]}) is None
    assert published_figure("mocose/table3/ema-decay#ema=0.85") == 76.49  # a cell: its figure
    assert published_figure("mocose/table6b/batch-64") == 77.25  # a row: its Avg.
    assert published_figure("esimcse-arxiv/table11/queue-2.5x") == 84.85  # a dev row: its STS-B figure
    note = cited(["simcse/table8/batch-size#64", "simcse/table4/dropout-p#p=0.1"])
    assert note.count("SimCSE: Simple Contrastive") == 1 and "arXiv:2104.08821v1" in note  # the version read
    assert note.endswith("Table 8, Table 4")


def test_a_transfer_test_figure_is_never_read_from_fasttest_results():
    from stsbench.published.check import Figure, check_split, result_modes, seed_values
    from stsbench.reports.scores import comparable

    assert result_modes("test", ("STS12", "STSBenchmark")) == ("test", "fasttest")  # the same figures
    assert result_modes("test", ("MR",)) == ("test",)  # fasttest: another classifier protocol
    assert result_modes("test", ("STS12", "MR")) == ("test",)  # an average touching a transfer task
    assert result_modes("dev", ("MR",)) == ("dev",) and result_modes(None, ("MR",)) == ()
    mixed = {1: {("MR", "test"): 81.2}, 2: {("MR", "fasttest"): 79.9}, 3: {("MR", "fasttest"): 80.1}}
    assert seed_values(Figure("task", ("MR",)), mixed, {}) == {1: 81.2}  # no cell of two protocols
    trec = figure_of(get_entry("simcse/transfer/unsup-glove-avg"), "TREC")
    assert trec is not None and trec.modes == ("test",)
    avg = figure_of(get_entry("simcse/transfer/unsup-glove-avg"), "Avg.")
    assert avg is not None and avg.modes == ("test",)
    both = {
        1: {("MR", "test"): 81.0, ("TREC", "test"): 90.0},
        2: {("MR", "fasttest"): 80.0, ("TREC", "fasttest"): 88.0},
    }
    assert seed_values(Figure("avg", ("MR", "TREC")), both, {}) == {1: 85.5}
    sts = {1: {("STS12", "test"): 70.0}, 2: {("STS12", "fasttest"): 72.0}}
    assert seed_values(Figure("task", ("STS12",)), sts, {}) == {1: 70.0, 2: 72.0}  # STS: fasttest is the same
    row = get_entry("simcse/transfer/unsup-glove-avg")
    assert comparable(row, "transfer", "test") and not comparable(row, "transfer", "fasttest")
    assert comparable(get_entry("simcse/sts/unsup-simcse-bert-base"), "sts", "fasttest")
    with pytest.raises(StsbenchError, match="test-split numbers .* fasttest mode; rerun with --mode test"):
        check_split(row, "fasttest", Path("results"))


EDITIONS = ROOT / "reports"


@pytest.mark.skipif(not (EDITIONS / "esimcse-dup-rate-mini").is_dir(), reason="the checked-in editions are absent")
def test_check_refuses_the_editions_minilm_seeds_against_the_papers_bert_base_cells(capsys):
    """The editions train MiniLM; the papers' cells are BERT-base's: refused in one line naming both (exit 2), shown
    with --beside (exit 0, never a verdict); a sweep's whole row lists its columns."""
    sequential = EDITIONS / "simcse-dropout-sequential-mini" / "results"
    dropout = ["--results", str(sequential), "--model", "dropout.dropout-0.1", "--tolerance", "seeds"]
    code, _, err = run_cli(["check", *dropout, "--against", "simcse/table4/dropout-p#p=0.1"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "simcse/table4/dropout-p#p=0.1 is a row on BERT-base" in err and "(MiniLM-L6)" in err
    code, out, err = run_cli(["check", *dropout, "--against", "simcse/table4/dropout-p#p=0.1", "--beside"], capsys)
    assert code == 0 and "beside, not judged" in out and "PASS" not in out, out + err
    dup = EDITIONS / "esimcse-dup-rate-mini" / "results" / "train" / "dup-rate.dup_rate-0.32"
    address = "esimcse-arxiv/table9/dup-rate#dup_rate=0.32"
    code, _, err = run_cli(["check", "--results", str(dup), "--against", address, "--tolerance", "seeds"], capsys)
    assert code == 2 and "is a row on BERT-base" in err and "trained from all-MiniLM-L6-v2" in err, err
    code, _, err = run_cli(["check", *dropout, "--against", "simcse/table4/dropout-p"], capsys)
    assert code == 2 and "is a row of 7 columns (p=0.0, p=0.01, p=0.1" in err and "#p=0.0'" in err, err
