"""The mock SentEval folder (``tests/mocks.py``): its figures, worked out by hand, through ``stsbench.evaluate``.

How the mock is built is in :mod:`mocks`: in an STS task of ``n`` pairs, cosine and gold both rise in equal steps
with the pair's rank, except where two neighbours' golds are swapped. With no ties and values linear in the
ranks, Spearman = Pearson = 1 - 6 S / (n (n^2 - 1)), S = sum of squared rank differences = 2 per swap.
A subset of 6 pairs with one swap: 1 - 12/210 = 0.942857; with two: 1 - 24/210 = 0.885714.
"""

from __future__ import annotations

import shutil

import pytest
from mocks import write_mock_data

import stsbench
from stsbench.data.integrity import check_data, differences
from stsbench.data.sts import load_pairs, pair_files
from stsbench.errors import StsbenchError
from stsbench.results.read import read_result

ONE_SWAP, TWO_SWAPS = 1 - 12 / 210, 1 - 24 / 210  # a 6-pair subset
# task -> (n, the "all" figure, {subset: its Spearman} for the subsets that are not 1)
STS_BY_HAND = {
    "STS12": (30, 1 - 12 / (30 * 899), {"MSRpar": ONE_SWAP}),  # swap 1-2, inside MSRpar: 0.999555
    "STS13": (18, 1 - 24 / (18 * 323), {"FNWN": ONE_SWAP, "OnWN": ONE_SWAP}),  # 0.995872
    "STS14": (36, 1 - 12 / (36 * 1295), {}),  # swap 5-6 across two subsets: each keeps its order; 0.999743
    "STS15": (
        30,
        1 - 36 / (30 * 899),
        dict.fromkeys(("answers-forums", "answers-students", "belief"), ONE_SWAP),
    ),
    "STS16": (30, 1 - 24 / (30 * 899), {"headlines": TWO_SWAPS}),  # swaps 7-8 and 9-10: 0.999110
}
SPLITS_BY_HAND = {  # (task, split) -> (n, figure)
    ("STSBenchmark", "test"): (11, 1 - 24 / (11 * 120)),  # two swaps: 0.981818
    ("STSBenchmark", "dev"): (11, 1 - 12 / (11 * 120)),  # one: 0.990909
    ("SICKRelatedness", "test"): (9, 1 - 36 / (9 * 80)),  # three: 0.95
    ("SICKRelatedness", "dev"): (9, 1 - 24 / (9 * 80)),  # two: 0.966667
}
# every transfer task is separable (100) but MR, whose 2 of 40 sentences sit on the other class' axis: in
# stratified folds of equal size (2 + 2 a fold) the mean fold accuracy is the overall one, 38/40
TRANSFER_BY_HAND = {
    "MR": 95.0,
    "CR": 100.0,
    "SUBJ": 100.0,
    "MPQA": 100.0,
    "SST2": 100.0,
    "TREC": 100.0,
    "MRPC": 100.0,
}


@pytest.fixture(scope="module")
def hand(mock_data, tmp_path_factory):
    """The ``mock_data`` folder and the hand encoder of its sentences (a second, identical mock gives it)."""
    return mock_data, write_mock_data(tmp_path_factory.mktemp("hand"))[1]


