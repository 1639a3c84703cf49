"""Cold start: a warm `stsbench run` imports none of the heavy stack, names are refused before it,
poolers are a registry, and `stsbench <command>` imports the module of that command only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import numpy as np
import pytest
from helpers import HEAVY, ROOT, run_cli_watching

import stsbench
from stsbench.encoders import cache as cache_module
from stsbench.encoders import pooling
from stsbench.encoders.cache import EmbeddingCache, text_keys
from stsbench.registry import Registry

# what a warm run must not import either: each is a fixed cost of every start (pydantic: typer 0.29 validates
# every option through it, hence pyproject's typer<0.29; numpy.ma: np.quantile's np.unique imports it, where
# `import numpy` does not already (numpy 1.x does); importlib.metadata is read for the results' library
# versions, not for the plugin scan of built-in names)
STARTUP = ("pydantic", "yaml")


def _startup_watch() -> tuple[str, ...]:
    code = "import numpy, sys; print('numpy.ma' in sys.modules)"
    eager = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return STARTUP if eager.strip() == "True" else (*STARTUP, "numpy.ma")


PAIRS = 40  # lines kept of each STS file: every subset keeps enough distinct scores for its interval


@pytest.fixture(scope="module")
def sts_data(tmp_path_factory, data_dir) -> Path:
    """The seven STS tasks' test files, each cut to its first lines (a small copy: the run passes
    --allow-modified-data)."""
    from stsbench.tasks.base import Mode
    from stsbench.tasks.registry import resolve_tasks

    root = tmp_path_factory.mktemp("sts-small")
    for task in resolve_tasks("sts"):
        for f in task.files(data_dir, Mode.test):
            dst = root / f.relative_to(data_dir)
            dst.parent.mkdir(parents=True, exist_ok=True)
            lines = f.read_text(encoding="utf-8").splitlines(keepends=True)
            dst.write_text("".join(lines[: PAIRS + 1]), encoding="utf-8")  # + SICK's header line
    return root


def test_a_warm_run_imports_no_torch_and_gives_the_cold_figures(sts_data, tiny_bert, tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "out"
    # the cache filled in this process (which has torch), the figures to expect with it
    cold = stsbench.evaluate(
        str(tiny_bert), "sts", pooler="avg", data_dir=sts_data, cache_dir=cache, allow_modified_data=True
    )
    assert len(cold.results) == 7
    code, stdout, stderr, heavy = run_cli_watching(
        ["run", "--model", tiny_bert, "--pooler", "avg", "--tasks", "sts", "--data-dir", sts_data]
        + ["--cache-dir", cache, "--output", out, "--allow-modified-data", "--format", "json", "-q"],
        watch=HEAVY + _startup_watch(),
    )
    assert code == 0, stderr
    assert heavy == []
    printed = json.loads(stdout)
    assert printed["scores"] == {r.task: r.reported for r in cold.results}
    interval = cold.average.interval
    assert printed["average_intervals"]["STS"] == [interval["low"], interval["high"]]  # the bootstrap ran too
    assert len(list(out.rglob("*.json"))) == 8  # seven tasks and their average, written without torch


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--mode", "tst"],
        ["run", "--tasks", "STS12,STS-17"],
        ["run", "--pooler", "clss"],
        ["train", "--method", "simcsee"],
    ],
)
def test_a_bad_name_is_one_line_before_any_heavy_import(args):
    code, stdout, stderr, heavy = run_cli_watching(args)
    assert code == 2 and stdout == ""
    assert len(stderr.splitlines()) == 1 and stderr.startswith("error: ")
    assert heavy == []


def test_the_benchmark_takes_relative_paths_from_the_folder_it_was_started_in(tmp_path, monkeypatch):
    """benchmarks/cold_start.py runs its commands in a temporary folder: its paths are made absolute first."""
    import cold_start

    here = tmp_path.resolve() / "here"
    (here / "data").mkdir(parents=True)
    (here / "model").mkdir()
    monkeypatch.chdir(here)
    monkeypatch.delenv("STSBENCH_DATA", raising=False)
    monkeypatch.delenv("STSBENCH_CACHE", raising=False)
    args = cold_start.parse_args(
        ["--data-dir", "data", "--cache-dir", "../cache", "--markdown", "cold.md", "--model", "model"]
    )
    assert args.data_dir == here / "data" and args.cache_dir == tmp_path.resolve() / "cache"
    assert args.markdown == here / "cold.md" and args.model == str(here / "model")
    args = cold_start.parse_args([])  # the defaults: ./data, the run's own cache, a model name kept as given
    assert args.data_dir == here / "data" and args.cache_dir is None and args.model == "all-MiniLM-L6-v2"
    monkeypatch.setenv("STSBENCH_DATA", "../shared-data")
    monkeypatch.setenv("STSBENCH_CACHE", "cache")
    args = cold_start.resolve_paths(cold_start.parse_args(["--data-dir", "data"]), here)  # twice: the same
    assert args.data_dir == here / "data" and args.cache_dir == here / "cache"
    assert cold_start.resolve_paths(args, Path("/elsewhere")).data_dir == here / "data"
    args = cold_start.resolve_paths(Namespace(data_dir=None, cache_dir=None, markdown=None, model="m"), here)
    assert args.data_dir == tmp_path.resolve() / "shared-data"  # $STSBENCH_DATA, from the starting folder


def test_the_benchmark_refuses_a_missing_data_folder_in_one_line(tmp_path, monkeypatch, capsys):
    import cold_start

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("STSBENCH_DATA", raising=False)
    with pytest.raises(SystemExit) as exc:
        cold_start.parse_args(["--repeats", "1"])
    assert exc.value.code == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"error: no data folder at {tmp_path.resolve() / 'data'}; pass --data-dir")
    # the script itself: the same line, no traceback, before any run
    script = ROOT / "benchmarks" / "cold_start.py"
    done = subprocess.run(
        [sys.executable, str(script), "--data-dir", "nowhere"], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [line.replace("data;", "nowhere;")]


def test_a_failed_run_of_the_benchmark_says_why():
    """A warm-up run that fails is reported with the last lines of its stderr, not "run it by hand"."""
    import cold_start

    _, status, _ = cold_start.stsbench_process(["run", "--tasks", "STS17"], None)
    assert status["code"] == 2 and status["tail"].startswith("error: ") and "STS17" in status["tail"]
    assert len(status["tail"].splitlines()) <= 5


def test_each_command_module_is_the_one_the_cli_imports_for_its_commands():
    import importlib

    import typer

    from stsbench.commands import MODULE_OF, command_modules

    registered = {}
    for name in command_modules():
        app = typer.Typer()
        importlib.import_module(f"stsbench.commands.{name}").register(app)
        commands = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
        registered.update(dict.fromkeys(commands, name))
    listed = {c: m for c, m in registered.items() if m != "analyses"}  # analyses: from their registry
    assert listed == MODULE_OF


def test_a_registered_pooler_is_checked_and_pools(tiny_bert, monkeypatch):
    """A pooler another package registers (here: a masked max) is a valid --pooler and encodes through it."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    def masked_max(outputs, mask):
        hidden = outputs.last_hidden_state.masked_fill(mask.unsqueeze(-1) == 0, float("-inf"))
        return hidden.max(dim=1).values

    registry: Registry = Registry("pooler", entry_points="stsbench.poolers")
    for name in pooling.POOLERS:
        registry.register(name, pooling.POOLER_REGISTRY.get(name))
    registry.register("max", masked_max)
    monkeypatch.setattr(pooling, "POOLER_REGISTRY", registry)
    assert pooling.check_pooler("max") == "max" and not pooling.needs_hidden_states("max")

    texts = ["a man is playing a guitar .", "two dogs run across the green field in the rain ."]
    got = stsbench.load_encoder(str(tiny_bert), pooler="max", use_cache=False).encode(
        texts, show_progress=False
    )
    tok, model = AutoTokenizer.from_pretrained(tiny_bert), AutoModel.from_pretrained(tiny_bert).eval()
    with torch.no_grad():
        want = [model(**tok([t], return_tensors="pt")).last_hidden_state[0].max(dim=0).values for t in texts]
    np.testing.assert_allclose(got, torch.stack(want).numpy(), rtol=1e-5, atol=1e-6)


