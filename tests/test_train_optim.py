"""``--optimizer hf-adamw`` (the HF Trainer's AdamW) and ESimCSE's ``--momentum-update``: units and forms.

Their parity with the official code over four steps is ``tests/test_train_parity.py``.
"""

from __future__ import annotations

import pytest
import torch
from official_reference import TrainerAdamW
from test_train_graph import _config
from test_train_static import _steps

from stsbench.errors import StsbenchError
from stsbench.train.config import load_yaml, make_config
from stsbench.train.optim import HFAdamW, make_optimizer

pytestmark = pytest.mark.usefixtures("one_thread")


def _params(seed: int = 0) -> list[torch.nn.Parameter]:
    g = torch.Generator().manual_seed(seed)
    return [torch.nn.Parameter(torch.randn(shape, generator=g)) for shape in ((5, 3), (7,), (2, 2, 2))]


def _run(optimizer, params, steps: int = 5, skip: tuple[int, int] = (1, 2), lr=None) -> None:
    """``steps`` updates with seeded gradients, some as small as HF's effective epsilon; ``skip``: (param, step) without one."""
    g = torch.Generator().manual_seed(1)
    for step in range(steps):
        for i, p in enumerate(params):
            grad = torch.randn(p.shape, generator=g) * 10.0 ** -torch.randint(0, 9, p.shape, generator=g)
            p.grad = None if (i, step) == skip else grad
        if lr is not None:
            for group in optimizer.param_groups:
                group["lr"] = lr(step)
        optimizer.step()


def test_hf_adamw_is_the_trainers_adamw_tensor_by_tensor():
    # transformers v4.2.1 optimization.py AdamW.step, transcribed in tests/official_reference.py: bit for bit,
    # a parameter that missed a step keeping its own step count; the state survives a save and load
    ours, theirs = _params(), _params()
    opt = HFAdamW(
        [{"params": ours[:2], "weight_decay": 0.01}, {"params": ours[2:], "weight_decay": 0.0}], lr=1e-2
    )
    ref = TrainerAdamW(
        [{"params": theirs[:2], "weight_decay": 0.01}, {"params": theirs[2:], "weight_decay": 0.0}], lr=1e-2
    )
    _run(opt, ours)
    _run(ref, theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a, b)
    reloaded = HFAdamW(
        [{"params": ours[:2], "weight_decay": 0.01}, {"params": ours[2:], "weight_decay": 0.0}], lr=1e-2
    )
    reloaded.load_state_dict(opt.state_dict())
    _run(reloaded, ours, steps=1, skip=(-1, -1))
    _run(ref, theirs, steps=1, skip=(-1, -1))
    for a, b in zip(ours, theirs, strict=True):
        assert torch.equal(a, b)


def test_hf_adamw_parts_from_torch_adamw_where_gradients_are_small():
    # step 1, eps 1e-8: HF's epsilon is eps / sqrt(1 - 0.999) = 3.2e-7; a gradient of 1e-7 moves a weight by
    # lr * 1e-7 / (1e-7 + 3.2e-7) = 0.24 lr under HF, by about lr under torch
    hf, pt = torch.nn.Parameter(torch.zeros(2)), torch.nn.Parameter(torch.zeros(2))
    for p in (hf, pt):
        p.grad = torch.tensor([1e-7, 1.0])
    make_optimizer([hf], lr=1.0, weight_decay=0.0, device="cpu", kind="hf-adamw").step()
    make_optimizer([pt], lr=1.0, weight_decay=0.0, device="cpu", kind="torch-adamw").step()
    assert hf[0].item() == pytest.approx(-1e-7 / (1e-7 + 1e-8 / 0.001**0.5), rel=1e-5)
    assert pt[0].item() == pytest.approx(-1e-7 / (1e-7 + 1e-8), rel=1e-5)
    assert hf[1].item() == pytest.approx(pt[1].item(), rel=1e-6)  # a large gradient: the same step


def test_capturable_hf_adamw_is_the_host_step():
    # --cuda-graph: the lr a device tensor, the step counts and the step size on the device
    host, dev = _params(), _params()
    opt = HFAdamW(host, lr=1e-2, weight_decay=0.01)
    lr = torch.zeros(())
    cap = HFAdamW(dev, lr=lr, weight_decay=0.01, capturable=True)
    schedule = [1e-2, 8e-3, 6e-3, 4e-3, 2e-3]
    _run(opt, host, lr=lambda s: schedule[s])
    _run(cap, dev, lr=lambda s: lr.fill_(schedule[s]))
    assert isinstance(cap.state[dev[0]]["step"], torch.Tensor)
    for a, b in zip(host, dev, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-6, atol=1e-7)


