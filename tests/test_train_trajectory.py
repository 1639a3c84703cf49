"""Alignment and uniformity logged at each dev evaluation: the analysis of the checkpoint saved at that step."""

from __future__ import annotations

import json

import pytest
from helpers import train_config

from stsbench.results.runs import load_train_run
from stsbench.train.loop import train

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.mark.parametrize("method", ["simcse", "mocose"])
def test_logged_alignment_and_uniformity_are_the_analysis_of_the_saved_checkpoint(files, tmp_path, method):
    from stsbench.analyses.geometry import align_uniform
    from stsbench.encoders.load import load_encoder

    out = tmp_path / "run"
    cfg = train_config(files, out, method=method, max_steps=4, eval_steps=2)
    train(cfg, show_progress=False)
    records = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
    evals = [r for r in records if r["event"] == "eval"]
    assert [r["step"] for r in evals] == [0, 2, 4]  # the backbone, then every eval_steps
    assert all(0 < r["alignment"] <= 4 and -4 <= r["uniformity"] < 0 for r in evals)
    assert len({(r["alignment"], r["uniformity"]) for r in evals}) == 3  # the weights moved, and so did they
    # the checkpoint kept at its step, through `stsbench align-uniform --split dev`'s function and encoder
    meta = json.loads((out / "stsbench.json").read_text())
    (kept,) = [r for r in evals if r["step"] == meta["step"]]
    encoder = load_encoder(str(out), device="cpu", use_cache=False)
    analysed = align_uniform(
        encoder, files / "data", "dev", batch_size=cfg.eval_batch_size, show_progress=False
    )
    assert analysed.n_positive_pairs > 0
    assert (kept["alignment"], kept["uniformity"]) == (analysed.alignment, analysed.uniformity)
    # what the reports read: the trajectory in step order, and the traceable distance MoCoSE logs beside it
    run, warnings = load_train_run(out, "run")
    assert run is not None and not warnings
    assert run.trajectory == tuple((r["step"], r["alignment"], r["uniformity"]) for r in evals)
    assert (run.traceable_distance is not None) is (method == "mocose")


def test_a_log_written_before_trajectories_reads_with_none(tmp_path):
    start = {"event": "start", "step": 0, "config": {"method": "simcse"}}
    old_eval = {"event": "eval", "step": 10, "dev_spearman": 0.8, "best": True}
    (tmp_path / "train_log.jsonl").write_text(json.dumps(start) + "\n" + json.dumps(old_eval) + "\n")
    run, warnings = load_train_run(tmp_path, "run")
    assert run is not None and not warnings and run.trajectory == () and run.curve == ((10, 0.8),)


def test_a_dev_file_without_a_positive_pair_trains_and_logs_no_trajectory(files, tmp_path):
    """Not STS-B's own dev (every gold at most 4): no alignment to log, the selection on the Spearman as ever."""
    data = tmp_path / "data"
    dev = data / "downstream" / "STS" / "STSBenchmark"
    dev.mkdir(parents=True)
    lines = (files / "data" / "downstream" / "STS" / "STSBenchmark" / "sts-dev.csv").read_text().splitlines()
    rows = [line.split("\t") for line in lines]
    (dev / "sts-dev.csv").write_text(
        "".join("\t".join([*r[:4], f"{min(float(r[4]), 4.0):.3f}", *r[5:]]) + "\n" for r in rows)
    )
    out = tmp_path / "run"
    train(
        train_config(files, out, method="simcse", max_steps=2, eval_steps=2, data_dir=str(data)),
        show_progress=False,
    )
    evals = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines() if '"eval"' in x]
    assert [r["step"] for r in evals] == [0, 2] and all("alignment" not in r for r in evals)
    assert json.loads((out / "stsbench.json").read_text())["step"] == 2
