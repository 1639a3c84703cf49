"""MoCoSE Table 5's embeddings-stage augmentations and Table 6(a)'s width.

Token cut-off, feature cut-off and position shuffle in both flavours (official: every position, one shuffle a
batch; content: each sentence's content word-pieces), MoCoSE's branches taking them, and ``--out-size``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import torch
from helpers import build_tiny

from stsbench.errors import StsbenchError
from stsbench.train.augment.cutoff import FeatureCutoff, PositionShuffle, TokenCutoff
from stsbench.train.config import TrainConfig

pytestmark = pytest.mark.usefixtures("one_thread")

ROWS, WIDTH, HIDDEN = 4, 10, 40
LENGTHS = [10, 7, 4, 2]  # attended tokens a row, [CLS] and [SEP] included (the last: no content)


def _batch():
    """Ones as word embeddings; ``special``: [CLS], [SEP] and padding of rows of LENGTHS."""
    mask = torch.zeros(ROWS, WIDTH, dtype=torch.long)
    special = torch.ones(ROWS, WIDTH, dtype=torch.bool)
    for r, n in enumerate(LENGTHS):
        mask[r, :n] = 1
        special[r, 1 : n - 1] = False
    batch = {"inputs_embeds": torch.ones(ROWS, WIDTH, HIDDEN), "attention_mask": mask}
    return batch, special


class _Model:
    """What the augmentations read of a model: its position ids (BERT's from 0, RoBERTa's after padding)."""

    def __init__(self, start: int = 0) -> None:
        self.start = start

    def position_ids(self, rows, width, device):
        return (torch.arange(width, device=device) + self.start).expand(rows, width)


def _aug(cls, tokens: str, **rates):
    cfg = SimpleNamespace(
        embedding_augment_tokens=tokens, token_cutoff_rate=0.2, feature_cutoff_rate=0.1, **rates
    )
    return cls(cfg, None)


@pytest.mark.parametrize("tokens", ["all", "content"])
def test_token_cutoff_zeroes_the_stated_positions(tokens):
    batch, special = _batch()
    torch.manual_seed(0)
    seen = torch.zeros(ROWS, WIDTH, dtype=torch.bool)
    for _ in range(30):
        out = _aug(TokenCutoff, tokens).embeddings(_Model(), batch, special)["inputs_embeds"]
        zeroed = (out == 0).all(dim=2)
        assert ((out == 0) | (out == 1)).all() and ((out == 0).any(dim=2) == zeroed).all()  # whole rows
        for r, n in enumerate(LENGTHS):
            content = n - 2
            if tokens == "all":  # max(1, int(T p)) of every position, specials and padding included
                assert int(zeroed[r].sum()) == max(1, int(WIDTH * 0.2))
            else:  # max(1, int(n p)) of the content word-pieces only; none in a row without content
                assert int(zeroed[r].sum()) == (max(1, int(content * 0.2)) if content else 0)
                assert not zeroed[r][special[r]].any()
        seen |= zeroed
    assert seen[:, 0].any() == (tokens == "all") and seen[3].any() == (tokens == "all")


@pytest.mark.parametrize("tokens", ["all", "content"])
def test_feature_cutoff_zeroes_whole_features_of_each_sentence(tokens):
    batch, special = _batch()
    torch.manual_seed(1)
    out = _aug(FeatureCutoff, tokens).embeddings(_Model(), batch, special)["inputs_embeds"]
    for r in range(ROWS):
        where = torch.ones(WIDTH, dtype=torch.bool) if tokens == "all" else ~special[r]
        features = (out[r] == 0).any(dim=0)
        assert int(features.sum()) == (max(1, int(HIDDEN * 0.1)) if where.any() else 0)
        # the chosen features are zero at every allowed position and nowhere else
        assert (out[r][where][:, features] == 0).all() and (out[r][~where] == 1).all()
        assert (out[r][:, ~features] == 1).all()


def test_position_shuffle_official_is_one_permutation_of_every_position():
    batch, special = _batch()
    torch.manual_seed(2)
    pos = _aug(PositionShuffle, "all").embeddings(_Model(), batch, special)["position_ids"]
    assert (pos == pos[0]).all()  # the official buffer is one row: the whole batch shares it
    assert sorted(pos[0].tolist()) == list(range(WIDTH)) and pos[0].tolist() != list(range(WIDTH))


@pytest.mark.parametrize("start", [0, 2])  # BERT's positions, RoBERTa's (after its padding index 1)
def test_position_shuffle_content_permutes_each_sentence_on_its_own(start):
    batch, special = _batch()
    torch.manual_seed(3)
    moved = False
    for _ in range(10):
        pos = _aug(PositionShuffle, "content").embeddings(_Model(start), batch, special)["position_ids"]
        base = torch.arange(WIDTH) + start
        for r in range(ROWS):
            assert (pos[r][special[r]] == base[special[r]]).all()  # [CLS], [SEP], padding in place
            assert sorted(pos[r][~special[r]].tolist()) == base[~special[r]].tolist()
        moved |= bool((pos[0] != base).any())
    assert moved


def _built(files, tmp_path, **options):
    model, _, method = build_tiny(files, tmp_path / "out", **{"method": "mocose", "fgsm_epsilon": 0.0, **options})
    return model, method


def _views(method):
    rows = [("a man is playing a guitar .",), ("the cat sleeps on the warm mat .",), ("it rains today .",)]
    return method.make_views(rows, np.arange(3), np.random.default_rng(0))


def test_mocose_branches_take_the_embeddings_stage(files, tmp_path, monkeypatch):
    seen: list[tuple[str, tuple]] = []
    real = TokenCutoff.embeddings

    def spy(self, model, batch, special):  # on ones: padding's word embedding is zero already
        out = real(self, model, {**batch, "inputs_embeds": torch.ones_like(batch["inputs_embeds"])}, special)
        seen.append((self.views, tuple((out["inputs_embeds"] == 0).all(dim=2).sum(dim=1).tolist())))
        return out

    monkeypatch.setattr(TokenCutoff, "embeddings", spy)
    model, method = _built(files, tmp_path, augment="token-cutoff", embedding_augment_tokens="all")
    torch.manual_seed(0)
    loss, _ = method.loss(model, _views(method))
    assert torch.isfinite(loss)
    width = _views(method).anchor["input_ids"].shape[1]
    assert [v for v, _ in seen] == ["both", "both"]  # the target branch's keys, then the online queries
    assert all(cuts == (max(1, int(width * 0.1)),) * 3 for _, cuts in seen)
    seen.clear()
    model, method = _built(files, tmp_path / "online", augment="token-cutoff", augment_views="online")
    method.loss(model, _views(method))
    assert [v for v, _ in seen] == ["online"]  # the target branch left alone


def test_views_and_options_that_do_not_fit_are_refused():
    with pytest.raises(StsbenchError, match="--augment token-cutoff: it augments the online view"):
        TrainConfig(method="simcse", augment="token-cutoff", augment_views="online")
    with pytest.raises(
        StsbenchError, match="option of the augmentations token-cutoff or feature-cutoff or position"
    ):
        TrainConfig(method="mocose", embedding_augment_tokens="all")
    with pytest.raises(
        StsbenchError, match="--token-cutoff-rate is an option of the augmentation token-cutoff;"
    ):
        TrainConfig(method="mocose", augment="feature-cutoff", token_cutoff_rate=0.2)
    TrainConfig(method="mocose", augment="position-shuffle", embedding_augment_tokens="all")


def test_clean_target_view_refuses_a_target_augmentation(files, tmp_path):
    with pytest.raises(StsbenchError, match="--target-view clean gives that branch the sentence unaugmented"):
        _built(files, tmp_path, augment="feature-cutoff", target_view="clean")
    _built(files, tmp_path, augment="feature-cutoff", target_view="clean", augment_views="online")


def test_out_size_sets_the_width_of_projection_predictor_and_queue(files, tmp_path):
    model, method = _built(files, tmp_path, out_size=24, queue_size=8, queue_start_size=4)
    hidden = model.backbone.config.hidden_size
    assert hidden != 24
    assert method.projection[0].in_features == hidden and method.projection[0].out_features == 24
    assert all(
        m.in_features == m.out_features == 24 for m in method.predictor if isinstance(m, torch.nn.Linear)
    )
    loss, _ = method.loss(model, _views(method))
    method.after_step(model, _views(method))
    assert torch.isfinite(loss) and method.queue.items.shape[1] == 24
    assert model.sentence_embedding(_views(method).anchor).shape[1] == hidden  # evaluation reads the encoder
    with pytest.raises(StsbenchError, match="--out-size 24: .* --projection-layers is 0"):
        _built(files, tmp_path / "none", out_size=24, projection_layers=0)


def test_a_discretely_augmented_target_encodes_its_own_tokens(files, tmp_path, monkeypatch):
    """Official mocose.py:393-402: the text augmentations rewrite the target's input; it encodes its own tokens."""
    model, method = _built(files, tmp_path, augment="crop", augment_views="target", crop_rate=0.5)
    views = _views(method)
    assert views.positive is not None
    online, target = views.anchor["attention_mask"].sum(1), views.positive["attention_mask"].sum(1)
    assert (target < online).all()  # the crop's half of the content word-pieces, on the target only
    seen = []
    real = type(method).keys

    def spy(self, anchor, x=None, model=None):
        seen.append((anchor["attention_mask"].sum(1).tolist(), None if x is None else tuple(x.shape)))
        return real(self, anchor, x, model)

    monkeypatch.setattr(type(method), "keys", spy)
    loss, _ = method.loss(model, views)
    assert torch.isfinite(loss)
    width = views.positive["input_ids"].shape
    assert seen == [(target.tolist(), (*width, model.backbone.config.hidden_size))]
    model, attacked = _built(files, tmp_path / "fgsm", augment="crop", augment_views="target", fgsm_epsilon=5e-9)
    assert torch.isfinite(attacked.loss(model, _views(attacked))[0])  # FGSM on the online view alone
    _, online_only = _built(files, tmp_path / "online", augment="crop", augment_views="online")
    assert _views(online_only).positive is None  # the target reads the online view, as without augmentation
