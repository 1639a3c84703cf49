"""``stsbench report``: sections, published rows and deltas, missing sections, bad files, byte-exact regeneration."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT, assert_same_report, folder_digests, run_cli, same_files

FIXTURE = ROOT / "tests" / "fixtures" / "report_results" / "results"
CHECKED_IN = ROOT / "reports" / "cpu-mini-replication"
SECTIONS = [
    "STS tasks",
    "Transfer tasks",
    "Length bias",
    "Repetition probe",
    "Alignment and uniformity",
    "Singular-value spectra",
    "Cosine density by gold score",
    "Training curves",
    "Ablations",
    "Provenance",
    "Skipped files",
]
TINY = "stsbench-report-fixtures__tiny-bert"
FIGURES = [
    "length_bias_words",
    "repetition_probe",
    "align_uniform_dev",
    "spectrum_test",
    "cosine_density_all",
    "align_uniform_dev_map",
    "training_curves",
]


def _report(results: Path, out: Path, cwd: Path | None = None) -> tuple[str, object]:
    from stsbench.reports.render import write_report

    old = Path.cwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        files = write_report(results, out, "fixture report", "stsbench report (test)")
    finally:
        os.chdir(old)
    return (Path(cwd or ".") / out / "report.md").read_text(encoding="utf-8"), files


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, str]:
    out = tmp_path_factory.mktemp("report")
    md, _ = _report(FIXTURE, out, cwd=ROOT)  # the results named from the clone's root, wherever pytest runs
    return out, md


def _reported(task_file: str) -> float:
    return json.loads((FIXTURE / task_file).read_text(encoding="utf-8"))["reported"]


def test_every_section_table_and_figure(built):
    out, md = built
    for title in SECTIONS:
        assert f"\n## {title}\n" in md
    assert "Not in this report" not in md  # the fixture has every kind of result
    for stem in FIGURES:
        assert (out / "figures" / f"{stem}.png").stat().st_size > 1000
        assert f"](figures/{stem}.svg)" in md
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.count('src="data:image/png;base64,') == len(FIGURES)
    assert "<script" not in page and "http" not in page.split("<body>")[1]  # readable offline
    for title in SECTIONS:
        assert f">{title}</h2>" in page
    for key in ["ESimCSE arXiv Table 1", "COLING Table 7", "COLING Table 8", "Ablation: dup_rate (ESimCSE)"]:
        assert key in md


def test_measured_published_and_delta_rows(built):
    _, md = built
    lines = md.splitlines()
    # the fixture's recipe holds the ESimCSE run against a Table 9 cell alone: its STS row is not set beside arXiv
    # no Table 7 row: nobody named one for it
    i = next(k for k, ln in enumerate(lines) if ln.startswith("| esimcse-tiny | ESimCSE |"))
    measured = _reported("runs__esimcse-tiny/avg/test/STS12.json")
    assert lines[i].split(" | ")[2] == f"{measured:.2f}"
    assert not lines[i + 1].startswith("| ↳ published:")
    assert "esimcse-arxiv/table7/esimcse-bert-base" not in md.split("## STS tasks")[1].split("\n## ")[0]
    # the dup_rate sweep: both runs, each beside the Table 9 cell the fixture's recipe_runs.json holds it against
    sweep = md.split("### Ablation: dup_rate (ESimCSE)")[1].split("###")[0]
    assert "| esimcse-dup0.16-tiny | 0.16 |" in sweep and "| 82.01 | esimcse-arxiv/table9/dup-rate#dup_rate=0.16 |" in sweep
    assert "| esimcse-tiny | 0.32 |" in sweep and "| 84.85 | esimcse-arxiv/table9/dup-rate#dup_rate=0.32 |" in sweep
    comp = md.split("### Ablation: ESimCSE's components")[1].split("###")[0]
    order = [ln.split(" | ")[1] for ln in comp.splitlines() if ln.startswith("| ") and "---" not in ln][1:]
    assert order == ["unsup-SimCSE", "word repetition only", "momentum contrast only", "ESimCSE"]


def test_a_report_without_a_recipe_sets_beside_a_trained_model_no_paper_row(tmp_path):
    """Results without recipe_runs.json or --against: no row is matched by a run's method: ESimCSE's runs get
    neither Table 7's row in the STS table nor Table 6's cells in the component table, and the notes say why."""
    results = tmp_path / "results"
    shutil.copytree(FIXTURE, results, ignore=shutil.ignore_patterns("recipe_runs.json", "fasttest"))
    md, _ = _report(Path("results"), Path("out"), cwd=tmp_path)
    lines = md.splitlines()
    i = next(k for k, ln in enumerate(lines) if ln.startswith("| esimcse-tiny | ESimCSE |"))
    assert not lines[i + 1].startswith("| ↳ published:")
    assert "esimcse-arxiv/table7" not in md.split("## STS tasks")[1].split("\n## ")[0]
    comp = md.split("### Ablation: ESimCSE's components")[1].split("\n### ")[0]
    assert "Published: none (neither the report's recipe nor --against names an STS-B dev cell" in comp
    assert "esimcse-arxiv/table6" not in comp


def test_a_released_checkpoint_is_matched_by_its_own_name_and_says_so():
    """A model not trained here, run under a published row's own name, gets that row, labelled as matched."""
    from stsbench.reports.collect import Model
    from stsbench.reports.scores import published_for
    from stsbench.results.schema import ModelInfo

    def model(name: str, method: str | None = None) -> Model:
        info = ModelInfo(name, name, "f" * 16, "avg", None, "float32", "hf")
        return Model(name, name, "avg", info, None, method, (f"sentence-transformers/{name}",))

    rows = published_for(model("sup-simcse-bert-base"), "sts")
    assert [e.key for e in rows] and all(e.row.split("/")[-1].lower() == "sup-simcse-bert-base" for e in rows)
    assert published_for(model("my-encoder"), "sts") == []


