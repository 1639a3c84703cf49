"""``--optimizer hf-adamw`` (the HF Trainer's AdamW) and ESimCSE's ``--momentum-update``: units and forms.

Their parity with the official code over four steps is ``tests/test_train_parity.py``.
"""

from __future__ import annotations

import pytest
import torch
from helpers import Killed, eager_and_graphed_losses, loop_or_static_steps, train_config, weights
from official_reference import TrainerAdamW

from stsbench.errors import StsbenchError
from stsbench.train.config import load_yaml, make_config
from stsbench.train.step import HFAdamW, fused_arguments, make_optimizer

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


def _mixed_params() -> list[torch.nn.Parameter]:
    """Decay group: two tensors and a transposed (non-contiguous) one; no-decay group: two more."""
    g = torch.Generator().manual_seed(2)
    shapes = ((5, 3), (7,), (4, 6), (2, 2, 2), (4,))
    params = [torch.nn.Parameter(torch.randn(shape, generator=g)) for shape in shapes]
    params[2] = torch.nn.Parameter(params[2].detach().t())
    return params


def _mixed_run(optimizer, params, skips, lrs) -> None:
    g = torch.Generator().manual_seed(3)
    for step, lr in enumerate(lrs):
        for i, p in enumerate(params):  # gradients from 1 down to 1e-8: HF's epsilon and torch's part there
            grad = torch.randn(p.shape, generator=g) * 10.0 ** -torch.randint(0, 9, p.shape, generator=g)
            p.grad = None if (i, step) in skips else grad
        for group in optimizer.param_groups:
            group["lr"] = lr
        optimizer.step()


def test_fused_hf_adamw_is_the_trainers_adamw(monkeypatch):
    # the CPU form (torch's fused AdamW kernel with lr' = (1 - lr wd) lr, wd' = lr wd / lr',
    # eps' = eps / sqrt(1 - b2^t)) against the Trainer's AdamW and the foreach form: six steps, a decay and a
    # no-decay group, parameters without a gradient on some steps (their own, lagging step counts), one
    # non-contiguous parameter (left to the foreach form); equal up to float rounding
    calls = []
    kernel = torch._fused_adamw_

    def recording(params, *args, **kwargs):
        calls.append(([id(p) for p in params], args[4][0].item()))
        return kernel(params, *args, **kwargs)

    monkeypatch.setattr(torch, "_fused_adamw_", recording)
    skips = {(1, 1), (1, 2), (3, 0), (0, 5)}
    lrs = [1e-2, 1e-2, 8e-3, 6e-3, 4e-3, 2e-3]
    runs = {}
    for name, make in {
        "fused": lambda groups: HFAdamW(groups, fused=True),
        "foreach": lambda groups: HFAdamW(groups),
        "trainer": lambda groups: TrainerAdamW(groups),
    }.items():
        params = _mixed_params()
        opt = make([{"params": params[:3], "weight_decay": 0.1}, {"params": params[3:], "weight_decay": 0.0}])
        _mixed_run(opt, params, skips, lrs)
        runs[name] = (params, [opt.state[p]["step"] for p in params])
    fused, steps = runs["fused"]
    assert steps == [5, 4, 6, 5, 6] == runs["trainer"][1] == runs["foreach"][1]
    fused_ids = {i for ids, _ in calls for i in ids}
    assert id(fused[2]) not in fused_ids and {id(p) for i, p in enumerate(fused) if i != 2} <= fused_ids
    assert ([id(fused[1])], 2.0) in calls  # step 4: the lagging parameter at its own count
    for name in ("trainer", "foreach"):
        for a, b in zip(fused, runs[name][0], strict=True):
            torch.testing.assert_close(a, b, rtol=2e-6, atol=1e-8)


