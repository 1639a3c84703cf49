"""--train-dataset: training rows from a `datasets` dataset equal the same lines from a text file."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import torch
from helpers import SENTENCES, run_cli, train_config

from stsbench.data.training import read_train_dataset
from stsbench.errors import StsbenchError

datasets = pytest.importorskip("datasets")


def _run(files: Path, out: Path, **kw) -> tuple[list[dict], dict, dict]:
    from stsbench.train.loop import train

    train(train_config(files, out, max_steps=4, eval_steps=2, **kw), show_progress=False)
    log = [json.loads(ln) for ln in (out / "train_log.jsonl").read_text().splitlines()]
    state = torch.load(out / "last" / "state.pt", weights_only=True)["model"]
    return log, json.loads((out / "stsbench.json").read_text()), state


@pytest.mark.usefixtures("one_thread")
def test_a_saved_dataset_trains_as_the_same_lines_in_a_text_file(files, tmp_path):
    lines = (files / "train.txt").read_text().splitlines()
    folder = tmp_path / "ds"
    datasets.Dataset.from_dict({"id": list(range(len(lines))), "sentence": lines}).save_to_disk(str(folder))
    by_file, _, file_state = _run(files, tmp_path / "by-file", train_lines=20)
    by_set, meta, set_state = _run(
        files,
        tmp_path / "by-set",
        train_file=None,
        train_dataset=str(folder),
        text_column="sentence",
        train_lines=20,
    )
    losses = [
        (r["step"], r.get("loss"), r.get("dev_spearman")) for r in by_file if r["event"] in ("train", "eval")
    ]
    assert losses == [
        (r["step"], r.get("loss"), r.get("dev_spearman")) for r in by_set if r["event"] in ("train", "eval")
    ]
    assert len(losses) == 7  # 4 steps, dev at 0, 2, 4
    for name, value in file_state.items():
        torch.testing.assert_close(set_state[name], value, rtol=0, atol=0, msg=name)
    corpus = meta["resolution"]["corpus"]
    head = "".join(ln + "\n" for ln in lines[:20]).encode()
    assert corpus["sha256"] == hashlib.sha256(head).hexdigest()  # the text file's digest of those lines
    assert corpus["dataset"] == str(folder.resolve()) and corpus["columns"] == ["sentence"]
    assert (corpus["split"], corpus["rows"]) == (None, 20)  # Dataset.from_dict names no split
    assert corpus["fingerprint"] == datasets.load_from_disk(str(folder))._fingerprint
    assert meta["training"]["train_dataset"] == str(folder) and meta["training"]["train_file"] is None


def test_data_files_splits_and_sup_columns(tmp_path):
    rows = [
        {"sent0": SENTENCES[i], "sent1": SENTENCES[(i + 1) % 12], "hard_neg": SENTENCES[(i + 6) % 12]}
        for i in range(6)
    ]
    jsonl = tmp_path / "nli.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = read_train_dataset(str(jsonl))
    assert data.supervised and data.columns == ("sent0", "sent1", "hard_neg") and len(data) == 6
    assert data.rows[2] == (SENTENCES[2], SENTENCES[3], SENTENCES[8])
    one = read_train_dataset(str(jsonl), column="sent1", rows=4)
    assert not one.supervised and one.rows == [(SENTENCES[i],) for i in range(1, 5)]
    dd = datasets.DatasetDict(
        {
            "train": datasets.Dataset.from_dict({"text": SENTENCES[:4]}),
            "dev": datasets.Dataset.from_dict({"text": SENTENCES[4:7]}),
        }
    )
    dd.save_to_disk(str(tmp_path / "dd"))
    assert read_train_dataset(str(tmp_path / "dd")).rows == [(s,) for s in SENTENCES[:4]]
    dev = read_train_dataset(str(tmp_path / "dd"), split="dev")
    assert dev.rows == [(s,) for s in SENTENCES[4:7]] and dev.identity["split"] == "dev"
    with pytest.raises(StsbenchError, match="has splits train, dev; pick one with --train-split"):
        read_train_dataset(str(tmp_path / "dd"), split="test")
    with pytest.raises(StsbenchError, match="--text-column 'nope' is not a column of"):
        read_train_dataset(str(jsonl), column="nope")
    with pytest.raises(StsbenchError, match="cannot load it"):
        read_train_dataset(str(tmp_path / "absent-folder"))


def test_train_file_and_train_dataset_are_exclusive_in_one_line(files, tmp_path, capsys):
    base = ["train", "--method", "simcse", "--model", files / "tiny", "--output", tmp_path / "out"]
    code, _, err = run_cli([*base, "--train-file", files / "train.txt", "--train-dataset", tmp_path], capsys)
    assert code != 0 and "Traceback" not in err
    assert "--train-file and --train-dataset: give the training data by one of them" in err
    code, _, err = run_cli(base, capsys)
    assert code != 0 and "missing --train-file or --train-dataset" in err
    code, _, err = run_cli([*base, "--train-file", files / "train.txt", "--text-column", "x"], capsys)
    assert code != 0 and "--text-column reads a --train-dataset" in err
