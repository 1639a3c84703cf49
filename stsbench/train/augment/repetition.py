"""Repetition (tokens stage): lengthen a sentence without changing its meaning (ESimCSE, Wu et al., 2022, Sec. 3.1).

A sentence's content tokens (never [CLS], [SEP], padding) are grouped into units: each sub-word
(``subword``) or each whitespace word (``word``, ``stopword``, ``mask``). ``dup_len`` units are drawn and
after each one comes a copy of it (``subword``, ``word``: word repetition happens before tokenization in the
paper, and for WordPiece tokenizing "w w" gives the tokens of w twice), a random stop-word (``stopword``) or
[MASK] (``mask``).

How many, by ``sampling``:

- ``paper``, eq. (4)-(5): dup_len ~ U{0, ..., max(2, int(dup_rate * N))} with N the number of units,
  dup_set = dup_len distinct units drawn uniformly; a fresh draw every time the sentence is batched.
- ``official`` (the ESimCSE repository): dup_len = randrange(min(10, int(dup_rate * L))) with L the token
  count including the special tokens, positions 1..L-2 (the content tokens); drawn once per sentence before
  training, so every epoch sees the same view. randrange(0) would raise for L < 4; there dup_len is 0.

dup_len never exceeds N (a one-word sentence can only repeat its word once). ESimCSE's positive view is this
augmentation (its options ``repetition_kind``, ``dup_rate``, ``repetition_sampling``); ``--augment repetition``
adds it to another method's positive view with their defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from stsbench.train.augment.base import TokenAugmentation
from stsbench.train.config.options import AugmentationSpec

# common English function words (the paper does not list its stop-words)
STOP_WORDS = (
    "a an the and or but if then so as of at by for with about against between into through during before "
    "after above below to from up down in out on off over under again further once here there when where why "
    "how all any both each few more most other some such no nor not only own same than too very can will "
    "just should now i me my we our you your he him his she her it its they them their what which who whom "
    "this that these those am is are was were be been being have has had having do does did doing"
).split()


def group_units(special: list[int], offsets: list[tuple[int, int]] | None, words: bool) -> list[list[int]]:
    """Content positions grouped into units: one per token, or one per whitespace-separated word.

    A token starts a new word when its first character does not touch the previous token's last one
    (WordPiece drops whitespace, so a gap in the offsets is a space).
    """
    units: list[list[int]] = []
    prev_end = None
    for pos, is_special in enumerate(special):
        if is_special:
            prev_end = None
            continue
        if not words or offsets is None:
            units.append([pos])
            continue
        start, end = offsets[pos]
        if units and prev_end is not None and start == prev_end:
            units[-1].append(pos)
        else:
            units.append([pos])
        prev_end = end
    return units


def paper_dup_len(n_units: int, dup_rate: float, rng: np.random.Generator) -> int:
    """Eq. (4): a uniform draw from {0, ..., max(2, int(dup_rate * N))}, at most N."""
    high = max(2, int(dup_rate * n_units))
    return min(int(rng.integers(0, high + 1)), n_units)


def official_dup_len(n_units: int, n_tokens: int, dup_rate: float, rng: np.random.Generator) -> int:
    """Draw as the official code: randrange(min(10, int(dup_rate * L))), L counting [CLS]/[SEP]; at most N."""
    high = min(10, int(dup_rate * n_tokens))
    return min(int(rng.integers(0, high)) if high > 0 else 0, n_units)


@dataclass
class Repetition:
    """Builds the lengthened view of tokenized sentences."""

    kind: str = "subword"
    dup_rate: float = 0.32
    sampling: str = "paper"
    mask_id: int | None = None
    stop_ids: list[list[int]] = field(default_factory=list)
    max_tokens: int = 512  # the model's position limit

    @classmethod
    def for_tokenizer(cls, tokenizer, kind: str, dup_rate: float, sampling: str) -> Repetition:
        """Build a repetition whose [MASK] and stop-word ids come from ``tokenizer``."""
        stop_ids = []
        if kind == "stopword":
            for word in STOP_WORDS:
                ids = tokenizer(word, add_special_tokens=False)["input_ids"]
                if ids and tokenizer.unk_token_id not in ids:
                    stop_ids.append(ids)
        limit = getattr(tokenizer, "model_max_length", 512)
        return cls(kind, dup_rate, sampling, tokenizer.mask_token_id, stop_ids, min(int(limit), 512))

    @property
    def needs_offsets(self) -> bool:
        """Word-level kinds group tokens by character offsets."""
        return self.kind != "subword"

    def longest(self, length: int) -> int:
        """The most tokens :meth:`apply` can make of a sentence of at most ``length`` tokens.

        ``--pad-to-max-length`` pads the repeated view to this, so every step has one shape (CUDA graphs).
        At most k units are repeated, k = max(2, int(dup_rate * L)) (paper) or min(10, int(dup_rate * L)) - 1
        (official), each adding one token (``subword``, ``mask``), its word's tokens (``word``: at most the
        sentence's tokens in all) or a stop-word's tokens (``stopword``).
        """
        if self.sampling == "paper":
            units = max(2, int(self.dup_rate * length))
        else:
            units = max(0, min(10, int(self.dup_rate * length)) - 1)
        units = min(units, length)
        if self.kind == "word":
            extra = length
        elif self.kind == "stopword":
            extra = units * max((len(ids) for ids in self.stop_ids), default=1)
        else:
            extra = units
        return min(length + extra, self.max_tokens)

    def dup_set(self, units: list[list[int]], n_tokens: int, rng: np.random.Generator) -> list[int]:
        """Eq. (5): the indices of the units to repeat (or to insert after), sorted."""
        n = len(units)
        if n == 0:
            return []
        if self.sampling == "paper":
            k = paper_dup_len(n, self.dup_rate, rng)
        else:
            k = official_dup_len(n, n_tokens, self.dup_rate, rng)
        return sorted(int(i) for i in rng.choice(n, size=k, replace=False))

    def apply(
        self,
        ids: list[int],
        special: list[int],
        offsets: list[tuple[int, int]] | None,
        rng: np.random.Generator,
    ) -> list[int]:
        """Return the lengthened token ids of one sentence (special tokens kept where they were)."""
        units = group_units(special, offsets, words=self.kind != "subword")
        n_special = sum(1 for s in special if s)
        n_tokens = len(units) + n_special if self.kind != "subword" else len(ids)
        chosen = self.dup_set(units, n_tokens, rng)
        after = {units[u][-1]: units[u] for u in chosen}
        out: list[int] = []
        for pos, tok in enumerate(ids):
            out.append(tok)
            unit = after.get(pos)
            if unit is None:
                continue
            if self.kind in ("subword", "word"):
                out.extend(ids[p] for p in unit)
            elif self.kind == "mask":
                out.append(self.mask_id)
            else:
                out.extend(self.stop_ids[int(rng.integers(0, len(self.stop_ids)))])
        if len(out) > self.max_tokens:  # only with very long --max-length: keep the closing special token
            out = out[: self.max_tokens - 1] + [out[-1]]
        return out


class RepetitionAugmentation(TokenAugmentation):
    """The registry's ``repetition``: :class:`Repetition` with the run's options, on the positive view."""

    def __init__(self, cfg, tokenizer) -> None:
        super().__init__(cfg, tokenizer)
        self.sampling = getattr(cfg, "repetition_sampling", "paper")
        self.seed = cfg.seed
        self.repetition = Repetition.for_tokenizer(
            tokenizer,
            getattr(cfg, "repetition_kind", "subword"),
            getattr(cfg, "dup_rate", 0.32),
            self.sampling,
        )
        self.needs_offsets = self.repetition.needs_offsets

    def tokens(self, ids, special, offsets, rng, row) -> list[int]:
        """Official sampling: one fixed draw per sentence for the whole run; paper: a fresh draw each batch."""
        if self.sampling == "official":
            rng = np.random.default_rng([self.seed, int(row), 2])
        return self.repetition.apply(ids, special, offsets, rng)

    def longest(self, length: int) -> int:
        """:meth:`Repetition.longest`."""
        return self.repetition.longest(length)


SPEC = AugmentationSpec(
    "repetition",
    "tokens",
    "stsbench.train.augment.repetition:RepetitionAugmentation",
    views="positive",
    about="ESimCSE's word or sub-word repetition (its repetition options)",
)
