"""A task added by another package: one Python file and a 10-pair data folder, registered through an
entry point, runs in ``stsbench run``, shows in ``stsbench check`` and in a report, and is refused by ``check``
once its version changes.

The toy data is hand-computable for any encoder that maps a sentence to one vector: five lines are one pair, a
sentence and itself (cosine 1, to the bit the same five times; gold 5), five are two sentences with no word in
common (cosines below 1, all different; gold 0). Spearman is the Pearson correlation of the ranks: the cosine
ranks are 8 (five tied at the mean of 6..10) and 1..5 in whatever order, the gold ranks 8 and 3 (tied). Whatever
the order of the five, cov = 5 * 2.5 * 2.5 + (-2.5) * (15 - 5 * 5.5) = 62.5, var(cosine ranks) = 5 * 2.5**2 +
(4.5**2 + 3.5**2 + 2.5**2 + 1.5**2 + 0.5**2) = 72.5, var(gold ranks) = 10 * 2.5**2 = 62.5 (sums over the pairs),
so rho = 62.5 / sqrt(72.5 * 62.5) = sqrt(62.5 / 72.5) = 0.92848, reported as 92.85.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import on_pythonpath

from stsbench.data.integrity import check_data
from stsbench.data.sts_spec import STSSpec
from stsbench.errors import StsbenchError

OTHER = [
    ("cats sleep all day", "markets opened higher today"),
    ("the river floods", "violins play softly"),
    ("snow covers hills", "engineers fixed bridges"),
    ("children read books", "volcanoes erupt suddenly"),
    ("bakers knead dough", "satellites orbit earth"),
]
ROWS = [(5.0, "a red fox jumps", "a red fox jumps")] * 5 + [(0.0, a, b) for a, b in OTHER]
EXPECTED = round(100 * math.sqrt(62.5 / 72.5), 2)  # the module docstring's rho, as stsbench reports it

PLUGIN = '''"""A toy STS task: this file and the data folder beside it."""

from pathlib import Path

from stsbench.tasks.registry import STSSpec

TASK = STSSpec(
    "ToySTS",
    Path(__file__).parent / "toy_sts_data",
    splits={{"test": "test.tsv"}},
    aliases=("Toy",),
    version={version},
    checksums={{"test.tsv": {{"sha256": "{sha256}", "size": {size}}}}},
)
'''


def write_data(folder: Path) -> dict:
    """The 10 pairs as ``gold<TAB>sentence 1<TAB>sentence 2`` lines; returns the file's checksums."""
    folder.mkdir(parents=True, exist_ok=True)
    data = "".join(f"{g}\t{a}\t{b}\n" for g, a, b in ROWS).encode()
    (folder / "test.tsv").write_bytes(data)
    return {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}


def write_plugin(site: Path, version: int = 1) -> None:
    """The task file, its data and an installed distribution's entry point, all under ``site``."""
    sums = write_data(site / "toy_sts_data")
    (site / "toy_sts.py").write_text(PLUGIN.format(version=version, **sums), encoding="utf-8")
    dist = site / "toy_sts-1.0.dist-info"
    dist.mkdir(exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-sts\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[stsbench.tasks]\nToySTS = toy_sts:TASK\n", encoding="utf-8")


def stsbench(site: Path, *args: object, code: str | None = None) -> subprocess.CompletedProcess:
    """``stsbench ARGS`` (or ``python -c CODE``) with the plugin's folder on the path, one thread."""
    cache = str(site.parent / "cache")
    env = on_pythonpath(site, STSBENCH_CACHE=cache, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", COLUMNS="200")
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "stsbench", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)


# --- the declaration, in process (nothing registered: the registry stays the built-ins') ---------------------


def test_toy_figure_with_the_mock_encoder(tmp_path):
    import stsbench
    from stsbench.evaluation.run import evaluate_encoder
    from stsbench.tasks.base import Mode
    from stsbench.tasks.sts import STSTask

    spec = STSSpec("ToySTS", tmp_path / "toy", splits={"test": "test.tsv"}, version=3)
    write_data(tmp_path / "toy")
    run = evaluate_encoder(
        stsbench.MockEncoder(), [STSTask(spec)], Mode.test, tmp_path, show_progress=False, bootstrap=0
    )
    (result,) = run.results
    assert (result.task, result.reported, result.metric, result.task_version) == (
        "ToySTS",
        EXPECTED,
        "test_spearman",
        3,
    )
    assert EXPECTED == 92.85
    assert not STSTask(spec).supports(Mode.dev)  # no dev split: skipped in dev mode


def test_declared_checksums_refuse_modified_task_data(tmp_path):
    folder, data_dir = tmp_path / "toy", tmp_path / "data"  # the task's own folder, outside the data dir
    sums = write_data(folder)
    spec = STSSpec("ToySTS", folder, splits={"test": "test.tsv"}, checksums={"test.tsv": sums})
    (path,) = files = [spec.root(data_dir) / "test.tsv"]
    assert path == folder / "test.tsv" and check_data(data_dir, files) == {}
    path.write_text(path.read_text(encoding="utf-8").replace("5.0", "4.0"), encoding="utf-8")  # same size
    with pytest.raises(StsbenchError) as err:
        check_data(data_dir, files)
    line = str(err.value)
    assert str(path) in line and "--allow-modified-data" in line and "\n" not in line
    assert check_data(data_dir, files, allow_modified=True) == {path.as_posix(): "same size, other sha256"}
    path.write_text("5.0\ta\ta\n", encoding="utf-8")  # 8 bytes
    assert check_data(data_dir, files, True) == {
        path.as_posix(): f"8 bytes, the canonical file has {sums['size']}"
    }


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"splits": {}, "subsets": ()}, "either splits"),
        ({"splits": {"dev": "d.tsv"}}, "need a 'test' file"),
        ({"version": 0}, "version must be an integer"),
        ({"columns": (0, 0, 1)}, "three distinct"),
        ({"checksums": {"test.tsv": {"sha256": "x", "size": 1}}}, "64-hex"),
    ],
)
def test_a_bad_declaration_is_one_line(fields, message):
    kwargs = {"splits": {"test": "test.tsv"}, **fields}
    with pytest.raises(StsbenchError, match=message):
        STSSpec("Bad", "somewhere", **kwargs)


