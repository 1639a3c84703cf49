"""The tests' fixtures; what they share besides fixtures is in :mod:`helpers`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# A worker per core (pytest-xdist: `-n auto`, CI's `-n 2`): each worker, and every process a test starts, runs
# torch on one thread. With torch's default of a thread per core in each, the cores were oversubscribed and
# OpenMP's waiting threads spin: in two clean-clone CIs close in time the main tests took 945 s so and 803 s on
# one thread (the SentEval fork end to end, all tiny ops, 80 s against 25 s). Set before any test imports torch;
# a process given its own count (the seeds' executor splits the cores itself) keeps it; reproduce's steps take
# this one thread as the user's OMP_NUM_THREADS.
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 1) > 1:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")

import pytest  # noqa: E402
from helpers import DATA, make_tiny_bert, make_train_files, tiny_folder, tiny_reproduction  # noqa: E402

REQUIRE_CUDA = os.environ.get("STSBENCH_REQUIRE_CUDA") == "1"  # the GPU suite's run of the cuda tests


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With STSBENCH_REQUIRE_CUDA=1 (benchmarks/gpu_suite.sh) a skipped cuda test is a failure: none may skip."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_CUDA and report.skipped and "cuda" in item.keywords:
        report.outcome = "failed"
        report.longrepr = f"{item.nodeid}: skipped on the GPU run ({report.longrepr}); every cuda test must run"


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-bert")


@pytest.fixture(scope="module")
def tokenizer():
    """all-MiniLM-L6-v2's tokenizer, the tiny BERTs' vocabulary."""
    from transformers import AutoTokenizer

    from stsbench.encoders.resolve import embedded_model_path

    return AutoTokenizer.from_pretrained(embedded_model_path())


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """The trainer tests' tiny BERT (``tiny``, BERT's init), a train file, an NLI csv and a 40-pair STS-B dev."""
    return make_train_files(tmp_path_factory.mktemp("train"))


def pytest_collection_modifyitems(items) -> None:
    """Mark ``realdata`` every test that reads the real data through ``data_dir`` (``-m "not realdata"``); skip
    ``cuda`` tests without a CUDA device (here, CI), unless the GPU suite requires them. The modules holding
    ``slow`` tests run first, each module's tests together (their module fixtures made once): the two workers'
    longest tests no longer start last, with one worker idle while the other finishes them."""
    import torch

    slow = {i.module.__name__ for i in items if "slow" in i.keywords and getattr(i, "module", None)}
    items.sort(key=lambda i: getattr(getattr(i, "module", None), "__name__", "") not in slow)  # stable

    no_cuda = not torch.cuda.is_available() and not REQUIRE_CUDA
    for item in items:
        if "data_dir" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.realdata)
        if no_cuda and "cuda" in item.keywords:
            item.add_marker(pytest.mark.skip(reason="needs a CUDA device"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    return DATA


@pytest.fixture(scope="session")
def mock_data(tmp_path_factory) -> Path:
    """The mock SentEval folder (:mod:`mocks`), taken as canonical data: what tests of plumbing run on."""
    from mocks import treat_as_canonical, write_mock_data

    root, _ = write_mock_data(tmp_path_factory.mktemp("mock-data"))
    with pytest.MonkeyPatch.context() as patch:
        treat_as_canonical(patch, root)
        yield root


@pytest.fixture()
def cache_dir(tmp_path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def one_thread():
    """Run a test on one torch thread: the machine is shared, and 1 thread keeps the numbers bit-stable."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    """A folder with a tiny BERT, a 30-line train file and ``tiny.yaml`` (one run, two seeds, 6 steps, an
    analysis, judged against a published row): the session's one (:func:`helpers.tiny_folder`)."""
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    return tiny_folder(tmp_path_factory)


@pytest.fixture(scope="module")
def clean(tiny, tmp_path_factory) -> Path:
    """``tiny.yaml`` reproduced without interruption, once for the session (:func:`helpers.tiny_reproduction`)."""
    return tiny_reproduction(tmp_path_factory)


@pytest.fixture
def started(monkeypatch) -> list[dict[str, str]]:
    """The environment of each process the executor starts (the process itself: `stsbench --version`).

    Plain processes: the fork server's steps are forks, whose environment tests/test_fork_server.py reads."""
    monkeypatch.setenv("STSBENCH_FORK_SERVER", "0")
    envs: list[dict[str, str]] = []
    real = subprocess.Popen

    def popen(cmd, **kwargs):
        envs.append(kwargs["env"])
        return real(cmd, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", popen)
    return envs