def test_a_marker_in_a_published_rows_name_comes_with_its_legend():
    """cpu-mini's STS table set "unsup-SimCSE-BERT-base ♣" beside SimCSE, and ♣ had no legend."""
    from stsbench.published.registry import get_entry
    from stsbench.reports.scores import legends, score_notes

    legend = "Rows marked ♣ are the paper's evaluation of SimCSE's officially released checkpoints."
    assert legends(get_entry("esimcse-arxiv/table7/unsup-simcse-bert-base")) == [legend]
    assert legends(get_entry("esimcse-arxiv/table7/esimcse-bert-base")) == []  # no marker, no legend
    assert legend in score_notes("sts", [], [legend])
    md = (ROOT / "reports" / "cpu-mini-replication" / "report.md").read_text(encoding="utf-8")
    assert "unsup-SimCSE-BERT-base ♣" in md and legend in md


def test_missing_sections_name_their_command(tmp_path):
    results = tmp_path / "results"
    shutil.copytree(FIXTURE / TINY, results / TINY, ignore=shutil.ignore_patterns("fasttest"))
    md, _ = _report(Path("results"), Path("out"), cwd=tmp_path)
    assert "| tiny-bert | – |" in md  # STS is there
    expected = {
        "Transfer tasks": "no transfer results under `results`. Make them with "
        "`stsbench run --model MODEL --tasks transfer --output results`.",
        "Length bias": "`stsbench length-bias --model MODEL [--model MODEL2 ...] --output results/analyses`",
        "Repetition probe": "`stsbench repetition-probe --model MODEL --corpus wiki1m_for_simcse.txt "
        "--output results/analyses`",
        "Alignment and uniformity": "`stsbench align-uniform --model MODEL --output results/analyses`",
        "Singular-value spectra": "`stsbench spectrum --model MODEL --output results/analyses`",
        "Training curves": "`stsbench train --config configs/simcse-minilm-cpu.yaml --output results/train/NAME`",
    }
    # no empty section: each is one line of the closing "Not in this report", after what the report does show
    absent = md.split("\n## Not in this report\n")[1].split("\n## ")[0]
    assert md.index("\n## STS tasks\n") < md.index("\n## Not in this report\n") < md.index("\n## Skipped files\n")
    for title, line in expected.items():
        assert f"\n## {title}\n" not in md and f"- [{title}]" not in md, title
        assert re.search(rf"^{re.escape(title)}: .*{re.escape(line)}", absent, re.M), title
    assert "Not in this report:" not in md
    assert not (tmp_path / "out" / "figures").exists() or not list((tmp_path / "out" / "figures").iterdir())


