"""Every file stsbench writes for later reading, documented once: what it holds and where it goes.

Paths in these files are never the machine's (:mod:`stsbench.results.write`): relative to the ``--output``
the file was written under (a training run's copied files: to their own folder), the data folder by its name.

Each file (or JSON-lines record) carries ``kind`` and ``schema_version`` (:data:`SCHEMA_VERSION`, the one
constant every reader checks; a file without it is :data:`FIRST_VERSION`); the paths are built by
:mod:`stsbench.results.write`. Each kind has one typed definition and one reader, listed with their JSON schemas
by this module (published in ``docs/schema/``):

- task result, ``kind`` :data:`TASK_KIND` (:class:`TaskResult`): ``<output>/<model_slug>/<pooler>/<mode>/<task>.json``
  (a prompted model's ``<model_slug>`` ends in ``+prompt-<8 hex of the prompt>``, its ``model.prompt`` and
  ``model.prompt_name`` say which; both null without a prompt);
  its ``provenance.data_modified`` (every result and average has it) names the data files that differ from the
  canonical ones of ``stsbench/data/manifest.json`` (path -> how; null when all are canonical, the only value a
  run without ``--allow-modified-data`` can write; absent in files written before it existed, read as null);
  its ``task_version`` is the version of the task that scored it (``STSSpec.version``, 1 for the built-ins;
  absent in files written before versions, read as 1): check and compare refuse another version than the task's;
  its ``interval`` is the 95% interval of ``reported`` (None with ``--bootstrap 0`` for STS tasks, and in files
  written before intervals existed): ``method``, ``level``, ``low``, ``high`` (the units of ``reported``: x100,
  2 decimals) and, by method, ``B`` and ``seed`` (``percentile bootstrap over pairs``, STS12-16 ``..., stratified
  by subset``: the figure pools the subsets, so each subset keeps its size in every resample), ``n`` (``wilson
  binomial``: the accuracy on a fixed test set, SST2/TREC/MRPC; SST2's dev set in dev mode) or ``k`` (``t over k
  folds``: Student's t over the outer folds' accuracies, MR/CR/SUBJ/MPQA, and TREC/MRPC in dev mode);
- per-pair sidecar of an STS task result (:mod:`stsbench.results.write`, :mod:`stsbench.results.read`): ``<task>.pairs.npz`` beside
  ``<task>.json``, which names it in ``pairs``: ``{"file": "<task>.pairs.npz", "sha256": <of the file>, "n":
  <pairs>}``. A NumPy ``.npz`` (zip of ``.npy``, deflated, fixed timestamps so a rerun writes the same bytes;
  ``numpy.load(path)`` reads it, no pickles) with ``cosine`` float64 (n,) (the cosines the figure is the
  Spearman of, against ``gold`` float64 (n,)), ``subset`` int16 (n,) (an index into ``subsets``, the subset
  names in SentEval's order, a string array; STS-B and SICK-R: one entry, the split), ``index`` int32 (n,)
  (the pair's position within its subset after SentEval's dropping of pairs without gold: with the data
  checksums of ``provenance.data_files``, what aligns two models' pairs). The JSON holds no per-pair data;
- STS average, ``kind`` :data:`AVERAGE_KIND` (:class:`AverageResult`):
  ``<output>/<model_slug>/<pooler>/<mode>/average_sts.json``, written beside the task results by a run with two
  STS tasks or more and intervals: the Avg. column (``reported``, the mean of ``figures``, SimCSE's rounding)
  of the run's STS ``tasks`` and its interval from resampling every task's pairs jointly (``method``, ``B``,
  ``level``, ``seed``, ``low``, ``high``). A later run into the folder that rewrites one of its tasks without writing a
  new one (``--bootstrap 0``, a single STS task) removes it, so it never describes results that are gone;
- analysis result, ``kind`` :data:`ANALYSIS_KIND` (:class:`AnalysisResult`):
  ``<output>/<model_slug>/<pooler>/<analysis>[_<variant>].json``, its figure
  ``<output>/figures/<analysis>[_<variant>]__<models>.{png,svg}``;
- training run (``stsbench train --output DIR``): ``DIR/stsbench.json``, ``kind`` :data:`RUN_KIND` (the
  evaluation pooler, ``training``: the config, ``queue_size``...), and ``DIR/train_log.jsonl``, one record a
  line by ``event``: ``start`` (``kind`` :data:`TRAIN_LOG_KIND`, ``schema_version``, ``config``,
  ``total_steps``, ``train_rows``), ``eval`` (``step``, ``dev_spearman``, ``best``; ``alignment`` and
  ``uniformity`` of the same STS-B dev embeddings since they were logged), ``end`` (``step``,
  ``best_step``, ``best_dev_spearman``, ``wall_seconds``) and per-step ``train`` records; read by
  :mod:`stsbench.results.runs`. A record or file without ``kind`` and ``schema_version`` (written before
  they were added) reads as this kind, version 1.
- seed runs (``stsbench train --seeds 1,2,3 --output OUT``): ``OUT/seed-<s>/``, each a training run as above,
  and ``OUT/seeds.json``, ``kind`` :data:`SEED_RUNS_KIND`: ``seeds``; ``runs``, per seed ``seed``, ``path``
  (``seed-<s>``), ``status`` (``finished`` | ``failed``), ``error`` (the failure's one line, else null),
  ``best_step``, ``best_dev_spearman`` (raw, in [-1, 1]), ``steps``; ``failed`` (seeds); ``best_dev_spearman``
  over the finished seeds (``values``, ``mean``, ``std``, ``n``, ``low``, ``high``: the 95% t-interval of the
  mean, null with one seed; ``seeds``, ``level``), null when none finished; ``training``: the options every
  seed shares (the config less ``seed`` and ``output``);
- seed aggregate (``stsbench run --model OUT`` on such a folder), ``kind`` :data:`SEED_AGGREGATE_KIND`:
  ``<output>/<model_slug(OUT)>/<pooler>/<mode>/seeds.json`` beside each seed's own task results (under
  ``<model_slug(OUT/seed-<s>)>/``): ``model`` (OUT as given), ``pooler``, ``mode``, ``level`` (0.95),
  ``seeds``, ``models`` (seed -> the model name of its results), ``tasks``: per task and ``Avg.`` (``STS
  Avg.`` and ``Transfer Avg.`` when both kinds ran) ``values`` (per seed, in the order of ``seeds``, units of
  ``reported``), ``mean``, ``std`` (ddof 1), ``n``, ``low``, ``high`` (t-interval over seeds; std, low and
  high null with one seed); ``task_versions``: task -> the version of the task that scored the seeds (absent in
  aggregates written before it: every task version 1); ``data_modified`` (only when some seed's results were
  computed on data that differs from the canonical files, ``--allow-modified-data``): seed -> those files.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

# pydantic reads typing's TypedDict from Python 3.12 only
from typing_extensions import NotRequired, TypedDict

from stsbench.errors import StsbenchError

T = TypeVar("T")

SCHEMA_VERSION = 1
FIRST_VERSION = 1  # what a file or record written before it held ``schema_version`` is
TASK_KIND = "stsbench.task_result"
ANALYSIS_KIND = "stsbench.analysis_result"
RUN_KIND = "stsbench.train_run"
TRAIN_LOG_KIND = "stsbench.train_log"
SEED_RUNS_KIND = "stsbench.seed_runs"
SEED_AGGREGATE_KIND = "stsbench.seed_aggregate"
AVERAGE_KIND = "stsbench.sts_average"
SCALE_KIND = "stsbench.scale"  # ``scale.json``: the scale the results were made at (a mini recipe's banner)
# ``recipe_runs.json``: the runs a recipe declares (stsbench.results.runs)
RECIPE_RUNS_KIND = "stsbench.recipe_runs"

# A JSON object as ``json.loads`` gives it: a file before it is read into its type, and the blocks whose keys belong
# to a task, a method or an analysis (``scores``, ``config``), not to the results schema. Every other block is typed.
JsonObject = dict[str, Any]


class Interval(TypedDict):
    """The 95% interval of a ``reported`` (units of ``reported``) and how it was computed (:mod:`stsbench.tasks.intervals`)."""

    method: str  # ``percentile bootstrap over pairs[, stratified by subset]``, ``wilson binomial``, ``t over k folds``
    level: float
    low: float
    high: float
    B: NotRequired[int]  # bootstrap resamples
    seed: NotRequired[int]  # the bootstrap's seed
    n: NotRequired[int]  # wilson: the sentences scored
    k: NotRequired[int]  # t: the folds


class PairsEntry(TypedDict):
    """A task result's per-pair sidecar (:mod:`stsbench.results.read`): its file name, sha256 and pair count."""

    file: str
    sha256: str
    n: int


