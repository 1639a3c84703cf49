"""Caches of digests and of computed copies keyed by everything they depend on: the data digests' memo, the code memo, the augmentation cache."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

import pytest

from stsbench import sources

KINDS = ("report", "train")


@pytest.fixture()
def memo(tmp_path, monkeypatch):
    """The code memo in a fresh cache folder; call the fixture's value to forget it in this process."""
    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))

    def new_process() -> None:
        monkeypatch.setattr(sources, "_MEMO", {})
        monkeypatch.setattr(sources, "_MEMO_STATE", {"read": None, "dirty": False})
        sources._parsed.cache_clear()

    new_process()
    yield new_process
    sources._parsed.cache_clear()


def test_a_memo_another_digester_wrote_is_discarded_so_warm_and_cold_agree(memo, tmp_path):
    cold = {kind: sources.code_digest(kind) for kind in KINDS}
    where = tmp_path / "cache" / sources.MEMO_FILE
    stored = json.loads(where.read_text(encoding="utf-8"))
    assert stored["digester"] == hashlib.sha256(Path(sources.__file__).read_bytes()).hexdigest()
    # a warm machine whose memo an earlier digester filled: other trees, no imports, for these very bytes
    stale = {k: ("0" * 64 if k.startswith("tree:") else []) for k in stored if k != "digester"}
    assert sum(k.startswith("tree:") for k in stale) > 10
    where.write_text(json.dumps({**stale, "digester": "an earlier sources.py"}), encoding="utf-8")
    memo()
    assert {kind: sources.code_digest(kind) for kind in KINDS} == cold
    assert json.loads(where.read_text(encoding="utf-8"))["digester"] == stored["digester"]  # rewritten
    where.unlink()
    memo()
    assert {kind: sources.code_digest(kind) for kind in KINDS} == cold


def test_a_memo_this_digester_wrote_is_reused_without_parsing(memo, monkeypatch):
    cold = {kind: sources.code_digest(kind) for kind in KINDS}
    memo()

    def no_parse(*args, **kwargs):
        raise AssertionError("parsed a file the memo holds")

    monkeypatch.setattr(sources.ast, "parse", no_parse)
    assert {kind: sources.code_digest(kind) for kind in KINDS} == cold


@pytest.fixture()
def sha_cache(tmp_path, monkeypatch):
    """The data sha256 cache in a fresh folder; call the fixture's value to read it afresh (a new process)."""
    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))

    def new_process() -> None:
        monkeypatch.setattr(sources, "_STAMPS", {})
        monkeypatch.setattr(sources, "_STAMPS_READ", set())

    new_process()
    return new_process


def test_a_same_size_edit_with_its_mtime_set_back_is_hashed_again(sha_cache, tmp_path):
    gs = tmp_path / "STS.gs.txt"
    gs.write_bytes(b"4.0\n2.5\n")
    before = gs.stat()
    assert sources.sha256_files([gs])[gs] == hashlib.sha256(b"4.0\n2.5\n").hexdigest()
    time.sleep(0.05)  # the kernel's ctime clock is coarse (a few ms): let it tick past the first stat
    gs.write_bytes(b"3.0\n2.5\n")
    os.utime(gs, ns=(before.st_atime_ns, before.st_mtime_ns))  # as touch -r and cp -p do
    after = gs.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert sources.sha256_files([gs])[gs] == hashlib.sha256(b"3.0\n2.5\n").hexdigest()  # this process
    sha_cache()
    assert sources.sha256_files([gs])[gs] == hashlib.sha256(b"3.0\n2.5\n").hexdigest()  # the disk cache


def test_a_file_replaced_by_a_same_size_one_with_its_mtime_is_hashed_again(sha_cache, tmp_path):
    gs, new = tmp_path / "STS.gs.txt", tmp_path / "copy.txt"
    gs.write_bytes(b"4.0\n")
    assert sources.sha256_files([gs])[gs] == hashlib.sha256(b"4.0\n").hexdigest()
    new.write_bytes(b"3.0\n")
    before = gs.stat()
    os.utime(new, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(new, gs)
    assert gs.stat().st_ino != before.st_ino and gs.stat().st_mtime_ns == before.st_mtime_ns
    sha_cache()
    assert sources.sha256_files([gs])[gs] == hashlib.sha256(b"3.0\n").hexdigest()


def _typos(tmp_path, dictionary):
    """The ``typos`` augmentation as a run builds it (a model name only: the key reads no model)."""
    from stsbench.train.augment.base import build_augmentation
    from stsbench.train.config import make_config

    cfg = make_config(
        {
            "method": "mocose",
            "model": "bert-base-uncased",
            "train_file": str(tmp_path / "train.txt"),
            "output": str(tmp_path / "out"),
            "augment": "typos",
            "typos_dict": str(dictionary),
        }
    )
    return build_augmentation("typos", cfg, None)


def test_the_augmentation_cache_is_keyed_by_the_dictionary_content_and_the_code(tmp_path, monkeypatch):
    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))
    dictionary = tmp_path / "typos.txt"
    dictionary.write_text("playing plaaying\n")
    first = _typos(tmp_path, dictionary).cache_folder()
    assert _typos(tmp_path, dictionary).cache_folder() == first  # the same inputs, the same folder
    assert first.parent == tmp_path / "cache" / "augment" and first.name.startswith("typos-")
    dictionary.write_text("playing pllaying\n")  # same path, other content
    edited = _typos(tmp_path, dictionary).cache_folder()
    assert edited != first
    real = sources.source_digest
    monkeypatch.setattr(
        sources,
        "source_digest",
        lambda *a, **k: "other code" if "train/augment/text.py" in a else real(*a, **k),
    )
    assert _typos(tmp_path, dictionary).cache_folder() != edited