def test_bad_files_are_named_and_the_report_still_written(tmp_path, capsys):
    results = tmp_path / "results"
    shutil.copytree(FIXTURE / TINY, results / TINY)
    (results / "broken.json").write_text('{"kind": "stsbench.task_result", ', encoding="utf-8")
    (results / "other" / "package.json").parent.mkdir()
    (results / "other" / "package.json").write_text('{"name": "not ours"}', encoding="utf-8")
    half = json.loads((FIXTURE / TINY / "cls/test/STS12.json").read_text(encoding="utf-8"))
    del half["model"]
    (results / "half.json").write_text(json.dumps(half), encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = run_cli(["report", "--results", results, "--out", out], capsys)
    assert code == 0
    lines = err.splitlines()
    assert any(ln.startswith(f"warning: {results / 'broken.json'}: not a readable JSON file") for ln in lines)
    assert any(
        ln.startswith(f"warning: {results / 'other/package.json'}: not an stsbench result") for ln in lines
    )
    assert any(f"{results / 'half.json'}: malformed stsbench task result" in ln for ln in lines)
    md = (out / "report.md").read_text(encoding="utf-8")
    assert "| tiny-bert | – |" in md and (out / "report.html").is_file()
    skipped = md.split("\n## Skipped files\n")[1]
    assert "broken.json" in skipped and "package.json" in skipped and "half.json" in skipped
    code, _, err = run_cli(["report", "--results", results, "--out", out, "--strict"], capsys)
    assert code == 1 and "broken.json" in err and (out / "report.md").is_file()


def test_missing_results_folder_is_one_line(tmp_path, capsys):
    code, _, err = run_cli(["report", "--results", tmp_path / "nope", "--out", tmp_path / "out"], capsys)
    assert code == 2 and err.count("\n") == 1 and "nope does not exist" in err


def test_checkpoint_files_in_a_run_folder_are_not_warned_about(tmp_path):
    from stsbench.reports import collect

    run = tmp_path / "runs" / "simcse-tiny"
    shutil.copytree(FIXTURE / "train" / "simcse-tiny", run)
    (run / "config.json").write_text('{"architectures": ["BertModel"]}', encoding="utf-8")
    (run / "1_Pooling").mkdir()
    (run / "1_Pooling" / "config.json").write_text("{", encoding="utf-8")
    coll = collect(tmp_path)
    assert coll.warnings == [] and [r.name for r in coll.runs] == ["simcse-tiny"]
    assert coll.runs[0].best_step is not None and len(coll.runs[0].curve) >= 2


def test_a_reports_text_does_not_depend_on_where_it_is_written(built, tmp_path):
    """Written again, the report is the same byte for byte, wherever its folder lies. A clone under the
    temporary folder, beside the output folders (as `mktemp -d` makes one): the results folder was named relative
    to each output folder (`../../clone/...`, `../../../clone/...`). `built` is written from this clone's root."""
    clone = tmp_path / "clone"
    results = clone / FIXTURE.relative_to(ROOT)
    shutil.copytree(FIXTURE, results)
    first = folder_digests(built[0])
    for out in (tmp_path / "test_x0" / "again", clone / "inside"):
        _report(results, out, cwd=clone)
        differs = same_files(folder_digests(out), first)
        assert not differs, f"{out}: {differs}"
    assert "tests/fixtures/report_results/results" in (clone / "inside" / "report.md").read_text(encoding="utf-8")


def test_checked_in_report_regenerates_byte_for_byte(tmp_path):
    target = tmp_path / "reports" / CHECKED_IN.name
    shutil.copytree(CHECKED_IN / "results", target / "results")
    shutil.copy(CHECKED_IN / "claims.yaml", target / "claims.yaml")  # the recipe's claims, as reproduce writes them
    from stsbench.reports.render import write_report
    from stsbench.reports.reproduction import load_claims

    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        rel = Path("reports") / CHECKED_IN.name
        title = "CPU mini-replication: SimCSE, ESimCSE and MoCoSE on all-MiniLM-L6-v2, five seeds each"  # its README
        banner = (  # a mini recipe's, on every table and figure (its README's command)
            "Mini scale: all-MiniLM-L6-v2, 50 steps of 64 sentences from wiki1m's first 11,914 lines; "
            "5 seeds a setting: not the paper's setting."
        )
        figures = ["simcse/figure3", "simcse/figure4", "mocose/figure7"]  # the recipe's, under their numbers
        # where the edition's report was made with --keep-changed, the steps kept from earlier code are named in a
        # note that reproduce gave the report command ("Mixed code", which steps: what the state held then): the
        # command's --note, as the report's "Made by" line records it; an edition made current has no such note
        from stsbench.commands.report import carried

        made = next(ln for ln in (CHECKED_IN / "report.md").read_text(encoding="utf-8").splitlines() if ln.startswith("Made by `"))
        words = shlex.split(made.split("`")[1])
        notes = [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--note"]
        assert all(n.startswith("Mixed code:") for n in notes), notes
        command = shlex.join(
            ["stsbench", "report", "--results", f"{rel}/results", "--out", str(rel), "--title", title]
            + ["--claims", f"{rel}/claims.yaml", *[a for f in figures for a in ("--figures", f)]]
            + [a for note in notes for a in ("--note", note)]
            + ["--banner", banner]
        )
        write_report(
            rel / "results",
            rel,
            title,
            command,
            claims=load_claims(rel / "claims.yaml"),
            banner=banner,
            figures=figures,
            notes=notes,
            # the steps its reproduction carried, named in its Provenance where its report was made since
            carried=carried(CHECKED_IN) if "Carried to this" in (CHECKED_IN / "report.md").read_text() else None,
        )
    finally:
        os.chdir(old)
    # the rest: stsbench report (claims.yaml: the recipe's claims, which reproduce writes for it)
    hand_written = {"README.md", "timings.log", "reproduce.json", ".gitignore", "claims.yaml"}
    assert_same_report(target, CHECKED_IN, skip=lambda k: k.startswith("results/") or k in hand_written)


def test_html_screenshot_in_headless_chromium(built, tmp_path):
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    import matplotlib.image

    out, _ = built
    shot = tmp_path / "shot.png"
    subprocess.run(
        ["bash", str(ROOT / "scripts" / "screenshot_report.sh"), out / "report.html", shot, "1280x2400"],
        check=True,
        timeout=150,
        capture_output=True,
    )
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (2400, 1280)
    ink = (pixels[..., :3].mean(axis=2) < 0.9).mean()
    assert ink > 0.02  # text, tables and figures, not a blank or error page


def _run(name: str, **changes) -> object:
    from stsbench.reports.collect import TrainRun
    from stsbench.train.config import TrainConfig

    config = {
        **TrainConfig(method="esimcse", model="m", train_file="t", output=f"/r/{name}").to_dict(),
        **changes,
    }
    return TrainRun(
        name, name, config, config["method"], ((0, 0.5), (2, 0.6)), 2, 0.6, 2, 2, 1.0, 10, None, None, True
    )


def test_ablation_groups_by_the_fields_that_differ():
    from stsbench.reports.ablations import component_groups, sweep_groups

    runs = [
        _run("esimcse"),
        _run("simcse", method="simcse"),
        _run("wr", queue_multiple=0.0),
        _run("mc", repetition=False),
        _run("dup16", dup_rate=0.16),
        _run("wr-dup16", queue_multiple=0.0, dup_rate=0.16),
        _run("q1", queue_multiple=1.0),
        _run("seed43", seed=43),
        _run("other-threads", threads=1, output="/elsewhere"),  # bookkeeping only: same run as "esimcse"
    ]
    groups = [[r.name for r in g] for g in component_groups(runs)]
    # SimCSE, word repetition only, momentum contrast only and ESimCSE at dup_rate 0.32, queue 2.5x, seed 42;
    # the dup_rate 0.16 pair (wr-dup16, dup16) forms its own component group
    assert groups[0] == ["simcse", "wr", "mc", "esimcse", "other-threads"]
    assert ["wr-dup16", "dup16"] in groups
    sweeps = {(f, tuple(r.name for r in g)) for f, g in sweep_groups(runs)}
    assert ("dup_rate", ("dup16", "esimcse", "other-threads")) in sweeps
    assert ("dup_rate", ("wr-dup16", "wr")) in sweeps  # word repetition only runs sweep dup_rate too
    assert ("queue_multiple", ("q1", "esimcse", "other-threads")) in sweeps
    assert ("seed", ("esimcse", "other-threads", "seed43")) in sweeps
    # a component a run does not use is not compared: mc (no repetition) is in no dup_rate sweep
    assert not any("mc" in names for f, names in sweeps if f == "dup_rate")
    assert all(f not in ("threads", "output", "repetition", "method") for f, _ in sweeps)
    # MoCoSE is named as such, never joins ESimCSE's component table, and sweeps its own fields
    from stsbench.reports.collect import method_of

    moco = [_run("moco", method="mocose"), _run("moco-q256", method="mocose", queue_size=256)]
    assert method_of(moco[0].config) == "MoCoSE"
    assert all("moco" not in r.name for g in component_groups(runs + moco) for r in g)
    sweeps = {(f, tuple(r.name for r in g)) for f, g in sweep_groups(runs + moco)}
    assert ("queue_size", ("moco-q256", "moco")) in sweeps
    assert not any(f == "queue_size" and "esimcse" in names for f, names in sweeps)


def test_runs_group_by_resolved_dropout_not_by_how_a_config_spells_it():
    """SimCSE's configs leave dropout unset, ESimCSE's spell 0.1: with the backbone's own 0.1, one setting."""
    import dataclasses

    from stsbench.reports.ablations import component_groups
    from stsbench.reports.seeds import seed_key

    esimcse = dataclasses.replace(_run("esimcse", dropout=0.1), backbone_dropout=0.1)
    simcse = dataclasses.replace(_run("simcse", method="simcse", dropout=None), backbone_dropout=0.1)
    groups = [[r.name for r in g] for g in component_groups([esimcse, simcse])]
    assert groups == [["simcse", "esimcse"]]
    # a backbone whose own dropout differs, or a run recorded before stsbench kept it, stays apart
    other = dataclasses.replace(simcse, backbone_dropout=0.2)
    assert component_groups([esimcse, other]) == []
    assert component_groups([esimcse, dataclasses.replace(simcse, backbone_dropout=None)]) == []
    spelt = dataclasses.replace(_run("simcse-0.1", method="simcse", dropout=0.1), backbone_dropout=0.1)
    assert seed_key(simcse, "cls") == seed_key(dataclasses.replace(spelt, name="simcse"), "cls")


def test_models_are_told_apart_by_fingerprint_not_name(tmp_path):
    from stsbench.reports import collect
    from stsbench.reports.collect import find_models

    src = FIXTURE / "runs__simcse-tiny" / "avg" / "test"
    for sub, name, fp in [
        ("a", "/x/simcse-tiny", None),  # moved checkpoint, same weights: the same model
        ("b", "/tmp/stsbench-report-fixtures/runs/simcse-tiny", "0" * 32),  # trained again in place
    ]:
        for task in ("STS12", "STS13"):
            data = json.loads((src / f"{task}.json").read_text(encoding="utf-8"))
            data["model"]["name"] = name
            data["model"]["fingerprint"] = fp or data["model"]["fingerprint"]
            (tmp_path / sub).mkdir(exist_ok=True)
            (tmp_path / sub / f"{task}.json").write_text(json.dumps(data), encoding="utf-8")
    shutil.copytree(src, tmp_path / "orig")
    shutil.copytree(FIXTURE / "train" / "simcse-tiny", tmp_path / "train" / "simcse-tiny")
    models = find_models(collect(tmp_path))
    assert len(models) == 2
    moved = next(m for m in models if m.key != "0" * 32)
    assert moved.names == ("/tmp/stsbench-report-fixtures/runs/simcse-tiny", "/x/simcse-tiny")
    # both weights come from the run's folder (at different times): both are SimCSE, labelled apart
    assert {m.label for m in models} == {f"simcse-tiny [{moved.key[:8]}]", "simcse-tiny [00000000]"}
    assert {m.method for m in models} == {"unsup-SimCSE"}


def test_a_model_under_two_fingerprints_says_why(tmp_path):
    """The backbone twice in the checked-in results (b0144fcc, f5243ee9): same files and settings, encoded by
    two stsbench versions (embedding code version 1, then 2): the models table says so instead of showing the
    same model twice without a word."""
    from stsbench.reports import collect
    from stsbench.reports.collect import find_models
    from stsbench.reports.provenance import models_table

    src = FIXTURE / TINY / "cls" / "test"
    for sub, fp, commit in [("old", "1" * 32, "a" * 40), ("new", "2" * 32, "b" * 40 + "-dirty")]:
        for task in ("STS12", "STS13"):
            data = json.loads((src / f"{task}.json").read_text(encoding="utf-8"))
            data["model"]["fingerprint"] = fp
            data["provenance"]["git_commit"] = commit
            (tmp_path / sub).mkdir(exist_ok=True)
            (tmp_path / sub / f"{task}.json").write_text(json.dumps(data), encoding="utf-8")
    coll = collect(tmp_path)
    models = find_models(coll)
    assert sorted(m.label for m in models) == ["tiny-bert [11111111]", "tiny-bert [22222222]"]
    (why,) = models_table(models, coll).notes[1:]
    assert why.startswith("tiny-bert [11111111] and tiny-bert [22222222]: the same name, pooler, max length")
    assert "encoded by other stsbench code" in why and "aaaaaaaa; tiny-bert [22222222]: bbbbbbbb-dirty" in why
    # other settings are named instead
    data["model"]["pooler"], data["model"]["fingerprint"] = "avg", "3" * 32
    (tmp_path / "avg").mkdir()
    (tmp_path / "avg" / "STS13.json").write_text(json.dumps(data), encoding="utf-8")
    coll = collect(tmp_path)
    notes = models_table(find_models(coll), coll).notes[1:]
    assert any("the same name, other pooler" in n for n in notes), notes


def test_training_runs_read_with_and_without_kind_and_version(tmp_path):
    from stsbench.reports import collect

    run = tmp_path / "train" / "simcse-tiny"
    shutil.copytree(FIXTURE / "train" / "simcse-tiny", run)  # written before kind/schema_version existed
    old = collect(tmp_path).runs[0]
    meta = json.loads((run / "stsbench.json").read_text(encoding="utf-8"))
    meta.update(kind="stsbench.train_run", schema_version=1)
    (run / "stsbench.json").write_text(json.dumps(meta), encoding="utf-8")
    newer = '{"kind": "stsbench.train_log", "schema_version": 2, "event": "eval", "step": 99, "dev_spearman": 0.9}'
    with (run / "train_log.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(newer + "\n")
    coll = collect(tmp_path)
    assert coll.runs[0] == old  # the version-1 meta reads the same; the version-2 record is left out
    assert (
        len(coll.warnings) == 1 and "training log schema version 2, this stsbench reads 1" in coll.warnings[0]
    )
    meta["schema_version"] = 2
    (run / "stsbench.json").write_text(json.dumps(meta), encoding="utf-8")
    coll = collect(tmp_path)
    assert not coll.runs[0].has_checkpoint and any(
        "stsbench.json: checkpoint description schema" in w for w in coll.warnings
    )
