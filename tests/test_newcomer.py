"""What a new user's trial found misleading (issue "Reports and status that a newcomer reads right"), each fixed.

Status without a data folder: tests/test_editions.py; modified data before any step: tests/test_reproduce_changes.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import run_cli

from stsbench.progress import plural


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

    from stsbench.reports.build import code_span

    html = markdown.markdown(code_span(text))
    assert html == f"<p><code>{text}</code></p>", html


def test_a_claims_figures_print_with_the_decimals_its_delta_needs():
    """δ = 0.01 at two decimals: "diff -0.03, [-0.03, -0.02], margin +0.01" could not be checked by hand."""
    from stsbench.reports.claims import claims_table, statements_table
    from stsbench.reports.scores import delta_digits
    from stsbench.stats.claims import Difference, judge

    assert [delta_digits(d) for d in (0.5, 1.0, 0.01, 0.25, None)] == [2, 2, 3, 3, 2]
    claim = Difference(kind="difference", better="a", worse="b", delta=0.01, delta_reason="the figure's step")
    a = {1: 80.012, 2: 80.019, 3: 80.016, 4: 80.021}
    b = {s: v - 0.0262 - 0.001 * s for s, v in a.items()}
    result = judge(claim, {"a": a, "b": b})
    row = statements_table([result]).frame.iloc[0]
    diff, span, margin = row["diff"], row["95% interval"], row["margin"]
    assert re.fullmatch(r"0\.\d{3}", diff) and re.fullmatch(r"\[0\.\d{3}, 0\.\d{3}\]", span), row
    assert re.fullmatch(r"[+-]\d\.\d{3}.*", margin), row
    assert re.fullmatch(r"[+-]\d\.\d{3}", claims_table([result]).frame.iloc[0]["margin"])


def test_the_dry_run_of_a_finished_reproduction_prices_what_is_left(tmp_path, capsys):
    """A finished reproduction's dry run printed the whole plan's cost, not what was left."""
    import shutil

    from helpers import DATA

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


@pytest.mark.parametrize("edition", ["cpu-mini-replication", "mocose-ema-mini", "simcse-trajectory-mini"])
def test_a_report_says_its_scale_once_its_verdicts_first_and_shows_each_figure_once(edition):
    """The mini-scale banner stood 39 times in mocose-ema-mini's report.md (75 in cpu-mini's), sweep figures were
    drawn twice (2-2.8 MB of HTML), and the verdicts came after every score table."""
    root = Path(__file__).resolve().parents[1] / "reports" / edition
    md = (root / "report.md").read_text(encoding="utf-8")
    blocks = md.split("\n\n")
    banner = blocks[1]
    assert banner.startswith("**Mini scale:") and md.count(banner) == 1
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