@dataclass
class Provenance:
    """Where a number came from."""

    stsbench_version: str
    git_commit: str | None  # commit of the stsbench checkout, None when installed from a wheel
    created_at: str  # ISO 8601 UTC; ignored when comparing runs
    libraries: dict[str, str]  # torch, transformers, sentence-transformers, numpy, scipy, python
    device: str  # e.g. ``cpu`` or ``cuda:0 (NVIDIA H100)``
    data_files: dict[str, str]  # path relative to the data dir -> sha256
    # seconds: ``encode`` (this run's whole encoding pass), ``evaluate``; ignored when comparing
    timings: dict[str, float]
    # the command line that produced it, when run from the CLI (paths made relative)
    command: str | None = None
    # data_files that differ from the canonical SentEval files (``stsbench/data/manifest.json``): path -> how
    # (a run with --allow-modified-data); None: every file the manifest lists is canonical. Files the manifest
    # does not list (a user's own task data) have no canonical version and are never named here.
    data_modified: dict[str, str] | None = None


@dataclass
class ModelInfo:
    """The encoder evaluated."""

    # paths in results files are relative to the --output they were written under, the data folder by its name
    # (stsbench.results.write); files written before hold absolute ones. In memory, as just computed: absolute
    name: str  # as given by the user (a path: relative to the --output in the file)
    path: str  # resolved weights folder (relative to the --output in the file)
    fingerprint: str  # the embedding-cache key (weights, config, tokenizer, pooler, max length, dtype)
    pooler: str
    max_length: int | None
    dtype: str
    kind: str
    # the text prepended to every sentence (``--prompt``, or the model's stored prompt ``prompt_name``); it is
    # part of ``fingerprint``. None: no prompt (and in files written before prompts existed)
    prompt: str | None = None
    prompt_name: str | None = None