def test_fused_arguments_are_the_hf_step():
    # lr' wd' = lr wd, eps' = eps / sqrt(1 - b2^t), lr' = (1 - lr wd) lr; without the bias correction
    # torch's own correction is undone through lr'
    lr_t, wd_t, eps_t = fused_arguments(1e-2, 0.1, 1e-8, 0.9, 0.999, 1, True)
    assert (lr_t, lr_t * wd_t, eps_t) == pytest.approx((1e-2 * 0.999, 1e-3, 1e-8 / 0.001**0.5), rel=1e-12)
    lr_t, wd_t, _ = fused_arguments(1e-2, 0.0, 1e-8, 0.9, 0.999, 3, False)
    assert (lr_t, wd_t) == pytest.approx((1e-2 * (1 - 0.9**3) / (1 - 0.999**3) ** 0.5, 0.0), rel=1e-12)
    ours, theirs = _mixed_params(), _mixed_params()
    opt = HFAdamW(ours, lr=1e-2, correct_bias=False, fused=True)
    _mixed_run(opt, ours, {(1, 1)}, [1e-2] * 3)
    _mixed_run(TrainerAdamW(theirs, lr=1e-2, correct_bias=False), theirs, {(1, 1)}, [1e-2] * 3)
    for a, b in zip(ours, theirs, strict=True):
        torch.testing.assert_close(a, b, rtol=2e-6, atol=1e-8)


def test_the_trainer_builds_the_fused_form_on_cpu_and_the_capturable_form_stays():
    # lr wd = 1 (HF zeroes the weights; lr' would be 0) and a device-tensor lr: the foreach form
    cpu = make_optimizer(_params(), lr=1e-2, weight_decay=0.01, device="cpu", kind="hf-adamw")
    assert cpu.fused
    params = _params()
    opt = HFAdamW(params, lr=10.0, weight_decay=0.1, fused=True)
    _run(opt, params, steps=1)
    assert all(not p.any() for p in params)
    host, dev = _params(), _params()
    lr = torch.zeros(())
    _run(HFAdamW(host, lr=1e-2, weight_decay=0.01, fused=True), host, lr=lambda s: 1e-2)
    cap = HFAdamW(dev, lr=lr, weight_decay=0.01, capturable=True, fused=True)
    _run(cap, dev, lr=lambda s: lr.fill_(1e-2))
    assert isinstance(cap.state[dev[0]]["step"], torch.Tensor)
    for a, b in zip(host, dev, strict=True):
        torch.testing.assert_close(b, a, rtol=1e-6, atol=1e-7)


def test_official_configs_take_the_trainers_adamw_and_the_paper_configs_torchs(request):
    paths = sorted((request.config.rootpath / "stsbench" / "configs").glob("*.yaml"))  # package data
    assert sum(p.stem.endswith("-official") for p in paths) >= 3  # one per method at least
    for path in paths:
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
    growing = loop_or_static_steps(tiny_bert, data_dir, tmp_path / "growing", False, 8, **opts)
    static = loop_or_static_steps(tiny_bert, data_dir, tmp_path / "static", True, 8, **opts)
    assert static[0] == growing[0]
    assert torch.equal(static[3], growing[3])
    assert static[4].queue.static
    for a, b in zip(static[5].parameters(), growing[5].parameters(), strict=True):
        assert torch.equal(a, b)


@pytest.mark.cuda
def test_graphed_official_esimcse_steps_equal_eagerloop_or_static_steps(tiny_bert, data_dir, tmp_path):
    """hf-adamw's capturable update and the before-step momentum update replayed from a graph: the eager losses."""
    losses = eager_and_graphed_losses(
        tiny_bert, data_dir, tmp_path, method="esimcse", optimizer="hf-adamw", momentum_update="before-step"
    )
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
    from stsbench.train.loop import train

    kw = {"max_steps": 5, **kw}
    train(train_config(files, tmp_path / "full", **kw), show_progress=False)

    def kill(step):
        if step == 3:
            raise Killed

    with pytest.raises(Killed):
        train(train_config(files, tmp_path / "cut", **kw), show_progress=False, on_step=kill)
    train(train_config(files, tmp_path / "cut", **kw), resume=True, show_progress=False)
    a, b = weights(tmp_path / "full"), weights(tmp_path / "cut")
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k
