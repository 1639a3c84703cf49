"""The analysis registry: one :class:`Analysis` subclass per analysis, in :data:`ANALYSES`; what they all share.

:data:`ANALYSES` is a :class:`stsbench.registry.Registry`, the shape tasks, methods and poolers share. A
class declares everything about its analysis (name, command, config type, the data files it reads,
compute, result type, the report's tables and figure), and every consumer reads the registry instead of a
string key: the CLI (``stsbench.commands.analyses`` makes one command per entry, its options from the
config type), the library (:func:`stsbench.analyses.runner.run_analysis`) and the report (its collector,
sections, tables and figures). Adding an analysis is one class decorated with :func:`register_analysis`;
one in another package registers under the ``stsbench.analyses`` entry-point group: ``name =
"pkg.module:Class"`` (imported when first looked up) or ``name = "pkg.module"`` (imported with the other
plugins; its decorators register).

The built-in analyses are one module each (``length_bias``, ``repetition``, ``geometry``:
alignment/uniformity, spectra and the cosine density), one registry line each at the end of this module, as
the built-in tasks are in :mod:`stsbench.tasks.registry`: a lazy ``"module:Class"`` target, the module
imported when the analysis is first looked up; it imports numpy at the top, and pandas, scipy and matplotlib
only where a table or a figure is made, so building the CLI stays fast. Each module holds its analysis whole:
its options (a frozen dataclass: the CLI's flags come from its fields), the data files it reads (they go into
provenance), its compute, result type, the report's tables, its figure, its figures one by one, and the class
that names them. :class:`StsbSplit` is the base of an analysis of one STS-B split.
Nothing here imports the reports: an analysis' tables are :class:`stsbench.tabular.Table` objects, a type
below both, and the reports read this registry, never the other way round.
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from stsbench.data.sts import pair_files
from stsbench.errors import StsbenchError
from stsbench.options import fields_of, one_line, option  # noqa: F401 - option: for an analysis' config (plugins too)
from stsbench.registry import Registry, load_target
from stsbench.tasks.registry import STS_TASK_NAMES

# a task named as the papers' columns do (STS-B, SICK-R), for the analyses' tables and figures
from stsbench.tasks.registry import short_name as short_name

# -- registry ------------------------------------------------------------------------------------------------


ENTRY_POINTS = "stsbench.analyses"
# name -> its Analysis class (or the "module:Class" of an entry point not imported yet); ``length-bias``
# finds ``length_bias``, as the command is spelled
ANALYSES: Registry[type[Analysis]] = Registry(
    "analysis", entry_points=ENTRY_POINTS, normalise=lambda name: name.replace("-", "_").lower()
)
_instances: dict[type, Analysis] = {}
A = TypeVar("A", bound="type[Analysis]")


@dataclasses.dataclass(frozen=True)
class Number:
    """One figure of an analysis result, placed as the report's table over seeds shows it.

    ``row`` and ``column`` mirror the paper's table (``|cos - g'| x100, LD <= 3`` x ``STS12``); the value is at
    the scale the tables print (x100 where the paper prints x100), unrounded; None where undefined (a group
    without pairs). ``headline``: drawn in the figure of each seed's value.
    """

    row: str
    column: str
    value: float | None
    decimals: int = 2
    headline: bool = False


@dataclasses.dataclass(frozen=True)
class Encodes:
    """What one model's run of an analysis encodes, as reproduce's cost estimate counts it.

    ``splits``: the pair data ``(task, split)`` it reads; ``sentences``: how many others. Sentences an
    evaluation of the model has encoded come from the embedding cache.
    """

    splits: tuple[tuple[str, str], ...] = ()
    sentences: int = 0


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The config of an analysis without options of its own."""


