"""Files stsbench writes get the mode the umask gives, as a plain ``open`` would.

Atomic writes go through ``mkstemp``, whose file is 0600: results, sidecars, reports and cache shards were
unreadable to colleagues and web servers on a shared machine while checkpoints were 0644.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from helpers import run_cli

from stsbench.files import atomic_write_json, atomic_write_npz, current_umask


@pytest.fixture(params=[0o022, 0o077, 0o002], ids=lambda m: f"umask-{m:03o}")
def umask(request):
    before = os.umask(request.param)
    yield request.param
    os.umask(before)


def file_modes(folder: Path) -> dict[str, int]:
    return {
        str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode) for p in folder.rglob("*") if p.is_file()
    }


def test_atomic_writes_follow_the_umask(umask, tmp_path):
    import numpy as np

    atomic_write_json(tmp_path / "a.json", {"x": 1})
    atomic_write_npz(tmp_path / "a.npz", {"x": np.zeros(2)})
    assert current_umask() == umask  # reading it leaves it as it was
    assert file_modes(tmp_path) == {"a.json": 0o666 & ~umask, "a.npz": 0o666 & ~umask}


def test_run_and_report_outputs_follow_the_umask(umask, tiny_bert, mock_data, tmp_path, capsys, one_thread):
    out, cache = tmp_path / "results", tmp_path / "cache"
    common = ["--model", tiny_bert, "--pooler", "avg", "--cache-dir", cache, "--data-dir", mock_data]
    code, _, err = run_cli(["run", *common, "--tasks", "STS16,SICKRelatedness", "-o", out, "-q"], capsys)
    assert code == 0, err
    code, _, err = run_cli(["report", "--results", out, "--out", tmp_path / "report"], capsys)
    assert code == 0, err
    written = {
        **{f"results/{k}": v for k, v in file_modes(out).items()},
        **{f"cache/{k}": v for k, v in file_modes(cache).items()},
        **{f"report/{k}": v for k, v in file_modes(tmp_path / "report").items()},
    }
    kinds = {Path(name).suffix for name in written}
    assert {".json", ".npz", ".md", ".html"} <= kinds, sorted(written)  # figures: atomic_write_bytes above
    assert any(name.startswith("cache/") for name in written)
    wrong = {name: f"{mode:03o}" for name, mode in written.items() if mode != 0o666 & ~umask}
    assert not wrong, f"under umask {umask:03o}"
