"""--report-to: the same loss and dev-score series in TensorBoard, W&B (offline) and trackio as in train_log.jsonl."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from helpers import DATA, Killed, run_cli, run_cli_process, train_config

from stsbench.errors import StsbenchError
from stsbench.train.config import TrainConfig
from stsbench.train.tracking import parse_report_to, scalars

TESTED = {"tensorboard": "2.21", "wandb": "0.31", "trackio": "0.43"}  # the tracking extra's floors


def need(*names: str) -> None:
    """Skip below the tested versions (CI's floors venv can only install older wandb and trackio)."""
    for name in names:
        pytest.importorskip(name, minversion=TESTED[name])


OFFLINE = {
    "WANDB_MODE": "offline",
    "WANDB_SILENT": "true",
    "WANDB_DISABLE_GIT": "true",
    "WANDB_DISABLE_CODE": "true",
    "WANDB_CONSOLE": "off",
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TRACKIO_TELEMETRY": "0",
    "OMP_NUM_THREADS": "1",
}


def _log_series(log: Path) -> dict[str, dict[int, float]]:
    """train_log.jsonl as tracker series, through the one mapping the trackers use."""
    series: dict[str, dict[int, float]] = {}
    for line in log.read_text().splitlines():
        record = json.loads(line)
        for key, value in scalars(record).items():
            series.setdefault(key, {})[record["step"]] = value
    return series


def _tensorboard_series(logdir: Path) -> dict[str, dict[int, float]]:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(logdir))
    acc.Reload()
    return {tag: {e.step: e.value for e in acc.Scalars(tag)} for tag in acc.Tags()["scalars"]}


