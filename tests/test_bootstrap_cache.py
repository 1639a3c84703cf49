"""A warm run reads each STS task's bootstrap replicates from the cache instead of drawing them again."""

from __future__ import annotations

import numpy as np

from stsbench.tasks.base import PairScores
from stsbench.tasks.intervals import sts_interval


def _pairs(n: int = 60, shift: float = 0.0) -> PairScores:
    rng = np.random.default_rng(0)
    gold = rng.uniform(0, 5, n)
    cosine = gold / 5 + rng.normal(0, 0.2, n) + shift
    subset = np.repeat(np.arange(2, dtype=np.int16), n // 2)
    index = np.concatenate([np.arange(n // 2), np.arange(n // 2)]).astype(np.int32)
    return PairScores(cosine, gold, subset, ["a", "b"], index)


def test_cached_replicates_equal_drawn_ones_and_change_with_their_inputs(tmp_path):
    pairs = _pairs()
    drawn, reps = sts_interval("T", pairs, 200, 7)  # no cache
    first, reps1 = sts_interval("T", pairs, 200, 7, cache_dir=tmp_path)
    (stored,) = (tmp_path / "bootstrap").glob("*.npy")
    second, reps2 = sts_interval("T", pairs, 200, 7, cache_dir=tmp_path)
    assert drawn == first == second and np.array_equal(reps, reps1) and np.array_equal(reps, reps2)
    np.save(stored, np.zeros(200))  # a replaced file is what is read: the second call read the cache
    assert np.array_equal(sts_interval("T", pairs, 200, 7, cache_dir=tmp_path)[1], np.zeros(200))
    for other in [
        ("T", _pairs(shift=0.01), 200, 7),
        ("T", pairs, 201, 7),
        ("T", pairs, 200, 8),
        ("U", pairs, 200, 7),
    ]:
        assert not np.array_equal(sts_interval(*other, cache_dir=tmp_path)[1][:200], np.zeros(200))
    assert len(list((tmp_path / "bootstrap").glob("*.npy"))) == 5


def test_a_damaged_or_unwritable_cache_costs_time_not_the_result(tmp_path):
    pairs = _pairs()
    _, reps = sts_interval("T", pairs, 100, 1)
    sts_interval("T", pairs, 100, 1, cache_dir=tmp_path)
    (stored,) = (tmp_path / "bootstrap").glob("*.npy")
    stored.write_bytes(b"not an array")
    assert np.array_equal(sts_interval("T", pairs, 100, 1, cache_dir=tmp_path)[1], reps)
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    assert np.array_equal(sts_interval("T", pairs, 100, 1, cache_dir=blocked)[1], reps)