@dataclass
class TaskResult:
    """One (model, task) result."""

    task: str  # SentEval's name, e.g. ``STS12``
    task_type: str  # ``sts`` | ``transfer``
    mode: str  # ``test`` | ``dev`` | ``fasttest``
    reported: float  # the paper's figure: x100 rounded to 2 decimals
    metric: str  # what ``reported`` is: ``spearman_all``, ``test_spearman``, ``test_acc``, ``dev_acc``...
    scores: JsonObject  # everything behind it (per subset / split / fold), raw correlations in [-1, 1]
    model: ModelInfo
    config: JsonObject  # seed, batch size and every option that changes the outcome
    provenance: Provenance
    n_pairs: int | None = None
    pairs: PairsEntry | None = None  # STS: the per-pair sidecar, ``{"file", "sha256", "n"}``
    interval: Interval | None = None  # the 95% interval of ``reported`` and how it was computed
    task_version: int = 1  # the task's version when scored (files written before versions: 1)
    schema_version: int = SCHEMA_VERSION
    kind: str = field(default=TASK_KIND)

    def to_dict(self) -> JsonObject:
        """Plain dict for JSON."""
        return asdict(self)

    @property
    def raw(self) -> float:
        """``reported`` before its rounding: the raw correlation x100 (accuracies: as SentEval gives them).

        What every test over seeds reads (docs/uncertainty.md, "One rule"): a figure rounded to two decimals
        turns differences below 0.01 into a few quantised values. Falls back to ``reported`` where ``scores``
        has no raw figure for ``metric``.
        """
        s = self.scores
        try:
            if self.metric == "spearman_all":
                return float(s["aggregate"]["spearman"]["all"]) * 100
            if self.metric.endswith("_spearman"):
                return float(s[self.metric.removesuffix("_spearman")]["spearman"]) * 100
            if self.metric in ("test_acc", "dev_acc"):
                return float(s[self.metric])
        except (KeyError, TypeError, ValueError):
            pass
        return float(self.reported)

    @classmethod
    def from_dict(cls, d: JsonObject) -> TaskResult:
        """Inverse of :meth:`to_dict` (raises ``KeyError``/``TypeError`` on a foreign file)."""
        return cls(**{**d, "model": ModelInfo(**d["model"]), "provenance": Provenance(**d["provenance"])})


