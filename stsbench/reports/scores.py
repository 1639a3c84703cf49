"""The STS and transfer score tables: task results in, :class:`~stsbench.tabular.Table` out (pure functions).

- :func:`score_table`: the main STS table (SimCSE/ESimCSE layout) or the transfer table, one row per group of
  seeds (:mod:`stsbench.reports.seeds`; a model without seeds is a group of one, its figures as measured;
  several seeds: mean ± std (n) and the 95% interval over seeds), each followed by the published rows of the
  same model (MTEB) or method (the papers), the deltas and, over seeds, whether the published figure lies
  inside the interval.
- :func:`per_seed_table`: every seed's figures, the numbers behind the means.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from stsbench.analyses.registry import short_name
from stsbench.data.integrity import MARK, modified_note
from stsbench.metrics import AVG
from stsbench.published.check import inside_interval, result_modes
from stsbench.published.registry import Entry, get_entry, load_registry, split_cell
from stsbench.reports.collect import Model, TaskRecord
from stsbench.reports.seeds import (
    TASKS_OF,
    SeedGroup,
    has_seeds,
    interval,
    mean_std,
    mode_label,
    modes_of,
    present_tasks,
    seed_groups,
    seeds_folder,
    task_values,
)
from stsbench.results.write import last_part
from stsbench.stats.decide import decimals
from stsbench.stats.seeds import SeedSummary, seed_summary
from stsbench.tabular import DASH, Table, fmt, fmt_delta, make_table

SELECTION_MARK = "†"  # a published row whose checkpoint was not chosen on a dev set (Entry.selection)


def named_rows(addresses: Iterable[str], kind: str) -> list[Entry]:
    """The score rows of ``kind`` the ``addresses`` (a recipe's cells, ``--against``'s rows) name, each once."""
    keys = dict.fromkeys(split_cell(a)[0] for a in addresses)
    rows = [get_entry(k) for k in keys]
    return [e for e in rows if e.kind == "scores" and any(t in e.values for t in TASKS_OF[kind])]


def published_for(model: Model, kind: str) -> list[Entry]:
    """Published test rows to set beside ``model``: the rows of its own name (a released checkpoint's).

    What a report without a recipe or ``--against`` matches (and says so); with either, only what they name. A
    model trained here matches none: its recipe or ``--against`` says which paper row it is held against.
    """
    names = {last_part(n).lower() for n in model.names or (model.name,)}
    tests = [
        e for e in load_registry().values() if e.split == "test" and e.row.split("/")[-1].lower() in names
    ]
    return [e for e in tests if e.kind == "scores" and any(t in e.values for t in TASKS_OF[kind])]


def comparable(entry: Entry, kind: str, mode: str) -> bool:
    """A published row compares with results of the modes its figures may be read from (:func:`result_modes`)."""
    return mode in result_modes(entry.split, TASKS_OF[kind])


def published_rows(
    model: Model,
    kind: str,
    mode: str,
    present: list[str],
    measured: list[float | None],
    marked: list[str],
    legend: list[str],
    intervals: list[tuple[float, float] | None] | None = None,
    entries: list[Entry] | None = None,
) -> list[list[str]]:
    """The rows under a measured row: each published row of ``model``, then Δ measured − published.

    ``measured``: per task of ``present``, then Avg. ``entries``: the rows named for it (a recipe's,
    ``--against``'s); None: matched by name, and said so.
    ``marked`` collects the selection notes of the published rows shown, ``legend`` what their markers mean
    (:func:`score_notes`).
    ``intervals`` (per task of ``present``, then Avg.): the measured 95% interval over seeds; a row then
    says, per task, whether the published figure lies inside it.
    """
    rows = []
    matched = entries is None
    for entry in published_for(model, kind) if matched else entries:
        pub = [entry.values.get(t) for t in [*present, AVG]]
        mark = SELECTION_MARK if entry.selection else ""
        if entry.selection_note and entry.selection_note not in marked:
            marked.append(entry.selection_note)
        legend.extend(note for note in legends(entry) if note not in legend)
        how = " (matched by name: no recipe or --against names it)" if matched else ""
        rows.append([f"↳ published: {entry.row}{mark}{how}", entry.key, *[fmt(v) for v in pub]])
        if not comparable(entry, kind, mode):
            no = f"↳ no Δ: {mode} mode vs the paper's {entry.split} protocol"
            rows.append([no, "", *[DASH] * len(pub)])
            continue
        deltas = [None if a is None or b is None else a - b for a, b in zip(measured, pub, strict=True)]
        rows.append(["↳ Δ measured − published", "", *[fmt_delta(d) for d in deltas]])
        if intervals is not None:
            inside = [
                DASH if v is None or iv is None else "yes" if inside_interval(v, *iv) else "no"
                for v, iv in zip(pub, intervals, strict=True)
            ]
            rows.append(["↳ published inside the 95% seed interval", "", *inside])
    return rows


def legends(entry: Entry) -> list[str]:
    """The notes of ``entry``'s paper that explain a marker its row name carries (``♣``: "Rows marked ♣ are ...")."""
    marks = [c for c in entry.row if not (c.isalnum() or c.isspace() or c in "-_.,:;()[]/=+'\"&")]
    return [n for n in entry.notes if any(f"marked {m}" in n for m in marks)]


def modified_notes(modified: dict[tuple[str, str, str], list[str]]) -> list[str]:
    """A table's note naming the files its figures on modified data (:func:`modified_data`) used; none without."""
    return [f"{modified_note(f for v in modified.values() for f in v)} (so are their Δ)"] if modified else []


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


def score_notes(kind: str, marked: list[str], legend: Sequence[str] = ()) -> list[str]:
    """What the STS or transfer table's numbers are.

    ``marked``: the selection notes of its published rows; ``legend``: what the markers in their names mean.
    """
    return [
        f"{'Spearman x100 (SentEval `all` for STS12-16)' if kind == 'sts' else 'accuracy x100'}; "
        f"Avg. is the mean of the rounded figures over all {len(TASKS_OF[kind])} tasks, {DASH} when one is missing.",
        "Published rows are those the recipe or --against names for each setting (its backbone is in the row "
        "name, e.g. BERT-base); without either, only a model's own rows (MTEB's, by its name), said so. "
        "`stsbench published show KEY` prints one.",
        *legend,
        *(
            f"{SELECTION_MARK} {note}: the checkpoint that scored best on the test sets themselves; stsbench "
            "selects on STS-B dev."
            for note in marked
        ),
    ]


def _summaries(
    records: list[TaskRecord], group: SeedGroup, kind: str, mode: str, present: list[str]
) -> list[SeedSummary | None]:
    """Per task of ``present``, then Avg.: the summary over the group's seeds."""
    values = task_values(records, group, kind, mode)
    return [seed_summary(list(values[t].values())) if values.get(t) else None for t in [*present, AVG]]


def score_table(
    records: list[TaskRecord],
    models: list[Model],
    kind: str = "sts",
    named: Mapping[str, Sequence[str]] | None = None,
    labels: Mapping[str, str] | None = None,
) -> Table | None:
    """One row per (group of seeds, mode), then its published rows and the deltas; None without results.

    ``labels``: what the recipe calls each run (:func:`~stsbench.reports.seeds.declared_labels`), the groups' names.

    ``named``: the addresses a recipe or ``--against`` holds each group against (by its seeds' folder, or its
    name for a model not trained here): only those rows are set beside it. None (a report of results alone):
    a model's own rows by name, each row saying it was matched so.

    The models are grouped by :func:`~stsbench.reports.seeds.seed_groups`: a group of one (a model not trained
    here, or one seed) is its figures as measured; a group of several seeds is mean ± std (n) over the seeds,
    the 95% interval over seeds, and whether each published figure lies inside that interval.
    """
    groups = seed_groups(models, labels)
    present = present_tasks(records, groups, kind)
    if not present:
        return None
    columns = ["model", "method", *[short_name(t) for t in present], AVG]
    rows: list[list[str]] = []
    marked: list[str] = []  # the selection notes of the published rows shown
    legend: list[str] = []  # what the markers in their names mean
    modified = modified_data(records, kind)

    def beside(g: SeedGroup) -> list[Entry] | None:
        """The rows named for ``g`` its figures compare with (a dev row named for a dev table is not set here)."""
        if named is None:
            return None
        rows = named_rows(named.get(seeds_folder(g.runs[0]) if g.runs else g.name, ()), kind)
        modes = modes_of(records, g, kind)
        return [e for e in rows if any(comparable(e, kind, m) for m in modes)]

    for g in groups:
        for mode in modes_of(records, g, kind):
            sums = _summaries(records, g, kind, mode, present)
            n = max(s.n for s in sums if s is not None)
            means = [None if s is None else s.mean for s in sums]
            # a figure over any seed's result on modified data is marked, and so is the Avg. over it
            bad = [any((m.key, mode, t) in modified for m in g.models) for t in present]
            bad.append(any(bad))
            # one seed, or a model not trained here: its figures as measured (mean_std of one value)
            label = g.label if g.n == 1 else f"{g.name} (n={n})"
            cells = [mean_std(s, n) + MARK * b for s, b in zip(sums, bad, strict=True)]
            rows.append([mode_label(label, mode), g.method or DASH, *cells])
            bounds = None
            if n > 1:
                spans = [interval(s) + MARK * b for s, b in zip(sums, bad, strict=True)]
                rows.append(["↳ 95% interval over seeds", "", *spans])
                bounds = [None if s is None or s.low is None else (s.low, s.high) for s in sums]
            rows += published_rows(g.models[0], kind, mode, present, means, marked, legend, bounds, beside(g))
    notes = score_notes(kind, marked, legend) + modified_notes(modified)
    if any(r[0].startswith("↳ 95% interval over seeds") for r in rows):
        notes.append(
            "A row `NAME (n=k)`: k training runs identical but for the seed, each cell the mean ± sample std over "
            "the seeds (its own n where fewer seeds have that task; Avg.: over the seeds' own Avg.). The 95% "
            "interval is the t-interval of the mean over seeds; Δ is the mean − published, and the last row says "
            "whether the published figure lies inside that interval. Each seed's figures: the Seeds section."
        )
    # over seeds the cells are `mean ± std` text, right-aligned by name; without, the numbers align themselves
    right = tuple(columns[2:]) if has_seeds(groups) else ()
    return make_table(kind, score_title(kind), columns, rows, notes, right)


def per_seed_table(records: list[TaskRecord], groups: list[SeedGroup], kind: str) -> Table | None:
    """Every seed's figures, one row per checkpoint of each group of seeds; None without such groups."""
    multi = [g for g in groups if g.n > 1]
    present = present_tasks(records, multi, kind)
    if not present:
        return None
    columns = ["checkpoint", "group", "seed", *[short_name(t) for t in present], AVG]
    rows = []
    for g in multi:
        for model, seed in zip(g.models, g.seeds, strict=True):
            one = SeedGroup(g.name, g.method, (model,))
            for mode in modes_of(records, one, kind):
                sums = _summaries(records, one, kind, mode, present)
                cells = [DASH if s is None else fmt(s.mean) for s in sums]
                rows.append([mode_label(model.label, mode), g.name, str(seed), *cells])
    noun = "Spearman x100" if kind == "sts" else "accuracy x100"
    notes = [f"{noun} of each seed's kept checkpoint; the groups' rows above are the mean ± std of these."]
    return make_table(f"{kind}_per_seed", f"{kind.upper()}: each seed", columns, rows, notes)


def delta_digits(delta: float | None) -> int:
    """The decimals a figure judged against ``delta`` is printed with (:func:`stsbench.stats.decide.decimals`).

    δ = 1.0: 1; 0.5: 2; 0.05: 3; a bound (no δ): 2.
    """
    if delta is None or not math.isfinite(delta) or delta <= 0:
        return 2
    return decimals(delta)
