"""``--cuda-graph``: refused with one line where it cannot run; on a GPU, the same steps as eager ones."""

from __future__ import annotations

import pytest
from helpers import eager_and_graphed_losses, graph_config

from stsbench.errors import StsbenchError
from stsbench.train.graph import graph_problems
from stsbench.train.loop import train

pytestmark = pytest.mark.usefixtures("one_thread")


def test_graph_problems_name_every_missing_condition():
    assert (
        graph_problems(
            device="cuda:0",
            pad_to_max_length=True,
            length_buckets=1,
            precision="bf16",
            world=1,
        )
        == []
    )
    problems = graph_problems(
        device="cpu", pad_to_max_length=False, length_buckets=4, precision="fp16", world=2
    )
    assert len(problems) == 5
    assert any("CUDA" in p for p in problems) and any("--pad-to-max-length" in p for p in problems)


def test_cuda_graph_on_cpu_is_one_line_before_the_output_folder(tiny_bert, data_dir, tmp_path):
    cfg = graph_config(tiny_bert, data_dir, tmp_path, cuda_graph=True, pad_to_max_length=True, device="cpu")
    with pytest.raises(StsbenchError, match=r"--cuda-graph needs a CUDA device \(not cpu\)"):
        train(cfg, show_progress=False)
    assert not (tmp_path / "out").exists()


@pytest.mark.cuda
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
@pytest.mark.parametrize(
    "method",
    [
        {"method": "simcse"},
        {"method": "esimcse", "queue_reset_each_epoch": True},  # refills the ring after each epoch's reset
        {"method": "mocose", "queue_size": 12, "queue_start_size": 4, "ema_schedule": "steps"},
    ],
    ids=["simcse", "esimcse", "mocose"],
)
def test_graphed_steps_equal_eager_steps_without_dropout(tiny_bert, data_dir, tmp_path, precision, method):
    """Without dropout a step is a pure function: the graph's losses and weights are the eager ones."""
    losses = eager_and_graphed_losses(tiny_bert, data_dir, tmp_path, precision=precision, **method)
    eager, graphed = losses[False], losses[True]
    assert len(eager) == len(graphed) == 16
    tol = 1e-5 if precision == "fp32" else 1e-3
    assert max(abs(a - b) for a, b in zip(eager, graphed, strict=True)) < tol
