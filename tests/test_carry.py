"""``reproduce --carry-changed``: finer code keys, each witness's comparison, and a carry of the tiny reproduction."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import run_cli

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
    verdict = compare_training(replay, recorded, 10)
    assert verdict.difference == "" and verdict.largest == 0.0
    assert ("other machine" in verdict.evidence) != same and "dev_spearman" in verdict.evidence
    for key, factor in (("loss", 1.02), ("contrastive", 1.02), ("grad_norm", 1.0001)):
        bad = [dict(r) for r in replay]
        train = next(r for r in bad if r.get("event") == "train")
        train[key] *= factor
        found = compare_training(bad, recorded, 10).difference
        refused = factor > 1.01 or same  # 1e-4 is within 1e-3 on another machine
        assert bool(found) == refused and (not found or found.startswith(f"{key} at step 10")), found
    bad = [dict(r) for r in replay]
    next(r for r in bad if r.get("event") == "eval" and r["step"] == 0)["dev_spearman"] += 1e-3
    assert compare_training(bad, recorded, 10).difference.startswith("dev_spearman at step 0")
    one_ulp = [dict(r) for r in replay]
    train = next(r for r in one_ulp if r.get("event") == "train")
    import numpy as np

    train["loss"] = float(np.nextafter(np.float32(train["loss"]), np.float32(10)))
    assert compare_training(one_ulp, recorded, 10).difference == ""  # within 4 float32 ulps


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


def test_carry_is_one_answer_among_three(capsys):
    for other in ("--rerun-changed", "--keep-changed"):
        code, _, err = run_cli(["reproduce", "cpu-mini", "--out", "x", "--carry-changed", other], capsys)
        assert code == 2 and "give one of them" in err, err


# -- the tiny reproduction carried ------------------------------------------------------------------------------------


def _copy(clean: Path, to: Path) -> Path:
    shutil.copytree(clean, to, symlinks=True)
    return to


def test_a_carry_of_the_tiny_reproduction(tiny, clean, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("STSBENCH_DATA", str(ROOT.parent / "shared" / "data"))
    recipe = tiny / "tiny.yaml"
    out = _copy(clean, tmp_path / "o")
    path = out / "reproduce.json"
    state = json.loads(path.read_text())
    ran = {i: r["attempts"] for i, r in state["steps"].items()}
    for record in state["steps"].values():  # as done by other code: every step's witness runs
        record["code"] = "0" * 64
    path.write_text(json.dumps(state))
    code, printed, err = run_cli(
        ["reproduce", recipe, "--out", out, "--carry-changed", "--parallel", "2"], capsys
    )
    assert code in (0, 1), printed + err
    after = json.loads(path.read_text())
    carried = {i for i, r in after["steps"].items() if r.get("carried")}
    assert carried == {i for i in ran if i != "report"}, (
        printed
    )  # every step but the report, none trained again
    assert all(after["steps"][i]["attempts"] == ran[i] for i in carried)
    assert after["steps"]["report"]["attempts"] == ran["report"] + 1
    train = after["steps"]["train/simcse/seed-1"]["carried"]
    assert train["from"] == "0" * 64 and "replayed to step" in train["compared"], train
    assert not (out / "carry").exists() and after["sessions"][-2].get("carry") is True

    # a recorded loss 2% off: that training runs again, and what reads it, after a line naming the difference
    log = out / "runs/simcse/seed-1/train_log.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    first = next(r for r in records if r.get("event") == "train")
    first["loss"] *= 1.02
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    state = json.loads(path.read_text())
    for sid, record in state["steps"].items():
        record["code"] = "0" * 64
        if sid == "train/simcse/seed-1":
            for rel in record["files"]:  # sealed as it now is: the record itself says 2% more
                record["files"][rel] = sources.sha256_file(out / rel, fresh=True)
            copy = out / "results/train/simcse/seed-1/train_log.jsonl"
            if copy.exists():
                copy.write_text(log.read_text())
                record["files"][copy.relative_to(out).as_posix()] = sources.sha256_file(copy, fresh=True)
    path.write_text(json.dumps(state))
    code, printed, err = run_cli(
        ["reproduce", recipe, "--out", out, "--carry-changed", "--parallel", "2"], capsys
    )
    assert f"train/simcse/seed-1: loss at step {first['step']}" in printed, printed
    again = json.loads(path.read_text())["steps"]
    assert "carried" not in again["train/simcse/seed-1"] and again["train/simcse/seed-2"].get("carried")
    readers = [i for i, r in again.items() if "train/simcse/seed-1" in r.get("deps", [])]
    assert readers and all("carried" not in again[i] for i in readers), readers