class Analysis(ABC):
    """What one analysis is.

    Subclass, set the class attributes (``table_builders`` and ``draw`` among them), implement
    :meth:`compute`, decorate with :func:`register_analysis`.

    Per model the results go to ``<output>/<model_slug>/<pooler>/<stem>.json`` (see
    :func:`stsbench.results.write.analysis_path`), ``stem`` being the name plus :meth:`variant`.
    """

    name: ClassVar[str]  # ``length_bias``: the results files' ``analysis`` key and file stem
    command: ClassVar[str]  # ``length-bias``: the CLI command
    title: ClassVar[str]  # the report section's title
    help: ClassVar[str]  # the command's one-line help
    # a frozen dataclass (pydantic's, or a standard one read through pydantic); fields made with
    # :func:`stsbench.options.option`, their bounds checked as a training option's are
    config_type: ClassVar[type] = NoOptions
    # a dataclass with ``to_dict()``: the results file's ``result`` (or its ``"module:Name"``)
    result_type: ClassVar[type | str]
    uses_data_dir: ClassVar[bool] = True  # reads SentEval's data folder (gets ``--data-dir``)
    # the report's tables: each ``(variant, {label: result}) -> Table``; the figure: ``({label: result},
    # stem) -> files``; a function or its ``"module:name"`` (imported when used); or override
    # :meth:`tables` / :meth:`figure`
    table_builders: ClassVar[tuple[Callable[[str, dict[str, Any]], Any] | str, ...]] = ()
    draw: ClassVar[Callable[[dict[str, Any], Path], list[Path]] | str | None] = None
    # a result's figures as :class:`Number` rows (the report's table over seeds): ``result -> [Number]``;
    # none: the report shows each seed's checkpoint in the tables above instead
    number_builder: ClassVar[Callable[[Any], list[Number]] | str | None] = None
    # a result against a published analysis entry: ``(result, entry) -> {column: (measured, published, interval)}
    # | str``, in points (x100 where the paper prints a fraction; interval: one checkpoint's bootstrap interval
    # over pairs, or None), or why they are not comparable (what ``check`` judges); none: no entry is checked
    published_builder: ClassVar[Callable[[Any, Any], dict[str, tuple] | str] | str | None] = None

    @property
    def describe(self) -> str:
        """What a report without its results says is missing (default: ``<command> results``)."""
        return f"{self.command} results"

    @property
    def make(self) -> str:
        """The command that makes its results (RESULTS: the report's --results folder; default: one model)."""
        return f"stsbench {self.command} --model MODEL --output RESULTS/analyses"

    def prepare(self, config: Any) -> Any:
        """Check the options and read what every model shares, before any model loads (default: nothing)."""
        return None

    def pair_splits(self, config: Any) -> tuple[tuple[str, str], ...]:
        """The SentEval pair data ``(task, split)`` it reads (default: none); the next two hooks read them."""
        return ()

    def data_files(self, config: Any, data_dir: Path | None, prepared: Any) -> tuple[Path, list[Path]]:
        """The folder provenance paths are relative to, and the files read (their sha256 is recorded).

        Default: the files of :meth:`pair_splits` under the data folder.
        """
        root = Path(data_dir or ".")
        return root, [f for task, split in self.pair_splits(config) for f in pair_files(root, task, split)]

    def encodes(self, config: Any) -> Encodes | None:
        """What one model's run encodes (:class:`Encodes`).

        Default: the :meth:`pair_splits`; None where there are none: not known, the estimate says so.
        """
        splits = self.pair_splits(config)
        return Encodes(splits=splits) if splits else None

    def variant(self, config: Any) -> str | None:
        """Return the option that selects the data (``words``, ``dev``).

        It joins the file stem, so runs with other data do not overwrite each other.
        """
        return None

    def record(self, config: Any) -> dict[str, Any]:
        """The config as the results file stores it (every option that changes the numbers)."""
        return {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(config).items()}

    @abstractmethod
    def compute(self, encoder: Any, config: Any, *, data_dir: Path | None, prepared: Any, batch_size: int):
        """Compute one model's result (an instance of ``result_type``)."""

    def extra_files(self, result: Any, path: Path) -> list[Path]:
        """Write files besides the results JSON at ``path`` (default: none); return them."""
        return []

    def tables(self, variant: str, results: dict[str, Any]) -> list[Any]:
        """The report's tables (:class:`stsbench.tabular.Table`) of ``{label: result}``."""
        return [load_target(build)(variant, results) for build in self.table_builders]

    def terminal_tables(self, variant: str, results: dict[str, Any]) -> list[Any]:
        """What the command prints: the report's tables (plus any detail the report leaves out)."""
        return self.tables(variant, results)

    def terminal_notes(self, results: dict[str, Any]) -> list[str]:
        """Lines printed after the tables (default: none)."""
        return []

    def figure(self, results: dict[str, Any], stem: Path) -> list[Path]:
        """Draw ``{label: result}`` to ``stem.png`` and ``stem.svg``; return the files (none without ``draw``)."""
        return [] if self.draw is None else load_target(self.draw)(results, stem)

    def numbers(self, result: Any) -> list[Number]:
        """The result's figures for the table over seeds (none without ``number_builder``)."""
        return [] if self.number_builder is None else load_target(self.number_builder)(result)

    def published_figures(self, result: Any, entry: Any) -> dict[str, tuple] | str:
        """``{column: (measured on result, published, interval)}`` for the columns of a published entry, in points.

        A string says why ``result`` cannot be held against ``entry`` (another unit, threshold or row).
        """
        if self.published_builder is None:
            return f"the {self.name} analysis is not compared with published tables"
        return load_target(self.published_builder)(result, entry)

    def result_class(self) -> type:
        """The result dataclass (``result_type`` imported when named as a string)."""
        return load_target(self.result_type)

    def make_config(self, **options: Any) -> Any:
        """Build the config from keyword options, validated; an unknown option or a bad value is a one-line error."""
        from pydantic import TypeAdapter, ValidationError

        fields = fields_of(self.config_type)
        unknown = sorted(set(options) - set(fields))
        if unknown:
            raise StsbenchError(
                f"{self.name} has no option {', '.join(unknown)}; its options: {', '.join(sorted(fields)) or 'none'}"
            )
        try:
            return TypeAdapter(self.config_type).validate_python(options)
        except ValidationError as exc:
            raise StsbenchError(f"{self.command}: {one_line(exc, fields)}") from None


STSB = "STSBenchmark"  # an STS-B analysis' task
Split = Literal["train", "dev", "test"]
SPLIT_HELP = "STS-B split."


