"""Model folders that would evaluate wrong are refused; an export killed midway keeps a whole checkpoint."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from export_worker import export
from helpers import SENTENCES, make_tiny_bert, one_line, run_cli, shared_once

from stsbench.encoders import load_encoder
from stsbench.encoders.resolve import embedded_model_path, resolve_model
from stsbench.errors import StsbenchError

WORKER = Path(__file__).with_name("export_worker.py")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json")


def _copy(src: Path, dst: Path, drop: tuple[str, ...] = ()) -> Path:
    shutil.copytree(src, dst)
    for name in drop:
        (dst / name).unlink(missing_ok=True)  # transformers 5 saves tokenizer.json and its config alone
    return dst


# tokenizer_config.json left, the vocabulary gone: transformers 5 builds a 5-token tokenizer from it (every word
# [UNK]), transformers 4 fails to build one; either way the folder must be refused in one line naming it
LOST_VOCABULARY = ("tokenizer.json", "vocab.txt")


def _lost_vocabulary(exc: pytest.ExceptionInfo, folder: Path) -> str:
    import transformers

    msg = one_line(exc, str(folder))
    if int(transformers.__version__.split(".")[0]) >= 5:
        assert "the tokenizer holds 5 tokens for the model's 30522 embeddings" in msg
    return msg


def test_a_folder_without_tokenizer_files_is_refused_in_one_line(tiny_bert, data_dir, tmp_path, capsys):
    """The issue's case: transformers 5 loads an empty 5-token vocabulary, every word [UNK], rc 0."""
    bare = _copy(tiny_bert, tmp_path / "no-tokenizer", TOKENIZER_FILES)
    out = tmp_path / "out"
    args = ["run", "--model", bare, "--tasks", "sts16", "--data-dir", data_dir, "-o", out, "--no-cache", "-q"]
    code, _, err = run_cli(args, capsys)
    assert code == 2
    assert err.splitlines() == [
        f"error: {bare} has no tokenizer (none of tokenizer.json, vocab.txt, vocab.json, tokenizer_config.json, "
        "*.model); every word would become [UNK]: re-download or re-save the model (a checkpoint: re-run its "
        "`stsbench train` with --resume)"
    ]
    assert not out.exists() or not list(out.rglob("*.json"))


def test_training_from_a_backbone_without_its_tokenizer_is_refused(tiny_bert, tmp_path):
    from stsbench.train.model import load_backbone, resolve_backbone

    bare = _copy(tiny_bert, tmp_path / "no-tokenizer", TOKENIZER_FILES)
    with pytest.raises(StsbenchError) as exc:
        resolve_backbone(str(bare))
    one_line(exc, f"{bare} has no tokenizer")
    config_only = _copy(tiny_bert, tmp_path / "config-only", LOST_VOCABULARY)
    with pytest.raises(StsbenchError) as exc:
        load_backbone(resolve_backbone(str(config_only)))
    _lost_vocabulary(exc, config_only)


def test_a_tokenizer_that_lost_its_vocabulary_is_refused_before_the_weights_load(tiny_bert, tmp_path):
    config_only = _copy(tiny_bert, tmp_path / "config-only", LOST_VOCABULARY)
    with pytest.raises(StsbenchError) as exc:
        load_encoder(str(config_only), pooler="avg", use_cache=False).encode(SENTENCES[:2])
    _lost_vocabulary(exc, config_only)
    # a vocab.txt cut short (a copy or download that stopped), read by the slow tokenizer
    truncated = _copy(tiny_bert, tmp_path / "truncated", ("tokenizer.json",))
    words = (embedded_model_path() / "vocab.txt").read_text(encoding="utf-8").splitlines()
    (truncated / "vocab.txt").write_text("\n".join(words[:20000]) + "\n", encoding="utf-8")
    with pytest.raises(StsbenchError) as exc:
        load_encoder(str(truncated), pooler="avg", use_cache=False).encode(SENTENCES[:2])
    one_line(exc, "holds 20000 tokens for the model's 30522 embeddings")
    # a tokenizer a few rows short of the embeddings (padded matrices, T5 32,100 of 32,128) is fine
    (truncated / "vocab.txt").write_text("\n".join(words[:30000]) + "\n", encoding="utf-8")
    assert load_encoder(str(truncated), pooler="avg", use_cache=False).encode(SENTENCES[:2]).shape == (2, 32)


