"""The published registry against the seed papers' text, and `stsbench check` against results folders."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from helpers import MTEB, write_result
from typer.testing import CliRunner

from stsbench.cli import app
from stsbench.errors import StsbenchError
from stsbench.metrics import AVG
from stsbench.published.check import CheckFailed, check_results
from stsbench.published.registry import TASKS, Entry, get_entry, load_registry

REPO = Path(__file__).resolve().parents[1]
SEEDS = REPO.parent / "shared" / "seeds"
MTEB_KEY = "mteb/all-MiniLM-L6-v2"
ENV = {"COLUMNS": "200"}  # rich wraps at 80 columns when not on a terminal

needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason="../shared/seeds not beside the checkout")

# (key, seed file, a substring of the row's line in the seed text, {column: value or (value, as printed)}),
# transcribed by hand from the seeds; at least one row per table kind of each paper.
SPOT_CHECKS = [
    (
        "simcse/sts/unsup-simcse-bert-base",
        "004",
        "SimCSE-BERT _{base}\t66.68",
        {"STS12": 66.68, "STSBenchmark": 75.49, "SICKRelatedness": 69.92, AVG: 74.54},
    ),
    (
        "simcse/sts/sup-simcse-roberta-large",
        "004",
        "SimCSE-RoBERTa _{large}\t77.46",
        {"STS13": 87.27, "SICKRelatedness": 81.95},
    ),
    (
        "simcse/transfer/sup-sbert-base",
        "004",
        "SBERT _{base} .\t83.64",
        {"MR": 83.64, "MRPC": 76.00, AVG: 87.41},
    ),
    ("simcse/transfer/unsup-simcse-bert-base-mlm", "004", "w/ MLM\t80.74", {"SST2": 84.95, "TREC": 89.40}),
    ("simcse/table8/batch-size", "004", "STS-B\t84.6", {"64": 85.6, "512": 86.2}),
    (
        "esimcse-arxiv/table1/sts14",
        "000",
        "STS14\t0.7971",
        {"length diff <= 3": 0.7971, "length diff > 3": 0.6676},
    ),
    (
        "esimcse-arxiv/table4/esimcse-bert-large",
        "000",
        "ESimCSE-BERT $_{large}$\t84.41",
        {"STSBenchmark": 86.60},
    ),
    (
        "esimcse-arxiv/table5/esimcse-bert-large",
        "000",
        "\\clubsuit ESimCSE-BERT $_{large}$\t70.88",
        {"STS12": 73.21, "STS13": 85.37, "SICKRelatedness": 74.89, AVG: 79.31},
    ),
    (
        "esimcse-arxiv/table7/momentum-contrast",
        "000",
        "+ momentum contrast\t71.41",
        {"STS12": 71.41, "STS15": 82.99, AVG: 77.54},
    ),
    ("esimcse-arxiv/table11/queue-2.5x", "000", "$2.5 \\times batch_size$", {"STSBenchmark": 84.85}),
    (
        "esimcse-coling/table3/consert-large",
        "003",
        "ConSERTlarge ♡",
        {"STS12": 70.69, "STS15": 82.78, AVG: 76.45},
    ),
    (
        "esimcse-coling/table5/inserting-masked-prediction",
        "003",
        "+Inserting Masked Prediction",
        {"STSBenchmark": 84.18},
    ),
    ("esimcse-coling/table6/buc-len", "003", "STS-B 84.09 81.92", {"wr": 84.09, "buc_len=5": 82.66}),
    (
        "esimcse-coling/table7/esimcse-ld-gt-3",
        "003",
        "> 3 13.48",
        {"STS12": 13.48, "STS16": 34.71, AVG: 21.67},
    ),
    ("esimcse-coling/table8/simcse", "003", "SimCSE 26.39", {"Sim<q,s1>": 26.39, "Sim<q,s2>": 27.07}),
    (
        "mocose/table1/mocose-bert-base",
        "002",
        "MoCoSE 7148",
        {"STS12": (71.48, "7148"), "STSBenchmark": 78.68, AVG: 77.27},
    ),
    (
        "mocose/table1/bert-base-flow",
        "002",
        "BERT-flow 5840",
        {"STS16": (71.22, "7122"), "SICKRelatedness": 64.47},
    ),
    (
        "mocose/table2/mocose-bert-large",
        "002",
        "MoCoSE-BERT 83.71",
        {"TREC": (84.92, "8492"), "MRPC": (76.81, "7681"), AVG: 86.90},
    ),
    ("mocose/table5/token-dropout-0.1", "002", "+ Token dropout (prob=0.1)", {AVG: 41.32}),
    (
        "mocose/table7/init-quarter",
        "002",
        "init. 1/4 queue",
        {"queue=128": 75.92, "queue=512": (77.30, "7730")},
    ),
    ("mocose/table9/fgsm-epsilon", "002", "Avg. 75.61", {"eps=5e-9": 76.64, "eps=1e-8": (75.39, "7539")}),
]

# Rows whose printed Avg. is not the mean of their columns, as the papers print them.
AVG_AS_PRINTED = {
    "simcse/sts/sup-sbert-base",
    "simcse/transfer/unsup-avg-bert-embeddings",
    "mocose/table2/avg-bert-embeddings",
    "esimcse-coling/table3/mirror-bert-base",  # one-decimal source numbers
    "esimcse-coling/table3/mirror-roberta-base",
}
# Rows whose values the seed text prints out of the paper's column order.
UNORDERED_IN_SEED = {"simcse/table4/dropout-p"}  # p=0.2's value sits beside its header


def seed_lines(prefix: str) -> list[str]:
    (path,) = SEEDS.glob(f"{prefix}_*.txt")
    return path.read_text(encoding="utf-8").splitlines()


# the local transcription (../shared/seeds/<NNN>_*.txt) of each paper's version the registry cites
SEED_OF_PAPER = {"simcse": "004", "esimcse-arxiv": "000", "esimcse-coling": "003", "mocose": "002"}


def seed_of(entry: Entry) -> str | None:
    """The seed holding the entry's table; None for another version (SimCSE's final table) or MTEB."""
    return SEED_OF_PAPER.get(entry.paper.slug) if entry.version == entry.paper.version else None


def token(text: str) -> re.Pattern[str]:
    return re.compile(r"(?<![\d.])" + re.escape(text) + r"(?!\d)")


def test_registry_covers_the_papers_and_mteb() -> None:
    reg = load_registry()
    papers = {k.split("/")[0] for k in reg}
    assert papers == {"mteb", "simcse", "esimcse-arxiv", "esimcse-coling", "mocose"}
    tables = {k.rsplit("/", 1)[0] for k in reg}
    for t in ["simcse/sts", "simcse/transfer", "mocose/table1", "mocose/table2", "mocose/table9"]:
        assert t in tables
    assert {f"esimcse-arxiv/table{i}" for i in (1, 4, 5, 6, 7, 8, 9, 10, 11)} <= tables
    assert {f"esimcse-coling/table{i}" for i in (1, 3, 4, 5, 6, 7, 8, 9, 10)} <= tables
    assert get_entry(MTEB_KEY).values == MTEB
    assert get_entry(MTEB_KEY).split == "test"


def test_task_columns_use_senteval_names() -> None:
    for e in load_registry().values():
        for col in e.values:
            assert col not in {"STS-B", "SICK-R", "SICK15", "SST", "STSb", "SICK"}, e.key
            if e.kind == "scores" and re.fullmatch(
                r"STS\d\d|STS.?B.*|SICK.*|MR|CR|SUBJ|MPQA|SST.*|TREC|MRPC", col
            ):
                assert col in TASKS, (e.key, col)


@pytest.mark.parametrize(("key", "seed", "needle", "expected"), SPOT_CHECKS, ids=[s[0] for s in SPOT_CHECKS])
def test_spot_checks_by_hand(key: str, seed: str, needle: str, expected: dict) -> None:
    entry = get_entry(key)
    for col, want in expected.items():
        value, printed = want if isinstance(want, tuple) else (want, None)
        assert entry.values[col] == pytest.approx(value, abs=1e-9), (key, col)
        if printed is not None:
            assert entry.printed(col) == printed
    if not SEEDS.is_dir():
        pytest.skip("../shared/seeds not beside the checkout")
    lines = [line for line in seed_lines(seed) if needle in line]
    assert lines, f"{needle!r} not in seed {seed}"
    for col in expected:
        assert any(token(entry.printed(col)).search(line) for line in lines), (key, col, entry.printed(col))


@needs_seeds
def test_every_value_appears_in_its_seed_in_column_order() -> None:
    """Each row's values (as the seed prints them) occur in order within 6 consecutive lines of its paper."""
    checked = 0
    for e in load_registry().values():
        if seed_of(e) is None:
            continue
        lines = seed_lines(seed_of(e))
        pats = [token(e.printed(c)) for c in e.values]
        found = False
        for i in range(len(lines)):
            text, pos = "\n".join(lines[i : i + 6]), 0
            for p in pats:
                m = p.search(text, 0 if e.key in UNORDERED_IN_SEED else pos)
                if m is None:
                    break
                pos = m.end()
            else:
                found = True
                break
        assert found, f"{e.key}: {[e.printed(c) for c in e.values]} not found together in seed {seed_of(e)}"
        checked += 1
    assert checked > 150


