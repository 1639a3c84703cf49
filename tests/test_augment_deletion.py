"""SimCSE Table 2's crop, word deletion and delete-one-word, on a tiny batch, and in the views."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from stsbench.errors import StsbenchError
from stsbench.train.augment.base import build_augmentation
from stsbench.train.augment.deletion import Crop, DeleteOneWord, WordDeletion
from stsbench.train.config import TrainConfig
from stsbench.train.methods.base import truncate

TEXT = "microbiology is fun and the lab is full of curious students today"


def encode(tokenizer, text: str = TEXT):
    enc = tokenizer(text, return_special_tokens_mask=True, return_offsets_mapping=True)
    return enc["input_ids"], enc["special_tokens_mask"], enc["offset_mapping"]


def words(tokenizer, ids) -> list[str]:
    """The whitespace words of ``ids`` (word-pieces joined), special tokens dropped."""
    return tokenizer.decode(ids, skip_special_tokens=True).split()


@pytest.mark.parametrize("rate", [0.1, 0.2, 0.3, 0.5])
def test_crop_keeps_one_span_of_the_content_pieces(tokenizer, rate):
    ids, special, offsets = encode(tokenizer)
    content = [t for t, s in zip(ids, special, strict=True) if not s]
    crop = Crop(SimpleNamespace(crop_rate=rate), tokenizer)
    starts = set()
    for seed in range(300):
        out = crop.tokens(ids, special, offsets, np.random.default_rng(seed), 0)
        assert out[0] == ids[0] and out[-1] == ids[-1]  # [CLS] and [SEP] stay
        kept = out[1:-1]
        assert len(kept) == math.ceil((1 - rate) * len(content))
        start = next(
            i for i in range(len(content)) if content[i : i + len(kept)] == kept
        )  # one continuous span
        starts.add(start)
    assert starts == set(range(len(content) - len(kept) + 1))  # every start is drawn


def test_word_deletion_deletes_whole_words(tokenizer):
    ids, special, offsets = encode(tokenizer)
    all_words = TEXT.split()
    for rate, gone in ((0.1, 1), (0.2, 2), (0.3, 4), (0.5, 6)):  # round(k N), N = 12 words
        deletion = WordDeletion(SimpleNamespace(word_deletion_rate=rate), tokenizer)
        for seed in range(50):
            out = words(tokenizer, deletion.tokens(ids, special, offsets, np.random.default_rng(seed), 0))
            assert len(out) == len(all_words) - gone
            rest = iter(all_words)  # the kept words in order, each whole ("microbiology", never "micro")
            assert all(any(w == x for x in rest) for w in out)
    one = DeleteOneWord(SimpleNamespace(), tokenizer)
    seen = set()
    for seed in range(200):
        out = words(tokenizer, one.tokens(ids, special, offsets, np.random.default_rng(seed), 0))
        assert len(out) == len(all_words) - 1
        seen.update(set(all_words) - set(out))
    assert seen == set(all_words) - {"is"}  # "is" appears twice: deleting one leaves the other


def test_a_one_word_sentence_keeps_its_word(tokenizer):
    ids, special, offsets = encode(tokenizer, "hello")
    for aug in (
        WordDeletion(SimpleNamespace(word_deletion_rate=0.9), tokenizer),
        DeleteOneWord(SimpleNamespace(), tokenizer),
    ):
        assert aug.tokens(ids, special, offsets, np.random.default_rng(0), 0) == ids


def _views(tokenizer, augment: str, views: str = "declared", max_length: int = 32, **options):
    from stsbench.train.methods.simcse import SimCSE

    cfg = TrainConfig(method="simcse", augment=augment, augment_views=views, max_length=max_length, **options)
    method = SimCSE(cfg, tokenizer, None)  # the views alone: no model
    rows = [(TEXT,), ("a short one",)]
    return method.make_views(rows, np.arange(2), np.random.default_rng(0))


def test_the_positive_view_is_augmented_and_both_on_request(tokenizer):
    views = _views(tokenizer, "crop", crop_rate=0.3)
    anchor = views.anchor["attention_mask"].sum(1).tolist()
    positive = views.positive["attention_mask"].sum(1).tolist()
    assert positive[0] < anchor[0]  # x+ cropped, x whole
    both = _views(tokenizer, "crop", "both", crop_rate=0.3)
    assert both.anchor["attention_mask"].sum(1).tolist()[0] < anchor[0]
    assert _views(tokenizer, "none").positive is None  # no augmentation: dropout's twin


def test_the_crop_spans_the_whole_sentence_before_the_length_cut(tokenizer):
    """With --max-length 6 the cropped x+ still draws its span from all 13 content pieces, then is cut."""
    ids, special, _ = encode(tokenizer)
    content = [t for t, s in zip(ids, special, strict=True) if not s]
    later = set(content[4:])  # pieces a crop of the first four could never hold
    seen = set()
    cfg = TrainConfig(method="simcse", augment="crop", crop_rate=0.5, max_length=6)
    aug = build_augmentation("crop", cfg, tokenizer)
    for seed in range(40):
        out = truncate(aug.tokens(ids, special, None, np.random.default_rng(seed), 0), 6, {ids[0], ids[-1]})
        assert len(out) == 6 and out[0] == ids[0] and out[-1] == ids[-1]
        seen.update(set(out[1:-1]) & later)
    assert seen  # spans that start past the first pieces


def test_their_options_need_them():
    with pytest.raises(StsbenchError, match="--crop-rate is an option of the augmentation crop"):
        TrainConfig(method="simcse", crop_rate=0.2)
    assert TrainConfig(method="simcse", augment="crop,word-deletion", crop_rate=0.2).crop_rate == 0.2
    with pytest.raises(StsbenchError, match="--augment crop: it augments the positive view"):
        TrainConfig(method="mocose", augment="crop")
