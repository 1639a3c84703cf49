"""The GPU paths' parts a CPU can check: RNG state per device, TF32 scope, no skipped GPU test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from helpers import train_config

from stsbench.train import checkpoint as ckpt
from stsbench.train.step import tf32

pytestmark = pytest.mark.usefixtures("one_thread")
TESTS = Path(__file__).resolve().parent


class FakeCuda:
    """torch.cuda's generator calls on a machine with four GPUs, recorded; get_rng_state_all must not be called."""

    def __init__(self, monkeypatch) -> None:
        self.set: list[tuple[int, int]] = []
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "current_device", lambda: 2)
        monkeypatch.setattr(
            torch.cuda, "get_rng_state", lambda device=None: torch.tensor([100 + int(device)])
        )
        monkeypatch.setattr(
            torch.cuda,
            "set_rng_state",
            lambda state, device=None: self.set.append((int(state[0]), int(device))),
        )

        def every_gpu(*_a, **_k):
            raise AssertionError("every GPU's generator read: a context on each GPU from each process")

        monkeypatch.setattr(torch.cuda, "get_rng_state_all", every_gpu)
        monkeypatch.setattr(torch.cuda, "set_rng_state_all", every_gpu)


def test_each_process_saves_and_restores_its_own_gpus_generator(monkeypatch):
    cuda = FakeCuda(monkeypatch)
    states = ckpt.rng_states("cuda:1")
    assert int(states["cuda"][0]) == 101 and states["cuda_device"] == 1
    assert int(ckpt.rng_states("cuda")["cuda"][0]) == 102  # "cuda": the current device
    assert "cuda" not in ckpt.rng_states("cpu")  # a CPU run saves no GPU state, GPU or not
    ckpt.set_rng_states(states, "cuda:1")
    old = {**states, "cuda": [torch.tensor([200 + i]) for i in range(4)]}  # a checkpoint of every GPU's
    ckpt.set_rng_states(old, "cuda:3")
    ckpt.set_rng_states(states, "cpu")
    assert cuda.set == [(101, 1), (203, 3)]


def test_tf32_is_on_inside_the_scope_and_put_back_after():
    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    with tf32(True):
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == before
    with tf32(False):
        assert torch.backends.cuda.matmul.allow_tf32 == before[0]


def test_the_loop_holds_tf32_around_the_step_alone(files, tmp_path, monkeypatch):
    """--tf32: the training steps on TF32, the dev evaluations in fp32 (on a CPU the switches change nothing)."""
    import stsbench.train.loop as loop
    import stsbench.train.run as run

    seen: dict[str, set] = {"step": set(), "eval": set()}
    step, evaluate = loop.train_step, run.dev_scores

    def spy_step(*a, **k):
        seen["step"].add(torch.backends.cuda.matmul.allow_tf32)
        return step(*a, **k)

    def spy_eval(*a, **k):
        seen["eval"].add(torch.backends.cuda.matmul.allow_tf32)
        return evaluate(*a, **k)

    monkeypatch.setattr(loop, "train_step", spy_step)
    monkeypatch.setattr(run, "dev_scores", spy_eval)
    monkeypatch.setattr(run, "check_tf32", lambda enabled, device: None)  # --tf32 is refused on a CPU
    loop.train(
        train_config(files, tmp_path / "out", tf32=True, max_steps=4, eval_steps=2), show_progress=False
    )
    assert seen == {"step": {True}, "eval": {False}}
    assert not torch.backends.cuda.matmul.allow_tf32


