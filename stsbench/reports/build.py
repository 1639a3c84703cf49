"""Assemble the report: sections of paragraphs, tables and figures, from a :class:`Collection`.

:func:`build_report` draws the figures into ``figures_dir`` and returns a :class:`Report` that the
templates only loop over. A section whose results are missing keeps its title and says, in one line,
which command makes them.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from stsbench.analyses.common import short_name
from stsbench.analyses.registry import Analysis, all_analyses, find_analysis
from stsbench.data.integrity import MARK, modified_text
from stsbench.progress import plural
from stsbench.published.seed_check import DIFFERENCE
from stsbench.reports import (
    ablations,
    align_distance,
    align_map,
    analysis_seeds,
    paper_figures,
    provenance,
    reproduction,
    seed_differences,
    spectra,
    spread,
    sweep_figures,
    training,
    trajectories,
)
from stsbench.reports import claims as claims_module
from stsbench.reports.collect import AnalysisRecord, Collection, TaskRecord
from stsbench.reports.figures import training_curves_figure, write_csv
from stsbench.reports.models import Model, by_variant, find_models
from stsbench.reports.reproduction import Reproduction, Target
from stsbench.reports.scores import per_seed_table, score_table
from stsbench.reports.seeds import (
    BASELINE,
    DEV_COLUMNS,
    SIGNIFICANT,
    SeedGroup,
    baseline_group,
    dev_points,
    has_seeds,
    report_groups,
    seed_points,
)
from stsbench.results.portable import portable
from stsbench.stats.claims import Claim, ClaimResult
from stsbench.stats.decide import DELTA
from stsbench.tabular import Table

# what makes the results of each section (RESULTS: the folder given to `stsbench report --results`); an
# analysis' section says it with its registry entry's ``make`` and ``describe``
MAKE = {
    "sts": "stsbench run --model MODEL --tasks sts --output RESULTS",
    "transfer": "stsbench run --model MODEL --tasks transfer --output RESULTS",
    "training": "stsbench train --config configs/simcse-minilm-cpu.yaml --output RESULTS/train/NAME",
    "ablations": "stsbench train --config configs/esimcse-minilm-cpu.yaml --queue-multiple 0 --output RESULTS/train/NAME",
}


@dataclass
class FigureOut:
    """A figure as the report shows it: SVG beside report.md, PNG inlined in report.html."""

    title: str
    svg: str  # path relative to the report folder
    png_base64: str


@dataclass
class Section:
    """One ``##`` section."""

    key: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[FigureOut] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        """GitHub's heading anchor for the title."""
        return anchor(self.title)


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


def anchor(title: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


DESCRIBE = {
    "sts": "STS results",
    "transfer": "transfer results",
    "training": "training runs (train_log.jsonl)",
    "ablations": "pair of training runs that differ in one setting or in ESimCSE's components",
}


def matplotlib_version() -> str:
    """Return the matplotlib version that draws the figures (it decides their bytes)."""
    import matplotlib

    return matplotlib.__version__


def seaborn_version() -> str:
    """Return the seaborn version that draws the figures of seeds."""
    import seaborn

    return seaborn.__version__


def under(folders: str | Sequence[str], joiner: str = "and") -> str:
    """The results folders as the report names them: `results`, `results` and `runs`, `a`, `b` and `c`."""
    names = [f"`{f}`" for f in ([folders] if isinstance(folders, str) else folders)]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} {joiner} {names[-1]}"


def missing(key: str, results: str | Sequence[str]) -> str:
    """The line a section without results shows: what is missing and the command that makes it.

    ``results``: the folder (or folders) given to ``--results``; the command writes into the first.
    """
    analysis = find_analysis(key)
    make, describe = (analysis.make, analysis.describe) if analysis else (MAKE[key], DESCRIBE[key])
    first = results if isinstance(results, str) else results[0]
    command = make.replace("RESULTS", first.rstrip("/") or ".")
    return f"{ABSENT}no {describe} under {under(results, 'or')}. Make them with `{command}`."


ABSENT = "Not in this report: "  # a section of nothing but this line is listed at the end, not shown


def _absent_last(sections: list[Section]) -> list[Section]:
    """Sections with nothing in them left out, each named in one closing "Not in this report" section."""
    empty = [
        s
        for s in sections
        if not s.tables and not s.figures and [p[: len(ABSENT)] for p in s.paragraphs] == [ABSENT]
    ]
    if not empty:
        return sections
    shown = [s for s in sections if all(s is not e for e in empty)]
    lines = [f"{s.title}: {s.paragraphs[0][len(ABSENT) :]}" for s in empty]
    return [*shown, Section("absent", "Not in this report", lines)]


