"""The public Python API on live models, and the trainer's dev score through the evaluation path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import count_hf_encodes, run_cli
from helpers import train_config as config  # the tiny trainer config over conftest's `files` (40-pair dev)
from scipy.stats import spearmanr

import stsbench
from stsbench.data.sts import load_pairs
from stsbench.errors import StsbenchError
from stsbench.train.st_export import st_modules

pytestmark = pytest.mark.usefixtures("one_thread")


def _hf(folder):
    from transformers import AutoModel, AutoTokenizer

    return AutoModel.from_pretrained(folder), AutoTokenizer.from_pretrained(folder)


def _tiny_st(folder):
    from sentence_transformers import SentenceTransformer

    m = st_modules()  # 6.x keeps them in sentence_transformer.modules, the 3.1 floor in models
    body = m.Transformer(str(folder), max_seq_length=64)
    return SentenceTransformer(modules=[body, m.Pooling(32, "mean"), m.Normalize()], device="cpu")


def _mnrl_loss():
    try:  # sentence-transformers >= 6
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    except ImportError:  # 3.1 - 5.x
        from sentence_transformers.losses import MultipleNegativesRankingLoss
    return MultipleNegativesRankingLoss


def test_mock_encoder_figure_is_cosine_spearman_of_its_vectors(data_dir):
    mock = stsbench.MockEncoder(dim=8, seed=3)
    run = stsbench.evaluate(mock, "STSBenchmark", "dev", data_dir=data_dir, use_cache=False)
    pairs = load_pairs(data_dir, "STSBenchmark", "dev")
    a, b = mock.encode(list(pairs.sent1)), mock.encode(list(pairs.sent2))
    cos = (a * b).sum(1) / np.maximum(np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1), 1e-12)
    want = round(100 * spearmanr(cos, pairs.gold).statistic, 2)
    (result,) = run.results
    assert result.task == "STSBenchmark" and result.reported == want and result.model.kind == "mock"
    assert run.paths == []  # files only when asked


def test_live_transformers_model_equals_its_folder_and_is_cached_by_weights(tiny_bert, data_dir, tmp_path):
    want = stsbench.evaluate(
        str(tiny_bert), "STSBenchmark", "dev", "avg", data_dir=data_dir, use_cache=False
    ).results[0]
    model, tok = _hf(tiny_bert)
    first = stsbench.evaluate(
        model,
        "STSBenchmark",
        "dev",
        "avg",
        tokenizer=tok,
        data_dir=data_dir,
        cache_dir=tmp_path,
        output=tmp_path / "out",
    )
    got = first.results[0]
    assert got.reported == want.reported
    assert got.scores["dev"]["spearman"] == pytest.approx(want.scores["dev"]["spearman"], abs=1e-9)
    assert [p.name for p in first.paths] and json.loads(first.paths[0].read_text())[
        "reported"
    ] == got.reported
    # the same weights hit the cache; a changed weight gets another fingerprint and is encoded afresh
    again = stsbench.load_encoder(model, pooler="avg", tokenizer=tok, cache_dir=tmp_path)
    assert again.info.fingerprint == got.model.fingerprint
    texts = list(load_pairs(data_dir, "STSBenchmark", "dev").sent1[:2])
    again.encode(texts)
    assert again.cache.misses == 0 and again.cache.hits == 2
    with torch.no_grad():
        model.embeddings.word_embeddings.weight[0, 0] += 1.0
    changed = stsbench.load_encoder(model, pooler="avg", tokenizer=tok, cache_dir=tmp_path)
    assert changed.info.fingerprint != got.model.fingerprint


def test_sentence_transformer_object_loads_and_equals_its_saved_folder(tiny_bert, data_dir, tmp_path):
    st = _tiny_st(tiny_bert)
    enc = stsbench.load_encoder(st, use_cache=False)  # used to fail: 'SentenceTransformer' has no 'lower'
    assert enc.info.pooler == "avg" and enc.info.max_length == 64 and enc.info.extra["normalize"] is True
    st.save(str(tmp_path / "st"))
    folder = stsbench.evaluate(
        str(tmp_path / "st"), "STSBenchmark", "dev", data_dir=data_dir, use_cache=False
    )
    live = stsbench.evaluate(st, "STSBenchmark", "dev", data_dir=data_dir, use_cache=False)
    assert live.results[0].reported == folder.results[0].reported
    vecs = enc.encode(["a man is playing a guitar ."])
    np.testing.assert_allclose(vecs, st.encode(["a man is playing a guitar ."]), atol=1e-6)


def test_a_live_model_put_back_in_train_mode_still_encodes_without_dropout(tiny_bert):
    model, tok = _hf(tiny_bert)
    enc = stsbench.load_encoder(model, pooler="avg", tokenizer=tok, use_cache=False)
    want = enc.encode(SENTENCES)
    model.train()  # as stsbench.evaluate hands a training model back, or sentence-transformers 3.x leaves it
    np.testing.assert_allclose(enc.encode(SENTENCES), want, atol=1e-6)
    assert model.training  # and encoding leaves it as it found it


def test_any_encode_object_and_bad_objects(data_dir):
    class Plain:
        def encode(self, texts):
            return stsbench.MockEncoder(dim=4).encode(texts)

    run = stsbench.evaluate(Plain(), "STSBenchmark", "dev", data_dir=data_dir)
    want = stsbench.evaluate(
        stsbench.MockEncoder(dim=4), "STSBenchmark", "dev", data_dir=data_dir, use_cache=False
    )
    assert run.results[0].reported == want.results[0].reported
    with pytest.raises(StsbenchError, match="cannot evaluate a int"):
        stsbench.evaluate(3, data_dir=data_dir)

    class Wrong:
        def encode(self, texts):
            return np.zeros((1, 4))

    with pytest.raises(StsbenchError, match="one row per text"):
        stsbench.evaluate(Wrong(), "STSBenchmark", "dev", data_dir=data_dir)


def test_analysis_on_a_live_model(data_dir):
    # STS-B dev's alignment and uniformity: the mock hashes every word it encodes, and length_bias's seven
    # tasks took 10-30 s of it
    run = stsbench.analyze("align_uniform", stsbench.MockEncoder(dim=8), data_dir=data_dir, use_cache=False)
    assert len(run.results) == 1 and run.files == []


def test_trainer_dev_score_is_stsbench_run_dev(files, tmp_path, capsys):
    """Acceptance 5: one evaluation path; the trainer's STS-B dev figure is `stsbench run --mode dev`'s."""

    from stsbench.train.loop import train

    out = tmp_path / "run"
    result = train(config(files, out, method="simcse", max_steps=3), show_progress=False)
    assert result.best_step == 3
    # the trainer tests' 40-pair STS-B dev is not the canonical file
    run = stsbench.evaluate(
        str(out), "STSBenchmark", "dev", data_dir=files / "data", use_cache=False, allow_modified_data=True
    )
    assert run.results[0].scores["dev"]["spearman"] == pytest.approx(result.best_dev_spearman, abs=1e-12)
    code, stdout, _ = run_cli(
        [
            "run",
            "--model",
            out,
            "--mode",
            "dev",
            "--tasks",
            "STSBenchmark",
            "--data-dir",
            files / "data",
            "--no-cache",
            "--format",
            "json",
            "--output",
            tmp_path / "res",
            "-q",
            "--allow-modified-data",
        ],
        capsys,
    )
    assert code == 0
    assert json.loads(stdout)["scores"]["STSBenchmark"] == round(result.best_dev_spearman * 100, 2)


MINILM_CLI = [
    72.37,
    80.60,
    75.59,
    85.39,
    78.99,
    82.03,
    77.15,
]  # `stsbench run` (README), STS12-16, STS-B, SICK-R


@pytest.mark.slow
def test_the_embedded_models_cold_cli_run_passes_mtebs_row_and_python_objects_give_its_numbers(
    data_dir, tmp_path, capsys, monkeypatch
):
    """CI's published-numbers check, moved from a stage of ``.ci/run`` into the suite, where it
    runs beside other tests: the cold 7-task ``stsbench run`` of the embedded model by name, ``check`` against
    MTEB's published row, then its export in MTEB's layout read back by mteb and checked against the run.

    Then the Python objects on the same vectors: a ``SentenceTransformer`` of the folder gives the CLI's seven
    figures from the CLI's cache (the folder's key, :mod:`stsbench.encoders.fingerprint`: it encodes nothing), and
    encodes STS16 itself to the CLI's figure; a raw ``AutoModel`` + tokenizer encodes STS-B and SICK-R itself.
    (The object once encoded all seven tasks again into a cache of its own: 100 s of CI for vectors the
    origin check already proves are the folder's.)"""
    from importlib.util import find_spec

    from sentence_transformers import SentenceTransformer

    from stsbench.encoders.resolve import embedded_model_path

    results, cache = tmp_path / "results", tmp_path / "cache"
    args = ["run", "--model", "all-MiniLM-L6-v2", "--tasks", "sts", "--data-dir", data_dir]
    code, out, err = run_cli([*args, "--output", results, "--cache-dir", cache, "--format", "json"], capsys)
    assert code == 0, err
    scores = json.loads(out)["scores"]
    tasks = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]
    assert [scores[t] for t in tasks] == MINILM_CLI
    code, out, err = run_cli(["check", "--results", results, "--against", "mteb/all-MiniLM-L6-v2"], capsys)
    assert code == 0 and "PASS" in out, out + err
    _the_readmes_quickstart_runs_as_written(tmp_path, data_dir, cache, capsys, monkeypatch)
    if find_spec("mteb") is not None:  # the export is read back by mteb, the optional extra CI installs
        code, out, err = run_cli(["export-mteb", results, "--out", tmp_path / "mteb"], capsys)
        assert code == 0, err
        code, out, err = run_cli(
            ["check", "--results", results, "--against", f"mteb-results:{tmp_path / 'mteb'}"], capsys
        )
        assert code == 0 and "PASS" in out, out + err

    encoded = count_hf_encodes(monkeypatch)
    path = str(embedded_model_path())
    st = SentenceTransformer(path, device="cpu")
    got = stsbench.evaluate(st, data_dir=data_dir, cache_dir=cache)
    assert [r.reported for r in got.results] == MINILM_CLI and encoded == []  # the CLI's vectors, read
    own = stsbench.evaluate(st, "STS16", data_dir=data_dir, use_cache=False)
    assert [r.reported for r in own.results] == MINILM_CLI[4:5] and len(encoded) == 1
    # the raw model encodes for itself too: the two tasks with the most pairs of their own split
    model, tok = _hf(path)
    raw = stsbench.evaluate(
        model,
        "STSBenchmark,SICKRelatedness",
        pooler="avg",
        max_length=256,
        tokenizer=tok,
        data_dir=data_dir,
        use_cache=False,
    )
    assert [r.reported for r in raw.results] == MINILM_CLI[5:]


