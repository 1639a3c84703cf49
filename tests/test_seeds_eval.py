"""``stsbench run`` on a seeds folder (every seed, then the aggregate) and ``check --tolerance seeds``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import run_cli, train_args, train_seed

from stsbench.results.runs import build_aggregate, write_aggregate
from stsbench.results.write import model_slug

pytestmark = pytest.mark.usefixtures("one_thread")
MTEB_KEY = "mteb/all-MiniLM-L6-v2"


@pytest.fixture(scope="module")
def seeds_folder(files, tmp_path_factory) -> Path:
    """Two finished seeds of a tiny SimCSE run, and a third that died before its first save."""
    out = tmp_path_factory.mktemp("seeds") / "simcse"
    for s in (1, 2):
        train_seed(files, out / f"seed-{s}", s)
    (out / "seed-3").mkdir()
    (out / "seed-3" / "train_log.jsonl").write_text('{"event": "start", "step": 0}\n')
    return out


def test_run_on_a_seeds_folder_writes_each_seed_and_the_aggregate(files, seeds_folder, tmp_path, capsys):
    from stsbench.results.write import portable

    res = tmp_path / "res"
    args = ["run", "--model", str(seeds_folder), "--tasks", "STSBenchmark", "--mode", "dev"]
    args += ["--data-dir", str(files / "data"), "--output", str(res), "--no-cache", "--quiet"]
    args += ["--allow-modified-data"]  # the fixture's 40-pair STS-B dev is not the canonical file
    code, out, err = run_cli(args, capsys)
    assert code == 0, err
    assert "seed 3 left out" in err and "not finished (started)" in err
    [path] = res.glob("*/*/dev/seeds.json")
    agg = json.loads(path.read_text())
    assert path == res / model_slug(str(seeds_folder)) / agg["pooler"] / "dev" / "seeds.json"
    assert agg["kind"] == "stsbench.seed_aggregate" and agg["seeds"] == [1, 2] and agg["mode"] == "dev"
    per_seed = []
    for s in (1, 2):
        name = f"{seeds_folder}/seed-{s}"
        assert agg["models"][str(s)] == portable(name, res)  # relative to the output: no machine path
        result = res / model_slug(name) / agg["pooler"] / "dev" / "STSBenchmark.json"
        per_seed.append(json.loads(result.read_text())["reported"])
    assert per_seed[0] != per_seed[1]
    row = agg["tasks"]["STSBenchmark"]
    assert row["values"] == per_seed and row["n"] == 2
    assert row["mean"] == pytest.approx(np.mean(per_seed)) and row["std"] == pytest.approx(
        np.std(per_seed, ddof=1)
    )
    half = 12.706204736 * row["std"] / np.sqrt(2)  # t_{0.975, 1}
    assert (row["low"], row["high"]) == (pytest.approx(row["mean"] - half), pytest.approx(row["mean"] + half))
    assert agg["tasks"]["Avg."]["values"] == per_seed
    assert (
        "mean ± std (n)" in out
        and "95% interval" in out
        and f"{row['mean']:.2f} ± {row['std']:.2f} (2)" in out
    )
    # every figure is on modified data: 2 seed rows and the mean row, 2 columns each; the footnote names the file
    assert out.count("‡") == (2 + 1) * 2 + 1 and "‡ computed on data that differs" in out and "sts-dev.csv" in out
    dev = "downstream/STS/STSBenchmark/sts-dev.csv"
    assert agg["data_modified"] == {"1": [dev], "2": [dev]}
    code, _, err = run_cli(["check", "--results", str(res), "--against", MTEB_KEY, "--tolerance", "seeds"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and f"seed 1: {dev}" in err and "not comparable" in err

    code, out, err = run_cli([*args, "--format", "json"], capsys)
    assert code == 0 and json.loads(out) == agg
    # the numeric check reads the seeds' task results and passes over the aggregate
    code, _, err = run_cli(
        ["check", "--results", str(res), "--against", MTEB_KEY, "--tolerance", "100"], capsys
    )
    assert code == 2 and "holds results of 2 runs" in err


def test_seeds_over_plain_runs_of_that_layout_only_writes_seeds_json(files, seeds_folder, capsys):
    """Runs trained one by one (``train --seed s --output OUT/seed-<s>``) are finished seeds of ``--seeds``."""
    before = {s: (seeds_folder / f"seed-{s}" / "train_log.jsonl").read_text() for s in (1, 2)}
    code, _, err = run_cli(train_args(files, seeds_folder, "--seeds", "1,2", "--resume"), capsys)
    assert code == 0, err
    assert {s: (seeds_folder / f"seed-{s}" / "train_log.jsonl").read_text() for s in (1, 2)} == before
    runs = json.loads((seeds_folder / "seeds.json").read_text())
    assert [r["status"] for r in runs["runs"]] == ["finished", "finished"]
    assert runs["best_dev_spearman"]["n"] == 2
    # the training folder's seeds.json is no task result: check passes over it as over the run folders
    args = ["check", "--results", str(seeds_folder), "--against", MTEB_KEY, "--tolerance", "100"]
    code, _, err = run_cli(args, capsys)
    assert code == 2 and "no results JSON under" in err


MTEB_FIGURES = {"STS12": 72.37, "STS13": 80.60, "STS14": 75.59, "STS15": 85.39, "STS16": 78.99, "STSBenchmark": 82.03}


def minilm_row(folder: Path) -> str:
    """A published file of one's own holding a row on MiniLM-L6 (MTEB's MiniLM figures): the address of its row.

    ``check --tolerance seeds`` judges seeds only against a row of their own backbone; MTEB's row is the released
    checkpoint, which no trained seed is.
    """
    import yaml

    table = {"id": "t1", "table": "Table 1", "metric": "Spearman x100, test sets", "split": "test"}
    row = {"id": "simcse-minilm", "row": "SimCSE-MiniLM-L6", "values": MTEB_FIGURES}
    data = {
        "paper": {"id": "mine", "title": "My numbers", "citation": "Me (2026)", "source": "my lab notebook"},
        "tables": [{**table, "rows": [row]}],
    }
    path = folder / "mine.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return f"{path}#t1/simcse-minilm"


def trained_from(folders: list[Path], model: str = "all-MiniLM-L6-v2") -> None:
    """Each of ``folders`` a training run's (the report fixture's SimCSE run) started from ``model``."""
    from seed_results import FIXTURE

    for folder in folders:
        shutil.copytree(FIXTURE / "train" / "simcse-tiny", folder)
        meta = json.loads((folder / "stsbench.json").read_text(encoding="utf-8"))
        meta["training"]["model"] = model
        (folder / "stsbench.json").write_text(json.dumps(meta), encoding="utf-8")


def aggregate(res: Path, sts14: list[float]) -> Path:
    """A seed aggregate of three seeds around MTEB's MiniLM figures (std 0.1), with STS14's values given.

    MTEB's figures are one run each (the registry's default): a cell's interval is t · s · sqrt(1/3 + 1), ±0.50 at
    std 0.1.
    """
    published = {"STS12": 72.37, "STS13": 80.60, "STS15": 85.39, "STS16": 78.99, "STSBenchmark": 82.03}
    per_seed = {}
    for i, s in enumerate((1, 2, 3)):
        scores = {t: round(v + (i - 1) * 0.1, 2) for t, v in published.items()}
        scores["STS14"] = sts14[i]
        per_seed[s] = {"model": f"runs/minilm/seed-{s}", "scores": scores}
    if not (res / "runs").is_dir():
        trained_from([res / "runs" / "minilm" / f"seed-{s}" for s in (1, 2, 3)])
    return write_aggregate(res, build_aggregate("runs/minilm", "avg", "test", per_seed))


def test_check_tolerance_seeds_names_the_rows_outside(tmp_path, capsys):
    res = tmp_path / "res"
    mine = minilm_row(tmp_path)
    base = ["check", "--results", str(res), "--against", mine, "--tolerance", "seeds"]
    res.mkdir()
    code, _, err = run_cli(base, capsys)
    assert code == 2 and err.strip().count("\n") == 0 and "no seed aggregate (seeds.json) under" in err

    aggregate(res, [70.0, 70.2, 70.1])
    code, out, err = run_cli(base, capsys)
    lines = err.strip().splitlines()
    assert code == 1 and len(lines) == 1
    assert "STS14 not reproduced: the 95% interval over 3 seeds lies beyond ±1.00 points (STS14 -5.5)" in lines[0]
    [sts14] = [ln for ln in out.splitlines() if ln.startswith("│ STS14")]
    assert "70.10 ± 0.10 (3)" in sts14 and "75.59" in sts14 and "outside" in sts14
    assert sum("inside" in ln for ln in out.splitlines()) == 5

    aggregate(res, [75.49, 75.59, 75.69])
    code, out, err = run_cli(base, capsys)
    assert code == 0, err
    assert "reproduced over 3 seeds: each 95% interval of the" in out and "PASS: all 6 figures of " in out
    # the same seeds against the released checkpoint's row: refused, naming both, unless shown beside it
    mteb = ["check", "--results", str(res), "--against", MTEB_KEY, "--tolerance", "seeds"]
    code, out, err = run_cli(mteb, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "mteb/all-MiniLM-L6-v2 is a row of the checkpoint all-MiniLM-L6-v2" in err
    assert "trained from all-MiniLM-L6-v2 (MiniLM-L6)" in err and "--beside" in err
    code, out, err = run_cli([*mteb, "--beside"], capsys)
    assert code == 0 and out.count("beside, not judged") >= 6 and "PASS" not in out, out + err
    code, _, err = run_cli([*mteb[:-1], "0.05", "--beside"], capsys)
    assert code == 2 and "--beside applies to --tolerance seeds only" in err

    code, _, err = run_cli([*base[:-1], "wide"], capsys)
    assert code == 2 and "--tolerance 'wide' is neither a number nor 'seeds'" in err
    code, _, err = run_cli([*base, "--mode", "dev"], capsys)
    assert code == 2 and "no seed aggregate" in err
    (res / "other" / "seeds.json").parent.mkdir()
    (res / "other" / "seeds.json").write_text('{"kind": "stsbench.seed_aggregate", "schema_version": 1}')
    code, _, err = run_cli(base, capsys)
    assert code == 2 and err.count("\n") == 1 and "malformed stsbench seed aggregate (missing model" in err


def test_one_seed_has_no_interval_to_check(tmp_path, capsys):
    res = tmp_path / "res"
    scores = {
        "STS12": 72.37,
        "STS13": 80.6,
        "STS14": 75.59,
        "STS15": 85.39,
        "STS16": 78.99,
        "STSBenchmark": 82.03,
    }
    trained_from([res / "one" / "seed-1"])
    write_aggregate(
        res, build_aggregate("one", "avg", "test", {1: {"model": "one/seed-1", "scores": scores}})
    )
    code, out, err = run_cli(
        ["check", "--results", str(res), "--against", minilm_row(tmp_path), "--tolerance", "seeds"], capsys
    )
    # one seed: inconclusive, none not reproduced: exit 3
    assert code == 3 and "without an interval (one seed: train more)" in err


def test_seeds_equal_but_for_float_noise_reproduce_a_same_backbone_row(tmp_path, capsys):
    """Three MiniLM seeds whose figures differ by float noise alone (the third 1e-6 lower on every task, as STS16's
    78.98945, 78.98945, 78.989449) against a row of one's own on MiniLM-L6: the departing check flags the third
    seed, which changes no word, so every figure is reproduced (rule 4 capped them at inconclusive)."""
    res = tmp_path / "res"
    trained_from([res / "runs" / "minilm" / f"seed-{s}" for s in (1, 2, 3)])
    per_seed = {}
    for i, s in enumerate((1, 2, 3)):
        raw = {t: v - 0.00055 - (1e-6 if i == 2 else 0.0) for t, v in MTEB_FIGURES.items()}
        scores = {t: round(v, 2) for t, v in raw.items()}
        per_seed[s] = {"model": f"runs/minilm/seed-{s}", "scores": scores, "raw": raw}
    write_aggregate(res, build_aggregate("runs/minilm", "avg", "test", per_seed))
    code, out, err = run_cli(
        ["check", "--results", str(res), "--against", minilm_row(tmp_path), "--tolerance", "seeds"], capsys
    )
    assert code == 0 and "PASS: all 6 figures of " in out and "reproduced over 3 seeds" in out, out + err
