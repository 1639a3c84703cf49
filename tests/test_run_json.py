"""``stsbench run --format json``: one shape whatever the task mix (#27, acceptance 4)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from helpers import run_cli

from stsbench.commands.run import SCORES_KIND, SCORES_VERSION
from stsbench.tasks.names import task_names

KEYS = {
    "kind", "schema_version", "model", "prompt", "prompt_name", "mode", "pooler", "scores", "intervals",
    "averages", "average_intervals", "skipped", "modified_data",
}  # fmt: skip


@pytest.fixture(scope="module")
def small_data(tmp_path_factory, data_dir) -> Path:
    """Every SentEval file cut to its first 120 lines: each task still loads, and 14 tasks score in seconds."""
    root = tmp_path_factory.mktemp("small") / "data"
    for f in (data_dir / "downstream").rglob("*"):
        if f.is_file():
            dst = root / f.relative_to(data_dir)
            dst.parent.mkdir(parents=True, exist_ok=True)
            with f.open("rb") as fh:
                dst.write_bytes(b"".join(itertools.islice(fh, 120)))
    return root


def test_sts_transfer_and_full_print_the_same_keys(tiny_bert, small_data, tmp_path, capsys, one_thread):
    printed = {}
    for tasks in ("sts", "transfer", "full"):
        args = ["run", "--model", tiny_bert, "--pooler", "avg", "--tasks", tasks, "--mode", "fasttest"]
        args += ["--data-dir", small_data, "-o", tmp_path / "o", "--cache-dir", tmp_path / "c", "-q"]
        code, out, err = run_cli(
            [*args, "--bootstrap", "20", "--allow-modified-data", "--format", "json"], capsys
        )
        assert code == 0, err
        printed[tasks] = json.loads(out)
    for tasks, got in printed.items():
        assert set(got) == KEYS, tasks
        assert (got["kind"], got["schema_version"]) == (SCORES_KIND, SCORES_VERSION)
        assert list(got["scores"]) == task_names(tasks)  # tasks only: the averages have their own key
        assert set(got["intervals"]) == set(got["scores"])
        assert got["prompt"] is None and got["skipped"] == []
        assert set(got["modified_data"]) == set(got["scores"])  # every file was cut
    assert set(printed["sts"]["averages"]) == set(printed["sts"]["average_intervals"]) == {"STS"}
    assert (
        set(printed["transfer"]["averages"]) == {"Transfer"}
        and printed["transfer"]["average_intervals"] == {}
    )
    assert set(printed["full"]["averages"]) == {"STS", "Transfer"}
    # a full run is its two halves: the same figures and averages
    assert printed["full"]["scores"] == {**printed["sts"]["scores"], **printed["transfer"]["scores"]}
    assert printed["full"]["averages"] == {**printed["sts"]["averages"], **printed["transfer"]["averages"]}
