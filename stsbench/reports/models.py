"""Who is who in a report: one :class:`Model` per evaluated encoder, its label, its training run.

Results belong to the same model when they share the model fingerprint (weights, config, tokenizer,
pooler, max length, dtype), whatever name or folder they were run with; so a checkpoint moved or re-run
in place is told apart from its earlier self. A model is labelled by the name the user typed
(``all-MiniLM-L6-v2``, a checkpoint folder's last part; ``simcse/seed-1`` for a seed's checkpoint), never
from the file system, so a report regenerated on another machine from the same results files reads the same. A model belongs to a training
run when one of its results' ``model.path`` is the run's ``--output`` (or ends with it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stsbench.encoders.resolve import prompt_suffix
from stsbench.reports.collect import AnalysisRecord, Collection, TrainRun
from stsbench.results.read import model_location, name_in_folder
from stsbench.results.schema import ModelInfo
from stsbench.results.write import base_label, unique_label

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

    Its method's answer (:meth:`~stsbench.train.config.methods.MethodSpec.run_label`: ``unsup-SimCSE``, ESimCSE's
    component rows); the method's name where no method of that name is registered.
    """
    from stsbench.train.config.methods import find_method

    spec = find_method(config.get("method"))
    return spec.run_label(config) if spec is not None else str(config.get("method") or "unknown method")


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
        blocks = [i for i, _, _ in located]
        run = next((r for r in (run_for(i, coll.runs, w) for i, w, _ in located) if r is not None), None)
        names = tuple(sorted({n for _, _, n in located}))
        main = next((i for i, w, _ in located if run is not None and run_for(i, [run], w)), blocks[0])
        if run is None:
            main = next(i for i, _, n in located if n == names[0])
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
        labelled: dict[str, Any] = {}
        ours = [r for r in records if r.variant == variant]
        for rec in sorted(ours, key=lambda r: (order.index(r.model.fingerprint), r.path)):
            labelled[unique_label(model_of(models, rec.model).label, labelled)] = rec.result
        out[variant] = labelled
    return out
