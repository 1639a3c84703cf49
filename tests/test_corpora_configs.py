"""Training corpora by name (resolved in the data folder, first N lines, identity in the run) and packaged configs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch
from helpers import run_cli_process, train_config

from stsbench.configs import config_names, find_config
from stsbench.data.corpora import CORPORA, Corpus, resolve_train_file
from stsbench.data.training import load_train_data, read_train_file
from stsbench.errors import StsbenchError
from stsbench.train.config import make_config

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture
def toy(tmp_path):
    """A corpus 'toy' of 30 lines (toy/full.txt) whose first 12 lines are also toy/head.txt."""
    lines = [f"sentence number {i} of the toy corpus ." for i in range(30)]
    root = tmp_path / "data"
    (root / "toy").mkdir(parents=True)
    (root / "toy" / "full.txt").write_text("\n".join(lines) + "\n")
    (root / "toy" / "head.txt").write_text("\n".join(lines[:12]) + "\n")
    CORPORA.register(
        "toy", Corpus("toy", "toy/full.txt", "https://example.org/toy.txt", "toy", (("toy/head.txt", 12),))
    )
    yield root
    CORPORA.unregister("toy")


def test_a_corpus_name_takes_the_smallest_file_that_holds_its_lines(toy):
    assert resolve_train_file("toy", 10, toy) == (toy / "toy" / "head.txt", "toy")
    assert resolve_train_file("toy", 12, toy) == (toy / "toy" / "head.txt", "toy")
    assert resolve_train_file("toy", 13, toy) == (toy / "toy" / "full.txt", "toy")
    assert resolve_train_file("toy", None, toy) == (toy / "toy" / "full.txt", "toy")
    # a file's path is itself, whatever the corpora
    assert resolve_train_file(str(toy / "toy" / "head.txt"), None, toy) == (toy / "toy" / "head.txt", None)


def test_the_same_lines_have_one_identity_whichever_file_holds_them(toy):
    head = read_train_file(toy / "toy" / "head.txt", corpus="toy")
    first = read_train_file(toy / "toy" / "full.txt", 12, corpus="toy")
    assert head.rows == first.rows and len(first) == 12
    assert head.identity["sha256"] == first.identity["sha256"]
    assert head.identity["sha256"] == hashlib.sha256((toy / "toy" / "head.txt").read_bytes()).hexdigest()
    assert (first.identity["name"], first.identity["lines"]) == ("toy", 12)
    assert read_train_file(toy / "toy" / "full.txt", 13).identity["sha256"] != head.identity["sha256"]


def test_missing_corpus_and_short_file_are_one_line(toy):
    (toy / "toy" / "full.txt").unlink()
    with pytest.raises(StsbenchError) as err:
        resolve_train_file("toy", 20, toy)
    msg = str(err.value)
    assert "\n" not in msg and "toy/full.txt" in msg and "https://example.org/toy.txt" in msg
    with pytest.raises(StsbenchError, match=r"holds 12 lines; --train-lines 20"):
        read_train_file(toy / "toy" / "head.txt", 20)
    with pytest.raises(StsbenchError, match=r"unknown corpus 'wiki1n'; did you mean 'wiki1m'"):
        resolve_train_file("wiki1n", None, toy)
    with pytest.raises(StsbenchError, match=r"stsbench data download --wiki --data-dir"):
        resolve_train_file("wiki1m", None, toy)


@pytest.mark.skipif(
    not (SHARED_DATA / "wiki" / "wiki1m_head.txt").is_file(), reason="../shared/data not beside"
)
def test_wiki1m_head_is_the_checked_in_replications_corpus():
    """The CPU configs read wiki1m's first 11,914 lines: the head file the replication trained on, whole."""
    from stsbench.data.integrity import load_manifest

    cfg = make_config({"output": "o", "data_dir": str(SHARED_DATA)}, "simcse-minilm-cpu")
    data = load_train_data(cfg)
    assert data.path == SHARED_DATA / "wiki" / "wiki1m_head.txt" and len(data) == 11914
    assert data.identity["sha256"] == load_manifest()["files"]["wiki/wiki1m_head.txt"]["sha256"]
    assert (data.identity["name"], data.identity["lines"]) == ("wiki1m", 11914)


