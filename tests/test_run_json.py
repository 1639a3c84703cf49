"""``stsbench run --format json``: one shape whatever the task mix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import run_cli

from stsbench.commands.run import SCORES_KIND, SCORES_VERSION
from stsbench.tasks.registry import task_names

KEYS = {
    "kind", "schema_version", "model", "prompt", "prompt_name", "mode", "pooler", "scores", "intervals",
    "averages", "average_intervals", "skipped", "modified_data",
}  # fmt: skip


@pytest.fixture(scope="module")
def small_data(tmp_path_factory, mock_data) -> Path:
    """A copy of the mock SentEval folder: every task loads, 14 tasks score in seconds, and (a copy) no file is
    canonical data."""
    root = tmp_path_factory.mktemp("small") / "data"
    shutil.copytree(mock_data / "downstream", root / "downstream")
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
        assert set(got["modified_data"]) == set(got["scores"])  # no file is canonical
    assert set(printed["sts"]["averages"]) == set(printed["sts"]["average_intervals"]) == {"STS"}
    assert (
        set(printed["transfer"]["averages"]) == {"Transfer"}
        and printed["transfer"]["average_intervals"] == {}
    )
    assert set(printed["full"]["averages"]) == {"STS", "Transfer"}
    # a full run is its two halves: the same figures and averages
    assert printed["full"]["scores"] == {**printed["sts"]["scores"], **printed["transfer"]["scores"]}
    assert printed["full"]["averages"] == {**printed["sts"]["averages"], **printed["transfer"]["averages"]}