@dataclass
class AverageResult:
    """The Avg. of one run's STS tasks with its interval (``average_sts.json``)."""

    tasks: list[str]  # the STS tasks averaged, in the run's order
    figures: dict[str, float]  # each task's ``reported``, as in its results file
    reported: float  # SimCSE's Avg.: the mean of ``figures``, 2 decimals
    interval: Interval  # every task resampled jointly: method, B, level, seed, low, high
    model: ModelInfo
    mode: str
    provenance: Provenance  # data_files: every averaged task's; timings: ``bootstrap`` (seconds)
    schema_version: int = SCHEMA_VERSION
    kind: str = field(default=AVERAGE_KIND)

    def to_dict(self) -> JsonObject:
        """Plain dict for JSON."""
        return asdict(self)


@dataclass
class AnalysisResult:
    """One (model, analysis) results file: the analysis' own typed result plus who and where it came from."""

    # the registry name: ``length_bias`` | ``align_uniform`` | ``spectrum`` | ``repetition_probe``
    analysis: str
    result: Any  # the analysis' result dataclass (a dict on disk; its keys are documented in its module)
    model: ModelInfo
    config: JsonObject  # every option that changes the numbers
    provenance: Provenance
    schema_version: int = SCHEMA_VERSION
    kind: str = field(default=ANALYSIS_KIND)

    def to_dict(self) -> JsonObject:
        """Plain dict for JSON."""
        d = asdict(self)
        if hasattr(self.result, "to_dict"):
            d["result"] = self.result.to_dict()
        return d


class RampedDistance(TypedDict):
    """MoCoSE's maximum traceable distance under a ramped EMA weight: at the first step and at the last."""

    start: float
    end: float


@dataclass(frozen=True)
class StartRecord:
    """``train_log.jsonl``'s first record: the run's shape before its first step (:mod:`stsbench.train.log`)."""

    event: Literal["start"]
    config: JsonObject | None = None  # TrainConfig as a dict (:meth:`TrainConfig.from_dict` reads it)
    kind: Literal["stsbench.train_log"] = TRAIN_LOG_KIND
    schema_version: int = FIRST_VERSION
    step: int = 0
    total_steps: int | None = None
    steps_per_epoch: int | None = None
    train_rows: int | None = None
    device: str | None = None
    processes: int | None = None
    global_batch_size: int | None = None
    traceable_distance: float | RampedDistance | None = None  # MoCoSE eq. 4; None: a method without one
    backbone_dropout: float | None = None  # the hidden dropout the backbone trains with


@dataclass(frozen=True)
class TrainRecord:
    """The loss of a step and its parts (each method's own keys: ``contrastive``, ``grad_norm``...), and the lr."""

    event: Literal["train"]
    step: int
    epoch: int | None = None
    loss: float | None = None  # null: not finite
    lr: float | None = None
    time: float | None = None


@dataclass(frozen=True)
class EvalRecord:
    """STS-B dev Spearman after ``step`` (raw, in [-1, 1]); ``best``: kept as the checkpoint."""

    event: Literal["eval"]
    step: int
    dev_spearman: float | None = None
    best: bool = False
    time: float | None = None
    sts_test_avg: float | None = None  # ``select_on: sts-test``: the mean of the seven STS test sets
    alignment: float | None = None  # l_align, l_uniform of the same embeddings (logs before them: absent)
    uniformity: float | None = None


@dataclass(frozen=True)
class CompileRecord:
    """``--compile``: the wall seconds of the first step, compilation included."""

    event: Literal["compile"]
    step: int
    seconds: float


@dataclass(frozen=True)
class NonfiniteRecord:
    """The step whose loss or gradient norm was not finite (the value as text)."""

    event: Literal["nonfinite"]
    step: int
    what: str
    value: str


@dataclass(frozen=True)
class EndRecord:
    """The run's last step and its best dev score."""

    event: Literal["end"]
    step: int | None = None
    best_step: int | None = None
    best_dev_spearman: float | None = None
    wall_seconds: float | None = None


LogRecord = StartRecord | TrainRecord | EvalRecord | CompileRecord | NonfiniteRecord | EndRecord
RECORDS: dict[str, type] = {t.__name__.removesuffix("Record").lower(): t for t in get_args(LogRecord)}


@dataclass(frozen=True)
class Resolution:
    """What a run resolved where its config left an option unset (``stsbench.json``'s ``resolution``).

    Its other keys belong to the trainer.
    """

    backbone_dropout: float | None = None


