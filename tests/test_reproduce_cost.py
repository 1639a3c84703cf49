"""The dry run's cost: every part a plan's steps do, counted exactly, priced by measured unit times."""

from __future__ import annotations

import dataclasses
import re

import pytest
from helpers import DATA, ROOT, run_cli, tiny_folder

from stsbench.recipes import load_recipe
from stsbench.reproduce.estimate import STEP_TIMES, UNIT_TIMES, count, dev_evaluations, estimates, price
from stsbench.reproduce.plan import build_plan


@pytest.fixture(autouse=True)
def _data(monkeypatch):
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    monkeypatch.setenv("STSBENCH_DATA", str(DATA))


def unique_texts(task: str, mode: str) -> set[str]:
    """What ``stsbench run`` encodes for ``task`` in ``mode``: the task's texts, each once."""
    from stsbench.tasks.base import Mode
    from stsbench.tasks.registry import get_task

    t = get_task(task)
    return set(t.texts(t.load(DATA, Mode(mode))))


def sts_test() -> set[str]:
    from stsbench.tasks.registry import STS_TASK_NAMES

    return set().union(*(unique_texts(t, "test") for t in STS_TASK_NAMES))


def test_dev_evaluations_are_the_trainers():
    assert dev_evaluations(50, 10, True) == 6  # before training, at 10, 20, 30, 40, 50
    assert dev_evaluations(4, 1, True) == 5
    assert dev_evaluations(7, 3, False) == 3  # at 3, 6 and after the last step (7)
    assert dev_evaluations(6, 6, False) == 1


def test_the_tiny_recipes_parts_are_counted_exactly(tmp_path_factory, tmp_path):
    tiny = tiny_folder(tmp_path_factory)
    counts = count(build_plan(load_recipe(tiny / "tiny.yaml"), tmp_path, DATA))
    dev = len(unique_texts("STSBenchmark", "dev"))
    # two seeds of 6 steps, one dev evaluation at the end (eval_steps 6, none before training), saved every 2
    assert [(t.steps, t.dev_evaluations, t.dev_sentences, t.saves, t.keeps) for t in counts.trainings] == [
        (6, 1, dev, 3, 1)
    ] * 2
    assert (
        counts.total("steps") == 12
        and counts.total("dev_evaluations") == 2
        and counts.dev_sentences == 2 * dev
    )
    # each seed evaluated on STS-B dev; align_uniform on STS-B dev reads what the evaluation cached
    assert (counts.models_evaluated, counts.evaluation_sentences, counts.transfer) == (2, 2 * dev, {})
    assert (counts.analysis_runs, counts.cached_analysis_runs, counts.analysis_sentences) == (2, 2, 0)
    assert counts.reports == 1
    assert counts.unknown == ()


def test_cpu_minis_parts_are_counted_exactly(tmp_path):
    counts = count(build_plan(load_recipe("cpu-mini"), tmp_path, DATA))
    dev = unique_texts("STSBenchmark", "dev")
    test = sts_test()
    # 5 methods x 5 seeds, 50 steps each: a dev evaluation before training and every 10 steps, saved every 10
    assert len(counts.trainings) == 25
    assert {(t.steps, t.dev_evaluations, t.dev_sentences, t.saves, t.keeps) for t in counts.trainings} == {
        (50, 6, len(dev), 5, 5)
    }
    assert counts.total("steps") == 1250 and counts.dev_sentences == 150 * len(dev)
    # the backbone and 25 seeds on the seven STS test sets (their unique sentences, 26,289)
    assert counts.models_evaluated == 26 and counts.evaluation_sentences == 26 * len(test)
    # six analyses on each seed, cosine density on the backbone too; what the test evaluation did not encode:
    # align_uniform's STS-B dev and the repetition probe's 100 triples (3 sentences each), on every seed
    assert counts.analysis_runs == 6 * 25 + 1
    assert counts.analysis_sentences == 25 * (len(dev - test) + 300)
    # both length biases, the spectrum and the cosine density (STS-B test) read only what the evaluation cached
    assert counts.cached_analysis_runs == 4 * 25 + 1
    assert counts.backbones == {"all-MiniLM-L6-v2"}


