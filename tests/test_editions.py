"""Each checked-in edition's README carries the status line `reproduce --status --format line` prints.

An edition whose steps were done by earlier code says so ("done, changed code" is a true status); a README that
says "current" where the command says otherwise fails here. `python scripts/edition_status.py` rewrites them.
"""

from __future__ import annotations

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


@pytest.mark.parametrize("edition", EDITIONS)
def test_the_readme_quotes_its_verdicts_from_reproduction_json(edition):
    """cpu-mini-replication's README once gave claim 7 margin +0.37 where its report gave +4.61: the line under
    the verdicts marker is generated from reproduction.json, as the status line is from --status."""
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    from edition_status import VERDICTS, verdicts

    said = verdicts(ROOT / "reports" / edition)
    lines = (ROOT / "reports" / edition / "README.md").read_text(encoding="utf-8").split("\n")
    if said is None:
        assert VERDICTS not in lines
        return
    assert VERDICTS in lines and lines[lines.index(VERDICTS) + 1] == said, "run `python scripts/edition_status.py`"


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

    from stsbench.reproduce.state import classify, planned, recorded_recipe

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
        to_run = [i for i, found in stands.items() if found == "run"]
        assert not to_run, f"{edition}: {len(to_run)} step(s) to run, e.g. {to_run[0]}"


def test_status_replans_on_the_recorded_data_folder_and_never_cries_wolf_without_one(
    tmp_path, monkeypatch, capsys
):
    """`--status` without --data-dir said "7 to run again (its key changed: the corpus' content, ...)" straight
    after a finished run: the data was not found. It reads the folder the reproduction recorded (relative to
    itself), and where no data is found says so in one line with the flag, the steps left as they stand."""
    import shutil

    monkeypatch.delenv("STSBENCH_DATA", raising=False)
    monkeypatch.chdir(tmp_path)  # no ./data here
    code, out, _ = run_cli(
        ["reproduce", str(ROOT / "reports" / "mocose-collapse-mini"), "--status", "--format", "line"], capsys
    )
    assert code == 0 and out.strip().endswith("(7 steps): 7 done and current."), out
    moved = tmp_path / "moved"
    shutil.copytree(
        ROOT / "reports" / "mocose-collapse-mini", moved
    )  # nothing beside it at ../../../shared/data
    code, out, _ = run_cli(["reproduce", str(moved), "--status", "--format", "line"], capsys)
    assert code == 0 and "to run again" not in out and "its key changed" not in out, out
    assert (
        "7 done and current; keys not checked: no SentEval data at" in out and "(give --data-dir DIR)." in out
    )
    from helpers import DATA

    code, out, _ = run_cli(
        ["reproduce", str(moved), "--status", "--format", "line", "--data-dir", str(DATA)], capsys
    )
    assert out.strip().endswith("(7 steps): 7 done and current."), out
