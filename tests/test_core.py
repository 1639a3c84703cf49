"""Readers, cache, results files and the `stsbench run` CLI, including every kind of bad input."""

from __future__ import annotations

import json
import logging
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import REFERENCE, make_tiny_bert, run_cli

from stsbench.data.sts import STS_SUBSETS, load_pairs
from stsbench.encoders import POOLERS, load_encoder
from stsbench.encoders.hf import length_batches
from stsbench.evaluation.run import evaluate as run
from stsbench.metrics import cosine_pairs


def _oracle_module():
    sys.path.insert(0, str(REFERENCE))
    import senteval.sts

    return senteval.sts


@pytest.mark.parametrize(
    "task", ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]
)
def test_readers_give_the_forks_sentences(task, data_dir):
    sts = _oracle_module()
    root = data_dir / "downstream"
    if task.startswith("STS1"):
        ev = getattr(sts, f"{task}Eval")(str(root / "STS" / f"{task}-en-test"))
        ours = load_pairs(data_dir, task)
        for subset in STS_SUBSETS[task]:
            a, b, y = ev.data[subset]
            mine = ours.select(subset)
            got = sorted(zip(mine.sent1, mine.sent2, mine.gold.tolist(), strict=True))
            assert got == sorted(zip([" ".join(s) for s in a], [" ".join(s) for s in b], y, strict=True))
    else:
        cls = sts.STSBenchmarkEval if task == "STSBenchmark" else sts.SICKRelatednessEval
        ev = cls(str(root / ("STS/STSBenchmark" if task == "STSBenchmark" else "SICK")))
        for split in ("train", "dev", "test"):
            a, b, y = ev.data[split]
            mine = load_pairs(data_dir, task, split)
            assert mine.sent1 == [" ".join(s) for s in a] and mine.sent2 == [" ".join(s) for s in b]
            assert mine.gold.tolist() == y


