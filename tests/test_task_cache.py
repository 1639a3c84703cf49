"""The parsed-task cache (``<cache>/tasks/``): a warm run reads no SentEval file, and a cache file that is
damaged, foreign or stale never gives a number: the task's files are read again."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import stsbench
from stsbench.data import sts as sts_reader
from stsbench.evaluation import run as evaluation
from stsbench.evaluation.run import load_task
from stsbench.tasks.base import Mode
from stsbench.tasks.registry import get_task

WORDS = "a man dog cat runs plays guitar the on in field red blue sky over two".split()


def _sentence(rng: np.random.Generator) -> str:
    # SentEval's tokens rejoined: the file's odd spacing is what the reader normalises
    return "  ".join(rng.choice(WORDS, size=int(rng.integers(3, 9))))


@pytest.fixture()
def data(tmp_path) -> Path:
    """STS13 (three subsets, one pair with an empty gold line, dropped) and SICK-R (header, columns), small."""
    rng = np.random.default_rng(0)
    root = tmp_path / "data"
    folder = root / "downstream" / "STS" / "STS13-en-test"
    folder.mkdir(parents=True)
    for subset in ("FNWN", "headlines", "OnWN"):
        pairs = [f"{_sentence(rng)}\t{_sentence(rng)}" for _ in range(12)]
        golds = [f"{rng.uniform(0, 5):.3f}" for _ in range(12)]
        golds[3] = ""  # SentEval drops this pair
        (folder / f"STS.input.{subset}.txt").write_text("\n".join(pairs) + "\n", encoding="utf-8")
        (folder / f"STS.gs.{subset}.txt").write_text("\n".join(golds) + "\n", encoding="utf-8")
    sick = root / "downstream" / "SICK"
    sick.mkdir(parents=True)
    rows = ["pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment"]
    rows += [f"{i}\t{_sentence(rng)}\t{_sentence(rng)}\t{rng.uniform(1, 5):.1f}\tNEUTRAL" for i in range(20)]
    (sick / "SICK_test_annotated.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return root


def _same(a, b) -> None:
    assert (a.name, a.sent1, a.sent2, a.subset, a.scale) == (b.name, b.sent1, b.sent2, b.subset, b.scale)
    assert a.gold.dtype == b.gold.dtype == np.float64 and a.gold.tobytes() == b.gold.tobytes()


def _cache_file(cache: Path, task, data: Path) -> Path:
    return cache / evaluation.TASKS_FOLDER / f"{evaluation.cache_key(task, data, Mode.test)}.parsed"


def _no_reading(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("a data file was read")

    monkeypatch.setattr(sts_reader, "read_lines", refuse)


@pytest.mark.parametrize("name", ["STS13", "SICKRelatedness"])
def test_the_cached_parse_is_the_files_parse_and_reads_no_file(name, data, tmp_path, monkeypatch):
    task, cache = get_task(name), tmp_path / "cache"
    fresh = task.load(data, Mode.test)
    assert len(fresh) == (33 if name == "STS13" else 20)  # the empty gold lines' pairs dropped
    _same(load_task(task, data, Mode.test, cache), fresh)  # parsed, and stored
    assert _cache_file(cache, task, data).is_file()
    _no_reading(monkeypatch)
    _same(load_task(task, data, Mode.test, cache), fresh)  # from the cache alone
    with pytest.raises(AssertionError, match="was read"):
        load_task(task, data, Mode.test, None)  # no cache: the files, as before


def test_an_edited_data_file_is_parsed_again(data, tmp_path):
    task, cache = get_task("STS13"), tmp_path / "cache"
    before = load_task(task, data, Mode.test, cache)
    gold = data / "downstream" / "STS" / "STS13-en-test" / "STS.gs.OnWN.txt"
    lines = gold.read_text(encoding="utf-8").splitlines()
    lines[0] = "4.25"  # another value, another size
    gold.write_text("\n".join(lines) + "\n", encoding="utf-8")
    after = load_task(task, data, Mode.test, cache)
    _same(after, task.load(data, Mode.test))
    assert after.gold[-11] == 4.25 and after.gold[-11] != before.gold[-11]


def _truncate(path: Path, other: Path) -> None:
    path.write_bytes(path.read_bytes()[:500])


def _flip_a_byte(path: Path, other: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF  # among the sentences' bytes
    path.write_bytes(bytes(raw))


def _other_gold(path: Path, other: Path) -> None:
    """The gold scores changed in place, the header and its sha256 left as they were."""
    raw = path.read_bytes()
    gold = evaluation._decode(path, json.loads(raw.split(b"\n", 1)[0])["key"]).gold
    at = raw.rindex(gold.tobytes())
    path.write_bytes(raw[:at] + (gold + 0.5).tobytes() + raw[at + gold.nbytes :])


def _another_tasks_file(path: Path, other: Path) -> None:
    path.write_bytes(other.read_bytes())  # well-formed, its own sha256 right, but another key


@pytest.mark.parametrize("damage", [_truncate, _flip_a_byte, _other_gold, _another_tasks_file])
def test_a_damaged_or_foreign_cache_file_is_never_used(damage, data, tmp_path):
    task, sick, cache = get_task("STS13"), get_task("SICKRelatedness"), tmp_path / "cache"
    fresh = task.load(data, Mode.test)
    load_task(task, data, Mode.test, cache)
    load_task(sick, data, Mode.test, cache)
    path, other = _cache_file(cache, task, data), _cache_file(cache, sick, data)
    key = evaluation.cache_key(task, data, Mode.test)
    damage(path, other)
    assert evaluation._decode(path, key) is None  # refused
    _same(load_task(task, data, Mode.test, cache), fresh)
    _same(evaluation._decode(path, key), fresh)  # and rewritten whole


def test_a_run_with_the_task_cache_gives_the_figures_and_intervals_of_one_without(data, tmp_path):
    def figures(**kw):
        run = stsbench.evaluate(
            stsbench.MockEncoder(dim=8),
            "STS13,SICK-R",
            data_dir=data,
            allow_modified_data=True,
            bootstrap=50,
            **kw,
        )
        return [(r.task, r.scores, r.interval) for r in run.results], run.average.interval

    cache = tmp_path / "cache"
    plain = figures(use_cache=False)
    assert figures(cache_dir=cache) == plain  # parses and stores
    assert len(list((cache / evaluation.TASKS_FOLDER).glob("*.parsed"))) == 2
    assert figures(cache_dir=cache) == plain  # reads the parsed tasks
