"""Analyses on mock data with hand-computed numbers, the cache reuse, and the CLI's errors."""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pytest
from helpers import CountingEncoder, make_data_dir, mock_pairs, table_of

from stsbench.analyses import geometry, length_bias, repetition
from stsbench.analyses.registry import (
    LENGTH_TASKS,
    Analysis,
    get_analysis,
    option,
    register_analysis,
    unregister_analysis,
)
from stsbench.data.sts import Pairs, pair_files
from stsbench.encoders.base import EncoderInfo
from stsbench.errors import StsbenchError

ROOT = Path(__file__).resolve().parents[1]


# --- length bias -------------------------------------------------------------------------------------------


def test_threshold_groups_membership_and_hand_numbers():
    pairs, table = mock_pairs()
    r = length_bias.length_bias_from_table([pairs], table, length_bias.word_count, threshold=3)
    d = r.datasets[0]
    le, gt = d.threshold_groups
    # a difference of exactly 3 belongs to "<= 3": pairs 0, 1, 3, 4 (diffs 0, 3, 1, 3)
    assert (le.label, le.n_pairs, gt.label, gt.n_pairs) == ("<=3", 4, ">3", 2)
    # normalised gold g/5: 0.9, 0.4, 0.2, 1.0, 0.5, 0.0 -> |cos - g'| = 0, .1, .1, .2, .2, .2
    assert le.mean_abs_diff == pytest.approx((0.0 + 0.1 + 0.2 + 0.2) / 4, abs=1e-6)
    assert gt.mean_abs_diff == pytest.approx((0.1 + 0.2) / 2, abs=1e-6)
    assert d.overall.mean_abs_diff == pytest.approx(0.8 / 6, abs=1e-6)
    assert d.gold_normalisation == "g / 5"
    # <=3: cos (.9, .5, .8, .3) vs gold (4.5, 2, 5, 2.5): ranks (4,2,3,1) vs (3,1,4,2): rho = 1 - 6*4/60 = 0.6
    assert le.spearman == pytest.approx(0.6)
    assert gt.spearman is None and "2 pair(s)" in gt.reason
    assert d.overall.spearman == pytest.approx(1 - 6 * 4 / (6 * 35))  # ranks differ by 1 on 4 pairs
    # threshold 4 moves the diff-4 pair into the first group
    r4 = length_bias.length_bias_from_table([pairs], table, length_bias.word_count, threshold=4)
    assert [g.n_pairs for g in r4.datasets[0].threshold_groups] == [5, 1]


def test_sick_normalisation_and_buckets():
    pairs, table = mock_pairs(scale=(1.0, 5.0))
    r = length_bias.length_bias_from_table([pairs], table, length_bias.word_count, buckets="0,1-3,4+")
    d = r.datasets[0]
    assert d.gold_normalisation == "(g - 1) / 4"
    # (g - 1) / 4: 0.9, 0.4, 0.2, 1.0, 0.5, 0.0 -> the same targets as the 0-5 case above
    assert d.overall.mean_abs_diff == pytest.approx(0.8 / 6, abs=1e-6)
    assert [(b.label, b.n_pairs) for b in d.buckets] == [("0", 1), ("1-3", 3), ("4+", 2)]
    assert d.buckets[0].spearman is None and d.buckets[0].mean_abs_diff == pytest.approx(0.0, abs=1e-6)
    assert d.buckets[1].mean_length_diff == pytest.approx(7 / 3)


def test_empty_group_is_reported_not_nan():
    pairs = Pairs("EQ", ["a b", "c d", "e f"], ["g h", "i j", "k l"], np.array([1.0, 2.0, 3.0]), ["x"] * 3)
    table = CountingEncoder()
    from stsbench.encoders.base import embed_table

    r = length_bias.length_bias_from_table(
        [pairs], embed_table(table, [*pairs.sent1, *pairs.sent2]), length_bias.word_count
    )
    gt = r.datasets[0].threshold_groups[1]
    assert (gt.n_pairs, gt.spearman, gt.mean_abs_diff, gt.reason) == (0, None, None, "no pairs")
    json.dumps(r.to_dict(), allow_nan=False)  # JSON-serialisable, no NaN
    assert r.average[2].mean_abs_diff is None and r.average[2].n_datasets_mean_abs_diff == 0


