"""A paper's claims judged over training seeds: argmax, ordering, difference, gap, plateau, collapse.

The papers argue from orderings and differences ("p = 0.1 is best", "sub-word repetition beats the others", "the gap
shrinks with the batch size"). A claim here is data (:data:`Claim`, what a recipe states) and is judged on the
seeds' unrounded figures of each setting it names (``{setting: {seed: figure}}``) by stsbench's one decision rule
(:mod:`stsbench.stats.decide`, docs/uncertainty.md "One rule"):

- a claim expands to *statements*: directional ones (``A > B``) for an argmax (the best above each other), an
  ordering (each setting above the next), a difference (the better above the worse) and a gap ((A - B) > (C - D));
  an equivalence (``|A - B| < margin``) for each pair of a plateau (its margin is its δ); a bound
  (``A < threshold``) for each setting of a collapse;
- each statement's difference is estimated over seeds, the design following the seeds (paired on the seeds two
  settings share, Welch for disjoint ones, one sample against a model not trained here, which the caller flags),
  and its 95% interval read against δ, the difference that matters (``delta``: the claim's, else the recipe's,
  else :data:`~stsbench.stats.decide.DELTA` on x100 figures);
- a claim is *contradicted* if any statement is (Holm's correction over the claim's statements), *supported* if
  all are (each at alpha: an intersection-union test), *no difference that matters* if all are, *inconclusive*
  otherwise; fewer than three seeds a setting gives at most inconclusive.

Beside the verdict, descriptive figures: each statement's interval, margin and smallest detectable difference, and
for an argmax or an ordering the probability that each setting is the best (seeds resampled, paired settings
jointly, ties split).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stsbench.stats import decide
from stsbench.stats.decide import ALPHA, CONTRADICTED, DELTA, INCONCLUSIVE, Decision, Interval
from stsbench.stats.tests import holm

Verdict = Literal["supported", "contradicted", "no difference that matters", "inconclusive"]
Scores = Mapping[str, Mapping[int, float]]  # setting -> seed -> figure


class _Claim(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    text: str = ""  # the paper's words, e.g. "p = 0.1 is best"
    # the figure judged, per seed: a task's score in ``mode`` (a registered task name), ``best-dev``, the
    # training's own best STS-B dev Spearman x100 (what the papers report for a dev-selected checkpoint), ``Avg.``
    # (the seven STS tasks' mean) or ``Transfer Avg.`` (the seven transfer tasks')
    figure: str = "STSBenchmark"
    mode: Literal["test", "fasttest", "dev"] = "test"
    # the paper's figure the claim is read from (a key of stsbench.published.figures, e.g. mocose/figure8): the
    # report gives its verdict under that figure too
    paper_figure: str | None = None
    # the difference that matters, in the figure's units (None: the recipe's, else 0.5 points on an x100 figure);
    # a claim on an analysis figure must give it, with a one-line reason
    delta: float | None = Field(default=None, gt=0)
    delta_reason: str | None = None

    @model_validator(mode="after")
    def _delta_reason(self) -> _Claim:
        if self.delta is not None and not (self.delta_reason or "").strip():
            raise ValueError("delta needs a delta_reason: one line saying why that difference matters")
        return self

    # the field that lists the claim's settings (a sweep's name there stands for its runs; a subset keeps those it
    # has, at least the field's min_length); None: a kind whose settings are named one by one
    LISTS: ClassVar[str | None] = None

    def settings(self) -> tuple[str, ...]:
        """Every setting the claim names, in its order."""
        raise NotImplementedError

    def statements(self) -> list[tuple[str, ...]]:
        """The statements the claim expands to (see each kind)."""
        raise NotImplementedError


class Argmax(_Claim):
    """``best`` is above every other setting of ``among``: statements best > X."""

    LISTS = "among"
    kind: Literal["argmax"]
    best: str
    among: tuple[str, ...] = Field(min_length=2)

    @model_validator(mode="after")
    def _best_among(self) -> Argmax:
        if self.best not in self.among:
            raise ValueError(f"best {self.best!r} is not among {list(self.among)}")
        return self

    def settings(self) -> tuple[str, ...]:
        return self.among

    def statements(self) -> list[tuple[str, ...]]:
        return [(self.best, other) for other in self.among if other != self.best]


class Ordering(_Claim):
    """``order`` from the highest to the lowest: statements order[i] > order[i+1]."""

    LISTS = "order"
    kind: Literal["ordering"]
    order: tuple[str, ...] = Field(min_length=2)

    def settings(self) -> tuple[str, ...]:
        return self.order

    def statements(self) -> list[tuple[str, ...]]:
        return list(zip(self.order, self.order[1:], strict=False))


class Difference(_Claim):
    """``better`` above ``worse`` (one statement); ``published``: the size the paper reports, shown beside."""

    kind: Literal["difference"]
    better: str
    worse: str
    published: float | None = None

    def settings(self) -> tuple[str, ...]:
        return (self.better, self.worse)

    def statements(self) -> list[tuple[str, ...]]:
        return [(self.better, self.worse)]


class Gap(_Claim):
    """The gap ``wider`` = (A, B) exceeds the gap ``narrower`` = (C, D): (A - B) > (C - D), one statement."""

    kind: Literal["gap"]
    wider: tuple[str, str]
    narrower: tuple[str, str]

    def settings(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.wider, *self.narrower)))

    def statements(self) -> list[tuple[str, ...]]:
        return [(*self.wider, *self.narrower)]


class Plateau(_Claim):
    """Every pair of ``settings`` within ``margin`` of each other (an equivalence per pair; the margin is its δ)."""

    LISTS = "settings"
    kind: Literal["plateau"]
    settings_: tuple[str, ...] = Field(alias="settings", min_length=2)
    margin: float = Field(gt=0)

    def settings(self) -> tuple[str, ...]:
        return self.settings_

    def statements(self) -> list[tuple[str, ...]]:
        return list(combinations(self.settings_, 2))


class Collapse(_Claim):
    """Each of ``settings`` below ``below`` (the figure the paper calls a collapse): statements X < threshold."""

    LISTS = "settings"
    kind: Literal["collapse"]
    settings_: tuple[str, ...] = Field(alias="settings", min_length=1)
    below: float

    def settings(self) -> tuple[str, ...]:
        return self.settings_

    def statements(self) -> list[tuple[str, ...]]:
        return [(s,) for s in self.settings_]


Claim = Annotated[Argmax | Ordering | Difference | Gap | Plateau | Collapse, Field(discriminator="kind")]
AnyClaim = Argmax | Ordering | Difference | Gap | Plateau | Collapse
KINDS: tuple[type[_Claim], ...] = get_args(AnyClaim)


def listing_fields() -> tuple[str, ...]:
    """The fields, over every claim kind, that list settings (:attr:`_Claim.LISTS`)."""
    return tuple(dict.fromkeys(k.LISTS for k in KINDS if k.LISTS))


def fewest_listed(kind: type[_Claim]) -> int:
    """How many settings ``kind``'s listing field needs at least (its ``min_length``)."""
    field = next(f for name, f in kind.model_fields.items() if (f.alias or name) == kind.LISTS)
    return next(m.min_length for m in field.metadata if getattr(m, "min_length", None) is not None)


