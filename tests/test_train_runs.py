"""Whole training runs on a tiny random BERT: resume, NaN stop, saved checkpoints, user errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import SENTENCES, Killed, run_cli_process, train_config, weights

from stsbench.errors import StsbenchError
from stsbench.train import losses
from stsbench.train.loop import train

pytestmark = pytest.mark.usefixtures("one_thread")


def test_killed_and_resumed_run_ends_with_the_same_weights(files, tmp_path):
    """Bit-equal weights after a kill and a resume.

    This relies on what holds on any machine: both runs are in this one process, so they use the same BLAS
    kernels and the same thread count, and each step's arithmetic depends only on the saved state (weights,
    optimizer, RNG streams, queue). It does not compare with figures taken on another machine.
    """
    # ESimCSE with everything that has state: repetition, momentum encoder, queue reset per epoch, MLM head
    kw = {"epochs": 2, "save_steps": 2, "queue_reset_each_epoch": True, "mlm_weight": 0.1}
    full = train(train_config(files, tmp_path / "full", **kw), show_progress=False)
    assert full.steps == 16  # 30 rows / 4 = 7 full batches + one of 2, twice

    def kill(step):
        if step == 7:  # state saved at step 6, steps 7 lost
            raise Killed

    with pytest.raises(Killed):
        train(train_config(files, tmp_path / "cut", **kw), show_progress=False, on_step=kill)
    assert json.loads((tmp_path / "cut" / "last" / "progress.json").read_text())["step"] == 6
    resumed = train(train_config(files, tmp_path / "cut", **kw), resume=True, show_progress=False)
    assert resumed.steps == 16
    a, b = weights(tmp_path / "full"), weights(tmp_path / "cut")
    assert a.keys() == b.keys() and any(k.startswith("method.momentum_encoder") for k in a)
    for k in a:
        assert torch.equal(a[k], b[k]), k
    assert resumed.dev_curve == full.dev_curve and resumed.best_step == full.best_step
    log = [json.loads(x) for x in (tmp_path / "cut" / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log if r["event"] == "train"] == list(range(1, 17))  # no step logged twice
    with pytest.raises(StsbenchError, match="other options than the saved run"):
        train(train_config(files, tmp_path / "cut", **{**kw, "lr": 1e-4}), resume=True, show_progress=False)


def test_nan_loss_stops_with_step_and_keeps_last_good_checkpoint(files, tmp_path, monkeypatch):
    calls = {"n": 0}
    real = losses.InfoNCE.forward

    def flaky(self, *args, **kwargs):
        calls["n"] += 1
        loss = real(self, *args, **kwargs)
        return loss * float("nan") if calls["n"] == 5 else loss

    monkeypatch.setattr(losses.InfoNCE, "forward", flaky)
    out = tmp_path / "nan"
    with pytest.raises(StsbenchError, match=r"the loss is nan at step 5 .*best checkpoint \(step 3\)") as err:
        train(train_config(files, out, method="simcse", save_steps=3), show_progress=False)
    assert "\n" not in str(err.value)
    assert err.value.exit_code == 3  # a run that failed, not bad usage (docs/commands.md, exit codes)
    assert json.loads((out / "stsbench.json").read_text())["step"] == 3
    assert json.loads((out / "last" / "progress.json").read_text())["step"] == 3
    log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    assert log[-1] == {"event": "nonfinite", "step": 5, "what": "the loss", "value": "nan"}


def _trained_embeddings(out: Path, sentences: list[str], pooler: str):
    """Embed with the saved folder: AutoModel + the declared pooler, and sentence-transformers."""
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    from stsbench.encoders.pooling import pool

    tok = AutoTokenizer.from_pretrained(out)
    model = AutoModel.from_pretrained(out).eval()
    batch = tok(sentences, padding=True, return_tensors="pt")
    with torch.inference_mode():
        hf = pool(model(**batch, return_dict=True), batch["attention_mask"], pooler).numpy()
    st = SentenceTransformer(str(out), device="cpu").encode(sentences, convert_to_numpy=True)
    return hf, st


@pytest.mark.parametrize(
    ("method", "train_file", "pooler"),
    [("simcse", "train.txt", "cls_before_pooler"), ("simcse", "nli.csv", "cls")],
)
def test_saved_checkpoint_is_what_was_trained(files, tmp_path, method, train_file, pooler):
    from stsbench.train.data import pad
    from stsbench.train.loop import build
    from stsbench.train.model import resolve_backbone

    out = tmp_path / "run"
    cfg = train_config(
        files,
        out,
        method=method,
        train_file=str(files / train_file),
        max_steps=3,
        hard_negative_weight=1.0 if train_file == "nli.csv" else 0.0,
    )
    result = train(cfg, show_progress=False)
    meta = json.loads((out / "stsbench.json").read_text())
    assert meta["pooler"] == pooler and meta["max_length"] is None and meta["step"] == result.best_step
    assert meta["method"] == ("sup-simcse" if train_file == "nli.csv" else "simcse")
    assert meta["training"]["mlp_only_train"] is (pooler == "cls_before_pooler")
    # the online encoder at the best step, rebuilt from the resumable state when best == last
    assert result.best_step == 3
    model, tok, _, _ = build(cfg, resolve_backbone(cfg.model), "cpu")
    model.load_state_dict(torch.load(out / "last" / "state.pt", weights_only=True)["model"])
    model.eval()
    with torch.inference_mode():
        ours = model.sentence_embedding(pad(tok(SENTENCES[:4])["input_ids"], tok.pad_token_id)).numpy()
    hf, st = _trained_embeddings(out, SENTENCES[:4], pooler)
    np.testing.assert_allclose(hf, ours, atol=1e-5)
    np.testing.assert_allclose(st, ours, atol=1e-5)


def test_user_errors_are_one_line(files, tmp_path):
    cases = [
        ({"train_file": str(tmp_path / "missing.txt")}, "train file .*missing.txt does not exist"),
        ({"model": str(tmp_path / "no-such-model")}, "backbone path .*no-such-model does not exist"),
        ({"model": "no-such-org/no-such-model-xyz"}, "could not be fetched from the Hugging Face hub"),
        ({"method": "simcse", "data_dir": str(tmp_path / "nodata")}, "no SentEval data"),
    ]
    (tmp_path / "empty.txt").write_text("\n  \n")
    cases.append(({"train_file": str(tmp_path / "empty.txt")}, "holds no sentences"))
    for kw, msg in cases:
        with pytest.raises(StsbenchError, match=msg) as err:
            train(train_config(files, tmp_path / "o", **kw), show_progress=False)
        assert "\n" not in str(err.value)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine")
    with pytest.raises(StsbenchError, match="not empty; pass --resume"):
        train(train_config(files, tmp_path / "used"), show_progress=False)
    with pytest.raises(StsbenchError, match="no stsbench run wrote"):
        train(train_config(files, tmp_path / "used"), overwrite=True, show_progress=False)
    with pytest.raises(StsbenchError, match="esimcse trains on one sentence a line"):
        train(train_config(files, tmp_path / "o2", train_file=str(files / "nli.csv")), show_progress=False)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return run_cli_process(["train", *args])


def test_cli_errors_are_one_line_and_exit_nonzero(files, tmp_path):
    base = [
        "--model",
        str(files / "tiny"),
        "--output",
        str(tmp_path / "o"),
        "--data-dir",
        str(files / "data"),
    ]
    (tmp_path / "empty.txt").write_text("")
    runs = [
        (
            ["--method", "simcse", "--train-file", str(files / "train.txt"), "--batch-size", "1", *base],
            "error: --batch-size 1 leaves no in-batch negatives",
        ),
        (
            ["--method", "simcse", "--train-file", str(tmp_path / "empty.txt"), *base],
            "error: train file .* holds no",
        ),
        (
            ["--method", "simcse", "--train-file", str(files / "train.txt"), "--bogus", "3", *base],
            "error: No such option:? '?--bogus",  # click's wording (typer 0.19 quotes it)
        ),
    ]
    for args, msg in runs:
        proc = run_cli(*args)
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and __import__("re").match(msg, lines[0]), proc.stderr


@pytest.mark.slow
def test_minilm_two_steps_then_stsbench_run(files, tmp_path, capsys):
    """The real backbone: two ESimCSE steps, then the evaluation core reads the checkpoint.

    Both commands in this process (the process boundary is not what is tested: a fresh one cost a torch import
    each), on the first 64 lines of the wiki head (two steps of 8 read 16 of its 11,914), selected on the `files`
    fixture's 40-pair STS-B dev (the real dev's 1,500 pairs took a third of the time), which `run --mode dev`
    scores as the trainer did.
    """
    from helpers import run_cli as run_in_process

    data = Path(__file__).resolve().parents[2] / "shared" / "data"
    if not (data / "downstream").is_dir():
        pytest.skip("needs ../shared/data")
    out, dev = tmp_path / "minilm", files / "data"
    train_args = ["--method", "esimcse", "--model", "all-MiniLM-L6-v2", "--pooler", "avg"]
    train_args += ["--train-file", data / "wiki" / "wiki1m_head.txt", "--train-lines", "64"]
    train_args += ["--output", out, "--data-dir", dev, "--max-steps", "2", "--batch-size", "8"]
    code, _, err = run_in_process(["train", *train_args, "--no-eval-at-start", "--quiet"], capsys)
    assert code == 0, err
    meta = json.loads((out / "stsbench.json").read_text())
    assert meta["pooler"] == "avg" and meta["step"] == 2
    run_args = ["run", "--model", out, "--mode", "dev", "--tasks", "STSBenchmark", "--data-dir", dev]
    run_args += [
        "--output",
        tmp_path / "res",
        "--no-cache",
        "--format",
        "json",
        "-q",
        "--allow-modified-data",
    ]
    code, stdout, err = run_in_process(run_args, capsys)
    assert code == 0, err
    assert json.loads(stdout)["scores"]["STSBenchmark"] == round(meta["best_dev_spearman"] * 100, 2)


def test_test_set_selection_keeps_the_best_mean_of_the_seven_sts_test_sets(files, mock_data, tmp_path):
    """select_on: sts-test (MoCoSE's official evalModel): kept by the test-set mean, the dev score beside it. On
    the mock SentEval folder, whose seven test sets are read as the real ones are (the real ones took 20 s)."""
    from stsbench.results.runs import load_train_run
    from stsbench.tasks.registry import resolve_tasks

    out = tmp_path / "run"
    cfg = train_config(files, out, method="simcse", max_steps=4, eval_steps=2, data_dir=str(mock_data))
    train(cfg.replace(select_on="sts-test"), show_progress=False)
    records = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    evals = [r for r in records if r["event"] == "eval"]
    assert len(evals) == 3 and all(-1 <= r["sts_test_avg"] <= 1 and -1 <= r["dev_spearman"] <= 1 for r in evals)
    trained = [r for r in evals if r["step"] > 0]
    best = max(trained, key=lambda r: r["sts_test_avg"])  # the first of equals: a later one must beat it
    assert [r["best"] for r in trained] == [r is best for r in trained]
    end = records[-1]
    assert end["best_step"] == best["step"] and end["best_dev_spearman"] == best["dev_spearman"]
    meta = json.loads((out / "stsbench.json").read_text())
    assert meta["training"]["select_on"] == "sts-test" and meta["best_sts_test_avg"] == best["sts_test_avg"]
    assert meta["best_dev_spearman"] == best["dev_spearman"]
    # the mean is of the seven tasks' reported figures, as `stsbench run` on the kept checkpoint gives them
    assert len(resolve_tasks("sts")) == 7
    run, _ = load_train_run(out, "run")
    assert run is not None and run.config["select_on"] == "sts-test" and run.best_dev_spearman == best["dev_spearman"]


def test_a_run_records_the_dropout_its_backbone_trains_with(files, tmp_path):
    """Unset, the backbone's own hidden dropout (the tiny BERT's 0.1); set, the option's: runs group by it."""
    from stsbench.results.runs import load_train_run

    runs = {}
    for name, dropout in (("unset", None), ("set", 0.2)):
        cfg = train_config(files, tmp_path / name, method="simcse", max_steps=1, dropout=dropout)
        train(cfg, show_progress=False)
        runs[name] = load_train_run(tmp_path / name, name)[0]
    assert runs["unset"].config["dropout"] is None and runs["unset"].backbone_dropout == pytest.approx(0.1)
    assert runs["set"].config["dropout"] == 0.2 and runs["set"].backbone_dropout == pytest.approx(0.2)
    start = json.loads((tmp_path / "unset" / "train_log.jsonl").read_text().splitlines()[0])
    assert start["backbone_dropout"] == pytest.approx(0.1)
