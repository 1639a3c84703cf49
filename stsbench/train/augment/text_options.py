"""The options and registry entries of the nlpaug text augmentations (no torch, no nlpaug): classes in :mod:`.text`.

MoCoSE Table 5's text-level rows (Cao et al., 2022, Sec. 4.1: "several text-level methods from the nlpaug
toolkit"); the official code builds them in ``MoCoSEModel.__init__`` (``mocose.py:293-306``) and applies them to
the target branch's input only. They need the ``augment`` extra (``pip install 'stsbench[augment]'``: nlpaug and
sacremoses), imported only when chosen.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from stsbench.options import option
from stsbench.train.config.options import AugmentationSpec


class TextInputOptions(BaseModel):
    """What the nlpaug augmentations are given: the sentence, or the official code's word-pieces."""

    text_augment_input: Literal["text", "wordpieces"] = option(
        "text",
        "typos, back-translation, synonyms, paraphrase: nlpaug gets the sentence (text: the paper) or its word-pieces joined by "
        "spaces, '##' kept, as the official code rebuilds it from the batch's ids (wordpieces: mocose.py:179-193).",
    )


class TyposOptions(BaseModel):
    """MoCoSE Table 5's typos."""

    typos_dict: str | None = option(
        None,
        "typos: the misspelling dictionary (nlpaug's format: a word, then its misspellings, one line each); "
        "default nlpaug's own spelling_en.txt, which the official naw.SpellingAug() reads.",
    )


class BackTranslationOptions(BaseModel):
    """MoCoSE Table 5's back-translation."""

    back_translation_models: str = option(
        "facebook/wmt19-en-de,facebook/wmt19-de-en",
        "back-translation: the two translation models, there and back, as hub ids or local folders "
        "(official: facebook/wmt19-en-de and facebook/wmt19-de-en).",
    )


class SynonymOptions(BaseModel):
    """MoCoSE Table 5's synonyms from a masked language model."""

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
    """MoCoSE Table 5's paraphrase."""

    paraphrase_model: str = option(
        "xlnet-base-cased",
        "paraphrase: the XLNet (or GPT-2) language model that writes the continuation, a hub id or a local folder "
        "(official: xlnet-base-cased).",
    )


TYPOS = AugmentationSpec(
    "typos",
    "text",
    "stsbench.train.augment.text:Typos",
    views="target",
    options=(TyposOptions, TextInputOptions),
    about="MoCoSE Table 5's typos (nlpaug's SpellingAug)",
)
BACK_TRANSLATION = AugmentationSpec(
    "back-translation",
    "text",
    "stsbench.train.augment.text:BackTranslation",
    views="target",
    options=(BackTranslationOptions, TextInputOptions),
    about="MoCoSE Table 5's back-translation en -> de -> en (nlpaug's BackTranslationAug)",
    model_options=("back_translation_models",),
)
SYNONYMS = AugmentationSpec(
    "synonyms",
    "text",
    "stsbench.train.augment.text:Synonyms",
    views="target",
    options=(SynonymOptions, TextInputOptions),
    about="MoCoSE Table 5's synonym replace (roberta-base; nlpaug's ContextualWordEmbsAug)",
    model_options=("synonym_model",),
)
PARAPHRASE = AugmentationSpec(
    "paraphrase",
    "text",
    "stsbench.train.augment.text:Paraphrase",
    views="target",
    options=(ParaphraseOptions, TextInputOptions),
    about="MoCoSE Table 5's paraphrasing (xlnet-base-cased; nlpaug's ContextualWordEmbsForSentenceAug)",
    model_options=("paraphrase_model",),
)