def test_printed_as_only_loses_the_decimal_point() -> None:
    """A garbled rendering has the value's digits, except the two readings the notes mark UNCERTAIN."""
    inferred = set()
    for e in load_registry().values():
        for col, printed in e.printed_as:
            digits = re.sub(r"\D", "", e.format(e.values[col])).rstrip("0")
            if re.sub(r"\D", "", printed).rstrip("0") != digits:
                inferred.add((e.key, col))
                assert any(n.startswith("UNCERTAIN") and f"'{printed}'" in n for n in e.notes), (e.key, col)
    assert inferred == {("mocose/table3/ema-decay", "ema=0.5"), ("mocose/table6b/batch-64", AVG)}


def test_avg_columns_are_the_mean_of_their_rows() -> None:
    mismatched = set()
    for e in load_registry().values():
        others = [v for c, v in e.values.items() if c != AVG]
        if AVG in e.values and len(others) > 1:
            if abs(sum(others) / len(others) - e.values[AVG]) > 0.011:
                mismatched.add(e.key)
    assert mismatched == AVG_AS_PRINTED
    for key in AVG_AS_PRINTED:
        assert any("Avg." in n for n in get_entry(key).notes), key


def test_unknown_key_names_close_matches() -> None:
    with pytest.raises(StsbenchError, match=r"close matches: .*mteb/all-MiniLM-L6-v2"):
        get_entry("mteb/all-MiniLM-L6")
    with pytest.raises(StsbenchError, match="simcse/sts/unsup-simcse-bert-base"):
        get_entry("simcse/sts/unsup-simcse-bert")
    assert get_entry("MTEB/ALL-MINILM-L6-V2").key == MTEB_KEY