def test_token_ids_past_the_embeddings_are_one_line(tmp_path):
    """A tokenizer of a bigger vocabulary than the weights: one line naming the text, not torch's IndexError."""
    model = make_tiny_bert(tmp_path / "small-vocab")
    cfg = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**cfg, "vocab_size": 29000}))
    from safetensors.torch import load_file, save_file

    weights = load_file(model / "model.safetensors")
    weights["embeddings.word_embeddings.weight"] = weights["embeddings.word_embeddings.weight"][
        :29000
    ].clone()
    save_file(weights, model / "model.safetensors", metadata={"format": "pt"})
    enc = load_encoder(str(model), pooler="avg", use_cache=False)
    assert enc.encode(["a man is playing a guitar ."]).shape == (1, 32)  # ids below 29000
    with pytest.raises(StsbenchError) as exc:
        enc.encode(["an agile man"])  # "agile" is word piece 29003
    one_line(exc, "token id 29003", "past the model's 29000 embeddings", "'an agile man'")


def _st_folder(
    tiny_bert: Path, dst: Path, pooling: bool, mode: str = "mean", drop: tuple[str, ...] = ()
) -> Path:
    folder = _copy(tiny_bert, dst, drop)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
        {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"},
    ]
    (folder / "modules.json").write_text(json.dumps(modules))
    if pooling:
        (folder / "1_Pooling").mkdir()
        (folder / "1_Pooling" / "config.json").write_text(
            json.dumps({"word_embedding_dimension": 32, f"pooling_mode_{mode}_tokens": True})
        )
    return folder


def test_a_module_folder_that_modules_json_names_must_exist(tiny_bert, tmp_path):
    with pytest.raises(StsbenchError) as exc:
        resolve_model(str(_st_folder(tiny_bert, tmp_path / "no-pooling", pooling=False)))
    one_line(exc, "modules.json names the module folder 1_Pooling/, which is missing")
    # Normalize saves nothing: all-MiniLM-L6-v2 names a 2_Normalize it does not ship, and loads
    assert resolve_model(str(_st_folder(tiny_bert, tmp_path / "st", pooling=True))).pooler == "avg"
    assert resolve_model("all-MiniLM-L6-v2").normalize


def test_a_stack_sentence_transformers_runs_is_checked_for_its_vocabulary_too(tiny_bert, tmp_path):
    """Max pooling goes through SentenceTransformer.encode: its tokenizer is checked once it has loaded."""
    folder = _st_folder(tiny_bert, tmp_path / "max", pooling=True, mode="max", drop=LOST_VOCABULARY)
    with pytest.raises(StsbenchError) as exc:
        enc = load_encoder(str(folder), use_cache=False)
        assert enc.info.pooler == "declared"
        enc.encode(SENTENCES[:2])
    _lost_vocabulary(exc, folder)


LONG = " ".join(SENTENCES * 4)  # 40 words, some 120 word pieces


def test_max_length_past_the_positions_is_clamped_with_a_note(tmp_path, caplog):
    model = make_tiny_bert(tmp_path / "tiny-64", max_positions=64)
    caplog.set_level(logging.INFO, logger="stsbench")
    huge = load_encoder(str(model), pooler="avg", max_length=100_000_000, use_cache=False)
    notes = [r.getMessage() for r in caplog.records]
    assert notes == [f"--max-length 100000000 is more than {model} reads (64 tokens); truncating at 64"]
    assert huge.info.max_length == 64
    capped = load_encoder(str(model), pooler="avg", max_length=64, use_cache=False)
    assert huge.info.fingerprint == capped.info.fingerprint
    np.testing.assert_array_equal(huge.encode([LONG, SENTENCES[0]]), capped.encode([LONG, SENTENCES[0]]))


def test_max_length_past_the_positions_through_the_cli(tmp_path, data_dir, capsys):
    model = make_tiny_bert(tmp_path / "tiny-16", max_positions=16)
    args = ["run", "--model", model, "--tasks", "sts16", "--data-dir", data_dir, "--pooler", "avg", "-q"]
    code, _, err = run_cli([*args, "-o", tmp_path / "o", "--no-cache", "--max-length", "100000000"], capsys)
    assert code == 0, err
    assert f"note: --max-length 100000000 is more than {model} reads (16 tokens); truncating at 16" in err