def _wandb_records(path: Path):
    """The protobuf records of a .wandb file, decoded with wandb's own ``Record`` message.

    wandb 0.31 ships no Python reader of these files (its leveldb-log DataStore was removed, LocalApi is
    not released: wandb/wandb#12745), so the log framing is read here: a 7-byte file header (``:W&B``,
    magic 0xBEE1, version 0), then 32 KiB blocks of chunks (crc32 over type and data, length, type:
    1 full, 2 first, 3 middle, 4 last); each chunk's checksum is verified.
    """
    from wandb.proto import wandb_internal_pb2

    raw = path.read_bytes()
    ident, magic, version = struct.unpack("<4sHB", raw[:7])
    assert (ident, magic, version) == (b":W&B", 0xBEE1, 0)
    pos, data = 7, b""
    while pos + 7 <= len(raw):
        if 32768 - pos % 32768 < 7:  # a block's tail too short for a chunk header is padding
            pos += 32768 - pos % 32768
            continue
        crc, length, kind = struct.unpack("<IHB", raw[pos : pos + 7])
        chunk = raw[pos + 7 : pos + 7 + length]
        if kind == 0 and length == 0:
            break
        assert crc == zlib.crc32(chunk, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF
        pos += 7 + length
        data = chunk if kind in (1, 2) else data + chunk
        if kind in (1, 4):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(data)
            yield record


def _wandb_series(out: Path, runs: int = 1) -> tuple[dict[str, dict[int, float]], dict]:
    """The history of OUTPUT's W&B run (``runs``: its offline folders, one per start of the run)."""
    files = sorted((out / "wandb").glob("offline-run-*/*.wandb"))
    assert len(files) == runs
    series: dict[str, dict[int, float]] = {}
    run: dict = {}
    for record in (r for f in files for r in _wandb_records(f)):
        kind = record.WhichOneof("record_type")
        if kind == "history":
            items = {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item}
            step = items.pop("_step")
            for key, value in items.items():
                if not key.startswith("_"):
                    series.setdefault(key, {})[step] = value
        elif kind == "run":
            run.setdefault("ids", []).append(record.run.run_id)
            run |= {
                "group": record.run.run_group,
                "name": record.run.display_name,
                "project": record.run.project,
            }
            run["config"] = {i.key: json.loads(i.value_json) for i in record.run.config.update}
    return series, run


def _trackio_series(store: Path, project: str, name: str) -> dict[str, dict[int, float]]:
    code = (
        "import json, sys; from trackio.sqlite_storage import SQLiteStorage as S;"
        "print(json.dumps([{k: v for k, v in r.items() if k != 'timestamp'} "
        "for r in S.get_logs(sys.argv[1], sys.argv[2])], default=str))"
    )
    env = {**os.environ, **OFFLINE, "TRACKIO_DIR": str(store)}  # trackio reads its folder at import
    done = subprocess.run(
        [sys.executable, "-c", code, project, name], capture_output=True, text=True, env=env, check=True
    )
    series: dict[str, dict[int, float]] = {}
    for row in json.loads(done.stdout):
        step = row.pop("step")
        for key, value in row.items():
            if isinstance(value, int | float):
                series.setdefault(key, {})[step] = value
    return series


def test_report_to_parsing_and_refusals():
    assert parse_report_to("wandb, tensorboard,wandb") == "tensorboard,wandb"
    assert parse_report_to(["trackio", "wandb"]) == "wandb,trackio"
    assert parse_report_to(None) == parse_report_to("none") == "none"
    with pytest.raises(StsbenchError, match="unknown; choose from none, tensorboard"):
        TrainConfig(method="simcse", report_to="mlflow")
    with pytest.raises(StsbenchError, match="none with a tracker"):
        parse_report_to("none,wandb")


def test_a_missing_tracker_library_is_one_line_naming_the_extra(files, tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "wandb" else real(n, *a))
    args = ["train", "--method", "simcse", "--model", files / "tiny", "--train-file", files / "train.txt"]
    args += ["--output", tmp_path / "out", "--data-dir", files / "data", "--report-to", "wandb"]
    code, _, err = run_cli(args, capsys)
    assert code != 0 and "Traceback" not in err
    assert "--report-to wandb needs the wandb package: pip install 'stsbench[tracking]'" in err
    assert not (tmp_path / "out" / "train_log.jsonl").exists()


@pytest.mark.usefixtures("one_thread")
def test_every_tracker_gets_the_series_of_train_log(files, tmp_path):
    """A tiny MoCoSE run (loss parts, ema_decay, dev every 2 steps) logged to all three trackers, read back offline."""
    need("tensorboard", "wandb", "trackio")
    out, store = tmp_path / "run", tmp_path / "trackio"
    args = ["train", "--method", "mocose", "--model", files / "tiny", "--train-file", files / "train.txt"]
    args += ["--output", out, "--data-dir", files / "data", "--batch-size", "4", "--max-steps", "5"]
    args += [
        "--eval-steps",
        "2",
        "--log-steps",
        "1",
        "--eval-batch-size",
        "16",
        "--queue-size",
        "4",
        "--queue-start-size",
        "4",
    ]
    args += ["--report-to", "tensorboard,wandb", "--report-to", "trackio", "--run-group", "grp", "--quiet"]
    env = {**os.environ, **OFFLINE, "TRACKIO_DIR": str(store)}
    done = run_cli_process(args, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]

    expected = _log_series(out / "train_log.jsonl")
    assert set(expected["eval/dev_spearman"]) == {0, 2, 4, 5}  # before training, every 2 steps, the last
    assert set(expected["train/loss"]) == {1, 2, 3, 4, 5}
    assert {"train/lr", "train/ema_decay", "train/grad_norm"} <= set(expected)

    tensorboard = _tensorboard_series(out / "tensorboard")
    wandb, run = _wandb_series(out)
    trackio = _trackio_series(store, "stsbench", "grp/run")
    for name, got in (("tensorboard", tensorboard), ("wandb", wandb), ("trackio", trackio)):
        assert set(got) == set(expected), name
        for key, values in expected.items():
            assert set(got[key]) == set(values), (name, key)
            for step, value in values.items():  # TensorBoard keeps float32
                assert got[key][step] == pytest.approx(value, rel=1e-6 if name == "tensorboard" else 1e-12)
    assert (run["group"], run["name"], run["project"]) == ("grp", "grp/run", "stsbench")
    assert run["config"]["method"] == "mocose" and run["config"]["resolution"]["queued_negatives"] == 4


def test_reproduce_groups_each_runs_seeds_and_keeps_its_keys(tmp_path):
    from stsbench.recipes import load_recipe
    from stsbench.reproduce.plan import build_plan

    recipe = load_recipe("cpu-mini")
    plain = build_plan(recipe, tmp_path / "r", DATA)
    tracked = build_plan(recipe, tmp_path / "r", DATA, "tensorboard,wandb")
    assert [s.key for s in tracked.steps] == [
        s.key for s in plain.steps
    ]  # where else it logs changes no number
    trains = 0
    for before, after in zip(plain.steps, tracked.steps, strict=True):
        extra = ()
        if before.kind == "train":
            trains += 1
            group = f"cpu-mini/{before.id.split('/')[1]}"
            extra = ("--report-to", "tensorboard,wandb", "--run-group", group)
        assert after.args == before.args + extra
    assert trains == 25


@pytest.mark.usefixtures("one_thread")
def test_seeds_are_grouped_and_each_logs_its_own_series(files, tmp_path, capsys, monkeypatch):
    need("tensorboard")
    out = tmp_path / "sweep"
    args = ["train", "--method", "simcse", "--model", files / "tiny", "--train-file", files / "train.txt"]
    args += ["--output", out, "--data-dir", files / "data", "--batch-size", "4", "--max-steps", "2"]
    args += ["--eval-steps", "2", "--log-steps", "1", "--eval-batch-size", "16", "--no-eval-at-start"]
    args += ["--seeds", "1,2", "--report-to", "tensorboard", "--quiet"]
    for key, value in OFFLINE.items():  # the seeds' own processes train and log, in this environment
        monkeypatch.setenv(key, value)
    code, _, err = run_cli(args, capsys)
    assert code == 0, err[-2000:]
    import yaml

    options = yaml.safe_load((out / "seed-options.yaml").read_text())
    assert (options["report_to"], options["run_group"]) == ("tensorboard", "sweep/simcse")
    losses = []
    for seed in (1, 2):
        folder = out / f"seed-{seed}"
        expected = _log_series(folder / "train_log.jsonl")
        got = _tensorboard_series(folder / "tensorboard")
        assert set(got) == set(expected) and set(got["train/loss"]) == {1, 2}
        for key, values in expected.items():
            assert got[key] == pytest.approx(values, rel=1e-6)
        losses.append(expected["train/loss"][1])
        saved = json.loads((folder / "stsbench.json").read_text())["training"]
        assert saved["run_group"] == "sweep/simcse"
    assert losses[0] != losses[1]  # two seeds, two series


@pytest.mark.usefixtures("one_thread")
def test_a_resumed_run_goes_on_in_the_same_tracked_runs(files, tmp_path, monkeypatch):
    need("tensorboard", "wandb")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from stsbench.train.loop import train

    for key, value in OFFLINE.items():
        monkeypatch.setenv(key, value)
    out = tmp_path / "run"
    kw = {"max_steps": 6, "save_steps": 2, "eval_steps": 2, "report_to": "tensorboard,wandb"}

    def kill(step):
        if step == 3:  # after step 3 was logged; the saved state is step 2's
            raise Killed

    with pytest.raises(Killed):
        train(train_config(files, out, **kw), show_progress=False, on_step=kill)
    train(train_config(files, out, **kw), resume=True, show_progress=False)
    expected = _log_series(out / "train_log.jsonl")
    assert set(expected["train/loss"]) == set(range(1, 7))
    acc = EventAccumulator(str(out / "tensorboard"))
    acc.Reload()
    for (
        tag,
        values,
    ) in expected.items():  # step 3 once: the resumed writer purged what followed the saved step
        events = acc.Scalars(tag)
        assert [e.step for e in events] == sorted(values), tag
        assert [e.value for e in events] == pytest.approx([values[s] for s in sorted(values)], rel=1e-6)
    wandb, run = _wandb_series(out, runs=2)
    assert len(run["ids"]) == 2 and len(set(run["ids"])) == 1  # both starts log to one W&B run
    assert wandb.keys() == expected.keys()
    for key, values in expected.items():
        assert wandb[key] == pytest.approx(values, rel=1e-12), key
