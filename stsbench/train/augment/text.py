"""MoCoSE Table 5's nlpaug text augmentations (text stage): typos and back-translation.

The official code (``mocose.py:293-306, 393-402``) builds ``naw.SpellingAug()`` or
``naw.BackTranslationAug(from_model_name='facebook/wmt19-en-de', to_model_name='facebook/wmt19-de-en')`` and hands
it, every step, the batch's sentences rebuilt from their ids: the word-pieces joined by spaces, ``##`` kept
(``get_origin_text``), [CLS] and the closing [SEP] dropped; the result is tokenized again for the target branch
only. stsbench calls the same nlpaug augmenters (nlpaug 1.1.11, the ``augment`` extra) with their defaults, on
the target branch (``views: target``), given the sentence itself (``--text-augment-input text``: the paper) or
the official word-pieces (``wordpieces``).

Computed once: MoCoSE trains one epoch, so each sentence is augmented once however the steps draw it. Before
the first step every sentence the run will read is augmented (or read from the cache) in the main process, one
seed per sentence (drawn from the run's seed and the sentence, python's, numpy's and torch's generators saved and
put back around it), so a sentence gets the same copy in any batch, order or run with that seed, and training
draws nothing differently for it. The copies are cached under ``$STSBENCH_CACHE/augment/<augmenter>-<digest>``
(the digest: augmenter, options, a typos dictionary's content, models, seed, nlpaug version, this file's code),
by sentence, so later seeds' or runs' sentences are read, not recomputed. The official code augmented each batch
afresh in the step; with one epoch every sentence is seen once, so the two agree except in the draws themselves.

The options and registry entries are here too; torch is imported when an augmentation runs, so that building
the config and the CLI imports none.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import random
from functools import partial
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel

from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_text
from stsbench.options import option
from stsbench.train.augment.base import TextAugmentation
from stsbench.train.config.options import AugmentationSpec

EXTRA = "pip install 'stsbench[augment]'"


def require_nlpaug(who: str) -> Any:
    """Nlpaug's word augmenters, or one line saying how to install them."""
    try:
        import nlpaug.augmenter.word as naw
    except ImportError:
        raise StsbenchError(f"--augment {who} needs nlpaug, which is not installed; {EXTRA}") from None
    return naw


def model_folder(name: str, who: str, flag: str) -> Path:
    """A local folder, or a hub id found in the local hub cache (offline) or fetched: else one line."""
    from stsbench.encoders.resolve import download

    path = Path(name).expanduser()
    if path.is_dir():
        return path.resolve()
    try:
        return download(name)
    except StsbenchError as exc:
        raise StsbenchError(
            f"--augment {who}: the model {name} is not on this machine ({str(exc).split('(', 1)[-1].split(')')[0]}); "
            f"download it where there is internet, or give its local folder with {flag}"
        ) from None


@contextlib.contextmanager
def seeded(seed: int):
    """Python's, numpy's and torch's generators seeded for one draw, then put back as they were."""
    import torch

    state = (random.getstate(), np.random.get_state())
    with torch.random.fork_rng(devices=[]):
        random.seed(seed)
        np.random.seed(seed % 2**32)
        torch.manual_seed(seed)
        try:
            yield
        finally:
            random.setstate(state[0])
            np.random.set_state(state[1])


def folder_identity(path: Path) -> dict[str, Any]:
    """What identifies a model folder in a cache key: its config's digest and its files' names and sizes."""
    config = path / "config.json"
    files = sorted((p.name, p.stat().st_size) for p in path.iterdir() if p.is_file())
    return {
        "config": hashlib.sha256(config.read_bytes()).hexdigest() if config.is_file() else None,
        "files": files,
    }


