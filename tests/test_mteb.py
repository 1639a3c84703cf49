"""MTEB both ways: `export-mteb` writes MTEB's results layout, `check` reads one back."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli
from scipy.stats import spearmanr

from stsbench.errors import StsbenchError
from stsbench.published.check import check_results
from stsbench.published.registry import get_entry
from stsbench.results.mteb_layout import MTEB_TASKS, export_results, read_mteb_results

REPO = Path(__file__).resolve().parents[1]
# all-MiniLM-L6-v2's committed 7-task STS run (stsbench run --tasks sts), and a transfer-only run beside it
MINI = REPO / "reports" / "cpu-mini-replication" / "results" / "all-MiniLM-L6-v2" / "avg"
MODEL_FOLDER = "sentence-transformers__all-MiniLM-L6-v2/no_revision_available"

mteb = pytest.importorskip("mteb", reason='mteb is the optional extra: pip install "stsbench[mteb]"')


@pytest.fixture()
def results(tmp_path) -> Path:
    root = tmp_path / "results"
    shutil.copytree(MINI / "test", root / "all-MiniLM-L6-v2" / "avg" / "test")
    return root


@pytest.fixture()
def exported(results, tmp_path) -> Path:
    out = tmp_path / "mteb"
    done = export_results(results, out)
    assert done.tasks == MTEB_TASKS and done.left_out == ("SICKRelatedness",)
    return out


def test_export_reads_back_through_result_cache_with_mtebs_published_scores(exported):
    loaded = mteb.ResultCache(cache_path=exported).load_results(include_remote=False)
    (model,) = loaded.model_results
    assert (model.model_name, model.model_revision) == (
        "sentence-transformers/all-MiniLM-L6-v2",
        "no_revision_available",
    )
    published = get_entry("mteb/all-MiniLM-L6-v2").values
    got = {tr.task_name: round(100 * tr.get_score(), 2) for tr in model.task_results}
    assert got == published  # STS12 72.37 ... STSBenchmark 82.03, MTEB's own rows
    for tr in model.task_results:
        (scores,) = tr.scores["test"]
        assert scores["hf_subset"] == "default" and scores["languages"] == ["eng-Latn"]
        assert scores["main_score"] == scores["cosine_spearman"]
        assert tr.dataset_revision == mteb.get_task(tr.task_name).metadata.revision
    # STS12-16: MTEB's test split is every subset's pairs together, stsbench's `all` aggregate (not `mean`)
    sts12 = json.loads((MINI / "test" / "STS12.json").read_text())["scores"]["aggregate"]["spearman"]
    (row,) = json.loads((exported / "results" / MODEL_FOLDER / "STS12.json").read_text())["scores"]["test"]
    assert row["main_score"] == round(sts12["all"], 6) != round(sts12["mean"], 6)
    assert (exported / "results" / MODEL_FOLDER / "model_meta.json").is_file()
    assert [p.name for p in exported.iterdir()] == ["results"]  # no staging folder left behind


def test_check_against_the_exported_folder_passes_and_an_edited_value_fails(results, exported, capsys):
    key = f"mteb-results:{exported}"
    comparison = check_results(results, key)
    assert comparison.passed and [r.delta for r in comparison.rows] == [0.0] * 6
    code, out, err = run_cli(["check", "--results", results, "--against", key], capsys)
    assert code == 0 and "PASS: all 6 tasks within 0.05" in out, out + err
    path = exported / "results" / MODEL_FOLDER / "STS14.json"
    data = json.loads(path.read_text())
    data["scores"]["test"][0]["main_score"] -= 0.02  # MTEB's figure 75.59 -> 73.59
    path.write_text(json.dumps(data))
    code, out, err = run_cli(["check", "--results", results, "--against", key], capsys)
    assert code == 1
    assert err.strip().splitlines() == [
        f"error: check failed: 1 of 6 tasks differ from {key} by more than 0.05 (STS14 +2.00)"
    ]


def test_check_picks_the_runs_model_in_a_folder_of_several(results, exported, tmp_path):
    other = exported / "results" / "org__other-model" / "abc"
    shutil.copytree(exported / "results" / MODEL_FOLDER, other)
    meta = json.loads((other / "model_meta.json").read_text())
    (other / "model_meta.json").write_text(json.dumps({**meta, "name": "org/other-model", "revision": "abc"}))
    assert set(read_mteb_results(exported)) == {
        ("sentence-transformers/all-MiniLM-L6-v2", "no_revision_available"),
        ("org/other-model", "abc"),
    }
    assert (
        check_results(results, f"mteb-results:{exported}").entry.row
        == "sentence-transformers/all-MiniLM-L6-v2"
    )
    shutil.rmtree(exported / "results" / MODEL_FOLDER)
    with pytest.raises(
        StsbenchError,
        match=r"no results of sentence-transformers/all-MiniLM-L6-v2 \(models there: org/other-model@abc\)",
    ):
        check_results(results, f"mteb-results:{exported}")


def _one_line(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_bad_input_is_one_line(results, exported, tmp_path, capsys):
    transfer_only = tmp_path / "transfer"
    shutil.copytree(MINI / "fasttest", transfer_only)
    code, _, err = run_cli(["export-mteb", transfer_only, "--out", tmp_path / "o1"], capsys)
    assert "no STS12-16 or STSBenchmark result under" in _one_line(code, err)
    assert not (tmp_path / "o1").exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    code, _, err = run_cli(["export-mteb", results, "--out", afile], capsys)
    assert _one_line(code, err) == f"error: --out {afile} is a file; pass a folder"
    code, _, err = run_cli(
        ["export-mteb", results, "--out", tmp_path / "o2", "--model-name", "noorg"], capsys
    )
    assert "MTEB names models ORG/NAME" in _one_line(code, err)
    cases = {
        tmp_path / "missing": "does not exist",
        results: "no MTEB results under",  # an stsbench folder, not MTEB's layout
    }
    broken = exported / "results" / MODEL_FOLDER / "STS13.json"
    broken.write_text('{"task_name": "STS13"')
    cases[exported] = f"{broken}: not an MTEB task result"
    for folder, message in cases.items():
        code, _, err = run_cli(["check", "--results", results, "--against", f"mteb-results:{folder}"], capsys)
        assert message in _one_line(code, err)


def test_a_local_model_needs_a_model_name(results, tmp_path):
    path = results / "all-MiniLM-L6-v2" / "avg" / "test" / "STS12.json"
    for task in MTEB_TASKS:
        p = path.with_name(f"{task}.json")
        data = json.loads(p.read_text())
        data["model"]["name"] = "runs/my-checkpoint/best"
        p.write_text(json.dumps(data))
    with pytest.raises(StsbenchError, match="pass --model-name ORG/NAME"):
        export_results(results, tmp_path / "o")
    done = export_results(results, tmp_path / "o", name="me/my-checkpoint", revision="v1")
    assert done.folder == tmp_path / "o" / "results" / "me__my-checkpoint" / "v1"
    loaded = mteb.ResultCache(cache_path=tmp_path / "o").load_results(include_remote=False)
    assert [(m.model_name, m.model_revision) for m in loaded.model_results] == [("me/my-checkpoint", "v1")]


def test_without_mteb_the_message_says_how_to_install(results, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "mteb", None)  # import mteb -> ImportError
    code, _, err = run_cli(["export-mteb", results, "--out", tmp_path / "o"], capsys)
    assert (
        _one_line(code, err)
        == 'error: export-mteb needs the mteb package; run `pip install "stsbench[mteb]"`'
    )
    code, _, err = run_cli(["check", "--results", results, "--against", f"mteb-results:{tmp_path}"], capsys)
    assert 'pip install "stsbench[mteb]"' in _one_line(code, err)


@pytest.mark.usefixtures("one_thread")
def test_exported_checkpoint_runs_under_mteb_evaluate(tiny_bert, data_dir, tmp_path):
    """An avg_first_last checkpoint exported for sentence-transformers scores in MTEB as in stsbench."""
    from datasets import Dataset, DatasetDict
    from mteb.mocks.mock_tasks.sts import MockSTSTask
    from sentence_transformers import SentenceTransformer
    from transformers import AutoModel, AutoTokenizer

    import stsbench
    from stsbench.data.sts import load_pairs
    from stsbench.train.checkpoint import export_model
    from stsbench.train.model import ContrastiveEncoder

    pairs = load_pairs(data_dir, "STSBenchmark", "dev")
    s1, s2, gold = list(pairs.sent1[:60]), list(pairs.sent2[:60]), [float(g) for g in pairs.gold[:60]]

    class DevSample(MockSTSTask):
        def load_data(self, num_proc=None, **kwargs) -> None:
            table = {"sentence1": s1, "sentence2": s2, "score": gold}
            self.dataset = DatasetDict({"test": Dataset.from_dict(table)})
            self.data_loaded = True

        min_score, max_score = 0, 5

    model = ContrastiveEncoder(AutoModel.from_pretrained(tiny_bert), "avg_first_last", True)
    out = tmp_path / "ckpt"
    export_model(
        out,
        model=model,
        tokenizer=AutoTokenizer.from_pretrained(tiny_bert),
        eval_pooler="avg_first_last",
        meta={"method": "simcse", "backbone": str(tiny_bert), "training": {}, "best_dev_spearman": 0.1},
    )
    st = SentenceTransformer(str(out), device="cpu")
    result = mteb.evaluate(st, DevSample(), cache=None, show_progress_bar=False)
    (task_result,) = result.task_results
    ours = stsbench.load_encoder(str(out), use_cache=False)
    a, b = ours.encode(s1), ours.encode(s2)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert task_result.get_score() == pytest.approx(spearmanr(cos, gold).statistic, abs=1e-6)
