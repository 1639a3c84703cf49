"""The GPU paths' parts a CPU can check: RNG state per device, TF32 scope, no skipped GPU test."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from helpers import build_tiny_bert, train_config

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
    import stsbench.train.loop as run

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


STAND_IN = """import json
import os

import pytest


@pytest.mark.cuda
def test_stand_in_for_the_cuda_tests():
    with open(os.path.join(os.environ["STSBENCH_GPU_OUT"], "graph_spread.jsonl"), "a") as f:
        f.write(json.dumps({"check": "stand-in", "spread": 0.0}) + "\\n")


def test_not_marked_cuda():
    raise AssertionError("the tests part runs the cuda tests alone")
"""
PARTS = ("tests", "eval", "train", "check", "epoch")
TABLES = {
    "eval": "eval_speed.md",
    "train": "train_speed.md",
    "check": "loss_check.md",
    "epoch": "epoch_speed.md",
}


def stage(tmp_path: Path, **env) -> subprocess.CompletedProcess:
    """benchmarks/gpu_stage.sh into ``tmp_path/stage`` (no wheels: no package index in the tests)."""
    root = TESTS.parent
    env = {
        **os.environ,
        "PYTHON": sys.executable,
        "GPU_STAGE": str(tmp_path / "stage"),
        "STAGE_WHEELS": "none",
        **env,
    }
    cmd = ["bash", str(root / "benchmarks" / "gpu_stage.sh")]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=root, timeout=120)


@pytest.mark.slow
def test_the_whole_gpu_call_runs_on_a_cpu_dry_run(tmp_path):
    """The one device call of the GPU suite, shrunk for a CPU: gpu_stage.sh stages the weightless model, the data and the
    oracle, checks the size and prints one call; that call's command runs every part of gpu_suite.sh in order
    (a stand-in cuda test, tiny shapes and counts), each under its limit, and every part's table comes back."""
    import json

    root = TESTS.parent
    staged = stage(tmp_path)
    assert staged.returncode == 0, staged.stdout[-3000:] + staged.stderr[-2000:]
    model = tmp_path / "stage" / "model"
    assert (model / "config.json").is_file() and (model / "tokenizer.json").is_file()
    assert not [p.name for p in model.iterdir() if p.name.startswith(("model.safetensors", "pytorch_model"))]
    assert (tmp_path / "stage" / "shared" / "data" / "wiki" / "wiki1m_head.txt").is_file()
    assert (tmp_path / "stage" / "shared" / "reference" / "senteval").is_dir()
    sizes = staged.stdout.split("sizes (MiB):")[1]
    assert "working tree" in sizes and "total" in sizes and "of 64" in sizes
    calls = [
        line.strip() for line in staged.stdout.splitlines() if line.strip().startswith(("carry:", "command:"))
    ]
    assert len(calls) == 2, staged.stdout  # one call: its carry and its command
    carry = json.loads(calls[0].removeprefix("carry:"))
    assert [Path(c).name for c in carry] == ["model", "shared", "wheels"]
    command = calls[1].removeprefix("command:").strip()
    assert command.startswith("bash benchmarks/gpu_suite.sh ") and len(command) <= 2000
    over = stage(tmp_path, STAGE_LIMIT_MIB="1")
    error = over.stderr.splitlines()[-1]  # after the warning that tmp_path is outside the checkout
    assert over.returncode == 2 and error.startswith("error: the call would carry "), over.stderr
    assert "over the 1 MiB" in error and "error" not in over.stderr.removesuffix(error + "\n")

    # a 1-layer copy of the staged architecture: the eval part draws and encodes it in seconds
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 1}))
    tests = tmp_path / "tests"
    tests.mkdir()
    for name in ("conftest.py", "helpers.py"):
        shutil.copy(TESTS / name, tests / name)
    (tests / "test_stand_in.py").write_text(STAND_IN)
    parts = list(PARTS)
    source = (root / "benchmarks" / "eval_speed.py").read_text()
    if "--random-weights" not in source or "--tasks" not in source:
        parts.remove("eval")
        warnings.warn(
            "the eval part's dry run skipped: benchmarks/eval_speed.py has no --random-weights yet",
            stacklevel=1,
        )
    out = tmp_path / "out"
    env = {
        **os.environ,
        "OUT": str(out),
        "PYTHON": sys.executable,
        "DEVICE": "cpu",
        "TRAIN_SHAPE": "--tiny-shape",
        "WHEELS": str(tmp_path / "stage" / "wheels"),
        "PYTHONPYCACHEPREFIX": "",  # this venv's own bytecode: a fresh prefix compiled torch & co. twice (60 s)
        "TESTS_DIR": str(tests),
        "EVAL_ARGS": "--tasks STS16 --threads 1 --extra-dtype=",
        # CPU: fp32; the compiled+graphed row is asked for SimCSE alone (and refused at bf16 on a CPU, in one line)
        "TRAIN_ARGS": "--precisions fp32 --modes eager,compiled-graph --steps 2 --warmup 1 --batch-size 32 --threads 1",
        "CHECK_ARGS": "--check-precisions fp32 --check-steps 2 --batch-size 32 --threads 1",
        "EPOCH_ARGS": "--lines 64 --batch-size 32 --eval-steps 2 --official-steps 1 --official-warmup 1 --threads 1",
        "EPOCH_RUN_TIMEOUT": "0.5",
    }
    if parts != list(PARTS):
        command += " --parts " + ",".join(parts)
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, env=env, cwd=root, timeout=300
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    env_txt = (out / "env.txt").read_text()
    assert f"parts: {' '.join(parts)}; limits (s): env 35 + tests 85 + " in env_txt
    assert parts != list(PARTS) or "eval 115 + train 200 + check 60 + epoch 80 = 575" in env_txt  # the budget
    ran = [
        line.split()[1] for line in env_txt.splitlines() if line.startswith("== ") and " exited with " in line
    ]
    assert ran == parts, env_txt  # every part, in order of value
    for part in parts:
        assert f"== {part} exited with 0 after " in env_txt, env_txt
    tables = (out / "tables.md").read_text()
    assert tables in done.stdout and "1 passed, 1 deselected" in tables
    assert json.loads((out / "graph_spread.jsonl").read_text()) == {"check": "stand-in", "spread": 0.0}
    for part in parts[1:]:
        table = (out / TABLES[part]).read_text()
        assert table in tables, part
    if "eval" in parts:
        assert "random weights (seed 0" in (out / "eval_speed.md").read_text()
    train = (out / "train_speed.md").read_text()
    assert "| simcse | fp32 | eager |" in train and "| mocose | fp32 | eager |" in train
    assert "| official |" in train and "2 timed steps a row" in train
    assert "| simcse | bf16 | compiled-graph | failed" in train and "esimcse | bf16 | compiled" not in train
    check = (out / "loss_check.md").read_text()
    assert all(f"| {m} | fp32 | 0 |" in check for m in ("simcse", "esimcse", "mocose")), check
    epoch = (out / "epoch_speed.md").read_text()
    assert "**Stopped at --timeout 0.5 s" in epoch and "the epoch projected" in epoch
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["env.txt", "log.txt", "tables.md", "graph_spread.jsonl", *(TABLES[p] for p in parts[1:])]
    )  # at most 8 files: what a device call brings back


def test_the_gpu_suite_refuses_a_misspelt_part_before_it_runs(tmp_path):
    root = TESTS.parent
    env = {**os.environ, "OUT": str(tmp_path / "out"), "PYTHON": sys.executable}
    cmd = ["bash", str(root / "benchmarks" / "gpu_suite.sh"), str(tmp_path), str(tmp_path)]
    for parts in (["--parts", "epoch,epochs"], ["epoch", "epochs"], ["--parts=tests,epochs"]):
        wrong = subprocess.run([*cmd, *parts], capture_output=True, text=True, env=env, cwd=root, timeout=60)
        assert wrong.returncode == 2, wrong.stderr
        assert wrong.stderr == "error: unknown part epochs (tests, eval, train, check, epoch)\n"
    assert not (tmp_path / "out").exists()  # said before anything ran


def test_dev_evaluation_runs_the_eager_forward_of_a_compiled_backbone(files, tokenizer):
    """Under --compile the dev evaluation ran the compiled backbone, which compiled an inference graph per
    batch shape and then marked lengths and batch size dynamic, so the training step was traced with symbolic
    shapes (three recompilations in a 6-step CPU run). It runs the eager forward now; the compiled call stays."""

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