def test_published_list_and_show() -> None:
    runner = CliRunner()
    out = runner.invoke(app, ["published", "list"], env=ENV)
    assert out.exit_code == 0, out.output
    assert MTEB_KEY in out.output and "esimcse-coling/table3/esimcse-bert-base" in out.output
    assert f"({len(load_registry())} entries)" in out.output
    out = runner.invoke(app, ["published", "list", "mocose/table1"], env=ENV)
    assert "(14 entries)" in out.output and "simcse/sts" not in out.output
    out = runner.invoke(app, ["published", "show", "mocose/table1/bert-base-flow"], env=ENV)
    assert out.exit_code == 0, out.output
    assert re.search(r"STS16\s.*71\.22\s.*7122", out.output)
    out = runner.invoke(app, ["published", "show", "nope/nothing"], env=ENV)
    assert isinstance(out.exception, StsbenchError)


# --- check ---


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    for task, value in MTEB.items():
        write_result(root, task, value)
    write_result(root, "SICKRelatedness", 77.12)  # measured, no published value: shown, not compared
    return root


def edit(path: Path, delta: float) -> None:
    data = json.loads(path.read_text())
    data["reported"] = round(data["reported"] + delta, 2)
    path.write_text(json.dumps(data))


def check(*args: str):
    return CliRunner().invoke(app, ["check", *args], env=ENV)


def console_check(results: Path) -> subprocess.CompletedProcess[str]:
    """Run ``python -m stsbench check`` as CI does (through cli.main: user errors exit 2 with one line)."""
    args = [sys.executable, "-m", "stsbench", "check", "--results", str(results), "--against", MTEB_KEY]
    return subprocess.run(
        args, cwd=REPO, capture_output=True, text=True, env={**os.environ, **ENV}, timeout=120
    )


def test_check_passes_on_mteb_values(results: Path) -> None:
    out = check("--results", str(results), "--against", MTEB_KEY)
    assert out.exit_code == 0, out.output
    assert out.output.count(" OK") == 6 and "FAIL" not in out.output
    assert "not compared (no published value): SICKRelatedness" in out.output
    assert "PASS" in out.output


def test_check_tolerance_edge(results: Path) -> None:
    edit(results / "all-MiniLM-L6-v2/avg/test/STS13.json", 0.05)
    assert check_results(results, MTEB_KEY).passed
    assert not check_results(results, MTEB_KEY, tolerance=0.04).passed


