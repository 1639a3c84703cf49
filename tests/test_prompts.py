"""Prompts: sentence-transformers' semantics, the cache key, the results' record, the labels, the errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import SENTENCES, run_cli, run_cli_watching

import stsbench
from stsbench.errors import StsbenchError

QUERY = "query: "


def _st_folder(
    tiny_bert: Path, dst: Path, *, include_prompt: bool = True, default: str | None = None
) -> Path:
    """The tiny BERT as a sentence-transformers folder (mean pooling) that stores the prompt ``query``."""
    shutil.copytree(tiny_bert, dst)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
    ]
    (dst / "modules.json").write_text(json.dumps(modules))
    (dst / "1_Pooling").mkdir()
    pooling = {
        "word_embedding_dimension": 32,
        "pooling_mode_mean_tokens": True,
        "include_prompt": include_prompt,
    }
    (dst / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    (dst / "sentence_bert_config.json").write_text(
        json.dumps({"max_seq_length": 128, "do_lower_case": False})
    )
    stored = {"prompts": {"query": QUERY, "document": ""}, "default_prompt_name": default}
    (dst / "config_sentence_transformers.json").write_text(json.dumps(stored))
    return dst


@pytest.fixture()
def st_model(tiny_bert, tmp_path) -> Path:
    return _st_folder(tiny_bert, tmp_path / "tiny-st")


def _args(model, data, out, cache, *extra) -> list:
    return [
        *["run", "--model", model, "--tasks", "STS16", "--data-dir", data, "--output", out],
        *["--cache-dir", cache, "--bootstrap", "0", "-q", "--format", "json", *extra],
    ]


def test_a_stored_prompt_changes_the_scores_keys_the_cache_apart_and_is_recorded(
    st_model, mock_data, tmp_path, capsys, one_thread
):
    out, cache = tmp_path / "out", tmp_path / "cache"
    code, plain, err = run_cli(_args(st_model, mock_data, out, cache), capsys)
    assert code == 0, err
    code, prompted, err = run_cli(_args(st_model, mock_data, out, cache, "--prompt-name", "query"), capsys)
    assert code == 0, err
    plain, prompted = json.loads(plain), json.loads(prompted)
    assert plain["scores"]["STS16"] != prompted["scores"]["STS16"]
    assert (plain["prompt"], prompted["prompt"], prompted["prompt_name"]) == (None, QUERY, "query")
    # two results files, each recording its own prompt; two cache folders
    files = {
        json.loads(p.read_text())["model"]["prompt"]: json.loads(p.read_text())
        for p in out.rglob("STS16.json")
    }
    assert set(files) == {None, QUERY} and files[QUERY]["model"]["prompt_name"] == "query"
    assert files[None]["model"]["fingerprint"] != files[QUERY]["model"]["fingerprint"]
    assert files[QUERY]["reported"] == prompted["scores"]["STS16"]
    assert len([d for d in (cache / "embeddings").iterdir() if d.is_dir()]) == 2
    # the same text given as --prompt is the same key: read from the cache, the same figure
    run = stsbench.evaluate(
        str(st_model), "STS16", data_dir=mock_data, cache_dir=cache, prompt=QUERY, bootstrap=0
    )
    assert run.results[0].reported == prompted["scores"]["STS16"]
    assert run.results[0].model.fingerprint == files[QUERY]["model"]["fingerprint"]
    assert run.prompt == QUERY and run.prompt_name is None
    # the table's heading says which prompt (from the cache: nothing is encoded)
    args = [
        a
        for a in _args(st_model, mock_data, out, cache, "--prompt-name", "query")
        if a not in ("--format", "json")
    ]
    code, table, err = run_cli(args, capsys)
    assert code == 0 and "tiny-st [prompt query], pooler avg" in table.replace("\n", ""), err


def test_prompted_embeddings_equal_sentence_transformers(tiny_bert, tmp_path, one_thread):
    """The native path prepends as ``SentenceTransformer.encode(prompt_name=...)``; include_prompt=False is ST's."""
    from sentence_transformers import SentenceTransformer

    for include in (True, False):
        folder = _st_folder(tiny_bert, tmp_path / f"st-{include}", include_prompt=include)
        ours = stsbench.load_encoder(str(folder), prompt_name="query", use_cache=False, device="cpu")
        assert ours.info.kind == ("sentence-transformers" if include else "sentence-transformers-full")
        st = SentenceTransformer(str(folder), device="cpu")
        theirs = st.encode(SENTENCES, prompt_name="query", convert_to_numpy=True)
        unprompted = st.encode(SENTENCES, convert_to_numpy=True)
        got = ours.encode(SENTENCES, show_progress=False)
        assert np.allclose(got, theirs, atol=1e-5) and not np.allclose(got, unprompted, atol=1e-3)
    # without include_prompt the prompt's tokens are left out of the mean: another vector than with them
    with_tokens = stsbench.load_encoder(str(tmp_path / "st-True"), prompt=QUERY, use_cache=False)
    without = stsbench.load_encoder(str(tmp_path / "st-False"), prompt=QUERY, use_cache=False)
    assert not np.allclose(with_tokens.encode(SENTENCES[:3]), without.encode(SENTENCES[:3]), atol=1e-3)