class _Figures:
    """Write figures under ``folder`` and remember them for the report."""

    def __init__(self, folder: Path, prefix: str) -> None:
        self.folder, self.prefix, self.written = folder, prefix, []

    def add(self, title: str, paths: list[Path]) -> FigureOut:
        self.written += paths
        svg = next(p for p in paths if p.suffix == ".svg")
        png = next(p for p in paths if p.suffix == ".png")
        return FigureOut(
            title, f"{self.prefix}/{svg.name}", base64.b64encode(png.read_bytes()).decode("ascii")
        )


def _scores(coll: Collection, models: list[Model], kind: str, results: Sequence[str]) -> Section:
    title = "STS tasks" if kind == "sts" else "Transfer tasks"
    t = score_table(coll.tasks, models, kind)
    if t is None:
        return Section(kind, title, [missing(kind, results)])
    return Section(kind, title, tables=[t])


def _analysis(
    coll: Collection,
    models: list[Model],
    groups: list[SeedGroup],
    analysis: Analysis,
    results: Sequence[str],
    figs: _Figures,
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
        found = analysis_seeds.seeded(ours, groups, analysis) if analysis.number_builder is not None else []
        in_groups = {m.key for f in found for m in f.group.models}
        single = [r for r in ours if r.model.fingerprint not in in_groups]
        singles = by_variant(single, models)
        for labelled in singles.values():  # checkpoints without seeds: the paper's layout
            section.tables += analysis.tables(variant, labelled)
            paths = analysis.figure(labelled, figs.folder / variant)
            if paths:
                section.figures.append(figs.add(f"{title} ({variant})", paths))
        if found:  # groups of seeds: mean ± std and the 95% interval of each figure, every seed's value
            section.tables.append(analysis_seeds.seeds_table(analysis, variant, found))
            figs.written.append(
                analysis_seeds.write_seed_values(found, figs.folder / analysis_seeds.csv_name(variant))
            )
            points = analysis_seeds.headline_points(found)
            if points:
                paths = spread.seed_points_figure(points, figs.folder / f"{variant}_seeds")
                caption = f"{title} ({variant}): each seed, the mean and its 95% interval"
                section.figures.append(figs.add(caption, paths))
        if name == "spectrum" and found:
            _spectra(found, singles.get(variant, {}), variant, section, figs)
        if name == "align_uniform":
            _align_map(coll, ours, groups, variant, section, figs)
    return section


def _spectra(
    found: Sequence[analysis_seeds.SeededResults],
    singles: dict[str, object],
    variant: str,
    section: Section,
    figs: _Figures,
) -> None:
    """MoCoSE Figure 7 over seeds: each group's mean spectrum and its seeds' spread, the backbone beside."""
    data = spectra.write_rows(spectra.spectrum_rows(found, singles), figs.folder / f"{variant}_groups.csv")
    figs.written.append(data)
    paths = spectra.spectra_figure(data, figs.folder / f"{variant}_groups", variant)
    caption = (
        f"Singular values ({variant}) of each group over its seeds, checkpoints without seeds beside, as MoCoSE "
        f"Figure 7 (data: `{data.name}`)"
    )
    section.figures.append(figs.add(caption, paths))


def _align_map(
    coll: Collection,
    records: list[AnalysisRecord],
    groups: list[SeedGroup],
    variant: str,
    section: Section,
    figs: _Figures,
) -> None:
    """SimCSE Figure 3's map of the checkpoints with an STS Avg., from the CSV written beside it."""
    rows = align_map.map_rows(records, coll.tasks, groups)
    if not rows:
        return
    data = align_map.write_rows(rows, figs.folder / f"{variant}_map.csv")
    figs.written.append(data)
    paths = align_map.map_figure(data, figs.folder / f"{variant}_map", f"{variant}: coloured by STS Avg.")
    caption = (
        f"Alignment and uniformity ({variant}) coloured by STS Avg., as SimCSE Figure 3 (data: `{data.name}`)"
    )
    section.figures.append(figs.add(caption, paths))


def _modified(record: TaskRecord | AnalysisRecord) -> dict[str, str]:
    """The data files a task or analysis record's figures were computed on that differ from the canonical."""
    prov = record.result.provenance if isinstance(record, TaskRecord) else record.provenance
    return prov.data_modified or {}


def _training(
    coll: Collection,
    models: list[Model],
    groups: list[SeedGroup],
    results: Sequence[str],
    figs: _Figures,
    point: tuple[float, float] = align_distance.POINT,
) -> list[Section]:
    if not coll.runs:
        return [
            Section("training", "Training curves", [missing("training", results)]),
            Section("ablations", "Ablations", [missing("ablations", results)]),
        ]
    curves = Section("training", "Training curves", tables=[training.training_table(coll.runs, models)])
    if has_seeds(groups):
        labels = {r.path: label for label, r in training.labelled_runs(coll.runs, models).items()}
        data = write_csv(
            figs.folder / "dev_curves_seeds.csv", DEV_COLUMNS, dev_points(groups, coll.runs, labels)
        )
        figs.written.append(data)
        figure = spread.dev_curves_from_csv(data, figs.folder / "dev_curves_seeds")
        caption = f"STS-B dev Spearman during training, mean over seeds (data: `{data.name}`)"
        curves.figures.append(figs.add(caption, figure))
        curves.paragraphs.append(
            "A group of seeds is drawn as the mean of its seeds' STS-B dev Spearman at each evaluation step, "
            "the band the 95% t-interval of that mean (n seeds, as the tables' intervals); a run without "
            "seeds as its own line."
        )
    else:
        labels = training.labelled_runs(coll.runs, models)
        figure = training_curves_figure(labels, figs.folder / "training_curves")
        curves.figures.append(figs.add("STS-B dev Spearman during training", figure))
    _trajectories(coll, models, groups, curves, figs)
    found = ablations.ablation_tables(coll.runs, models, coll.tasks, groups)
    abl = Section("ablations", "Ablations", tables=found)
    if not found:
        abl.paragraphs.append(missing("ablations", results))
    if has_seeds(groups):
        _sweep_figures(coll, groups, abl, figs, point)
    return [curves, abl]


def _trajectories(
    coll: Collection, models: list[Model], groups: list[SeedGroup], section: Section, figs: _Figures
) -> None:
    """SimCSE Figure 2: (l_uniform, l_align) at each dev evaluation the runs logged, from a CSV beside it."""
    labels = {r.path: label for label, r in training.labelled_runs(coll.runs, models).items()}
    rows = trajectories.trajectory_rows(groups, coll.runs, labels)
    if not rows:
        return
    data = trajectories.write_rows(rows, figs.folder / "align_uniform_trajectories.csv")
    figs.written.append(data)
    paths = trajectories.trajectory_figure(data, figs.folder / "align_uniform_trajectories")
    caption = (
        "Alignment and uniformity of the STS-B dev embeddings at each dev evaluation, as SimCSE Figure 2 "
        f"(logged by the trainer; data: `{data.name}`)"
    )
    section.figures.append(figs.add(caption, paths))
    section.paragraphs.append(
        "The trajectories are the trainer's own: at each dev evaluation it measures l_align (pairs with gold > 4) "
        "and l_uniform (the unique sentences) on the STS-B dev embeddings it has just encoded, the numbers "
        "`stsbench align-uniform --split dev` gives for the checkpoint of that step. A group of seeds is drawn "
        "as its mean point at each step, each seed's path faint behind it."
    )


def _sweep_figures(
    coll: Collection,
    groups: list[SeedGroup],
    section: Section,
    figs: _Figures,
    point: tuple[float, float] = align_distance.POINT,
) -> None:
    """Each sweep and grid over seeds drawn against its setting, from the CSV written beside the figure."""
    grids, sweeps = ablations.seed_sweeps(groups)
    drawn = [(f"sweep_{name}_{k}", name, "", gs) for k, (name, gs) in sweeps]
    drawn += [(f"grid_{a}_{b}_{k}", a, b, gs) for k, (a, b, gs) in grids]
    for stem, name, series, gs in drawn:
        rows = sweep_figures.sweep_rows(name, gs, coll.tasks, series or None)
        data = sweep_figures.write_rows(rows, figs.folder / f"{stem}.csv")
        figs.written.append(data)
        method = gs[0].method or gs[0].name
        words = ablations.option_words(name)
        title = f"{method}: against {words}" + (f", a line per {ablations.option_words(series)}" if series else "")
        if sweep_figures.varies_in_distance(rows):  # MoCoSE Figures 2, 3, 12: against the distance it sets
            what = f"{method}: against the maximum traceable distance each {words} sets"
            paths = sweep_figures.sweep_figure(
                data, figs.folder / f"{stem}_distance", name, series, what, x="traceable_distance"
            )
            caption = f"{what}, each seed, the mean and its 95% interval (data: `{data.name}`)"
            section.figures.append(figs.add(caption, paths))
            _align_distance(coll, name, gs, stem, section, figs, point)
        paths = sweep_figures.sweep_figure(data, figs.folder / stem, name, series, title)
        section.figures.append(
            figs.add(f"{title}, each seed, the mean and its 95% interval (data: `{data.name}`)", paths)
        )


def _seeds(
    coll: Collection, groups: list[SeedGroup], base: SeedGroup | None, baseline: str, figs: _Figures
) -> Section:
    """Differences to the baseline group over seeds, each seed's figures and their spread."""
    section = Section("seeds", "Seeds")
    section.paragraphs.append(
        "Runs whose training configs are equal but for the seed form one group (n: how many seeds). Seeds "
        "move a figure as much as a method can; a difference to the baseline counts here only where its 95% "
        "interval over the seeds (paired on shared seeds, on unrounded figures) lies entirely beyond the "
        f"difference that matters (marked {SIGNIFICANT}; docs/uncertainty.md, One rule)."
    )
    if base is None:
        section.paragraphs.append(f"No differences: no group of seeds of `{baseline}` (`--baseline`) here.")
    forest = []
    for kind in ("sts", "transfer"):
        diffs = seed_differences.seed_differences(coll.tasks, groups, base, kind) if base else []
        table = seed_differences.difference_table(diffs, base, kind) if base else None
        section.tables += [t for t in (table, per_seed_table(coll.tasks, groups, kind)) if t]
        forest += [
            (
                f"{d.group.name}: {short_name(task)}",
                c[0].diff,
                c[0].low,
                c[0].high,
                seed_differences.significant(c),
            )
            for d in diffs
            if kind == "sts" and d.mode in ("test", "fasttest")
            for task, c in d.cells.items()
            if c is not None
        ]
    points = seed_points(coll.tasks, groups, "sts")
    if points:
        figure = spread.seed_points_figure(points, figs.folder / "sts_seeds")
        section.figures.append(figs.add("STS test: each seed, the mean and its 95% interval", figure))
    if forest:
        figure = spread.forest_plot(
            forest,
            figs.folder / "sts_seed_differences",
            "difference (Spearman x100)",
            f"beyond ±{DELTA:g}, the difference that matters",
        )
        title = f"STS test: difference to {base.name} over seeds, 95% intervals" if base else ""
        section.figures.append(figs.add(title, figure))
    return section


def _align_distance(
    coll: Collection,
    name: str,
    groups: list[SeedGroup],
    stem: str,
    section: Section,
    figs: _Figures,
    point: tuple[float, float],
) -> None:
    """MoCoSE Figure 4: the sweep's (l_align, l_uniform) distance to ``point`` against its traceable distance."""
    records = coll.analyses_of("align_uniform")
    variants = sorted({r.variant for r in records})
    if not variants:
        return
    ours = [r for r in records if r.variant == variants[0]]
    rows = align_distance.distance_rows(name, groups, ours, point)
    if not rows:
        return
    data = align_distance.write_rows(rows, figs.folder / f"{stem}_align_distance.csv")
    figs.written.append(data)
    title = (
        f"{groups[0].method or groups[0].name}: {variants[0]} against the traceable distance each {name} sets"
    )
    paths = align_distance.distance_figure(data, figs.folder / f"{stem}_align_distance", point, title)
    caption = f"{title}: distance to ({point[0]:g}, {point[1]:g}), as MoCoSE Figure 4 (data: `{data.name}`)"
    section.figures.append(figs.add(caption, paths))


def _paper_figures(
    keys: Sequence[str], sections: Sequence[Section], verdicts: Sequence[tuple[str | None, str, str]]
) -> list[Section]:
    """A section per paper figure: number, caption, claim and verdict, and the report's figures that draw it."""
    from stsbench.published.figures import PAPER_NAMES

    drawn = [
        paper_figures.Drawn(f.title, f.svg.rsplit("/", 1)[-1], f)
        for section in sections
        for f in section.figures
    ]
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


def _provenance(coll: Collection, models: list[Model]) -> Section:
    when = provenance.created_range(coll)
    section = Section("provenance", "Provenance")
    if when:
        section.paragraphs.append(f"Results created {when} (UTC, from each file's provenance).")
    if models:
        section.tables += [provenance.models_table(models, coll), provenance.commands_table(coll)]
    if coll.runs:
        section.tables.append(provenance.training_provenance_table(coll.runs))
    if coll.tasks or coll.analyses:
        section.tables += [provenance.data_table(coll), provenance.versions_table(coll)]
    return section


def build_report(
    coll: Collection,
    figures_dir: Path,
    title: str,
    command: str,
    figures_prefix: str = "figures",
    baseline: str = BASELINE,
    against: Sequence[Target] = (),
    difference: float = DIFFERENCE,
    notes: Sequence[str] = (),
    out: Path | None = None,
    claims: Sequence[Claim] = (),
    banner: str | None = None,
    figures: Sequence[str] = (),
    align_point: tuple[float, float] = align_distance.POINT,
) -> Report:
    """Draw every figure into ``figures_dir`` and lay out the sections (nothing else is written).

    ``notes``: lines set in bold after the opening paragraph (what the reader must know first, e.g. results
    computed by other code than the rest).

    Runs that differ only in their seed are one row of mean ± std (n); ``baseline`` names the group of
    seeds (a method, e.g. ``unsup-SimCSE``) the others are compared with. ``against``: the published rows to
    reproduce (a Reproduction section, only when given), judged with ``difference``, the difference that
    matters (:func:`stsbench.published.seed_check.verdict`). Raises ``StsbenchError`` for a ``baseline`` that
    is neither a method nor a group, or a target without its group, before any figure is drawn. ``out``: the
    report's folder (an absolute results folder is named relative to the working folder, never to ``out``, so that
    a report's text does not depend on where it is written: :mod:`stsbench.results.portable`).
    ``claims``: a table's claims, judged on the groups of seeds (a Claims section; an unknown group is an error
    before any figure is drawn). ``banner``: a line set first under every table and in every figure's title (a
    mini edition's backbone, steps and corpus: "not the paper's setting"), and in bold at the top.
    """
    # an absolute results folder named relative to the working folder: the same text whatever --out (#51.14)
    results = tuple(portable(f, ".") for f in coll.folders) if out is not None else coll.folders
    models = find_models(coll)
    groups = report_groups(coll, models)
    seeded = has_seeds(groups)
    base = baseline_group(groups, baseline) if seeded else None
    reps = reproduction.reproductions(coll.tasks, groups, against, difference)
    judged = claims_module.judge_claims(claims, coll.tasks, groups, coll.analyses) if claims else []
    figs = _Figures(Path(figures_dir), figures_prefix)
    sections = [
        _scores(coll, models, "sts", results),
        _scores(coll, models, "transfer", results),
        *([_reproduction(reps, difference)] if against else []),
        *([_claims(judged)] if claims else []),
        *([_seeds(coll, groups, base, baseline, figs)] if seeded else []),
        *[_analysis(coll, models, groups, a, results, figs) for a in all_analyses()],
        *_training(coll, models, groups, results, figs, align_point),
        _provenance(coll, models),
    ]
    if figures:  # each paper figure under its number and caption, after the claims (or the scores)
        verdicts = [
            (c.paper_figure, r.text or r.kind, r.verdict) for c, r in zip(claims, judged, strict=True)
        ]
        at = next(i for i, s in enumerate(sections) if s.key in ("seeds", "length_bias"))
        sections[at:at] = _paper_figures(figures, sections, verdicts)
    sections = _absent_last(sections)
    skipped = Section("skipped", "Skipped files")
    skipped.paragraphs = [f"`{w}`" for w in coll.warnings] or [
        f"None: every file under {under(results)} was read."
    ]
    sections.append(skipped)
    intro = [
        f"Made by `{command}` from {len(coll.tasks)} task results, {len(coll.analyses)} analysis results and "
        f"{len(coll.runs)} training runs under {under(results)}; {len(models)} models. Figures drawn with "
        f"matplotlib {matplotlib_version()}"
        + (f" and seaborn {seaborn_version()}" if seeded else "")
        + ": the same results and version give the same bytes."
    ]
    intro += [f"**{n}**" for n in notes]
    if banner:
        intro.insert(0, f"**{banner}**")
        for section in sections:
            section.tables = [replace(t, notes=(f"**{banner}**", *t.notes)) for t in section.tables]
            section.figures = [replace(f, title=f"{f.title} [{banner}]") for f in section.figures]
    modified = [r for r in [*coll.tasks, *coll.analyses] if _modified(r)]
    if modified:  # at the top: a figure on other data must never pass for the canonical one
        files = [f for r in modified for f in _modified(r)]
        intro.append(
            f"**{MARK} {plural(len(modified), 'result')} {modified_text(files)}** (marked {MARK} in the "
            "score tables, noted in the analysis sections); they are not comparable with published figures."
        )
    return Report(title, intro, sections, list(coll.warnings), figs.written, reps, judged)
