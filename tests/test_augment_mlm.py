"""SimCSE Table 2's MLM replacement and ESimCSE's inserting masked prediction.

Both predict with a frozen copy of the backbone's own pretraining checkpoint (encoder + LM head): tiny BERTs and
RoBERTas saved with and without their LM head, built offline, whose head is rigged so that one known word-piece
wins every mask, a special token's logit higher still (which must never be picked).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from stsbench.errors import StsbenchError
from stsbench.train.augment.mlm import FrozenMaskedLM
from stsbench.train.config import make_config
from stsbench.train.loop import build

pytestmark = pytest.mark.usefixtures("one_thread")

ROWS = [("a man is playing a guitar .",), ("the cat sleeps on the warm mat .",), ("it rains today .",)]


def _save_with_head(path, tokenizer, kind: str = "bert", head: bool = True):
    """A tiny masked LM whose head predicts ``winner`` at every mask ([SEP] scored higher still)."""
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        BertModel,
        RobertaConfig,
        RobertaForMaskedLM,
        RobertaModel,
    )

    torch.manual_seed(0)
    sizes = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
    if kind == "bert":
        config = BertConfig(vocab_size=30522, max_position_embeddings=128, **sizes)
        model = BertForMaskedLM(config) if head else BertModel(config)
    else:
        config = RobertaConfig(vocab_size=30522, max_position_embeddings=130, pad_token_id=0, **sizes)
        model = RobertaForMaskedLM(config) if head else RobertaModel(config)
    winner = tokenizer.convert_tokens_to_ids("banana")
    if head:
        bias = model.get_output_embeddings().bias
        with torch.no_grad():
            bias.zero_()
            bias[winner] = 1e4
            bias[tokenizer.sep_token_id] = 2e4  # a special token: never chosen
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return winner


@pytest.fixture(scope="module")
def with_head(tmp_path_factory, tokenizer):
    path = tmp_path_factory.mktemp("mlm") / "tiny-mlm"
    return path, _save_with_head(path, tokenizer)


def _built(model, tmp_path, **options):
    tmp_path.mkdir(parents=True, exist_ok=True)
    train = tmp_path / "train.txt"
    train.write_text("\n".join(r[0] for r in ROWS * 3) + "\n")
    cfg = make_config(
        {
            "model": str(model),
            "train_file": str(train),
            "output": str(tmp_path / "out"),
            "batch_size": 3,
            "method": "simcse",
            **options,
        }
    )
    return build(cfg, model, "cpu")


def test_mlm_replaces_the_stated_share_of_content_tokens(with_head, tmp_path, tokenizer):
    path, winner = with_head
    _, tok, method, _ = _built(path, tmp_path, augment="mlm", mlm_replace_rate=0.3)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    for plain, aug in zip(views.anchor["input_ids"], views.positive["input_ids"], strict=True):
        plain, aug = plain[plain != 0].tolist(), aug[aug != 0].tolist()
        assert len(aug) == len(plain)  # replaced in place
        content = len(plain) - 2
        changed = [i for i, (a, b) in enumerate(zip(plain, aug, strict=True)) if a != b]
        assert len(changed) == max(1, round(0.3 * content))
        assert all(aug[i] == winner for i in changed) and 0 not in changed and len(plain) - 1 not in changed
        assert tokenizer.mask_token_id not in aug


def test_crop_then_mlm(with_head, tmp_path):
    path, winner = with_head
    _, _, method, _ = _built(path, tmp_path, augment="crop,mlm", crop_rate=0.3, mlm_replace_rate=0.15)
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(1))
    for plain, aug in zip(views.anchor["input_ids"], views.positive["input_ids"], strict=True):
        plain, aug = plain[plain != 0].tolist(), aug[aug != 0].tolist()
        content = len(plain) - 2
        assert len(aug) - 2 == int(np.ceil(0.7 * content))  # the crop's span ...
        assert aug.count(winner) >= 1  # ... with at least one word-piece predicted


def test_inserting_masked_prediction_fills_the_inserted_masks(with_head, tmp_path, tokenizer):
    path, winner = with_head
    _, _, method, _ = _built(
        path, tmp_path, method="esimcse", repetition_kind="mask", augment="mask-fill", queue_multiple=0, dup_rate=0.5
    )
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(2))
    _, _, plain_method, _ = _built(
        path, tmp_path / "masks", method="esimcse", repetition_kind="mask", queue_multiple=0, dup_rate=0.5
    )
    masked = plain_method.make_views(ROWS, np.arange(3), np.random.default_rng(2)).positive["input_ids"]
    filled = views.positive["input_ids"]
    assert (masked == tokenizer.mask_token_id).any()  # repetition inserted [MASK]s ...
    assert torch.equal(filled == winner, (masked == tokenizer.mask_token_id) | (masked == winner))  # ... predicted
    assert torch.equal(filled[masked != tokenizer.mask_token_id], masked[masked != tokenizer.mask_token_id])


def test_a_backbone_without_its_lm_head_is_refused_in_one_line(files, tmp_path, tokenizer):
    with pytest.raises(StsbenchError, match=r"--augment mlm: .* has no pretrained MLM head") as refused:
        _built(files / "tiny", tmp_path, augment="mlm")
    assert "\n" not in str(refused.value)
    with pytest.raises(StsbenchError, match="--augment mask-fill: .* has no pretrained MLM head"):
        _built(files / "tiny", tmp_path, method="esimcse", repetition_kind="mask", augment="mask-fill")


def test_roberta_lm_head_is_read_and_its_absence_refused(tmp_path, tokenizer):
    with_head, without = tmp_path / "roberta-mlm", tmp_path / "roberta"
    winner = _save_with_head(with_head, tokenizer, "roberta")
    _save_with_head(without, tokenizer, "roberta", head=False)
    lm = FrozenMaskedLM(str(with_head), "tiny-roberta", tokenizer, "cpu", "--augment mlm")
    ids = tokenizer("a man plays .")["input_ids"]
    ids[2] = tokenizer.mask_token_id
    assert lm.fill([ids])[0][2] == winner
    with pytest.raises(StsbenchError, match="--augment mlm: tiny-roberta has no pretrained MLM head"):
        FrozenMaskedLM(str(without), "tiny-roberta", tokenizer, "cpu", "--augment mlm")


def test_the_mlm_objective_of_a_roberta_takes_its_pretrained_lm_head(tmp_path, tokenizer):
    """SimCSE's --do_mlm on RoBERTa: RobertaLMHead, loaded from the checkpoint's lm_head (models.py:343)."""
    from transformers import RobertaModel
    from transformers.models.roberta.modeling_roberta import RobertaLMHead

    from stsbench.train.config import TrainConfig, finalize
    from stsbench.train.methods.base import build_method
    from stsbench.train.model import ContrastiveEncoder

    path = tmp_path / "roberta-mlm"
    _save_with_head(path, tokenizer, "roberta")
    cfg = finalize(TrainConfig(method="simcse", batch_size=3, mlm_weight=0.1), False)
    model = ContrastiveEncoder(RobertaModel.from_pretrained(path), "cls", True)
    method = build_method(cfg, tokenizer, model, torch.Generator().manual_seed(2))
    head = method.mlm_loss.lm_head
    assert isinstance(head, RobertaLMHead) and method.mlm_head_loaded
    assert float(head.bias[tokenizer.convert_tokens_to_ids("banana")]) == 1e4  # the rigged pretrained bias
    _save_with_head(tmp_path / "roberta", tokenizer, "roberta", head=False)
    model = ContrastiveEncoder(RobertaModel.from_pretrained(tmp_path / "roberta"), "cls", True)
    assert not build_method(cfg, tokenizer, model, torch.Generator().manual_seed(2)).mlm_head_loaded
