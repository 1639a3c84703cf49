"""What a plan's steps do, counted from its options and the data alone: no device, no time.

:mod:`stsbench.reproduce.cost` prices the counts. Per training its set-up, optimizer steps, dev evaluations (at the configured interval, and the sentences each
encodes), resumable saves and best checkpoints kept (at most one per evaluation); the models the evaluations load,
the unique sentences they encode (cold cache) and the transfer classifiers they fit; the analyses' runs and the
sentences they encode that the model's evaluation has not (those come from the embedding cache: each analysis
says what it encodes, :meth:`stsbench.analyses.registry.Analysis.encodes`); the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from stsbench.progress import plural
from stsbench.reproduce.plan import Plan, Step


@dataclass(frozen=True)
class Training:
    """One training step's counted parts (None: not known before its data is)."""

    model: str | None
    method: str | None
    batch_size: int
    steps: int | None
    dev_evaluations: int | None
    dev_sentences: int | None  # what one dev evaluation encodes
    saves: int | None
    keeps: int | None  # best checkpoints exported: at most one per evaluation after training starts


@dataclass(frozen=True)
class Counts:
    """Everything a plan's steps do, counted; no time in it."""

    trainings: tuple[Training, ...]
    backbones: frozenset[str]  # every model the plan loads: the trainings' backbones and the baseline
    models_evaluated: int  # models an evaluation step loads (each seed, the baseline)
    evaluation_sentences: int | None  # unique sentences each model's evaluation encodes, summed
    transfer: dict[str, int]  # ``task@mode`` -> models whose classifiers it fits
    analysis_runs: int
    cached_analysis_runs: int  # those whose every sentence the model's evaluation encoded (no model loaded)
    analysis_sentences: int | None  # sentences the analyses encode that the model's evaluation did not
    reports: int
    unknown: tuple[str, ...] = ()  # what could not be counted (a plugin analysis, data not found)

    def total(self, name: str) -> int | None:
        """The sum of a :class:`Training` field over the trainings; None if any is unknown."""
        values = [getattr(t, name) for t in self.trainings]
        return None if None in values else sum(values)

    @property
    def dev_sentences(self) -> int | None:
        """Sentences encoded by every dev evaluation of every training."""
        each = [
            None
            if t.dev_evaluations is None or t.dev_sentences is None
            else t.dev_evaluations * t.dev_sentences
            for t in self.trainings
        ]
        return None if None in each else sum(each)  # type: ignore[arg-type]

    def line(self) -> str:
        """The counts in words, one line."""

        def n(value: int | None) -> str:
            return "?" if value is None else f"{value:,}"

        trains = (
            f"{plural(len(self.trainings), 'training')}: {n(self.total('steps'))} optimizer steps, "
            f"{n(self.total('dev_evaluations'))} dev evaluations ({n(self.dev_sentences)} sentences), "
            f"{n(self.total('saves'))} resumable saves, up to {n(self.total('keeps'))} best checkpoints kept"
        )
        fits = sum(self.transfer.values())
        evaluations = (
            f"{plural(self.models_evaluated, 'model')} evaluated ({n(self.evaluation_sentences)} sentences"
        )
        evaluations += f", {fits} transfer tasks fitted)" if fits else ")"
        analyses = f"{plural(self.analysis_runs, 'analysis run')} ({self.cached_analysis_runs} on cached sentences alone, "
        analyses += f"{n(self.analysis_sentences)} sentences not cached)"
        return f"{trains}; {evaluations}; {analyses}; {plural(self.reports, 'report')}"


def dev_evaluations(steps: int, every: int, at_start: bool) -> int:
    """The trainer's dev evaluations: before training (``eval_at_start``), every ``every`` steps, after the last."""
    return int(at_start) + steps // every + int(steps % every != 0)


@lru_cache(maxsize=256)
def task_texts(data_dir: Path, task: str, mode: str, pairs: bool) -> frozenset[str] | None:
    """The unique texts of a task in a mode (``pairs``: an analysis' STS split), None where its data is absent."""
    from stsbench.errors import StsbenchError

    try:
        if pairs:
            from stsbench.data.sts import load_pairs

            found = load_pairs(data_dir, task, mode)
            return frozenset([*found.sent1, *found.sent2])
        from stsbench.tasks.base import Mode
        from stsbench.tasks.registry import get_task

        t = get_task(task)
        return frozenset(t.texts(t.load(data_dir, Mode(mode))))
    except (StsbenchError, OSError, ValueError):
        return None