def test_check_fails_when_one_value_moves_by_0_1(results: Path) -> None:
    edit(results / "all-MiniLM-L6-v2/avg/test/STS13.json", 0.1)
    out = check("--results", str(results), "--against", MTEB_KEY)
    assert out.exit_code != 0
    assert isinstance(out.exception, CheckFailed)
    assert re.search(r"STS13\s.*80\.70\s.*80\.60\s.*\+0\.10\s.*FAIL", out.output)
    assert "STS13 +0.10" in str(out.exception) and "1 of 6 tasks" in str(out.exception)
    # the console script: the table on stdout, one line on stderr, exit code 1 (the answer is no)
    proc = console_check(results)
    assert proc.returncode == 1, proc.stderr
    assert re.search(r"STS13\s.*\+0\.10\s.*FAIL", proc.stdout)
    assert proc.stderr.strip().splitlines() == [
        f"error: check failed: 1 of 6 tasks differ from {MTEB_KEY} by more than 0.05 (STS13 +0.10)"
    ]


def test_check_fails_on_missing_task(results: Path) -> None:
    (results / "all-MiniLM-L6-v2/avg/test/STS16.json").unlink()
    out = check("--results", str(results), "--against", MTEB_KEY)
    assert isinstance(out.exception, CheckFailed)
    assert re.search(r"STS16\s.*78\.99\s.*MISSING", out.output)
    assert "for STS16" in str(out.exception)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not a readable JSON file"),
        ('{"foo": 1}', "not an stsbench task result"),
        ('{"kind": "stsbench.run_manifest"}', "not an stsbench task result"),
        (
            '{"kind": "stsbench.task_result", "schema_version": 1, "task": "STS12"}',
            "malformed stsbench task result",
        ),
        ('{"kind": "stsbench.task_result", "schema_version": 99}', "schema version 99"),
    ],
)
def test_check_names_a_bad_file(results: Path, content: str, message: str) -> None:
    bad = results / "all-MiniLM-L6-v2/avg/test/notes.json"
    bad.write_text(content)
    with pytest.raises(StsbenchError, match=re.escape(str(bad)) + ".*" + message):
        check_results(results, MTEB_KEY)


def test_check_refuses_a_non_numeric_figure_and_a_task_measured_twice(results: Path) -> None:
    sts12 = results / "all-MiniLM-L6-v2/avg/test/STS12.json"
    copy = results / "copy/STS12.json"
    copy.parent.mkdir()
    copy.write_text(sts12.read_text())
    with pytest.raises(StsbenchError, match="STS12 is measured twice .*remove one"):
        check_results(results, MTEB_KEY)
    data = json.loads(copy.read_text())
    copy.write_text(json.dumps({**data, "reported": "72.37"}))
    with pytest.raises(StsbenchError, match=re.escape(str(copy)) + ": 'reported' is '72.37', not a number"):
        check_results(results, MTEB_KEY)


def test_check_malformed_file_via_console_script(results: Path) -> None:
    bad = results / "broken.json"
    bad.write_text("[1, 2")
    proc = console_check(results)
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"error: {bad}: not a readable JSON file")


def test_check_refuses_several_runs_unless_filtered(results: Path) -> None:
    write_result(results, "STS12", 60.0, model="other-model")
    write_result(results, "STS12", 72.30, mode="fasttest")
    with pytest.raises(StsbenchError, match=r"3 runs .*other-model/avg/test.*--model/--pooler/--mode"):
        check_results(results, MTEB_KEY)
    assert check_results(results, MTEB_KEY, model="all-MiniLM-L6-v2", mode="test").passed
    only_other = check_results(results, MTEB_KEY, model="other-model")
    assert not only_other.passed and only_other.rows[0].delta == pytest.approx(-12.37)
    with pytest.raises(StsbenchError, match="match the filters"):
        check_results(results, MTEB_KEY, model="typo")


def test_check_refuses_mismatched_split_and_non_score_rows(results: Path) -> None:
    with pytest.raises(StsbenchError, match="dev-split numbers .* test mode"):
        check_results(results, "esimcse-arxiv/table4/esimcse-bert-base")
    with pytest.raises(StsbenchError, match="analysis table"):
        check_results(results, "esimcse-coling/table7/simcse-ld-gt-3")
    with pytest.raises(StsbenchError, match="no SentEval task columns"):
        check_results(results, "mocose/table3/ema-decay")
    with pytest.raises(StsbenchError, match="unknown published key 'mteb/minilm'"):
        check_results(results, "mteb/minilm")
    with pytest.raises(StsbenchError, match="does not exist"):
        check_results(results / "nowhere", MTEB_KEY)


def test_check_dev_results_against_a_dev_row(tmp_path: Path) -> None:
    write_result(tmp_path, "STSBenchmark", 84.85, model="esimcse", pooler="cls_before_pooler", mode="dev")
    comparison = check_results(tmp_path, "esimcse-arxiv/table4/esimcse-bert-base")
    assert comparison.passed and comparison.run == ("esimcse", "cls_before_pooler", "dev")