def _the_readmes_quickstart_runs_as_written(tmp_path, data_dir, cache, capsys, monkeypatch) -> None:
    """README.md's Quickstart, line by line as printed, from a clone's root with the data at ../shared/data, on
    the cache of the cold run above (its figures are the README table's): each line exits 0 and does what its
    comment says. The set-up line's venv is the one running the tests (the first line activates it)."""
    import shlex

    from helpers import ROOT, fenced_blocks

    text = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    heading = text.index("## Quickstart") + 1
    block = next(b for b in fenced_blocks(ROOT / "README.md") if b.line > heading)
    lines = [line.split("  #")[0].strip() for line in block.body.splitlines()]
    assert lines[0] == "source .venv/bin/activate" and all(w.startswith("stsbench ") for w in lines[1:]), lines
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(data_dir, target_is_directory=True)
    (tmp_path / "clone").mkdir()
    monkeypatch.chdir(tmp_path / "clone")
    monkeypatch.setenv("STSBENCH_CACHE", str(cache))
    printed = []
    for line in lines[1:]:
        code, out, err = run_cli(shlex.split(line)[1:], capsys)
        assert code == 0, f"{line}: {out}{err}"
        printed.append(out)
    table = "| stsbench, all-MiniLM-L6-v2 | " + " | ".join(f"{v:.2f}" for v in MINILM_CLI)
    readme = "\n".join(text)
    assert table in readme and all(f"{v:.2f}" in printed[0] for v in MINILM_CLI), printed[0]
    assert "PASS: all 6 tasks" in printed[1] and list(Path("results").rglob("STS12.json")), printed[1]
    # the count the PASS line gives, SICK-R (no published value in MTEB's row) said apart (it read "7 task results")
    assert "compared 6 task results" in printed[1] and "not compared (no published value): SICKRelatedness" in printed[1]
    assert (Path("reports/minilm/report.md")).is_file() and (Path("reports/minilm/report.html")).is_file()


