"""MoCoSE Table 5's nlpaug text augmentations: typos and back-translation on tiny offline models."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from helpers import DATA, build_tiny, run_cli_process, train_config

from stsbench.errors import StsbenchError
from stsbench.train.config import TrainConfig

pytestmark = pytest.mark.usefixtures("one_thread")
pytest.importorskip("nlpaug")  # the augment extra (in dev: CI has it)

ROWS = [("a man is playing a guitar .",), ("the cat sleeps on the warm mat .",), ("it rains today .",)]
WORDS = "a man is playing guitar the cat sleeps on warm mat it rains today ein mann spielt gitarre die katze".split()


@pytest.fixture(scope="module")
def translators(tmp_path_factory):
    """Two tiny random FSMT models (en->de, de->en) with a word-level vocabulary: built offline, no hub."""
    from transformers import FSMTConfig, FSMTForConditionalGeneration, FSMTTokenizer

    root = tmp_path_factory.mktemp("fsmt")
    vocab = {"<s>": 0, "<pad>": 1, "</s>": 2, "<unk>": 3}
    for w in WORDS + list("abcdefghijklmnopqrstuvwxyz."):
        vocab.setdefault(f"{w}</w>", len(vocab))
    folders = []
    for seed, name in enumerate(("en-de", "de-en")):
        path = root / name
        path.mkdir()
        for file in ("vocab-src.json", "vocab-tgt.json"):
            (path / file).write_text(json.dumps(vocab))
        (path / "merges.txt").write_text("")
        FSMTTokenizer(
            langs=["en", "de"],
            src_vocab_file=str(path / "vocab-src.json"),
            tgt_vocab_file=str(path / "vocab-tgt.json"),
            merges_file=str(path / "merges.txt"),
        ).save_pretrained(path)
        torch.manual_seed(seed)
        sizes = dict(encoder_layers=1, decoder_layers=1, encoder_attention_heads=2, decoder_attention_heads=2)
        config = FSMTConfig(
            langs=["en", "de"],
            src_vocab_size=len(vocab),
            tgt_vocab_size=len(vocab),
            d_model=16,
            encoder_ffn_dim=32,
            decoder_ffn_dim=32,
            max_position_embeddings=64,
            max_length=12,
            num_beams=1,
            **sizes,
        )
        FSMTForConditionalGeneration(config).save_pretrained(path)
        folders.append(str(path))
    return ",".join(folders)


def _wiki_lines() -> list[str]:
    """The wiki head's first 2,000 lines, the corpus the tiny tokenizers learn from."""
    return (DATA / "wiki" / "wiki1m_head.txt").read_text(encoding="utf-8").splitlines()[:2000]


def _tiny_lm(path, tokenizer, model_class, config) -> str:
    """Save ``tokenizer`` and a random ``model_class`` of ``config`` (vocabulary, special ids: its own)."""
    tokenizer.save_pretrained(path)
    config.vocab_size = len(tokenizer)
    for name in ("pad_token_id", "bos_token_id", "eos_token_id"):
        setattr(config, name, getattr(tokenizer, name))
    torch.manual_seed(0)
    model_class(config).save_pretrained(path)
    return str(path)