@pytest.mark.parametrize("spec", ["1-2,3+", "0,2-3,4+", "0,1-2", "0,1-3,2+", "0,x,3+", "0,3-1,4+", ""])
def test_bad_buckets(spec):
    with pytest.raises(StsbenchError, match="buckets|bucket"):
        length_bias.parse_buckets(spec)


def test_parse_buckets_default():
    got = length_bias.parse_buckets(length_bias.DEFAULT_BUCKETS)
    assert [(b.lo, b.hi) for b in got] == [(0, 0), (1, 2), (3, 4), (5, 7), (8, None)]


# --- geometry ----------------------------------------------------------------------------------------------


def test_align_uniform_four_points():
    table = table_of({"a": [1, 0], "b": [0, 2], "c": [-1, 0], "d": [0, -3]})
    pairs = Pairs("SQ", ["a", "a", "b"], ["b", "c", "d"], np.array([4.5, 5.0, 4.0]), ["dev"] * 3)
    r = geometry.align_uniform_from_table(pairs, table, "dev")
    assert (r.n_positive_pairs, r.n_sentences, r.n_uniformity_pairs) == (2, 4, 6)  # gold 4.0 is not > 4
    assert r.alignment == pytest.approx((2 + 4) / 2)
    assert r.uniformity == pytest.approx(math.log((4 * math.exp(-4) + 2 * math.exp(-8)) / 6))
    with pytest.raises(StsbenchError, match="no pair with gold > 4"):
        geometry.align_uniform_from_table(Pairs("SQ", ["a"], ["b"], np.array([3.0]), ["dev"]), table, "dev")


def test_spectrum_against_numpy():
    x = np.random.default_rng(5).normal(size=(30, 6)) + 2.0
    x[:, 5] = x[:, 4]  # rank 5
    r = geometry.spectrum_from_vectors(x, "T", "test", n_random_pairs=500, seed=7)
    sv = np.linalg.svd(x, compute_uv=False)
    np.testing.assert_allclose(r.uncentred.normalized, sv / sv[0], rtol=1e-10)
    svc = np.linalg.svd(x - x.mean(0), compute_uv=False)
    np.testing.assert_allclose(r.centred.normalized, svc / svc[0], rtol=1e-10)
    assert r.uncentred.largest == pytest.approx(sv[0])
    assert (r.uncentred.numerical_rank, r.centred.numerical_rank) == (5, 5)
    assert r.avg_cosine_random_pairs == pytest.approx(r.avg_cosine_all_pairs, abs=0.05)
    again = geometry.spectrum_from_vectors(x, "T", "test", n_random_pairs=500, seed=7)
    assert again.avg_cosine_random_pairs == r.avg_cosine_random_pairs


# --- repetition probe --------------------------------------------------------------------------------------


def test_overlap_definitions_by_hand():
    q = "I like this apple because it looks very fresh"
    s1 = "This is a very tall tree and it looks like a giant."
    # keys of s1: this is a very tall tree and it looks like a giant -> 12 words, 5 in q
    assert repetition.overlap(q, s1) == pytest.approx(5 / 12)
    # sets: |q| = 9, |s1| = 11 (a twice), shared 5 -> 5 / 15
    assert repetition.overlap(q, s1, "jaccard") == pytest.approx(5 / 15)
    s2, rep = repetition.repeat_overlap(q, s1)
    assert s2 == "This This is a very very tall tree and it it looks looks like like a giant."
    assert rep == ["this", "very", "it", "looks", "like"]
    assert repetition.overlap("-- !", s1) == 0.0


