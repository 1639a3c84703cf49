"""Keys that miss no input and hold nothing else, at ``build_plan`` level.

Each test edits one input a step reads and checks that exactly the keys (or the code) of the steps that read it
move: the published figures and templates (B1), the data an analysis reads (B2), what ``select_on`` selects on
(B3), a plugin and a helper it calls (B5), a library's version (B6), one's own published files (B7), the device
(B8), a local model and a hub model (B9); bookkeeping fields and a task list's order move none (B12-B13). The
memo, the data digests' cache and the augmentation cache: tests/test_keys_caches.py (B4, B10, D3); sealed
outputs: tests/test_reproduce_changes.py (B11).
"""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

import pytest
import yaml
from helpers import DATA

from stsbench import sources
from stsbench.recipes import load_recipe
from stsbench.reproduce import state as keys
from stsbench.reproduce.plan import build_plan

RECIPE = """name: keyed
title: "Keys, input by input"
flavour: mini
verdict: false
verdict_reason: a test of keys
published: [{published}]
runs:
  - name: dev
    method: simcse
    config: simcse-minilm-cpu
    overrides: {{model: {model}, train_file: {train}, train_lines: null, max_steps: 4, batch_size: 4{extra}}}
    seeds: [1, 2]
    evaluate: {{tasks: [{tasks}], mode: test}}
    published: {published}
  - name: test-selected
    method: simcse
    config: simcse-minilm-cpu
    overrides: {{model: {model}, train_file: {train}, train_lines: null, max_steps: 4, batch_size: 4,
                select_on: sts-test}}
    seeds: [1]
    evaluate: null
analyses:
  - {{name: length_bias, runs: [dev]}}
  - {{name: cosine_density, options: {{split: dev}}, runs: [dev]}}
report:
  title: "Keys"
"""


@pytest.fixture(autouse=True)
def _code_forgotten():
    """``code_of`` is cached per process: a digest computed while a test patched what it reads (a library's
    version) outlived the patch, and a later test in the same worker found its finished steps "changed code"."""
    yield
    keys.code_of.cache_clear()


@pytest.fixture
def world(tiny, tmp_path, monkeypatch):
    """A data folder of one's own (STS and SICK), the tiny model copied, and a recipe writer."""
    data = tmp_path / "data"
    for part in ("STS", "SICK"):
        shutil.copytree(DATA / "downstream" / part, data / "downstream" / part)
    shutil.copytree(tiny / "tiny", tmp_path / "model")
    (tmp_path / "mine" / "a").mkdir(parents=True)
    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))

    def recipe(
        tasks: str = "STS12, STSBenchmark", extra: str = "", published: str = "simcse/table4/dropout-p"
    ):
        path = tmp_path / "recipe.yaml"
        path.write_text(
            RECIPE.format(
                model=tmp_path / "model",
                train=tiny / "train.txt",
                tasks=tasks,
                extra=extra,
                published=published,
            )
        )
        return load_recipe(path)

    return data, recipe


def _plan(recipe, data, **kw) -> dict[str, tuple[str, str]]:
    keys.code_of.cache_clear()
    return {s.id: (s.key, s.code) for s in build_plan(recipe, Path("/somewhere/out"), data, **kw).steps}


def _moved(before: dict, after: dict, what: int = 0) -> set[str]:
    """The steps whose key (``what`` 0) or code (1) moved."""
    return {s for s in before if before[s][what] != after[s][what]}


