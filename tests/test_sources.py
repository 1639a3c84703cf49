"""Caches keyed by the code that fills them: :mod:`stsbench.sources` and the keys built on it."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import SENTENCES, count_hf_encodes

from stsbench import sources


@pytest.fixture
def package(tmp_path) -> Path:
    """A copy of the stsbench package folder, to edit (the real tree is never touched)."""
    copy = tmp_path / "stsbench"
    shutil.copytree(sources.ROOT, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return copy


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + text)


def test_a_kinds_digest_follows_its_files_and_no_others(package):
    before = {k: sources.code_digest(k, package) for k in ("train", "evaluate", "report", "bootstrap", "embedding")}
    _append(package / "reports" / "render.py", "\nEDITED = 1  # an edit of the report's code\n")
    after = {k: sources.code_digest(k, package) for k in before}
    assert after["report"] != before["report"]
    assert {k: v for k, v in after.items() if k != "report"} == {k: v for k, v in before.items() if k != "report"}
    _append(package / "encoders" / "pooling.py", "\nEDITED = 1  # an edit of a built-in pooler's module\n")
    assert sources.code_digest("embedding", package) != before["embedding"]
    assert sources.code_digest("train", package) != before["train"]  # the trainer pools too
    _append(package / "stats" / "bootstrap.py", "\nEDITED = 1  # an edit of the resampling\n")
    assert sources.code_digest("bootstrap", package) != before["bootstrap"]
    with pytest.raises(ValueError, match="no code digest for 'nope'"):
        sources.code_digest("nope", package)


def test_the_closure_follows_lazy_and_named_imports_but_not_type_checking_ones(tmp_path):
    root = tmp_path / "stsbench"
    (root / "a").mkdir(parents=True)
    (root / "__init__.py").write_text("from stsbench import unused_api\n")
    (root / "unused_api.py").write_text("")
    (root / "a" / "__init__.py").write_text("")
    (root / "a" / "entry.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from stsbench import typing_only\n"
        "from . import sibling\n"
        "def later():\n    from stsbench.lazy import f\n"
        'TARGET = "stsbench.named:Thing"\n'
        "from stsbench import __version__\n"
    )
    for name in ("a/sibling.py", "lazy.py", "named.py", "typing_only.py"):
        (root / name).write_text("")
    found = {p.relative_to(root).as_posix() for p in sources.closure(["stsbench.a.entry"], root)}
    assert found == {"a/entry.py", "a/__init__.py", "a/sibling.py", "lazy.py", "named.py", "__init__.py"}


def test_a_lazy_package_reaches_the_modules_its_getattr_names(tmp_path):
    """train/config/__init__.py loads TrainConfig, make_config, finalize by a short module name ("options",
    "load", "resolve") in its PEP 562 __getattr__: no import statement names them, and the train key missed
    every training default and its resolution."""
    root = tmp_path / "stsbench"
    (root / "cfg").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "cfg" / "__init__.py").write_text(
        "import importlib\n"
        '_WHERE = {"Config": "options", "make": "load"}\n'
        "def __getattr__(name):\n"
        '    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)\n'
    )
    (root / "plain").mkdir()
    (root / "plain" / "__init__.py").write_text('WORDS = ["other"]\n')  # no __getattr__: a word is a word
    for name in ("cfg/options.py", "cfg/load.py", "cfg/unnamed.py", "plain/other.py"):
        (root / name).write_text("")
    (root / "entry.py").write_text("from stsbench.cfg import Config\nfrom stsbench.plain import WORDS\n")
    found = {p.relative_to(root).as_posix() for p in sources.closure(["stsbench.entry"], root)}
    assert found == {"entry.py", "cfg/__init__.py", "cfg/options.py", "cfg/load.py", "plain/__init__.py"}


def test_the_train_key_covers_the_training_config_and_the_embedding_key_what_maps_a_text():
    train = {p.relative_to(sources.ROOT).as_posix() for p in sources.closure(sources.ENTRIES["train"])}
    assert {"train/config/options.py", "train/config/resolve.py"} <= train
    bootstrap = {p.relative_to(sources.ROOT).as_posix() for p in sources.closure(sources.ENTRIES["bootstrap"])}
    assert {"stats/bootstrap.py", "tasks/intervals.py"} <= bootstrap  # intervals.py calls the draw


@pytest.mark.parametrize(
    "edited, changes",
    [
        ("encoders/resolve.py", True),  # position_limit: where a long text is cut
        # the pooler, normalisation and length a folder gets (EMBEDDING_CODE_VERSION 2); an in-memory model's encoder
        ("encoders/load.py", True),
        ("encoders/cache.py", False),  # stores vectors, checked by their own sha256: computes none
        ("reports/render.py", False),
    ],
)
def test_the_embedding_key_follows_the_files_that_map_a_text_to_a_vector(package, edited, changes):
    before = sources.code_digest("embedding", package)
    _append(package / edited, "\nEDITED = 1\n")
    assert (sources.code_digest("embedding", package) != before) is changes


def test_library_versions_are_major_minor_read_without_importing():
    import torch

    versions = sources.library_versions(("torch", "no-such-distribution"))
    assert versions == {"torch": ".".join(torch.__version__.split("+")[0].split(".")[:2]), "no-such-distribution": "absent"}


def test_the_bootstrap_replicates_key_follows_the_code_that_draws(package, monkeypatch):
    from stsbench.tasks import intervals

    pairs = type("Pairs", (), {})()
    pairs.cosine, pairs.gold = np.arange(6, dtype=np.float32), np.arange(6, dtype=np.float32)[::-1].copy()
    pairs.subset = np.zeros(6, dtype=np.int16)
    key = intervals._replicates_key("STS12", pairs, 100, 1)
    monkeypatch.setattr(sources, "ROOT", package)
    assert intervals._replicates_key("STS12", pairs, 100, 1) == key  # the same bytes: the same key
    _append(package / "stats" / "bootstrap.py", "\nEDITED = 1  # resampled otherwise\n")
    assert intervals._replicates_key("STS12", pairs, 100, 1) != key  # it was __version__'s, unchanged by edits


POOLER = '''
def toy(outputs, attention_mask):
    return outputs.last_hidden_state[:, 0] * {scale}
'''


def test_an_edited_plugin_pooler_is_never_answered_from_the_cache(tiny_bert, tmp_path, monkeypatch):
    """The cache was keyed on the pooler's name: a plugin pooler edited between two runs got its old vectors."""
    from stsbench.encoders import load_encoder
    from stsbench.encoders.pooling import POOLER_REGISTRY

    monkeypatch.syspath_prepend(str(tmp_path))
    module = tmp_path / "toy_pooler.py"
    cache = tmp_path / "cache"

    def encode(scale: float) -> np.ndarray:
        module.write_text(POOLER.format(scale=scale))
        # the two versions have one size and may share one mtime second: a bytecode file written for the first
        # (where PYTHONDONTWRITEBYTECODE is unset, as in CI) would be imported for the second
        shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)
        sys.modules.pop("toy_pooler", None)
        importlib.invalidate_caches()
        POOLER_REGISTRY.register("toy", importlib.import_module("toy_pooler").toy)
        try:
            enc = load_encoder(str(tiny_bert), pooler="toy", cache_dir=cache)
            return enc.encode(SENTENCES[:4])
        finally:
            POOLER_REGISTRY.unregister("toy")

    encoded = count_hf_encodes(monkeypatch)
    one = encode(1.0)
    assert np.array_equal(encode(1.0), one) and encoded == [4]  # unchanged code: answered from the cache
    two = encode(2.0)
    assert np.allclose(two, 2 * one, rtol=1e-5) and encoded == [4, 4]  # the edited pooler ran, not the cache


