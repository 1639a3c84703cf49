"""Recipes: a paper's table as data, what ``stsbench reproduce`` runs (train -> evaluate -> analyses -> report).

A recipe (YAML, validated by :class:`Recipe`) names the published rows it reproduces (registry keys), its runs
(method, a packaged config by name, overrides, seeds, corpus and its first lines, what each seed is evaluated
on, the published row or cell its seeds are held against; a ``sweep:`` or ``grid:`` stands for one run per
setting, :func:`expand`), an optional baseline model evaluated as it is, the
analyses (names from :data:`stsbench.analyses.registry.ANALYSES`, on which runs' seeds), and the report
(title, baseline group). The built-in recipes are the YAML files beside this module, one per seed-paper table
stsbench can address, in a ``-paper`` and an ``-official`` flavour where the paper and its code differ, and
``cpu-mini`` (the checked-in CPU mini-replication). A user's recipe is a file path. :func:`load_recipe`
checks every name a recipe holds (registry key, config, method, option, task, mode, analysis, corpus) and
refuses a bad one in one line naming the file.

The check of every name a recipe holds against the registries (:func:`check_recipe`), what :func:`load_recipe`
refuses before anything runs, is here too; it imports the registries it reads when it runs.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stsbench.errors import StsbenchError, validation_line
from stsbench.registry import packaged_files
from stsbench.stats.claims import Claim, fewest_listed, listing_fields

Mode = Literal["test", "dev", "fasttest"]  # stsbench.tasks.base.Mode's values
# why a published cell no built-in recipe produces cannot be, the closed set (docs/recipes.md): a baseline the paper
# quotes from other work, a corpus or an objective stsbench does not have, a knob the trainer lacks (until the
# papers-knobs issue adds it), a table the text only cites
Unreproducible = Literal[
    "quoted-baseline", "corpus-unavailable", "objective-unavailable", "needs-knob", "ref-only"
]
UNREPRODUCIBLE: tuple[str, ...] = Unreproducible.__args__  # type: ignore[attr-defined]
_STRICT = ConfigDict(extra="forbid", frozen=True)


class Evaluation(BaseModel):
    """What a model is evaluated on: tasks (names or sets, as ``stsbench run --tasks``) and the mode."""

    model_config = _STRICT
    tasks: tuple[str, ...] = ("sts",)
    mode: Mode = "test"


class CorpusRef(BaseModel):
    """A training corpus by name (:data:`stsbench.data.corpora.CORPORA`) and the lines read from its start."""

    model_config = _STRICT
    name: str
    lines: int | None = Field(None, ge=2)


class Run(BaseModel):
    """One training setting, trained once per seed into ``<out>/<name>/seed-<s>``."""

    model_config = _STRICT
    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # a folder name
    method: str
    config: str  # a packaged config (stsbench/configs/), or a YAML file's path (a plugin method's config)
    overrides: dict[str, Any] = {}  # training options over the config's (keys as in the YAML configs)
    seeds: tuple[int, ...] = Field(min_length=1)
    corpus: CorpusRef | None = None  # the config's train_file (and train_lines) otherwise
    # what each seed is evaluated on; null: nothing (a dev-set table's figure is the training's own best
    # STS-B dev score, which every training already computes)
    evaluate: Evaluation | None = Evaluation()
    # the registry row its seeds are held against, or a cell of it (``KEY#COLUMN``: a sweep table's setting)
    published: str | None = None
    # more rows or cells the same seeds produce (a dev table beside a test one, a paper's two versions of a table)
    also_published: tuple[str, ...] = ()
    label: str | None = None  # the group's name in the report (default: the method's)
    # filled by a sweep or grid (:func:`expand`), never written: the run it expands from, its settings
    sweep_of: str | None = None
    point: dict[str, Any] = {}

    @property
    def config_file(self) -> Path:
        """Its config's file: an existing YAML file as given, else the packaged config of that name."""
        from stsbench.configs import find_config

        return find_config(self.config)

    @property
    def addresses(self) -> tuple[str, ...]:
        """Every row or cell its seeds are held against: ``published``, then ``also_published``."""
        return (*((self.published,) if self.published else ()), *self.also_published)

    @field_validator("seeds")
    @classmethod
    def _distinct(cls, seeds: tuple[int, ...]) -> tuple[int, ...]:
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"seeds repeat: {list(seeds)}")
        return seeds