def test_cosine_pairs_nan_and_zero_vectors_become_zero():
    a = np.array([[1.0, 0.0], [0.0, 0.0], [np.nan, 1.0], [3.0, 4.0]], dtype=np.float32)
    b = np.array([[1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [4.0, 3.0]], dtype=np.float32)
    np.testing.assert_allclose(cosine_pairs(a, b), [2**-0.5, 0.0, 1.0, 24 / 25], rtol=1e-12)


@pytest.fixture()
def sts16_data(tmp_path, data_dir) -> Path:
    """A writable copy of STS16 only: bad-input tests damage it."""
    dst = tmp_path / "data" / "downstream" / "STS" / "STS16-en-test"
    shutil.copytree(data_dir / "downstream" / "STS" / "STS16-en-test", dst)
    return tmp_path / "data"


def _run_args(model, data, out, cache, *extra):
    return [
        "run",
        "--model",
        model,
        "--tasks",
        "STS16",
        "--data-dir",
        data,
        "--output",
        out,
        "--cache-dir",
        cache,
        "-q",
        *extra,
    ]


def _one_error_line(code, err, *needles):
    lines = [ln for ln in err.strip().splitlines() if ln.strip()]
    assert code != 0
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    for n in needles:
        assert n in lines[0], lines[0]
    assert "Traceback" not in err


def _damage(path: Path, how: str) -> None:
    lines = path.read_bytes().split(b"\n")
    if how == "truncate":
        path.write_bytes(b"\n".join(lines[: len(lines) // 2]) + b"\n")
    elif how == "non-numeric":
        lines[3] = b"four point five"
        path.write_bytes(b"\n".join(lines))
    elif how == "no-tab":
        lines[6] = lines[6].replace(b"\t", b" ")
        path.write_bytes(b"\n".join(lines))
    elif how == "non-utf8":
        lines[9] = lines[9] + b" caf\xe9"
        path.write_bytes(b"\n".join(lines))


@pytest.mark.parametrize(
    ("file", "how", "needle"),
    [
        ("STS.gs.headlines.txt", "truncate", "STS.gs.headlines.txt"),
        ("STS.gs.headlines.txt", "non-numeric", "STS.gs.headlines.txt:4"),
        ("STS.input.headlines.txt", "no-tab", "STS.input.headlines.txt:7"),
        ("STS.input.headlines.txt", "non-utf8", "STS.input.headlines.txt:10"),
    ],
)
def test_bad_data_file_one_line_and_no_results(file, how, needle, sts16_data, tiny_bert, tmp_path, capsys):
    _damage(sts16_data / "downstream" / "STS" / "STS16-en-test" / file, how)
    out = tmp_path / "out"
    # past the manifest's refusal (tests/test_data_integrity.py) to the reader's line-level error
    extra = ("--pooler", "avg", "--allow-modified-data")
    code, _, err = run_cli(_run_args(tiny_bert, sts16_data, out, tmp_path / "c", *extra), capsys)
    _one_error_line(code, err, needle)
    assert not out.exists() or not list(out.rglob("*.json"))


def test_missing_data_dir_and_missing_file(sts16_data, tiny_bert, tmp_path, capsys):
    code, _, err = run_cli(_run_args(tiny_bert, tmp_path / "nowhere", tmp_path / "o", tmp_path / "c"), capsys)
    _one_error_line(code, err, "nowhere", "stsbench data download")
    (sts16_data / "downstream" / "STS" / "STS16-en-test" / "STS.gs.plagiarism.txt").unlink()
    code, _, err = run_cli(
        _run_args(tiny_bert, sts16_data, tmp_path / "o", tmp_path / "c", "--pooler", "avg"), capsys
    )
    _one_error_line(code, err, "STS.gs.plagiarism.txt", "missing")


@pytest.mark.parametrize(
    ("extra", "needles"),
    [
        (["--tasks", "STS99"], ["unknown task 'STS99'", "STS12"]),
        (["--pooler", "max"], ["unknown pooler 'max'", "avg_first_last"]),
        (["--mode", "train"], ["train"]),
        (["--dtype", "float64"], ["float64", "bfloat16"]),
    ],
)
def test_unknown_names(extra, needles, sts16_data, tiny_bert, tmp_path, capsys):
    args = _run_args(tiny_bert, sts16_data, tmp_path / "o", tmp_path / "c") + extra
    code, out, err = run_cli(args, capsys)
    assert code != 0
    text = err + out
    for n in needles:
        assert n in text
    assert "Traceback" not in text


def test_bad_models(sts16_data, tmp_path, capsys):
    out = tmp_path / "out"
    code, _, err = run_cli(_run_args(tmp_path / "no" / "such-model", sts16_data, out, tmp_path / "c"), capsys)
    _one_error_line(code, err, "does not exist")
    broken = make_tiny_bert(tmp_path / "broken")
    weights = broken / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:5000])
    code, _, err = run_cli(_run_args(broken, sts16_data, out, tmp_path / "c", "--pooler", "avg"), capsys)
    _one_error_line(code, err, "corrupt", str(broken))
    nan = make_tiny_bert(tmp_path / "nan-model", nan=True)
    code, _, err = run_cli(_run_args(nan, sts16_data, out, tmp_path / "c", "--pooler", "avg"), capsys)
    _one_error_line(code, err, "NaN")
    assert not out.exists() or not list(out.rglob("*.json"))


def test_dtype_is_recorded_keys_the_cache_and_moves_scores_little(sts16_data, tiny_bert, tmp_path, capsys):
    files = {}
    for dtype in ("float32", "bfloat16"):
        out = tmp_path / dtype
        args = _run_args(tiny_bert, sts16_data, out, tmp_path / "c", "--pooler", "avg", "--dtype", dtype)
        code, _, err = run_cli([*args, "--format", "json"], capsys)
        assert code == 0, err
        files[dtype] = json.loads(next(out.rglob("STS16*.json")).read_text())
    f32, b16 = files["float32"], files["bfloat16"]
    assert (f32["model"]["dtype"], b16["model"]["dtype"]) == ("float32", "bfloat16")
    assert f32["model"]["fingerprint"] != b16["model"]["fingerprint"]  # the cache keeps them apart
    assert f32["reported"] != b16["reported"] and abs(f32["reported"] - b16["reported"]) < 2.0


def _strip_volatile(d: dict) -> dict:
    d = json.loads(json.dumps(d))
    d["provenance"].pop("created_at")
    d["provenance"].pop("timings")
    return d


def test_same_command_twice_same_files_and_cache_reuse(sts16_data, tiny_bert, tmp_path, capsys):
    out = tmp_path / "out"
    args = _run_args(tiny_bert, sts16_data, out, tmp_path / "c", "--pooler", "avg", "--format", "json")
    code, first_out, _ = run_cli(args, capsys)
    assert code == 0
    (path,) = list(out.rglob("*.json"))
    first = json.loads(path.read_text())
    code, second_out, _ = run_cli(args, capsys)
    assert code == 0 and first_out == second_out
    assert _strip_volatile(first) == _strip_volatile(json.loads(path.read_text()))
    printed = json.loads(first_out)
    assert printed["scores"]["STS16"] == first["reported"] and printed["averages"]["STS"] == first["reported"]
    assert first["metric"] == "spearman_all" and set(first["scores"]["subsets"]) == set(STS_SUBSETS["STS16"])
    assert first["model"]["fingerprint"] and first["provenance"]["data_files"]


def test_cache_hits_and_corrupt_entries(tiny_bert, data_dir, tmp_path, caplog):
    cache = tmp_path / "cache"
    a = run(str(tiny_bert), "STS13", data_dir=data_dir, pooler="avg", cache_dir=cache, show_progress=False)
    enc = load_encoder(str(tiny_bert), pooler="avg", cache_dir=cache)
    b = run(str(tiny_bert), "STS13", data_dir=data_dir, pooler="avg", cache_dir=cache, show_progress=False)
    assert [r.scores for r in a.results] == [r.scores for r in b.results]
    shards = list(cache.rglob("*.npz"))
    assert len(shards) == 1
    texts = ["a man is playing a guitar .", "two dogs run"]
    enc.encode(texts, show_progress=False)
    assert enc.inner.n_encoded == 2  # only the new texts went through the network
    enc.encode(texts + ["two dogs run"], show_progress=False)
    assert enc.inner.n_encoded == 2
    truncated = list(cache.rglob("*.npz"))
    for shard in truncated:  # truncate every shard: detected, dropped, recomputed
        shard.write_bytes(shard.read_bytes()[:1000])
    c = run(str(tiny_bert), "STS13", data_dir=data_dir, pooler="avg", cache_dir=cache, show_progress=False)
    assert [r.scores for r in c.results] == [r.scores for r in a.results]
    corrupt = [r for r in caplog.records if "is corrupt; it is removed and recomputed" in r.getMessage()]
    assert [(r.name, r.levelno) for r in corrupt] == [("stsbench.encoders.cache", logging.WARNING)] * len(
        truncated
    )


def test_library_notes_are_log_records_the_cli_prints_as_notes(
    sts16_data, tiny_bert, tmp_path, capsys, caplog
):
    caplog.set_level(logging.INFO, logger="stsbench")
    load_encoder(str(tiny_bert), use_cache=False)  # a plain HF model: SimCSE's default pooler, with a note
    assert [(r.name, r.levelno) for r in caplog.records] == [("stsbench.encoders", logging.INFO)]
    capsys.readouterr()  # (where an earlier CLI call in this process installed its handler, it printed too)
    code, _, err = run_cli(_run_args(tiny_bert, sts16_data, tmp_path / "o", tmp_path / "c"), capsys)
    assert code == 0
    assert err.splitlines() == [
        f"note: {tiny_bert} declares no pooling; using SimCSE's default --pooler cls (unsupervised "
        "SimCSE/ESimCSE checkpoints need --pooler cls_before_pooler)"
    ]


def test_length_batches_cover_every_row_once_and_pad_only_short_runs():
    lengths = [5] * 40 + [4] * 3 + [3] * 2 + [2] * 70 + list(range(30, 6, -1))
    batches = length_batches(lengths, 32)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(len(b) <= 32 for b in batches)
    widths = [max(lengths[i] for i in b) for b in batches]
    assert widths == sorted(widths, reverse=True)  # longest first
    padded = [b for b in batches if len({lengths[i] for i in b}) > 1]
    # runs of at least 32 // 8 rows get batches of their own; the 24 lengths of one row and the runs
    # of 3 and 2 rows share padded batches instead of running as 26 tiny ones
    assert all(len({lengths[i] for i in b}) == 1 for b in batches if lengths[b[0]] in (5, 2))
    assert 0 < len(padded) <= 3 and len(batches) <= 10


def test_texts_that_tokenize_alike_run_once_and_keep_their_places(tiny_bert):
    enc = load_encoder(str(tiny_bert), pooler="avg", use_cache=False)
    texts = ["Inc . rose", "the cat sat", "inc. rose", "INC . ROSE"]
    v = enc.encode(texts, show_progress=False)
    assert enc.n_encoded == 2  # the uncased vocabulary makes three of them one token sequence
    np.testing.assert_array_equal(v[0], v[2])
    np.testing.assert_array_equal(v[0], v[3])
    alone = enc.encode(["the cat sat"], show_progress=False)
    np.testing.assert_allclose(v[1], alone[0], atol=1e-6)


def test_fingerprint_depends_on_pooler_length_and_weights(tiny_bert, tmp_path):
    fp = {p: load_encoder(str(tiny_bert), pooler=p, use_cache=False).info.fingerprint for p in ("avg", "cls")}
    assert fp["avg"] != fp["cls"]
    assert (
        load_encoder(str(tiny_bert), pooler="avg", max_length=16, use_cache=False).info.fingerprint
        != fp["avg"]
    )
    other = make_tiny_bert(tmp_path / "other", seed=1)
    assert load_encoder(str(other), pooler="avg", use_cache=False).info.fingerprint != fp["avg"]


@pytest.mark.slow  # the real all-MiniLM-L6-v2
def test_embedded_model_declares_mean_pooling_and_normalises():
    enc = load_encoder("sentence-transformers/all-MiniLM-L6-v2", use_cache=False)
    assert (
        enc.info.pooler == "avg" and enc.info.kind == "sentence-transformers" and enc.info.max_length == 256
    )
    v = enc.encode(["a cat sits on the mat", "stocks fell sharply"], show_progress=False)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_data_verify_detects_a_changed_file(data_dir, tmp_path, capsys):
    code, out, _ = run_cli(["data", "verify", "--data-dir", data_dir], capsys)
    assert code == 0 and "match the manifest" in out
    copy = tmp_path / "d"
    shutil.copytree(data_dir / "downstream", copy / "downstream")
    gs = copy / "downstream" / "STS" / "STS16-en-test" / "STS.gs.headlines.txt"
    gs.write_bytes(gs.read_bytes().replace(b"4", b"3", 1))
    code, out, err = run_cli(["data", "verify", "--data-dir", copy], capsys)
    assert code == 2 and "STS.gs.headlines.txt" in out and err.startswith("error: 1 of")


def test_download_offline_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("stsbench.paths.hub_offline_reason", lambda: "no connection to huggingface.co: test")
    code, _, err = run_cli(["data", "download", "--data-dir", tmp_path / "d"], capsys)
    _one_error_line(code, err, "senteval.tar", "DATA_DIR/downstream")
    assert not (tmp_path / "d" / "downstream").exists()


def test_tables_piped_to_a_file_are_not_cut_to_80_columns(capsys):
    from rich.table import Table

    from stsbench.commands._options import table_console

    table = Table()
    for name in ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness", "Avg."]:
        table.add_column(name, justify="right", no_wrap=True)
    table.add_row(*["78.87"] * 8)
    table_console().print(table)  # stdout is captured here, as in a pipe: not a terminal
    out = capsys.readouterr().out
    assert "Avg." in out and out.count("78.87") == 8 and "…" not in out


@pytest.mark.parametrize("order", ["default first", "explicit first"])
def test_warm_cache_gives_the_no_cache_vectors_for_every_pooler(tmp_path, order):
    """An explicit pooler on a normalising model once shared the default run's cache key."""

    model = "sentence-transformers/all-MiniLM-L6-v2"
    texts = ["a cat sits on the mat", "stocks fell sharply", "a man plays a guitar ."]
    choices = [None, *POOLERS]  # None: the pooling the model declares (mean, then Normalize)
    if order == "explicit first":
        choices = choices[::-1]
    cache = tmp_path / "cache"
    for p in choices:  # every run warms the cache in turn, so each later one meets the others' entries
        load_encoder(model, pooler=p, cache_dir=cache).encode(texts, show_progress=False)
    for p in choices:
        warm = load_encoder(model, pooler=p, cache_dir=cache).encode(texts, show_progress=False)
        cold = load_encoder(model, pooler=p, use_cache=False).encode(texts, show_progress=False)
        np.testing.assert_allclose(warm, cold, atol=1e-6, err_msg=f"pooler {p}")
    raw = load_encoder(model, pooler="avg", cache_dir=cache).encode(texts, show_progress=False)
    assert not np.allclose(np.linalg.norm(raw, axis=1), 1.0, atol=1e-3)  # explicit avg: the raw mean