def test_a_default_prompt_applies_unless_an_empty_prompt_turns_it_off(tiny_bert, tmp_path):
    folder = _st_folder(tiny_bert, tmp_path / "st", default="query")
    enc = stsbench.load_encoder(str(folder), use_cache=False)
    assert (enc.info.prompt, enc.info.prompt_name) == (QUERY, "query")
    assert stsbench.load_encoder(str(folder), prompt="", use_cache=False).info.prompt is None


def test_a_plain_hf_model_prepends_the_prompt_text(tiny_bert, one_thread):
    plain = stsbench.load_encoder(str(tiny_bert), pooler="avg", use_cache=False)
    prompted = stsbench.load_encoder(str(tiny_bert), pooler="avg", prompt=QUERY, use_cache=False)
    by_hand = plain.encode([QUERY + s for s in SENTENCES[:3]])
    assert np.array_equal(prompted.encode(SENTENCES[:3]), by_hand)
    assert prompted.info.fingerprint != plain.info.fingerprint


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--prompt-name", "passage"], ["--prompt-name passage", "stores the prompts document, query"]),
        (["--prompt", "q: ", "--prompt-name", "query"], ["--prompt TEXT or --prompt-name NAME, not both"]),
    ],
)
def test_prompt_errors_are_one_line(st_model, mock_data, tmp_path, capsys, extra, words):
    code, _, err = run_cli(_args(st_model, mock_data, tmp_path / "o", tmp_path / "c", *extra), capsys)
    assert code != 0 and len(err.strip().splitlines()) == 1
    assert all(w in err for w in words), err


def test_prompt_name_on_a_model_without_stored_prompts(tiny_bert):
    with pytest.raises(StsbenchError, match="stores no prompts"):
        stsbench.load_encoder(str(tiny_bert), pooler="avg", prompt_name="query", use_cache=False)


def test_a_live_model_of_unchanged_weights_finds_the_cli_cache(
    st_model, mock_data, tmp_path, capsys, one_thread
):
    """The folder's key for a live SentenceTransformer loaded from it; changed weights get their own key."""
    import torch
    from sentence_transformers import SentenceTransformer

    from stsbench.tasks.base import Mode
    from stsbench.tasks.registry import resolve_tasks

    cache = tmp_path / "cache"
    code, printed, err = run_cli(
        _args(st_model, mock_data, tmp_path / "out", cache, "--prompt-name", "query"), capsys
    )
    assert code == 0, err
    st = SentenceTransformer(str(st_model), device="cpu")
    enc = stsbench.load_encoder(st, cache_dir=cache, prompt_name="query")
    cli = stsbench.load_encoder(str(st_model), cache_dir=cache, prompt_name="query")
    assert enc.info.fingerprint == cli.info.fingerprint
    run = stsbench.evaluate(
        st, "STS16", data_dir=mock_data, cache_dir=cache, prompt_name="query", bootstrap=0
    )
    assert run.results[0].reported == json.loads(printed)["scores"]["STS16"]
    (task,) = resolve_tasks("STS16")
    texts = list(dict.fromkeys(task.texts(task.load(mock_data, Mode.test))))[:5]
    again = stsbench.load_encoder(st, cache_dir=cache, prompt_name="query")
    again.encode(texts)
    assert again.inner.n_encoded == 0 and again.cache.hits == 5  # every vector read from the CLI's cache
    # unprompted, the live model takes the folder's unprompted key
    assert (
        stsbench.load_encoder(st, cache_dir=cache).info.fingerprint
        == stsbench.load_encoder(str(st_model), cache_dir=cache).info.fingerprint
    )
    with torch.no_grad():
        st[0].auto_model.embeddings.word_embeddings.weight[0, 0] += 1.0
    changed = stsbench.load_encoder(st, cache_dir=cache, prompt_name="query")
    assert changed.info.fingerprint != cli.info.fingerprint