class Baseline(BaseModel):
    """A model evaluated as it is (the backbone of a mini-replication), beside the trained runs."""

    model_config = _STRICT
    model: str
    evaluate: Evaluation = Evaluation()


class Analysis(BaseModel):
    """An analysis of the registry on some checkpoints, with its options.

    On ``runs`` (default: all) at ``seeds`` (default: every seed of each run), and on the baseline if asked;
    ``corpus`` fills an analysis' corpus option (resolved in the data folder as a training corpus).
    """

    model_config = _STRICT
    name: str
    options: dict[str, Any] = {}
    runs: tuple[str, ...] | None = None
    seeds: tuple[int, ...] | None = None
    baseline: bool = False
    corpus: CorpusRef | None = None


class Delta(BaseModel):
    """A difference that matters (δ) and why: the recipe's, for its claims or its cells (docs/uncertainty.md)."""

    model_config = _STRICT
    value: float = Field(gt=0)  # in the figure's units (points on x100 figures)
    reason: str = Field(min_length=1)  # one line: why that difference matters here


class Report(BaseModel):
    """The report: its title and the group the others are compared with (``stsbench report --baseline``)."""

    model_config = _STRICT
    title: str
    baseline: str = "unsup-SimCSE"


class Recipe(BaseModel):
    """A reproduction: published rows, runs x seeds, evaluation, analyses, report."""

    model_config = _STRICT
    name: str
    title: str
    flavour: Literal["paper", "official", "mini"]
    description: str = ""
    published: tuple[str, ...] = ()  # the registry rows it reproduces (or sets beside, without verdict)
    verdict: bool = True  # False: the runs differ from the papers' (backbone, length): shown, not judged
    verdict_reason: str | None = None  # with verdict: false, why (one line): the dry run says it
    runs: tuple[Run, ...] = Field(min_length=1)
    baseline: Baseline | None = None
    analyses: tuple[Analysis, ...] = ()
    # the papers' figures it regenerates (stsbench.published.figures keys, e.g. mocose/figure8), each drawn by the
    # report from the recipe's runs or analyses (checked when the recipe loads)
    figures: tuple[str, ...] = ()
    report: Report
    notes: tuple[str, ...] = ()
    # the table's claims (stsbench.stats.claims), their settings the runs' names: judged in the report
    claims: tuple[Claim, ...] = ()
    # the difference that matters for the claims without their own `delta` (default 0.5 points on x100 figures),
    # and for the published cells (default 1.0 point), each with its reason (stsbench.stats.decide)
    delta: Delta | None = None
    cell_delta: Delta | None = None
    # published rows or cells (KEY or KEY#COLUMN) of the recipe's tables that no built-in recipe can produce, each
    # with its reason (UNREPRODUCIBLE): `reproduce --list` accounts for every cell of every table this way
    unreproducible: dict[str, Unreproducible] = {}
    # filled by subset() (reproduce --runs/--seeds), never written: what this subset leaves out, in words
    omitted: tuple[str, ...] = ()
    # filled by load_recipe(), never written: the folder of the recipe's file (None: a built-in), which its own
    # published files are read relative to (and keyed by their path from)
    folder: str | None = None
    # filled by reproduce --until-decided, never written: the most seeds its sequential plan trains a run
    until: int | None = None
    refine: bool = False  # and reproduce --refine: until each claim's size is shown or out of reach

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, data: Any) -> Any:
        return expand(data)

    @model_validator(mode="after")
    def _consistent(self) -> Recipe:
        if not self.verdict and not (self.verdict_reason or "").strip():
            raise ValueError(
                "verdict: false needs a verdict_reason: one line saying why its cells are not judged"
            )
        names = [r.name for r in self.runs]
        if len(set(names)) != len(names):
            raise ValueError(f"run names repeat: {names}")
        for a in self.analyses:
            if unknown := sorted(set(a.runs or ()) - set(names)):
                raise ValueError(f"analysis {a.name} names runs {unknown}, not among {names}")
            if a.baseline and self.baseline is None:
                raise ValueError(f"analysis {a.name} asks for the baseline, and the recipe has none")
        from stsbench.reports.collect import METHOD_ORDER

        # what `report --baseline` finds a group by: a run's name or a method's
        if self.report.baseline not in names and self.report.baseline not in METHOD_ORDER:
            raise ValueError(
                f"report.baseline {self.report.baseline!r} names no run and no method: give a run's name "
                f"({', '.join(names[:8])}{', ...' if len(names) > 8 else ''}) or one of {', '.join(METHOD_ORDER)}"
            )
        baseline = [self.baseline.model] if self.baseline is not None else []  # a claim against the backbone
        for i, claim in enumerate(self.claims, start=1):
            if unknown := [s for s in claim.settings() if s not in names + baseline]:
                also = f" or the baseline {baseline[0]!r}" if baseline else ""
                raise ValueError(f"claim {i} names {unknown}, not among the runs {names}{also}")
        from stsbench.published.registry import split_cell

        for run, key in ((r, split_cell(address)[0]) for r in self.runs for address in r.addresses):
            if key not in self.published:
                raise ValueError(f"run {run.name}: published row {key} is not in the recipe's published")
        return self

    def run(self, name: str) -> Run:
        """The run called ``name``."""
        return next(r for r in self.runs if r.name == name)

    def subset(self, runs: Sequence[str] | None = None, seeds: Sequence[int] | None = None) -> Recipe:
        """The recipe on some of its runs (a run's name, or a sweep's for all its runs) and seeds.

        ``reproduce --runs/--seeds``: a paper-scale sweep is many trainings. Analyses keep the runs left; a claim
        keeps the settings left (an argmax among those run, say), and one that cannot be judged on them is left
        out; :attr:`omitted` says what was, for the report. An unknown name or a seed no run has: one line.
        """
        chosen = list(self.runs)
        omitted: list[str] = []
        if runs is not None:
            sweeps = self.sweeps()
            names = {r.name for r in self.runs}
            if unknown := [n for n in runs if n not in names and n not in sweeps]:
                near = difflib.get_close_matches(unknown[0], [*sweeps, *names], n=1, cutoff=0.6)
                hint = f"did you mean {near[0]}? " if near else ""
                known = "; ".join(
                    [f"{n} (a sweep: {', '.join(m.name for m in members)})" for n, members in sweeps.items()]
                    + [r.name for r in self.runs if r.sweep_of is None]
                )
                raise StsbenchError(
                    f"--runs {unknown[0]}: no run or sweep of {self.name} has that name; {hint}its runs: {known}"
                )
            wanted = {m.name for n in runs for m in sweeps.get(n, ())} | set(runs)
            chosen = [r for r in chosen if r.name in wanted]
            if left := [r.name for r in self.runs if r.name not in wanted]:
                omitted.append(f"runs not run (--runs): {', '.join(left)}")
        if seeds is not None:
            every = sorted({s for r in chosen for s in r.seeds})
            if stray := [s for s in seeds if s not in every]:
                raise StsbenchError(f"--seeds {stray[0]}: the runs chosen have seeds {every}")
            if left_seeds := [s for s in every if s not in seeds]:
                omitted.append(f"seeds not run (--seeds): {', '.join(map(str, left_seeds))}")
            chosen = [
                r.model_copy(update={"seeds": tuple(s for s in r.seeds if s in seeds)})
                for r in chosen
                if any(s in seeds for s in r.seeds)
            ]
        names = {r.name for r in chosen}
        claims = []
        for i, claim in enumerate(self.claims, start=1):
            if (narrowed := _narrowed(claim, names)) is None:
                omitted.append(f"claim {i} not judged: it names runs not run ({claim.text or claim.kind})")
            else:
                claims.append(narrowed)
        analyses = tuple(
            a.model_copy(update={"runs": tuple(r for r in a.runs if r in names)}) if a.runs is not None else a
            for a in self.analyses
            if a.runs is None or any(r in names for r in a.runs) or a.baseline
        )
        return self.model_copy(
            update=dict(runs=tuple(chosen), claims=tuple(claims), analyses=analyses, omitted=tuple(omitted))
        )

    def with_seeds(self, added: Mapping[str, Sequence[int]]) -> Recipe:
        """The recipe with ``added`` seeds (``{run: seeds}``, the sequential plan's) after each run's own."""
        more = {r.name: tuple(s for s in added.get(r.name, ()) if s not in r.seeds) for r in self.runs}
        runs = tuple(r.model_copy(update={"seeds": (*r.seeds, *more[r.name])}) for r in self.runs)
        return self.model_copy(update={"runs": runs})

    def sweeps(self) -> dict[str, tuple[Run, ...]]:
        """Each sweep or grid by its name, with its runs in order."""
        names = dict.fromkeys(r.sweep_of for r in self.runs if r.sweep_of is not None)
        return {name: tuple(r for r in self.runs if r.sweep_of == name) for name in names}


