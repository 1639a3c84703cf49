"""The analysis registry: one :class:`Analysis` subclass per analysis, registered once by a decorator.

Modelled on lm-evaluation-harness' ``lm_eval/api/registry.py`` (``register_model`` / ``get_model``): a
class declares everything about its analysis (name, command, config type, the data files it reads,
compute, result type, the report's tables and figure), and every consumer reads the registry instead of
a string key: the CLI (``stsbench.commands.analyses`` makes one command per entry, its options from the
config type), the library (:func:`stsbench.analyses.runner.run_analysis`), the report's collector, tables,
figures and sections. Adding an analysis is one decorated class; one in another package registers when
imported, which the CLI and the report do for every module named under the ``stsbench.analyses``
entry-point group.

The built-in analyses live in :mod:`stsbench.analyses.builtin`, imported on the first lookup (the report
tables it holds import the report's table module, whose package imports the collector, which reads this
registry).
"""

from __future__ import annotations

import dataclasses
import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from stsbench.errors import StsbenchError

BUILTIN = "stsbench.analyses.builtin"
ENTRY_POINTS = "stsbench.analyses"
_REGISTRY: dict[str, Analysis] = {}
_loaded = False
A = TypeVar("A", bound="type[Analysis]")


def resolve(ref: Any) -> Any:
    """Return ``ref`` itself, or the object a ``"module:name"`` string names (imported now)."""
    if not isinstance(ref, str):
        return ref
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


def option(default: Any, help: str) -> Any:  # noqa: A002 - typer's and click's name for it
    """A config field with its CLI help; the flag is ``--`` + the field name with ``-`` for ``_``."""
    return dataclasses.field(default=default, metadata={"help": help})


@dataclasses.dataclass(frozen=True)
class NoOptions:
    """The config of an analysis without options of its own."""


class Analysis(ABC):
    """What one analysis is.

    Subclass, set the class attributes (``table_builders`` and ``draw`` among them), implement
    :meth:`compute`, decorate with :func:`register_analysis`.

    Per model the results go to ``<output>/<model_slug>/<pooler>/<stem>.json`` (see
    :func:`stsbench.results.store.analysis_path`), ``stem`` being the name plus :meth:`variant`.
    """

    name: ClassVar[str]  # ``length_bias``: the results files' ``analysis`` key and file stem
    command: ClassVar[str]  # ``length-bias``: the CLI command
    title: ClassVar[str]  # the report section's title
    describe: ClassVar[str]  # "length-bias results": what a report without them says is missing
    make: ClassVar[str]  # the command that makes them (RESULTS: the report's --results folder)
    help: ClassVar[str]  # the command's one-line help
    config_type: ClassVar[type] = NoOptions  # a frozen dataclass; fields made with :func:`option`
    # a dataclass with ``to_dict()``: the results file's ``result`` (or its ``"module:Name"``)
    result_type: ClassVar[type | str]
    uses_data_dir: ClassVar[bool] = True  # reads SentEval's data folder (gets ``--data-dir``)
    # the report's tables: each ``(variant, {label: result}) -> Table``; the figure: ``({label: result},
    # stem) -> files``; a function or its ``"module:name"`` (imported when used); or override
    # :meth:`tables` / :meth:`figure`
    table_builders: ClassVar[tuple[Callable[[str, dict[str, Any]], Any] | str, ...]] = ()
    draw: ClassVar[Callable[[dict[str, Any], Path], list[Path]] | str | None] = None

    def prepare(self, config: Any) -> Any:
        """Check the options and read what every model shares, before any model loads (default: nothing)."""
        return None

    def data_files(self, config: Any, data_dir: Path | None, prepared: Any) -> tuple[Path, list[Path]]:
        """The folder provenance paths are relative to, and the files read (their sha256 is recorded)."""
        return Path(data_dir or "."), []

    def variant(self, config: Any) -> str | None:
        """Return the option that selects the data (``words``, ``dev``).

        It joins the file stem, so runs with other data do not overwrite each other.
        """
        return None

    def record(self, config: Any) -> dict[str, Any]:
        """The config as the results file stores it (every option that changes the numbers)."""
        return {k: str(v) if isinstance(v, Path) else v for k, v in dataclasses.asdict(config).items()}

    @abstractmethod
    def compute(
        self, encoder: Any, config: Any, *, data_dir: Path | None, prepared: Any, batch_size: int
    ) -> Any:
        """Compute one model's result (an instance of ``result_type``)."""

    def extra_files(self, result: Any, path: Path) -> list[Path]:
        """Write files besides the results JSON at ``path`` (default: none); return them."""
        return []

    def tables(self, variant: str, results: dict[str, Any]) -> list[Any]:
        """The report's tables (:class:`stsbench.tabular.Table`) of ``{label: result}``."""
        return [resolve(build)(variant, results) for build in self.table_builders]

    def terminal_tables(self, variant: str, results: dict[str, Any]) -> list[Any]:
        """What the command prints: the report's tables (plus any detail the report leaves out)."""
        return self.tables(variant, results)

    def terminal_notes(self, results: dict[str, Any]) -> list[str]:
        """Lines printed after the tables (default: none)."""
        return []

    def figure(self, results: dict[str, Any], stem: Path) -> list[Path]:
        """Draw ``{label: result}`` to ``stem.png`` and ``stem.svg``; return the files (none without ``draw``)."""
        return [] if self.draw is None else resolve(self.draw)(results, stem)

    def result_class(self) -> type:
        """The result dataclass (``result_type`` imported when named as a string)."""
        return resolve(self.result_type)

    def make_config(self, **options: Any) -> Any:
        """Build the config from keyword options; an unknown one is a one-line error."""
        known = {f.name for f in dataclasses.fields(self.config_type)}
        unknown = sorted(set(options) - known)
        if unknown:
            raise StsbenchError(
                f"{self.name} has no option {', '.join(unknown)}; its options: {', '.join(sorted(known)) or 'none'}"
            )
        return self.config_type(**options)


