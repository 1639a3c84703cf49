"""What a report reads and how it is laid out: the results read in, the models told apart, sections and figures.

:func:`collect` is :func:`stsbench.results.read.read_folder` (its rules: what is read, what is passed over,
hidden files) with what only the report wants: every results kind (task results, analyses rebuilt as the types
the analysis registry names, ``average_sts.json``), the training runs, and a warning naming each file that
cannot be read where the comparisons would stop. The record types are the results layer's, named here too for
the report modules.

Who is who in a report: one :class:`Model` per evaluated encoder, its label, its training run. Results belong to
the same model when they share the model fingerprint (weights, config, tokenizer, pooler, max length, dtype),
whatever name or folder they were run with; so a checkpoint moved or re-run in place is told apart from its
earlier self. A model is labelled by the name the user typed (``all-MiniLM-L6-v2``, a checkpoint folder's last
part; ``simcse/seed-1`` for a seed's checkpoint), never from the file system, so a report regenerated on another
machine from the same results files reads the same. A model belongs to a training run when one of its results'
``model.path`` is the run's ``--output`` (or ends with it).

The layout: sections of paragraphs, tables and figures, and the line a section without results shows
(:func:`stsbench.reports.render.build_report` fills a :class:`~stsbench.reports.render.Report`; the templates
only loop over it). Every figure is written as ``<stem>.png`` and ``<stem>.svg`` by
``stsbench.analyses.figures.save`` (fixed dpi, ``svg.hashsalt`` fixed, no date or software in the metadata, so
the same results give the same bytes), its data beside it by :func:`write_csv`.

The figures a claim may read (:func:`with_task_figure` checks a claim's): here, not beside the claims' judging
in :mod:`stsbench.reports.reproduction`, so that loading a recipe, as ``reproduce --list`` does for every built-in
one, reads no table code (listing the recipes took about 20 s when it did).
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stsbench.analyses import figures as afig
from stsbench.analyses.registry import all_analyses, find_analysis
from stsbench.encoders.resolve import prompt_suffix
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_text
from stsbench.metrics import AVG
from stsbench.published.check import BEST_DEV
from stsbench.results.read import (
    ALL_KINDS,
    AnalysisRecord,
    AverageRecord,
    Collection,
    TaskRecord,
    model_location,
    name_in_folder,
    read_folders,
)
from stsbench.results.runs import TrainRun
from stsbench.results.schema import ModelInfo
from stsbench.results.write import base_label, unique_label
from stsbench.stats.claims import Claim

if TYPE_CHECKING:
    from stsbench.tabular import Table


__all__ = ["AnalysisRecord", "AverageRecord", "Collection", "TaskRecord", "TrainRun", "collect"]


def analysis_types() -> dict[str, type]:
    """``{analysis name: result type}`` from the analysis registry."""
    return {a.name: a.result_class() for a in all_analyses()}


_SEED_FOLDER = re.compile(r"^(?P<run>.+)__seed-(?P<seed>\d+)$")


def _run_and_seed(path: str) -> tuple[str, int | None] | None:
    """The training run (and seed) a results path belongs to, None for one of no training (a baseline).

    ``<run>__seed-<s>/...`` (a seed's results), ``analyses/<run>__seed-<s>/...``, ``train/<run>/seed-<s>/...``
    (the report's copies of a training's logs) and ``runs__<run>/...`` (a run's seed aggregate: no one seed).
    """
    parts = path.split("/")
    if parts[0] == "analyses" and len(parts) > 1:
        parts = parts[1:]
    if parts[0] == "train" and len(parts) > 2 and parts[2].startswith("seed-") and parts[2][5:].isdigit():
        return parts[1], int(parts[2][5:])
    if parts[0].startswith("runs__"):
        return parts[0][len("runs__") :], None
    found = _SEED_FOLDER.match(parts[0])
    return (found["run"], int(found["seed"])) if found else None


def only(coll: Collection, runs: Sequence[str] | None, seeds: Sequence[int] | None) -> Collection:
    """``coll`` with only the training runs ``runs`` and their seeds ``seeds`` (None: all).

    Results of no training (a baseline) are kept; a run's seed aggregate goes with a seed filter (it pools
    every seed).

    ``report --runs/--seeds``: a report of a subset judges and shows that subset, every table and figure
    (never "not run" for the runs it leaves out, nor drawn).
    """
    if runs is None and seeds is None:
        return coll

    def kept(path: str) -> bool:
        found = _run_and_seed(path)
        if found is None:
            return True
        run, seed = found
        return (runs is None or run in runs) and (seeds is None or (seed is not None and seed in seeds))

    records = {
        k: [r for r in getattr(coll, k) if kept(r.path)] for k in ("tasks", "analyses", "runs", "averages")
    }
    return dataclasses.replace(coll, **records, run_dirs=[d for d in coll.run_dirs if kept(d)])


def collect(results_dir: str | Path | Sequence[str | Path], strict: bool = False) -> Collection:
    """Load every result and training run under ``results_dir``; what cannot be read becomes a warning.

    Several folders are merged (:func:`stsbench.results.read.read_folders`: one measurement found in two of
    them counts once, two copies that differ are refused). ``strict``: raise a bad file's one line instead of a
    warning. Raises ``StsbenchError`` when a folder does not exist.
    """
    folders = [results_dir] if isinstance(results_dir, (str, Path)) else list(results_dir)
    what = "`stsbench run` / the analyses"
    return read_folders(
        folders, kinds=ALL_KINDS, result_types=analysis_types(), runs=True, strict=strict, what=what
    )


# -- who is who: the models ----------------------------------------------------------------------------------


# the order of the papers' ablation rows (the methods' run labels, :func:`method_of`); other methods after them
METHOD_ORDER = (
    "unsup-SimCSE",
    "sup-SimCSE",
    "word repetition only",
    "momentum contrast only",
    "ESimCSE",
    "ESimCSE, neither component",
    "MoCoSE",
)


@dataclass(frozen=True)
class Model:
    """One evaluated encoder (its fingerprint covers the pooler it was evaluated with)."""

    label: str  # what tables and figures call it
    name: str  # the name the label comes from (of a training run's folder, when one matches)
    pooler: str
    info: ModelInfo
    run: TrainRun | None  # the training run that made this checkpoint, when it is under the results
    method: str | None  # see :func:`method_of`; None for a model that was not trained here
    names: tuple[str, ...] = ()  # every name its results were run with

    @property
    def key(self) -> str:
        """The fingerprint that every result of this model carries."""
        return self.info.fingerprint


def method_of(config: dict[str, Any]) -> str:
    """What reports call a training config's run.

    Its method's answer (:meth:`~stsbench.train.config.options.MethodSpec.run_label`: ``unsup-SimCSE``, ESimCSE's
    component rows); the method's name where no method of that name is registered.
    """
    from stsbench.train.config.options import find_method

    spec = find_method(config.get("method"))
    return spec.run_label(config) if spec is not None else str(config.get("method") or "unknown method")


def method_rank(method: str | None) -> int:
    """Sort key: models not trained here first, then the ablation order of ESimCSE's tables."""
    if method is None:
        return -1
    return METHOD_ORDER.index(method) if method in METHOD_ORDER else len(METHOD_ORDER)