def test_labels_and_results_folders_tell_a_prompted_model_apart(tmp_path, mock_data):
    from stsbench.encoders.resolve import prompt_suffix
    from stsbench.reports.collect import collect, find_models

    mock = stsbench.MockEncoder(dim=8)
    out = tmp_path / "out"
    kw = {"data_dir": mock_data, "output": out, "bootstrap": 0, "use_cache": False}
    stsbench.evaluate(mock, "STS16", **kw)
    stsbench.evaluate(stsbench.MockEncoder(dim=8), "STS16", prompt=QUERY, **kw)
    folders = sorted(p.name for p in out.iterdir())
    assert len(folders) == 2 and folders[0] == "mock" and folders[1].startswith("mock+prompt-")
    labels = sorted(m.label for m in find_models(collect(out)))
    assert labels == ["mock", "mock" + prompt_suffix(QUERY, None)] == ["mock", "mock [prompt 'query: ']"]
    # check's reader tells the two runs apart rather than taking STS16 twice from one
    from stsbench.results.read import load_results, select_run

    with pytest.raises(StsbenchError, match=r"2 runs .*mock \[prompt 'query: '\]/mean-of-words/test"):
        select_run(load_results(out), ["STS16"], out)


def test_an_analysis_records_the_prompt_and_labels_with_it(st_model, mock_data, tmp_path, one_thread):
    out = tmp_path / "analyses"
    kw = {"data_dir": mock_data, "output": out, "cache_dir": tmp_path / "c"}
    run = stsbench.analyze("align_uniform", str(st_model), prompt_name="query", **kw)
    plain = stsbench.analyze("align_uniform", str(st_model), **kw)
    (label,) = run.results
    assert label == "tiny-st [prompt query]" and list(plain.results) == ["tiny-st"]
    assert run.results[label].alignment != plain.results["tiny-st"].alignment
    (record,) = run.records
    assert (record.model.prompt, record.model.prompt_name) == (QUERY, "query")
    assert len(list(out.rglob("align_uniform*.json"))) == 2


def test_a_warm_prompted_run_imports_no_torch(st_model, mock_data, tmp_path, capsys):
    """The prompt is read from the folder's JSON: a run on cached vectors still loads none of the heavy stack."""
    args = _args(st_model, mock_data, tmp_path / "out", tmp_path / "cache", "--prompt-name", "query")
    args.append("--allow-modified-data")  # the new interpreter does not take the mock data as canonical
    code, cold, err = run_cli(args, capsys)
    assert code == 0, err
    code, warm, err, heavy = run_cli_watching(args)
    assert code == 0, err
    assert heavy == [] and json.loads(warm)["scores"] == json.loads(cold)["scores"]


def test_compare_evaluates_its_models_with_the_prompt(
    st_model, tiny_bert, mock_data, tmp_path, capsys, one_thread
):
    out = tmp_path / "out"
    args = [
        "compare",
        st_model,
        tiny_bert,
        "--mode",
        "dev",
        "--data-dir",
        mock_data,
        "-B",
        "20",
        "--format",
        "json",
    ]
    code, printed, err = run_cli(
        [*args, "--output", out, "--cache-dir", tmp_path / "c", "--prompt", QUERY], capsys
    )
    assert code == 0, err
    labels = {s["label"] for s in json.loads(printed)["sides"]}
    assert labels == {"tiny-st [prompt 'query: ']", "tiny-bert [prompt 'query: ']"}
    recorded = {json.loads(p.read_text())["model"]["prompt"] for p in out.rglob("STSBenchmark.json")}
    assert recorded == {QUERY}
    code, _, err = run_cli(
        [*args, "--output", out, "--cache-dir", tmp_path / "c", "--prompt-name", "query"], capsys
    )  # tiny-bert stores none
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert (
        code == 2
        and len(errors) == 1
        and "tiny-bert stores no prompts" in errors[0]
        and "Traceback" not in err
    )


def test_a_live_transformers_model_takes_its_folder_key(tiny_bert, tmp_path):
    from transformers import AutoModel, AutoTokenizer

    model, tok = AutoModel.from_pretrained(tiny_bert), AutoTokenizer.from_pretrained(tiny_bert)
    for pooler in ("avg", "cls"):
        live = stsbench.load_encoder(model, tokenizer=tok, pooler=pooler, cache_dir=tmp_path)
        folder = stsbench.load_encoder(str(tiny_bert), pooler=pooler, cache_dir=tmp_path)
        assert live.info.fingerprint == folder.info.fingerprint
    other = stsbench.load_encoder(model, tokenizer=tok, pooler="avg", max_length=16, cache_dir=tmp_path)
    assert other.info.fingerprint != live.info.fingerprint  # another setting, another key