def test_the_gpu_suite_fails_a_cuda_test_that_skips(tmp_path):
    """STSBENCH_REQUIRE_CUDA=1 (benchmarks/gpu_suite.sh): a cuda test that skips fails; without it, it skips."""
    for name in ("conftest.py", "helpers.py"):
        shutil.copy(TESTS / name, tmp_path / name)
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\n\n@pytest.mark.cuda\ndef test_gpu():\n    pytest.skip('no GPU after all')\n"
    )
    ini = ["-p", "no:cacheprovider", "-o", "markers=cuda: gpu", "-q", str(tmp_path / "test_skips.py")]
    env = {**os.environ, "STSBENCH_REQUIRE_CUDA": "1", "PYTHONPATH": str(tmp_path)}
    required = subprocess.run(
        [sys.executable, "-m", "pytest", *ini], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert required.returncode == 1 and "skipped on the GPU run" in required.stdout, required.stdout[-2000:]
    env.pop("STSBENCH_REQUIRE_CUDA")
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", *ini], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert plain.returncode == 0 and "1 skipped" in plain.stdout, plain.stdout[-2000:]


def test_the_gpu_suite_runs_its_epoch_part_on_a_cpu_dry_run(tmp_path):
    """Part B's epoch call, shrunk to a tiny BERT on the CPU: gpu_suite.sh's plumbing, its table in $OUT. The run
    is stopped at EPOCH_RUN_TIMEOUT, as a goal missed by far is, and its table still comes back (a whole epoch
    run of epoch_speed.py is tests/test_speed_benchmarks.py's)."""
    from stsbench.encoders.resolve import embedded_model_path

    root = TESTS.parent
    env = {
        **os.environ,
        "OUT": str(tmp_path / "out"),
        "PYTHON": sys.executable,
        "DEVICE": "cpu",
        "TRAIN_SHAPE": "--tiny-shape",
        "EPOCH_ARGS": "--lines 64 --batch-size 32 --eval-steps 2 --official-steps 1 --official-warmup 1 --threads 1",
        "WHEELS": str(tmp_path / "no-wheels"),
        "EPOCH_RUN_TIMEOUT": "0.5",
        "PYTHONPYCACHEPREFIX": "",  # this venv's own bytecode: a fresh prefix compiled torch & co. twice (60 s)
    }
    data = os.environ.get("STSBENCH_DATA") or str(root.parent / "shared" / "data")
    cmd = ["bash", str(root / "benchmarks" / "gpu_suite.sh"), str(embedded_model_path()), data]
    done = subprocess.run([*cmd, "epoch"], capture_output=True, text=True, env=env, cwd=root, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    table = (tmp_path / "out" / "epoch_speed.md").read_text()
    assert "2 steps over wiki1m_head.txt's 11,914 lines cycled to 64" in table and table in done.stdout
    assert "**Stopped at --timeout 0.5 s after 0 of 2 steps**" in table and "official-style steps alone x 2" in table
    env_txt = (tmp_path / "out" / "env.txt").read_text()
    assert "== epoch exited with 0 ==" in env_txt
    wrong = subprocess.run([*cmd, "epoch", "epochs"], capture_output=True, text=True, env=env, cwd=root, timeout=120)
    assert wrong.returncode == 2 and wrong.stderr == "error: unknown part epochs (tests, eval, train, epoch)\n"
    assert (tmp_path / "out" / "env.txt").read_text() == env_txt  # said before anything ran


def test_dev_evaluation_runs_the_eager_forward_of_a_compiled_backbone(files, tokenizer):
    """Under --compile the dev evaluation ran the compiled backbone, which compiled an inference graph per
    batch shape and then marked lengths and batch size dynamic, so the training step was traced with symbolic
    shapes (three recompilations in a 6-step CPU run). It runs the eager forward now; the compiled call stays."""
    from helpers import build_tiny_bert

    from stsbench.train.evaluate import DevSet, dev_scores
    from stsbench.train.model import ContrastiveEncoder

    model = ContrastiveEncoder(build_tiny_bert(dropout=0.0), "cls", True)
    dev = DevSet.load(files / "data", tokenizer)
    plain = dev_scores(model, dev, "cpu")
    calls = []

    def compiled(*args, **kwargs):  # what nn.Module.compile puts there: preferred by __call__
        calls.append(1)
        return model.backbone._call_impl(*args, **kwargs)

    model.backbone._compiled_call_impl = compiled
    assert dev_scores(model, dev, "cpu") == plain  # the same eager arithmetic
    assert calls == [] and model.backbone._compiled_call_impl is compiled  # put back for training
    ids = tokenizer(["a man plays a guitar ."], return_tensors="pt")
    model.backbone(input_ids=ids["input_ids"], attention_mask=ids["attention_mask"])
    assert calls == [1]
