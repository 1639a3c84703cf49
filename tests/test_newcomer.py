"""What a new user's trial found misleading (issue "Reports and status that a newcomer reads right"), each fixed.

Status without a data folder: tests/test_editions.py; modified data before any step: tests/test_reproduce_changes.py.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import DATA, run_cli
from seed_results import make_seed_results

from stsbench.progress import plural
from stsbench.reports.render import write_report


def test_counts_are_singular_where_one(monkeypatch, capsys):
    """ "1 claims", "1 models", "cpu (1 threads)": a count of one reads singular."""
    code, out, _ = run_cli(["reproduce", "--list", "--format", "json"], capsys)
    one = next(s["name"] for s in json.loads(out) if len(s["claims"]) == 1)
    monkeypatch.setenv("COLUMNS", "100")  # the --list blocks, not the wide table
    code, out, _ = run_cli(["reproduce", "--list"], capsys)
    assert code == 0 and not re.search(r"\b1 (claims|cells|trainings)\b", out), out
    head = next(line for line in out.splitlines() if line.startswith(f"{one} ("))
    assert "1 claim," in head, head
    assert plural(1, "model") == "1 model" and plural(2, "model") == "2 models"


def test_report_of_a_results_file_says_it_is_a_file(tmp_path, capsys):
    """`report --results FILE` said the folder does not exist."""
    path = tmp_path / "STS12.json"
    path.write_text("{}")
    code, _, err = run_cli(["report", "--results", path, "--out", tmp_path / "rep"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{path} is a file, not a results folder; pass the folder that holds it: {tmp_path}" in err


def test_a_malformed_recipe_names_the_parsers_complaint(tmp_path, capsys):
    """The line number was given, the parser's message not."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ntitle: [unclosed\n")
    code, _, err = run_cli(["reproduce", bad, "--dry-run"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{bad}:3: not valid YAML (did not find expected ',' or ']'); fix the file" in err


@pytest.mark.parametrize("text", ["plain", "a `b` c", "`x`", "two ``here``", "```"])
def test_a_skipped_files_code_span_survives_backticks(text):
    """A code span broke on backticks in "Skipped files": the fence is longer than any run of them."""
    import markdown

    from stsbench.reports.render import code_span

    html = markdown.markdown(code_span(text))
    assert html == f"<p><code>{text}</code></p>", html


def test_a_claims_figures_print_with_the_decimals_its_delta_needs():
    """δ = 0.01 at two decimals: "diff -0.03, [-0.03, -0.02], margin +0.01" could not be checked by hand."""
    from stsbench.reports.reproduction import claims_table, statements_table
    from stsbench.reports.scores import delta_digits
    from stsbench.stats.claims import Difference, judge

    # d = max(0, -floor(log10 δ)) + 1: δ 1.0: 1; 0.5: 2; 0.05: 3
    assert [delta_digits(d) for d in (0.5, 1.0, 0.01, 0.25, 0.05, None)] == [2, 1, 3, 2, 3, 2]
    claim = Difference(kind="difference", better="a", worse="b", delta=0.01, delta_reason="the figure's step")
    a = {1: 80.012, 2: 80.019, 3: 80.016, 4: 80.021}
    b = {s: v - 0.0262 - 0.001 * s for s, v in a.items()}
    result = judge(claim, {"a": a, "b": b})
    row = statements_table([result]).frame.iloc[0]
    diff, span, margin = row["diff"], row["95% interval"], row["margin"]
    assert re.fullmatch(r"\+0\.\d{3}", diff) and re.fullmatch(r"\[\+0\.\d{3}, \+0\.\d{3}\]", span), row
    assert re.fullmatch(r"[+-]\d\.\d{3}.*", margin), row
    assert re.fullmatch(r"[+-]\d\.\d{3}", claims_table([result]).frame.iloc[0]["margin"])


def test_the_dry_run_of_a_finished_reproduction_prices_what_is_left(tmp_path, capsys):
    """A finished reproduction's dry run printed the whole plan's cost, not what was left."""

    root = Path(__file__).resolve().parents[1]
    out = tmp_path / "ema"
    shutil.copytree(root / "reports" / "mocose-collapse-mini", out)
    args = ["reproduce", "mocose-collapse-mini", "--out", out, "--dry-run", "--data-dir", DATA]
    code, printed, _ = run_cli(args, capsys)
    assert code == 0 and "estimated time of what is left: nothing left to run" in printed, printed
    state = json.loads((out / "reproduce.json").read_text())
    del state["steps"]["report"]
    (out / "reproduce.json").write_text(json.dumps(state))
    code, printed, _ = run_cli(args, capsys)
    assert "estimated time of what is left (1 of 7 steps)" in printed, printed
    assert "counted: 0 trainings: " in printed and "; 1 report\n" in printed


def test_published_show_keeps_a_rows_title_whole_when_piped(capsys):
    """`published show` wrapped titles into 21-character pieces when piped (the table's width)."""
    from stsbench.published.registry import get_entry

    e = get_entry("simcse/table4/dropout-p")
    code, out, _ = run_cli(["published", "show", e.key], capsys)
    assert code == 0 and f"{e.key}: {e.row}" in out.splitlines(), out


BANNER = "Mini scale: a tiny BERT, three seeds a method: not the paper's setting."


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A report this package writes now (about 5 s): two methods x 3 seeds with their analyses, two claims, a
    banner, and SimCSE Figure 3, whose map the alignment section draws too."""
    import yaml

    from stsbench.reports.reproduction import load_claims

    root = tmp_path_factory.mktemp("layout")
    results = make_seed_results(root / "results", analyses=True)
    claims = [  # ESimCSE's seeds are SimCSE's + 5 on STS12, + 2.5 on STS13 (seed_results)
        {"kind": "difference", "better": "esimcse", "worse": "simcse", "figure": "STS12"},
        {"kind": "ordering", "order": ["simcse", "esimcse"], "figure": "STS13"},
    ]
    (root / "claims.yaml").write_text(yaml.safe_dump(claims, sort_keys=False), encoding="utf-8")
    out = root / "report"
    write_report(
        results,
        out,
        "layout",
        "stsbench report (test)",
        claims=load_claims(root / "claims.yaml"),
        banner=BANNER,
        figures=["simcse/figure3"],
    )
    return out


def assert_layout(root: Path) -> list[str]:
    """The banner once, first under the title; the verdicts next, one a claim; each figure shown once."""
    md = (root / "report.md").read_text(encoding="utf-8")
    blocks = md.split("\n\n")
    banner = blocks[1]
    assert banner.startswith("**Mini scale:") and md.count(banner) == 1, blocks[:3]
    found = root / "reproduction.json"  # none where the report judges nothing
    claims = (json.loads(found.read_text()).get("claims") or []) if found.is_file() else []
    said = [b for b in blocks[2:] if b.startswith("Verdict: ")]
    assert len(said) == len(claims) and blocks[2 : 2 + len(said)] == said  # first, before "Made by"
    for i, (line, claim) in enumerate(zip(said, claims, strict=True), start=1):
        assert line.startswith(f"Verdict: claim {i}, ") and f"**{claim['verdict']}" in line
        assert line.endswith("([Claims](#claims)).")
    images = re.findall(r"^!\[[^\n]*\]\((figures/[^)]+\.svg)\)$", md, flags=re.M)
    assert images and len(images) == len(set(images)), [i for i in images if images.count(i) > 1]
    html = (root / "report.html").read_text(encoding="utf-8")
    if said:
        assert '(<a href="#claims">Claims</a>)' in html
    return said


def test_a_report_says_its_scale_once_its_verdicts_first_and_shows_each_figure_once(made):
    """The mini-scale banner stood 39 times in mocose-ema-mini's report.md (75 in cpu-mini's), sweep figures were
    drawn twice (2-2.8 MB of HTML), and the verdicts came after every score table. Held on a report written here:
    the committed editions below are what an earlier writer made, and pass whatever the writer does now."""
    said = assert_layout(made)
    md = (made / "report.md").read_text(encoding="utf-8")
    assert md.split("\n\n")[1] == f"**{BANNER}**" and len(said) == 2  # a banner and two verdicts to place
    # the map both SimCSE Figure 3 and the alignment section show: drawn once, linked from the other
    assert md.count("](figures/align_uniform_dev_map.svg)") == 1 and "shown in [SimCSE Figure 3]" in md


@pytest.mark.parametrize("edition", ["cpu-mini-replication", "mocose-ema-mini", "simcse-trajectory-mini"])
def test_the_committed_editions_keep_that_layout(edition):
    assert_layout(Path(__file__).resolve().parents[1] / "reports" / edition)


def test_piped_progress_says_again_how_far_a_long_step_is(monkeypatch):
    """Off a terminal a running step printed "running" once and then nothing for the hour it trained."""
    import io

    from rich.console import Console

    from stsbench.reproduce import view

    clock = [1000.0]
    monkeypatch.setattr(view.time, "monotonic", lambda: clock[0])
    buffer = io.StringIO()
    shown = view.Display(Console(file=buffer, force_terminal=False, width=200), ["evaluate/x"], every=60)
    state = {"steps": {"evaluate/x": {"status": "running", "started": 0.0, "kind": "evaluate"}}}
    shown(state)
    clock[0] += 30
    shown(state)  # half a minute: nothing new to say
    clock[0] += 31
    shown(state)  # a minute since: said again, with how long so far
    state["steps"]["evaluate/x"].update(status="done", seconds=95.0, files={})
    shown(state)
    lines = buffer.getvalue().splitlines()
    assert [ln.split(" (")[0] for ln in lines] == ["evaluate/x: running"] * 2 + ["evaluate/x: done"], lines


def test_the_recipes_runs_file_is_written_whole(tmp_path):
    """recipe_runs.json holds the recipe's runs as they are now: a run left out (--runs) leaves the file."""
    from stsbench.recipes import load_recipe
    from stsbench.results.runs import read_recipe_runs, write_recipe_runs

    recipe = load_recipe("cpu-mini")
    write_recipe_runs(tmp_path, recipe)
    assert set(read_recipe_runs([tmp_path])) == {r.name for r in recipe.runs}
    write_recipe_runs(tmp_path, recipe.subset(runs=["simcse", "mocose"]))
    assert set(read_recipe_runs([tmp_path])) == {"simcse", "mocose"}
    # the component table's STS-B dev cells are the recipe's, next to the STS test row
    assert read_recipe_runs([tmp_path])["simcse"].published == (
        "esimcse-arxiv/table7/unsup-simcse-bert-base",
        "esimcse-arxiv/table6/unsup-simcse-bert-base",
    )


def _declare(results: Path, runs: list[dict]) -> None:
    data = {"kind": "stsbench.recipe_runs", "schema_version": 1, "recipe": "fixture", "runs": runs}
    (results / "recipe_runs.json").write_text(json.dumps(data), encoding="utf-8")


def _run(name: str, label: str, method: str, published: list[str], sweep_of=None, point=None) -> dict:
    return {
        "name": name,
        "label": label,
        "method": method,
        "sweep_of": sweep_of,
        "point": point or {},
        "published": published,
    }


def test_the_report_reads_sweeps_and_cells_from_the_recipe_not_the_configs(tmp_path):
    """The fixture's two ESimCSE runs differ in dup_rate alone: a sweep by their configs. With a recipe that
    declares no sweep there is none; the component table's published column is the recipe's cells, else none."""

    fixture = Path(__file__).parent / "fixtures" / "report_results" / "results"

    def report(runs: list[dict] | None) -> str:
        results = tmp_path / f"results-{len(list(tmp_path.iterdir()))}"
        shutil.copytree(fixture, results, ignore=shutil.ignore_patterns("recipe_runs.json"))
        if runs is not None:
            _declare(results, runs)
        out = results.parent / f"{results.name}-report"
        write_report(results, out, "fixture", "stsbench report (test)")
        return (out / "report.md").read_text(encoding="utf-8")

    inferred = report(None)  # no recipe: the sweep found from the settings
    assert "### Ablation: dup_rate (ESimCSE)" in inferred
    plain = [
        _run("simcse-tiny", "unsup-SimCSE", "simcse", ["esimcse-arxiv/table6/unsup-simcse-bert-base"]),
        _run("esimcse-tiny", "ESimCSE", "esimcse", ["esimcse-arxiv/table6/esimcse-bert-base"]),
        _run("esimcse-dup0.16-tiny", "ESimCSE at 0.16", "esimcse", []),
    ]
    declared = report(plain)  # a recipe declaring no sweep: none, whatever the configs show
    assert "### Ablation: dup_rate" not in declared
    comp = declared.split("### Ablation: ESimCSE's components")[1].split("\n### ")[0]
    assert "| 82.45 |" in comp and "| 84.85 |" in comp  # Table 6's STS-B dev figures, named by the recipe
    assert ": Table 6." in comp.split("Published:")[1].split("\n")[0]
    assert "gain over unsup-SimCSE" in comp
    bare = inferred.split("### Ablation: ESimCSE's components")[1].split("\n### ")[0]
    assert "| 82.45 |" not in bare and "Published: none" in bare  # no recipe: no paper cell guessed


def test_a_groups_name_is_its_recipes_label(tmp_path):
    """A run's label in its recipe ("unsup-SimCSE, one mask for both views") names its group of seeds."""

    from stsbench.reports import collect
    from stsbench.reports.collect import find_models
    from stsbench.reports.seeds import report_groups

    results = make_seed_results(tmp_path / "results")
    coll = collect(results)
    before = [g.name for g in report_groups(coll, find_models(coll))]
    assert "unsup-SimCSE" in before
    _declare(results, [_run("simcse", "unsup-SimCSE, one mask for both views", "simcse", [])])
    coll = collect(results)
    groups = report_groups(coll, find_models(coll))
    assert "unsup-SimCSE, one mask for both views (n=3)" in [g.label for g in groups]
    assert "ESimCSE (n=3)" in [g.label for g in groups]  # undeclared: its method's name
    shutil.rmtree(results)


def test_no_report_module_keeps_a_paper_row_or_branches_on_a_built_in_method():
    """The report reads what a run is held against from its recipe, never from a hand map by method name."""
    import ast

    import stsbench.reports as reports
    from stsbench.train.config.options import method_specs

    names = {s.name for s in method_specs()} | {s.label for s in method_specs()}
    names |= {"unsup-SimCSE", "sup-SimCSE", "word repetition only", "momentum contrast only"}
    found = []
    for path in sorted(Path(reports.__file__).parent.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert "PUBLISHED_COMPONENTS" not in text and "PUBLISHED_BY_METHOD" not in text, path.name
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Compare):
                consts = [
                    n for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                ]
                found += [f"{path.name}:{node.lineno} {c.value}" for c in consts if c.value in names]
    assert found == []


def test_the_dropout_edition_holds_fixed_0_1_beside_its_cell_without_a_sweep_nobody_declared():
    """simcse-dropout-mini's recipe declares the dropout sweep and a Fixed 0.1 run in none: the report had inferred a
    `fixed_dropout_mask` sweep from the configs; now the run stands beside its cell under its recipe's label."""
    root = Path(__file__).resolve().parents[1]
    md = (root / "reports" / "simcse-dropout-mini" / "report.md").read_text(encoding="utf-8")
    assert "fixed_dropout_mask (unsup-SimCSE)" not in md and "sweep_fixed_dropout_mask" not in md
    held = md.split("### Held against a published cell, in no sweep\n")[1].split("\n### ")[0]
    rows = [ln for ln in held.splitlines() if ln.startswith("| unsup-SimCSE")]
    assert len(rows) == 1 and rows[0].startswith("| unsup-SimCSE, one mask for both views | ")
    assert rows[0].endswith("| 45.20 | simcse/table4/dropout-p#Fixed 0.1 |")
    sweep = md.split("### Sweep over seeds: dropout rate p")[1].split("\n### ")[0]
    assert sweep.count("simcse/table4/dropout-p#p=") == 6


def test_the_readmes_set_up_lines_give_pip_and_uv_flags_they_take():
    """The README's set-up lines (a venv, pip, uv) are not run by the tests: each flag they give `pip install` or
    `uv pip install` is one its `--help` lists (uv: where it is installed beside this Python)."""
    import subprocess
    import sys

    from helpers import ROOT, fenced_blocks

    setups = [b.body for b in fenced_blocks(ROOT / "README.md") if "python3 -m venv .venv" in b.body]
    assert len(setups) == 2, setups  # the main job's and the tests'
    uv = Path(sys.executable).parent / "uv"
    helps = {"pip": [sys.executable, "-m", "pip", "install", "--help"], "uv": [str(uv), "pip", "install", "--help"]}
    checked = []
    for part in (p.strip() for body in setups for p in body.split("&&")):
        tool = "uv" if " pip install" in part and "uv pip install" in part else "pip" if "pip install" in part else None
        if tool is None or (tool == "uv" and not uv.is_file()):
            continue
        listed = subprocess.run(helps[tool], capture_output=True, text=True, check=True).stdout
        flags = re.findall(r"(?<=\s)(--[a-z][\w-]*)", part)
        assert all(f in listed for f in flags), (part, [f for f in flags if f not in listed])
        checked += flags
    assert "--config-settings" in checked, checked  # the editable install's flag was found and checked
