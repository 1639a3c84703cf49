"""``reproduce --carry-changed``: finer code keys, each witness's comparison, and a carry of the tiny reproduction."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import DATA, run_cli

from stsbench import sources
from stsbench.reproduce import carry as carry_module
from stsbench.reproduce.carry import (
    check_schedule,
    compare_training,
    compare_trees,
    rescore,
    witness_step,
)

ROOT = Path(__file__).resolve().parents[1]
EDITION = ROOT / "reports" / "cpu-mini-replication"


def _log(run: str = "mocose", seed: int = 3) -> list[dict]:
    path = EDITION / "results" / "train" / run / f"seed-{seed}" / "train_log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


# -- finer keys -----------------------------------------------------------------------------------------------------


def _package_copy(tmp_path: Path) -> Path:
    root = tmp_path / "stsbench"
    shutil.copytree(sources.ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_an_edit_to_one_method_or_analysis_moves_its_own_steps_only(tmp_path):
    root = _package_copy(tmp_path)
    methods = {m: (f"stsbench.train.methods.{m}_options",) for m in ("simcse", "esimcse", "mocose")}
    analyses = {a: (f"stsbench.analyses.{a}",) for a in ("length_bias", "geometry", "repetition")}

    def codes() -> dict[str, str]:
        found = {m: sources.code_modules("train", t, root) for m, t in methods.items()}
        found |= {a: sources.code_modules("analysis", t, root) for a, t in analyses.items()}
        return {k: json.dumps(v, sort_keys=True) for k, v in found.items()}

    before = codes()
    assert "train/methods/mocose.py" in json.loads(before["mocose"])
    assert "train/methods/mocose.py" not in json.loads(before["simcse"])  # the core follows no target string
    mocose = root / "train" / "methods" / "mocose.py"
    mocose.write_text(mocose.read_text() + "\n_EDITED = 1\n")
    after = codes()
    assert [k for k in before if before[k] != after[k]] == ["mocose"]
    bias = root / "analyses" / "length_bias.py"
    bias.write_text(bias.read_text() + "\n_EDITED = 1\n")
    again = codes()
    assert [k for k in after if after[k] != again[k]] == ["length_bias"]


def test_status_names_the_module_that_moved(monkeypatch):
    from stsbench.reproduce import state as state_module

    code = state_module.train_code({"method": "mocose"})
    parts = json.loads(json.dumps(state_module.CODE_PARTS[code]))
    parts["modules"]["train/methods/mocose.py"] = "0" * 64  # as recorded before an edit of it
    recorded = {"kind": "train", "status": "done", "code": "old"}
    state = {"steps": {"train/mocose/seed-1": recorded}, "code": {"old": parts}}
    assert state_module.recorded_changed(state) == {"train/mocose/seed-1": "train/methods/mocose.py"}
    state["code"] = {code: state_module.CODE_PARTS[code]}
    recorded["code"] = code
    assert state_module.recorded_changed(state) == {}


# -- each witness's comparison refuses a perturbed record ---------------------------------------------------------------


def test_the_schedule_refuses_a_perturbed_value():
    records = _log()
    assert check_schedule(records)[0] == ""
    at, why = witness_step(records)
    assert at == 10 and "queue full" in why and "first momentum update" in why
    for key, value in (("lr", 2.5e-05), ("ema_decay", 0.75), ("negatives", 511.0)):
        bad = [dict(r) for r in records]
        next(r for r in bad if r.get("event") == "train" and r["step"] == 30)[key] = value
        wrong = check_schedule(bad)[0]
        assert wrong.startswith(f"{key} at step 30") and "(the schedule)" in wrong, wrong


@pytest.mark.parametrize("same", [True, False])
def test_a_replay_that_differs_is_refused(same):
    recorded = _log()
    recorded[0] = {**recorded[0], "cpu": "A"}
    replay = [dict(r) for r in recorded if r["step"] <= 10]
    replay[0]["cpu"] = "A" if same else "B"
    keys = check_schedule(recorded)[2]
    verdict = compare_training(replay, recorded, 10, keys)
    assert verdict.difference == "" and verdict.largest == 0.0
    assert ("other machine" in verdict.evidence) != same and "dev_spearman" in verdict.evidence
    for key, factor in (("loss", 1.02), ("contrastive", 1.02), ("grad_norm", 1.0001)):
        bad = [dict(r) for r in replay]
        train = next(r for r in bad if r.get("event") == "train")
        train[key] *= factor
        found = compare_training(bad, recorded, 10, keys).difference
        refused = factor > 1.01 or same  # 1e-4 is within 1e-3 on another machine
        assert bool(found) == refused and (not found or found.startswith(f"{key} at step 10")), found
    bad = [dict(r) for r in replay]
    next(r for r in bad if r.get("event") == "eval" and r["step"] == 0)["dev_spearman"] += 1e-3
    assert compare_training(bad, recorded, 10, keys).difference.startswith("dev_spearman at step 0")
    one_ulp = [dict(r) for r in replay]
    train = next(r for r in one_ulp if r.get("event") == "train")
    import numpy as np

    train["loss"] = float(np.nextafter(np.float32(train["loss"]), np.float32(10)))
    assert compare_training(one_ulp, recorded, 10, keys).difference == ""  # within 4 float32 ulps
    # a loss near 0 (simcse-dropout-sequential-mini's at step 10): another CPU kind's round-off is 0.3% of it
    tiny_loss = [dict(r) for r in replay]
    next(r for r in recorded if r.get("event") == "train" and r["step"] == 10)["loss"] = 1.8123374e-06
    next(r for r in tiny_loss if r.get("event") == "train" and r["step"] == 10)["loss"] = 1.8179253e-06
    found = compare_training(tiny_loss, recorded, 10, keys).difference
    assert (found == "") != same and (not found or found.startswith("loss at step 10")), found


def test_an_evaluation_is_rescored_from_its_pairs(tmp_path):
    state = json.loads((EDITION / "reproduce.json").read_text())
    record = state["steps"]["evaluate/simcse"]
    out = tmp_path / "edition"
    for rel in record["files"]:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(EDITION / rel, out / rel)
    wrong, n = rescore(record, out)
    assert wrong == "" and n == 5 * 8 + 1, (wrong, n)  # 7 tasks and an Avg. a seed, the seeds' aggregate
    path = out / "results/simcse__seed-2/avg/test/STS13.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "reported": round(data["reported"] + 0.01, 2)}))
    assert "STS13.json" in rescore(record, out)[0]
    path.write_text(
        json.dumps({**data, "interval": {**data["interval"], "high": data["interval"]["high"] + 0.01}})
    )
    assert "interval" in rescore(record, out)[0]


def test_an_analysis_result_that_differs_is_refused():
    state = json.loads((EDITION / "results/analyses/all-MiniLM-L6-v2/avg/spectrum_test.json").read_text())
    result = state["result"]
    assert compare_trees(result, result, False) == ("", 0.0)
    bad = json.loads(json.dumps(result))
    bad["avg_cosine_all_pairs"] *= 1.01
    assert compare_trees(bad, result, False)[0].startswith("avg_cosine_all_pairs")
    assert carry_module.canary_digest(result) != carry_module.canary_digest(bad)
    # a singular value at round-off (1e-17) is zero, and a corpus named from another folder is the same file
    assert (
        compare_trees(
            {"s": 4.1e-17, "corpus": "wiki/c.txt"}, {"s": 2.8e-17, "corpus": "../d/wiki/c.txt"}, False
        )[0]
        == ""
    )
    assert compare_trees({"corpus": "wiki/c.txt"}, {"corpus": "wiki/other.txt"}, False)[0].startswith(
        "corpus"
    )


def test_carry_is_one_answer_among_three(capsys):
    for other in ("--rerun-changed", "--keep-changed"):
        code, _, err = run_cli(["reproduce", "cpu-mini", "--out", "x", "--carry-changed", other], capsys)
        assert code == 2 and "give one of them" in err, err


# -- the tiny reproduction carried ------------------------------------------------------------------------------------


def test_an_edit_to_the_sts_scoring_fails_the_rescore(tmp_path, monkeypatch):
    from stsbench.results import read

    state = json.loads((EDITION / "reproduce.json").read_text())
    record = {
        "files": {k: v for k, v in state["steps"]["evaluate/baseline"]["files"].items() if "STS12" in k}
    }
    for rel in record["files"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(EDITION / rel, tmp_path / rel)
    assert rescore(record, tmp_path) == ("", 1)
    real = read.spearman
    monkeypatch.setattr(read, "spearman", lambda a, b: real(a, b) * 0.999)
    assert "is not what its per-pair sidecar gives" in rescore(record, tmp_path)[0]


@pytest.mark.slow  # a carry of the shared tiny reproduction, interrupted once and resumed: ~1 min on 2 cores
def test_a_carry_of_the_tiny_reproduction_interrupted_and_resumed(tiny, clean, tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    recipe = tiny / "tiny.yaml"
    out = tmp_path / "o"
    shutil.copytree(clean, out, symlinks=True)
    path = out / "reproduce.json"
    state = json.loads(path.read_text())
    ran = {i: r["attempts"] for i, r in state["steps"].items()}
    # every step done by other code; seed 1's log says its loss was 2% more (sealed as it now is)
    log = out / "runs/simcse/seed-1/train_log.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    first = next(r for r in records if r.get("event") == "train")
    first["loss"] *= 1.02
    for where in (log, out / "results/train/simcse/seed-1/train_log.jsonl"):
        where.write_text("".join(json.dumps(r) + "\n" for r in records))
    for record in state["steps"].values():
        record["code"] = "0" * 64
        record["files"] = {rel: sources.sha256_file(out / rel, fresh=True) for rel in record.get("files", {})}
    path.write_text(json.dumps(state))

    command = [
        sys.executable,
        "-m",
        "stsbench",
        "reproduce",
        str(recipe),
        "--out",
        str(out),
        "--carry-changed",
    ]
    env = {**os.environ, "STSBENCH_DATA": str(DATA)}
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)  # noqa: S603
    witnesses, end = out / "carry" / "reproduce.json", time.time() + 300
    while time.time() < end:  # interrupted once its first witness is done
        found = json.loads(witnesses.read_text()) if witnesses.is_file() else {"steps": {}}
        if any(r.get("status") == "done" for r in found["steps"].values()):
            break
        assert proc.poll() is None, proc.stdout.read()
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    text = proc.communicate(timeout=120)[0]
    assert proc.returncode != 0 and "run the same command again" in text, text
    done = {i for i, r in json.loads(witnesses.read_text())["steps"].items() if r["status"] == "done"}
    assert done and all(r["code"] == "0" * 64 for r in json.loads(path.read_text())["steps"].values())

    again = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)  # noqa: S603
    after = json.loads(path.read_text())
    lines = again.stdout + again.stderr
    assert f"train/simcse/seed-1: loss at step {first['step']}" in lines, lines  # then it runs again
    carried = {i for i, r in after["steps"].items() if r.get("carried")}
    assert carried == {"train/simcse/seed-2", "analysis/1-align_uniform/simcse/seed-2"}, (carried, lines)
    assert after["steps"]["train/simcse/seed-2"]["attempts"] == ran["train/simcse/seed-2"]  # no training run
    assert "replayed to step" in after["steps"]["train/simcse/seed-2"]["carried"]["compared"]
    readers = ("train/simcse/seed-1", "evaluate/simcse", "analysis/1-align_uniform/simcse/seed-1", "report")
    assert all(after["steps"][i]["attempts"] == ran[i] + 1 for i in readers), lines
    # four witnesses (two replays, an encoder, the analysis): those done before the interruption not redone
    resumed = next(s for s in after["sessions"] if s.get("carry"))
    assert resumed["steps_run"] == 4 - len(done), (resumed, done)
    assert not (out / "carry").exists()
    assert "Carried to this stsbench's code" in (out / "report.md").read_text()