class NlpaugText(TextAugmentation):
    """An nlpaug augmenter on the text stage, computed once per sentence (:meth:`corpus`) and cached."""

    def __init__(self, cfg: Any, tokenizer: Any) -> None:
        super().__init__(cfg, tokenizer)
        self.done: dict[str, str] = {}  # nlpaug's input -> its output
        self.augmenter: Any = None
        self.device = "cpu"

    # -- what a subclass says ----------------------------------------------------------------------------
    def models(self) -> list[Path]:
        """The model folders it needs (resolved; one line for a missing one)."""
        return []

    def make(self, naw: Any) -> Any:
        """The nlpaug augmenter."""
        raise NotImplementedError

    def options(self) -> dict[str, Any]:
        """Its options, for the cache key."""
        return {"input": self.cfg.text_augment_input}

    batched = False  # True: one nlpaug call for many sentences (its output does not depend on the draws)

    # -- the stage ------------------------------------------------------------------------------------------
    @classmethod
    def check(cls, cfg: Any) -> None:
        """Before anything is written: nlpaug installed, the models on this machine."""
        require_nlpaug(cls.entry)
        cls(cfg, None).models()

    def prepare(self, model) -> None:
        """Build the augmenter on the model's device."""
        self.device = str(next(model.parameters()).device)
        self.augmenter = self.make(require_nlpaug(self.name))

    def given(self, text: str) -> str:
        """What nlpaug is given for ``text``: the sentence, or the official word-pieces joined by spaces."""
        if self.cfg.text_augment_input == "text":
            return text
        ids = self.tokenizer(
            text, add_special_tokens=False, truncation=True, max_length=self.cfg.max_length - 2
        )
        return " ".join(self.tokenizer.convert_ids_to_tokens(ids["input_ids"]))

    def cache_folder(self) -> Path:
        from stsbench.paths import default_cache_dir
        from stsbench.sources import distribution_version, source_digest

        key = {
            "augmenter": self.name,
            "options": self.options(),  # a local file by its content (the typos dictionary)
            "models": [folder_identity(p) for p in self.models()],
            "seed": self.cfg.seed,
            "nlpaug": distribution_version("nlpaug"),
            "code": source_digest("train/augment/text.py"),  # this file computes the copies (the shim too)
        }
        digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()[:16]
        return default_cache_dir() / "augment" / f"{self.name}-{digest}"

    @staticmethod
    def text_key(text: str) -> str:
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]

    def corpus(self, texts: list[str]) -> int:
        """Augment every sentence of ``texts`` not done yet (the cache first); returns how many were computed."""
        from filelock import FileLock

        inputs = list(dict.fromkeys(self.given(t) for t in texts))
        folder = self.cache_folder()
        folder.mkdir(parents=True, exist_ok=True)
        store = folder / "texts.json"
        with FileLock(str(folder / ".lock")):
            cached = json.loads(store.read_text(encoding="utf-8")) if store.is_file() else {}
            todo = [t for t in inputs if self.text_key(t) not in cached]
            for text, out in zip(todo, self.compute(todo), strict=True):
                cached[self.text_key(text)] = out
            if todo:
                atomic_write_text(store, json.dumps(cached, ensure_ascii=False))
        self.done.update({t: cached[self.text_key(t)] for t in inputs})
        return len(todo)

    def compute(self, inputs: list[str]) -> list[str]:
        """Nlpaug's output for each input, each drawn from its own seed (the run's and the text's)."""
        if not inputs:
            return []
        if self.batched:
            with seeded(self.cfg.seed):
                return [self.one(out, text) for out, text in zip(self.run(inputs), inputs, strict=True)]
        outs = []
        for text in inputs:
            with seeded(int(hashlib.sha256(f"{self.cfg.seed}\0{text}".encode()).hexdigest()[:8], 16)):
                outs.append(self.one(self.run([text])[0], text))
        return outs

    def run(self, inputs: list[str]) -> list[Any]:
        out = self.augmenter.augment(inputs)
        if len(out) != len(inputs):  # nlpaug returns [] where it declines (an empty text)
            return [self.augmenter.augment(t) for t in inputs]
        return out

    @staticmethod
    def one(out: Any, text: str) -> str:
        """Nlpaug's result for one input as a string (it answers a list for a string, [] when it declines)."""
        if isinstance(out, list):
            out = out[0] if out else text
        return out if isinstance(out, str) and out.strip() else text

    def texts(self, texts: list[str], rng: np.random.Generator) -> list[str]:
        """The augmented copy of each text (computed now for one :meth:`corpus` did not see)."""
        inputs = [self.given(t) for t in texts]
        missing = [t for t in dict.fromkeys(inputs) if t not in self.done]
        if missing:
            self.corpus(texts)
        return [self.done[t] for t in inputs]


