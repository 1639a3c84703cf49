"""Under torchrun only rank 0 probes ``train --output``; a single process still probes it.

The probe (:func:`stsbench.files.check_writable_dir`) creates and removes a ``.stsbench-write-check.*`` file in
the nearest existing folder. Under NCCL nothing orders the processes, so a later rank's probe file could sit in
the output folder rank 0 has just created while rank 0 lists it ("--output ... is not empty").
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import run_cli


@pytest.fixture
def probes(monkeypatch, tmp_path) -> list[str]:
    """The folders ``train`` probes (the real probe runs); ``train`` itself is replaced by a no-op."""
    import stsbench.commands.train as command
    import stsbench.train.loop as loop
    from stsbench.files import check_writable_dir

    seen: list[str] = []

    def recording(path, what):
        seen.append(what)
        return check_writable_dir(path, what)

    def fake_train(cfg, *args, **kw):
        return loop.TrainResult(Path(cfg.output), 0, None, None, 0.0, [])

    monkeypatch.setattr(command, "check_writable_dir", recording)
    monkeypatch.setattr(loop, "train", fake_train)
    for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    return seen


def _train(tmp_path: Path, capsys) -> tuple[int, str]:
    args = ["train", "--method", "simcse", "-m", "m", "--train-file", "t.txt", "-o", tmp_path / "out", "-q"]
    code, _, err = run_cli(args, capsys)
    return code, err


@pytest.mark.parametrize(
    "env", [{}, {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "2"}], ids=["single", "rank0"]
)
def test_main_process_probes_output(env, probes, tmp_path, capsys, monkeypatch):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, err = _train(tmp_path, capsys)
    assert code == 0, err
    assert probes == ["--output"]


def test_other_ranks_do_not_probe_output(probes, tmp_path, capsys, monkeypatch):
    for name, value in {"RANK": "1", "LOCAL_RANK": "1", "WORLD_SIZE": "2"}.items():
        monkeypatch.setenv(name, value)
    code, err = _train(tmp_path, capsys)
    assert code == 0, err
    assert probes == []
    assert list(tmp_path.iterdir()) == []  # nothing written next to the output folder either


def test_a_bad_output_is_still_refused_by_a_single_process(probes, tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x\n")
    args = ["train", "--method", "simcse", "-m", "m", "--train-file", "t.txt", "-o", afile, "-q"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and err.strip().startswith(f"error: --output {afile} is a file"), err
    assert probes == ["--output"]
