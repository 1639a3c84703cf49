"""Who is who in a report: one :class:`Model` per evaluated (model, pooler), its label, its training run.

A task or analysis result names its model by what the user typed (``all-MiniLM-L6-v2``, a checkpoint
folder). Labels are built from that name alone, never from the file system, so a report regenerated on
another machine from the same results files reads the same. A result belongs to a training run when its
``model.path`` is the run's ``--output`` (or ends with it, for a relative ``--output``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stsbench.reports.collect import Collection, TrainRun
from stsbench.results.schema import ModelInfo

# ESimCSE's components (Sec. 3): which of them a run used, named as the papers' ablation rows
METHOD_ORDER = (
    "unsup-SimCSE",
    "sup-SimCSE",
    "word repetition only",
    "momentum contrast only",
    "ESimCSE",
    "ESimCSE, neither component",
)


@dataclass(frozen=True)
class Model:
    """One evaluated encoder (a model name with the pooler it was evaluated with)."""

    label: str  # what tables and figures call it
    name: str
    pooler: str
    info: ModelInfo
    run: TrainRun | None  # the training run that made this checkpoint, when it is under the results
    method: str | None  # see :func:`method_of`; None for a model that was not trained here

    @property
    def key(self) -> tuple[str, str]:
        """(name, pooler): what results of the same model share."""
        return (self.name, self.pooler)


def method_of(config: dict[str, Any]) -> str:
    """Name a training config by the method and ESimCSE components it used.

    ``word repetition only`` is ESimCSE with ``queue_multiple 0`` (no momentum contrast); ``momentum
    contrast only`` is ESimCSE with ``--no-repetition`` (dropout views, the queue kept): the "+ word
    repetition" and "+ momentum contrast" rows of ESimCSE's ablation (arXiv Tables 6-7, COLING Table 4).
    """
    if config.get("method") == "simcse":
        return "sup-SimCSE" if config.get("supervised") else "unsup-SimCSE"
    repetition = bool(config.get("repetition", True))
    momentum = float(config.get("queue_multiple", 2.5)) > 0
    if repetition and momentum:
        return "ESimCSE"
    if repetition:
        return "word repetition only"
    if momentum:
        return "momentum contrast only"
    return "ESimCSE, neither component"


def method_rank(method: str | None) -> int:
    """Sort key: models not trained here first, then the ablation order of ESimCSE's tables."""
    if method is None:
        return -1
    return METHOD_ORDER.index(method) if method in METHOD_ORDER else len(METHOD_ORDER)


def _norm(path: str) -> str:
    p = path.replace("\\", "/").rstrip("/")
    while p.startswith("./"):
        p = p[2:]
    return p


def run_for(info: ModelInfo, runs: list[TrainRun]) -> TrainRun | None:
    """Return the training run whose ``--output`` is the evaluated model's folder, if one is under the results."""
    for target in (info.path, info.name):
        t = _norm(target)
        for run in runs:
            out = _norm(run.output)
            if out and (t == out or t.endswith("/" + out)):
                return run
    return None


def base_label(name: str) -> str:
    """Return a folder's last part for a path (``/tmp/runs/simcse`` -> ``simcse``); a hub id or name as is."""
    n = name.replace("\\", "/").rstrip("/")
    if n.startswith(("/", ".", "~")) or n.count("/") > 1:
        return n.split("/")[-1] or n
    return n


def _infos(coll: Collection) -> dict[tuple[str, str], ModelInfo]:
    infos: dict[tuple[str, str], ModelInfo] = {}
    for rec in coll.tasks:
        infos.setdefault((rec.result.model.name, rec.result.model.pooler), rec.result.model)
    for rec in coll.analyses:
        infos.setdefault((rec.model.name, rec.model.pooler), rec.model)
    return infos


def find_models(coll: Collection) -> list[Model]:
    """Every evaluated model under the results, labelled and ordered (base models, then by method)."""
    infos = _infos(coll)
    base = {key: base_label(key[0]) for key in infos}
    labels: dict[tuple[str, str], str] = {}
    for key, label in base.items():
        clash = [k for k, b in base.items() if b == label]
        if len(clash) == 1:
            labels[key] = label
        elif len({k[1] for k in clash}) == len(clash):  # same name, other poolers
            labels[key] = f"{label} ({key[1]})"
        else:
            labels[key] = f"{key[0]} ({key[1]})"
    models = []
    for key, info in infos.items():
        run = run_for(info, coll.runs)
        models.append(Model(labels[key], key[0], key[1], info, run, method_of(run.config) if run else None))
    return sorted(models, key=lambda m: (method_rank(m.method), m.label))


def model_of(models: list[Model], info: ModelInfo) -> Model:
    """Return the :class:`Model` a result's ``model`` block belongs to."""
    return next(m for m in models if m.key == (info.name, info.pooler))
