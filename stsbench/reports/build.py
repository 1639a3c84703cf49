"""Assemble the report: sections of paragraphs, tables and figures, from a :class:`Collection`.

:func:`build_report` draws the figures into ``figures_dir`` and returns a
:class:`~stsbench.reports.layout.Report` that the templates only loop over. A section whose results are missing keeps its title and says, in one line,
which command makes them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from stsbench.analyses.common import short_name
from stsbench.analyses.registry import Analysis, all_analyses
from stsbench.data.integrity import MARK, modified_text
from stsbench.progress import plural
from stsbench.published.cells import result_modes
from stsbench.published.registry import STS_TASKS
from stsbench.reports import align_distance, paper_figures, provenance, reproduction, seeds
from stsbench.reports import claims as claims_module
from stsbench.reports.collect import AnalysisRecord, Collection, TaskRecord
from stsbench.reports.layout import Figures, Report, Section, absent_last, missing, under
from stsbench.reports.models import Model, by_variant, find_models
from stsbench.reports.published_cells import report_cells
from stsbench.reports.reproduction import Reproduction, Target
from stsbench.reports.scores import per_seed_table, score_table
from stsbench.reports.seeds import BASELINE, SeedGroup, baseline_group, declared_labels, report_groups
from stsbench.reports.training_sections import training_sections
from stsbench.results.write import Checkout, portable
from stsbench.stats.claims import Claim, ClaimResult
from stsbench.stats.decide import CELL_DELTA, DELTA, LEGEND, signed


def compared_with(coll: Collection, reps: Sequence[Reproduction]) -> dict[str, list[str]] | None:
    """What each group's scores are set beside: what its recipe (``recipe_runs.json``) and ``--against`` name.

    By seeds' folder (a model not trained here: its group's name). None for results with neither: the score
    tables then match a model's own rows by name, and say so.
    """
    from stsbench.results.runs import read_recipe_runs

    if not reps and not read_recipe_runs(coll.folders):
        return None
    named = report_cells(coll.folders, reps)
    for rep in reps:
        if not rep.group.runs:
            named.setdefault(rep.group.name, []).append(rep.address or rep.entry.key)
    return named


def verdict_summary(
    reps: Sequence[Reproduction], judged: Sequence[ClaimResult], sections: Sequence[Section]
) -> list[str]:
    """One line per published target and per claim, its verdict and a link to the section that shows it."""
    where = {s.key: f"[{s.title}](#{s.anchor})" for s in sections}
    lines = []
    for rep in reps:
        counts = ", ".join(f"{n} {v}" for v, n in rep.counts().items() if n)
        asked = rep.address or rep.entry.key
        lines.append(
            f"Verdict: {asked} against {rep.group.label}: {counts or 'nothing checked'} ({where['reproduction']})."
        )
    for i, r in enumerate(judged, start=1):
        word = r.verdict + (f" ({r.qualifier})" if r.qualifier else "")
        margin = "" if r.margin is None else f", margin {signed(r.margin, r.delta or DELTA)}"
        lines.append(f"Verdict: claim {i}, {r.text or r.kind}: **{word}**{margin} ({where['claims']}).")
    return lines


def once(sections: Sequence[Section]) -> None:
    """Each figure shown once, where it first appears; a later section that discusses it links there."""
    first: dict[str, Section] = {}
    for section in sections:
        kept = []
        for fig in section.figures:
            if fig.svg in first:
                shown = first[fig.svg]
                section.paragraphs.append(f"Figure: {fig.title}, shown in [{shown.title}](#{shown.anchor}).")
            else:
                first[fig.svg] = section
                kept.append(fig)
        section.figures = kept


def code_span(text: str) -> str:
    """``text`` as a Markdown code span whatever backticks it holds (CommonMark: a fence longer than any run)."""
    import re

    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _scores(
    coll: Collection,
    models: list[Model],
    kind: str,
    results: Sequence[str],
    named: dict[str, list[str]] | None,
    labels: dict[str, str],
) -> Section:
    title = "STS tasks" if kind == "sts" else "Transfer tasks"
    t = score_table(coll.tasks, models, kind, named, labels)
    return Section(kind, title, tables=[t]) if t else Section(kind, title, [missing(kind, results)])


def _analysis(
    coll: Collection,
    models: list[Model],
    groups: list[SeedGroup],
    analysis: Analysis,
    results: Sequence[str],
    figs: Figures,
) -> Section:
    name, title = analysis.name, analysis.title
    records = coll.analyses_of(name)
    if not records:
        return Section(name, title, [missing(name, results)])
    section = Section(name, title)
    modified = [r for r in records if _modified(r)]
    if modified:
        who = ", ".join(sorted({f"`{r.model.name}`" for r in modified}))
        section.paragraphs.append(
            f"{MARK} The results of {who} were {modified_text(f for r in modified for f in _modified(r))}."
        )
    for variant in sorted({r.variant for r in records}):
        ours = [r for r in records if r.variant == variant]
        found = seeds.seeded(ours, groups, analysis) if analysis.number_builder is not None else []
        in_groups = {m.key for f in found for m in f.group.models}
        single = [r for r in ours if r.model.fingerprint not in in_groups]
        singles = by_variant(single, models)
        for labelled in singles.values():  # checkpoints without seeds: the paper's layout
            section.tables += analysis.tables(variant, labelled)
            paths = analysis.figure(labelled, figs.folder / variant)
            if paths:
                section.figures.append(figs.add(f"{title} ({variant})", paths, "analysis", name))
        if found:  # groups of seeds: mean ± std and the 95% interval of each figure, every seed's value
            section.tables.append(seeds.seeds_table(analysis, variant, found))
            figs.written.append(seeds.write_seed_values(found, figs.folder / seeds.csv_name(variant)))
            points = seeds.headline_points(found)
            if points:
                paths = seeds.seed_points_figure(points, figs.folder / f"{variant}_seeds")
                caption = f"{title} ({variant}): each seed, the mean and its 95% interval"
                section.figures.append(figs.add(caption, paths, "analysis-seeds", name))
        if name == "spectrum" and found:
            _spectra(found, singles.get(variant, {}), variant, section, figs)
        if name == "align_uniform":
            _align_map(coll, ours, groups, variant, section, figs)
    return section


def _spectra(
    found: list[seeds.SeededResults],
    singles: dict[str, object],
    variant: str,
    section: Section,
    figs: Figures,
) -> None:
    """MoCoSE Figure 7 over seeds: each group's mean spectrum and its seeds' spread, the backbone beside."""
    data = paper_figures.write_spectrum_rows(
        paper_figures.spectrum_rows(found, singles), figs.folder / f"{variant}_groups.csv"
    )
    figs.written.append(data)
    paths = paper_figures.spectra_figure(data, figs.folder / f"{variant}_groups", variant)
    caption = (
        f"Singular values ({variant}) of each group over its seeds, checkpoints without seeds beside, as MoCoSE "
        f"Figure 7 (data: `{data.name}`)"
    )
    section.figures.append(figs.add(caption, paths, "analysis-groups", "spectrum"))


def _align_map(
    coll: Collection,
    records: list[AnalysisRecord],
    groups: list[SeedGroup],
    variant: str,
    section: Section,
    figs: Figures,
) -> None:
    """SimCSE Figure 3's map of the checkpoints with an STS Avg., from the CSV written beside it."""
    rows = paper_figures.map_rows(records, coll.tasks, groups)
    if not rows:
        return
    data = paper_figures.write_map_rows(rows, figs.folder / f"{variant}_map.csv")
    figs.written.append(data)
    paths = paper_figures.map_figure(data, figs.folder / f"{variant}_map", f"{variant}: coloured by STS Avg.")
    caption = (
        f"Alignment and uniformity ({variant}) coloured by STS Avg., as SimCSE Figure 3 (data: `{data.name}`)"
    )
    section.figures.append(figs.add(caption, paths, "align-map", "align_uniform"))


