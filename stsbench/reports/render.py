"""Assemble the report from a :class:`~stsbench.reports.collect.Collection` and render it as Markdown and HTML.

:func:`build_report` lays out the sections (paragraphs, tables and figures; the training runs' curves,
trajectories, Ablations and sweep figures among them), draws the figures into ``figures_dir`` and returns a
:class:`Report` that the templates only loop over. A section whose results are missing keeps its title and says,
in one line, which command makes them.

:func:`write_report` renders it as ``report.md`` and a self-contained ``report.html``. The templates
(``templates/*.j2``) only loop; every string they print is made here or in the table and section builders.
``report.md`` links the figures' SVG files beside it; ``report.html`` inlines them as base64 PNG, so it reads
offline on its own. No timestamp is written: the same results give the same bytes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from markupsafe import Markup

from stsbench.analyses.figures import stamped
from stsbench.analyses.registry import Analysis, all_analyses, short_name
from stsbench.data.integrity import MARK, modified_text
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_json, atomic_write_text
from stsbench.progress import plural
from stsbench.published.check import result_modes
from stsbench.published.registry import STS_TASKS
from stsbench.reports import ablations, paper_figures, provenance, reproduction, seeds, training
from stsbench.reports.collect import (
    ABSENT,
    AnalysisRecord,
    Collection,
    Figures,
    Model,
    Section,
    TaskRecord,
    absent_last,
    by_variant,
    collect,
    find_models,
    missing,
    only,
    under,
)
from stsbench.reports.reproduction import Cells, Reproduction, Target, report_cells, reproduction_json
from stsbench.reports.scores import per_seed_table, score_table
from stsbench.reports.seeds import (
    BASELINE,
    DEV_COLUMNS,
    SeedGroup,
    baseline_group,
    declared_labels,
    dev_curves_from_csv,
    dev_points,
    has_seeds,
    report_groups,
)
from stsbench.results.runs import read_recipe_runs, report_banner
from stsbench.results.write import Checkout, portable
from stsbench.stats.claims import Claim, ClaimResult
from stsbench.stats.decide import CELL_DELTA, DELTA, legend, signed
from stsbench.tabular import to_html, to_markdown

# -- the report assembled ------------------------------------------------------------------------------------


def compared_with(coll: Collection, reps: Sequence[Reproduction]) -> dict[str, list[str]] | None:
    """What each group's scores are set beside: what its recipe (``recipe_runs.json``) and ``--against`` name.

    By seeds' folder (a model not trained here: its group's name), :func:`report_cells`. None for results with
    neither: the score tables then match a model's own rows by name, and say so.
    """
    return report_cells(coll.folders, reps) if reps or read_recipe_runs(coll.folders) else None


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
        word = reproduction.verdict_words(r)
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
                section.shown_before.append(fig)
            else:
                first[fig.svg] = section
                kept.append(fig)
        section.figures = kept


def code_span(text: str) -> str:
    """``text`` as a Markdown code span whatever backticks it holds (CommonMark: a fence longer than any run)."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _modified(record: TaskRecord | AnalysisRecord) -> dict[str, str]:
    """The data files a task or analysis record's figures were computed on that differ from the canonical."""
    prov = record.result.provenance if isinstance(record, TaskRecord) else record.provenance
    return prov.data_modified or {}


def _reproduction(reps: list[Reproduction], difference: float) -> Section:
    """The published rows named by ``--against``, each beside its group, a verdict per cell."""
    tables = [reproduction.summary_table(reps), *map(reproduction.reproduction_table, reps)]
    return Section("reproduction", "Reproduction", [reproduction.rule(difference)], tables)


def _claims(judged: list[ClaimResult]) -> Section:
    """The table's claims, each judged over the seeds of the groups it names (``--claims``)."""
    paragraph = (
        "Each claim of the table, judged on the groups' figures seed by seed by the rule of docs/uncertainty.md "
        "(One rule): what the seeds here say of it, whatever the paper's verdict."
    )
    tables = [reproduction.claims_table(judged), reproduction.statements_table(judged)]
    return Section("claims", "Claims", [paragraph], tables)