class Typos(NlpaugText):
    """``typos``: nlpaug's ``SpellingAug`` (its defaults: aug_p 0.3, 1 to 10 words), nlpaug's dictionary or the user's."""

    entry = "typos"

    def make(self, naw: Any) -> Any:
        path = self.cfg.typos_dict
        if path is not None and not Path(path).expanduser().is_file():
            raise StsbenchError(
                f"--typos-dict {path}: no such file; give a misspelling dictionary (nlpaug's format)"
            )
        return naw.SpellingAug(dict_path=str(Path(path).expanduser()) if path else None)

    def options(self) -> dict[str, Any]:
        path = self.cfg.typos_dict
        digest = hashlib.sha256(Path(path).expanduser().read_bytes()).hexdigest() if path else "nlpaug's"
        return {**super().options(), "dict": digest}


class BackTranslation(NlpaugText):
    """``back-translation``: nlpaug's ``BackTranslationAug``, there and back through two translation models."""

    entry = "back-translation"
    batched = True  # generation as the models' configs say (beam search, no sampling): no draws

    def pair(self) -> list[str]:
        names = [n.strip() for n in self.cfg.back_translation_models.split(",") if n.strip()]
        if len(names) != 2:
            raise StsbenchError(
                f"--back-translation-models {self.cfg.back_translation_models!r}: give two models, there and back, "
                "as THERE,BACK (hub ids or local folders)"
            )
        return names

    def models(self) -> list[Path]:
        return [model_folder(n, self.entry, "--back-translation-models THERE,BACK") for n in self.pair()]

    def make(self, naw: Any) -> Any:
        there, back = self.models()
        return naw.BackTranslationAug(from_model_name=str(there), to_model_name=str(back), device=self.device)


def transformers5_shim(naw: Any) -> None:
    """Make nlpaug 1.1.11's language models work on transformers 5: their two token/id lookups, by the public API.

    nlpaug calls the slow tokenizer's ``_convert_token_to_id`` and ``_convert_id_to_token`` unless the tokenizer's
    class name says "Fast"; transformers 5 has one tokenizer class a model, without those private methods
    (``AttributeError``). ``convert_tokens_to_ids`` and ``convert_ids_to_tokens`` give the same ids and tokens.
    Nothing else of nlpaug is changed.
    """
    import nlpaug.model.lang_models as nml

    for model in (nml.Roberta, nml.Bert, nml.DistilBert, nml.XlNet):  # the models the two augmenters load
        model.token2id = lambda self, token: self.tokenizer.convert_tokens_to_ids(token)
        model.id2token = lambda self, _id: self.tokenizer.convert_ids_to_tokens(_id)


class Synonyms(NlpaugText):
    """``synonyms``: nlpaug's ``ContextualWordEmbsAug``, words a masked language model proposes.

    Its defaults (aug_p 0.3, 1 to 10 words, top_k 100), substituting or inserting; each sentence from its own seed.
    """

    entry = "synonyms"

    def models(self) -> list[Path]:
        return [model_folder(self.cfg.synonym_model, self.entry, "--synonym-model DIR")]

    def options(self) -> dict[str, Any]:
        return {**super().options(), "action": self.cfg.synonym_action}

    def make(self, naw: Any) -> Any:
        (folder,) = self.models()
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        transformers5_shim(naw)
        return naw.ContextualWordEmbsAug(
            model_path=str(folder),
            model_type=config.get("model_type", ""),
            action=self.cfg.synonym_action,
            device=self.device,
        )