def _narrowed(claim: Claim, names: set[str]) -> Claim | None:
    """``claim`` on the settings in ``names`` (an argmax, ordering, plateau, collapse keep theirs), or None."""
    have = [s for s in claim.settings() if s in names]
    if len(have) == len(claim.settings()):
        return claim
    kind = type(claim)
    if kind.LISTS is None or len(have) < fewest_listed(kind):
        return None
    if claim.kind == "argmax" and claim.best not in names:
        return None
    data = claim.model_dump(by_alias=True)
    data[kind.LISTS] = have
    return kind.model_validate(data)


def recipe_names() -> list[str]:
    """The built-in recipes' names, sorted."""
    return packaged_files("recipe", __name__).names()


def recipe_file(name_or_path: str | Path) -> Path:
    """An existing file as it is, else the built-in recipe of that name (one line with the nearest if none)."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    text = str(name_or_path)
    if "/" in text or "\\" in text:
        raise StsbenchError(f"recipe file {path} does not exist; give a YAML file or a built-in recipe")
    stem = re.sub(r"\.ya?ml$", "", text, flags=re.IGNORECASE)
    builtin = packaged_files("recipe", __name__)
    if stem != text and builtin.canonical(stem) is None:
        # a file name meant a file: the ~50 built-in names are no answer to a mistyped path
        near = difflib.get_close_matches(stem.lower(), [n.lower() for n in builtin.names()], n=1, cutoff=0.6)
        hint = f"; or did you mean the built-in recipe {near[0]}?" if near else ""
        raise StsbenchError(
            f"no recipe file {text} (no such file; a built-in recipe is named without .yaml: "
            f"`stsbench reproduce --list`){hint}"
        )
    try:
        return builtin.get(stem)
    except StsbenchError as exc:
        raise StsbenchError(f"{exc}; or give the path of a recipe file") from None


def load_recipe(name_or_path: str | Path) -> Recipe:
    """The recipe a built-in name or a YAML file holds, every name in it checked; errors are one line."""
    import yaml

    path = recipe_file(name_or_path)
    where = str(name_or_path) if path.parent != Path(str(resources.files(__name__))) else path.stem
    try:
        data = yaml.load(
            path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise StsbenchError(
            f"{where}{f':{mark.line + 1}' if mark else ''}: not valid YAML ({problem}); fix the file"
        ) from None
    if not isinstance(data, dict):
        raise StsbenchError(
            f"{where}: expected a mapping (name, title, runs, ...), got {type(data).__name__}"
        )
    runs = data.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise StsbenchError(
            f"recipe {where}: runs: a list of runs, each a mapping (name, method, config, seeds...), "
            f"got {runs!r:.60}; see docs/recipes.md"
        )
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:  # the first error said, the others named
        more = sorted({".".join(map(str, e["loc"])) for e in exc.errors()[1:]})
        also = f" (and {len(more)} more: {', '.join(more)})" if more else ""
        raise StsbenchError(f"recipe {where}: {validation_line(exc)}{also}") from None
    if path.parent != Path(str(resources.files(__name__))):
        recipe = _own_files_from(recipe, path.parent.resolve())
    try:
        check_recipe(recipe)
    except StsbenchError as exc:
        raise StsbenchError(f"recipe {where}: {exc}") from None
    return recipe


def _own_files_from(recipe: Recipe, folder: Path) -> Recipe:
    """``recipe`` with its own published files' relative paths read from ``folder`` (its file's), not from here."""
    from stsbench.published.registry import file_key

    def absolute(address: str) -> str:
        in_file = file_key(address)
        if in_file is None or Path(in_file[0]).expanduser().is_absolute():
            return address
        return f"{folder / in_file[0]}#{in_file[1]}"

    runs = tuple(
        r.model_copy(
            update={
                "published": absolute(r.published) if r.published else None,
                "also_published": tuple(map(absolute, r.also_published)),
            }
        )
        for r in recipe.runs
    )
    return recipe.model_copy(
        update={"published": tuple(map(absolute, recipe.published)), "runs": runs, "folder": str(folder)}
    )


# -- every name a recipe holds, checked ----------------------------------------------------------------------


def check_recipe(recipe: Recipe) -> None:
    """Raise a one-line :class:`StsbenchError` at the first name that does not exist or value that is refused."""
    from stsbench.published.registry import get_cell, get_entry

    for key in recipe.published:
        get_entry(key)
    for address in recipe.unreproducible:  # a row or a cell, as --list accounts for them
        get_cell(address)
    if recipe.claims:  # each claim's figure a registered task (or best-dev, Avg.), or an analysis' it runs
        from stsbench.reports.collect import analysis_figure, with_task_figure

        made = analysis_stems(recipe)
        for i, claim in enumerate(recipe.claims, start=1):
            check_measured(recipe, with_task_figure(claim, f"claims: claim {i}"), i)
            parsed = analysis_figure(claim.figure)
            if parsed is not None and parsed[0] not in made:
                raise StsbenchError(
                    f"claims: claim {i}: figure {claim.figure!r} reads {parsed[0]} results, which the recipe's "
                    f"analyses do not make (they make: {', '.join(made) or 'none'})"
                )
    for key in recipe.figures:
        check_figure(recipe, key)
    for run in recipe.runs:
        try:
            check_run(run)
        except StsbenchError as exc:
            raise StsbenchError(f"run {run.name}: {exc}") from None
    for analysis in recipe.analyses:
        check_analysis(analysis.name, analysis.options, with_corpus=analysis.corpus is not None)


def check_measured(recipe: Recipe, claim: Any, i: int) -> None:
    """Refuse a claim on a task figure (a task, ``Avg.``, ``Transfer Avg.``) that a run it names never measures.

    ``best-dev`` and ``final-dev`` every training measures; an analysis figure is checked against the analyses.
    """
    from stsbench.metrics import AVG
    from stsbench.published.check import result_modes
    from stsbench.published.registry import STS_TASKS, TRANSFER_TASKS
    from stsbench.reports.collect import FINAL_DEV, TRANSFER_AVG, analysis_figure
    from stsbench.tasks.registry import task_names

    if claim.figure in ("best-dev", FINAL_DEV) or analysis_figure(claim.figure) is not None:
        return
    needed = {AVG: STS_TASKS, TRANSFER_AVG: TRANSFER_TASKS}.get(claim.figure, (claim.figure,))
    modes = result_modes("dev" if claim.mode == "dev" else "test", needed)
    # a setting that is no run's name: the baseline's model, evaluated as the recipe's baseline says
    evaluates = {r.name: r.evaluate for r in recipe.runs}
    for setting in (s for s in claim.settings() if s in evaluates):
        ev = evaluates[setting]
        tasks = set(task_names(list(ev.tasks))) if ev is not None and ev.mode in modes else set()
        if lacking := [t for t in needed if t not in tasks]:
            what = "evaluate: null" if ev is None else f"evaluate: {', '.join(ev.tasks)} in {ev.mode}"
            raise StsbenchError(
                f"claims: claim {i}: figure {claim.figure!r} ({claim.mode}) of run {setting} is never measured "
                f"({what}; it lacks {', '.join(lacking[:3])}{' ...' if len(lacking) > 3 else ''}): evaluate the "
                f"run on them ({'sts' if set(needed) <= set(STS_TASKS) else 'transfer'}, mode {modes[0]}), or "
                "judge a figure every training measures (best-dev, final-dev)"
            )


# what a figure's renderer draws from: an analysis the recipe runs (and the STS tasks it evaluates)
RENDERER_ANALYSIS = {
    "spectrum": "spectrum",
    "align-map": "align_uniform",
    "align-distance": "align_uniform",
    "cosine-density": "cosine_density",
}


def varied_options(recipe: Recipe) -> set[str]:
    """The training options whose value differs between the recipe's runs (a sweep's, or runs set apart by hand)."""
    settings = [
        {str(k).replace("-", "_"): v for k, v in {**r.overrides, **r.point}.items()} for r in recipe.runs
    ]
    names = {name for s in settings for name in s}
    return {name for name in names if len({repr(s.get(name)) for s in settings}) > 1}


def check_figure(recipe: Recipe, key: str) -> None:
    """A figure the recipe names: in the registry, in scope, drawn, and drawn from what the recipe makes."""
    from stsbench.published.figures import get_figure

    fig = get_figure(key)
    where = f"figures: {key}"
    if fig.out_of_scope or not fig.drawn:
        raise StsbenchError(f"{where}: stsbench does not draw it ({fig.out_of_scope or fig.missing})")
    if fig.renderer in ("sweep", "grid") and fig.setting not in (swept := varied_options(recipe)):
        raise StsbenchError(
            f"{where}: drawn against {fig.setting}, which no run of the recipe sweeps "
            f"(its sweeps: {', '.join(sorted(swept)) or 'none'})"
        )
    if fig.renderer in ("distance", "align-distance"):
        from stsbench.train.config.options import find_method, method_specs

        swept = [find_method(r.method) for r in recipe.runs if r.sweep_of is not None]
        if not any(spec is not None and spec.traceable_distance for spec in swept):
            traced = " or ".join(s.label for s in method_specs() if s.traceable_distance)
            raise StsbenchError(
                f"{where}: drawn against the traceable distance: the recipe sweeps no {traced}"
            )
    analysis = RENDERER_ANALYSIS.get(fig.renderer or "")
    if analysis is not None and analysis not in {a.name for a in recipe.analyses}:
        raise StsbenchError(f"{where}: drawn from the {analysis} analysis, which the recipe does not run")
    if fig.renderer == "trajectory" and not recipe.runs:
        raise StsbenchError(
            f"{where}: drawn from the training logs' dev evaluations: the recipe trains no run"
        )
    if fig.renderer == "align-map" and not any(r.evaluate is not None for r in recipe.runs):
        raise StsbenchError(
            f"{where}: coloured by the STS Avg.: the recipe evaluates no run on the STS tasks"
        )


def analysis_stems(recipe: Recipe) -> list[str]:
    """The results file stems the recipe's analyses write (``length_bias_tokens``, ``align_uniform_dev``)."""
    from stsbench.analyses.registry import get_analysis

    stems = []
    for a in recipe.analyses:
        analysis = get_analysis(a.name)
        variant = analysis.variant(analysis.make_config(**a.options))
        stems.append(f"{analysis.name}_{variant}" if variant else analysis.name)
    return list(dict.fromkeys(stems))