def test_each_part_is_priced_by_its_measured_unit(tmp_path):
    counts = count(build_plan(load_recipe("cpu-mini"), tmp_path, DATA))
    (units,) = UNIT_TIMES
    ms = {t.method: t.ms for t in STEP_TIMES if t.device == "CPU, 1 thread"}
    est = price(counts, "CPU, 1 thread")
    assert est.missing == ()
    assert est.parts["optimizer steps"] == pytest.approx(
        5 * 50 * (ms["simcse"] + 3 * ms["esimcse"] + ms["mocose"]) / 1000
    )
    # the analyses on sentences the test evaluation cached start without loading a model
    cached = counts.cached_analysis_runs
    setup = 25 * units.train_setup_s + (26 + 151 - cached) * units.setup_s + cached * units.cached_setup_s
    assert est.parts["set-up"] == pytest.approx(setup)
    assert est.parts["dev evaluations"] == pytest.approx(counts.dev_sentences * units.encode_ms / 1000)
    assert est.parts["saves"] == pytest.approx(125 * units.save_s + 125 * units.keep_s)
    assert est.parts["test evaluations"] == pytest.approx(
        counts.evaluation_sentences * units.encode_ms / 1000
    )
    assert est.parts["analyses"] == pytest.approx(counts.analysis_sentences * units.encode_ms / 1000)
    assert est.parts["report"] == units.report_s
    assert est.seconds == pytest.approx(sum(est.parts.values()))
    # a batch of 32 halves the step's part (the step times were measured at 64)
    half = dataclasses.replace(
        counts, trainings=tuple(dataclasses.replace(t, batch_size=32) for t in counts.trainings)
    )
    assert price(half, "CPU, 1 thread").parts["optimizer steps"] == pytest.approx(
        est.parts["optimizer steps"] / 2
    )


def test_what_was_not_measured_is_named_never_guessed(tmp_path):
    recipe = load_recipe("esimcse-official")
    plan = build_plan(recipe.subset(runs=["simcse", "esimcse"]), tmp_path, DATA)
    (h100,) = [e for e in estimates(plan) if e.device == "H100"]
    # 5 seeds x 15,625 steps (10^6 lines / 64) of SimCSE and of ESimCSE, the H100 rows' ms; nothing else measured
    assert h100.parts == {"optimizer steps": pytest.approx(5 * 15625 * (43.73 + 91.42) / 1000)}
    assert h100.seconds == h100.parts["optimizer steps"]
    assert {"set-up", "dev evaluations", "test evaluations", "report"} <= set(h100.missing)
    # BERT-large and RoBERTa have no measured step time: the steps are missing too, nothing priced but the rest
    (whole,) = [e for e in estimates(build_plan(recipe, tmp_path, DATA)) if e.device == "H100"]
    assert "optimizer steps" in whole.missing and "optimizer steps" not in whole.parts


def test_a_plugin_analysis_without_encodes_is_named_as_not_countable(tmp_path, monkeypatch):
    from stsbench.analyses.registry import get_analysis

    spectrum = type(get_analysis("spectrum"))
    monkeypatch.setattr(spectrum, "encodes", lambda self, config: None)
    counts = count(build_plan(load_recipe("cpu-mini"), tmp_path, DATA))
    assert counts.analysis_sentences is None and counts.unknown == ("what spectrum encodes",)
    est = price(counts, "CPU, 1 thread")
    assert "analyses" not in est.parts and "what spectrum encodes (not countable)" in est.missing


def test_the_dry_run_prints_the_counts_and_each_part(capsys):
    code, out, err = run_cli(
        ["reproduce", "cpu-mini", "--dry-run", "--data-dir", DATA, "--parallel", "2"], capsys
    )
    assert code == 0, err
    after = out.split("one step at a time (counted parts")[1]
    assert "  counted: 25 trainings: 1,250 optimizer steps, 150 dev evaluations" in after
    line = re.search(r"^  CPU, 1 thread \(this run\): (.+)$", after, re.M).group(1)
    for part in (
        "optimizer steps",
        "set-up",
        "dev evaluations",
        "saves",
        "test evaluations",
        "analyses",
        "report",
    ):
        assert part in line
    assert re.search(r"^    with --parallel 2: about .+ wall at best$", after, re.M)


def test_the_unit_times_are_the_benchmarks_rows():
    for row in STEP_TIMES:
        path = ROOT / row.source.split(" ")[0]
        table = path.read_text(encoding="utf-8").split("\n\n")[2]  # the first measured table
        pattern = rf"^\| {row.method} \| \w+ \| eager \| {row.ms:.2f} \|"
        assert re.search(pattern, table, re.M), (row, path)
    for units in UNIT_TIMES:
        text = (ROOT / units.source.split(" ")[0]).read_text(encoding="utf-8")
        for name in (
            "train_setup_s",
            "setup_s",
            "cached_setup_s",
            "encode_ms",
            "save_s",
            "keep_s",
            "report_s",
        ):
            assert re.search(rf"^\| {name} \| {getattr(units, name):.3f} \|", text, re.M), (
                name,
                units.source,
            )
        transfer = (ROOT / "benchmarks/results/transfer_speed.md").read_text(encoding="utf-8")
        for key, seconds in units.transfer_s.items():
            task, mode = key.split("@")
            assert mode == "test" and "Mode `test`" in transfer
            assert re.search(rf"^\| {task} \| [^|]+ \| {seconds} \|", transfer, re.M), key