# --- the plugin, installed through an entry point, in subprocesses ------------------------------------------


@pytest.fixture(scope="module")
def plugin(tmp_path_factory, tiny_bert) -> dict:
    """The plugin installed under site/, scored with STS-B by ``stsbench run`` with a tiny random BERT (no interval).

    STS-B is the toy pairs in STS-B's columns (so a modified file, allowed): a published row has it.
    """
    root = tmp_path_factory.mktemp("plugin")
    site = root / "site"
    site.mkdir()
    write_plugin(site)
    stsb = root / "data" / "downstream" / "STS" / "STSBenchmark"
    stsb.mkdir(parents=True)
    lines = [f"main-captions\tMSRvid\t2012test\t{i:04d}\t{g}\t{a}\t{b}\n" for i, (g, a, b) in enumerate(ROWS)]
    (stsb / "sts-test.csv").write_text("".join(lines), encoding="utf-8")
    out = root / "results"
    done = stsbench(
        site, "run", "--model", tiny_bert, "--pooler", "avg", "--tasks", "STS-B,Toy", "--data-dir", root / "data",
        "--output", out, "--cache-dir", root / "cache", "--format", "json", "--quiet", "--allow-modified-data",
        "--bootstrap", "0",  # 10 pairs resample to constant scores too often for an interval
    )  # fmt: skip
    return {"root": root, "site": site, "out": out, "run": done}


def test_lookups_find_the_plugin_without_heavy_imports(plugin):
    code = (
        "import sys\n"
        "from stsbench.tasks.registry import task_names, task_version, task_columns, resolve_tasks\n"
        "print(task_names('toy,sts'), task_version('ToySTS'), task_columns('sts')[-1], resolve_tasks('toy_sts'))\n"
        "print(sorted(m for m in ('torch', 'transformers', 'stsbench.tasks.transfer.tasks') if m in sys.modules))\n"
    )
    done = stsbench(plugin["site"], code=code)
    names, heavy = done.stdout.strip().splitlines()
    sts = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]
    assert names == f"{['ToySTS', *sts]} 1 ToySTS [STSTask('ToySTS', version=1)]", done.stderr
    assert heavy == "[]"  # the set `sts` stays the papers' seven, and nothing heavy was imported


def test_plugin_task_runs(plugin):
    done = plugin["run"]
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["scores"] == {"STSBenchmark": EXPECTED, "ToySTS": EXPECTED}  # the same pairs
    assert printed["averages"] == {"STS": EXPECTED}
    (path,) = plugin["out"].glob("**/ToySTS.json")
    saved = json.loads(path.read_text(encoding="utf-8"))
    assert (saved["reported"], saved["n_pairs"], saved["task_version"]) == (EXPECTED, 10, 1)
    # outside the data folder: recorded relative to the folder the run wrote into, its --output
    data = Path(os.path.relpath(plugin["site"] / "toy_sts_data" / "test.tsv", plugin["out"])).as_posix()
    assert data == "../site/toy_sts_data/test.tsv"
    assert list(saved["provenance"]["data_files"]) == [data] and not saved["provenance"]["data_modified"]


def test_plugin_task_shows_in_check(plugin):
    done = stsbench(plugin["site"], "check", "--results", plugin["out"], "--against", "mteb/all-MiniLM-L6-v2")
    assert done.returncode != 0 and "check failed" in done.stderr  # the MiniLM row's other tasks are missing
    assert "not compared (no published value): ToySTS" in done.stdout, done.stdout + done.stderr


def test_plugin_task_shows_in_the_report(plugin):
    out = plugin["root"] / "report"
    done = stsbench(plugin["site"], "report", "--results", plugin["out"], "--out", out)
    assert done.returncode == 0, done.stderr
    header, _, row = [
        line for line in (out / "report.md").read_text(encoding="utf-8").splitlines() if "|" in line
    ][:3]
    columns = [c.strip() for c in header.strip("|").split("|")]
    cells = dict(zip(columns, [c.strip() for c in row.strip("|").split("|")], strict=True))
    # its column, headed by its first alias, after the built-ins'; ‡: STS-B's file here is not SentEval's
    assert columns[2:] == ["STS-B", "Toy", "Avg."]
    assert (cells["STS-B"], cells["Toy"]) == (f"{EXPECTED:.2f}‡", f"{EXPECTED:.2f}")
    # the papers' Avg. is over their seven tasks (five are missing here), never over the toy's
    assert cells["Avg."] == "–‡"


def test_a_changed_version_is_refused_by_check(plugin, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    write_plugin(site, version=2)  # the same task, a new version: results of version 1 no longer compare
    done = stsbench(site, "check", "--results", plugin["out"], "--against", "mteb/all-MiniLM-L6-v2")
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1, done.stdout + done.stderr
    assert "ToySTS" in lines[0] and "version" in lines[0]