def run_options(run: Run, seed: int, output: str) -> dict[str, Any]:
    """The training options a run's seed adds to its config: its overrides, corpus, seed and output."""
    options = {str(k).replace("-", "_"): v for k, v in run.overrides.items()}
    if run.corpus is not None:
        options["train_file"] = run.corpus.name
        options["train_lines"] = run.corpus.lines
    return {**options, "seed": seed, "output": output}


def check_run(run: Run) -> None:
    """Method, packaged config (of that method), training options and values, corpus, tasks, published row."""
    from stsbench.data.corpora import CORPORA
    from stsbench.train.config import OPTIONS, load_yaml, make_config
    from stsbench.train.config.options import METHODS

    method = METHODS.check(run.method)
    config = load_yaml(run.config_file)
    if config.get("method") != method:
        raise StsbenchError(f"config {run.config} trains {config.get('method')}, not {method}")
    options = run_options(run, run.seeds[0], "RUN")
    for name in options:
        if name not in OPTIONS:
            near = difflib.get_close_matches(name, list(OPTIONS), n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise StsbenchError(f"unknown training option {name!r}{hint}")
    if run.corpus is not None:
        CORPORA.check(run.corpus.name)
    cfg = make_config(options, run.config_file)
    if cfg.method != method:  # an override may not change what the config trains
        raise StsbenchError(f"overrides change the method to {cfg.method}")
    for address in run.addresses:
        _check_published(run, address)


def _check_published(run: Run, address: str) -> None:
    """The row or cell exists and the run evaluates what it needs (a dev table: its training's best dev)."""
    from stsbench.published.check import BEST_DEV, figure_of
    from stsbench.published.registry import get_cell
    from stsbench.tasks.registry import task_names

    entry, column = get_cell(address)
    if entry.kind != "scores":
        raise StsbenchError(
            f"{entry.key} is an analysis table: name it in the recipe's published, not a run's"
        )
    # what the seeds must have for each cell (stsbench.published.check.figure_of)
    for col in [column] if column is not None else list(entry.values):
        figure = figure_of(entry, col)
        if figure is None or figure.kind == BEST_DEV:  # none of ours, or the training's own best dev score
            continue
        if run.evaluate is None:
            raise StsbenchError(
                f"its published {entry.key}#{col} needs the seeds evaluated on {', '.join(figure.tasks)}; "
                "give the run an evaluate"
            )
        tasks = task_names(list(run.evaluate.tasks))
        if missing := [t for t in figure.tasks if t not in tasks]:
            raise StsbenchError(
                f"its published row {entry.key} has {col}, over {', '.join(missing)}, which it does not evaluate"
            )
        if run.evaluate.mode not in figure.modes:
            raise StsbenchError(
                f"its published row {entry.key} is on the {figure.mode} split; evaluate with mode {figure.modes[0]}"
            )


def check_analysis(name: str, options: dict[str, Any], with_corpus: bool = False) -> None:
    """The analysis is registered and takes these options (and a corpus, where the recipe gives one)."""
    import dataclasses

    from stsbench.analyses.registry import get_analysis

    analysis = get_analysis(name)
    analysis.make_config(**options)
    if with_corpus and "corpus" not in {f.name for f in dataclasses.fields(analysis.config_type)}:
        raise StsbenchError(f"analysis {name} reads no corpus; remove its corpus")


# -- a run's sweep: (one training option) and grid: (two) as the runs they stand for ------------------------


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_EXPANDED = ("sweep_of", "point")  # what the expansion fills in a run: never written by hand
_AXIS = {"option", "values", "labels"}  # an axis' keys; labels may be left out


def shown(value: Any) -> str:
    """A swept value as the registry's column names and run names spell it (``True`` as ``true``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def point_name(base: str, point: dict[str, Any]) -> str:
    """``<base>.<option>-<value>...``: the run a sweep's point is, as a folder name."""
    parts = [base, *(f"{option}-{shown(value)}" for option, value in point.items())]
    return _UNSAFE.sub("_", ".".join(parts))


def _check_option(name: str, option: Any) -> None:
    """Refuse a swept option that is not a training option, naming the nearest one.

    Refused here, a misspelt option is not blamed on a claim naming the sweep's runs or on its published template.
    """
    from stsbench.train.config import OPTIONS

    if option not in OPTIONS:
        near = difflib.get_close_matches(str(option), list(OPTIONS), n=1)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise ValueError(f"run {name}: its sweep's option {option!r} is not a training option{hint}")


def _axes(run: dict[str, Any]) -> list[dict[str, Any]]:
    name = run.get("name", "?")
    if "sweep" in run and "grid" in run:
        raise ValueError(f"run {name}: give sweep (one option) or grid (two), not both")
    axes = [run["sweep"]] if "sweep" in run else list(run["grid"])
    if "grid" in run and len(axes) != 2:
        raise ValueError(f"run {name}: a grid has two axes (a sweep has one), got {len(axes)}")
    for axis in axes:
        if not isinstance(axis, dict) or not {"option", "values"} <= set(axis) <= _AXIS:
            raise ValueError(
                f"run {name}: each axis is {{option: NAME, values: [...], labels: [...]}}, got {axis!r}"
            )
        _check_option(name, axis["option"])
        values = axis["values"]
        if not isinstance(values, list) or len(values) < 2:
            raise ValueError(f"run {name}: {axis['option']} needs two values or more, got {values!r}")
        if len({shown(v) for v in values}) != len(values):
            raise ValueError(f"run {name}: {axis['option']}'s values repeat: {values}")
        labels = axis.get("labels")
        if labels is not None and (not isinstance(labels, list) or len(labels) != len(values)):
            raise ValueError(f"run {name}: {axis['option']}'s labels are one per value, got {labels!r}")
    if len({axis["option"] for axis in axes}) != len(axes):
        raise ValueError(f"run {name}: a grid varies two different options")
    return axes


def _points(run: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, str]]]:
    """Each point of the sweep or grid: its options' values, and how the paper spells each (its label)."""
    axes = _axes(run)
    options = [a["option"] for a in axes]
    spelt = [list(zip(a["values"], a.get("labels") or map(shown, a["values"]), strict=True)) for a in axes]
    points = []
    for pairs in itertools.product(*spelt):
        values, labels = zip(*pairs, strict=True)
        points.append((dict(zip(options, values, strict=True)), dict(zip(options, labels, strict=True))))
    return points