def test_roberta_positions_stop_two_short_of_the_table(tokenizer, tmp_path, caplog):
    """RoBERTa numbers positions from pad_token_id + 1: 34 rows read 32 tokens, with or without --max-length."""
    import torch
    from transformers import RobertaConfig, RobertaModel

    torch.manual_seed(0)
    cfg = RobertaConfig(
        vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
        max_position_embeddings=34, pad_token_id=1,
    )  # fmt: skip
    folder = tmp_path / "tiny-roberta"
    RobertaModel(cfg).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    caplog.set_level(logging.INFO, logger="stsbench")
    plain = load_encoder(str(folder), pooler="avg", use_cache=False).encode([LONG])
    asked = load_encoder(str(folder), pooler="avg", max_length=33, use_cache=False)
    assert "truncating at 32" in caplog.records[-1].getMessage()
    np.testing.assert_array_equal(asked.encode([LONG]), plain)


# --- an export killed midway (a real process, ended by os._exit: nothing cleans up after it) -------------------


def _digests(folder: Path) -> dict[str, str]:
    """sha256 of every file of the checkpoint (the run's own log and state aside)."""
    return {
        str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(folder.rglob("*"))
        if f.is_file() and not f.relative_to(folder).parts[0].startswith(".")
    }


def _export_in_a_process(out: Path, tiny: Path, seed: int, kill: str) -> None:
    proc = subprocess.run(
        [sys.executable, str(WORKER), str(out), str(tiny), str(seed), kill], capture_output=True, text=True
    )
    assert proc.returncode == 3, proc.stderr[-2000:]


def test_an_export_killed_after_its_weights_land_keeps_the_previous_checkpoint(tiny_bert, tmp_path):
    out = tmp_path / "run"
    export(out, tiny_bert, seed=1)
    before = _digests(out)
    vectors = load_encoder(str(out), use_cache=False).encode(SENTENCES)
    _export_in_a_process(out, tiny_bert, seed=2, kill="weights")
    assert (out / ".export-tmp" / "model.safetensors").is_file()  # the new weights had landed
    assert _digests(out) == before
    np.testing.assert_array_equal(load_encoder(str(out), use_cache=False).encode(SENTENCES), vectors)
    # the next export clears the leftover (none of it may reach the checkpoint) and replaces the checkpoint whole
    (out / ".export-tmp" / "pytorch_model.bin").write_bytes(b"stale")
    export(out, tiny_bert, seed=2)
    fresh = tmp_path / "fresh"
    export(fresh, tiny_bert, seed=2)
    assert not (out / ".export-tmp").exists() and _digests(out) == _digests(fresh) != before


@pytest.fixture(scope="module")
def killed_among_renames(tiny_bert, tmp_path_factory) -> Path:
    """A run folder (seed 1's checkpoint, a saved state) whose export of seed 2 was killed after 3 renames."""
    from stsbench.train.checkpoint import LAST, STATE_FILE

    def make(out: Path) -> None:
        export(out, tiny_bert, seed=1)
        (out / LAST).mkdir()
        (out / LAST / STATE_FILE).write_bytes(b"state")
        _export_in_a_process(out, tiny_bert, seed=2, kill="commit-3")

    return shared_once(tmp_path_factory, "export-killed-among-renames", make)


@pytest.mark.parametrize("finish", ["resume", "next export"])
def test_an_export_killed_among_its_renames_is_refused_until_finished(
    finish, killed_among_renames, tiny_bert, data_dir, tmp_path, capsys
):
    from stsbench.train.checkpoint import LAST, prepare_output

    out = shutil.copytree(killed_among_renames, tmp_path / "run")  # each test finishes its own copy
    args = ["run", "--model", out, "--tasks", "sts16", "--data-dir", data_dir]
    code, _, err = run_cli([*args, "-o", tmp_path / "o", "--no-cache"], capsys)
    assert code == 2
    assert err.splitlines() == [
        f"error: {out}: an export stopped while moving the new checkpoint's files into place (.export-ready/ is "
        "left), so the folder holds part of it; re-run its `stsbench train` command with --resume to finish it"
    ]
    if finish == "resume":  # the interrupted export is finished: the checkpoint is seed 2's, whole
        prepare_output(out, resume=True, overwrite=False)
        seed = 2
    else:  # the next export finishes it, then replaces it
        seed = 3
        export(out, tiny_bert, seed=seed)
    fresh = tmp_path / "fresh"
    export(fresh, tiny_bert, seed=seed)
    assert not (out / ".export-ready").exists()
    assert {k: v for k, v in _digests(out).items() if not k.startswith(LAST)} == _digests(fresh)
