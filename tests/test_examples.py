"""The README's Python examples run offline as written; ``stsbench.model_path``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import ROOT, count_hf_encodes

import stsbench
from stsbench.encoders.resolve import embedded_model_path
from stsbench.errors import StsbenchError


def python_blocks(path: Path) -> list[str]:
    """The fenced ``python`` blocks of a Markdown file, in order."""
    return re.findall(r"^```python\n(.*?)^```", path.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_model_path_is_the_folder_that_model_names_load(tiny_bert, tmp_path):
    embedded = str(embedded_model_path())
    assert stsbench.model_path("all-MiniLM-L6-v2") == stsbench.model_path(
        "sentence-transformers/all-MiniLM-L6-v2"
    )
    assert stsbench.model_path("all-MiniLM-L6-v2") == embedded
    assert stsbench.model_path(str(tiny_bert)) == str(tiny_bert.resolve())
    with pytest.raises(StsbenchError, match="does not exist"):
        stsbench.model_path(str(tmp_path / "nowhere") + "/")


def test_the_readme_has_a_python_example_that_needs_no_hub():
    (block,) = python_blocks(ROOT / "README.md")
    assert "model_path(" in block and 'SentenceTransformer("sentence-transformers/' not in block


@pytest.mark.slow
def test_the_readme_python_example_runs_offline_and_reads_the_cache(monkeypatch, tmp_path):
    """As written, from the repository root (its ``../shared/data``), the hub out of reach, a fresh cache."""
    if not (ROOT.parent / "shared" / "data" / "downstream").is_dir():
        pytest.skip("the README's ../shared/data is not here")
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))
    encoded = count_hf_encodes(monkeypatch)
    namespace: dict = {}
    for block in python_blocks(ROOT / "README.md"):
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - the documented example itself
    run = namespace["run"]
    assert [r.reported for r in run.results] == [82.03]  # the README's STS-B figure, through the live model
    assert len(encoded) == 1  # the name's run encoded; the live SentenceTransformer read its cache
