"""Recipes: a paper's table as data, what ``stsbench reproduce`` runs (train -> evaluate -> analyses -> report).

A recipe (YAML, validated by :class:`Recipe`) names the published rows it reproduces (registry keys), its runs
(method, a packaged config by name, overrides, seeds, corpus and its first lines, what each seed is evaluated
on, the published row or cell its seeds are held against; a ``sweep:`` or ``grid:`` stands for one run per
setting, :mod:`stsbench.recipes.sweeps`), an optional baseline model evaluated as it is, the
analyses (names from :data:`stsbench.analyses.registry.ANALYSES`, on which runs' seeds), and the report
(title, baseline group). The built-in recipes are the YAML files beside this module, one per seed-paper table
stsbench can address, in a ``-paper`` and an ``-official`` flavour where the paper and its code differ, and
``cpu-mini`` (the checked-in CPU mini-replication). A user's recipe is a file path. :func:`load_recipe`
checks every name a recipe holds (registry key, config, method, option, task, mode, analysis, corpus) and
refuses a bad one in one line naming the file.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stsbench.errors import StsbenchError, validation_line
from stsbench.registry import Registry, packaged_files
from stsbench.stats.claims import Claim, fewest_listed

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
    # filled by a sweep or grid (stsbench.recipes.sweeps), never written: the run it expands from, its settings
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

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, data: Any) -> Any:
        from stsbench.recipes.sweeps import expand

        return expand(data)

    @model_validator(mode="after")
    def _verdict_reason(self) -> Recipe:
        if not self.verdict and not (self.verdict_reason or "").strip():
            raise ValueError(
                "verdict: false needs a verdict_reason: one line saying why its cells are not judged"
            )
        return self

    @model_validator(mode="after")
    def _names(self) -> Recipe:
        names = [r.name for r in self.runs]
        if len(set(names)) != len(names):
            raise ValueError(f"run names repeat: {names}")
        for a in self.analyses:
            unknown = sorted(set(a.runs or ()) - set(names))
            if unknown:
                raise ValueError(f"analysis {a.name} names runs {unknown}, not among {names}")
            if a.baseline and self.baseline is None:
                raise ValueError(f"analysis {a.name} asks for the baseline, and the recipe has none")
        if self.report is not None:  # what `report --baseline` finds a group by: a run's name or a method's
            from stsbench.reports.collect import METHOD_ORDER

            if self.report.baseline not in names and self.report.baseline not in METHOD_ORDER:
                raise ValueError(
                    f"report.baseline {self.report.baseline!r} names no run and no method: give a run's name "
                    f"({', '.join(names[:8])}{', ...' if len(names) > 8 else ''}) or one of {', '.join(METHOD_ORDER)}"
                )
        baseline = [self.baseline.model] if self.baseline is not None else []  # a claim against the backbone
        for i, claim in enumerate(self.claims, start=1):
            unknown = [s for s in claim.settings() if s not in names + baseline]
            if unknown:
                also = f" or the baseline {baseline[0]!r}" if baseline else ""
                raise ValueError(f"claim {i} names {unknown}, not among the runs {names}{also}")
        from stsbench.published.registry import split_cell

        for r in self.runs:
            for address in r.addresses:
                if split_cell(address)[0] not in self.published:
                    raise ValueError(
                        f"run {r.name}: published row {split_cell(address)[0]} is not in the recipe's published"
                    )
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
            unknown = [n for n in runs if n not in names and n not in sweeps]
            if unknown:
                import difflib

                every = [*sweeps, *names]
                near = difflib.get_close_matches(unknown[0], every, n=1, cutoff=0.6)
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
            left = [r.name for r in self.runs if r.name not in wanted]
            if left:
                omitted.append(f"runs not run (--runs): {', '.join(left)}")
        if seeds is not None:
            every = sorted({s for r in chosen for s in r.seeds})
            stray = [s for s in seeds if s not in every]
            if stray:
                raise StsbenchError(f"--seeds {stray[0]}: the runs chosen have seeds {every}")
            kept = []
            for r in chosen:
                mine = tuple(s for s in r.seeds if s in seeds)
                if mine:
                    kept.append(r.model_copy(update={"seeds": mine}))
            left_seeds = [s for s in every if s not in seeds]
            if left_seeds:
                omitted.append(f"seeds not run (--seeds): {', '.join(map(str, left_seeds))}")
            chosen = kept
        names = {r.name for r in chosen}
        claims = []
        for i, claim in enumerate(self.claims, start=1):
            narrowed = _narrowed(claim, names)
            if narrowed is None:
                omitted.append(f"claim {i} not judged: it names runs not run ({claim.text or claim.kind})")
            else:
                claims.append(narrowed)
        analyses = tuple(
            a.model_copy(update={"runs": tuple(r for r in a.runs if r in names)}) if a.runs is not None else a
            for a in self.analyses
            if a.runs is None or any(r in names for r in a.runs) or a.baseline
        )
        return self.model_copy(
            update={
                "runs": tuple(chosen),
                "claims": tuple(claims),
                "analyses": analyses,
                "omitted": tuple(omitted),
            }
        )

    def sweeps(self) -> dict[str, tuple[Run, ...]]:
        """Each sweep or grid by its name, with its runs in order."""
        out: dict[str, list[Run]] = {}
        for r in self.runs:
            if r.sweep_of is not None:
                out.setdefault(r.sweep_of, []).append(r)
        return {k: tuple(v) for k, v in out.items()}


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


def _builtin() -> Registry[Path]:
    return packaged_files("recipe", __name__)


def recipe_names() -> list[str]:
    """The built-in recipes' names, sorted."""
    return _builtin().names()


def recipe_file(name_or_path: str | Path) -> Path:
    """An existing file as it is, else the built-in recipe of that name (one line with the nearest if none)."""
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    text = str(name_or_path)
    if "/" in text or "\\" in text:
        raise StsbenchError(f"recipe file {path} does not exist; give a YAML file or a built-in recipe")
    stem = re.sub(r"\.ya?ml$", "", text, flags=re.IGNORECASE)
    builtin = _builtin()
    if stem != text and builtin.canonical(stem) is None:
        # a file name meant a file: the ~50 built-in names are no answer to a mistyped path (#73)
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
    try:
        recipe = Recipe.model_validate(data)
    except ValidationError as exc:
        raise StsbenchError(f"recipe {where}: {validation_line(exc)}") from None
    from stsbench.recipes.check import check_recipe

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
