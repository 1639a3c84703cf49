"""An STS task declared as data: its files, how to read them, its name and version (no numpy, no reading).

After MTEB's STS task files (``mteb/tasks/sts/eng/sts12_sts.py``), with less metadata: a task is one
:class:`STSSpec`. Two layouts, as SentEval's:

- ``splits``: one tab-separated file per split (STS-B, SICK-R), ``columns`` = (gold, sentence 1, sentence 2),
  an optional ``header`` line; the figure is cosine Spearman on the test split (dev in dev mode);
- ``subsets``: SentEval's STS12-16 layout, ``STS.input.<subset>.txt`` (two tab-separated sentences a line)
  beside ``STS.gs.<subset>.txt`` (one gold score a line, an empty one drops the pair), test only; the figure
  is ``all``, Spearman over every pair of every subset (``mean`` and ``wmean`` are kept too).

Either way the figure is the Spearman of every loaded pair's cosine against its gold, which is what a
results file's per-pair sidecar is checked against.

The seven built-in tasks are at the bottom; :mod:`stsbench.tasks.registry` registers them, and a plugin
registers its own (``docs/extending.md``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from stsbench.data.integrity import register_canonical
from stsbench.errors import StsbenchError

Aggregation = Literal["all", "split"]


@dataclass(frozen=True, eq=False)
class STSSpec:
    """One STS task: name, aliases, version, where its files are and how each is read."""

    name: str  # SentEval's name (what results files and ``--tasks`` use)
    # relative: a folder under ``<data-dir>``; absolute: the task's own (a plugin's: ``Path(__file__).parent / ...``)
    folder: str | Path
    splits: Mapping[str, str] = field(default_factory=dict)  # split -> file in ``folder``
    subsets: tuple[str, ...] = ()  # or the STS12-16 layout: its subsets, in SentEval's order
    columns: tuple[int, int, int] = (0, 1, 2)  # a split file's tab-separated gold, sentence 1, sentence 2
    header: bool = False  # a split file's first line is a header
    scale: tuple[float, float] = (0.0, 5.0)  # gold scores outside it are refused (a damaged file)
    aliases: tuple[str, ...] = ()  # other names ``--tasks`` accepts; the first is the column reports print
    version: int = 1  # raise it when a change makes the figure differ: results of another version are refused
    # a task's own canonical files: ``{file in folder: {"sha256": ..., "size": ...}}``; a run refuses files that
    # differ, as it refuses modified SentEval files (whose checksums are in ``stsbench/data/manifest.json``)
    checksums: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    kind: ClassVar[str] = "sts"

    def __post_init__(self) -> None:
        where = f"STS task {self.name!r}"
        if not self.name or not isinstance(self.name, str):
            raise StsbenchError(f"an STS task needs a name (got {self.name!r})")
        if bool(self.splits) == bool(self.subsets):
            raise StsbenchError(
                f"{where}: give either splits (one file per split) or subsets (STS12-16 layout)"
            )
        if self.splits and "test" not in self.splits:
            raise StsbenchError(f"{where}: its splits need a 'test' file (has {', '.join(self.splits)})")
        if not isinstance(self.version, int) or isinstance(self.version, bool) or self.version < 1:
            raise StsbenchError(f"{where}: version must be an integer >= 1 (got {self.version!r})")
        if len(self.columns) != 3 or len(set(self.columns)) != 3 or min(self.columns) < 0:
            raise StsbenchError(
                f"{where}: columns must be three distinct field numbers (gold, sentence 1, 2)"
            )
        if not float(self.scale[0]) < float(self.scale[1]):
            raise StsbenchError(f"{where}: scale {self.scale} is empty")
        object.__setattr__(self, "aliases", tuple(self.aliases))
        object.__setattr__(self, "subsets", tuple(self.subsets))
        if self.checksums:
            register_canonical(self.folder, self.checksums, where)

    @property
    def aggregation(self) -> Aggregation:
        """``all`` (Spearman over every subset's pairs, STS12-16) or ``split`` (Spearman on one split)."""
        return "all" if self.subsets else "split"

    def split_for(self, mode: str) -> str:
        """The split a mode reports: dev in ``dev`` mode, else test (the subsets layout: always test)."""
        return "dev" if mode == "dev" and not self.subsets else "test"

    def supports(self, mode: str) -> bool:
        """Whether the task has the split ``mode`` reports (STS12-16 have no dev split)."""
        if self.subsets:
            return mode != "dev"
        return self.split_for(mode) in self.splits

    def root(self, data_dir: Path) -> Path:
        """The task's folder: ``folder`` under ``data_dir``, or ``folder`` itself when absolute."""
        return Path(data_dir) / self.folder  # an absolute ``folder`` replaces data_dir


def _year(name: str, subsets: tuple[str, ...]) -> STSSpec:
    return STSSpec(name, f"downstream/STS/{name}-en-test", subsets=subsets)


# SentEval's STS tasks in SimCSE's order; files and reading rules as SimCSE's SentEval fork has them
BUILTIN_STS: tuple[STSSpec, ...] = (
    _year("STS12", ("MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews")),
    # STS13 has no SMT subset in SentEval (licence), as in the papers
    _year("STS13", ("FNWN", "headlines", "OnWN")),
    _year("STS14", ("deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news")),
    _year("STS15", ("answers-forums", "answers-students", "belief", "headlines", "images")),
    _year("STS16", ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")),
    STSSpec(
        "STSBenchmark",
        "downstream/STS/STSBenchmark",
        splits={"train": "sts-train.csv", "dev": "sts-dev.csv", "test": "sts-test.csv"},
        columns=(4, 5, 6),
        aliases=("STS-B",),
    ),
    STSSpec(
        "SICKRelatedness",
        "downstream/SICK",
        splits={"train": "SICK_train.txt", "dev": "SICK_trial.txt", "test": "SICK_test_annotated.txt"},
        columns=(3, 1, 2),
        header=True,
        scale=(1.0, 5.0),
        aliases=("SICK-R",),
    ),
)