@dataclass(frozen=True)
class RunMeta:
    """``stsbench.json`` of a run that saved a checkpoint: how ``stsbench run --model DIR`` evaluates it.

    ``training``: the config (:meth:`TrainConfig.from_dict` reads it); the other keys (``method``, ``backbone``,
    ``processes``...) describe the run as the trainer saw it.
    """

    training: JsonObject | None = None
    kind: Literal["stsbench.train_run"] = RUN_KIND
    schema_version: int = FIRST_VERSION
    method: str | None = None
    pooler: str | None = None  # the evaluation pooler
    queue_size: int | None = None
    resolution: Resolution | None = None
    backbone: str | None = None
    step: int | None = None  # the kept checkpoint's step
    best_dev_spearman: float | None = None
    processes: int | None = None
    global_batch_size: int | None = None
    max_length: int | None = None
    sentence_transformers: bool | None = None
    traceable_distance: float | RampedDistance | None = None


class Summary(TypedDict):
    """Values over seeds and their summary (:func:`~stsbench.stats.seeds.seed_summary`): a row of an aggregate."""

    values: list[float]  # per seed, in the order of the seeds (an aggregate: as printed, two decimals)
    mean: float
    std: float | None  # ddof 1; null with one seed
    n: int
    low: float | None  # the 95% t-interval of the mean; null with one seed
    high: float | None
    raw: NotRequired[list[float]]  # an aggregate's unrounded figures, what tests read (absent in older files)


class BestDevSummary(Summary):
    """``seeds.json``'s summary of the finished seeds' best dev Spearman."""

    seeds: list[int]
    level: float


class SeedRunEntry(TypedDict):
    """One seed of ``OUT/seeds.json``."""

    seed: int
    path: str  # ``seed-<s>``, relative to OUT
    status: Literal["finished", "failed"]
    error: str | None  # the failure's one line
    best_step: int | None
    best_dev_spearman: float | None  # raw, in [-1, 1]
    steps: int | None


class SeedRuns(TypedDict):
    """``OUT/seeds.json`` of ``stsbench train --seeds``: every seed's status and the summary of the finished ones."""

    kind: Literal["stsbench.seed_runs"]
    schema_version: NotRequired[int]
    seeds: list[int]
    runs: list[SeedRunEntry]
    failed: list[int]
    best_dev_spearman: BestDevSummary | None  # null when no seed finished
    training: JsonObject  # the options every seed shares (the config less seed and output)


class SeedAggregate(TypedDict):
    """``<output>/<model_slug(OUT)>/<pooler>/<mode>/seeds.json`` of ``stsbench run --model OUT``."""

    kind: Literal["stsbench.seed_aggregate"]
    schema_version: NotRequired[int]
    model: str  # OUT as given (relative to the --output in the file)
    pooler: str
    mode: str
    level: float
    seeds: list[int]
    models: dict[str, str]  # seed -> the model name of its results
    tasks: dict[str, Summary]  # per task and Avg., units of ``reported``
    task_versions: NotRequired[dict[str, int]]  # absent in aggregates written before it: every task version 1
    # seed -> its data files that differ from the canonical ones
    data_modified: NotRequired[dict[str, list[str]]]


@dataclass(frozen=True)
class Scale:
    """``scale.json``: the banner every report of the results carries."""

    banner: str
    kind: Literal["stsbench.scale"] = SCALE_KIND
    schema_version: int = FIRST_VERSION  # a file without the key: the first version


@dataclass(frozen=True)
class DeclaredRun:
    """One run as its recipe declares it."""

    name: str  # its seeds' folder
    label: str | None
    method: str
    sweep_of: str | None = None  # the sweep or grid it is a point of
    point: JsonObject = field(default_factory=dict)  # that point's settings (option -> value)
    published: tuple[str, ...] = ()  # the rows or cells it is held against, the first one first


@dataclass(frozen=True)
class RecipeRuns:
    """``recipe_runs.json``: the recipe's name and its runs."""

    recipe: str
    runs: list[DeclaredRun]
    kind: Literal["stsbench.recipe_runs"] = RECIPE_RUNS_KIND
    schema_version: int = FIRST_VERSION


STATE_KIND = "stsbench-reproduce"
STATE_FILE = "reproduce.json"  # OUT/reproduce.json: a folder holding one is a reproduction's
REPRODUCTION_KIND = "stsbench.reproduction"
Status = Literal["queued", "running", "done", "failed", "interrupted", "skipped", "not run"]