def test_mocose_rows_are_marked_selected_on_the_test_sets(results: Path) -> None:
    # official MoCoSE kept the checkpoint with the best mean of the seven STS test sets (mocose_tools.py:167-173)
    registry = load_registry()
    marked = {k for k, e in registry.items() if e.selection == "test-sets"}
    assert {
        "mocose/table1/mocose-bert-base",
        "mocose/table2/mocose-bert-large",
        "mocose/table9/fgsm-epsilon",
    } <= marked
    assert "mocose/table1/simcse-bert-base" not in marked  # SimCSE's own row: not selected by MoCoSE's code
    assert all(k.startswith("mocose/") for k in marked)
    entry = get_entry("mocose/table1/mocose-bert-base")
    assert entry.selection_note == "selected on the test sets by the official code"
    shown = CliRunner().invoke(app, ["published", "show", entry.key], env=ENV)
    assert "model selection: selected on the test sets by the official code" in shown.output
    for sts in ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"):
        write_result(results, sts, 70.0, model="mocose-run")
    out = check(
        "--results", str(results), "--against", entry.key, "--model", "mocose-run", "--tolerance", "20"
    )
    assert "mocose/table1/mocose-bert-base was selected on the test sets by the official code" in out.output
    plain = check("--results", str(results), "--against", MTEB_KEY)
    assert "selected on the test sets" not in plain.output


def _one_table(**row: object) -> dict:
    return {
        "paper": {"id": "p", "title": "t", "citation": "c", "source": "s"},
        "tables": [{"id": "t1", "table": "Table 1", "metric": "m", "rows": [{"id": "r", "row": "R", **row}]}],
    }


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # a misspelt key was ignored: the row's selection mark silently lost
        (lambda d: d["tables"][0]["rows"][0].update(selectoin="test-sets"),
         "p.yaml table 't1' row 'r': unknown row key 'selectoin' (did you mean 'selection'?)"),
        (lambda d: d["tables"][0].update(decimal=1),
         "p.yaml table 't1': unknown table key 'decimal' (did you mean 'decimals'?)"),
        (lambda d: d["paper"].update(doi="10.1/x"), "p.yaml paper: unknown paper key 'doi'; a paper holds id, title"),
        (lambda d: d.update(extra=1), "p.yaml: unknown file key 'extra'"),
        # bad values: a traceback from int() before
        (lambda d: d["tables"][0].update(decimals="two"), "p.yaml table 't1': 'decimals' must be an integer"),
        (lambda d: d["paper"].update(year="2022a"), "p.yaml paper: 'year' must be an integer"),
        (lambda d: d["tables"][0]["rows"][0].update(values=[1.0]), "row 'r': values must be numbers"),
        (lambda d: d["tables"][0].update(rows={"id": "r"}), "'rows' must be a list of rows"),
        # rules between keys: a row's printed_as renders its values; an assumed average says what it averages
        (lambda d: d["tables"][0]["rows"][0].update(printed_as={"STS13": "7122"}),
         "row 'r': printed_as names columns not in values: STS13"),
        (lambda d: d["tables"][0]["rows"][0].update(avg_of_assumed=True),
         "p.yaml table 't1': row 'r': avg_of_assumed: true needs avg_of (the row's or its table's)"),
        # ids as YAML reads them unquoted: `id: off` became the row t1/False
        (lambda d: d["tables"][0]["rows"][0].update(id=False),
         "p.yaml table 't1' row 1: id False was read as a boolean (YAML reads unquoted yes/no/on/off/true/false so); quote it"),
        (lambda d: d["tables"][0].update(id=3), "p.yaml table 1: id 3 was read as a number, not text; quote it"),
        (lambda d: d["paper"].update(id=True), "p.yaml paper: id True was read as a boolean"),
        # how many runs a figure is: a mean of runs or the best of them, on one level never both
        (lambda d: d["tables"][0].update(runs=5, best_of=3),
         "p.yaml table 't1': runs: 5 and best_of: 3 exclude each other (a figure is the mean of k runs or the best of K)"),
        (lambda d: d["tables"][0]["rows"][0].update(runs=1, best_of=10),
         "p.yaml table 't1' row 'r': runs: 1 and best_of: 10 exclude each other"),
        (lambda d: d["tables"][0]["rows"][0].update(runs=0), "p.yaml table 't1' row 'r': 'runs' must be at least 1, found 0"),
        (lambda d: d["tables"][0].update(best_of=1), "p.yaml table 't1': 'best_of' must be at least 2, found 1"),
        (lambda d: d["tables"][0].update(runs=True), "p.yaml table 't1': 'runs' must be an integer, found True"),
    ],
)  # fmt: skip
def test_a_published_file_with_an_unknown_key_or_a_bad_value_is_refused_naming_it(edit, message) -> None:
    from stsbench.published.registry import RegistryError, parse_registry_file

    data = _one_table(values={"STS12": 1.0})
    assert [e.key for e in parse_registry_file(data, "p.yaml")] == ["p/t1/r"]
    edit(data)
    with pytest.raises(RegistryError) as caught:
        parse_registry_file(data, "p.yaml")
    assert message in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("paper: {id: p\n", "published registry bad.yaml: not valid YAML at line 2"),
        ("paper: {id: p, title: t, citation: c, source: s}\ntables: []\nsource: x\n", "unknown file key 'source'"),
    ],
)
def test_a_broken_published_file_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, text, message) -> None:
    """Every command that reads the registry says which file is broken, in one line."""
    from helpers import run_cli

    from stsbench.published import registry

    shipped = resources.files("stsbench.published")
    for f in shipped.iterdir():
        if f.name.endswith(".yaml"):
            (tmp_path / f.name).write_text(f.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "bad.yaml").write_text(text, encoding="utf-8")
    monkeypatch.setattr(registry.resources, "files", lambda package: tmp_path)
    registry.load_registry.cache_clear()
    try:
        for args in (["published", "list"], ["check", "--results", tmp_path, "--against", MTEB_KEY]):
            code, _, err = run_cli(args, capsys)
            assert code == 2 and len(err.strip().splitlines()) == 1 and message in err, err
    finally:
        registry.load_registry.cache_clear()


