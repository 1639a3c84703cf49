"""``stsbench compare`` on the folders of ``stsbench train --seeds``: every seed evaluated, compared over seeds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import run_cli, train_seed

from stsbench.results.runs import write_seed_runs
from stsbench.results.write import model_slug

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def two_methods(files, tmp_path_factory) -> tuple[Path, Path]:
    """Two seeds each of a tiny SimCSE and a tiny ESimCSE, trained as ``train --seeds 1,2`` lays them out."""
    root = tmp_path_factory.mktemp("seeds")
    folders = []
    for method in ("simcse", "esimcse"):
        out = root / method
        for s in (1, 2):
            train_seed(files, out / f"seed-{s}", s, method)
        folders.append(out)
    return folders[0], folders[1]


def _compare(capsys, *sources: Path | str, extra: tuple[str, ...] = ()) -> tuple[int, str, str]:
    return run_cli(["compare", *map(str, sources), "--mode", "dev", *extra], capsys)


def one_line(code: int, err: str) -> str:
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_seeds_folders_compare_as_their_aggregates_do(two_methods, mock_data, tmp_path, capsys):
    simcse, esimcse = two_methods
    common = ("--data-dir", str(mock_data), "--cache-dir", str(tmp_path / "cache"), "-q")
    direct = tmp_path / "direct"
    code, table, err = _compare(capsys, simcse, esimcse, extra=(*common, "--output", str(direct)))
    assert code == 0, err
    assert "esimcse vs simcse" in table and "against δ = 0.5" in table and "2 vs 2 seeds" in table
    # every seed was evaluated as `stsbench run` evaluates it, and the aggregate written where it writes it
    [agg] = direct.glob(f"{model_slug(str(simcse))}/*/dev/seeds.json")
    pooler = json.loads(agg.read_text())["pooler"]
    for s in (1, 2):
        assert (direct / model_slug(f"{simcse}/seed-{s}") / pooler / "dev" / "STSBenchmark.json").is_file()

    res = tmp_path / "res"
    for folder in (simcse, esimcse):
        args = [
            "run",
            "--model",
            str(folder),
            "--tasks",
            "sts",
            "--mode",
            "dev",
            *common,
            "--output",
            str(res),
        ]
        code, _, err = run_cli(args, capsys)
        assert code == 0, err
    a, b = (res / model_slug(str(f)) / pooler / "dev" for f in (simcse, esimcse))
    for s in (1, 2):  # the same results, intervals included, as `stsbench run` wrote
        one, other = (
            json.loads(
                (d / model_slug(f"{simcse}/seed-{s}") / pooler / "dev" / "SICKRelatedness.json").read_text()
            )
            for d in (direct, res)
        )
        assert one["interval"] is not None and one["interval"] == other["interval"]
        assert one["reported"] == other["reported"]
    code, again, err = _compare(capsys, a, b)
    assert code == 0, err
    assert again == table

    code, out, err = _compare(
        capsys, simcse, esimcse, extra=(*common, "--output", str(direct), "--format", "json")
    )
    assert code == 0, err
    from_folders = json.loads(out)
    code, out, err = _compare(capsys, a, b, extra=("--format", "json"))
    from_aggregates = json.loads(out)
    assert from_folders["comparisons"] == from_aggregates["comparisons"]
    assert [s["seeds"] for s in from_folders["sides"]] == [2, 2]
    rows = from_folders["comparisons"][0]["tasks"]
    assert list(rows) == ["STSBenchmark", "SICKRelatedness", "Avg."]
    # over seeds, the one rule: paired on the seeds both share (1, 2), 2 seeds: inconclusive whatever the spread
    assert all(r["p_bootstrap_holm"] is None and r["seeds"]["design"] == "paired" for r in rows.values())
    assert all(
        r["seeds"]["outcome"] == "inconclusive" and r["seeds"]["note"].startswith("fewer than 3 seeds") for r in rows.values()
    )


def test_seeds_against_one_model_is_refused_before_evaluating(two_methods, mock_data, tmp_path, capsys):
    from stsbench.encoders.base import MockEncoder
    from stsbench.evaluation.run import evaluate_encoder
    from stsbench.tasks.base import Mode
    from stsbench.tasks.registry import resolve_tasks

    simcse, _ = two_methods
    done = evaluate_encoder(
        MockEncoder(seed=0, name="mock"),
        resolve_tasks("sts"),
        Mode("dev"),
        mock_data,
        output=tmp_path / "pairs",
        show_progress=False,
        bootstrap=0,
    )
    pairs = done.paths[0].parent  # one model's results, with their per-pair sidecars
    out = tmp_path / "out"
    for sources in (
        (simcse, pairs),
        (pairs, simcse),
        (simcse, simcse / "seed-1"),
        (simcse / "seed-1", simcse),
    ):
        code, _, err = _compare(capsys, *sources, extra=("--data-dir", str(mock_data), "--output", str(out)))
        line = one_line(code, err)
        assert f"{sources[1]} vs {sources[0]}: one side is several seeds" in line, line
        assert "or its seed aggregate) and the other one model" in line
        assert not out.exists()  # settled before any evaluation


@pytest.mark.parametrize(
    ("breakage", "says"),
    [
        ("started", "seed 3 has no kept checkpoint (not finished (started)); finish it with "),
        (
            "failed",
            "seed 3 has no kept checkpoint (not started (no seed-3 folder); it failed: killed by SIGKILL)",
        ),
        (
            "no-checkpoint",
            "seed 2 has no kept checkpoint (finished without a checkpoint); train it again with ",
        ),
    ],
)
def test_a_seeds_folder_with_a_seed_not_trained_is_refused(
    two_methods, mock_data, tmp_path, capsys, breakage, says
):
    simcse, esimcse = two_methods
    broken = tmp_path / "esimcse"
    shutil.copytree(esimcse, broken)
    if breakage == "started":  # died before its first save
        (broken / "seed-3").mkdir()
        (broken / "seed-3" / "train_log.jsonl").write_text('{"event": "start", "step": 0}\n')
    elif breakage == "failed":  # as `train --seeds 1,2,3` records a seed killed before it made its folder
        runs = [
            {
                "seed": s,
                "status": "finished",
                "error": None,
                "best_step": 2,
                "best_dev_spearman": 0.5,
                "steps": 2,
            }
            for s in (1, 2)
        ]
        runs.append(
            {
                "seed": 3,
                "status": "failed",
                "error": "killed by SIGKILL",
                "best_step": None,
                "best_dev_spearman": None,
                "steps": None,
            }
        )
        write_seed_runs(broken, runs, {"method": "esimcse"})
    else:  # the kept checkpoint's record removed after training
        (broken / "seed-2" / "stsbench.json").unlink()
    out = tmp_path / "out"
    code, _, err = _compare(
        capsys, simcse, broken, extra=("--data-dir", str(mock_data), "--output", str(out))
    )
    line = one_line(code, err)
    assert f"{broken}: {says}" in line, line
    if breakage == "no-checkpoint":
        assert f"--seed 2 --output {broken / 'seed-2'} --overwrite" in line
    else:
        assert f"--seeds 1,2,3 --output {broken} --resume" in line
    assert not out.exists()  # the first folder's seeds were not evaluated either