def test_sts_test_figures_are_the_hand_computed_ones(hand, tmp_path, one_thread):
    root, encoder = hand
    run = stsbench.evaluate(encoder, "sts", data_dir=root, output=tmp_path, bootstrap=0, use_cache=False)
    got = {r.task: r for r in run.results}
    assert list(got) == [*STS_BY_HAND, "STSBenchmark", "SICKRelatedness"]
    for task, (n, every, subsets) in STS_BY_HAND.items():
        r, agg = got[task], got[task].scores["aggregate"]
        assert r.n_pairs == n and r.reported == round(100 * every, 2), task
        for metric in ("spearman", "pearson"):  # no ties, values linear in ranks: Pearson is Spearman
            assert agg[metric]["all"] == pytest.approx(every, abs=1e-5), (task, metric)
        per = {s: subsets.get(s, 1.0) for s in r.scores["subsets"]}
        assert {s: v["spearman"] for s, v in r.scores["subsets"].items()} == pytest.approx(per, abs=1e-9), (
            task
        )
        mean = pytest.approx(sum(per.values()) / len(per))  # the subsets are of one size: wmean is mean
        assert agg["spearman"]["mean"] == mean and agg["spearman"]["wmean"] == mean, task
        assert {v["n"] for v in r.scores["subsets"].values()} == {
            6
        }  # each last subset's gold-less pair dropped
        assert read_result(run.paths[0].parent / f"{task}.json").reported == r.reported
    # STS14's swap crosses deft-forum and deft-news: Spearman 1 in each, not Pearson. deft-forum's golds rise
    # 0,1,2,3,4,6 against cosines 0..5: deviations from the means 2.5 and 8/3 give sum dx*dy = 20,
    # sum dx^2 = 17.5, sum dy^2 = 70/3, so r = 20 / sqrt(17.5 * 70/3) = 0.989743
    forum = got["STS14"].scores["subsets"]["deft-forum"]
    assert forum["spearman"] == pytest.approx(1.0) and forum["pearson"] == pytest.approx(0.989743, abs=1e-5)
    for (task, split), (n, figure) in SPLITS_BY_HAND.items():
        if split == "test":
            assert got[task].n_pairs == n and got[task].reported == round(100 * figure, 2), task
            assert got[task].scores["test"]["pearson"] == pytest.approx(figure, abs=1e-5), task


def test_dev_mode_reports_the_hand_computed_dev_figures(hand, one_thread):
    root, encoder = hand
    run = stsbench.evaluate(encoder, "sts", "dev", data_dir=root, bootstrap=0, use_cache=False)
    got = {r.task: r.reported for r in run.results}
    want = {t: round(100 * f, 2) for (t, split), (_, f) in SPLITS_BY_HAND.items() if split == "dev"}
    assert got == want == {"STSBenchmark": 99.09, "SICKRelatedness": 96.67}


def test_transfer_accuracies_are_the_hand_computed_ones(hand, one_thread):
    """In fasttest mode (RMSprop): test mode's Adam at its learning rate does not leave SentEval's initial layer
    within its patience on so few rows (SentEval's fork, given these vectors, also scores MR 5.0 there)."""
    root, encoder = hand
    run = stsbench.evaluate(encoder, "transfer", "fasttest", data_dir=root, bootstrap=0, use_cache=False)
    assert {r.task: r.reported for r in run.results} == TRANSFER_BY_HAND
    mrpc = next(r for r in run.results if r.task == "MRPC")
    assert mrpc.scores["test_f1"] == 100.0 and mrpc.scores["n_test"] == 10


def test_the_mock_files_read_as_sentevals_do(hand):
    root, encoder = hand
    for task, (n, _, _) in STS_BY_HAND.items():
        pairs = load_pairs(root, task)
        assert len(pairs) == n and len(pairs.subsets()) == n // 6
        files = pair_files(root, task)
        # the last subset has 7 lines, its third without gold (SentEval drops it; the encoder does not know it)
        assert len(files[-1].read_text().splitlines()) == 7 and files[-1].read_text().splitlines()[2] == ""
        assert "an unscored pair" not in " ".join(pairs.sent1)
    with pytest.raises(KeyError, match="not a mock sentence"):
        encoder.encode(["an unscored pair 4 ."])


def test_only_the_mock_folder_is_taken_as_canonical(hand, tmp_path):
    root, _ = hand
    files = pair_files(root, "STS16")
    assert check_data(root, files) == {}
    copy = tmp_path / "copy"
    shutil.copytree(root / "downstream", copy / "downstream")
    moved = pair_files(copy, "STS16")
    assert set(differences(copy, moved)) == {f.relative_to(copy).as_posix() for f in moved}
    with pytest.raises(StsbenchError, match="differs from the canonical SentEval data"):
        check_data(copy, moved)