def _norm(path: str) -> str:
    return re.sub(r"^(\./)+", "", path.replace("\\", "/").rstrip("/"))


def run_for(info: ModelInfo, runs: list[TrainRun], where: str | None = None) -> TrainRun | None:
    """Return the training run whose ``--output`` is the evaluated model's folder, if one is under the results.

    ``where``: the folder ``info.path`` names, resolved (:func:`stsbench.results.read.model_location`).
    """
    for target in (where or info.path, info.name):
        t = _norm(target)
        for run in runs:
            out = _norm(run.output)
            if out and (t == out or t.endswith("/" + out)):
                return run
    return None


def _infos(coll: Collection) -> dict[str, list[tuple[ModelInfo, str, str]]]:
    """Fingerprint -> the model blocks of its results, each with the folder it names and its name.

    The name as the results folder names it (:func:`name_in_folder`); task results first, then analyses, in
    path order.
    """
    infos: dict[str, list[tuple[ModelInfo, str, str]]] = {}
    for rec in [*coll.tasks, *coll.analyses]:
        info = rec.model if isinstance(rec, AnalysisRecord) else rec.result.model
        infos.setdefault(info.fingerprint, []).append((info, model_location(coll, rec), name_in_folder(rec)))
    return infos


def name_label(info: ModelInfo) -> str:
    """The label a model's name gives it, before two models of one name are told apart (pooler, fingerprint).

    A prompted model is labelled with its prompt: its rows must not pass for the unprompted model's.
    """
    return base_label(info.name) + prompt_suffix(info.prompt, info.prompt_name)


def find_models(coll: Collection) -> list[Model]:
    """Every evaluated model under the results, labelled and ordered (base models, then by method)."""
    found = []
    for located in _infos(coll).values():
        run = next((r for r in (run_for(i, coll.runs, w) for i, w, _ in located) if r is not None), None)
        names = tuple(sorted({n for _, _, n in located}))
        if run is None:  # the block of the first name, else the one whose folder is the run's
            main = next(i for i, _, n in located if n == names[0])
        else:
            main = next((i for i, w, _ in located if run_for(i, [run], w)), located[0][0])
        found.append((main, run, names))
    base = {m.fingerprint: name_label(m) for m, _, _ in found}
    labels: dict[str, str] = {}
    for info, _, _ in found:
        clash = [i for i, _, _ in found if base[i.fingerprint] == base[info.fingerprint]]
        label = base[info.fingerprint]
        if len(clash) > 1 and len({i.pooler for i in clash}) == len(clash):  # same name, other poolers
            label = f"{label} ({info.pooler})"
        elif len(clash) > 1:  # same name, other weights: e.g. a checkpoint trained again in place
            label = f"{label} [{info.fingerprint[:8]}]"
        labels[info.fingerprint] = label
    models = [
        Model(labels[i.fingerprint], i.name, i.pooler, i, run, method_of(run.config) if run else None, names)
        for i, run, names in found
    ]
    return sorted(models, key=lambda m: (method_rank(m.method), m.label))