def test_runs_and_best_of_load_and_a_row_without_either_takes_its_tables() -> None:
    """``runs``/``best_of`` on a table and its rows; a row giving either key gives the whole answer."""
    from stsbench.published.registry import parse_registry_file

    def row(rid: str, **keys: object) -> dict:
        return {"id": rid, "row": rid, "values": {"STS12": 1.0}, **keys}

    data = _one_table(values={"STS12": 1.0})
    assert [(e.runs, e.best_of) for e in parse_registry_file(data, "p.yaml")] == [(1, None)]  # the default
    data["tables"] = [
        {"id": "mean", "table": "Table 1", "metric": "m", "runs": 5,
         "rows": [row("a"), row("b", best_of=3), row("c", runs=2)]},
        {"id": "best", "table": "Table 2", "metric": "m", "best_of": 10,
         "rows": [row("a"), row("b", runs=1), row("c", best_of=None)]},
    ]  # fmt: skip
    got = {e.key: (e.runs, e.best_of) for e in parse_registry_file(data, "p.yaml")}
    assert got == {
        "p/mean/a": (5, None), "p/mean/b": (1, 3), "p/mean/c": (2, None),
        "p/best/a": (1, 10), "p/best/b": (1, None), "p/best/c": (1, None),
    }  # fmt: skip


# The tables whose paper says how many runs a figure is: (paper, table) -> (runs, best_of, the paper's words, which
# the table's notes quote). Every other shipped row keeps the default (runs 1, no best_of): SimCSE's slides, MoCoSE
# (Table 1's "our best model" gives no count) and MTEB say nothing countable.
_ESIMCSE_TRAINING = (
    "we evaluate the model every 125 training steps on the development set of STS-B and keep the best checkpoint "
    "for the final evaluation on test sets"
)
_ARXIV_BASELINES = "we download the officially published model checkpoints"
_ARXIV_ABLATIONS = (
    "We only change one hyperparameter at a time. All results use our ESimCSE-BERT_{base} model"
)
_COLING_BASELINES = "results from official published model by (Gao et al., 2021)"
_COLING_ABLATIONS = (
    "All results are compared on BERTbase scale models and are evaluated on the development set of STS-B unless "
    "otherwise specified"
)
RUN_COUNTS: dict[tuple[str, str], tuple[int, int | None, tuple[str, ...]]] = {
    ("esimcse-arxiv", "table1"): (1, None, ("with the unsup-SimCSE-BERT_{base} model published by (Gao et al., 2021)",)),
    **{("esimcse-arxiv", t): (1, None, (_ESIMCSE_TRAINING, _ARXIV_BASELINES)) for t in ("table4", "table5", "table6", "table7")},
    **{("esimcse-arxiv", f"table{i}"): (1, None, (_ARXIV_ABLATIONS, "keep the best checkpoint for the final evaluation")) for i in range(8, 12)},
    ("esimcse-coling", "table1"): (1, None, ("with the SimCSE-BERTbase model published by (Gao et al., 2021)",)),
    **{("esimcse-coling", t): (1, None, (_ESIMCSE_TRAINING, _COLING_BASELINES)) for t in ("table3", "table4")},
    **{("esimcse-coling", t): (1, None, (_COLING_ABLATIONS, "keep the best checkpoint for the final evaluation")) for t in ("table5", "table6", "table9", "table10")},
    ("esimcse-coling", "table7"): (1, None, ("the SimCSE-BERTbase model published by (Gao et al., 2021)", "keep the best checkpoint")),
}  # fmt: skip