ALL = {
    "train/dev/seed-1",
    "train/dev/seed-2",
    "train/test-selected/seed-1",
    "evaluate/dev",
    "analysis/1-length_bias/dev/seed-1",
    "analysis/1-length_bias/dev/seed-2",
    "analysis/2-cosine_density/dev/seed-1",
    "analysis/2-cosine_density/dev/seed-2",
    "report",
}
DEV = {"train/dev/seed-1", "train/dev/seed-2", "evaluate/dev", "report"} | {
    s for s in ALL if s.startswith("analysis")
}
# the steps that read the seven STS test sets
READS_TEST = {"train/test-selected/seed-1", "evaluate/dev", "report"} | {s for s in ALL if "length_bias" in s}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_b1_a_published_value_moves_the_report_alone(world, tmp_path, monkeypatch):
    """ "p=0.1": 79.1 -> 82.1 in published/simcse.yaml left every key and code unchanged."""
    data, recipe = world
    copy = tmp_path / "published"
    shutil.copytree(sources.ROOT / "published", copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    monkeypatch.setattr(sources, "PUBLISHED_DATA", str(copy))  # absolute: ROOT / it is the copy
    r = recipe()
    before = _plan(r, data)
    assert set(before) == ALL
    _edit(copy / "simcse.yaml", '"p=0.1": 79.1', '"p=0.1": 82.1')
    after = _plan(r, data)
    assert _moved(before, after) == {"report"} and _moved(before, after, 1) == set()
    _edit(
        copy / "figures.yaml", "figure: Figure 2", "figure: Figure 2b"
    )  # the figures' registry is published data too
    assert _moved(after, _plan(r, data)) == {"report"}


def test_b1_a_template_moves_the_reports_code_alone(world, tmp_path, monkeypatch):
    data, recipe = world
    copy = tmp_path / "templates"
    shutil.copytree(sources.ROOT / "reports" / "templates", copy)
    monkeypatch.setitem(sources.PACKAGE_DATA, "report", (str(copy),))
    r = recipe()
    before = _plan(r, data)
    _edit(copy / "report.md.j2", "{", "{ ")
    after = _plan(r, data)
    assert _moved(before, after, 1) == {"report"} and _moved(before, after) == set()


def test_b2_an_analysis_data_file_moves_the_analyses_that_read_it(world):
    """One gold score of STS-B test edited: length_bias (the seven test sets) and the evaluation (STS-B test) move;
    cosine_density on STS-B dev and the trainings selecting on STS-B dev do not."""
    data, recipe = world
    r = recipe()
    before = _plan(r, data)
    test = data / "downstream" / "STS" / "STSBenchmark" / "sts-test.csv"
    lines = test.read_text(encoding="utf-8").split("\n")
    cells = lines[0].split("\t")
    cells[4] = "4.900" if cells[4] != "4.900" else "4.800"
    test.write_text("\n".join(["\t".join(cells), *lines[1:]]), encoding="utf-8")
    moved = _moved(before, _plan(r, data))
    assert moved == READS_TEST  # the test-selected training selects on the seven STS test sets
    dev = data / "downstream" / "STS" / "STSBenchmark" / "sts-dev.csv"
    _edit(dev, "\t", "\t ")
    moved = _moved(before, _plan(r, data))
    assert {"analysis/2-cosine_density/dev/seed-1", "train/dev/seed-1"} <= moved  # STS-B dev: read by both


def test_b3_select_on_sts_test_keys_the_sts_test_files(world):
    data, recipe = world
    r = recipe()
    before = _plan(r, data)
    sts12 = next((data / "downstream" / "STS" / "STS12-en-test").glob("STS.gs.*.txt"))
    _edit(sts12, "\n", "\n ")
    moved = _moved(before, _plan(r, data))
    assert moved == READS_TEST  # STS12 test: the evaluation reads it too
    assert "train/dev/seed-1" not in moved


def test_b5_a_plugins_helper_moves_the_trainings_that_use_it(world, tmp_path, monkeypatch):
    """A plugin pooler was keyed by its function's source alone: an edit to a helper it calls was missed."""
    from stsbench.encoders.pooling import POOLER_REGISTRY

    data, recipe = world
    package = tmp_path / "plugins" / "toy_keys"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "helper.py").write_text("def scale():\n    return 1\n")
    (package / "pool.py").write_text(
        "from toy_keys.helper import scale\n\ndef toy(outputs, mask):\n    return outputs[0][:, 0] * scale()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    importlib.invalidate_caches()
    POOLER_REGISTRY.register("toy-keys", importlib.import_module("toy_keys.pool").toy)
    try:
        r = recipe(extra=", pooler: toy-keys")
        before = _plan(r, data)
        (package / "helper.py").write_text("def scale():\n    return 2\n")
        after = _plan(r, data)
    finally:
        POOLER_REGISTRY.unregister("toy-keys")
        for name in [m for m in sys.modules if m.startswith("toy_keys")]:
            del sys.modules[name]
    assert _moved(before, after, 1) == {"train/dev/seed-1", "train/dev/seed-2"}
    assert _moved(before, after) == set()  # the code, not the key: a rerun asks --rerun-changed


def test_b6_a_librarys_version_moves_the_code_of_the_steps_that_run_on_it(world, monkeypatch):
    data, recipe = world
    r = recipe()
    before = _plan(r, data)
    real = sources.library_versions

    def newer(name):
        def versions(names=("torch", "transformers")):
            return {k: ("99.0" if k == name else v) for k, v in real(names).items()}

        return versions

    monkeypatch.setattr(sources, "library_versions", newer("transformers"))
    moved = _moved(before, _plan(r, data), 1)
    assert moved == ALL - {"report"}  # trainings, the evaluation and the analyses run on transformers
    monkeypatch.setattr(sources, "library_versions", newer("scipy"))
    moved = _moved(before, _plan(r, data), 1)
    assert moved == {"evaluate/dev", "report"} | {s for s in ALL if s.startswith("analysis")}


def test_b7_own_published_files_by_their_path_from_the_recipe_and_their_content(world, tmp_path, monkeypatch):
    """mine/a/table.yaml and mine/b/table.yaml collided (keyed by basename), read from the working folder."""
    data, recipe = world
    own = {
        "paper": {"id": "mine", "title": "t", "citation": "Me (2026)", "source": "notebook"},
        "tables": [{"id": "t1", "table": "Table 1", "metric": "m", "split": "test",
                    "rows": [{"id": "r", "row": "R", "values": {"STS12": 70.0, "STSBenchmark": 75.0}}]}],
    }  # fmt: skip
    for part in ("a", "b"):
        (tmp_path / "mine" / part).mkdir(parents=True, exist_ok=True)
        (tmp_path / "mine" / part / "table.yaml").write_text(yaml.safe_dump(own))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the recipe's own files are read from its folder, not from here
    plans = {}
    for part in ("a", "b"):
        r = recipe(published=f"mine/{part}/table.yaml#t1/r")
        assert r.runs[0].published == f"{tmp_path}/mine/{part}/table.yaml#t1/r"
        plans[part] = _plan(r, data)
    assert _moved(plans["a"], plans["b"]) == {"report"}  # same content, another file: another report
    r = recipe(published="mine/a/table.yaml#t1/r")
    _edit(tmp_path / "mine" / "a" / "table.yaml", "70.0", "71.0")
    assert _moved(plans["a"], _plan(r, data)) == {"report"}


def test_b8_the_device_resolves_length_buckets_in_the_training_key(world):
    data, recipe = world
    r = recipe()
    cpu, gpu = _plan(r, data), _plan(r, data, gpus=1)
    assert {s for s in _moved(cpu, gpu) if s.startswith("train/")} == {
        "train/dev/seed-1",
        "train/dev/seed-2",
        "train/test-selected/seed-1",
    }
    fixed = recipe(extra=", length_buckets: 2")
    trains = lambda p: {s: v for s, v in p.items() if s.startswith("train/dev")}  # noqa: E731
    assert trains(_plan(fixed, data)) == trains(_plan(fixed, data, gpus=1))  # given: no device decides it


def test_b9_a_local_model_by_content_a_hub_model_by_its_pinned_revision(world, tmp_path):
    data, recipe = world
    r = recipe()
    before = _plan(r, data)
    _edit(
        tmp_path / "model" / "config.json",
        '"hidden_dropout_prob"',
        '"hidden_dropout_prob_x": 1, "hidden_dropout_prob"',
    )
    assert _moved(before, _plan(r, data)) == ALL  # the model moved: every step downstream
    assert keys.model_identity("bert-base-uncased") == "unpinned:bert-base-uncased"
    assert keys.model_identity("bert-base-uncased", "a1b2c3") == "bert-base-uncased@a1b2c3"
    assert keys.model_identity("sentence-transformers/all-MiniLM-L6-v2") == keys.model_identity(
        "all-MiniLM-L6-v2"
    )
    config = keys.key_config({"model": "bert-base-uncased", "back_translation_models": "a/b,c/d", "lr": 1e-5})
    assert config == {
        "model": "unpinned:bert-base-uncased",
        "back_translation_models": ["unpinned:a/b", "unpinned:c/d"],
        "lr": 1e-5,
    }


@pytest.mark.parametrize(
    "field",
    [
        "threads: 1",
        "log_steps: 7",
        "eval_batch_size: 32",
        "save_steps: 3",
        "report_to: none",
        "run_name: x",
        "compile: true",
        "tf32: true",
        "eval_at_start: true",
    ],
)
def test_b12_a_bookkeeping_field_moves_no_key(world, field):
    from stsbench.train.config import BOOKKEEPING

    assert field.split(":")[0] in BOOKKEEPING
    data, recipe = world
    before = _plan(recipe(), data)
    assert _moved(before, _plan(recipe(extra=f", {field}"), data)) == set()


def test_b13_the_order_of_a_task_list_moves_no_key(world):
    data, recipe = world
    assert _plan(recipe(tasks="STS12, STSBenchmark"), data) == _plan(
        recipe(tasks="STSBenchmark, STS12"), data
    )


def test_every_package_file_is_keyed_where_it_is_read():
    """Every file shipped in the package that is not code is in some step's code, in the report's key, or read at
    plan time (configs and recipes: their content is the options and claims the keys hold)."""
    keyed = {
        f
        for rel in (r for kind in sources.PACKAGE_DATA.values() for r in kind)
        for f in sources._data_files(rel).values()
    }
    keyed |= set((sources.ROOT / sources.PUBLISHED_DATA).glob("*.yaml"))
    planned = {sources.ROOT / "configs", sources.ROOT / "recipes"}
    shipped = {
        f
        for f in sources.ROOT.rglob("*")
        if f.is_file() and f.suffix not in (".py", ".pyc") and "__pycache__" not in f.parts
    }
    loose = sorted(
        str(f.relative_to(sources.ROOT))
        for f in shipped - keyed
        if not any(f.is_relative_to(p) for p in planned)
    )
    assert loose == []


def test_b10_a_same_size_edit_with_its_mtime_restored_moves_the_keys(world):
    """A digest was reused where size and mtime matched: an edit of the same size, its mtime set back (`touch -r`,
    `cp -p`), kept every key."""
    import os
    import time

    data, recipe = world
    r = recipe()
    before = _plan(r, data)
    dev = data / "downstream" / "STS" / "STSBenchmark" / "sts-dev.csv"
    st = dev.stat()
    raw = bytearray(dev.read_bytes())
    raw[-2] = ord("0") if raw[-2] != ord("0") else ord("1")  # one digit of the last gold score
    time.sleep(0.05)  # the kernel's ctime clock is coarse: the edit lands on another tick than the digest
    dev.write_bytes(bytes(raw))
    os.utime(dev, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert dev.stat().st_size == st.st_size and dev.stat().st_mtime_ns == st.st_mtime_ns
    assert {"train/dev/seed-1", "analysis/2-cosine_density/dev/seed-1"} <= _moved(before, _plan(r, data))


def test_the_verdict_rule_and_the_executors_move_no_training_evaluation_or_analysis_key(tmp_path):
    """Editing stats/decide.py (the verdict rule) and an executor moves only the report's code."""
    root = tmp_path / "stsbench"
    shutil.copytree(sources.ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    kinds = ("train", "evaluate", "analysis", "report")
    before = {kind: sources.code_digest(kind, root) for kind in kinds}
    for rel in ("stats/decide.py", "reproduce/executors.py"):
        with (root / rel).open("a", encoding="utf-8") as f:
            f.write("\nEDITED_BY_THE_TEST = 1\n")
    after = {kind: sources.code_digest(kind, root) for kind in kinds}
    assert {k: after[k] for k in kinds[:3]} == {k: before[k] for k in kinds[:3]}
    assert after["report"] != before["report"]  # the rule is report code: the edit was seen


def test_a_string_ending_in_a_dot_names_no_module(tmp_path):
    """``where.startswith("stsbench.")`` once put the package's __init__ (the public API) in every training key."""
    root = tmp_path / "stsbench"
    (root / "a").mkdir(parents=True)
    (root / "__init__.py").write_text("from stsbench.a import heavy\n")
    (root / "a" / "__init__.py").write_text("")
    (root / "a" / "heavy.py").write_text("X = 1\n")
    (root / "a" / "entry.py").write_text('def f(where):\n    return where.startswith("stsbench.")\n')
    found = {p.relative_to(root).as_posix() for p in sources.closure(["stsbench.a.entry"], root)}
    assert found == {"a/entry.py"}


def test_a_plan_reads_each_file_once_for_its_digest(world, monkeypatch):
    """One byte digest with one stat memo: data files, model files and sources each read at most once a plan.

    A second plan in the same process (and a new process, its memo read from the cache folder) reads none.
    """
    data, recipe = world
    r = recipe()
    reads: dict[str, int] = {}
    real = sources.bytes_sha256

    def counted(path):
        reads[str(path)] = reads.get(str(path), 0) + 1
        return real(path)

    monkeypatch.setattr(sources, "bytes_sha256", counted)
    monkeypatch.setattr(sources, "_STAMPS", {})
    monkeypatch.setattr(sources, "_STAMPS_READ", set())
    _plan(r, data)
    assert reads and max(reads.values()) == 1, {p: n for p, n in reads.items() if n > 1}
    assert any(p.startswith(str(data)) for p in reads)  # the data part of the keys
    assert any(p.endswith("model.safetensors") for p in reads)  # the model's fingerprint
    reads.clear()
    _plan(r, data)
    assert reads == {}
    monkeypatch.setattr(sources, "_STAMPS", {})  # a new process: the stat memo from the cache folder
    monkeypatch.setattr(sources, "_STAMPS_READ", set())
    _plan(r, data)
    assert reads == {}


def test_a_sealed_file_is_read_once_while_its_stat_holds(tmp_path, monkeypatch):
    """Sealing, checking the seal and keying on a file read it once; an edit (a new stat) reads it again."""
    from stsbench.reproduce import state as seals  # the seals live with the state

    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(sources, "_STAMPS", {})
    monkeypatch.setattr(sources, "_STAMPS_READ", set())
    out = tmp_path / "out"
    (out / "results").mkdir(parents=True)
    f = out / "results" / "seeds.json"
    f.write_text("{}")
    reads: list[Path] = []
    real = sources.bytes_sha256
    monkeypatch.setattr(sources, "bytes_sha256", lambda p: reads.append(p) or real(p))
    record = {"status": "done", "files": seals.digests([f], out)}
    assert seals.damage(record, out) == "" and keys.named_digests([f], out) == {
        "results/seeds.json": record["files"]["results/seeds.json"]
    }
    assert len(reads) == 1
    f.write_text('{"edited": true}')
    assert seals.damage(record, out) == "its file results/seeds.json changed since it finished"
    assert len(reads) == 2
