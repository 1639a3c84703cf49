"""``--device`` that torch does not know or cannot use here: one line, exit 2, before a model loads."""

from __future__ import annotations

import pytest
import torch
from helpers import run_cli

from stsbench.encoders.hf import check_device, pick_device
from stsbench.errors import StsbenchError

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")


def test_known_devices_pass_and_unknown_ones_are_refused():
    assert check_device("cpu") == "cpu" and pick_device("cpu") == "cpu"
    for bad in ("tpu", "gpu", "cuda:x"):
        with pytest.raises(StsbenchError, match=f"unknown device '{bad}'"):
            check_device(bad)


@no_cuda
def test_cuda_without_cuda_is_one_line():
    with pytest.raises(StsbenchError, match="cuda is not available here"):
        pick_device("cuda:0")


@pytest.mark.cuda
def test_a_gpu_index_past_the_visible_ones_is_refused():
    with pytest.raises(StsbenchError, match="there is no such GPU"):
        check_device(f"cuda:{torch.cuda.device_count()}")


@no_cuda
@pytest.mark.parametrize("command", [["run", "--tasks", "STS12"], ["length-bias"]])
def test_commands_refuse_cuda_here_without_a_traceback(command, tiny_bert, data_dir, tmp_path, capsys):
    args = [*command, "--model", tiny_bert, "--pooler", "avg", "--device", "cuda", "--cache-dir", tmp_path / "cache"]
    code, _, err = run_cli([*args, "--data-dir", data_dir, "-o", tmp_path / "out"], capsys)
    assert code == 2 and err.strip().splitlines() == [
        "error: --device cuda: cuda is not available here (this torch is a CPU-only build); use --device cpu"
    ]
    assert not list((tmp_path / "out").rglob("*.json"))