def _modified(record: TaskRecord | AnalysisRecord) -> dict[str, str]:
    """The data files a task or analysis record's figures were computed on that differ from the canonical."""
    prov = record.result.provenance if isinstance(record, TaskRecord) else record.provenance
    return prov.data_modified or {}


def _seeds(
    coll: Collection, groups: list[SeedGroup], base: SeedGroup | None, baseline: str, figs: Figures
) -> Section:
    """Differences to the baseline group over seeds, each seed's figures and their spread."""
    section = Section("seeds", "Seeds")
    section.paragraphs.append(
        "Runs whose training configs are equal but for the seed form one group (n: how many seeds). Seeds "
        "move a figure as much as a method can; a difference to the baseline counts here only where its 95% "
        "interval over the seeds (paired on shared seeds, on unrounded figures) lies entirely beyond the "
        f"difference that matters and Holm over the tasks agrees (marked {seeds.SIGNIFICANT}; docs/uncertainty.md, One "
        "rule)."
    )
    if base is None:
        section.paragraphs.append(f"No differences: no group of seeds of `{baseline}` (`--baseline`) here.")
    forest = []
    for kind in ("sts", "transfer"):
        diffs = seeds.seed_differences(coll.tasks, groups, base, kind) if base else []
        table = seeds.difference_table(diffs, base, kind) if base else None
        section.tables += [t for t in (table, per_seed_table(coll.tasks, groups, kind)) if t]
        forest += [
            (f"{d.group.name}: {short_name(task)}", c.diff, c.low, c.high, seeds.significant(c))
            for d in diffs
            if kind == "sts" and d.mode in result_modes("test", STS_TASKS)
            for task, c in d.cells.items()
            if c is not None
        ]
    points = seeds.seed_points(coll.tasks, groups, "sts")
    if points:
        figure = seeds.seed_points_figure(points, figs.folder / "sts_seeds")
        section.figures.append(
            figs.add("STS test: each seed, the mean and its 95% interval", figure, "seed-points")
        )
    if forest:
        figure = seeds.forest_plot(
            forest,
            figs.folder / "sts_seed_differences",
            "difference (Spearman x100)",
            f"beyond ±{DELTA:g}, the difference that matters",
        )
        title = f"STS test: difference to {base.name} over seeds, 95% intervals" if base else ""
        section.figures.append(figs.add(title, figure, "seed-differences"))
    return section