def _shard(cache, texts):
    cache.store(text_keys(texts), stsbench.MockEncoder(dim=8).encode(texts))
    (shard,) = cache.dir.glob("*.npz")
    return shard


def test_a_shard_is_hashed_once_and_a_damaged_one_is_still_refused(tmp_path, monkeypatch):
    """A warm lookup trusts the sha256 checked before (same size, mtime, digest); the zip's CRC still reads every
    byte, so a shard damaged in place, its mtime put back, is refused and its texts encoded again."""

    texts = [f"sentence number {i}" for i in range(50)]
    cache = EmbeddingCache(tmp_path, "f" * 32)
    shard = _shard(cache, texts)
    hashed = []
    digest = cache_module._digest
    monkeypatch.setattr(cache_module, "_digest", lambda k, v: hashed.append(1) or digest(k, v))
    want = stsbench.MockEncoder(dim=8).encode(texts)
    for _ in range(2):
        vecs, found = cache.lookup(text_keys(texts))
        assert found.all() and np.array_equal(vecs, want)
    assert len(hashed) == 1  # the second lookup trusted the first one's check
    st = shard.stat()
    raw = bytearray(shard.read_bytes())
    at = raw.rindex(want[-1].tobytes())  # the last text's vector, in place
    raw[at] ^= 0x01
    shard.write_bytes(bytes(raw))
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert shard.stat().st_size == st.st_size
    vecs, found = cache.lookup(text_keys(texts))
    assert not found.any() and not shard.exists()  # refused and removed, never a wrong vector


def test_a_shard_rewritten_with_a_wrong_digest_is_hashed_again(tmp_path):
    texts = [f"sentence number {i}" for i in range(50)]
    cache = EmbeddingCache(tmp_path, "f" * 32)
    shard = _shard(cache, texts)
    assert cache.lookup(text_keys(texts))[1].all()  # checked, and remembered
    with np.load(shard) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["vectors"] = arrays["vectors"] + 1.0  # well-formed, its digest now wrong
    np.savez(tmp_path / "x.npz", **arrays)
    (tmp_path / "x.npz").replace(shard)
    vecs, found = cache.lookup(text_keys(texts))
    assert not found.any() and not shard.exists()
