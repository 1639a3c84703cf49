"""The papers' tables from results: pure functions, results in, :class:`~stsbench.tabular.Table` out.

- :func:`score_table`: the main STS table (SimCSE/ESimCSE layout) or the transfer table, each measured row
  followed by the published rows of the same model (MTEB) or method (the papers) and the deltas.
- :func:`by_variant`: one analysis' records as ``{variant: {label: result}}``, what the analysis' own tables
  (``stsbench.analyses.tables``, declared by its registry entry) take.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stsbench.analyses.common import short_name
from stsbench.average import AVG
from stsbench.data.integrity import MARK, modified_note
from stsbench.metrics import simcse_average
from stsbench.published.registry import STS_TASKS, TRANSFER_TASKS, Entry, get_entry, load_registry
from stsbench.reports.collect import AnalysisRecord, TaskRecord
from stsbench.reports.models import Model, model_of
from stsbench.results.labels import last_part, unique_label
from stsbench.tasks.registry import task_columns
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table

TASKS_OF = {"sts": STS_TASKS, "transfer": TRANSFER_TASKS}
SELECTION_MARK = "†"  # a published row whose checkpoint was not chosen on a dev set (Entry.selection)
# published rows of the method a run trained with (the papers' BERT-base rows); ESimCSE's four come from
# one table (arXiv Table 7: SimCSE, + word repetition, + momentum contrast, ESimCSE), evaluated alike
PUBLISHED_BY_METHOD: dict[str, dict[str, tuple[str, ...]]] = {
    "sts": {
        "unsup-SimCSE": ("esimcse-arxiv/table7/unsup-simcse-bert-base",),
        "sup-SimCSE": ("simcse/sts/sup-simcse-bert-base",),
        "word repetition only": ("esimcse-arxiv/table7/word-repetition",),
        "momentum contrast only": ("esimcse-arxiv/table7/momentum-contrast",),
        "ESimCSE": ("esimcse-arxiv/table7/esimcse-bert-base",),
        "MoCoSE": ("mocose/table1/mocose-bert-base",),
    },
    "transfer": {
        "unsup-SimCSE": ("simcse/transfer/unsup-simcse-bert-base",),
        "sup-SimCSE": ("simcse/transfer/sup-simcse-bert-base",),
        "MoCoSE": ("mocose/table2/mocose-bert-base",),
    },
}


def published_for(model: Model, kind: str) -> list[Entry]:
    """Published test rows to set beside ``model``: the same model (by name), else its training method's."""
    if model.method is not None:
        return [get_entry(k) for k in PUBLISHED_BY_METHOD[kind].get(model.method, ())]
    names = {last_part(n).lower() for n in model.names or (model.name,)}
    return [
        e
        for e in load_registry().values()
        if e.kind == "scores"
        and e.split == "test"
        and any(t in e.values for t in TASKS_OF[kind])
        and e.row.split("/")[-1].lower() in names
    ]


def _groups(
    records: Iterable[TaskRecord], models: list[Model], kind: str
) -> list[tuple[Model, str, dict[str, float]]]:
    out: dict[tuple[str, str], dict[str, float]] = {}
    for rec in records:
        r = rec.result
        if r.task_type == kind:
            out.setdefault((r.model.fingerprint, r.mode), {})[r.task] = r.reported
    order = {m.key: i for i, m in enumerate(models)}
    modes = {"test": 0, "fasttest": 1, "dev": 2}
    keys = sorted(out, key=lambda k: (order[k[0]], modes.get(k[1], 3), k[1]))
    by_key = {m.key: m for m in models}
    return [(by_key[k[0]], k[1], out[k]) for k in keys]


def comparable(entry: Entry, kind: str, mode: str) -> bool:
    """A published test row compares with test results (and, for STS, fasttest: the same numbers)."""
    if entry.split == "test":
        return mode == "test" or (kind == "sts" and mode == "fasttest")
    return entry.split == "dev" and mode == "dev"