@dataclass
class Report:
    """Everything report.md and report.html show."""

    title: str
    paragraphs: list[str]
    sections: list[Section]
    warnings: list[str]
    figures: list[Path]  # files written
    reproduction: list[Reproduction] = field(default_factory=list)  # the --against rows' verdicts
    claims: list[ClaimResult] = field(default_factory=list)  # the --claims verdicts


@dataclass(frozen=True)
class ReportSpec:
    """What a report is asked for beside its results: its title and command, what it judges and what it shows.

    ``baseline``: the group of seeds (a method, e.g. ``unsup-SimCSE``) the others are compared with; ``against``:
    the published rows to reproduce (a Reproduction section, only when given), judged with ``difference``, the
    difference that matters (:func:`stsbench.published.check.verdict`); ``notes``: lines set in bold after
    the opening paragraph (what the reader must know first, e.g. results computed by other code than the rest);
    ``claims``: a table's claims, judged on the groups of seeds (a Claims section); ``banner``: a line set first
    under every table and in every figure's title (a mini edition's backbone, steps and corpus: "not the paper's
    setting"), and in bold at the top; ``figures``: the papers' figures the results regenerate, each a section;
    ``align_point``: MoCoSE Figure 4's fixed point (l_align, l_uniform); ``checkout``: the stsbench checkout
    making the report, whose files differing from its commit the Provenance section names (None: nothing said);
    ``until``: the claims are judged by the sequential plan of at most that many seeds, each statement at its look;
    ``refine``: the plan went on until each statement's size was shown or out of reach.
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
    align_point: tuple[float, float] = ablations.POINT
    checkout: Checkout | None = None
    until: int | None = None  # the seeds were added by the sequential plan of at most this many
    refine: bool = False
    carried: str | None = None  # the Provenance section's line naming the steps carried to this code


# -- the sections, built from the results -----------------------------------------------------------------


@dataclass
class Sections:
    """What every section is built from: the results, their models and groups of seeds, what is asked.

    ``results``: the folders the text names; ``figs``: the figures drawn so far; ``labels``: what the recipe
    calls its runs (:func:`~stsbench.reports.seeds.declared_labels`), the groups' names in every table.
    """

    coll: Collection
    models: list[Model]
    groups: list[SeedGroup]
    labels: dict[str, str]
    results: Sequence[str]
    figs: Figures
    spec: ReportSpec

    def scores(self, kind: str, named: dict[str, list[str]] | None) -> Section:
        """The STS or transfer table (``named``: what each group is set beside, :func:`report_cells`)."""
        title = "STS tasks" if kind == "sts" else "Transfer tasks"
        t = score_table(self.coll.tasks, self.models, kind, named, self.labels)
        return Section(kind, title, tables=[t]) if t else Section(kind, title, [missing(kind, self.results)])

    def training(self, cells: Cells) -> list[Section]:
        """The training curves and the Ablations (``cells``: the runs' published cells, beside a sweep's)."""
        coll, models, groups, figs = self.coll, self.models, self.groups, self.figs
        if not coll.runs:
            return [
                Section("training", "Training curves", [missing("training", self.results)]),
                Section("ablations", "Ablations", [missing("ablations", self.results)]),
            ]
        curves = Section("training", "Training curves", tables=[training.training_table(coll.runs, models)])
        labels = training.labelled_runs(coll.runs, models)
        by_path = {r.path: label for label, r in labels.items()}
        if has_seeds(groups):
            data = figs.csv("dev_curves_seeds", DEV_COLUMNS, dev_points(groups, coll.runs, by_path))
            figure = dev_curves_from_csv(data, figs.folder / "dev_curves_seeds")
            caption = f"STS-B dev Spearman during training, mean over seeds (data: `{data.name}`)"
            curves.figures.append(figs.add(caption, figure, "dev-curves"))
            curves.paragraphs.append(
                "A group of seeds is drawn as the mean of its seeds' STS-B dev Spearman at each evaluation "
                "step, the band the 95% t-interval of that mean (n seeds, as the tables' intervals); a run "
                "without seeds as its own line."
            )
        else:
            figure = training.training_curves_figure(labels, figs.folder / "training_curves")
            curves.figures.append(figs.add("STS-B dev Spearman during training", figure, "dev-curves"))
        self.trajectories(curves, by_path)
        # the recipe's sweeps and grids (none: found from the settings)
        declared = read_recipe_runs(coll.folders)
        found = ablations.ablation_tables(coll.runs, models, coll.tasks, groups, cells, declared)
        abl = Section("ablations", "Ablations", tables=found)
        if not found and declared:  # the recipe says what its sweeps are: none, and no component pair
            abl.paragraphs.append(
                f"{ABSENT}no sweep or grid declared by the recipe (`recipe_runs.json` under "
                f"{under(self.results, 'or')}: a run's `sweep:` or `grid:`), no pair of its runs that differ "
                "in ESimCSE's components and no run held against a published cell."
            )
        elif not found:
            abl.paragraphs.append(missing("ablations", self.results))
        if has_seeds(groups):
            self.sweep_figures(abl, cells, declared)
        return [curves, abl]

    def trajectories(self, section: Section, labels: dict[str, str]) -> None:
        """SimCSE Figure 2: (l_uniform, l_align) at each dev evaluation the runs logged, from a CSV."""
        rows = paper_figures.trajectory_rows(self.groups, self.coll.runs, labels)
        if not rows:
            return
        data = self.figs.csv("align_uniform_trajectories", paper_figures.TRAJECTORY_COLUMNS, rows)
        caption = (
            "Alignment and uniformity of the STS-B dev embeddings at each dev evaluation, as SimCSE Figure 2 "
            f"(logged by the trainer; data: `{data.name}`)"
        )
        figure = paper_figures.draw_trajectories(data)
        section.figures.append(self.figs.drawn(figure, data.stem, caption, "trajectory"))
        section.paragraphs.append(
            "The trajectories are the trainer's own: at each dev evaluation it measures l_align (pairs with "
            "gold > 4) and l_uniform (the unique sentences) on the STS-B dev embeddings it has just encoded, "
            "the numbers `stsbench align-uniform --split dev` gives for the checkpoint of that step. A group of "
            "seeds is drawn as its mean point at each step, each seed's path faint behind it."
        )

    def sweep_figures(self, section: Section, cells: Cells, declared: ablations.Declared) -> None:
        """Each sweep and grid over seeds drawn against its setting, from the CSV written beside the figure.

        ``declared``: the recipe's runs, whose sweeps and grids these are (none: those the settings show).
        """
        figs = self.figs
        grids, sweeps = ablations.seed_sweeps(self.groups, declared)
        drawn = [(f"sweep_{name}_{k}", name, "", gs) for k, (name, gs) in sweeps]
        drawn += [(f"grid_{a}_{b}_{k}", a, b, gs) for k, (a, b, gs) in grids]
        for stem, name, series, gs in drawn:
            axes = (name, series) if series else (name,)
            rows = ablations.sweep_rows(name, gs, self.coll.tasks, series or None, cells)
            data = figs.csv(stem, ablations.COLUMNS, rows)
            method = gs[0].method or gs[0].name
            words = training.option_words(name)
            per = f", a line per {training.option_words(series)}" if series else ""
            title = f"{method}: against {words}{per}"
            if ablations.varies_in_distance(rows):  # MoCoSE Figures 2, 3, 12: against the distance it sets
                what = f"{method}: against the maximum traceable distance each {words} sets"
                figure = ablations.draw_sweep(data, name, series, what, x="traceable_distance")
                caption = f"{what}, each seed, the mean and its 95% interval (data: `{data.name}`)"
                section.figures.append(figs.drawn(figure, f"{stem}_distance", caption, "distance", "", axes))
                self.align_distance(name, gs, stem, section)
            figure = ablations.draw_sweep(data, name, series, title)
            caption = f"{title}, each seed, the mean and its 95% interval (data: `{data.name}`)"
            section.figures.append(figs.drawn(figure, stem, caption, "grid" if series else "sweep", "", axes))

    def align_distance(self, name: str, groups: list[SeedGroup], stem: str, section: Section) -> None:
        """MoCoSE Figure 4: the sweep's (l_align, l_uniform) distance to a point against its traceable distance."""
        point = self.spec.align_point
        records = self.coll.analyses_of("align_uniform")
        variants = sorted({r.variant for r in records})
        if not variants:
            return
        ours = [r for r in records if r.variant == variants[0]]
        rows = ablations.distance_rows(name, groups, ours, point)
        if not rows:
            return
        data = self.figs.csv(f"{stem}_align_distance", ablations.ALIGN_COLUMNS, rows)
        method = groups[0].method or groups[0].name
        title = f"{method}: {variants[0]} against the traceable distance each {name} sets"
        figure = ablations.draw_distance(data, point, title)
        caption = (
            f"{title}: distance to ({point[0]:g}, {point[1]:g}), as MoCoSE Figure 4 (data: `{data.name}`)"
        )
        section.figures.append(
            self.figs.drawn(figure, data.stem, caption, "align-distance", "align_uniform", (name,))
        )

    def analysis(self, analysis: Analysis) -> Section:
        """An analysis' tables and figures: each checkpoint's in the paper's layout, each group's over seeds."""
        figs, name, title = self.figs, analysis.name, analysis.title
        records = self.coll.analyses_of(name)
        if not records:
            return Section(name, title, [missing(name, self.results)])
        section = Section(name, title)
        modified = [r for r in records if _modified(r)]
        if modified:
            who = ", ".join(sorted({f"`{r.model.name}`" for r in modified}))
            files = modified_text(f for r in modified for f in _modified(r))
            section.paragraphs.append(f"{MARK} The results of {who} were {files}.")
        for variant in sorted({r.variant for r in records}):
            ours = [r for r in records if r.variant == variant]
            found = seeds.seeded(ours, self.groups, analysis) if analysis.number_builder is not None else []
            in_groups = {m.key for f in found for m in f.group.models}
            single = [r for r in ours if r.model.fingerprint not in in_groups]
            singles = by_variant(single, self.models)
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
                self.spectra(found, singles.get(variant, {}), variant, section)
            if name == "align_uniform":
                self.align_map(ours, variant, section)
        return section

    def spectra(
        self, found: list[seeds.SeededResults], singles: dict[str, object], variant: str, section: Section
    ) -> None:
        """MoCoSE Figure 7 over seeds: each group's mean spectrum and its seeds' spread, the backbone too."""
        data = paper_figures.write_spectrum_rows(
            paper_figures.spectrum_rows(found, singles), self.figs.folder / f"{variant}_groups.csv"
        )
        self.figs.written.append(data)
        caption = (
            f"Singular values ({variant}) of each group over its seeds, checkpoints without seeds beside, as "
            f"MoCoSE Figure 7 (data: `{data.name}`)"
        )
        figure = paper_figures.draw_spectra(data, variant)
        section.figures.append(self.figs.drawn(figure, data.stem, caption, "analysis-groups", "spectrum"))

    def align_map(self, records: list[AnalysisRecord], variant: str, section: Section) -> None:
        """SimCSE Figure 3's map of the checkpoints with an STS Avg., from the CSV written beside it."""
        rows = paper_figures.map_rows(records, self.coll.tasks, self.groups)
        if not rows:
            return
        data = self.figs.csv(f"{variant}_map", paper_figures.MAP_COLUMNS, rows)
        figure = paper_figures.draw_map(data, f"{variant}: coloured by STS Avg.")
        caption = (
            f"Alignment and uniformity ({variant}) coloured by STS Avg., as SimCSE Figure 3 "
            f"(data: `{data.name}`)"
        )
        section.figures.append(self.figs.drawn(figure, data.stem, caption, "align-map", "align_uniform"))

    def seeds(self, base: SeedGroup | None) -> Section:
        """Differences to the baseline group over seeds, each seed's figures and their spread."""
        coll, groups, figs = self.coll, self.groups, self.figs
        section = Section("seeds", "Seeds")
        section.paragraphs.append(
            "Runs whose training configs are equal but for the seed form one group (n: how many seeds). "
            "Seeds move a figure as much as a method can; a difference to the baseline counts here only where "
            "its 95% interval over the seeds (paired on shared seeds, on unrounded figures) lies entirely beyond "
            f"the difference that matters and Holm over the tasks agrees (marked {seeds.SIGNIFICANT}; "
            "docs/uncertainty.md, One rule)."
        )
        if base is None:
            section.paragraphs.append(
                f"No differences: no group of seeds of `{self.spec.baseline}` (`--baseline`) here."
            )
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
            caption = "STS test: each seed, the mean and its 95% interval"
            section.figures.append(figs.add(caption, figure, "seed-points"))
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

    def provenance(self) -> Section:
        """Where the numbers come from: models, commands, training runs, data files, versions."""
        coll = self.coll
        when = provenance.created_range(coll)
        section = Section("provenance", "Provenance")
        if when:
            section.paragraphs.append(f"Results created {when} (UTC, from each file's provenance).")
        section.paragraphs += provenance.code_lines(self.spec.checkout, coll)  # none where the code is clean
        section.paragraphs += [self.spec.carried] if self.spec.carried else []
        if self.models:
            section.tables += [provenance.models_table(self.models, coll), provenance.commands_table(coll)]
        if coll.runs:
            section.tables.append(provenance.training_provenance_table(coll.runs))
        if coll.tasks or coll.analyses:
            section.tables += [provenance.data_table(coll), provenance.versions_table(coll)]
        return section


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
    reps = reproduction.reproductions(coll.tasks, groups, spec.against, spec.difference, spec.until)
    judged = reproduction.judge_claims(
        spec.claims, coll.tasks, groups, coll.analyses, until=spec.until, refine=spec.refine
    )
    figs = Figures(Path(figures_dir), figures_prefix)
    named = compared_with(coll, reps)
    build = Sections(coll, models, groups, labels, results, figs, spec)
    sections = [
        build.scores("sts", named),
        build.scores("transfer", named),
        *([_reproduction(reps, spec.difference)] if spec.against else []),
        *([_claims(judged)] if spec.claims else []),
        *([build.seeds(base)] if seeded else []),
        *[build.analysis(a) for a in all_analyses()],
        *build.training(named or {}),
        build.provenance(),
    ]
    if spec.figures:  # each paper figure under its number and caption, after the claims (or the scores)
        verdicts = [
            (c.paper_figure, r.text or r.kind, reproduction.verdict_words(r))
            for c, r in zip(spec.claims, judged, strict=True)
        ]
        at = next(i for i, s in enumerate(sections) if s.key in ("seeds", "length_bias"))
        sections[at:at] = paper_figures.figure_sections(spec.figures, sections, verdicts)
    sections = absent_last(sections)
    skipped = [code_span(w) for w in coll.warnings] or [f"None: every file under {under(results)} was read."]
    sections.append(Section("skipped", "Skipped files", skipped))
    intro = [
        f"Made by `{spec.command}` from {plural(len(coll.tasks), 'task result')}, "
        f"{plural(len(coll.analyses), 'analysis result')} and {plural(len(coll.runs), 'training run')} under "
        f"{under(results)}; {plural(len(models), 'model')}. Figures drawn with "
        f"matplotlib {matplotlib.__version__}"
        + (f" and seaborn {seeds.seaborn_module().__version__}" if seeded else "")
        + ": the same results and version give the same bytes."
    ]
    intro += [f"**{n}**" for n in spec.notes]
    if spec.until is not None:  # the seeds' number was decided by the plan: the fixed-n 95% no longer holds
        trained = [g.n for g in groups if g.runs]
        fixed = spec.until * len(trained)
        intro.append(
            f"**Seeds added by the sequential plan (at most {spec.until}; docs/uncertainty.md, Seeds until the "
            f"verdict is decided{', until each size is shown' if spec.refine else ''}): each claim's statement "
            "and each published cell of one run is judged at the "
            f"look it stopped at, as its note says; {plural(sum(trained), 'training')} against {fixed} at a fixed "
            f"{spec.until} seeds a run ({fixed - sum(trained)} saved). Every other interval in this report is "
            "descriptive, its 95% not that of a fixed number of seeds.**"
        )
        for section in sections:  # said beside each of them too (not the verdicts: their looks' intervals)
            if section.key not in ("claims", "reproduction"):
                section.tables = [replace(t, notes=(*t.notes, STOPPED)) for t in section.tables]
    # what it found, first, each linked to its section; the scale of its words in one line
    intro[0:0] = [*verdict_summary(reps, judged, sections), legend(spec.until is not None)]
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


