"""Every file stsbench writes for later reading, documented once: what it holds and where it goes.

Paths in these files are never the machine's (:mod:`stsbench.results.portable`): relative to the ``--output``
the file was written under (a training run's copied files: to their own folder), the data folder by its name.

Each file (or JSON-lines record) carries ``kind`` and ``schema_version`` (:data:`SCHEMA_VERSION`, the one
constant every reader checks; a file without it is :data:`FIRST_VERSION`); the paths are built by
:mod:`stsbench.results.store`. Each kind has one typed definition and one reader, listed with their JSON schemas
by :mod:`stsbench.results.schemas` (published in ``docs/schema/``):

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
- per-pair sidecar of an STS task result (:mod:`stsbench.results.pairs`): ``<task>.pairs.npz`` beside
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

from dataclasses import asdict, dataclass, field
from typing import Any

from typing_extensions import (  # pydantic reads typing's TypedDict from Python 3.12 only
    NotRequired,
    TypedDict,
)

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
RECIPE_RUNS_KIND = (
    "stsbench.recipe_runs"  # ``recipe_runs.json``: the runs a recipe declares (stsbench.results.recipe_runs)
)

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
    """A task result's per-pair sidecar (:mod:`stsbench.results.pairs`): its file name, sha256 and pair count."""

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
    timings: dict[
        str, float
    ]  # seconds: ``encode`` (this run's whole encoding pass), ``evaluate``; ignored when comparing
    command: str | None = (
        None  # the command line that produced it, when run from the CLI (paths made relative)
    )
    # data_files that differ from the canonical SentEval files (``stsbench/data/manifest.json``): path -> how
    # (a run with --allow-modified-data); None: every file the manifest lists is canonical. Files the manifest
    # does not list (a user's own task data) have no canonical version and are never named here.
    data_modified: dict[str, str] | None = None


@dataclass
class ModelInfo:
    """The encoder evaluated."""

    # paths in results files are relative to the --output they were written under, the data folder by its name
    # (stsbench.results.portable); files written before hold absolute ones. In memory, as just computed: absolute
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
        d = dict(d)
        d["model"] = ModelInfo(**d["model"])
        d["provenance"] = Provenance(**d["provenance"])
        return cls(**d)


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

    analysis: (
        str  # the registry name: ``length_bias`` | ``align_uniform`` | ``spectrum`` | ``repetition_probe``
    )
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
