"""Which model a published row measured, and whether results may be judged against it (``check --tolerance seeds``).

A paper's row is a method on a backbone (``unsup-SimCSE-BERT-base``; a sweep of ``ESimCSE-BERT-base``; an
ablation whose caption says ``BERT-base``); a released checkpoint's row (``mteb/...``) is that one model. Seeds
are judged only against a row of their own model: a paper's row against results on its backbone, a released
checkpoint's against that checkpoint, untrained. Anything else is *beside, not judged*.

The registry files state no backbone field (their schema is a step's input, which this module leaves as it is): a
row's backbone is read from its own words, the row's label first, then the table's metric and caption (the
papers name it there: "Spearman's correlation, BERT-base"). A result's from its training's config (the model it
started from), else from the model's name. Names are read by :data:`FAMILIES`; a name none of them reads has no
backbone, and a row or model without one is never judged against another.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

from stsbench.published.records import Entry

# (pattern, family): the backbones the papers and the embedded models name, with the size the name gives;
# BERT's reads SBERT-base too (Sentence-BERT on BERT-base), not DistilBERT
BERT = r"(?<!distil)bert[\s_{(-]*(base|large|tiny|mini|small|medium)"
FAMILIES = (
    (re.compile(r"roberta[\s_{(-]*(base|large)", re.I), "RoBERTa"),
    (re.compile(BERT, re.I), "BERT"),
    (re.compile(r"minilm[\s_{(-]*(l\d+)", re.I), "MiniLM"),
    (re.compile(r"mpnet[\s_{(-]*(base)", re.I), "MPNet"),
)
CHECKPOINTS = "mteb/"  # a released checkpoint's rows: that model, not a backbone


def backbone(text: str) -> str | None:
    """The first backbone ``text`` names (``BERT-base``, ``RoBERTa-large``, ``MiniLM-L6``), None where none."""
    found = [(m.start(), family, m.group(1)) for pattern, family in FAMILIES if (m := pattern.search(text))]
    if not found:
        return None
    _, family, size = min(found)
    return f"{family}-{size.upper() if size[1:].isdigit() else size.lower()}"


def checkpoint_name(name: str) -> str:
    """A model's name as a checkpoint row names it: the last part of a hub id or path."""
    return PurePath(name.rstrip("/")).name


@dataclass(frozen=True)
class Measured:
    """What a published row or a group of results measured: one checkpoint, or a backbone (None: unread)."""

    backbone: str | None
    checkpoint: str | None = None  # a released checkpoint's row; results: the model itself, untrained
    trained: bool = False  # results: trained here, from ``checkpoint``

    def row(self) -> str:
        """A published row's, in words: ``a row of the checkpoint X`` or ``a row on BERT-base``."""
        if self.checkpoint:
            return f"a row of the checkpoint {self.checkpoint}"
        return f"a row on {self.backbone}" if self.backbone else "a row naming no backbone stsbench can read"

    def results(self) -> str:
        """Results', in words: ``trained from X (MiniLM-L6)``, or untrained ``the checkpoint X (MiniLM-L6)``."""
        on = f" ({self.backbone})" if self.backbone else " (no backbone stsbench can read in its name)"
        if not self.checkpoint:
            return "of several models"
        return (
            f"trained from {self.checkpoint}{on}" if self.trained else f"the checkpoint {self.checkpoint}{on}"
        )


def of_entry(entry: Entry) -> Measured:
    """What a published row measured: its checkpoint (``mteb/...``), else the backbone its words name."""
    if entry.key.startswith(CHECKPOINTS):
        return Measured(backbone(entry.row), checkpoint_name(entry.row))
    for text in (entry.row, entry.metric, entry.caption):
        if found := backbone(text):
            return Measured(found)
    return Measured(None)


def of_results(models: Iterable[str], trained: bool) -> Measured:
    """What results measured, from ``models``: those their trainings started from (``trained``), else those evaluated.

    Several distinct ones read as none: judged against no row.
    """
    names = {checkpoint_name(m) for m in models}
    if len({n.lower() for n in names}) != 1:
        return Measured(None)
    name = names.pop()
    return Measured(backbone(name), name, trained)


def judged(row: Measured, results: Measured) -> bool:
    """Whether ``results`` may be judged against ``row``.

    A checkpoint's row: that checkpoint, untrained. A paper's: the same backbone, read on both sides.
    """
    if row.checkpoint:
        return not results.trained and (results.checkpoint or "").lower() == row.checkpoint.lower()
    return row.backbone is not None and results.backbone == row.backbone