SENTENCES = [
    "a man is playing a guitar .",
    "the quick brown fox jumps over the lazy dog near the river bank .",
    "hello",
    "two dogs run .",
]


@pytest.mark.parametrize(
    ("pooler", "mlp_only_train", "eval_pooler"),
    [
        ("cls", True, "cls_before_pooler"),
        ("cls", False, "cls"),
        ("avg", True, "avg"),
        ("avg_first_last", True, "avg_first_last"),
        ("avg_top2", True, "avg_top2"),
    ],
)
def test_exported_checkpoint_loads_in_sentence_transformers_with_our_vectors(
    tiny_bert, tmp_path, pooler, mlp_only_train, eval_pooler
):
    """Acceptance 3: every pooler's export gives stsbench's embeddings in sentence-transformers (< 1e-5)."""
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    from stsbench.encoders.resolve import resolve_model
    from stsbench.train.checkpoint import META_FILE, export_model
    from stsbench.train.model import ContrastiveEncoder

    torch.manual_seed(1)
    model = ContrastiveEncoder(AutoModel.from_pretrained(tiny_bert), pooler, mlp_only_train)
    model.init_new_layers()
    out = tmp_path / "ckpt"
    meta = {
        "method": "simcse",
        "backbone": str(tiny_bert),
        "training": {"lr": 3e-5},
        "best_dev_spearman": 0.5,
    }
    export_model(
        out,
        model=model,
        tokenizer=AutoTokenizer.from_pretrained(tiny_bert),
        eval_pooler=eval_pooler,
        meta=meta,
    )
    ours = stsbench.load_encoder(str(out), use_cache=False).encode(SENTENCES)
    st = SentenceTransformer(str(out), device="cpu")
    theirs = st.encode(SENTENCES, convert_to_numpy=True)
    assert np.abs(ours - theirs).max() < 1e-5
    assert (out / "config_sentence_transformers.json").is_file()
    card = (out / "README.md").read_text()
    assert (
        "library_name: sentence-transformers" in card and "| STS-B dev | 50.00 |" in card and '"lr"' in card
    )
    # without stsbench.json our resolver reads the module types save() wrote; mean/CLS stacks run natively
    (out / META_FILE).unlink()
    spec = resolve_model(str(out))
    if eval_pooler in ("avg", "cls_before_pooler"):
        assert (spec.kind, spec.pooler) == ("sentence-transformers", eval_pooler)
    else:
        assert spec.kind == "sentence-transformers-full"
    again = stsbench.load_encoder(str(out), use_cache=False).encode(SENTENCES)
    assert np.abs(again - ours).max() < 1e-5


