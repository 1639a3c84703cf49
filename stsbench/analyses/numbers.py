"""The analyses' figures one by one: for the report's tables over seeds and for ``published check``.

Two pure functions per analysis, named by its registry entry (``number_builder``, ``published_builder``):

- ``<analysis>_numbers(result)``: every figure the analysis' report tables print, as :class:`Number` rows laid
  out as the paper's table (row x column), at the tables' scale, unrounded. Over the seeds of a run each
  ``(row, column)`` is one value per seed, summarised by :func:`stsbench.stats.seeds.seed_summary` as the
  score tables are.
- ``<analysis>_published(result, entry)``: ``{column: (measured, published, interval)}`` for the columns a published entry
  of the registry prints, both in points (x100 where the paper prints a fraction, as ESimCSE arXiv Table 1
  does, so that a difference that matters is one number), or a line saying why this result cannot be held
  against it: ESimCSE counts length differences in tokens with a threshold of 3, so a result in words or with
  another threshold is another measurement. ``interval``: the checkpoint's bootstrap interval over pairs, where
  the result holds one (a length bias' Avg.), else None: what one released checkpoint is judged by.
"""

from __future__ import annotations

from typing import Any

from stsbench.analyses.common import short_name
from stsbench.analyses.registry import Number
from stsbench.metrics import AVG

LD_ROW = "|cos - g'| x100, LD {group}"  # ESimCSE COLING Table 7's figure
RHO_ROW = "Spearman x100, LD {group}"  # ESimCSE arXiv Table 1's (the paper prints a fraction)
GAP = "gap (LD <= {t} minus LD > {t})"
PUBLISHED_THRESHOLD = 3
PUBLISHED_UNIT = "tokens"


def _x100(v: float | None) -> float | None:
    return None if v is None else v * 100


def _ld(label: str) -> str:
    """``<=3`` -> ``<= 3``, ``>3`` -> ``> 3`` (the papers' spelling)."""
    op = "<=" if label.startswith("<=") else ">"
    return f"{op} {label.removeprefix(op)}"


def length_bias_numbers(result: Any) -> list[Number]:
    """Table 7's mean |cos - g'| x100 by group (tasks, Avg., the gap) and Table 1's Spearman x100 by group."""
    out: list[Number] = []
    groups = [g.label for g in result.datasets[0].threshold_groups]  # "<=3", ">3"
    averages = {a.label: a for a in result.average}
    for k, label in reversed(list(enumerate(groups))):  # LD > t first, as Table 7
        row = LD_ROW.format(group=_ld(label))
        out += [
            Number(row, short_name(d.task), _x100(d.threshold_groups[k].mean_abs_diff))
            for d in result.datasets
        ]
        out.append(Number(row, AVG, _x100(averages[label].mean_abs_diff), headline=True))
    le, gt = (_x100(averages[g].mean_abs_diff) for g in groups)
    gap = None if le is None or gt is None else le - gt
    out.append(Number(GAP.format(t=result.threshold), AVG, gap, headline=True))
    for k, label in enumerate(groups):  # Table 1: <= t, then > t
        row = RHO_ROW.format(group=_ld(label))
        out += [
            Number(row, short_name(d.task), _x100(d.threshold_groups[k].spearman)) for d in result.datasets
        ]
    return out


Interval = tuple[float, float] | None  # one checkpoint's bootstrap interval over pairs, in points; None: none


def _pairs(
    measured: dict[str, float | None],
    entry: Any,
    scale: float = 1.0,
    intervals: dict[str, Interval] | None = None,
) -> dict[str, tuple[float, float, Interval]]:
    """``{column: (measured x scale, published x scale, interval)}`` for the entry's columns measured here."""
    intervals = intervals or {}
    return {
        c: (v * scale, float(entry.values[c]) * scale, intervals.get(c))
        for c, v in measured.items()
        if v is not None and c in entry.values
    }