@dataclass(frozen=True)
class StatementResult:
    """One statement: its interval over seeds, its outcome (after Holm's correction within the claim), its margin."""

    statement: str  # "p=0.1 > p=0.2", "|a - b| < 0.5", "ema=0.5 < 60"
    verdict: str  # supported | contradicted | no difference that matters | inconclusive
    diff: float | None  # the measured difference (claimed > 0; a bound: threshold - mean; a plateau: a - b)
    low: float | None  # its 95% interval
    high: float | None
    p: float | None  # two-sided p of a zero difference (None: no spread over seeds, or untested)
    p_holm: float | None  # Holm-adjusted p of the contradiction within the claim
    test: str | None  # paired, Welch, one-sample
    n: tuple[int, ...]
    min_detectable: float | None  # 80% power at alpha
    margin: float | None = None  # how far the deciding end of the interval lies from its threshold
    nearest: str | None = None  # an inconclusive statement: the outcome it is nearest to
    note: str | None = None  # fewer than 3 seeds; no spread over seeds; seeds left out; Holm withheld
    missing: str | None = None  # why it could not be tested

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


@dataclass(frozen=True)
class ClaimResult:
    """A claim's verdict, its statements, and the probability each setting is best (argmax, ordering)."""

    kind: str
    text: str
    verdict: str
    statements: tuple[StatementResult, ...]
    figure: str = ""
    best_probability: dict[str, float] | None = None
    published: float | None = None  # a difference's published size
    missing: tuple[str, ...] = field(default_factory=tuple)  # settings with no seeds
    delta: float | None = None  # the difference that matters it was judged with (a collapse: none)
    delta_reason: str | None = None
    margin: float | None = None  # the verdict's margin (see :func:`claim_margin`)

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON (reproduction.json)."""
        out = asdict(self)
        out["statements"] = [s.to_dict() for s in self.statements]
        return out


def _values(scores: Scores, setting: str) -> dict[int, float]:
    return {int(k): float(v) for k, v in (scores.get(setting) or {}).items() if math.isfinite(float(v))}


def _design(iv: Interval) -> str:
    words = {decide.PAIRED: "paired t", decide.WELCH: "Welch", decide.ONE_SAMPLE: "one-sample t"}
    return words.get(iv.design, iv.design)


def claim_delta(claim: AnyClaim, default: float = DELTA) -> float | None:
    """The δ a claim is judged with: a plateau's margin, the claim's delta, else ``default``; a collapse: None."""
    if isinstance(claim, Collapse):
        return None
    if isinstance(claim, Plateau):
        return claim.margin
    return claim.delta if claim.delta is not None else default


def claim_margin(verdict: str, statements: tuple[StatementResult, ...]) -> float | None:
    """A claim's margin: the smallest of its statements' (the largest of the contradicting ones if contradicted)."""
    margins = [s.margin for s in statements if s.margin is not None]
    if verdict == CONTRADICTED:
        return max(
            (s.margin for s in statements if s.verdict == CONTRADICTED and s.margin is not None), default=None
        )
    return min(margins) if margins and len(margins) == len(statements) else None


def _estimate(
    claim: AnyClaim, parts: tuple[str, ...], values: dict[str, dict[int, float]], fixed: Collection[str]
) -> tuple[str, Interval | None]:
    vs = [values[p] for p in parts]
    flags = tuple(p in fixed for p in parts)
    if isinstance(claim, Collapse):  # claimed: below the threshold, i.e. threshold - mean > 0
        iv = decide.one_sample([claim.below - v for v in vs[0].values()]) if not flags[0] else None
        if flags[0]:
            x = claim.below - decide._only(vs[0])
            iv = Interval(x, 0.0, 1.0, x, x, decide.FIXED, (1,), 0)
        return f"{parts[0]} < {claim.below:g}", iv
    if isinstance(claim, Gap):
        return f"({parts[0]} - {parts[1]}) > ({parts[2]} - {parts[3]})", decide.gap(vs, flags)
    iv = decide.difference(vs[0], vs[1], (flags[0], flags[1]))
    if isinstance(claim, Plateau):
        return f"|{parts[0]} - {parts[1]}| < {claim.margin:g}", iv
    return f"{parts[0]} > {parts[1]}", iv


def _decision(claim: AnyClaim, iv: Interval, delta: float | None) -> Decision:
    if isinstance(claim, Collapse):
        return decide.bound(iv)
    if isinstance(claim, Plateau):
        return decide.equivalence(iv, claim.margin)
    return decide.directional(iv, delta)  # type: ignore[arg-type]


def judge(
    claim: AnyClaim,
    scores: Scores,
    alpha: float = ALPHA,
    fixed: Collection[str] = (),
    delta: float = DELTA,
) -> ClaimResult:
    """``claim`` judged on ``scores`` (``{setting: {seed: figure}}``, unrounded) by the one rule (module docstring).

    ``fixed``: the settings that are models not trained here (one figure each); ``delta``: the recipe's δ, used
    where the claim gives none.
    """
    d = claim_delta(claim, delta)
    values = {s: _values(scores, s) for s in claim.settings()}
    missing = tuple(s for s, v in values.items() if not v)
    rows = []
    for parts in claim.statements():
        text, iv = _estimate(claim, parts, values, fixed)
        rows.append((parts, text, iv, None if iv is None else _decision(claim, iv, d)))
    decided = [dec for _, _, iv, dec in rows if dec is not None and not iv.few]
    adjusted = iter(holm([dec.p if dec.p is not None else 1.0 for dec in decided]))
    statements = []
    for parts, text, iv, dec in rows:
        n = tuple(len(values[p]) if p not in fixed else 1 for p in parts)
        if iv is None or dec is None:  # no interval: fewer than two seeds on a trained side
            short = ", ".join(p for p in parts if len(values[p]) < 2 and p not in fixed)
            statements.append(
                StatementResult(
                    text,
                    INCONCLUSIVE,
                    None,
                    None,
                    None,
                    None,
                    None,
                    None,
                    n,
                    None,
                    missing=f"fewer than 2 seeds: {short}",
                )
            )
            continue
        p_holm = next(adjusted) if not iv.few else None
        outcome, note = dec.outcome, dec.note
        if outcome == CONTRADICTED and p_holm is not None and p_holm >= alpha:
            outcome = INCONCLUSIVE
            note = f"contradicted by its own interval, not after Holm over {len(decided)} statements"
        if iv.left_out:
            left = "seeds " + ", ".join(str(s) for s in iv.left_out) + " left out (not shared)"
            note = f"{note}; {left}" if note else left
        statements.append(
            StatementResult(
                text,
                outcome,
                iv.diff,
                iv.low,
                iv.high,
                iv.p,
                p_holm,
                _design(iv),
                n,
                iv.mdd,
                dec.margin,
                dec.nearest,
                note,
            )
        )
    done = tuple(statements)
    overall = decide.combine([r.verdict for r in done])
    best = None
    if isinstance(claim, Argmax | Ordering) and not missing:
        best = decide.best_probability(values, claim.settings(), tuple(fixed))
    published = claim.published if isinstance(claim, Difference) else None
    reason = claim.delta_reason if claim.delta is not None else None
    return ClaimResult(
        claim.kind,
        claim.text,
        overall,
        done,
        claim.figure,
        best,
        published,
        missing,
        d,
        reason,
        claim_margin(overall, done),
    )