def _pairs(n: int = 8) -> tuple[list[str], list[str]]:
    return [SENTENCES[i % 4] for i in range(n)], [SENTENCES[(i + 1) % 4] for i in range(n)]


# both trainers' runs: 4 steps of 4 on the CPU, nothing saved, their own loss logging out of the way
_TINY_TRAINING = {
    "max_steps": 4,
    "per_device_train_batch_size": 4,
    "save_strategy": "no",
    "report_to": [],
    "use_cpu": True,
    "learning_rate": 1e-3,
    "logging_steps": 100,
}


def _logged(trainer, key: str) -> list[tuple[int, float]]:
    """(step, value) of every entry of the trainer's log history that holds ``key``."""
    return [(r["step"], r[key]) for r in trainer.state.log_history if key in r]


def test_sentence_transformers_trainer_logs_stsbench_dev(tiny_bert, data_dir, tmp_path):
    """Acceptance 2: SentenceTransformerTrainer with our evaluator logs STS-B dev at every eval step."""
    pytest.importorskip(
        "accelerate", reason="the trainers need accelerate (pip install stsbench[integrations])"
    )
    datasets = pytest.importorskip("datasets", reason="SentenceTransformerTrainer needs datasets")
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    from stsbench.integrations import sentence_transformers_evaluator

    st = _tiny_st(tiny_bert)
    anchor, positive = _pairs()
    # an explicit fingerprint: datasets would otherwise hash the table with dill, not what is tested here
    table = datasets.table.InMemoryTable.from_pydict({"anchor": anchor, "positive": positive})
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path / "st-out"), eval_strategy="steps", eval_steps=2, **_TINY_TRAINING
    )
    trainer = SentenceTransformerTrainer(
        model=st,
        args=args,
        train_dataset=datasets.Dataset(table, fingerprint="tiny-pairs"),
        loss=_mnrl_loss()(st),
        evaluator=sentence_transformers_evaluator(data_dir=data_dir),
    )
    trainer.train()
    logged = _logged(trainer, "eval_stsbench_STSBenchmark_dev")
    assert [s for s, _ in logged] == [2, 4]
    final = stsbench.evaluate(st, "STSBenchmark", "dev", data_dir=data_dir, use_cache=False)
    assert logged[-1][1] == final.results[0].reported