def _paper_figures(
    keys: Sequence[str], sections: Sequence[Section], verdicts: Sequence[tuple[str | None, str, str]]
) -> list[Section]:
    """A section per paper figure: number, caption, claim and verdict, and the report's figures that draw it."""
    from stsbench.published.figures import PAPER_NAMES

    drawn = [f for section in sections for f in section.figures]
    out = []
    for entry, lines, mine in paper_figures.blocks(keys, drawn, [v for v in verdicts if v[0]]):
        title = f"{PAPER_NAMES.get(entry.paper, entry.paper)} {entry.figure}"
        out.append(Section(f"paper-{entry.key.replace('/', '-')}", title, lines, figures=list(mine)))
    return out


def _reproduction(reps: list[Reproduction], difference: float) -> Section:
    """The published rows named by ``--against``, each beside its group, a verdict per cell."""
    section = Section("reproduction", "Reproduction", [reproduction.rule(difference)])
    section.tables = [reproduction.summary_table(reps), *map(reproduction.reproduction_table, reps)]
    return section


def _claims(judged: list[ClaimResult]) -> Section:
    """The table's claims, each judged over the seeds of the groups it names (``--claims``)."""
    section = Section("claims", "Claims")
    section.paragraphs = [
        "Each claim of the table, judged on the groups' figures seed by seed by the rule of docs/uncertainty.md "
        "(One rule): what the seeds here say of it, whatever the paper's verdict."
    ]
    section.tables = [claims_module.claims_table(judged), claims_module.statements_table(judged)]
    return section


def _provenance(coll: Collection, models: list[Model], checkout: Checkout | None = None) -> Section:
    when = provenance.created_range(coll)
    section = Section("provenance", "Provenance")
    if when:
        section.paragraphs.append(f"Results created {when} (UTC, from each file's provenance).")
    section.paragraphs += provenance.code_lines(checkout, coll)  # none where the report's code is clean
    if models:
        section.tables += [provenance.models_table(models, coll), provenance.commands_table(coll)]
    if coll.runs:
        section.tables.append(provenance.training_provenance_table(coll.runs))
    if coll.tasks or coll.analyses:
        section.tables += [provenance.data_table(coll), provenance.versions_table(coll)]
    return section


@dataclass(frozen=True)
class ReportSpec:
    """What a report is asked for beside its results: its title and command, what it judges and what it shows.

    ``baseline``: the group of seeds (a method, e.g. ``unsup-SimCSE``) the others are compared with; ``against``:
    the published rows to reproduce (a Reproduction section, only when given), judged with ``difference``, the
    difference that matters (:func:`stsbench.published.seed_check.verdict`); ``notes``: lines set in bold after
    the opening paragraph (what the reader must know first, e.g. results computed by other code than the rest);
    ``claims``: a table's claims, judged on the groups of seeds (a Claims section); ``banner``: a line set first
    under every table and in every figure's title (a mini edition's backbone, steps and corpus: "not the paper's
    setting"), and in bold at the top; ``figures``: the papers' figures the results regenerate, each a section;
    ``align_point``: MoCoSE Figure 4's fixed point (l_align, l_uniform); ``checkout``: the stsbench checkout
    making the report, whose files differing from its commit the Provenance section names (None: nothing said).
    """

    title: str
    command: str
    baseline: str = BASELINE
    against: Sequence[Target] = ()
    difference: float = CELL_DELTA
    notes: Sequence[str] = ()
    claims: Sequence[Claim] = ()
    banner: str | None = None
    figures: Sequence[str] = ()
    align_point: tuple[float, float] = align_distance.POINT
    checkout: Checkout | None = None