def _table_of(entry: Entry) -> tuple[str, str]:
    parts = entry.key.split("/")
    return entry.paper.slug, parts[1] if len(parts) == 3 else ""


def test_each_table_whose_paper_counts_its_runs_carries_the_count_and_quotes_it() -> None:
    import yaml

    shipped = resources.files("stsbench.published")
    given = {
        (data["paper"]["id"], t["id"]): t
        for f in shipped.iterdir()
        if f.name.endswith(".yaml") and f.name != "figures.yaml"
        for data in [yaml.safe_load(f.read_text(encoding="utf-8"))]
        for t in data["tables"]
    }
    for table, (runs, best_of, quotes) in RUN_COUNTS.items():
        t = given[table]  # set on the table, not left to the default
        said = {k: t[k] for k in ("runs", "best_of") if k in t}
        assert said == ({"runs": runs} if best_of is None else {"best_of": best_of}), table
        for quote in quotes:
            assert any(quote in note for note in t["notes"]), (table, quote)
    for e in load_registry().values():
        runs, best_of, _ = RUN_COUNTS.get(_table_of(e), (1, None, ()))
        assert (e.runs, e.best_of) == (runs, best_of), e.key


@needs_seeds
def test_the_run_counts_quote_the_papers_words() -> None:
    def plain(text: str) -> str:  # the seeds' line breaks, hyphenation and curly apostrophes undone
        return re.sub(r"\s+", " ", re.sub(r"-\n", "", text).replace("’", "'"))

    for (paper, table), (_, _, quotes) in RUN_COUNTS.items():
        text = plain("\n".join(seed_lines(SEED_OF_PAPER[paper])))
        for quote in quotes:
            assert plain(quote) in text, (paper, table, quote)


def test_registry_refuses_an_unknown_selection() -> None:
    from stsbench.published.registry import parse_registry_file

    data = {
        "paper": {"id": "p", "title": "t", "citation": "c", "source": "s"},
        "tables": [{"id": "t1", "table": "Table 1", "metric": "m", "selection": "dev-sets", "rows": []}],
    }
    # a table's, even with no row to mark yet
    with pytest.raises(ValueError, match="table 't1': selection must be one of test-sets, found 'dev-sets'"):
        parse_registry_file(data, "p.yaml")
    data["tables"][0]["selection"] = "test-sets"
    data["tables"][0]["rows"] = [{"id": "r", "row": "R", "values": {"STS12": 1.0}, "selection": "dev-sets"}]
    with pytest.raises(ValueError, match="p.yaml table 't1' row 'r': selection must be one of test-sets"):
        parse_registry_file(data, "p.yaml")


def test_every_row_cites_a_publication_and_no_local_file() -> None:
    """Paper, venue or arXiv id, year, version and table on every row; no ../shared path."""
    registry = load_registry()
    for e in registry.values():
        p = e.paper
        assert p.year and (p.venue or p.arxiv) and e.version and e.table and e.source, e.key
        assert p.arxiv is None or re.fullmatch(r"\d{4}\.\d{5}", p.arxiv), e.key
        for text in (p.citation, p.source, e.source, e.version, *e.notes):
            assert "../shared" not in text and "seeds/" not in text, (e.key, text)
        assert e.cite.startswith(p.citation) and e.version in e.cite and e.table in e.cite
    for f in resources.files("stsbench.published").iterdir():
        if f.name.endswith(".yaml"):
            assert "../shared" not in f.read_text(encoding="utf-8"), f.name


def test_simcse_rows_name_their_version_and_the_final_table_is_the_known_one() -> None:
    """The slides' first-preprint rows and the final EMNLP 2021 Table 5 stand side by side."""
    first = get_entry("simcse/sts/unsup-simcse-bert-base")
    final = get_entry("simcse/emnlp-table5/unsup-simcse-bert-base")
    assert first.version.startswith("arXiv:2104.08821v1") and first.values["Avg."] == 74.54
    assert final.version.startswith("EMNLP 2021") and final.table == "Table 5"
    assert (
        final.values == get_entry("esimcse-arxiv/table5/unsup-simcse-bert-base").values
    )  # quoted by ESimCSE
    assert get_entry("simcse/emnlp-table5/sup-simcse-bert-base").values["Avg."] == 81.57