def register_analysis(cls: A) -> A:
    """Class decorator: add one instance of ``cls`` under ``cls.name``; a second use of a name fails."""
    if not (isinstance(cls, type) and issubclass(cls, Analysis)):
        raise TypeError(f"{cls!r} is not an Analysis subclass")
    for attr in ("name", "command", "title", "describe", "make", "help", "result_type"):
        if not hasattr(cls, attr):
            raise TypeError(f"analysis {cls.__name__} does not set {attr}")
    if not dataclasses.is_dataclass(cls.config_type):
        raise TypeError(f"analysis {cls.__name__}: config_type must be a dataclass")
    _load_builtins()  # the built-in ones come first, whoever registers first
    if cls.name in _REGISTRY or any(a.command == cls.command for a in _REGISTRY.values()):
        raise ValueError(f"analysis {cls.name!r} (command {cls.command!r}) is already registered")
    _REGISTRY[cls.name] = cls()
    return cls


def unregister_analysis(name: str) -> None:
    """Remove an analysis (for tests that register a toy one)."""
    _REGISTRY.pop(name, None)


def _load_builtins() -> None:
    """Import the built-in analyses, then the modules packages name under :data:`ENTRY_POINTS`.

    An analysis in another package registers by being imported.
    """
    global _loaded  # noqa: PLW0603 - a once-only import flag
    if not _loaded:
        _loaded = True
        importlib.import_module(BUILTIN)
        for entry in metadata.entry_points(group=ENTRY_POINTS):
            entry.load()


def all_analyses() -> list[Analysis]:
    """Every registered analysis, in registration order (the report's section order)."""
    _load_builtins()
    return list(_REGISTRY.values())


def get_analysis(name: str) -> Analysis:
    """Return the analysis registered as ``name`` (a one-line error naming the known ones otherwise)."""
    _load_builtins()
    if name not in _REGISTRY:
        raise StsbenchError(f"unknown analysis {name!r}; known: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]


def find_analysis(name: str) -> Analysis | None:
    """Return the analysis registered as ``name``, or None."""
    _load_builtins()
    return _REGISTRY.get(name)