def build_report(
    coll: Collection,
    spec: ReportSpec,
    figures_dir: Path,
    figures_prefix: str = "figures",
    out: Path | None = None,
) -> Report:
    """Draw every figure into ``figures_dir`` and lay out the sections of ``spec`` (nothing else is written).

    Runs that differ only in their seed are one row of mean ± std (n). Raises ``StsbenchError`` for a baseline
    that is neither a method nor a group, a target without its group, or a claim naming an unknown group, before
    any figure is drawn. ``out``: the report's folder (an absolute results folder is named relative to the working
    folder, never to ``out``, so that a report's text does not depend on where it is written:
    :mod:`stsbench.results.write`).
    """
    import matplotlib  # its version decides the figures' bytes

    # an absolute results folder named relative to the working folder: the same text whatever --out
    results = tuple(portable(f, ".") for f in coll.folders) if out is not None else coll.folders
    models = find_models(coll)
    # what the recipe calls its runs: the groups' names, in every table
    labels = declared_labels(coll.folders)
    groups = report_groups(coll, models, labels)
    seeded = seeds.has_seeds(groups)
    base = baseline_group(groups, spec.baseline) if seeded else None
    reps = reproduction.reproductions(coll.tasks, groups, spec.against, spec.difference)
    judged = claims_module.judge_claims(spec.claims, coll.tasks, groups, coll.analyses) if spec.claims else []
    figs = Figures(Path(figures_dir), figures_prefix)
    named = compared_with(coll, reps)
    sections = [
        _scores(coll, models, "sts", results, named, labels),
        _scores(coll, models, "transfer", results, named, labels),
        *([_reproduction(reps, spec.difference)] if spec.against else []),
        *([_claims(judged)] if spec.claims else []),
        *([_seeds(coll, groups, base, spec.baseline, figs)] if seeded else []),
        *[_analysis(coll, models, groups, a, results, figs) for a in all_analyses()],
        *training_sections(
            coll, models, groups, results, figs, report_cells(coll.folders, reps), spec.align_point
        ),
        _provenance(coll, models, spec.checkout),
    ]
    if spec.figures:  # each paper figure under its number and caption, after the claims (or the scores)
        verdicts = [
            (c.paper_figure, r.text or r.kind, r.verdict + (f" ({r.qualifier})" if r.qualifier else ""))
            for c, r in zip(spec.claims, judged, strict=True)
        ]
        at = next(i for i, s in enumerate(sections) if s.key in ("seeds", "length_bias"))
        sections[at:at] = _paper_figures(spec.figures, sections, verdicts)
    sections = absent_last(sections)
    skipped = Section("skipped", "Skipped files")
    skipped.paragraphs = [code_span(w) for w in coll.warnings] or [
        f"None: every file under {under(results)} was read."
    ]
    sections.append(skipped)
    intro = [
        f"Made by `{spec.command}` from {plural(len(coll.tasks), 'task result')}, "
        f"{plural(len(coll.analyses), 'analysis result')} and {plural(len(coll.runs), 'training run')} under "
        f"{under(results)}; {plural(len(models), 'model')}. Figures drawn with "
        f"matplotlib {matplotlib.__version__}"
        + (f" and seaborn {seeds.seaborn_module().__version__}" if seeded else "")
        + ": the same results and version give the same bytes."
    ]
    intro += [f"**{n}**" for n in spec.notes]
    # what it found, first, each linked to its section; the scale of its words in one line
    intro[0:0] = [*verdict_summary(reps, judged, sections), LEGEND]
    if spec.banner:  # once, first under the title; each figure's image carries it too (render.stamped)
        intro.insert(0, f"**{spec.banner}**")
    once(sections)
    modified = [r for r in [*coll.tasks, *coll.analyses] if _modified(r)]
    if modified:  # at the top: a figure on other data must never pass for the canonical one
        files = [f for r in modified for f in _modified(r)]
        intro.append(
            f"**{MARK} {plural(len(modified), 'result')} {modified_text(files)}** (marked {MARK} in the "
            "score tables, noted in the analysis sections); they are not comparable with published figures."
        )
    return Report(spec.title, intro, sections, list(coll.warnings), figs.written, reps, judged)