class StsbSplit(Analysis):
    """An analysis of an STS-B split: its files in provenance, the split in the file stem."""

    def pair_splits(self, config: Any) -> tuple[tuple[str, str], ...]:
        """The STS-B split of ``--split`` (its file in provenance, its sentences in the estimate)."""
        return ((STSB, config.split),)

    def variant(self, config: Any) -> str:
        """The split."""
        return config.split

    def record(self, config: Any) -> dict[str, Any]:
        """The task beside the options."""
        return {"task": STSB, **super().record(config)}


def _check_class(cls: Any) -> None:
    """What :func:`register_analysis` asks of a class (a ``TypeError`` names the class and what is missing)."""
    if not (isinstance(cls, type) and issubclass(cls, Analysis)):
        raise TypeError(f"{cls!r} is not an Analysis subclass")
    for attr in ("name", "command", "title", "help", "result_type"):
        if not hasattr(cls, attr):
            raise TypeError(f"analysis {cls.__name__} does not set {attr}")
    if not dataclasses.is_dataclass(cls.config_type):
        raise TypeError(f"analysis {cls.__name__}: config_type must be a dataclass")


def _other(cls: type[Analysis]) -> str | None:
    """The registered analysis, another class than ``cls``, that has its name or command; None if none."""
    for key in ANALYSES.names():
        other = ANALYSES.target(key)
        another = isinstance(other, type) and other is not cls
        if another and (cls.command == other.command or ANALYSES.canonical(cls.name) == key):
            return key
    return None


def register_analysis(cls: A) -> A:
    """Class decorator: register ``cls`` under ``cls.name``; a second use of a name or command fails."""
    _check_class(cls)
    key = ANALYSES.canonical(cls.name)
    if _other(cls) is not None or (key is not None and ANALYSES.target(key) is cls):
        raise ValueError(f"analysis {cls.name!r} (command {cls.command!r}) is already registered")
    ANALYSES.register(cls.name, cls)  # an entry point's lazy "module:Class" naming it is this class, no clash
    return cls


def unregister_analysis(name: str) -> None:
    """Remove an analysis (for tests that register a toy one)."""
    cls = ANALYSES.target(name) if name in ANALYSES else None
    ANALYSES.unregister(name)
    _instances.pop(cls, None)


def _instance(name: str) -> Analysis:
    """The one instance of the class registered as ``name`` (an entry point's class is checked when first used)."""
    cls = ANALYSES.get(name)
    if cls not in _instances:
        _check_class(cls)
        other = _other(cls)
        if other is not None:
            raise StsbenchError(
                f"the analysis plugin {name!r} ({cls.__module__}.{cls.__qualname__}) takes the name or command "
                f"of the analysis {other!r}; rename it"
            )
        _instances[cls] = cls()
    return _instances[cls]


def all_analyses() -> list[Analysis]:
    """Every registered analysis, in registration order (the report's section order): built-ins, then plugins."""
    found: list[Analysis] = []
    names: list[str] = []
    while len(names) < len(ANALYSES):  # importing an entry point's module may register more (its decorators)
        names = ANALYSES.names()
        # an entry point named otherwise than its class: one analysis
        found = list(dict.fromkeys(_instance(name) for name in names))
    return found


def get_analysis(name: str) -> Analysis:
    """Return the analysis registered as ``name`` (``length-bias`` spells ``length_bias``).

    An unknown name is a one-line ``StsbenchError`` with the nearest known one.
    """
    if name not in ANALYSES:
        all_analyses()  # an entry point may register its class under its own name
    return _instance(name)


def find_analysis(name: str) -> Analysis | None:
    """Return the analysis registered as ``name``, or None."""
    return _instance(name) if name in ANALYSES else None


# the built-ins, registered as this module is imported, so that ANALYSES lists them before any plugin: in the
# order the commands and the report's sections follow
ANALYSES.register("length_bias", "stsbench.analyses.length_bias:LengthBias")
ANALYSES.register("repetition_probe", "stsbench.analyses.repetition:RepetitionProbe")
ANALYSES.register("align_uniform", "stsbench.analyses.geometry:AlignUniform")
ANALYSES.register("spectrum", "stsbench.analyses.geometry:SpectrumAnalysis")
ANALYSES.register("cosine_density", "stsbench.analyses.geometry:CosineDensity")


# -- common --------------------------------------------------------------------------------------------------


# ESimCSE COLING Table 7's seven test sets, in its column order
LENGTH_TASKS = list(STS_TASK_NAMES)


Interval = tuple[float, float] | None  # one checkpoint's bootstrap interval over pairs, in points; None: none


def published_pairs(
    measured: dict[str, float | None],
    entry: Any,
    scale: float = 1.0,
    intervals: dict[str, Interval] | None = None,
) -> dict[str, tuple[float, float, Interval]]:
    """``{column: (measured x scale, published x scale, interval)}`` for the entry's columns measured here."""
    return {
        c: (v * scale, float(entry.values[c]) * scale, (intervals or {}).get(c))
        for c, v in measured.items()
        if v is not None and c in entry.values
    }
