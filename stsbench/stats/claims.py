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
  settings share, Welch for disjoint ones, a gap as one contrast, one sample against a model not trained here, which the caller flags),
  and its 95% interval read against δ, the difference that matters (``delta``: the claim's, else the recipe's,
  else :data:`~stsbench.stats.decide.DELTA` on x100 figures);
- a claim is *contradicted* if a statement is reversed by more than δ (a plateau's pair beyond its margin, a
  collapse's setting not below its bound) after Holm's correction over the claim's statements; the statements'
  common word where they share one; *supported* (*reversed*) if every statement shows that direction (each at
  alpha: an intersection-union test); *inconclusive* otherwise; fewer than three seeds a setting gives at most
  inconclusive (:func:`stsbench.stats.decide.combine`).

Beside the verdict, descriptive figures: each statement's interval, margin and smallest detectable difference, and
for an argmax or an ordering the probability that each setting is the best (seeds resampled, paired settings
jointly, ties split).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from stsbench.stats import decide, sequential
from stsbench.stats.decide import ALPHA, DELTA, INCONCLUSIVE, Decision, Interval

Scores = Mapping[str, Mapping[int, float]]  # setting -> seed -> figure
DEV_FIGURES = ("best-dev", "final-dev")  # a training's own STS-B dev Spearman: NaN is a collapse (0)


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


class _Listed(_Claim):
    """A kind whose settings are its field ``settings`` (``settings_`` in Python: the method has its name)."""

    LISTS = "settings"

    def settings(self) -> tuple[str, ...]:
        return self.settings_


class Plateau(_Listed):
    """Every pair of ``settings`` within ``margin`` of each other (an equivalence per pair; the margin is its δ)."""

    kind: Literal["plateau"]
    settings_: tuple[str, ...] = Field(alias="settings", min_length=2)
    margin: float = Field(gt=0)

    def statements(self) -> list[tuple[str, ...]]:
        return list(combinations(self.settings_, 2))


class Collapse(_Listed):
    """Each of ``settings`` below ``below`` (the figure the paper calls a collapse): statements X < threshold."""

    kind: Literal["collapse"]
    settings_: tuple[str, ...] = Field(alias="settings", min_length=1)
    below: float

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
class ClaimResult:
    """A claim's verdict, its statements and the probability each setting is best (argmax, ordering).

    Each statement is the one record of a verdict, :class:`~stsbench.stats.decide.Decision`.
    """

    kind: str
    text: str
    verdict: str
    statements: tuple[Decision, ...]
    figure: str = ""
    best_probability: dict[str, float] | None = None
    published: float | None = None  # a difference's published size
    missing: tuple[str, ...] = field(default_factory=tuple)  # settings with no seeds
    delta: float | None = None  # the difference that matters it was judged with (a collapse: none)
    delta_reason: str | None = None
    margin: float | None = None  # the verdict's margin (:func:`stsbench.stats.decide.combine`)
    qualifier: str | None = None  # a supported claim: which statements by more, which by less than δ

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON (reproduction.json)."""
        out = {k: v for k, v in asdict(self).items() if k != "statements"}
        return {**out, "statements": [s.to_dict() for s in self.statements]}


def _values(scores: Scores, setting: str) -> dict[int, float]:
    return {int(k): float(v) for k, v in (scores.get(setting) or {}).items()}


def claim_delta(claim: AnyClaim, default: float = DELTA) -> float | None:
    """The δ a claim is judged with: a plateau's margin, the claim's delta, else ``default``; a collapse: None."""
    if isinstance(claim, Collapse):
        return None
    if isinstance(claim, Plateau):
        return claim.margin
    return claim.delta if claim.delta is not None else default


def _estimate(
    claim: AnyClaim,
    parts: tuple[str, ...],
    values: dict[str, dict[int, float]],
    fixed: Collection[str],
    h: float,
) -> tuple[str, Interval | None]:
    vs = [values[p] for p in parts]
    flags = tuple(p in fixed for p in parts)
    if isinstance(claim, Collapse):  # claimed: below the threshold, i.e. threshold - mean > 0
        text = f"{parts[0]} < {claim.below:g}"
        if flags[0]:
            x = claim.below - decide._only(vs[0])
            return text, Interval(x, 0.0, 1.0, x, x, decide.FIXED, (1,), 0)
        return text, decide.one_sample([claim.below - v for v in vs[0].values()], resolution=h)
    if isinstance(claim, Gap):
        return f"({parts[0]} - {parts[1]}) > ({parts[2]} - {parts[3]})", decide.gap(vs, flags, resolution=h)
    iv = decide.difference(vs[0], vs[1], (flags[0], flags[1]), resolution=h)
    if isinstance(claim, Plateau):
        return f"|{parts[0]} - {parts[1]}| < {claim.margin:g}", iv
    return f"{parts[0]} > {parts[1]}", iv


def _decision(claim: AnyClaim, iv: Interval, delta: float | None, text: str) -> Decision:
    if isinstance(claim, Collapse):
        return decide.bound(iv, text)
    if isinstance(claim, Plateau):
        return decide.equivalence(iv, claim.margin, text)
    return decide.directional(iv, delta, text)  # type: ignore[arg-type]


def _looked(
    parts: tuple[str, ...],
    values: dict[str, dict[int, float]],
    fixed: Collection[str],
    d: float,
    at: Any,
    text: str,
    refine: bool = False,
    h: float = 0.0,
) -> Decision | None:
    """A > B judged by the sequential plan ``at`` from its seeds; None where the plan does not cover it.

    ``h``: the figures' resolution, read as the fixed rule reads it (:func:`stsbench.stats.decide.difference`).

    On the seeds both settings share: one that has more (seeds the plan added for another statement that reads
    it) is read at the look this one stopped at. Not covered: settings that share no seed, or two fixed figures
    (rule 3 then, once at the maximum).
    """
    a, b = (values[p] for p in parts)
    if all(p in fixed for p in parts) or not a or not b:
        return None
    if parts[1] in fixed:
        b = dict.fromkeys(a, decide._only(b))
    elif parts[0] in fixed:
        a = dict.fromkeys(b, decide._only(a))
    if not set(a) & set(b):
        return None
    stopped = sequential.path(a, b, d, at, text, refine, h)
    return decide.noted(stopped.decision, stopped.describe(at))


def judge(
    claim: AnyClaim,
    scores: Scores,
    alpha: float = ALPHA,
    fixed: Collection[str] = (),
    delta: float = DELTA,
    resolution: float = 0.0,
    describe: bool = True,
    until: int | None = None,
    refine: bool = False,
) -> ClaimResult:
    """``claim`` judged on ``scores`` (``{setting: {seed: figure}}``, unrounded) by the one rule (module docstring).

    ``fixed``: the settings that are models not trained here (one figure each); ``delta``: the recipe's δ, used
    where the claim gives none; ``resolution``: the figures' h (docs/uncertainty.md); ``describe``: draw P(best)
    (a description: the calibration, judging thousands of claims, leaves it out). Non-finite figures
    (:func:`stsbench.stats.decide.finite_seeds`): a NaN dev Spearman (``best-dev``, ``final-dev``) enters as 0,
    named; any other caps the statements reading it. ``until``: the seeds were added by the sequential plan of at
    most that many (:mod:`stsbench.stats.sequential`): an argmax's, ordering's or difference's statements whose
    settings share their seeds are each judged at the look the plan stopped it at (a claim of m statements at
    0.025/m a side, no Holm); the others by the rule, once, as here. ``refine``: the plan went on until each
    statement's size was shown or out of reach (:func:`stsbench.stats.sequential.path`).
    """
    d = claim_delta(claim, delta)
    at = None
    if until is not None and claim.kind in sequential.COVERED:
        at = sequential.plan(until, "paired", len(claim.statements()))
    values, why = {}, {}
    for s in claim.settings():
        values[s], note, cap = decide.finite_seeds(_values(scores, s), claim.figure in DEV_FIGURES)
        if note:
            why[s] = (f"{s}: {note}", cap)
    missing = tuple(s for s, v in values.items() if not v)
    rows, looked = [], set()
    for parts in claim.statements():
        text, iv = _estimate(claim, parts, values, fixed, resolution)
        plan_word = (
            _looked(parts, values, fixed, d, at, text, refine, h=resolution) if at is not None else None
        )
        if plan_word is not None:
            looked.add(len(rows))
            rows.append(plan_word)
        elif iv is None:  # no interval: fewer than two seeds on a trained side
            short = ", ".join(p for p in parts if len(values[p]) < 2 and p not in fixed)
            rows.append(decide.unmeasured(INCONCLUSIVE, text, f"fewer than 2 seeds: {short}", d))
        else:
            rows.append(_decision(claim, iv, d, text))
    tested = [
        i
        for i, dec in enumerate(rows)
        if i not in looked and dec.interval is not None and not decide.few(dec.interval)
    ]
    held = decide.family([rows[i] for i in tested], decide.REFUTING, alpha, "statements")
    for i, dec in zip(tested, held, strict=True):
        rows[i] = dec
    for i, (parts, dec) in enumerate(zip(claim.statements(), rows, strict=True)):
        for note, cap in (why[p] for p in dict.fromkeys(parts) if p in why):
            rows[i] = dec = (
                decide.capped(dec, note, decide.CAP_NOT_FINITE) if cap else decide.noted(dec, note)
            )
    done = tuple(rows)
    word, margin, qualifier = decide.combine(done, alpha)
    best = None
    if describe and isinstance(claim, Argmax | Ordering) and not missing:
        best = decide.best_probability(values, claim.settings(), tuple(fixed), resolution=resolution)
    pub = claim.published if isinstance(claim, Difference) else None
    reason = claim.delta_reason if claim.delta is not None else None
    return ClaimResult(
        claim.kind, claim.text, word, done, claim.figure, best, pub, missing, d, reason, margin, qualifier
    )