def test_official_configs_take_the_trainers_adamw_and_the_paper_configs_torchs(request):
    root = request.config.rootpath / "configs"
    for path in sorted(root.glob("*.yaml")):
        options = load_yaml(path)
        official = path.stem.endswith("-official")
        assert options.get("optimizer", "torch-adamw") == ("hf-adamw" if official else "torch-adamw"), path
        if options.get("method") == "esimcse":
            assert options.get("momentum_update", "after-step") == (
                "before-step" if official else "after-step"
            )


def test_an_unknown_optimizer_is_one_line(tmp_path):
    with pytest.raises(StsbenchError, match=r"unknown optimizer 'sgd'; choose torch-adamw or hf-adamw$"):
        make_config({"method": "simcse", "model": "m", "train_file": "t", "output": "o", "optimizer": "sgd"})
    with pytest.raises(StsbenchError, match=r"--momentum-update: ESimCSE option, not for SimCSE"):
        make_config(
            {
                "method": "simcse",
                "model": "m",
                "train_file": "t",
                "output": "o",
                "momentum_update": "before-step",
            }
        )


@pytest.mark.parametrize(
    "opts",
    [{"optimizer": "hf-adamw"}, {"optimizer": "hf-adamw", "momentum_update": "before-step"}],
    ids=["hf-adamw", "hf-adamw-before-step"],
)
def test_esimcse_static_steps_take_the_official_optimizer_and_order(tiny_bert, data_dir, tmp_path, opts):
    # the static form (what --cuda-graph replays) with either momentum order: the loop's steps bit for bit
    opts = {"method": "esimcse", "queue_multiple": 1.5, "momentum_mlp": "online", **opts}
    growing = _steps(tiny_bert, data_dir, tmp_path / "growing", False, 8, **opts)
    static = _steps(tiny_bert, data_dir, tmp_path / "static", True, 8, **opts)
    assert static[0] == growing[0]
    assert torch.equal(static[3], growing[3])
    assert static[4].queue.static
    for a, b in zip(static[5].parameters(), growing[5].parameters(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a CUDA device")
def test_graphed_official_esimcse_steps_equal_eager_steps(tiny_bert, data_dir, tmp_path):
    """hf-adamw's capturable update and the before-step momentum update replayed from a graph: the eager losses."""
    import json

    from stsbench.train.loop import train

    losses = {}
    for graph in (False, True):
        cfg = _config(
            tiny_bert,
            data_dir,
            tmp_path / str(graph),
            method="esimcse",
            cuda_graph=graph,
            pad_to_max_length=True,
            device="cuda",
            dropout=0.0,
            max_steps=16,
            log_steps=1,
            optimizer="hf-adamw",
            momentum_update="before-step",
        )
        train(cfg, show_progress=False)
        log = (tmp_path / str(graph) / "out" / "train_log.jsonl").read_text().splitlines()
        losses[graph] = [json.loads(x)["loss"] for x in log if json.loads(x)["event"] == "train"]
    assert len(losses[True]) == 16
    assert max(abs(a - b) for a, b in zip(losses[False], losses[True], strict=True)) < 1e-5


@pytest.mark.parametrize(
    "kw",
    [
        {"method": "esimcse", "optimizer": "hf-adamw", "momentum_update": "before-step", "save_steps": 2},
        {  # killed while the official queue start still holds more than K
            "method": "mocose",
            "optimizer": "hf-adamw",
            "queue_start": "official",
            "queue_size": 16,
            "queue_start_size": 4,
            "save_steps": 1,
        },
    ],
    ids=["esimcse", "mocose"],
)
def test_killed_and_resumed_official_runs_end_with_the_same_weights(files, tmp_path, kw):
    # the HF AdamW's state (its step counts), the pre-step momentum order and the official queue start resume
    from test_train_runs import Killed, config, weights

    from stsbench.train.loop import train

    kw = {"max_steps": 5, **kw}
    train(config(files, tmp_path / "full", **kw), show_progress=False)

    def kill(step):
        if step == 3:
            raise Killed

    with pytest.raises(Killed):
        train(config(files, tmp_path / "cut", **kw), show_progress=False, on_step=kill)
    train(config(files, tmp_path / "cut", **kw), resume=True, show_progress=False)
    a, b = weights(tmp_path / "full"), weights(tmp_path / "cut")
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k
