"""ESimCSE COLING Table 6's buc_len: every batch drawn from one bucket of sentence lengths."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers import train_config

from stsbench.errors import StsbenchError
from stsbench.train.config import TrainConfig
from stsbench.train.data import BatchOrder, epoch_order, length_buckets_of, sentence_lengths
from stsbench.train.schedule import batches_per_epoch, parse_buckets

pytestmark = pytest.mark.usefixtures("one_thread")


def test_bucket_specs_read_as_the_table_spells_them():
    assert parse_buckets("8") == [8]  # two coarse buckets: <= 8, > 8
    assert parse_buckets("3:8") == [3, 4, 5, 6, 7]  # the fine-grained {<= 3, 4, 5, 6, 7, >= 8}
    texts = ["a b", "a b c", "a b c d", "a b c d e f g", "a b c d e f g h", "a b c d e f g h i j"]
    assert length_buckets_of(texts, "3:8", "words").tolist() == [0, 0, 1, 4, 5, 5]
    assert length_buckets_of(texts, "3", "words").tolist() == [0, 0, 1, 1, 1, 1]
    for bad in ("x", "8:3", "3:", "-1"):
        with pytest.raises(StsbenchError, match="--batch-buckets"):
            parse_buckets(bad)
    with pytest.raises(StsbenchError, match="--batch-buckets 'eight': expected N"):
        TrainConfig(method="simcse", batch_buckets="eight")
    with pytest.raises(StsbenchError, match="--batch-bucket-unit sets --batch-buckets' length"):
        TrainConfig(method="simcse", batch_bucket_unit="tokens")
    assert TrainConfig(method="simcse", batch_buckets=8).batch_buckets == "8"


def test_token_lengths_count_word_pieces_without_special_tokens(tokenizer):
    texts = ["unaffable weather", "a cat ."]
    pieces = [len(tokenizer.tokenize(t)) for t in texts]
    assert sentence_lengths(texts, "tokens", tokenizer).tolist() == pieces
    assert sentence_lengths(texts, "words").tolist() == [2, 3]


@pytest.mark.parametrize("world", [1, 2])
def test_every_batch_falls_in_one_bucket_and_every_row_comes_once(world):
    rng = np.random.default_rng(0)
    buckets = rng.choice(6, size=203, p=[0.1, 0.05, 0.05, 0.05, 0.05, 0.7])
    order = BatchOrder(len(buckets), 8, world, buckets)
    for epoch in range(2):
        seen: list[int] = []
        kinds = []
        for index in range(order.per_epoch):
            batch = np.concatenate([order.rows(3, epoch, index, rank) for rank in range(world)])
            assert len(set(buckets[batch].tolist())) == 1  # one bucket a (global) batch
            assert 2 <= len(batch) <= 8 * world and (world == 1 or len(batch) == 8 * world)
            kinds.append(int(buckets[batch[0]]))
            seen += batch.tolist()
        assert len(seen) == len(set(seen))  # no row twice in an epoch
        sizes = np.bincount(buckets)
        if world == 1:  # one process keeps each bucket's last partial batch (of two rows or more)
            assert len(seen) == sum(n if n % 8 != 1 else n - 1 for n in sizes)
            assert order.per_epoch == sum(batches_per_epoch(int(n), 8) for n in sizes)
        else:  # several: full global batches only
            assert order.per_epoch == sum(int(n) // 16 for n in sizes)
        assert kinds != sorted(kinds)  # the buckets' batches interleave, in random order
    again = BatchOrder(len(buckets), 8, world, buckets)
    assert np.array_equal(again.rows(3, 1, 2), order.rows(3, 1, 2))  # a pure function of (seed, epoch)
    assert order.sizes() == np.bincount(buckets).tolist()


def test_without_buckets_the_order_is_the_epoch_shuffle():
    order = BatchOrder(30, 8)
    assert order.per_epoch == 4 and np.array_equal(order.rows(1, 0, 1), epoch_order(30, 1, 0)[8:16])
    # drawn once an epoch: every (seed, epoch), in any order of reads, is still that epoch's shuffle
    for seed, epoch, index, rank in [(1, 1, 0, 0), (1, 0, 2, 0), (2, 0, 2, 0), (2, 0, 0, 1), (1, 1, 3, 0)]:
        expected = epoch_order(30, seed, epoch)[(index + rank) * 8 : (index + rank + 1) * 8]
        assert np.array_equal(order.rows(seed, epoch, index, rank), expected)


def test_too_few_rows_for_a_bucketed_batch_is_one_line():
    with pytest.raises(
        StsbenchError, match="no length bucket of the 10 training rows fills a batch of 4 x 2"
    ):
        BatchOrder(10, 4, 2, np.array([0] * 5 + [1] * 5))


def test_a_bucketed_training_draws_its_batches_from_one_bucket(files, tmp_path, monkeypatch):
    import stsbench.train.loop as loop

    drawn: list[list[str]] = []
    real = loop.batch_views

    def spy(run, step):
        rows = run.order.rows(run.cfg.seed, *divmod(step, run.per_epoch))
        drawn.append([run.data.rows[i][0] for i in rows])
        return real(run, step)

    monkeypatch.setattr(loop, "batch_views", spy)
    out = tmp_path / "run"
    cfg = train_config(files, out, method="simcse", max_steps=4, eval_steps=4, batch_buckets="10")
    loop.train(cfg, show_progress=False)
    assert len(drawn) == 4
    for texts in drawn:
        assert len({len(t.split()) <= 10 for t in texts}) == 1  # all short, or all long
    meta = json.loads((out / "stsbench.json").read_text())
    lines = [line for line in (files / "train.txt").read_text().splitlines() if line.strip()]
    short = sum(len(line.split()) <= 10 for line in lines)
    assert meta["batch_buckets"] == {"spec": "10", "unit": "words", "sizes": [short, len(lines) - short]}