def union_of(parts: list[frozenset[str] | None]) -> frozenset[str] | None:
    """Every text of ``parts``, each once; None where one of them is unknown."""
    return None if any(p is None for p in parts) else frozenset().union(*parts)  # type: ignore[arg-type]


def _training(step: Step, data_dir: Path) -> Training:
    from stsbench.train.config import make_config

    cfg = make_config({**step.config, "seed": 1, "output": str(step.folder)})
    total = step.total_steps
    dev = task_texts(data_dir, "STSBenchmark", "dev", False)
    if cfg.select_on == "sts-test":  # the seven STS test sets at every evaluation too
        from stsbench.tasks.registry import STS_TASK_NAMES

        dev = union_of([dev, *(task_texts(data_dir, t, "test", False) for t in STS_TASK_NAMES)])
    if total is None:
        evaluations = saves = keeps = None
    else:
        evaluations = dev_evaluations(total, cfg.eval_steps, cfg.eval_at_start)
        saves = dev_evaluations(total, cfg.save_steps or cfg.eval_steps, False)  # every N steps and the last
        keeps = dev_evaluations(total, cfg.eval_steps, False)
    sentences = None if dev is None else len(dev)
    return Training(step.model, step.method, cfg.batch_size, total, evaluations, sentences, saves, keeps)


def count(plan: Plan) -> Counts:
    """Count what ``plan``'s steps do (:class:`Counts`), from their options and the data folder.

    ``plan`` may hold some of its recipe's steps (what is left to run): an evaluation done is not counted, and
    what it encoded is in the cache for the analyses after it.
    """
    from stsbench.analyses.registry import get_analysis
    from stsbench.tasks.registry import get_task, task_names

    unknown: list[str] = []
    trainings = tuple(_training(s, plan.data_dir) for s in plan.steps if s.kind == "train")
    encoded: dict[str, frozenset[str] | None] = {}  # model label -> what its evaluation encoded
    transfer: dict[str, int] = {}
    evaluated = 0
    specs = [("baseline", plan.recipe.baseline.evaluate, 1)] if plan.recipe.baseline is not None else []
    specs += [(r.name, r.evaluate, len(r.seeds)) for r in plan.recipe.runs if r.evaluate is not None]
    tasks_of = {label: task_names(list(spec.tasks)) for label, spec, _ in specs}
    for (
        label,
        spec,
        _models,
    ) in specs:  # every evaluation's sentences: a done one's are cached for the analyses
        encoded[label] = union_of([task_texts(plan.data_dir, t, spec.mode, False) for t in tasks_of[label]])
    ids = {s.id for s in plan.steps}
    specs = [s for s in specs if f"evaluate/{s[0]}" in ids]  # those left to run
    for label, spec, models in specs:
        tasks = tasks_of[label]
        evaluated += models
        for t in tasks:
            if getattr(get_task(t), "kind", "sts") != "sts":
                transfer[f"{t}@{spec.mode}"] = transfer.get(f"{t}@{spec.mode}", 0) + models
    sentences: int | None = 0
    for label, _spec, models in specs:
        texts = encoded[label]
        sentences = None if texts is None or sentences is None else sentences + models * len(texts)
    runs, cached_runs, fresh = 0, 0, 0
    for step in plan.steps:
        if step.kind != "analysis":
            continue
        runs += 1
        number, model = step.id.split("/", 2)[1:]
        entry = plan.recipe.analyses[int(number.split("-", 1)[0]) - 1]
        analysis = get_analysis(entry.name)
        what = analysis.encodes(analysis.make_config(**entry.options))
        texts = (
            None
            if what is None
            else union_of([task_texts(plan.data_dir, t, s, True) for t, s in what.splits])
        )
        cached = encoded.get(model.split("/")[0], frozenset()) or frozenset()
        if what is None or texts is None:
            fresh = None
            unknown.append(
                f"what {entry.name} encodes" if what is None else f"{entry.name}'s data (not found)"
            )
        else:
            new = len(texts - cached) + what.sentences
            cached_runs += new == 0
            fresh = None if fresh is None else fresh + new
    backbones = {t.model for t in trainings if t.model is not None}
    if plan.recipe.baseline is not None:
        backbones.add(plan.recipe.baseline.model)
    return Counts(
        trainings,
        frozenset(backbones),
        evaluated,
        sentences,
        transfer,
        runs,
        cached_runs,
        fresh,
        sum(s.kind == "report" for s in plan.steps),
        tuple(dict.fromkeys(unknown)),
    )