def test_the_docs_name_the_files_each_key_covers():
    """docs/evaluation.md says which files key the embeddings and the replicates: it names exactly these."""
    import re

    docs = (sources.ROOT.parent / "docs" / "evaluation.md").read_text()
    section = docs.split("### What each cache is keyed by", 1)[1].split("\n## ", 1)[0]
    embeddings = section.split("- **Embeddings**", 1)[1].split("\n- **", 1)[0]
    named = set(re.findall(r"`([a-z_]+\.py)`", embeddings))
    assert named == {Path(f).name for f in sources.EMBEDDING_FILES}
    for module in sources.ENTRIES["bootstrap"]:
        assert f"`stsbench/{module.split('.', 1)[1].replace('.', '/')}.py`" in section


GOLDEN_SOURCE = '''"""A module's docstring."""
import os  # a comment

RATE = 0.5


class Thing:
    """A class's docstring."""

    size: int = 3

    def double(self, x, *args, scale=2, **kw):
        "A function's docstring."
        if x is None:
            return f"{x!r:>4}" + b"raw".decode()
        return [y * scale for y in args if y] or {k: v for k, v in kw.items()}


async def later(t):
    async with t as u:
        await u
    return lambda: ...
'''
# the digest of GOLDEN_SOURCE's canonical tree: a change of the walk changes every recorded reproduce step's
# code, so it changes here first, on purpose, with a migration of the recorded steps
GOLDEN_DIGEST = "8a5f5ee732052cd6acb0f68f7b9b91459c11371cc4c347ca117e3e33bb9a8774"