class StepRecord(TypedDict, total=False):
    """One step's record: its key and code when it last ran, how it ended, where its log is."""

    kind: str  # ``train`` | ``evaluate`` | ``analysis`` | ``report``
    deps: list[str]  # the step ids it reads
    log: str  # relative to OUT
    key: str  # the digest of what determines the step (its settings and data)
    parts: dict[str, str]  # the key's parts, each a digest: what changed when the key did
    code: str  # the digest of the code it ran with
    status: Status
    error: str | None  # the first line of its error
    progress: str | None
    started: float | None  # seconds since the epoch
    ended: float | None
    seconds: float
    returncode: int | None
    where: str  # where it ran (``pid 9501``, a Slurm job)
    attempts: int
    folder: str  # a training's run folder, relative to OUT
    total_steps: int | None
    files: dict[str, str]  # a training's sealed results files: path relative to OUT -> sha256
    # reproduce --carry-changed: from which code to which, by what, when, what was compared (earlier carries nested)
    carried: dict[str, Any]
    canary: (
        str  # the digest of the canary a carry ran on the embedded model, which the next carry compares with
    )


class Session(TypedDict):
    """One ``stsbench reproduce`` process: its wall time, the time some step ran, what orchestration added."""

    started: float
    ended: float
    wall_seconds: float
    steps_seconds: float
    orchestration_seconds: float
    orchestration_share: float | None  # null for a session of no wall time
    steps_run: int
    interrupted: NotRequired[bool]
    # started on a dirty checkout (stsbench.results.write.session_code): the commit as results record it
    # (<sha>-dirty) and the package's files that differed from it
    git_commit: NotRequired[str]
    differing_files: NotRequired[list[str]]


class Subset(TypedDict):
    """The part of the recipe run (``--runs``, ``--seeds``)."""

    runs: list[str]
    seeds: list[int]


class UntilDecided(TypedDict):
    """``reproduce --until-decided``: the sequential plan's seed limit and the seeds it added, by run."""

    maximum: int  # --max-seeds: the most seeds a run gets
    added: dict[str, list[int]]  # run name: the seeds added to it, look by look
    refine: NotRequired[bool]  # --refine (absent: false)


class ReproduceState(TypedDict):
    """``OUT/reproduce.json``."""

    kind: Literal["stsbench-reproduce"]
    steps: dict[str, StepRecord]  # by step id
    sessions: list[Session]
    recipe: NotRequired[str]
    title: NotRequired[str]
    recipe_file: NotRequired[str | None]  # a recipe file, for --status to plan again (a built-in: by name)
    subset: NotRequired[Subset | None]
    stsbench: NotRequired[str]  # the version that last ran it
    executor: NotRequired[str]
    order: NotRequired[list[str]]  # the plan's step ids, in order
    gpus: NotRequired[int]  # reproduce --gpus: what its trainings ran on (their keys' device), for --status
    # the data folder it ran on, relative to its own folder: what --status replans on
    data_dir: NotRequired[str]
    # each code digest its steps hold -> its parts (a digest per module, the libraries, ...): what --status names
    code: NotRequired[dict[str, dict[str, Any]]]
    until: NotRequired[UntilDecided]  # reproduce --until-decided, recorded before any training


class ReproductionFile(TypedDict):
    """``OUT/reproduction.json``: the verdicts of a report (``stsbench report --against``, the reproduce report).

    Schema version 2 (rule 3): a cell's ``low``/``high`` are its decision's 95% interval of the difference from
    the published figure; the seeds' mean's own interval is ``mean_low``/``mean_high``.
    """

    kind: Literal["stsbench.reproduction"]
    schema_version: NotRequired[int]
    rule: NotRequired[int]  # the decision rule's version (stsbench.stats.decide.RULE_VERSION)
    deltas: NotRequired[dict[str, float | list[float]]]  # every δ used: the cells' and the claims'
    difference: float  # δ, the difference that matters
    level: float
    power: float
    targets: list[JsonObject]  # one per published target: its cells' numbers and verdicts (the report's)
    claims: NotRequired[list[JsonObject]]  # each claim's verdict and statements (stsbench.stats.claims)


# Reading a file as its type: pydantic's ``TypeAdapter`` over the dataclass or ``TypedDict`` of its kind, pydantic
# imported on first use (the warm ``stsbench run`` reads task results and averages without it:
# :func:`stsbench.results.read.build_dataclass`). A file that does not match its type is one line naming the first
# problems.


class Malformed(ValueError):
    """``data`` does not match its type; ``str()`` is a short summary (``missing model, pooler``)."""


class Unreadable(StsbenchError):
    """A file that cannot be read or is not JSON."""