def _two_steps(files: Path, out: Path, data_dir: Path, **kw) -> tuple[dict, dict]:
    from stsbench.train.loop import train

    train(
        train_config(files, out, data_dir=str(data_dir), max_steps=2, eval_steps=2, **kw), show_progress=False
    )
    state = torch.load(out / "last" / "state.pt", weights_only=True)["model"]
    return json.loads((out / "stsbench.json").read_text()), state


@pytest.mark.usefixtures("one_thread")
def test_a_run_on_a_corpus_name_trains_on_its_head_and_records_it(files, tmp_path):
    """`train_file: toy, train_lines: 12` from the full file = the 12-line head file given as a path."""
    lines = (files / "train.txt").read_text().splitlines()
    data = tmp_path / "data"
    (data / "toy").mkdir(parents=True)
    (data / "downstream").symlink_to(files / "data" / "downstream")  # STS-B dev for the run's evaluation
    (data / "toy" / "full.txt").write_text("\n".join(lines) + "\n")
    head = tmp_path / "head.txt"
    head.write_text("\n".join(lines[:12]) + "\n")
    CORPORA.register("toy", Corpus("toy", "toy/full.txt", "https://example.org/toy.txt", "toy"))
    try:
        meta, by_name = _two_steps(files, tmp_path / "by-name", data, train_file="toy", train_lines=12)
        _, by_path = _two_steps(files, tmp_path / "by-path", data, train_file=str(head))
    finally:
        CORPORA.unregister("toy")
    corpus = meta["resolution"]["corpus"]
    assert corpus == {
        "name": "toy",
        "file": str((data / "toy" / "full.txt").resolve()),
        "lines": 12,
        "sha256": hashlib.sha256(head.read_bytes()).hexdigest(),
    }
    assert meta["training"]["train_file"] == str((data / "toy" / "full.txt").resolve())
    assert meta["training"]["train_lines"] == 12
    for name, value in by_path.items():
        torch.testing.assert_close(by_name[name], value, rtol=0, atol=0, msg=name)


def test_every_packaged_config_loads_by_name_and_names_no_machine_path():
    names = config_names()
    assert {"simcse-bert-base-official", "esimcse-minilm-cpu", "mocose-bert-base-paper"} <= set(names)
    for name in names:
        cfg = make_config({"output": "o"}, name)
        assert cfg.train_file in CORPORA, (name, cfg.train_file)
        text = find_config(name).read_text(encoding="utf-8")
        assert "../shared" not in text and "/work/" not in text, name


def test_old_configs_paths_and_unknown_names(tmp_path):
    assert find_config("configs/simcse-minilm-cpu.yaml") == find_config("simcse-minilm-cpu")
    assert find_config("SimCSE-MiniLM-CPU.yaml") == find_config("simcse-minilm-cpu")
    own = tmp_path / "mine.yaml"
    own.write_text("method: simcse\n")
    assert find_config(own) == own
    with pytest.raises(
        StsbenchError,
        match=r"unknown config 'simcse-bert-base-offcial'; did you mean 'simcse-bert-base-official'",
    ):
        find_config("simcse-bert-base-offcial")
    with pytest.raises(StsbenchError, match=r"config file elsewhere/x.yaml does not exist"):
        find_config("elsewhere/x.yaml")


def test_cli_config_by_name_and_a_wrong_name(tmp_path):
    bad = run_cli_process(["train", "--config", "esimcse-bert-base-offical", "--output", str(tmp_path / "o")])
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    assert "did you mean 'esimcse-bert-base-official'" in bad.stderr
    missing = run_cli_process(
        [
            "train",
            "--config",
            "simcse-minilm-cpu",
            "--output",
            str(tmp_path / "o"),
            "--data-dir",
            str(tmp_path),
        ]
    )
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert "corpus wiki1m: no wiki/wiki1m_for_simcse.txt" in missing.stderr


def test_repository_configs_folder_points_at_the_package():
    root = Path(__file__).resolve().parents[1]
    assert not list((root / "configs").glob("*.yaml"))
    assert "stsbench/configs" in (root / "configs" / "README.md").read_text(encoding="utf-8")