def length_bias_published(result: Any, entry: Any) -> dict[str, tuple[float, float, Interval]] | str:
    """ESimCSE arXiv Table 1 (a task's Spearman, a fraction), COLING Table 1 (Avg.) and Table 7 (per task, Avg.)."""
    if result.unit != PUBLISHED_UNIT or result.threshold != PUBLISHED_THRESHOLD:
        return (
            f"{entry.key} counts length differences in {PUBLISHED_UNIT} with a threshold of {PUBLISHED_THRESHOLD}; "
            f"this result counts {result.unit} with {result.threshold}: run `stsbench length-bias --unit tokens "
            "--threshold 3`"
        )
    le, gt = (0, 1)  # threshold_groups: <= t, > t
    row_id = entry.key.rsplit("/", 1)[-1]
    if entry.key.startswith("esimcse-arxiv/table1/"):
        d = next((d for d in result.datasets if d.task.lower() == row_id), None)
        if d is None:
            return f"no {row_id} pairs in this result"
        values = {
            "length diff <= 3": d.threshold_groups[le].spearman,
            "length diff > 3": d.threshold_groups[gt].spearman,
        }
        return _pairs(values, entry, 100.0)  # the paper prints a fraction
    k = gt if row_id.endswith("gt-3") else le if row_id.endswith("le-3") else None
    if k is None:
        return f"{entry.key} is not a row of a length difference <= 3 or > 3"
    label = result.datasets[0].threshold_groups[k].label
    avg = _x100(next(a for a in result.average if a.label == label).mean_abs_diff)
    found = (getattr(result, "bootstrap", None) or {}).get("intervals", {}).get(f"LD {_ld(label)} Avg.")
    interval = tuple(found) if found else None
    if entry.key.startswith("esimcse-coling/table1/"):
        return _pairs({"Avg. Similarity Diff": avg}, entry, intervals={"Avg. Similarity Diff": interval})
    values = {d.task: _x100(d.threshold_groups[k].mean_abs_diff) for d in result.datasets}
    return _pairs({**values, AVG: avg}, entry, intervals={AVG: interval})


def repetition_numbers(result: Any) -> list[Number]:
    """Table 8's two mean similarities x100 and their difference."""
    row = "mean cosine x100"
    return [
        Number(row, "Sim<q,s1>", result.mean_sim_q_s1),
        Number(row, "Sim<q,s2>", result.mean_sim_q_s2),
        Number(row, "difference", result.difference, headline=True),
    ]


def repetition_published(result: Any, entry: Any) -> dict[str, tuple[float, float, Interval]] | str:
    """COLING Table 8's Sim<q,s1> and Sim<q,s2> (x100): the sample may differ from the paper's 100 queries."""
    return _pairs({"Sim<q,s1>": result.mean_sim_q_s1, "Sim<q,s2>": result.mean_sim_q_s2}, entry)


def align_uniform_numbers(result: Any) -> list[Number]:
    """l_align and l_uniform."""
    row = f"{short_name(result.task)} {result.split}"
    return [
        Number(row, "l_align", result.alignment, 4, headline=True),
        Number(row, "l_uniform", result.uniformity, 4, headline=True),
    ]


def spectrum_numbers(result: Any) -> list[Number]:
    """Effective rank and top-component share (raw, centred), mean cosines."""
    row = f"{short_name(result.task)} {result.split}"
    return [
        Number(row, "erank raw", result.uncentred.effective_rank),
        Number(row, "erank centred", result.centred.effective_rank, headline=True),
        Number(row, "top share raw", result.uncentred.top_share, 4),
        Number(row, "top share centred", result.centred.top_share, 4, headline=True),
        Number(row, "mean cos (random pairs)", result.avg_cosine_random_pairs, 4),
        Number(row, "mean cos (all pairs)", result.avg_cosine_all_pairs, 4),
    ]


def density_numbers(result: Any) -> list[Number]:
    """Each gold group's mean cosine, and the spread between the highest- and lowest-rated groups' means."""
    row = f"mean cosine, {short_name(result.task)} {result.split}"
    out = [Number(row, f"gold {g.label}", g.mean, 3) for g in result.groups]
    first, last = result.groups[0].mean, result.groups[-1].mean
    gap = None if first is None or last is None else last - first
    label = f"gold {result.groups[-1].label} minus gold {result.groups[0].label}"
    return [*out, Number(row, label, gap, 3, headline=True)]