def model_of(models: list[Model], info: ModelInfo) -> Model:
    """Return the :class:`Model` a result's ``model`` block belongs to."""
    return next(m for m in models if m.key == info.fingerprint)


def by_variant(records: list[AnalysisRecord], models: list[Model]) -> dict[str, dict[str, Any]]:
    """Group one analysis' records by file variant (``length_bias_words``...), each ``{label: result}``.

    What the analysis' own tables and figure take (its registry entry's ``tables`` and ``figure``).
    """
    order = [m.key for m in models]
    out: dict[str, dict[str, Any]] = {}
    for variant in sorted({r.variant for r in records}):
        labelled = out.setdefault(variant, {})
        ours = [r for r in records if r.variant == variant]
        for rec in sorted(ours, key=lambda r: (order.index(r.model.fingerprint), r.path)):
            labelled[unique_label(model_of(models, rec.model).label, labelled)] = rec.result
    return out


# -- the layout: sections, tables, figures -------------------------------------------------------------------


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
    """A figure as the report shows it: SVG beside report.md, PNG inlined in report.html.

    Tagged when drawn with what it is (``kind``: ``sweep``, ``grid``, ``distance``, ``dev-curves``, ``analysis``...),
    the analysis it draws and the settings it is drawn against: what a paper figure's renderer is found by
    (:func:`stsbench.reports.paper_figures.matches`).
    """

    title: str
    svg: str  # path relative to the report folder
    png_base64: str
    kind: str = ""
    analysis: str = ""
    settings: tuple[str, ...] = ()

    @property
    def png(self) -> str:
        """The PNG beside the SVG (report.md links it)."""
        return self.svg[: -len(".svg")] + ".png"


@dataclass
class Section:
    """One ``##`` section."""

    key: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[FigureOut] = field(default_factory=list)
    # its figures an earlier section shows (report.md links there; a notebook shows them again)
    shown_before: list[FigureOut] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        """GitHub's heading anchor for the title."""
        return anchor(self.title)


def anchor(title: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to dashes."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


DESCRIBE = {
    "sts": "STS results",
    "transfer": "transfer results",
    "training": "training runs (train_log.jsonl)",
    "ablations": "pair of training runs that differ in one setting or in ESimCSE's components",
}


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


def absent_last(sections: list[Section]) -> list[Section]:
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


class Figures:
    """Write figures under ``folder`` and remember them for the report."""

    def __init__(self, folder: Path, prefix: str) -> None:
        self.folder, self.prefix, self.written = folder, prefix, []

    def add(
        self, title: str, paths: list[Path], kind: str, analysis: str = "", settings: tuple[str, ...] = ()
    ) -> FigureOut:
        """The figure drawn to ``paths``, tagged with what it is (:class:`FigureOut`)."""
        self.written += paths
        svg = next(p for p in paths if p.suffix == ".svg")
        png = next(p for p in paths if p.suffix == ".png")
        png_base64 = base64.b64encode(png.read_bytes()).decode("ascii")
        return FigureOut(title, f"{self.prefix}/{svg.name}", png_base64, kind, analysis, tuple(settings))

    def csv(self, name: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
        """A figure's data, ``<name>.csv`` in the folder (:func:`write_csv`), remembered."""
        self.written.append(write_csv(self.folder / f"{name}.csv", columns, rows))
        return self.written[-1]

    def drawn(self, figure: Any, name: str, title: str, kind: str, *tags: Any) -> FigureOut:
        """A matplotlib ``figure`` saved as ``<name>``.png/.svg in the folder and tagged (:meth:`add`)."""
        return self.add(title, afig.save(figure, self.folder / name), kind, *tags)


# -- a figure's data beside it -------------------------------------------------------------------------------


def write_csv(path: Path, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    """A figure's data beside it: ``columns`` then ``rows``, one line each, written atomically."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return atomic_write_text(path, buffer.getvalue())


# -- the figures a claim reads -------------------------------------------------------------------------------


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
    return parts[0].strip(), parts[1].strip(), parts[2].strip()


def analysis_of(variant: str) -> Any:
    """The registered analysis whose results a variant (``length_bias_tokens``) is a file stem of; None if none."""
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