def _corpus(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_sample_respects_overlap_bounds_and_seed(tmp_path):
    rng = np.random.default_rng(1)
    vocab = [f"w{i}" for i in range(40)]
    lines = [" ".join(rng.choice(vocab, size=int(rng.integers(6, 14)))) for _ in range(300)]
    path = _corpus(tmp_path, lines)
    sample = repetition.draw_sample(path, n=20, seed=3)
    assert len(sample.triples) == 20
    for t in sample.triples:
        assert 0.13 <= t.overlap <= 0.17
        assert t.overlap == pytest.approx(repetition.overlap(t.query, t.s1))
        assert len(t.s2.split()) == len(t.s1.split()) + len(t.repeated)
        assert lines[t.query_line - 1] == t.query and lines[t.s1_line - 1] == t.s1
    again = repetition.draw_sample(path, n=20, seed=3)
    assert [(t.query, t.s1) for t in again.triples] == [(t.query, t.s1) for t in sample.triples]
    other = repetition.draw_sample(path, n=20, seed=4)
    assert [t.query for t in other.triples] != [t.query for t in sample.triples]


def test_probe_scores_and_triples_roundtrip(tmp_path):
    lines = ["a b c d e f g", "a x y z u v w", "b q r s t o p", "h i j k l m n"]
    sample = repetition.draw_sample(_corpus(tmp_path, lines), n=10, seed=0, min_overlap=0.1, max_overlap=0.2)
    enc = CountingEncoder()
    r = repetition.repetition_probe(enc, sample)
    assert r.n_triples == len(sample.triples) >= 1 and r.n_requested == 10
    sims = [(t.sim_q_s1, t.sim_q_s2) for t in r.triples]
    assert r.mean_sim_q_s1 == pytest.approx(100 * np.mean([a for a, _ in sims]))
    assert r.difference == pytest.approx(r.mean_sim_q_s2 - r.mean_sim_q_s1)
    path = repetition.write_triples(tmp_path / "t.jsonl", r.triples)
    back = repetition.sample_from_file(path)
    assert [(t.query, t.s1, t.s2) for t in back.triples] == [(t.query, t.s1, t.s2) for t in r.triples]
    assert repetition.repetition_probe(enc, back).mean_sim_q_s2 == pytest.approx(r.mean_sim_q_s2)


def test_probe_bad_inputs(tmp_path):
    with pytest.raises(StsbenchError, match="non-empty line"):
        repetition.draw_sample(_corpus(tmp_path, ["", "  "]))
    with pytest.raises(StsbenchError, match="13%-17% candidate overlap"):
        repetition.draw_sample(_corpus(tmp_path, ["a b c", "d e f", "g h i"]))
    with pytest.raises(StsbenchError, match="overlap range"):
        repetition.draw_sample(_corpus(tmp_path, ["a b", "b c"]), min_overlap=0.5, max_overlap=0.2)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x"}\n')
    with pytest.raises(StsbenchError, match="bad.jsonl:1"):
        repetition.read_triples(bad)


# --- the cache: a second analysis over the same model and data encodes nothing ---------------------------


def test_second_analysis_encodes_nothing(tmp_path):
    from stsbench.encoders.cache import CachedEncoder

    data = make_data_dir(tmp_path / "data")
    inner = CountingEncoder()
    first = length_bias.length_bias(CachedEncoder(inner, tmp_path / "cache"), data, show_progress=False)
    n_first = inner.encoded
    assert n_first > 0
    assert [d.task for d in first.datasets] == LENGTH_TASKS
    # a fresh wrapper (a new process would do the same): everything comes from disk
    again = length_bias.length_bias(CachedEncoder(inner, tmp_path / "cache"), data, show_progress=False)
    spec = geometry.spectrum(CachedEncoder(inner, tmp_path / "cache"), data, "test", show_progress=False)
    assert inner.encoded == n_first
    assert again.to_dict() == first.to_dict()
    assert spec.n_sentences > 0
    geometry.align_uniform(CachedEncoder(inner, tmp_path / "cache"), data, "dev", show_progress=False)
    assert inner.encoded > n_first  # the dev split is new text


# --- CLI ---------------------------------------------------------------------------------------------------


def test_cli_empty_corpus_one_line_error(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "stsbench",
            "repetition-probe",
            "--corpus",
            str(empty),
            "--output",
            str(tmp_path / "out"),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith("error: ") and "empty.txt has 0 non-empty line(s)" in lines[0]
    )
    assert "Traceback" not in proc.stderr


def test_cli_all_four_with_a_fake_model(tmp_path, monkeypatch, capsys):
    """Every command end to end (JSON, figures, table) with the encoder loader swapped for a cached fake."""
    import stsbench.encoders
    from stsbench.cli import main
    from stsbench.encoders.cache import CachedEncoder

    data = make_data_dir(tmp_path / "data", equal_lengths_stsb=True)
    corpus = _corpus(tmp_path, ["a b c d e f g", "a x y z u v w", "b q r s t o p", "h i j k l m n"])
    inner = CountingEncoder()
    monkeypatch.setattr(
        stsbench.encoders, "build_encoder", lambda name, *a, **kw: CachedEncoder(inner, tmp_path / "c")
    )
    out = tmp_path / "out"
    modified = "--allow-modified-data"  # make_data_dir's random text is not the canonical data
    commands = [
        ["length-bias", "--data-dir", data, modified],
        ["align-uniform", "--data-dir", data, modified],
        ["spectrum", "--data-dir", data, modified],
        ["repetition-probe", "--corpus", corpus, "--min-overlap", "0.1", "--max-overlap", "0.2"],
    ]
    for cmd in commands:
        monkeypatch.setattr(
            sys, "argv", ["stsbench", *map(str, cmd), "--model", "fake", "--output", str(out)]
        )
        main()
    printed = capsys.readouterr().out
    assert "STS-B" in printed and "n/a" in printed  # STS-B's >3 group is empty and says so
    names = {
        "length_bias_words": "length_bias",
        "align_uniform_dev": "align_uniform",
        "spectrum_test": "spectrum",
        "repetition_probe": "repetition_probe",
    }
    for name, analysis in names.items():
        rec = json.loads((out / "fake" / "avg" / f"{name}.json").read_text())
        assert rec["analysis"] == analysis and rec["model"]["fingerprint"] == "fake-16"
        for ext in ("png", "svg"):
            assert (out / "figures" / f"{name}__fake.{ext}").stat().st_size > 0
    lb = json.loads((out / "fake" / "avg" / "length_bias_words.json").read_text())["result"]
    stsb = next(d for d in lb["datasets"] if d["task"] == "STSBenchmark")
    assert stsb["threshold_groups"][1] == {
        "label": ">3",
        "lo": 4,
        "hi": None,
        "n_pairs": 0,
        "spearman": None,
        "mean_abs_diff": None,
        "mean_length_diff": None,
        "reason": "no pairs",
    }
    assert (out / "fake" / "avg" / "repetition_probe.triples.jsonl").read_text().count("\n") >= 1


@pytest.mark.slow
def test_real_model_spectrum_twice_same_numbers(tmp_path, monkeypatch):
    """all-MiniLM-L6-v2 through the real loader and cache, on a small mock data dir."""
    from stsbench.cli import main

    data = make_data_dir(tmp_path / "data")
    monkeypatch.setattr(sys, "argv", [])
    args = [
        "stsbench",
        "spectrum",
        "--data-dir",
        str(data),
        "--allow-modified-data",
        "--cache-dir",
        str(tmp_path / "c"),
        "--output",
        str(tmp_path / "out"),
    ]
    results = []
    for _ in range(2):
        sys.argv = args
        main()
        results.append(
            json.loads((tmp_path / "out" / "all-MiniLM-L6-v2" / "avg" / "spectrum_test.json").read_text())
        )
    assert results[0]["result"] == results[1]["result"]
    assert results[0]["result"]["dim"] == 384


def test_labels_name_pooler_only_when_models_differ_in_it():
    from stsbench.results.write import labelled

    assert list(labelled([("a", "avg", 1), ("b", "avg", 2)])) == ["a", "b"]
    assert list(labelled([("a", "avg", 1), ("b", "cls", 2), ("a", "avg", 3)])) == [
        "a (avg)",
        "b (cls)",
        "a (avg) #2",
    ]


@pytest.mark.parametrize("measure", ["candidate", "jaccard"])
def test_vectorised_overlap_equals_pairwise_definition(measure):
    rng = np.random.default_rng(2)
    vocab = ["The", "the", "cat.", "cat", "(dog)", "--", "a", "tree", "x"]
    texts = [" ".join(rng.choice(vocab, size=int(rng.integers(0, 7)))) for _ in range(40)]
    index = repetition._overlap_index([repetition.keys_of(t) for t in texts], measure)
    for q in range(len(texts)):
        expected = [repetition.overlap(texts[q], c, measure) for c in texts]
        np.testing.assert_allclose(index(q), expected, rtol=0, atol=1e-15)


# --- the registry: an analysis added in one module reaches the CLI, its results files and the report -------


@dataclass(frozen=True)
class ToyConfig:
    scale: float = option(2.0, "Multiply the mean norm by this.")


@dataclass
class ToyResult:
    task: str
    mean_norm: float

    def to_dict(self) -> dict:
        return asdict(self)


def _toy_table(variant: str, results: dict) -> object:
    from stsbench.tabular import fmt, make_table

    rows = [[label, fmt(r.mean_norm, 4)] for label, r in results.items()]
    return make_table(variant, "Toy: mean sentence norm", ["model", "toy mean norm"], rows)


class ToyNorm(Analysis):
    """A test's analysis: the mean norm of the STS-B dev first sentences, times ``scale``."""

    name = "toy_norm"
    command = "toy-norm"
    title = "Toy norms"
    describe = "toy-norm results"
    make = "stsbench toy-norm --model MODEL --output RESULTS/analyses"
    help = "Mean embedding norm on STS-B dev (a test's toy analysis)."
    config_type = ToyConfig
    result_type = ToyResult
    table_builders = (_toy_table,)

    def data_files(self, config, data_dir, prepared):
        return data_dir, pair_files(data_dir, "STSBenchmark", "dev")

    def compute(self, encoder, config, *, data_dir, prepared, batch_size):
        from stsbench.data.sts import load_pairs

        vectors = encoder.encode(load_pairs(data_dir, "STSBenchmark", "dev").sent1, batch_size=batch_size)
        return ToyResult("STSBenchmark", config.scale * float(np.linalg.norm(vectors, axis=1).mean()))


@pytest.fixture
def toy():
    register_analysis(ToyNorm)
    yield get_analysis("toy_norm")
    unregister_analysis("toy_norm")


def test_toy_analysis_registers_once_and_reaches_cli_results_and_report(toy, tmp_path, monkeypatch):
    import typer
    from typer.testing import CliRunner

    import stsbench.encoders
    from stsbench.commands import analyses as commands
    from stsbench.reports.render import write_report

    with pytest.raises(ValueError, match="already registered"):
        register_analysis(ToyNorm)
    app = typer.Typer()
    commands.register(app)
    runner = CliRunner()
    assert "toy-norm" in runner.invoke(app, ["--help"]).output
    help_text = runner.invoke(app, ["toy-norm", "--help"]).output
    assert "--scale" in help_text and "Multiply the mean norm" in help_text and "--data-dir" in help_text

    data = make_data_dir(tmp_path / "data")
    enc = CountingEncoder()
    monkeypatch.setattr(stsbench.encoders, "build_encoder", lambda name, *a, **kw: enc)
    out = tmp_path / "results" / "analyses"
    args = ["toy-norm", "--model", "fake", "--data-dir", str(data), "--allow-modified-data", "--scale", "3"]
    args += ["--output", str(out)]
    done = runner.invoke(app, args)
    assert done.exit_code == 0, done.output
    assert "toy mean norm" in done.output  # the report's table, printed
    rec = json.loads((out / "fake" / "avg" / "toy_norm.json").read_text())
    vectors = enc.encode(
        [ln.split("\t")[5] for ln in (data / "downstream/STS/STSBenchmark/sts-dev.csv").open()]
    )
    assert rec["kind"] == "stsbench.analysis_result" and rec["analysis"] == "toy_norm"
    assert rec["result"]["mean_norm"] == pytest.approx(3 * np.linalg.norm(vectors, axis=1).mean())
    assert rec["config"] == {"scale": 3.0, "batch_size": 128, "max_length": None}
    assert list(rec["provenance"]["data_files"]) == ["downstream/STS/STSBenchmark/sts-dev.csv"]

    files = write_report(tmp_path / "results", tmp_path / "report", "toy", "stsbench report (test)")
    md = files.markdown.read_text(encoding="utf-8")
    assert "\n## Toy norms\n" in md and "| model | toy mean norm |" in md
    # among the analyses' sections; the built-in ones without results are each a line of the closing list
    absent = md.split("\n## Not in this report\n")[1]
    assert absent.index("\nSingular-value spectra: ") < absent.index("\nTraining curves: ")  # in report order
    assert md.index("## Toy norms") < md.index("## Provenance") < md.index("## Not in this report")


PLUGIN = """
from dataclasses import dataclass
from stsbench.analyses.registry import Analysis, register_analysis

@dataclass
class Result:
    x: float
    def to_dict(self):
        return {"x": self.x}

@register_analysis
class Plug(Analysis):
    name, command, title, describe, make, help = "plug", "plug", "Plug", "plug results", "m", "h"
    result_type = Result
    def compute(self, encoder, config, *, data_dir, prepared, batch_size):
        return Result(1.0)

class Clash(Plug):
    name, command = "clash", "spectrum"
"""


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("plug = plugmod:Plug", "plug plug length_bias,repetition_probe,align_uniform,spectrum,cosine_density,plug"),
        ("other = plugmod:Plug", "plug plug length_bias,repetition_probe,align_uniform,spectrum,cosine_density,plug"),
        ("plug = plugmod", "plug plug length_bias,repetition_probe,align_uniform,spectrum,cosine_density,plug"),
        ("clash = plugmod:Clash", "takes the name or command of the analysis 'spectrum'"),
    ],
)
def test_an_entry_point_analysis_is_one_entry_after_the_built_ins(entry, expected, tmp_path):
    (tmp_path / "plugmod.py").write_text(PLUGIN, encoding="utf-8")
    name, value = (x.strip() for x in entry.split("="))
    code = (
        "from importlib import metadata\n"
        # the plugin under the analyses' group alone (pydantic reads its own group when a config is built)
        f"metadata.entry_points = lambda group: [metadata.EntryPoint({name!r}, {value!r}, group)] "
        "if group == 'stsbench.analyses' else []\n"
        "from stsbench.analyses.registry import all_analyses, get_analysis\n"
        "from stsbench.errors import StsbenchError\n"
        "try:\n"
        "    names = [a.name for a in all_analyses()]\n"
        "    print(get_analysis('plug').name, get_analysis('plug').command, ','.join(names))\n"
        "except StsbenchError as exc:\n"
        "    print(exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert expected in done.stdout, done.stdout + done.stderr


def test_run_analysis_from_python_writes_results_with_provenance(tmp_path):
    from stsbench.analyses.runner import run_analysis
    from stsbench.results.read import load_result

    data = make_data_dir(tmp_path / "data")
    enc = CountingEncoder()
    run = run_analysis(
        "spectrum", encoders=[enc], data_dir=data, output=tmp_path / "out", split="dev", random_pairs=7,
        allow_modified_data=True,  # make_data_dir's random text is not the canonical data
    )
    path = tmp_path / "out" / "fake" / "avg" / "spectrum_dev.json"
    assert path in run.files and any(f.suffix == ".svg" for f in run.files)
    loaded = load_result(path, result_types={"spectrum": geometry.SpectrumResult})
    expected = geometry.spectrum(enc, data, "dev", n_random_pairs=7, show_progress=False)
    assert loaded.result == expected and loaded.config["split"] == "dev"
    assert loaded.provenance.data_files == {
        "downstream/STS/STSBenchmark/sts-dev.csv": hashlib.sha256(
            (data / "downstream/STS/STSBenchmark/sts-dev.csv").read_bytes()
        ).hexdigest()
    }
    assert run.records[0].provenance.data_files == loaded.provenance.data_files
    # without an output nothing is written, the envelope is still returned
    assert run_analysis("spectrum", encoders=[enc], data_dir=data, split="dev", allow_modified_data=True).files == []
    with pytest.raises(StsbenchError, match="spectrum has no option splt"):
        run_analysis("spectrum", encoders=[enc], data_dir=data, splt="dev")


def test_results_loader_tells_kinds_apart(tmp_path):
    from stsbench.results.read import OtherKind, load_result

    path = tmp_path / "x.json"
    path.write_text('{"kind": "stsbench.analysis_result", "schema_version": 1}')
    with pytest.raises(OtherKind) as info:
        load_result(path, kinds=("stsbench.task_result",))
    assert info.value.kind == "stsbench.analysis_result"
    with pytest.raises(StsbenchError, match="unknown analysis None"):
        load_result(path)
    path.write_text('{"kind": "stsbench.task_result", "schema_version": 2}')
    with pytest.raises(StsbenchError, match="results schema version 2, this stsbench reads 1"):
        load_result(path)


def test_generated_commands_keep_every_flag_and_default():
    """The four commands' flags and defaults, as the hand-written commands had them."""
    import click
    import typer

    from stsbench.cli import app

    group = typer.main.get_command(app)
    common = {
        "--model": (),
        "--cache-dir": None,
        "--no-cache": False,
        "--pooler": None,
        "--max-length": None,
        "--device": None,
        "--batch-size": 128,
        "--output": Path("results/analyses"),
        "--prompt": None,
        "--prompt-name": None,
    }
    own = {
        "length-bias": {
            "--unit": "words",
            "--threshold": 3,
            "--buckets": "0,1-2,3-4,5-7,8+",
            "--data-dir": None,
            "--allow-modified-data": False,
        },
        "align-uniform": {
            "--split": "dev", "--positive-threshold": 4.0, "--data-dir": None, "--allow-modified-data": False
        },
        "spectrum": {
            "--split": "test",
            "--random-pairs": 10000,
            "--seed": 1111,
            "--data-dir": None,
            "--allow-modified-data": False,
        },
        "repetition-probe": {
            "--corpus": None,
            "--n": 100,
            "--seed": 1111,
            "--min-overlap": 0.13,
            "--max-overlap": 0.17,
            "--overlap": "candidate",
            "--triples": None,
        },
    }
    for name, flags in own.items():
        cmd = group.get_command(click.Context(group), name)
        got = {p.opts[0]: p.default for p in cmd.params if p.opts[0] != "--help"}
        got = {k: getattr(v, "value", v) if k != "--model" else tuple(v or ()) for k, v in got.items()}
        assert got == {**common, **flags}, name
    from typer.testing import CliRunner

    shown = CliRunner().invoke(app, ["spectrum", "--help"], terminal_width=200).output
    assert "<train|dev|test>" in shown or "[train|dev|test]" in shown  # typer 0.29 / the 0.19 floor


def test_terminal_and_report_label_a_path_model_alike(tmp_path):
    from stsbench.analyses.runner import run_analysis
    from stsbench.reports import collect
    from stsbench.reports.collect import find_models

    data = make_data_dir(tmp_path / "data")
    enc = CountingEncoder()
    enc.info = EncoderInfo(
        "/tmp/runs/simcse-tiny/", "/nonexistent", "fake-16", "avg", None, "float32", "fake"
    )
    run = run_analysis(
        "spectrum", encoders=[enc], data_dir=data, output=tmp_path / "out", random_pairs=3, allow_modified_data=True
    )
    (model,) = find_models(collect(tmp_path / "out"))
    assert list(run.results) == [model.label] == ["simcse-tiny"]
    assert run.files[0] == tmp_path / "out" / "runs__simcse-tiny" / "avg" / "spectrum_test.json"


def test_a_seed_checkpoint_is_labelled_with_its_seeds_folder():
    """Two methods' seed-1 checkpoints must not share a label (nor their figures' file names)."""
    from stsbench.results.write import base_label, figure_stem

    assert base_label("/runs/simcse/seed-1") == "simcse/seed-1"
    assert base_label("runs/esimcse/seed-12/") == "esimcse/seed-12"
    assert base_label("/runs/seed-1x") == "seed-1x" and base_label("/runs/simcse") == "simcse"
    assert figure_stem("spectrum", [base_label("/r/simcse/seed-1")]) != figure_stem(
        "spectrum", [base_label("/r/esimcse/seed-1")]
    )