def _own_file(path: Path, values: dict[str, float]) -> Path:
    """A published file of one's own in the registry's schema: one paper, one table, one row."""
    import yaml

    data = {
        "paper": {"id": "mine", "title": "My numbers", "citation": "Me (2026)", "source": "my lab notebook"},
        "tables": [
            {
                "id": "t1",
                "table": "Table 1",
                "metric": "Spearman x100, test sets",
                "split": "test",
                "rows": [{"id": "minilm", "row": "all-MiniLM-L6-v2", "values": values}],
            }
        ],
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_an_unquoted_yaml_boolean_id_is_refused_on_the_command_line(results: Path, tmp_path: Path, capsys) -> None:
    """A row written `id: off` in one's own file: one line saying to quote it, never a row `t1/False`."""
    from helpers import run_cli

    own = _own_file(tmp_path / "good.yaml", dict(MTEB))
    own.write_text(own.read_text(encoding="utf-8").replace("id: minilm", "id: off"), encoding="utf-8")
    code, _, err = run_cli(["check", "--results", results, "--against", f"{own}#t1/off"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "id False was read as a boolean" in err and "quote it" in err and "t1/False" not in err
    own.write_text(own.read_text(encoding="utf-8").replace("id: off", "id: 'off'"), encoding="utf-8")
    code, out, err = run_cli(["check", "--results", results, "--against", f"{own}#t1/off"], capsys)
    assert code == 0 and "good/t1/off" not in err, err


def test_check_against_a_published_file_of_ones_own(results: Path, tmp_path: Path, capsys) -> None:
    """FILE.yaml#TABLE/ROW: passes, fails with exit 1, and a bad file or row is one line, exit 2."""
    from helpers import run_cli

    own = _own_file(tmp_path / "mine.yaml", dict(MTEB))
    for key in (f"{own}#t1/minilm", str(own), f"{own}#T1/MiniLM"):  # a one-row file needs no row
        code, out, err = run_cli(["check", "--results", results, "--against", key], capsys)
        assert code == 0 and "PASS" in out, err
        assert f"{own}#t1/minilm" in out  # the row is named by its file
    # the file's figure disagrees: a negative answer
    _own_file(own, {**MTEB, "STS12": MTEB["STS12"] + 1})
    code, out, err = run_cli(["check", "--results", results, "--against", f"{own}#t1/minilm"], capsys)
    assert code == 1 and len(err.strip().splitlines()) == 1 and "STS12" in err, err
    # what cannot be read: one line each, exit 2
    (tmp_path / "typo.yaml").write_text(
        own.read_text().replace("    values:", "    valeus:"), encoding="utf-8"
    )
    (tmp_path / "broken.yml").write_text("paper: {id: p\n", encoding="utf-8")
    for key, words in (
        (f"{tmp_path / 'typo.yaml'}#t1/minilm", "unknown row key 'valeus' (did you mean 'values'?)"),
        (f"{tmp_path / 'broken.yml'}#t1/minilm", "not valid YAML at line 2"),
        (f"{tmp_path / 'gone.yaml'}#t1/minilm", "no such file"),
        (f"{own}#t1/minilml", "has no row 't1/minilml'; close matches: t1/minilm"),
    ):
        code, _, err = run_cli(["check", "--results", results, "--against", key], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1 and words in err and "Traceback" not in err, err


def test_a_published_file_feeds_the_report_as_the_registry_does(results: Path, tmp_path: Path) -> None:
    from stsbench.published.registry import get_entry, load_published_file

    own = _own_file(tmp_path / "mine.yaml", dict(MTEB))
    (entry,) = load_published_file(str(own)).values()
    assert entry.key == f"{own}#t1/minilm" and get_entry(entry.key) == entry  # what a report looks up again
    assert entry.task_values == MTEB and entry.split == "test" and entry.cite == "Me (2026); version not stated; Table 1"


def test_report_against_a_published_file_of_ones_own(results: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    from helpers import run_cli

    monkeypatch.chdir(tmp_path)
    _own_file(tmp_path / "mine.yaml", {**MTEB, "STS12": 73.5})
    args = ["report", "--results", results, "--out", "rep", "--against", "all-MiniLM-L6-v2=mine.yaml#t1/minilm"]
    code, _, err = run_cli(args, capsys)
    assert code == 0, err
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "### all-MiniLM-L6-v2 vs mine.yaml#t1/minilm" in md
    assert "| STS12 | 72.37 (1) | 73.50 | -1.1 |" in md  # the file's figure, beside the measured one
    state = json.loads((tmp_path / "rep" / "reproduction.json").read_text(encoding="utf-8"))
    assert "mine.yaml#t1/minilm" in json.dumps(state)