def read_json(path: Path) -> Any:
    """Parse a JSON file; an unreadable one is a one-line error naming it."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Unreadable(f"{path}: not a readable JSON file ({exc})") from None


def check_version(path: Path, data: Mapping[str, Any], what: str, default: int | None = None) -> None:
    """Raise a one-line error unless ``data`` has this stsbench's :data:`SCHEMA_VERSION`.

    ``default``: the version of a file written before the key existed.
    """
    version = data.get("schema_version", default)
    if version != SCHEMA_VERSION:
        msg = f"{path}: {what} schema version {version!r}, this stsbench reads {SCHEMA_VERSION}"
        raise StsbenchError(msg)


@cache
def adapter(tp: Any) -> Any:
    """The ``TypeAdapter`` of ``tp`` (built once: building one is the slow part)."""
    from pydantic import TypeAdapter

    return TypeAdapter(tp)


def _where(loc: tuple[Any, ...]) -> str:
    return ".".join(str(x) for x in loc) or "the file"


def summary(errors: list[Any]) -> str:
    """Pydantic's errors in a few words: the missing keys first (at most three), else the first bad value."""
    if missing := [_where(e["loc"]) for e in errors if e["type"] == "missing"]:
        return "missing " + ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
    e = errors[0]
    value = repr(e.get("input"))
    value = value if len(value) <= 40 else value[:37] + "..."
    return f"bad {_where(e['loc'])}: {value} ({e['msg'][:1].lower() + e['msg'][1:]})"


def validated(tp: type[T] | Any, data: Any) -> T:
    """``data`` (parsed JSON) as ``tp``: a dataclass built, a ``TypedDict`` checked and returned as given.

    A ``TypedDict``'s keys it does not name are kept (a newer file's extra keys read, and are written back);
    raises :class:`Malformed` with :func:`summary` of what does not match.
    """
    from pydantic import ValidationError

    try:
        value = adapter(tp).validate_python(data)
    except ValidationError as exc:
        raise Malformed(summary(exc.errors(include_url=False))) from None
    return data if isinstance(data, dict) and isinstance(value, dict) else value


# Every kind with its one definition, and their JSON schemas as the docs publish them: ``python -m
# stsbench.results.schema`` writes ``docs/schema/<kind>.json`` (pydantic's ``TypeAdapter(...).json_schema()`` of
# each definition) and the table of ``docs/results-schema.md``; ``--check`` only says whether they are current (a
# test runs it). :func:`kind_of` tells which kind a file is, by its ``kind`` key or, for files written before they
# had one, by its name.

DOCS = Path(__file__).resolve().parents[2] / "docs"
SCHEMA_DIR = "schema"
PAGE = "results-schema.md"


@dataclass(frozen=True)
class FileKind:
    """One kind of file: its schema's name, its ``kind`` key, where it is written, its definition."""

    name: str  # the schema file's stem: docs/schema/<name>.json
    kind: str | None  # the file's ``kind`` (None: a JSON-lines file, each record typed)
    where: str  # where stsbench writes it
    definition: str  # its dataclass or TypedDict in this module
    reader: str  # the function that reads it

    def type(self) -> Any:
        """The definition itself."""
        return globals()[self.definition]


R = "stsbench.results."
KINDS = (
    FileKind("task_result", TASK_KIND, "<output>/<model>/<pooler>/<mode>/<task>.json", "TaskResult",
             R + "read.read_result"),
    FileKind("sts_average", AVERAGE_KIND, "<output>/<model>/<pooler>/<mode>/average_sts.json", "AverageResult",
             R + "read.read_average"),
    FileKind("analysis_result", ANALYSIS_KIND, "<output>/<model>/<pooler>/<analysis>.json", "AnalysisResult",
             R + "read.load_result"),
    FileKind("train_run", RUN_KIND, "<run>/stsbench.json", "RunMeta", R + "runs.read_run_meta"),
    FileKind("train_log_record", None, "<run>/train_log.jsonl (one record a line)", "LogRecord", R + "runs.read_log"),
    FileKind("seed_runs", SEED_RUNS_KIND, "<OUT of train --seeds>/seeds.json", "SeedRuns", R + "runs.read_seed_runs"),
    FileKind("seed_aggregate", SEED_AGGREGATE_KIND, "<output>/<model_slug(OUT)>/<pooler>/<mode>/seeds.json",
             "SeedAggregate", R + "runs.read_aggregate"),
    FileKind("scale", SCALE_KIND, "<results>/scale.json", "Scale", R + "runs.read_scale"),
    FileKind("recipe_runs", RECIPE_RUNS_KIND, "<results>/recipe_runs.json", "RecipeRuns", R + "runs.read_recipe_runs"),
    FileKind("reproduce_state", STATE_KIND, "<reproduction>/reproduce.json", "ReproduceState",
             "stsbench.reproduce.state.load_state"),
    FileKind("reproduction", REPRODUCTION_KIND, "<reproduction>/reproduction.json", "ReproductionFile",
             "(written by the report; read by no command)"),
)  # fmt: skip
BY_KIND = {k.kind: k for k in KINDS if k.kind}
BY_NAME = {k.name: k for k in KINDS}
NAMED = {"train_log.jsonl": "train_log_record", "stsbench.json": "train_run"}  # files written before ``kind``