def _tree_sha(source: str) -> str:
    import hashlib

    return hashlib.sha256(sources.tree_text(source).encode()).hexdigest()


def test_the_code_digest_is_the_tree_pinned_by_a_golden_digest():
    assert _tree_sha(GOLDEN_SOURCE) == GOLDEN_DIGEST
    documented = GOLDEN_SOURCE.replace("A class's docstring.", "Reworded, at length.\n\n    Another paragraph.")
    documented = documented.replace("# a comment", "# another comment") + "\n# a closing comment\n"
    assert _tree_sha(documented) == GOLDEN_DIGEST  # comments and docstrings are not what the code is
    assert _tree_sha(GOLDEN_SOURCE.replace("RATE = 0.5", "RATE = 0.25")) != GOLDEN_DIGEST  # a constant is
    assert _tree_sha(GOLDEN_SOURCE.replace("scale=2", "scale=3")) != GOLDEN_DIGEST
    assert _tree_sha(GOLDEN_SOURCE.replace("return lambda: ...", "return lambda: None")) != GOLDEN_DIGEST


def test_a_docstring_or_comment_edit_keeps_a_kinds_digest_and_a_constant_moves_it(package):
    before = sources.code_digest("report", package)
    render = package / "reports" / "render.py"
    text = render.read_text()
    render.write_text(text.replace('"""', '"""Reworded. ', 1) + "\n# a comment\n")
    assert sources.code_digest("report", package) == before
    render.write_text(text + "\nEDITED = 1\n")
    assert sources.code_digest("report", package) != before


def _other_pythons() -> list[Path]:
    """The other supported interpreters this machine has (pyenv's, or on PATH): 3.10 and newer."""
    import shutil as sh
    import subprocess

    found = []
    for version in ("3.10", "3.12", "3.13", "3.14"):
        if f"{sys.version_info.major}.{sys.version_info.minor}" == version:
            continue
        pyenv = sorted((Path.home() / ".pyenv" / "versions").glob(f"{version}.*/bin/python{version}"))
        for where in [*pyenv, sh.which(f"python{version}")]:  # a pyenv shim of a version not selected fails
            if where and subprocess.run([where, "-c", "pass"], capture_output=True).returncode == 0:
                found.append(Path(where))
                break
    return found


def test_the_tree_digest_is_the_same_on_every_supported_python(tmp_path):
    import subprocess

    pythons = _other_pythons()
    if not pythons:
        pytest.skip("no other supported Python on this machine (3.10, 3.12, 3.13)")
    (tmp_path / "golden.py").write_text(GOLDEN_SOURCE)
    script = (
        "import hashlib, importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('sources', {str(Path(sources.__file__))!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "print(hashlib.sha256(m.tree_text(open(sys.argv[1], 'rb').read()).encode()).hexdigest())\n"
        f"print(m.code_digest('report'))\n"
    )
    for python in pythons:
        golden = tmp_path / "golden.py"
        done = subprocess.run([python, "-c", script, golden], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == [GOLDEN_DIGEST, sources.code_digest("report")], python
