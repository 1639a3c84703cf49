"""Each checked-in edition's README carries the status line `reproduce --status --format line` prints, and no
figure of a verdict but in the blocks `python scripts/edition_status.py` writes from reproduction.json.

An edition whose steps were done by earlier code says so ("done, changed code" is a true status); a README that
says "current" where the command says otherwise fails here. Its verdicts, margins, intervals and P(best) stand in
generated blocks (regenerated here: a figure edited by hand fails); its prose names claims and verdict words, no
signed decimal and no bracketed interval; every command it prints runs from the repository root on
../shared/data. `python scripts/edition_status.py` rewrites the generated parts.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
EDITIONS = sorted(p.parent.name for p in (ROOT / "reports").glob("*/reproduce.json"))
MARKER = "<!-- status: `stsbench reproduce reports/{} --status --format line` writes the next line -->"


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_readme_carries_the_status_the_command_prints(edition, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli(["reproduce", f"reports/{edition}", "--status", "--format", "line"], capsys)
    assert code == 0 and out.strip().startswith(f"`stsbench reproduce reports/{edition} --status` ("), err
    lines = (ROOT / "reports" / edition / "README.md").read_text(encoding="utf-8").split("\n")
    marker = MARKER.format(edition)
    assert marker in lines, f"reports/{edition}/README.md has no status marker"
    carried = lines[lines.index(marker) + 1]
    assert carried == f"Status: {out.strip()}", (
        "run `python scripts/edition_status.py` and commit the READMEs"
    )


def _script():
    """scripts/edition_status.py, imported (what `python scripts/edition_status.py` runs)."""
    import sys

    if str(ROOT / "scripts") not in sys.path:
        sys.path.insert(0, str(ROOT / "scripts"))
    import edition_status

    return edition_status


SIGNED = re.compile(r"(?<![\w.])[+\-\u2212]\d+\.\d+")  # +0.37, -0.10, \u22120.10
BRACKETED = re.compile(
    r"\[\s*[+\-\u2212]?\d+(\.\d+)?\s*,\s*[+\-\u2212]?\d+(\.\d+)?\s*\]"
)  # [-0.22, +0.97], [78.2, 79.5]


def prose(text: str) -> str:
    """The README's text a person wrote: without the generated parts (the status line, every block between its
    markers), fenced and indented code, and code spans (a command's figures are not findings)."""
    script = _script()
    lines = text.split("\n")
    drop = {n for first, last in script.generated_spans(lines) for n in range(first, last + 1)}
    fence, kept = None, []
    for n, line in enumerate(lines):
        opening = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence is None and opening:
            fence = opening.group(1)
            continue
        if fence is not None:
            fence = None if line.strip().startswith(fence) else fence
            continue
        indented = line.startswith("    ") and (not kept or kept[-1] == "" or kept[-1] == "\0")
        if n in drop or (indented and not line.lstrip().startswith(("-", "*"))):
            kept.append("\0")  # a line left out, keeping the next indented line's context
            continue
        kept.append(line)
    joined = "\n".join(line for line in kept if line != "\0")
    return re.sub(r"(`+)(?:(?!\1).)+?\1", " ", joined, flags=re.S)


def figures_in_prose(text: str) -> list[str]:
    """Each signed decimal and bracketed interval of the README's prose, with the line it stands on."""
    found = []
    for line in prose(text).split("\n"):
        found += [
            f"{m.group(0)!r} in: {line.strip()}" for m in [*SIGNED.finditer(line), *BRACKETED.finditer(line)]
        ]
    return found


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_generated_block_of_the_readme_is_what_the_script_writes(edition):
    """cpu-mini-replication's README once gave claim 7 margin +0.37 where its report gave +4.61, and claims 5, 6
    and 9 words the re-judging had changed: every figure of a verdict stands in a block written from
    reproduction.json, regenerated here (`python scripts/edition_status.py --check` compares the same way)."""
    script = _script()
    folder = ROOT / "reports" / edition
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert not script.differences(folder, text), (
        "run `python scripts/edition_status.py` and commit the READMEs:\n"
        + "\n".join(script.differences(folder, text))
    )
    lines = text.split("\n")
    assert script.OLD_VERDICTS not in lines
    if (folder / "reproduction.json").is_file():  # its verdicts, the scale's legend with them
        from stsbench.stats.decide import legend

        sequential = "sequential" in json.loads((folder / "reproduction.json").read_text(encoding="utf-8"))
        block = lines[lines.index(script.VERDICTS) : lines.index(script.VERDICTS_END)]
        assert legend(sequential) in block and any(line.startswith("- claim 1 *") for line in block)
    else:
        assert script.VERDICTS not in lines


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_readme_prose_quotes_no_figure_of_a_verdict(edition):
    """Outside the generated blocks (and code) a README names claims and verdict words, never a margin, an
    interval or a P(best): no signed decimal (+0.37, -0.10) and no bracketed interval ([-0.22, +0.97])."""
    text = (ROOT / "reports" / edition / "README.md").read_text(encoding="utf-8")
    found = figures_in_prose(text)
    assert not found, "a figure outside the generated blocks:\n" + "\n".join(found)


def edit_a_margin(lines: list[str]) -> tuple[int, list[str]]:
    """The README's lines with the first margin of its verdicts block changed by hand (its first decimal), and
    the index of that line."""
    script = _script()
    start, end = lines.index(script.VERDICTS), lines.index(script.VERDICTS_END)
    at = next(i for i in range(start, end) if re.search(r"margin [+-]\d+\.\d", lines[i]))
    edited = list(lines)
    edited[at] = re.sub(
        r"margin ([+-]\d+)\.(\d)",
        lambda m: f"margin {m.group(1)}.{(int(m.group(2)) + 1) % 10}",
        lines[at],
        count=1,
    )
    assert edited[at] != lines[at]
    return at, edited


def test_a_figure_edited_inside_a_block_or_typed_in_the_prose_is_caught():
    """A copy of a README with one figure of its verdicts block changed differs from what the script writes, which
    writes the figure back; a figure typed into the prose is found by the prose check."""
    script = _script()
    folder = ROOT / "reports" / "cpu-mini-replication"
    text = (folder / "README.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    start, end = lines.index(script.VERDICTS), lines.index(script.VERDICTS_END)
    at, edited = edit_a_margin(lines)
    diff = script.differences(folder, "\n".join(edited))
    assert any(d.startswith("-") and edited[at] in d for d in diff), diff
    assert any(d.startswith("+") and lines[at] in d for d in diff), diff
    assert script.render(folder, "\n".join(edited)) == text  # the script writes the figure back
    # a block deleted by hand comes back; a closing marker lost is refused in one line
    gone = lines[:start] + lines[end + 1 :]
    assert script.render(folder, "\n".join(gone)) != "\n".join(gone)
    unclosed = lines[:end] + lines[end + 1 :]
    with pytest.raises(ValueError, match="has no"):
        script.render(folder, "\n".join(unclosed))
    # the prose check: a margin or an interval typed outside the blocks is found, one in code is not
    reading = lines.index("## Reading")
    for typed in ("claim 7 (margin +0.37)", "an interval of [-0.22, +0.97]", "[78.2, 79.5]", "\u22120.10"):
        assert figures_in_prose("\n".join([*lines[: reading + 1], typed, *lines[reading + 1 :]])), typed
    assert not figures_in_prose(
        "\n".join([*lines[: reading + 1], "`stsbench x --delta -0.5`", *lines[reading + 1 :]])
    )


def test_check_exits_1_where_a_readme_differs_and_the_script_writes_it_back(tmp_path, monkeypatch, capsys):
    """`python scripts/edition_status.py --check` compares without writing: 1 on a hand-edited figure, the diff
    on stderr, 0 once the script has written the README again (on a copy of an edition; its status line, which
    depends on where the copy lies, as the README has it)."""
    import shutil

    script = _script()
    folder = tmp_path / "reports" / "mocose-collapse-mini"
    shutil.copytree(ROOT / "reports" / folder.name, folder)
    readme = folder / "README.md"
    text = readme.read_text(encoding="utf-8")
    lines = text.split("\n")
    status = lines[lines.index(script.MARKER.format(where=f"reports/{folder.name}")) + 1]
    monkeypatch.setattr(script, "editions", lambda root=ROOT: [folder])
    monkeypatch.setattr(script, "expected", lambda edition: status)
    assert script.main(["--check"]) == 0
    at, edited = edit_a_margin(lines)
    readme.write_text("\n".join(edited), encoding="utf-8")
    capsys.readouterr()
    assert script.main(["--check"]) == 1
    out, err = capsys.readouterr()
    assert "mocose-collapse-mini: differs" in out and f"-{edited[at]}" in err.split("\n"), err
    assert readme.read_text(encoding="utf-8") != text  # --check wrote nothing
    assert script.main([]) == 0 and readme.read_text(encoding="utf-8") == text
    assert script.main(["--check"]) == 0


def printed_commands(text: str) -> list[str]:
    """The README's indented command lines (a line ending in a backslash joined with the next), as printed."""
    joined: list[str] = []
    for line in re.findall(r"^ {4}(\S.*)$", text, flags=re.M):
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1].rstrip() + " " + line.strip()
        else:
            joined.append(line.strip())
    return [line for line in joined if re.match(r"^(\w+=\S+\s+)*stsbench\s", line)]


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_readme_command_runs_as_printed_from_the_repository_root(edition, monkeypatch, capsys):
    """The remake command of the worked example printed no --data-dir, so that, from the repository root, it read
    ./data (absent) unless STSBENCH_DATA was set. Every `stsbench` command a README prints names commands and flags
    that exist, each remake command gives the edition's folder and `--data-dir ../shared/data` (the README's
    layout), and, with that data here, plans to its end (`--dry-run`: nothing missing)."""
    import shlex

    import typer
    from test_docs_examples import command_lines, command_problems

    from stsbench.cli import build_app

    readme = ROOT / "reports" / edition / "README.md"
    text = readme.read_text(encoding="utf-8")
    group = typer.main.get_command(build_app())
    problems = [
        f"{where}: {p}" for where, rest in command_lines(readme) for p in command_problems(group, rest)
    ]
    assert not problems, "\n".join(problems)
    remakes = [
        c for c in printed_commands(text) if c.startswith("stsbench reproduce ") and "--status" not in c
    ]
    assert len(remakes) == 1, remakes
    (remake,) = remakes
    words = shlex.split(remake)
    assert "--out" in words and words[words.index("--out") + 1] == f"reports/{edition}", remake
    assert "--data-dir" in words and words[words.index("--data-dir") + 1] == "../shared/data", remake
    inline = [m.replace("\n", " ") for m in re.findall(r"`(stsbench reproduce [^`]+)`", text)]
    for line in inline:  # the inline ones that reach for the data: a dry run or a remake
        if "--status" not in line and re.match(r"stsbench reproduce \S+ -", line):
            assert "--data-dir ../shared/data" in line, line
    if not (ROOT.parent / "shared" / "data" / "downstream").is_dir():
        pytest.skip("the README's ../shared/data is not here")
    monkeypatch.delenv("STSBENCH_DATA", raising=False)
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli([*words[1:], "--dry-run"], capsys)
    assert code == 0 and "missing here: nothing" in out, out + err


def test_a_bad_status_format_is_one_line(capsys):
    code, _, err = run_cli(["reproduce", "reports/mocose-ema-mini", "--status", "--format", "json"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "give table or line" in err


@pytest.mark.parametrize("spelling", ["relative", "absolute", "link"])
def test_every_edition_is_done_under_the_readmes_command_wherever_the_data_lies(
    spelling, tmp_path, monkeypatch
):
    """Each edition's reproduce.json replanned against ../shared/data, as the README's command runs it on a
    fresh clone (no run folders: no weights are checked in), has no step to run, however the folder is spelt."""
    import copy
    import json
    import os

    from helpers import DATA

    from stsbench.reproduce.plan import planned
    from stsbench.reproduce.state import classify, recorded_recipe

    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    monkeypatch.chdir(ROOT)
    data = {"relative": Path(os.path.relpath(DATA, ROOT)), "absolute": DATA.resolve(), "link": tmp_path / "d"}
    if spelling == "link":
        data["link"].symlink_to(DATA.resolve(), target_is_directory=True)
    for edition in EDITIONS:
        folder = Path("reports") / edition
        state = json.loads((folder / "reproduce.json").read_text(encoding="utf-8"))
        plan, _ = planned(recorded_recipe(state), folder, data[spelling], copy.deepcopy(state), "keep")
        stands = {s.id: classify(s, state["steps"].get(s.id)) for s in plan.steps}
        assert set(stands) == set(state["steps"]), edition
        # over steps kept from other code (changed), the report is made again: it names them
        kept = any(found == "changed" for found in stands.values())
        to_run = [i for i, found in stands.items() if found == "run" and not (kept and i == "report")]
        assert not to_run, f"{edition}: {len(to_run)} step(s) to run, e.g. {to_run[0]}"


def test_status_replans_on_the_recorded_data_folder_and_never_cries_wolf_without_one(
    tmp_path, monkeypatch, capsys
):
    """`--status` (`--status --check` now: it replans) without --data-dir said "7 to run again (its key changed:
    the corpus' content, ...)" straight after a finished run: the data was not found. It reads the folder the
    reproduction recorded (relative to itself), and where no data is found says so in one line with the flag, the
    steps left as they stand."""
    import shutil

    monkeypatch.delenv("STSBENCH_DATA", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./data here
    code, out, _ = run_cli(
        ["reproduce", str(ROOT / "reports" / "mocose-collapse-mini"), "--status", "--format", "line"], capsys
    )
    assert code == 0 and "(7 steps): 7 done and current, 6 of them carried over by stsbench reproduce --carry-changed" in out, out
    moved = tmp_path / "moved"
    shutil.copytree(
        ROOT / "reports" / "mocose-collapse-mini", moved
    )  # nothing beside it at ../../../shared/data
    code, out, _ = run_cli(["reproduce", str(moved), "--status", "--check", "--format", "line"], capsys)
    assert code == 0 and "to run again" not in out and "its key changed" not in out, out
    assert "7 done and current, 6 of them carried over" in out and "(give --data-dir DIR)." in out
    assert "; keys not checked: no SentEval data at" in out
    from helpers import DATA

    code, out, _ = run_cli(
        ["reproduce", str(moved), "--status", "--check", "--format", "line", "--data-dir", str(DATA)], capsys
    )
    assert "(7 steps): 7 done and current, 6 of them carried over by" in out and "again" not in out, out


def test_a_dry_run_without_data_dir_reads_the_recorded_folder_and_never_says_to_run_without_data(
    tmp_path, monkeypatch, capsys
):
    """`reproduce cpu-mini --out reports/cpu-mini-replication --dry-run` (no --data-dir) said "183 to run" for a
    done edition: it read ./data, absent. It reads the data folder the reproduction records, saying so in one
    line; where no data is found, a done step is "not judged", never "to run", and one line says what to give."""
    import os
    import shutil

    from helpers import DATA

    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    monkeypatch.delenv("STSBENCH_DATA", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./data here
    edition = ROOT / "reports" / "mocose-collapse-mini"
    code, out, err = run_cli(["reproduce", "mocose-collapse-mini", "--out", str(edition), "--dry-run"], capsys)
    assert code == 0 and f"data: {os.path.normpath(edition / '../../../shared/data')} (" in out, out + err
    assert f"in {edition}: 7 done\n" in out and "to run" not in out.replace("nothing left to run", ""), out
    moved = tmp_path / "moved"  # nothing beside it at ../../../shared/data
    shutil.copytree(edition, moved)
    code, out, err = run_cli(["reproduce", "mocose-collapse-mini", "--out", str(moved), "--dry-run"], capsys)
    assert code == 0 and "to run" not in out.replace("nothing left to run", ""), out + err
    assert f"in {moved}: 7 not judged (no data)" in out, out
    assert f"data not found at {Path('data').absolute()}: 7 done step(s) not judged; give --data-dir" in out, out
    assert out.count("corpus ") <= 1, out  # the corpus a training and an analysis read, listed once


def test_status_shows_a_resumed_trainings_own_time_as_the_report_does():
    """`--status` showed a resumed training's last attempt (4m18s) where report.md shows its training time (7.0
    min): it shows the log's wall time, the report's, and says the training was resumed."""
    import json

    from stsbench.progress import duration
    from stsbench.reproduce.view import own_seconds, row

    folder = ROOT / "reports" / "simcse-dropout-sequential-mini"
    state = json.loads((folder / "reproduce.json").read_text(encoding="utf-8"))
    report = (folder / "report.md").read_text(encoding="utf-8")
    for step, note in (("train/dropout.dropout-0.15/seed-2", " (resumed, 3 attempts)"), ("train/dropout.dropout-0.1/seed-3", "")):
        record = state["steps"][step]
        own = own_seconds(record, folder)
        assert own is not None and (own > record["seconds"] + 60) == bool(note), (own, record["seconds"])
        _, status, detail = row(step, record, out=folder)
        assert status == "done" and detail == f"{duration(own)}{note}", detail
        assert re.search(rf"\| {re.escape(step)} \| unsup-SimCSE \|.* \| {own / 60:.1f} \|\n", report), step
