"""The Claims part of a report: a table's claims judged on the report's groups of seeds (``report --claims``).

A claims file is a YAML list of claims (:mod:`stsbench.stats.claims`: argmax, ordering, difference, gap, plateau,
collapse), each naming the report's groups as its settings, as ``--against GROUP=KEY`` names them (a method, a
group's name, or its seeds' folder: a recipe's run name), and the figure it is about (a task's score in a mode, or
``best-dev``, the training's own best STS-B dev Spearman, ``final-dev``, its last dev evaluation's (what a
collapse is read from: MoCoSE Figures 5-6), ``Avg.``, the papers' mean of the seven STS tasks,
``Transfer Avg.``, the mean of the seven transfer tasks, or an analysis figure ``VARIANT:ROW:COLUMN``, a row and
column of the report's table over seeds, e.g. ``length_bias_tokens:gap (LD <= 3 minus LD > 3):Avg.``).
Each group gives one figure per seed, keyed by the seed its training ran with, so that two groups trained on the
same seeds are compared seed by seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError, validation_line
from stsbench.files import read_yaml
from stsbench.metrics import AVG
from stsbench.progress import plural
from stsbench.published.cells import BEST_DEV, BEST_DEV_FIGURE, Figure, resolution, seed_values
from stsbench.published.registry import STS_TASKS, TRANSFER_TASKS
from stsbench.reports.claim_figures import (
    FINAL_DEV,
    TRANSFER_AVG,
    analysis_figure,
    analysis_of,
    with_task_figure,
)
from stsbench.reports.collect import AnalysisRecord, TaskRecord
from stsbench.reports.reproduction import group_figures, named_group
from stsbench.reports.seeds import SeedGroup
from stsbench.stats import decide
from stsbench.stats.claims import Claim, ClaimResult, judge
from stsbench.tabular import DASH, Table, fmt, make_table


def parse_claims(data: Any, where: str) -> list[Claim]:
    """Claims from a parsed YAML list; one line naming the claim and the key at the first that is refused."""
    from pydantic import TypeAdapter, ValidationError

    if not isinstance(data, list):
        raise StsbenchError(f"{where}: a claims file is a YAML list of claims (docs/uncertainty.md, Claims)")
    adapter = TypeAdapter(Claim)
    claims = []
    for i, item in enumerate(data, start=1):
        try:
            claim = adapter.validate_python(item)
        except ValidationError as exc:
            raise StsbenchError(f"{where}: claim {i}: {validation_line(exc)}") from None
        claims.append(with_task_figure(claim, f"{where}: claim {i}"))
    return claims


def load_claims(path: Path) -> list[Claim]:
    """The claims of a YAML file (``report --claims``); a missing or malformed file is one line."""
    data = read_yaml(path, f"--claims {path}", "a YAML list of claims")
    return parse_claims(data, f"--claims {path}")


def claim_figure(claim: Claim) -> Figure:
    """The figure a claim is about, as the cell rule names figures (:class:`stsbench.published.cells.Figure`)."""
    if claim.figure == BEST_DEV:  # a claim's figure: the training's own best STS-B dev Spearman x100
        return BEST_DEV_FIGURE
    mode = "dev" if claim.mode == "dev" else "test"  # test: read as Figure.modes says (STS: fasttest too)
    if claim.figure == AVG:  # the papers' Avg.: the mean of the seven STS figures as printed
        return Figure("avg", STS_TASKS, mode)
    if claim.figure == TRANSFER_AVG:  # the transfer tables' Avg.: the mean of the seven accuracies
        return Figure("avg", TRANSFER_TASKS, mode)
    return Figure("task", (claim.figure,), mode)


def seed_figures(
    records: Sequence[TaskRecord], group: SeedGroup, claim: Claim, analyses: Sequence[AnalysisRecord] = ()
) -> dict[int, float]:
    """``{seed: figure}`` of one group for the claim's figure (a model not trained here: seed 0).

    The cells' rule (:func:`stsbench.published.cells.seed_values`) on the group's figures: a claim and a cell
    about the same figure read the same numbers. An analysis figure: each seed's value of that row and column
    among the analysis' figures of its ``analyses`` records of the variant (the report's table over seeds).
    """
    if claim.figure == FINAL_DEV:
        return final_devs(group)
    parsed = analysis_figure(claim.figure)
    if parsed is None:
        return seed_values(claim_figure(claim), *group_figures(records, group))
    variant, row, column = parsed
    analysis = analysis_of(variant)
    out: dict[int, float] = {}
    for model, seed in zip(group.models, group.seed_ids, strict=True):
        for rec in (r for r in analyses if r.variant == variant and r.model.fingerprint == model.key):
            value = next(
                (n.value for n in analysis.numbers(rec.result) if (n.row, n.column) == (row, column)), None
            )
            if value is not None:
                out[seed] = value
    return out


def final_devs(group: SeedGroup) -> dict[int, float]:
    """``{seed: STS-B dev x100 at the run's last logged evaluation}`` (unrounded) of the group's trained models."""
    out: dict[int, float] = {}
    for model, seed in zip(group.models, group.seed_ids, strict=True):
        # the last evaluation, NaN included (a dev Spearman logged null: constant embeddings, a collapse)
        curve = [math.nan if v is None else v for _, v in model.run.curve] if model.run is not None else []
        if curve:
            out[seed] = curve[-1] * 100
    return out


def judge_claims(
    claims: Sequence[Claim],
    records: Sequence[TaskRecord],
    groups: Sequence[SeedGroup],
    analyses: Sequence[AnalysisRecord] = (),
    delta: float = decide.DELTA,
) -> list[ClaimResult]:
    """Each claim judged on its groups' unrounded figures (an unknown group is one line, before anything is drawn).

    A group with no training run (a released checkpoint, the backbone) is a model not trained here: one fixed
    figure. ``delta``: the recipe's difference that matters, where a claim gives none.
    """
    results = []
    for claim in claims:
        found = {name: named_group(groups, name, f"a claim names {name!r}") for name in claim.settings()}
        scores = {name: seed_figures(records, g, claim, analyses) for name, g in found.items()}
        fixed = [name for name, g in found.items() if not g.runs]
        h = resolution(claim_figure(claim).tasks) if analysis_figure(claim.figure) is None else 0.0
        results.append(judge(claim, scores, fixed=fixed, delta=delta, resolution=h))
    return results


def _figure(result: ClaimResult) -> str:
    if result.figure == BEST_DEV:
        return "best STS-B dev (training)"
    return "last STS-B dev (training)" if result.figure == FINAL_DEV else result.figure


def _margin(margin: float | None, nearest: str | None = None, delta: float | None = None) -> str:
    if margin is None:
        return DASH
    return decide.signed(margin, delta or decide.DELTA) + (
        f" from {nearest}" if nearest and margin < 0 else ""
    )


def _delta(r: ClaimResult) -> str:
    if r.delta is None:
        return "bound"
    return fmt(r.delta) + (f" ({r.delta_reason})" if r.delta_reason else "")


def _tally(words: list[str], order: Sequence[str]) -> str:
    """``2 supported; 1 inconclusive``: how many of ``words`` are each of ``order``'s, those present."""
    return "; ".join(f"{words.count(v)} {v}" for v in order if v in words)


def claims_table(results: Sequence[ClaimResult]) -> Table:
    """One row per claim: what it says, its figure, δ, its verdict and margin, and how often each setting was best."""
    rows = []
    for i, r in enumerate(results, start=1):
        best = ", ".join(f"{s} {p:.2f}" for s, p in (r.best_probability or {}).items()) or DASH
        counts = _tally([s.outcome for s in r.statements], decide.STATEMENT_WORDS)
        verdict = f"**{r.verdict}**" + (f" ({r.qualifier})" if r.qualifier else "")
        margin = _margin(r.margin, delta=r.delta)
        rows.append([str(i), r.text or r.kind, r.kind, _figure(r), _delta(r), verdict, margin, counts, best])
    verdicts = _tally([r.verdict for r in results], decide.CLAIM_VERDICTS)
    bound = math.ceil(decide.false_contradiction(len(results)) * 1000) / 1000
    columns = ["#", "claim", "kind", "figure", "δ", "verdict", "margin", "statements", "P(best)"]
    return make_table(
        "claim-verdicts",
        "Claims and their verdicts",
        columns,
        rows,
        notes=[
            f"{plural(len(results), 'claim')} judged: {verdicts}. If every one were true, or reversed by less than "
            f"δ, the chance that at least one is contradicted falsely is at most {bound:.3f} (each at most "
            f"{decide.ALPHA / 2:.3f}). "
            "Each claim expands to statements, each an interval over seeds of its difference on unrounded figures "
            "(paired on the seeds the settings share, partly paired or Welch otherwise, a gap as one contrast, "
            "one-sample against a model not trained here), read against δ, the difference that matters: A > B is "
            "supported, by more than δ (the interval above δ), supported (above 0, reaching δ), supported, by less "
            "than δ (above 0, below δ), no difference that matters (inside ±δ, across 0), reversed, by less than "
            "δ, reversed, reversed, by more than δ (below -δ, Holm over the claim's statements), inconclusive "
            "otherwise; fewer than 3 seeds is at most inconclusive. A claim is contradicted when one statement is "
            "reversed by more than δ (a plateau's pair beyond its margin, a collapse's setting not below its "
            "bound), takes its statements' word when they share one, is supported (reversed) when every "
            "statement shows that direction (which by more or less than δ said beside it), inconclusive otherwise "
            "(docs/uncertainty.md, One rule). Margin: how far the deciding end of an interval lies from its "
            "threshold (negative: how far an inconclusive one is from a decision; none where every statement is "
            "decided but their words differ). P(best): how likely each setting has the highest mean, drawn from "
            "the seeds' t distributions on the statements' own estimator (20,000 draws, the figures' resolution "
            "included, ties split): a description, not a test."
        ],
    )


def statements_table(results: Sequence[ClaimResult]) -> Table:
    """One row per statement: its design, difference and 95% interval, the p it rests on, MDE, margin and verdict."""
    rows = []
    for i, r in enumerate(results, start=1):
        delta = r.delta or decide.DELTA

        def sg(x: float | None, delta: float = delta) -> str:
            return DASH if x is None else decide.signed(x, delta)

        for s in r.statements:
            span = DASH if s.low is None else f"[{sg(s.low)}, {sg(s.high)}]"
            seeds = DASH if s.interval is None else "/".join(str(n) for n in s.interval.n)
            rests = s.p_holm is not None and (s.outcome in decide.REFUTING or s.nearest in decide.REFUTING)
            p = f"{s.p_holm:.3g}" if rests else DASH
            mde = fmt(s.mdd, decide.decimals(delta))
            verdict = s.outcome + (f" ({s.note})" if s.note else "")
            margin = _margin(s.margin, s.nearest, delta)
            rows.append([str(i), s.what, s.test or DASH, seeds, sg(s.diff), span, p, mde, margin, verdict])
    notes = [
        "diff: the measured difference on unrounded figures, positive in the claimed direction (a bound: "
        "threshold - mean; a plateau: the first setting - the second), with its 95% interval; p (refuting, "
        "Holm): where a statement's verdict rests on it, the p of its refuting outcome (A > B: reversed by more "
        "than δ, diff < -δ; a plateau: |diff| > δ; a bound: above it), one-sided, doubled, Holm-adjusted within "
        "the claim (the refuting word needs it below 0.05); MDE: the smallest difference the seeds detect with "
        "80% power."
    ]
    published = [(i, r.published) for i, r in enumerate(results, start=1) if r.published is not None]
    notes += [f"Claim {i}: the paper reports a difference of {fmt(p)}." for i, p in published]
    columns = [
        "#",
        "statement",
        "test",
        "seeds",
        "diff",
        "95% interval",
        "p (refuting, Holm)",
        "MDE",
        "margin",
    ]
    return make_table(
        "claim-statements",
        "Claims, statement by statement",
        [*columns, "verdict"],
        rows,
        notes=notes,
        right=("seeds", "p (refuting, Holm)"),
    )