class Paraphrase(NlpaugText):
    """``paraphrase``: nlpaug's ``ContextualWordEmbsForSentenceAug``, a continuation written after the sentence.

    nlpaug's "paraphrase" with XLNet (its defaults: top_k 50, up to 30 tokens until a sentence ends) keeps the
    sentence and appends a generated one, which is what the official code (``mocose.py:303``) gave the target branch.
    nlpaug hands the XLNet tokenizer's ``convert_tokens_to_string`` one string of the generated pieces, which the
    slow sentencepiece tokenizer joined as characters; transformers 5's asks for a list, so a string gets that
    same join (the pieces' "▁" made spaces) and a list the tokenizer's own.
    """

    entry = "paraphrase"

    def models(self) -> list[Path]:
        return [model_folder(self.cfg.paraphrase_model, self.entry, "--paraphrase-model DIR")]

    def make(self, naw: Any) -> Any:
        import nlpaug.augmenter.sentence as nas

        (folder,) = self.models()
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        transformers5_shim(naw)
        kind = "gpt2" if config.get("model_type") == "gpt2" else "xlnet"
        aug = nas.ContextualWordEmbsForSentenceAug(
            model_path=str(folder), model_type=kind, device=self.device
        )
        tokenizer = aug.model.tokenizer
        join = tokenizer.convert_tokens_to_string

        def pieces_to_text(tokens: Any) -> str:
            return tokens.replace("\u2581", " ").strip() if isinstance(tokens, str) else join(tokens)

        tokenizer.convert_tokens_to_string = pieces_to_text
        return aug


# -- options and registry entries ------------------------------------------------------------------------


class TextInputOptions(BaseModel):
    """What the nlpaug augmentations are given: the sentence, or the official code's word-pieces."""

    text_augment_input: Literal["text", "wordpieces"] = option(
        "text",
        "typos, back-translation, synonyms, paraphrase: nlpaug gets the sentence (text: the paper) or its word-pieces joined by "
        "spaces, '##' kept, as the official code rebuilds it from the batch's ids (wordpieces: mocose.py:179-193).",
    )


class TyposOptions(BaseModel):
    """MoCoSE Table 5's typos (nlpaug's SpellingAug)."""

    typos_dict: str | None = option(
        None,
        "typos: the misspelling dictionary (nlpaug's format: a word, then its misspellings, one line each); "
        "default nlpaug's own spelling_en.txt, which the official naw.SpellingAug() reads.",
    )


class BackTranslationOptions(BaseModel):
    """MoCoSE Table 5's back-translation en -> de -> en (nlpaug's BackTranslationAug)."""

    back_translation_models: str = option(
        "facebook/wmt19-en-de,facebook/wmt19-de-en",
        "back-translation: the two translation models, there and back, as hub ids or local folders "
        "(official: facebook/wmt19-en-de and facebook/wmt19-de-en).",
    )


class SynonymOptions(BaseModel):
    """MoCoSE Table 5's synonym replace (roberta-base; nlpaug's ContextualWordEmbsAug)."""

    synonym_model: str = option(
        "roberta-base",
        "synonyms: the masked language model that proposes the words, a hub id or a local folder (official: "
        "roberta-base).",
    )
    synonym_action: Literal["substitute", "insert"] = option(
        "substitute",
        "synonyms: replace words (substitute: the paper's 'synonym replace') or insert new ones (insert: the "
        "official naw.ContextualWordEmbsAug(action='insert'), mocose.py:299).",
    )


class ParaphraseOptions(BaseModel):
    """MoCoSE Table 5's paraphrasing (xlnet-base-cased; nlpaug's ContextualWordEmbsForSentenceAug)."""

    paraphrase_model: str = option(
        "xlnet-base-cased",
        "paraphrase: the XLNet (or GPT-2) language model that writes the continuation, a hub id or a local folder "
        "(official: xlnet-base-cased).",
    )


# the target branch (the official code's), given the sentence or the official word-pieces
_nlpaug = partial(AugmentationSpec.of, __name__, "text", views="target")
TYPOS = _nlpaug("typos", TyposOptions, TextInputOptions)
BACK_TRANSLATION = _nlpaug(
    "back-translation", BackTranslationOptions, TextInputOptions, model_options=("back_translation_models",)
)
SYNONYMS = _nlpaug("synonyms", SynonymOptions, TextInputOptions, model_options=("synonym_model",))
PARAPHRASE = _nlpaug("paraphrase", ParaphraseOptions, TextInputOptions, model_options=("paraphrase_model",))