def published_rows(
    model: Model,
    kind: str,
    mode: str,
    present: list[str],
    measured: list[float | None],
    avg: float | None,
    marked: list[str],
    intervals: list[tuple[float, float] | None] | None = None,
) -> list[list[str]]:
    """The rows under a measured row: each published row of ``model``, then Δ measured − published.

    ``marked`` collects the selection notes of the published rows shown (for :func:`score_notes`).
    ``intervals`` (per task of ``present``, then Avg.): the measured 95% interval over seeds; a row then
    says, per task, whether the published figure lies inside it.
    """
    rows = []
    for entry in published_for(model, kind):
        pub = [entry.values.get(t) for t in present]
        pub_avg = entry.values.get(AVG)
        mark = SELECTION_MARK if entry.selection else ""
        if entry.selection_note and entry.selection_note not in marked:
            marked.append(entry.selection_note)
        rows.append([f"↳ published: {entry.row}{mark}", entry.key, *[fmt(v) for v in pub], fmt(pub_avg)])
        if not comparable(entry, kind, mode):
            rows.append(
                [
                    f"↳ no Δ: {mode} mode vs the paper's {entry.split} protocol",
                    "",
                    *[DASH] * (len(present) + 1),
                ]
            )
            continue
        deltas = [None if a is None or b is None else a - b for a, b in zip(measured, pub, strict=True)]
        d_avg = None if avg is None or pub_avg is None else avg - pub_avg
        rows.append(["↳ Δ measured − published", "", *[fmt_delta(d) for d in deltas], fmt_delta(d_avg)])
        if intervals is not None:
            inside = [
                DASH if v is None or iv is None else "yes" if iv[0] <= v <= iv[1] else "no"
                for v, iv in zip([*pub, pub_avg], intervals, strict=True)
            ]
            rows.append(["↳ published inside the 95% seed interval", "", *inside])
    return rows


def score_table(records: list[TaskRecord], models: list[Model], kind: str = "sts") -> Table | None:
    """One row per measured (model, mode), then its published rows and the deltas; None without results."""
    tasks = TASKS_OF[kind]
    groups = _groups(records, models, kind)
    if not groups:
        return None
    present = [t for t in task_columns(kind) if any(t in v for _, _, v in groups)]  # plugins' tasks too
    columns = ["model", "method", *[short_name(t) for t in present], AVG]
    rows: list[list[str]] = []
    marked: list[str] = []  # the selection notes of the published rows shown
    modified = modified_data(records, kind)
    for model, mode, values in groups:
        measured = [values.get(t) for t in present]
        avg = simcse_average([values.get(t) for t in tasks])
        label = model.label if mode == "test" else f"{model.label} [{mode}]"
        bad = [(model.key, mode, t) in modified for t in present]
        cells = [fmt(v) + MARK * b for v, b in zip(measured, bad, strict=True)]
        rows.append([label, model.method or DASH, *cells, fmt(avg) + MARK * any(bad)])
        rows += published_rows(model, kind, mode, present, measured, avg, marked)
    notes = score_notes(kind, marked) + modified_notes(modified)
    return make_table(kind, score_title(kind), columns, rows, notes)


def modified_notes(modified: dict[tuple[str, str, str], list[str]]) -> list[str]:
    """A table's note naming the files its figures on modified data (:func:`modified_data`) used; none without."""
    if not modified:
        return []
    return [f"{modified_note(f for v in modified.values() for f in v)} (so are their Δ)"]


def modified_data(records: Iterable[TaskRecord], kind: str) -> dict[tuple[str, str, str], list[str]]:
    """``{(model fingerprint, mode, task): data files that differ}`` for ``kind``'s figures on modified data."""
    return {
        (r.model.fingerprint, r.mode, r.task): sorted(r.provenance.data_modified)
        for r in (rec.result for rec in records)
        if r.task_type == kind and r.provenance.data_modified
    }


def score_title(kind: str) -> str:
    """The STS or transfer table's title."""
    if kind == "sts":
        return "STS12-16, STS-B, SICK-R: Spearman x100"
    return "MR, CR, SUBJ, MPQA, SST2, TREC, MRPC: accuracy x100"


def score_notes(kind: str, marked: list[str]) -> list[str]:
    """What the STS or transfer table's numbers are; ``marked``: the selection notes of its published rows."""
    return [
        f"{'Spearman x100 (SentEval `all` for STS12-16)' if kind == 'sts' else 'accuracy x100'}; "
        f"Avg. is the mean of the rounded figures over all {len(TASKS_OF[kind])} tasks, {DASH} when one is missing.",
        "Published rows of a method are the paper's (its backbone is in the row name, e.g. BERT-base); "
        "a model's own published row is matched by name (MTEB). `stsbench published show KEY` prints one.",
        *(
            f"{SELECTION_MARK} {note}: the checkpoint that scored best on the test sets themselves; stsbench "
            "selects on STS-B dev."
            for note in marked
        ),
    ]


def _labelled(records: list[AnalysisRecord], models: list[Model]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    order = [m.key for m in models]
    for rec in sorted(records, key=lambda r: (order.index(r.model.fingerprint), r.path)):
        out[unique_label(model_of(models, rec.model).label, out)] = rec.result
    return out


def by_variant(records: list[AnalysisRecord], models: list[Model]) -> dict[str, dict[str, Any]]:
    """Group one analysis' records by file variant (``length_bias_words``...), each ``{label: result}``."""
    variants = sorted({r.variant for r in records})
    return {v: _labelled([r for r in records if r.variant == v], models) for v in variants}