FIGURES = "figures"
REPRODUCTION_JSON = "reproduction.json"
STOPPED = (
    "The seeds were stopped by the sequential plan: a 95% interval here is descriptive (docs/uncertainty.md)."
)
_CODE = re.compile(r"`([^`]+)`")


def render(report: Report, name: str) -> str:
    """``report`` through ``templates/<name>.j2``; the templates only loop, and format with the filters.

    ``report.md``: GitHub Markdown, figures linked relatively; ``report.html``: one file with the figures
    inlined (base64 PNG) and its CSS in a ``<style>``. Filters: ``inline``, a paragraph or note as HTML
    (:func:`inline_html`); ``markdown`` and ``html``: a table.
    """
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("stsbench.reports", "templates"),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=lambda name: bool(name and name.endswith(".html.j2")),
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(inline=inline_html, markdown=to_markdown, html=lambda table: Markup(to_html(table)))
    return env.get_template(f"{name}.j2").render(report=report)


_LINK = re.compile(r"\[([^\]]+)\]\((#[\w-]+)\)")  # a link to a section of the report
_BOLD = re.compile(r"\*\*([^*]+)\*\*")


def inline_html(text: str) -> Any:
    """Escape ``text``; its `code` spans, **bold** and links to the report's sections as HTML the template keeps."""
    out = _CODE.sub(lambda m: f"<code>{m.group(1)}</code>", html.escape(text, quote=False))
    out = _LINK.sub(lambda m: f'<a href="{m.group(2)}">{m.group(1)}</a>', out)
    return Markup(_BOLD.sub(lambda m: f"<strong>{m.group(1)}</strong>", out))


