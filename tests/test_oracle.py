"""stsbench's STS numbers equal SimCSE's SentEval fork's, for every pooler, in test and dev modes.

Three layers: pooled vectors equal SimCSE's batcher's; (slow) the fork's scoring fed stsbench's own embeddings
gives stsbench's figures; and (slow) the fork end to end with its own batcher on a tiny BERT, every pooler.
"""

from __future__ import annotations

import numpy as np
import pytest
from oracle import STS_NAMES, hf_batcher, run_oracle_sts, table_batcher

from stsbench.data.sts import load_pairs
from stsbench.encoders import embed_table, load_encoder
from stsbench.evaluation.run import evaluate as run
from stsbench.evaluation.run import evaluate_encoder
from stsbench.tasks.base import Mode
from stsbench.tasks.registry import resolve_tasks

POOLERS = ["cls", "cls_before_pooler", "avg", "avg_first_last", "avg_top2"]


@pytest.mark.parametrize("pooler", POOLERS)
def test_pooled_vectors_equal_simcse_batcher(pooler, tiny_bert, data_dir):
    pairs = load_pairs(data_dir, "STS16")
    words = [s.split() for s in pairs.sent1[:150] + pairs.sent2[:150]]
    expected = np.concatenate(
        [hf_batcher(tiny_bert, pooler)({}, words[i : i + 64]) for i in range(0, 300, 64)]
    )
    enc = load_encoder(str(tiny_bert), pooler=pooler, use_cache=False)
    got = enc.encode([" ".join(w) for w in words], batch_size=37, show_progress=False)
    assert got.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=2e-5, rtol=1e-4)


@pytest.fixture(scope="module")
def every_sts_text_table(tiny_bert, data_dir):
    """Embeddings of every sentence the fork reads (it also encodes STS-B and SICK train/dev)."""
    texts = []
    for task in STS_NAMES:
        for split in ["test"] if task.startswith("STS1") else ["train", "dev", "test"]:
            p = load_pairs(data_dir, task, split)
            texts += p.sent1 + p.sent2
    enc = load_encoder(str(tiny_bert), pooler="avg", use_cache=False)
    return enc, embed_table(enc, texts, show_progress=False)


class _TableEncoder:
    def __init__(self, enc, table):
        self.info, self.table = enc.info, table

    def encode(self, texts, batch_size=128, show_progress=True):
        return self.table[list(texts)]


@pytest.mark.slow  # the fork's engine on all seven tasks
@pytest.mark.parametrize("mode", ["test", "dev"])
def test_scoring_equals_oracle_on_same_embeddings(mode, every_sts_text_table, data_dir):
    enc, table = every_sts_text_table
    names = STS_NAMES if mode == "test" else ["STSBenchmark", "SICKRelatedness"]
    oracle = run_oracle_sts(table_batcher(table), names, mode, data_dir)
    ours = evaluate_encoder(
        _TableEncoder(enc, table), resolve_tasks("sts"), Mode(mode), data_dir, show_progress=False
    )
    got = {r.task: r.reported for r in ours.results}
    # stsbench takes cosines in float64, the fork in float32: near-ties can move a figure across a rounding edge
    assert got == pytest.approx(oracle, abs=0.0101)
    if mode == "test":  # the other aggregations are kept, named, and differ from `all`
        agg = next(r for r in ours.results if r.task == "STS12").scores["aggregate"]["spearman"]
        assert set(agg) == {"all", "mean", "wmean"} and agg["mean"] != agg["all"]


class _Replay:
    """A batcher that computes each batch once: a second run of the fork on the same tasks reads the first's vectors.

    The fork scores every split of STS-B and SICK-R in any mode, sorted and batched alike, so the dev-mode run
    replays the batches of the test-mode run exactly.
    """

    def __init__(self, batcher) -> None:
        self.batcher, self.seen = batcher, {}

    def __call__(self, params, batch):
        key = tuple(tuple(words) for words in batch)
        if key not in self.seen:
            self.seen[key] = self.batcher(params, batch)
        return self.seen[key]


# the poolers also checked in dev mode: BERT's pooler output and one pooling two layers
DEV_POOLERS = ("cls", "avg_first_last")


@pytest.mark.slow
@pytest.mark.parametrize("pooler", POOLERS)
def test_end_to_end_equal_to_oracle_every_pooler(pooler, tiny_bert, data_dir, tmp_path):
    # every task through one pooler, every pooler through two tasks: a pooler changes the vectors, not how a task
    # scores them, so this checks what 5 x 7 runs of the fork checked in a third of the time (STS12: subsets
    # pooled as `all`; SICK-R: the 1-5 scale and header); STS-B too where dev mode is checked
    tasks = STS_NAMES if pooler == "cls" else ["STS12", "SICKRelatedness"]
    if pooler in DEV_POOLERS and "STSBenchmark" not in tasks:
        tasks = ["STS12", "STSBenchmark", "SICKRelatedness"]
    batcher = _Replay(hf_batcher(tiny_bert, pooler))
    oracle = run_oracle_sts(batcher, tasks, "test", data_dir)
    ours = run(
        str(tiny_bert),
        ",".join(tasks),
        "test",
        data_dir=data_dir,
        pooler=pooler,
        cache_dir=tmp_path / "test",
        show_progress=False,
    )
    got = {r.task: r.reported for r in ours.results}
    assert got == pytest.approx(oracle, abs=0.0101)
    if pooler not in DEV_POOLERS:
        return
    # dev mode: STS-B's and SICK-R's dev splits, STS12-16 (no dev split) skipped
    oracle = run_oracle_sts(batcher, ["STSBenchmark", "SICKRelatedness"], "dev", data_dir)
    ours = run(
        str(tiny_bert),
        "sts",
        "dev",
        data_dir=data_dir,
        pooler=pooler,
        cache_dir=tmp_path / "dev",
        show_progress=False,
    )
    assert ours.skipped == ["STS12", "STS13", "STS14", "STS15", "STS16"]
    assert {r.task: r.reported for r in ours.results} == pytest.approx(oracle, abs=0.0101)
    assert all(r.scores["split"] == "dev" for r in ours.results)