def test_hf_trainer_callback_logs_stsbench_dev_through_the_trainer(tiny_bert, data_dir, tmp_path):
    """Acceptance 2: a Hugging Face Trainer run logs stsbench's STS-B dev every eval_steps through trainer.log."""
    pytest.importorskip("accelerate", reason="the Hugging Face Trainer needs accelerate")
    from transformers import AutoTokenizer, BertForSequenceClassification, Trainer, TrainingArguments

    from stsbench.integrations import STSBenchCallback

    tok = AutoTokenizer.from_pretrained(tiny_bert)
    model = BertForSequenceClassification.from_pretrained(tiny_bert, num_labels=2)
    enc = tok(SENTENCES * 2, padding="max_length", max_length=16, truncation=True)
    rows = [
        {"input_ids": enc["input_ids"][i], "attention_mask": enc["attention_mask"][i], "labels": i % 2}
        for i in range(8)
    ]
    args = TrainingArguments(output_dir=str(tmp_path / "hf-out"), **_TINY_TRAINING)
    trainer = Trainer(model=model, args=args, train_dataset=rows)
    callback = STSBenchCallback(tok, eval_steps=2, data_dir=data_dir).attach(trainer)
    trainer.train()
    logged = _logged(trainer, "stsbench/STSBenchmark_dev")
    assert [s for s, _ in logged] == [2, 4] and [s for s, _ in callback.history] == [2, 4]
    final = stsbench.evaluate(
        model.bert, "STSBenchmark", "dev", tokenizer=tok, data_dir=data_dir, use_cache=False
    )
    assert logged[-1][1] == final.results[0].reported
    assert logged[0][1] != logged[-1][1]  # the weights moved: each log is of the model at its step


def test_revision_picks_the_hub_snapshot_and_results_record_its_commit(tiny_bert, tmp_path, monkeypatch):
    """--revision reaches snapshot_download; the folder (model.path) is named by the resolved commit."""
    import shutil

    from huggingface_hub import constants

    from stsbench.encoders.resolve import resolve_model

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    repo = tmp_path / "hub" / "models--org--tiny"
    old, new = "a" * 40, "b" * 40
    for sha in (old, new):
        shutil.copytree(tiny_bert, repo / "snapshots" / sha)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(new)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    assert resolve_model("org/tiny").path.name == new
    assert resolve_model("org/tiny", revision=old).path.name == old
    enc = stsbench.load_encoder("org/tiny", pooler="avg", revision=old, use_cache=False)
    assert enc.info.path.endswith(f"snapshots/{old}")
    with pytest.raises(StsbenchError, match="--revision applies to hub ids"):
        resolve_model(str(tiny_bert), revision=old)


def test_evaluate_hands_a_training_model_back_in_train_mode(tiny_bert, data_dir):
    model, tok = _hf(tiny_bert)
    model.train()
    stsbench.evaluate(model, "STSBenchmark", "dev", "avg", tokenizer=tok, data_dir=data_dir, use_cache=False)
    assert model.training and all(m.training for m in model.modules())


def test_other_sentence_transformer_stacks_run_through_its_encode_keyed_by_their_modules(tiny_bert):
    from sentence_transformers import SentenceTransformer

    m = st_modules()
    body = m.Transformer(str(tiny_bert), max_seq_length=64)
    by_max = SentenceTransformer(modules=[body, m.Pooling(32, "max")], device="cpu")
    by_sqrt = SentenceTransformer(modules=[body, m.Pooling(32, "mean_sqrt_len_tokens")], device="cpu")
    a, b = stsbench.as_encoder(by_max), stsbench.as_encoder(by_sqrt)
    assert a.info.kind == "sentence-transformers-full-live" and a.info.fingerprint != b.info.fingerprint
    np.testing.assert_allclose(a.encode(SENTENCES), by_max.encode(SENTENCES), atol=1e-6)


def test_analyze_records_the_maximum_length_it_was_given(data_dir, tmp_path):
    """The results file records what the encoder was asked for, as the analysis commands' do (it read None)."""
    run = stsbench.analyze(
        "align_uniform", stsbench.MockEncoder(dim=8), data_dir=data_dir, use_cache=False, max_length=16,
        output=tmp_path, batch_size=32,
    )  # fmt: skip
    record = json.loads(next(p for p in run.files if p.suffix == ".json").read_text(encoding="utf-8"))
    assert record["config"]["max_length"] == 16 and record["config"]["batch_size"] == 32
