"""The figures a claim may read, and the check of a claim's figure: what a recipe's check needs of claims.

Kept apart from :mod:`stsbench.reports.claims` (which judges claims on a report's groups and loads the report's
tables, pandas among them) so that loading a recipe, as ``reproduce --list`` does for every built-in one, reads
no table code (listing the recipes took about 20 s when it did).
"""

from __future__ import annotations

from typing import Any

from stsbench.errors import StsbenchError
from stsbench.metrics import AVG
from stsbench.published.cells import BEST_DEV
from stsbench.stats.claims import Claim

TRANSFER_AVG = "Transfer Avg."  # a claim's figure: the mean of the seven transfer tasks' accuracy
FINAL_DEV = "final-dev"  # a claim's figure: the STS-B dev Spearman x100 of the training's last evaluation


def analysis_figure(figure: str) -> tuple[str, str, str] | None:
    """``(variant, row, column)`` of an analysis figure ``VARIANT:ROW:COLUMN``; None for any other figure.

    ``length_bias_tokens:gap (LD <= 3 minus LD > 3):Avg.`` is ESimCSE Table 7's gap, per seed, in the length-bias
    results in tokens: a row and a column of the analysis' figures (:meth:`Analysis.numbers`, the rows and
    columns of the report's table over seeds).
    """
    parts = figure.split(":")
    if len(parts) != 3 or not all(p.strip() for p in parts):
        return None
    variant, row, column = (p.strip() for p in parts)
    return variant, row, column


def analysis_of(variant: str) -> Any:
    """The registered analysis whose results a variant (``length_bias_tokens``) is a file stem of; None if none."""
    from stsbench.analyses.registry import all_analyses

    found = [a for a in all_analyses() if variant == a.name or variant.startswith(f"{a.name}_")]
    return max(found, key=lambda a: len(a.name)) if found else None


def with_task_figure(claim: Claim, where: str) -> Claim:
    """``claim`` with its figure's task by its registered name (``STS-B``: ``STSBenchmark``); one line otherwise.

    ``best-dev``, ``final-dev``, ``Avg.``, ``Transfer Avg.`` and an analysis figure (:func:`analysis_figure`, of
    an analysis that has figures, with the claim's own ``delta``: other units than the default's) are kept; a task set or an unknown name is refused, naming ``where``.
    """
    from stsbench.tasks.registry import task_names

    if claim.figure in (BEST_DEV, FINAL_DEV, AVG, TRANSFER_AVG):
        return claim
    parsed = analysis_figure(claim.figure)
    if parsed is not None:
        analysis = analysis_of(parsed[0])
        if analysis is None or analysis.number_builder is None:
            raise StsbenchError(
                f"{where}: figure {claim.figure!r}: {parsed[0]!r} is not the results of an analysis with figures "
                "(VARIANT:ROW:COLUMN, e.g. 'length_bias_tokens:gap (LD <= 3 minus LD > 3):Avg.')"
            )
        if claim.delta is None and claim.kind not in ("plateau", "collapse"):
            raise StsbenchError(
                f"{where}: figure {claim.figure!r} is an analysis figure, in that analysis' units: give the claim "
                "a delta (the difference that matters there) and a one-line delta_reason"
            )
        return claim
    try:
        tasks = task_names([claim.figure])
    except StsbenchError:
        raise StsbenchError(
            f"{where}: figure {claim.figure!r} is not a figure a claim reads; {_choices(claim.figure)}"
        ) from None
    if len(tasks) != 1:
        raise StsbenchError(f"{where}: figure {claim.figure!r} names {len(tasks)} tasks; give one")
    return claim.model_copy(update={"figure": tasks[0]})


def _choices(figure: str) -> str:
    """The figures a claim may read, the nearest to ``figure`` first (every kind, not the task names alone)."""
    import difflib

    from stsbench.tasks.registry import TASKS

    named = [BEST_DEV, FINAL_DEV, AVG, TRANSFER_AVG, *TASKS.names()]
    near = difflib.get_close_matches(figure, named, n=1, cutoff=0.5)
    hint = f"did you mean {near[0]!r}? " if near else ""
    return (
        f"{hint}choose from {', '.join(named[:4])}, a task ({', '.join(named[4:])}) or an analysis figure "
        "VARIANT:ROW:COLUMN (e.g. 'length_bias_tokens:gap (LD <= 3 minus LD > 3):Avg.')"
    )