def kind_of(path: Path, data: Any = None) -> FileKind | None:
    """The kind of a results file (``data``: a JSON file parsed), None for one that is not stsbench's."""
    typed = isinstance(data, dict) and Path(path).suffix != ".jsonl"
    return (typed and BY_KIND.get(data.get("kind"))) or BY_NAME.get(NAMED.get(Path(path).name, ""))


def json_schemas() -> dict[str, JsonObject]:
    """Each kind's JSON schema (pydantic's validation mode, as files are validated), by name."""
    return {k.name: {**adapter(k.type()).json_schema(mode="validation"), "title": k.name} for k in KINDS}


def pydantic_version() -> str:
    """Pydantic's ``major.minor``: the schemas' wording is its (another version may word the same rules otherwise)."""
    from importlib.metadata import version

    return ".".join(version("pydantic").split(".")[:2])


def page() -> str:
    """``docs/results-schema.md``."""
    rows = "\n".join(
        f"| [`{k.name}`]({SCHEMA_DIR}/{k.name}.json) | {f'`{k.kind}`' if k.kind else '(per line)'} | `{k.where}` | "
        f"`stsbench.results.schema.{k.definition}` | `{k.reader}` |"
        for k in KINDS
    )
    return f"""# Results files: their schema

<!-- generated by `python -m stsbench.results.schema`; edit stsbench/results/schema.py, not this page -->

Every file stsbench writes for later reading has one definition, a dataclass or a `TypedDict` in
`stsbench.results`, and one reader that validates it through pydantic's `TypeAdapter` (the warm `stsbench run`
reads task results and averages without pydantic, by the same dataclasses). Each file carries `kind` and
`schema_version`; a file written before it had `schema_version` reads as version 1, and keys a definition does not
name are kept (a newer file still reads). What each key means: `stsbench/results/schema.py`.

The JSON schemas below are generated from the definitions (`TypeAdapter(definition).json_schema()`, pydantic
{pydantic_version()}: another version may word the same rules otherwise); a test
validates every file of the checked-in editions under `reports/` against them. Validate a file of yours with any
JSON-schema validator, e.g. `python -m jsonschema -i FILE docs/schema/task_result.json` (a `train_log.jsonl`: each
line against `train_log_record.json`).

| schema | `kind` | file | definition | reader |
|---|---|---|---|---|
{rows}
"""


def rendered() -> dict[Path, str]:
    """Every published file and its text, by path under docs/."""
    out = {Path(SCHEMA_DIR) / f"{name}.json": json.dumps(s, indent=2, sort_keys=True) + "\n"
           for name, s in json_schemas().items()}  # fmt: skip
    out[Path(PAGE)] = page()
    return out


def stale(docs: Path = DOCS) -> list[str]:
    """The published files that differ from what the definitions give (missing ones too)."""
    current = {
        rel: (docs / rel).is_file() and (docs / rel).read_text(encoding="utf-8") == text
        for rel, text in rendered().items()
    }
    return [rel.as_posix() for rel, ok in current.items() if not ok]


def main(argv: list[str] | None = None) -> int:
    """Write the schemas and their page under docs/ (``--check``: say which are not current, exit 1)."""
    parser = argparse.ArgumentParser(prog="python -m stsbench.results.schema", description=main.__doc__)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--docs", type=Path, default=DOCS)
    args = parser.parse_args(argv)
    if args.check:
        if wrong := stale(args.docs):
            sys.stderr.write(f"not current: {', '.join(wrong)}; run `python -m stsbench.results.schema`\n")
        return 1 if wrong else 0
    for rel, text in rendered().items():
        path = args.docs / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