def _cell(template: str | None, spelt: dict[str, str], name: str) -> str | None:
    if template is None:
        return None
    try:
        return template.format(**spelt)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(
            f"run {name}: published {template!r} cannot be filled from {sorted(spelt)} ({exc}); "
            "write each swept option as {option}"
        ) from None


def expand(data: Any) -> Any:
    """A recipe's raw mapping with each sweep or grid run replaced by its runs, and claims' sweep names too.

    A recipe's ``sweep:`` (one training option) and ``grid:`` (two) as the runs they stand for.

    A paper's sweep table varies one setting (ESimCSE's dup rate, MoCoSE's EMA decay) or two (MoCoSE's
    projection x predictor layers) with everything else fixed. A recipe writes it once::

        runs:
          - name: dup-rate
            method: esimcse
            config: esimcse-minilm-cpu
            seeds: [1, 2, 3]
            sweep: {option: dup_rate, values: [0.08, 0.16, 0.24, 0.32]}
            published: "esimcse-arxiv/table9/dup-rate#dup_rate={dup_rate}"

    and it is read as one run per value (per pair of values for a grid, the first axis outermost), named
    deterministically ``<name>.<option>-<value>[.<option>-<value>]`` (``dup-rate.dup_rate-0.08``; a character
    a folder name cannot hold becomes ``_``), each with the swept options added to its overrides and its
    published cell the template filled with them (``{dup_rate}`` -> ``0.08``: Python's ``str`` of the YAML
    value, which is how the registry's column names spell the papers' settings; an axis' ``labels``, one per
    value, replace them where the paper spells a setting otherwise:
    ``{option: fgsm_epsilon, values: [0, 5.0e-9], labels: ["no FGSM", "eps=5e-9"]}``). ``also_published`` is
    filled the same way. A claim may name the sweep itself among its settings (``among: [dup-rate]``): that
    stands for every run of the sweep, in its order.
    """
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        return data
    runs: list[Any] = []
    members: dict[str, list[str]] = {}
    for run in data["runs"]:
        if isinstance(run, dict) and (written := [k for k in _EXPANDED if k in run]):
            raise ValueError(
                f"run {run.get('name', '?')}: {written[0]} is filled by sweep or grid, not written"
            )
        if not isinstance(run, dict) or ("sweep" not in run and "grid" not in run):
            runs.append(run)
            continue
        base = str(run.get("name", "?"))
        rest = {k: v for k, v in run.items() if k not in ("sweep", "grid")}
        names = []
        for point, spelt in _points(run):
            name = point_name(base, point)
            overlap = sorted(set(point) & {str(k).replace("-", "_") for k in rest.get("overrides") or {}})
            if overlap:
                raise ValueError(f"run {base}: {overlap[0]} is swept and also in its overrides")
            expanded = {
                **rest,
                "name": name,
                "overrides": {**(rest.get("overrides") or {}), **point},
                "published": _cell(rest.get("published"), spelt, base),
                "also_published": [_cell(t, spelt, base) for t in rest.get("also_published") or []],
                "sweep_of": base,
                "point": point,
            }
            if rest.get("label"):
                expanded["label"] = f"{rest['label']} ({', '.join(f'{k}={v}' for k, v in spelt.items())})"
            runs.append(expanded)
            names.append(name)
        members[base] = names
    if members and isinstance(data.get("claims"), list):
        data = {**data, "claims": [_claim_with_members(c, members) for c in data["claims"]]}
    return {**data, "runs": runs}


def _claim_with_members(claim: Any, members: dict[str, list[str]]) -> Any:
    if not isinstance(claim, dict):
        return claim
    out = dict(claim)
    for field in listing_fields():
        if isinstance(out.get(field), list):
            out[field] = [m for s in out[field] for m in members.get(s, [s])]
    return out
