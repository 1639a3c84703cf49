"""Every results file kind has one typed definition: the checked-in editions read through it, the published JSON
schema is generated from it and validates them, and the typed readers give the files' own values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stsbench.results.schema import DOCS, KINDS, SCHEMA_DIR, kind_of, main, stale

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ROOT / "reports"
OLD_RUN = ROOT / "tests" / "fixtures" / "old_run" / "mocose-minilm-stsbench.json"


def _published(name: str) -> dict:
    return json.loads((DOCS / SCHEMA_DIR / f"{name}.json").read_text(encoding="utf-8"))


def _results_files() -> list[Path]:
    return sorted(
        p for p in REPORTS.rglob("*") if p.suffix in (".json", ".jsonl") and "figures" not in p.parts
    )


def test_the_published_schemas_are_the_definitions_own(tmp_path):
    import re

    from stsbench.results.schema import pydantic_version

    page = (ROOT / "docs" / "results-schema.md").read_text(encoding="utf-8")
    written = re.search(r"json_schema\(\)`, pydantic\s+(\d+\.\d+):", page)
    assert written is not None, "the page names the pydantic that wrote the schemas"
    if written.group(1) != pydantic_version():  # the floors' venv: the same rules, worded by another version
        pytest.skip(f"the published schemas were written with pydantic {written.group(1)}, not {pydantic_version()}")
    assert stale() == [], "run `python -m stsbench.results.schema`"
    assert main(["--docs", str(tmp_path)]) == 0 and stale(tmp_path) == []
    (tmp_path / SCHEMA_DIR / "scale.json").write_text("{}\n", encoding="utf-8")  # an edit by hand is found
    assert stale(tmp_path) == [f"{SCHEMA_DIR}/scale.json"] and main(["--check", "--docs", str(tmp_path)]) == 1


def test_every_file_of_the_checked_in_editions_validates_against_the_published_schema():
    from jsonschema import Draft202012Validator

    validators = {k.name: Draft202012Validator(_published(k.name)) for k in KINDS}
    seen: dict[str, int] = {}
    for path in _results_files():
        if path.name.endswith(".triples.jsonl"):
            continue  # the repetition probe's triples: the analysis' own data, not a results file
        lines = path.read_text(encoding="utf-8").splitlines()
        docs = (
            [json.loads(ln) for ln in lines if ln.strip()]
            if path.suffix == ".jsonl"
            else [json.loads("".join(lines))]
        )
        kind = kind_of(path, docs[0])
        assert kind is not None, f"{path}: no results kind"
        for doc in docs:
            errors = [e.message for e in validators[kind.name].iter_errors(doc)]
            assert not errors, f"{path.relative_to(ROOT)}: {errors[:2]}"
        seen[kind.name] = seen.get(kind.name, 0) + 1
    # every kind is checked on real files (a training's OUT/seeds.json is not kept in an edition: below)
    assert set(seen) == {k.name for k in KINDS} - {"seed_runs"}
    assert seen["train_log_record"] == seen["train_run"] > 100


def test_the_schema_refuses_what_the_reader_refuses():
    from jsonschema import Draft202012Validator

    aggregate = json.loads(next(REPORTS.rglob("runs__*/avg/test/seeds.json")).read_text(encoding="utf-8"))
    validator = Draft202012Validator(_published("seed_aggregate"))
    assert validator.is_valid(aggregate)
    del aggregate["tasks"]["STS12"]["mean"]
    assert not validator.is_valid(aggregate)
    log = Draft202012Validator(_published("train_log_record"))
    assert log.is_valid({"event": "eval", "step": 10, "dev_spearman": 0.8, "best": True})
    assert not log.is_valid({"event": "eval", "step": "ten"})


def test_the_typed_readers_give_the_files_values():
    from stsbench.reports.collect import analysis_types
    from stsbench.reproduce.state import load_state
    from stsbench.results.read import load_result
    from stsbench.results.runs import load_train_run, read_aggregate, read_recipe_runs, read_scale
    from stsbench.results.schema import validated

    types = analysis_types()
    for path in _results_files():
        if path.suffix != ".json" or path.name == "stsbench.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        kind = kind_of(path, data)
        assert kind is not None, path
        if kind.name in ("task_result", "sts_average"):
            # the warm run's reader (no pydantic) and pydantic's agree, and give the file back
            read = load_result(path, kinds=(kind.kind,))
            assert read == validated(kind.type(), data) and read.to_dict() == data
        elif kind.name == "analysis_result":
            assert load_result(path, result_types=types).analysis == data["analysis"]
        elif kind.name == "seed_aggregate":
            assert read_aggregate(path) == data
        elif kind.name == "scale":
            assert read_scale(path).banner == data["banner"]
        elif kind.name == "recipe_runs":
            runs = read_recipe_runs([path.parent])
            assert [r.name for r in runs.values()] == [r["name"] for r in data["runs"]]
            assert [list(r.published) for r in runs.values()] == [r["published"] for r in data["runs"]]
        elif kind.name == "reproduce_state":
            assert load_state(path.parent) == data
    runs = [load_train_run(d, d.name) for d in {p.parent for p in REPORTS.rglob("train_log.jsonl")}]
    assert runs and all(run is not None and not warnings for run, warnings in runs)


def test_an_old_checkpoint_description_without_kind_or_version_reads_as_the_first_version(tmp_path):
    from stsbench.results.runs import read_run_meta

    meta, warning = read_run_meta(OLD_RUN)
    assert warning is None and meta is not None and meta.schema_version == 1
    data = json.loads(OLD_RUN.read_text(encoding="utf-8"))
    assert (
        meta.training == data["training"]
        and meta.pooler == data["pooler"]
        and meta.queue_size == data["queue_size"]
    )
    assert kind_of(OLD_RUN.with_name("stsbench.json"), data).name == "train_run"
    bad = tmp_path / "stsbench.json"
    bad.write_text(json.dumps({**data, "queue_size": "many"}), encoding="utf-8")
    meta, warning = read_run_meta(bad)
    assert meta is None and "malformed checkpoint description (bad queue_size: 'many'" in warning


def test_a_trainings_seeds_file_validates_and_reads_back(tmp_path):
    from jsonschema import Draft202012Validator

    from stsbench.errors import StsbenchError
    from stsbench.results.runs import read_seed_runs, write_seed_runs

    runs = [
        {"seed": 1, "status": "finished", "error": None, "best_step": 10, "best_dev_spearman": 0.8, "steps": 20},
        {"seed": 2, "status": "failed", "error": "out of memory", "best_step": None, "best_dev_spearman": None,
         "steps": 3},
    ]  # fmt: skip
    path = write_seed_runs(tmp_path, runs, {"method": "simcse", "lr": 3e-5})
    data = json.loads(path.read_text(encoding="utf-8"))
    assert Draft202012Validator(_published("seed_runs")).is_valid(data)
    assert (
        read_seed_runs(path) == data
        and data["failed"] == [2]
        and data["best_dev_spearman"]["values"] == [0.8]
    )
    path.write_text(json.dumps({**data, "runs": [{**data["runs"][0], "status": "done"}]}), encoding="utf-8")
    with pytest.raises(StsbenchError, match=r"malformed stsbench seed runs \(bad runs.0.status: 'done'"):
        read_seed_runs(path)


@pytest.mark.parametrize("kind", [k for k in KINDS if k.kind], ids=lambda k: k.name)
def test_each_schema_pins_its_kind(kind):
    schema = _published(kind.name)
    prop = schema.get("properties", {}).get("kind", {})
    assert (
        prop.get("const") == kind.kind
        or prop.get("default") == kind.kind
        or kind.kind in prop.get("enum", [])
    )


def test_a_malformed_until_decided_record_is_refused_in_one_line(tmp_path):
    """``until`` (``reproduce --until-decided``) is typed like the state's other keys: a bad one is one line."""
    from jsonschema import Draft202012Validator

    from stsbench.errors import StsbenchError
    from stsbench.reproduce.state import load_state

    base = {"kind": "stsbench-reproduce", "steps": {}, "sessions": []}
    path = tmp_path / "reproduce.json"
    validator = Draft202012Validator(_published("reproduce_state"))
    for until in ({"maximum": 10, "added": {"a": [4, 5]}}, {"maximum": 10, "added": {}, "refine": True}):
        state = {**base, "until": until}
        path.write_text(json.dumps(state), encoding="utf-8")
        assert load_state(tmp_path) == state and validator.is_valid(state)
    for until, bad in (
        ({"maximum": "ten", "added": {}}, "until.maximum: 'ten'"),
        ({"maximum": 10, "added": {"a": ["four"]}}, "until.added.a.0: 'four'"),
        ({"maximum": 10}, "until.added"),
        ({"maximum": 10, "added": {}, "refine": "maybe"}, "until.refine: 'maybe'"),
    ):
        state = {**base, "until": until}
        path.write_text(json.dumps(state), encoding="utf-8")
        with pytest.raises(StsbenchError) as caught:
            load_state(tmp_path)
        message = str(caught.value)
        assert "\n" not in message and "malformed state" in message and bad in message, message
        assert not validator.is_valid(state)