@dataclass
class ReportFiles:
    """What :func:`write_report` wrote, and the files it skipped."""

    markdown: Path
    html: Path
    figures: list[Path]
    warnings: list[str]
    report: Report
    reproduction: Path | None = None  # reproduction.json, when published rows were compared


def write_report(
    results: str | Path | Sequence[str | Path],
    out: str | Path,
    title: str | None = None,
    command: str | None = None,
    baseline: str = BASELINE,
    against: Sequence[Target] = (),
    difference: float = CELL_DELTA,
    strict: bool = False,
    notes: Sequence[str] = (),
    claims: Sequence[Claim] = (),
    banner: str | None = None,
    figures: Sequence[str] = (),
    align_point: tuple[float, float] | None = None,
    runs: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    checkout: Checkout | None = None,
    until: int | None = None,
    refine: bool = False,
    carried: str | None = None,
) -> ReportFiles:
    """Collect ``results`` (a folder, or several merged), write ``out/report.md``, ``report.html``, ``figures/*``.

    Figures of an earlier report in ``out/figures`` that this one does not draw are removed, so the folder
    holds exactly what the report links. ``baseline``: the method (or group) the groups of seeds are
    compared with. ``against``: published rows to reproduce; their verdicts (``difference``: the difference
    that matters) are the Reproduction section and ``out/reproduction.json`` (an earlier one is removed when
    none is given). Results folders holding nothing to report are an error, before anything is written
    (``strict`` is the command's: a file that cannot be read then gives exit 1). ``notes``: lines in bold
    under the opening paragraph. ``claims``: a table's claims
    (:mod:`stsbench.stats.claims`), judged on the groups of seeds in a Claims section and in ``reproduction.json``.
    ``banner``: a line set on every table and figure (a mini edition's "not the paper's setting"). ``figures``:
    the papers' figures the results regenerate (:mod:`stsbench.published.figures` keys), each a section.
    ``align_point``: MoCoSE Figure 4's fixed point (l_align, l_uniform), default (0, -4). ``command``: the
    command line the report says it was made by, quoted as typed (its paths as given: an absolute ``--out`` stays
    absolute). ``checkout``: the stsbench checkout making the report (:func:`stsbench.results.write.checkout`);
    where its package files differ from its commit, the Provenance section names them (None: nothing said, as
    for a clean one). ``until``: the seeds were added by the sequential plan of at most that many
    (:mod:`stsbench.stats.sequential`); the claims are judged by it and ``reproduction.json`` records it;
    ``refine``: it went on until each statement's size was shown or out of reach.
    """
    out = Path(out)
    coll = only(collect(results), runs, seeds)  # a subset's report shows that subset, every table and figure
    if coll.empty:  # a report of empty sections says nothing: refused before anything is written
        raise StsbenchError(
            f"nothing to report under {', '.join(coll.folders)}: no task results, analyses or training runs; "
            "give the --results folder that `stsbench run`, the analyses or `stsbench train` wrote"
        )
    folders = [results] if isinstance(results, (str, Path)) else list(results)
    # the scale the results were made at is theirs: kept however the report is made
    banner = report_banner(coll.folders, banner)
    given = " ".join(f"--results {f}" for f in folders)
    # quoted as typed: a path made relative to the working folder read as written elsewhere ("--out ../runs/x")
    command = command or f"stsbench report {given} --out {out}"
    name = title or f"stsbench report: {out.resolve().name}"
    with stamped(banner):  # every image carries the banner itself
        spec = ReportSpec(
            name,
            command,
            baseline,
            tuple(against),
            difference,
            tuple(notes),
            tuple(claims),
            banner,
            tuple(figures),
            **({"align_point": align_point} if align_point is not None else {}),
            checkout=checkout,
            carried=carried,
            until=until,
            refine=refine,
        )
        report = build_report(coll, spec, out / FIGURES, out=out)
    kept = {p.resolve() for p in report.figures}
    for stale in sorted((out / FIGURES).glob("*")):
        if stale.suffix in (".png", ".svg", ".csv") and stale.resolve() not in kept:
            stale.unlink()
    md = atomic_write_text(out / "report.md", render(report, "report.md"))
    page = atomic_write_text(out / "report.html", render(report, "report.html"))
    verdicts = out / REPRODUCTION_JSON
    judged = bool(against or claims)
    if judged:
        atomic_write_json(
            verdicts, reproduction_json(report.reproduction, difference, report.claims, until, refine)
        )
    elif verdicts.is_file():  # an earlier report's verdicts, not this one's
        verdicts.unlink()
    return ReportFiles(md, page, report.figures, report.warnings, report, verdicts if judged else None)