@pytest.fixture(scope="module")
def masked_lm(tmp_path_factory):
    """A tiny random RoBERTa masked LM with a byte-level BPE trained on the wiki head's first lines: offline."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizer

    path = tmp_path_factory.mktemp("roberta") / "tiny-roberta"
    bpe = ByteLevelBPETokenizer()
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    bpe.train_from_iterator(_wiki_lines(), vocab_size=600, min_frequency=2, special_tokens=specials)
    path.mkdir()
    bpe.save_model(str(path))
    merges = [
        tuple(line.split()) for line in (path / "merges.txt").read_text().splitlines()[1:] if line.strip()
    ]
    try:  # transformers 5: one tokenizer class, built from the vocabulary and merges themselves
        tokenizer = RobertaTokenizer(vocab=json.loads((path / "vocab.json").read_text()), merges=merges)
    except TypeError:  # transformers 4 (the floors): the fast tokenizer reads the two files
        from transformers import RobertaTokenizerFast

        files = {"vocab_file": str(path / "vocab.json"), "merges_file": str(path / "merges.txt")}
        tokenizer = RobertaTokenizerFast(**files)
    sizes = {"num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 64, "type_vocab_size": 1}
    config = RobertaConfig(hidden_size=32, max_position_embeddings=130, **sizes)
    return _tiny_lm(path, tokenizer, RobertaForMaskedLM, config)


@pytest.mark.parametrize("action", ["insert", "substitute"])
def test_synonyms_from_a_masked_lm_insert_or_substitute_words(files, tmp_path, cache, masked_lm, action):
    _, tokenizer, method = _built(
        files, tmp_path, augment="synonyms", synonym_model=masked_lm, synonym_action=action
    )
    (aug,) = method.augmentations
    assert aug.corpus([r[0] for r in ROWS]) == 3
    out = [aug.done[r[0]] for r in ROWS]
    assert out != [r[0] for r in ROWS]
    if (
        action == "insert"
    ):  # every word kept, in order, with new ones between (nlpaug's aug_p 0.3, at least one)
        for text, new in zip((r[0] for r in ROWS), out, strict=True):
            words, got = text.split(), new.split()
            assert len(got) > len(words) and all(w in got for w in words), (text, new)
    # one seed a sentence: computed again from nothing, the same copies
    _, _, again = _built(
        files, tmp_path / "again", augment="synonyms", synonym_model=masked_lm, synonym_action=action
    )
    (fresh,) = again.augmentations
    fresh.cache_folder = lambda: tmp_path / "elsewhere"  # not the cache: compute
    assert fresh.corpus([r[0] for r in ROWS][::-1]) == 3 and [fresh.done[r[0]] for r in ROWS] == out


@pytest.fixture(scope="module")
def xlnet(tmp_path_factory):
    """A tiny random XLNet language model with a unigram tokenizer trained on the wiki head: offline."""
    from tokenizers import SentencePieceUnigramTokenizer
    from transformers import XLNetConfig, XLNetLMHeadModel, XLNetTokenizer

    path = tmp_path_factory.mktemp("xlnet") / "tiny-xlnet"
    unigram = SentencePieceUnigramTokenizer()
    specials = ["<unk>", "<s>", "</s>", "<cls>", "<sep>", "<pad>", "<mask>", "<eod>", "<eop>"]
    unigram.train_from_iterator(_wiki_lines(), vocab_size=800, special_tokens=specials, unk_token="<unk>")
    vocab = [(piece, score) for piece, score in json.loads(unigram.to_str())["model"]["vocab"]]
    try:  # transformers 5: built from the pieces and their scores
        tokenizer = XLNetTokenizer(vocab=vocab)
    except (TypeError, ImportError):  # transformers 4 (the floors): the slow one reads a sentencepiece model
        from transformers import XLNetTokenizerFast

        tokenizer = XLNetTokenizerFast(tokenizer_object=unigram._tokenizer)
    config = XLNetConfig(d_model=32, n_layer=1, n_head=2, d_inner=64)
    return _tiny_lm(path, tokenizer, XLNetLMHeadModel, config)


def test_paraphrase_appends_what_the_language_model_writes(files, tmp_path, cache, xlnet):
    _, _, method = _built(files, tmp_path, augment="paraphrase", paraphrase_model=xlnet)
    (aug,) = method.augmentations
    sentence = ROWS[2][0]
    assert aug.corpus([sentence]) == 1
    out = aug.done[sentence]
    assert (
        out.startswith(sentence + " ") and len(out) > len(sentence) + 1
    )  # the sentence, then the continuation
    aug.cache_folder = lambda: tmp_path / "elsewhere"  # computed again, from nothing: the same continuation
    aug.done.clear()
    assert aug.corpus([sentence]) == 1 and aug.done[sentence] == out


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("STSBENCH_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _built(files, tmp_path, **options):
    options = {"method": "mocose", "fgsm_epsilon": 0.0, "batch_size": 3, **options}
    return build_tiny(files, tmp_path / "out", **options)


def _texts(tokenizer, view) -> list[str]:
    return [
        tokenizer.decode(ids[mask.bool()], skip_special_tokens=True)
        for ids, mask in zip(view["input_ids"], view["attention_mask"], strict=True)
    ]


def test_typos_misspell_the_target_branch_from_the_dictionary_given(files, tmp_path, cache):
    typos = tmp_path / "typos.txt"
    typos.write_text("playing plaaying\nsleeps sleeeps\nrains raains\n")
    model, tokenizer, method = _built(files, tmp_path, augment="typos", typos_dict=str(typos))
    (aug,) = method.augmentations
    states = (random.getstate(), np.random.get_state()[1].copy(), torch.get_rng_state())
    assert aug.corpus([r[0] for r in ROWS]) == 3
    assert random.getstate() == states[0] and np.array_equal(np.random.get_state()[1], states[1])
    assert torch.equal(torch.get_rng_state(), states[2])  # the training's generators are left as they were
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    online, target = _texts(tokenizer, views.anchor), _texts(tokenizer, views.positive)
    assert online == [tokenizer.decode(tokenizer(r[0])["input_ids"], skip_special_tokens=True) for r in ROWS]
    assert target == ["a man is plaaying a guitar.", "the cat sleeeps on the warm mat.", "it raains today."]
    # computed once: another run with this seed reads the cache; the copies are the same
    _, _, again = _built(files, tmp_path / "again", augment="typos", typos_dict=str(typos))
    assert again.augmentations[0].corpus([r[0] for r in ROWS]) == 0
    assert again.augmentations[0].done == aug.done
    assert len(list(cache.glob("augment/typos-*/texts.json"))) == 1


def test_the_official_input_is_the_word_pieces_joined_by_spaces(files, tmp_path, cache):
    _, _, method = _built(files, tmp_path, augment="typos", text_augment_input="wordpieces")
    assert method.augmentations[0].given("an unaffable man .") == "an una ##ffa ##ble man ."


def test_back_translation_runs_there_and_back_on_local_models(files, tmp_path, cache, translators):
    model, tokenizer, method = _built(
        files, tmp_path, augment="back-translation", back_translation_models=translators
    )
    (aug,) = method.augmentations
    assert aug.corpus([r[0] for r in ROWS]) == 3
    views = method.make_views(ROWS, np.arange(3), np.random.default_rng(0))
    target = _texts(tokenizer, views.positive)
    assert target != [r[0] for r in ROWS] and all(isinstance(t, str) and t for t in target)
    assert torch.isfinite(method.loss(model, views)[0])


def test_a_missing_model_or_library_is_one_line_before_anything_is_written(
    files, tmp_path, cache, monkeypatch
):
    out = tmp_path / "run"
    args = ["train", "--method", "mocose", "--model", files / "tiny", "--train-file", files / "train.txt"]
    args += ["--augment", "back-translation", "--output", out, "--max-steps", "2", "--quiet"]
    done = run_cli_process(args, env={"HF_HUB_OFFLINE": "1"})
    assert done.returncode == 2 and not out.exists(), done.stderr
    line = done.stderr.strip()
    assert "\n" not in line and "facebook/wmt19-en-de is not on this machine" in line
    assert "--back-translation-models THERE,BACK" in line
    import stsbench.train.augment.text as text

    def absent(who):
        raise StsbenchError(f"--augment {who} needs nlpaug, which is not installed; {text.EXTRA}")

    monkeypatch.setattr(text, "require_nlpaug", absent)
    with pytest.raises(
        StsbenchError, match=r"--augment typos needs nlpaug, .*pip install 'stsbench\[augment\]'"
    ):
        text.Typos.check(TrainConfig(method="mocose", augment="typos"))


def test_a_mocose_run_with_typos_trains(files, tmp_path, cache):
    from stsbench.train.loop import train

    cfg = train_config(files, tmp_path / "out", method="mocose", augment="typos", max_steps=2, eval_steps=2)
    assert train(cfg, show_progress=False).steps == 2
    from stsbench.train.data import BatchOrder

    lines = [line for line in (files / "train.txt").read_text().splitlines() if line.strip()]
    read = {lines[r] for i in range(2) for r in BatchOrder(len(lines), 4).rows(cfg.seed, 0, i)}
    assert len(json.loads(next(cache.glob("augment/typos-*/texts.json")).read_text())) == len(read)


def test_reproduce_knows_the_models_an_augmentation_loads():
    from stsbench.reproduce.plan import extra_models

    assert extra_models({"augment": "back-translation"}) == {
        "facebook/wmt19-en-de": "back_translation_models",
        "facebook/wmt19-de-en": "back_translation_models",
    }
    assert extra_models({"augment": "typos,crop"}) == {} == extra_models({})
