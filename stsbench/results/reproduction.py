"""The files ``stsbench reproduce`` keeps beside a reproduction's results: its state and its verdicts.

- ``reproduce.json``, ``kind`` :data:`STATE_KIND` (:class:`ReproduceState`): what the reproduction has done, per
  step and per session (:mod:`stsbench.reproduce.state` reads and writes it, a dict it updates as steps run);
- ``reproduction.json``, ``kind`` :data:`REPRODUCTION_KIND` (:class:`ReproductionFile`): the report's verdicts,
  one object per published target (:mod:`stsbench.reports.reproduction`) and per claim
  (``stsbench.stats.claims.ClaimResult``): those objects are the report's, typed there.

Both are typed dicts (``TypedDict``): their readers and writers index them as dicts; :func:`read_state` validates one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from typing_extensions import NotRequired, TypedDict

from stsbench.errors import StsbenchError
from stsbench.results.schema import JsonObject

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
    # started on a dirty checkout (stsbench.results.checkout.session_code): the commit as results record it
    # (<sha>-dirty) and the package's files that differed from it
    git_commit: NotRequired[str]
    differing_files: NotRequired[list[str]]


class Subset(TypedDict):
    """The part of the recipe run (``--runs``, ``--seeds``)."""

    runs: list[str]
    seeds: list[int]


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
    data_dir: NotRequired[str]  # the data folder it ran on, relative to its own folder: what --status replans on


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


def empty_state() -> ReproduceState:
    """The state of a reproduction that has not run."""
    return {"kind": STATE_KIND, "steps": {}, "sessions": []}


def read_state(path: Path, data: object) -> ReproduceState:
    """``data`` (``path`` parsed) as the state, validated; one line when it is not one."""
    from stsbench.results.validation import Malformed, validated

    if not isinstance(data, dict) or data.get("kind") != STATE_KIND:
        raise StsbenchError(f"{path} is not the state of stsbench reproduce; pass another --out")
    try:
        return validated(ReproduceState, data)
    except Malformed as exc:
        raise StsbenchError(
            f"{path} cannot be read (malformed state: {exc}); remove it to start the plan again"
        ) from None
