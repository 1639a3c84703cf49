"""Runs that differ only in their seed, read as one group: its per-task values over seeds and their statistics.

Two training runs are seeds of one another when their configs are equal once ``seed`` and the bookkeeping
fields (``output``, ``threads``, ``device``...: :data:`stsbench.train.config.BOOKKEEPING`) are left out, the
training file compared by name and row count as the ablation tables do, and their checkpoints were
evaluated with the same pooler. ``stsbench train --seeds 1,2,3 --output OUT`` makes such runs
(``OUT/seed-<s>/``); so do runs trained one by one with ``--seed``. A model without a training run under
the results (a backbone) is a group of one.

Every table of the report is over these groups: a model without seeds (or with one) is a group of one, its
cells the figures as measured; a group of several seeds shows ``mean ± std`` (:func:`mean_std`) and the 95%
interval over seeds (:func:`interval`). Statistics over seeds (a seed is one draw of the training's randomness)
come from :mod:`stsbench.stats.seeds`: mean, sample std and the t-interval of the mean; a group against the
baseline group: the difference of the means and its interval by the one rule (:mod:`stsbench.stats.decide`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.metrics import raw_average, simcse_average
from stsbench.reports.collect import Collection, TaskRecord, TrainRun
from stsbench.reports.models import METHOD_ORDER, Model
from stsbench.results.labels import last_part
from stsbench.stats.seeds import SeedSummary
from stsbench.tabular import DASH, fmt
from stsbench.train.config import BOOKKEEPING

BASELINE = "unsup-SimCSE"  # the method the differences are taken against, unless --baseline says otherwise
TEST_SELECTED = (
    " [selected on the STS test sets]"  # a group trained with select_on: sts-test (never our default)
)
LEVEL = 0.95
SIGNIFICANT = "*"  # the mark


@dataclass(frozen=True)
class SeedGroup:
    """Models whose training runs differ only in the seed (a model not trained here: a group of one)."""

    name: str  # the method, with the seeds' folder in brackets where two groups share a method
    method: str | None
    models: tuple[Model, ...]  # one per seed, in seed order

    @property
    def n(self) -> int:
        """How many seeds (checkpoints) the group has."""
        return len(self.models)

    @property
    def test_selected(self) -> bool:
        """Its checkpoints were kept by the seven STS test sets (``select_on: sts-test``, MoCoSE's official way)."""
        return any(r.config.get("select_on") == "sts-test" for r in self.runs)

    @property
    def label(self) -> str:
        """What tables and figures call the group: ``unsup-SimCSE (n=5)``; a group of one its model's label.

        A group whose checkpoints were selected on the test sets says so (:data:`TEST_SELECTED`), wherever shown.
        """
        label = f"{self.name} (n={self.n})" if self.n > 1 else self.models[0].label
        return label + (TEST_SELECTED if self.test_selected else "")

    @property
    def runs(self) -> list[TrainRun]:
        """The seeds' training runs, in seed order."""
        return [m.run for m in self.models if m.run is not None]

    @property
    def seeds(self) -> list[Any]:
        """Each model's training seed."""
        return [m.run.config.get("seed") if m.run else None for m in self.models]

    @property
    def seed_ids(self) -> list[int]:
        """Each model's key in ``{seed: figure}`` (:func:`seed_ids`)."""
        return seed_ids(self.seeds)


def seed_ids(seeds: Sequence[Any]) -> list[int]:
    """The keys in ``{seed: figure}`` of models with these training seeds: each seed; with none at all, each place.

    A place could equal a seed of the same group (seeds ``[3, None]`` would key the second 1), so a group that
    mixes models with and without an int seed is refused (one line); a group none of whose models has one (a
    model not trained here: 0) is keyed by place. Two models of one seed share its key (a run again is not
    another seed).
    """
    seeded = [isinstance(s, int) and not isinstance(s, bool) for s in seeds]
    if all(seeded):
        return list(seeds)
    if not any(seeded):
        return list(range(len(seeds)))
    raise StsbenchError(
        f"seeds {list(seeds)}: a group mixes trained models with and without an int seed; "
        "give each of its runs' config a seed"
    )


def seed_key(run: TrainRun, pooler: str) -> str:
    """What two seeds of one setting share: the config without seed and bookkeeping, and the eval pooler."""
    config = {k: v for k, v in run.resolved_config.items() if k not in BOOKKEEPING and k != "seed"}
    if config.get("train_file"):
        config["train_file"] = f"{last_part(str(config['train_file']))} ({run.train_rows} rows)"
    return repr((sorted(config.items()), pooler))


def seeds_folder(run: TrainRun) -> str:
    """The seeds' folder: ``OUT`` for ``OUT/seed-<s>``, else the run's own folder."""
    parts = run.path.split("/")
    return parts[-2] if len(parts) > 1 and parts[-1].startswith("seed-") else parts[-1]


def seed_groups(models: list[Model], labels: Mapping[str, str] | None = None) -> list[SeedGroup]:
    """Group ``models`` (in their report order) by :func:`seed_key`; groups keep the order of their first model.

    A group is named by ``labels`` (its seeds' folder -> the label its recipe gives the run, :func:`declared_labels`),
    else by its method (with its seeds' folder in brackets where two groups share one), else its model's label.
    """
    buckets: dict[str, list[Model]] = {}
    for i, m in enumerate(models):
        key = seed_key(m.run, m.pooler) if m.run is not None else f"model {i}"
        buckets.setdefault(key, []).append(m)
    members = [
        tuple(sorted(ms, key=lambda m: (_sortable(m.run.config.get("seed")), m.label)) if ms[0].run else ms)
        for ms in buckets.values()
    ]
    methods = [ms[0].method for ms in members]
    groups = []
    labels = labels or {}
    for ms, method in zip(members, methods, strict=True):
        name = method or ms[0].label
        declared = labels.get(seeds_folder(ms[0].run)) if ms[0].run else None
        if declared:
            name = declared
        elif len(ms) > 1 and methods.count(method) > 1:
            name = f"{method} [{seeds_folder(ms[0].run)}]"
        groups.append(SeedGroup(name, method, ms))
    return groups


def declared_labels(folders: Sequence[str] | Sequence[Any]) -> dict[str, str]:
    """Each declared run's label by its seeds' folder (``recipe_runs.json`` in ``folders``; none without one)."""
    from stsbench.results.recipe_runs import read_recipe_runs

    return {name: run.label for name, run in read_recipe_runs(folders).items() if run.label}


TRAINING_ONLY = "training run"  # the ModelInfo kind of a training run no result was computed from


def training_only(coll: Collection, models: list[Model]) -> list[Model]:
    """A model for each training run under the results of a setting none of whose seeds was evaluated.

    Its one figure is the training's own best STS-B dev score (a dev-set sweep: a recipe's ``evaluate: null``);
    it joins the groups of seeds, which claims and cells are judged on, never the score tables. A run whose
    setting has evaluated seeds stays out (a seed whose results were not kept is not one more seed of them).
    """
    from stsbench.reports.models import method_of, method_rank
    from stsbench.results.labels import base_label
    from stsbench.results.schema import ModelInfo

    used = {m.run.path for m in models if m.run is not None}
    evaluated = {seed_key(m.run, m.pooler) for m in models if m.run is not None}
    found = []
    for run in coll.runs:
        if run.path in used or seed_key(run, run.eval_pooler or "") in evaluated:
            continue
        where = run.output or run.path
        info = ModelInfo(
            where, where, f"{TRAINING_ONLY}:{run.path}", run.eval_pooler or "", None, "", TRAINING_ONLY
        )
        found.append(Model(base_label(where), where, info.pooler, info, run, method_of(run.config), (where,)))
    return sorted(found, key=lambda m: (method_rank(m.method), m.label))


def report_groups(
    coll: Collection, models: list[Model], labels: Mapping[str, str] | None = None
) -> list[SeedGroup]:
    """The report's groups of seeds: the evaluated models' and the training runs' alone (:func:`training_only`).

    ``labels``: the groups' names by seeds' folder (default: :func:`declared_labels` of the collection's folders).
    """
    labels = declared_labels(coll.folders) if labels is None else labels
    return seed_groups([*models, *training_only(coll, models)], labels)


def _sortable(v: Any) -> tuple[int, Any]:
    return (0, v) if isinstance(v, int) else (1, str(v))


def has_seeds(groups: list[SeedGroup]) -> bool:
    """True when some group has two seeds or more (the report then shows seed statistics)."""
    return any(g.n > 1 for g in groups)


def baseline_group(groups: list[SeedGroup], baseline: str) -> SeedGroup | None:
    """The group of seeds named ``baseline``: a method as the tables name it, a group's name or its seeds' folder."""
    multi = [g for g in groups if g.n > 1]
    found = [g for g in multi if baseline in (g.name, g.method, seeds_folder(g.runs[0]) if g.runs else None)]
    if found:
        return found[0]
    if baseline not in METHOD_ORDER:
        names = sorted({g.name for g in multi} | set(METHOD_ORDER))
        raise StsbenchError(
            f"--baseline {baseline!r}: no such method or seed group; choose one of: {', '.join(names)}"
        )
    return None


def task_seed_values(
    records: list[TaskRecord], group: SeedGroup, kind: str, mode: str, raw: bool = True
) -> dict[str, dict[int, float]]:
    """``{task: {seed: figure}}`` of one group, one task type and mode; ``raw``: unrounded (what tests read).

    A seed is its training's seed (a model not trained here: its place in the group; :func:`seed_ids`). A model
    with two results of one task (a folder copied or run twice) counts once, with its last result in path order:
    a result run again is not another seed.
    """
    keys = {m.key: s for m, s in zip(group.models, group.seed_ids, strict=True)}
    out: dict[str, dict[int, float]] = {}
    for rec in records:
        r = rec.result
        if r.task_type == kind and r.mode == mode and r.model.fingerprint in keys:
            out.setdefault(r.task, {})[keys[r.model.fingerprint]] = r.raw if raw else r.reported
    return {t: dict(sorted(vs.items())) for t, vs in out.items()}


def task_values(
    records: list[TaskRecord], group: SeedGroup, kind: str, mode: str, raw: bool = False
) -> dict[str, list[float]]:
    """``{task: [figure, one per seed that has it]}`` (:func:`task_seed_values`; as printed unless ``raw``)."""
    return {t: list(vs.values()) for t, vs in task_seed_values(records, group, kind, mode, raw).items()}


def average_seed_values(
    records: list[TaskRecord],
    group: SeedGroup,
    kind: str,
    mode: str,
    tasks: tuple[str, ...],
    raw: bool = True,
) -> dict[int, float]:
    """``{seed: Avg.}`` for the seeds that have every task.

    ``raw``: the plain mean of the unrounded figures (what tests read); else SimCSE's mean of the rounded figures,
    rounded (what tables print).
    """
    per = task_seed_values(records, group, kind, mode, raw)
    seeds = sorted({s for vs in per.values() for s in vs})
    out = {}
    for seed in seeds:
        avg = (raw_average if raw else simcse_average)([per.get(t, {}).get(seed) for t in tasks])
        if avg is not None:
            out[seed] = avg
    return out


def average_values(
    records: list[TaskRecord],
    group: SeedGroup,
    kind: str,
    mode: str,
    tasks: tuple[str, ...],
    raw: bool = False,
) -> list[float]:
    """Each seed's Avg. (:func:`average_seed_values`; SimCSE's rounded mean unless ``raw``)."""
    return list(average_seed_values(records, group, kind, mode, tasks, raw).values())


def modes_of(records: list[TaskRecord], group: SeedGroup, kind: str) -> list[str]:
    """The modes a group has results of, for one task type (test first, as the tables order them)."""
    keys = {m.key for m in group.models}
    found = {
        r.result.mode for r in records if r.result.task_type == kind and r.result.model.fingerprint in keys
    }
    order = {"test": 0, "fasttest": 1, "dev": 2}
    return sorted(found, key=lambda m: (order.get(m, 3), m))


def mean_std(s: SeedSummary | None, n: int) -> str:
    """``79.97 ± 0.21``; the cell's own n where it has fewer seeds than its row; one value as it is."""
    if s is None:
        return DASH
    text = fmt(s.mean) if s.std is None else f"{fmt(s.mean)} ± {fmt(s.std)}"
    return text if s.n == n else f"{text} (n={s.n})"


def interval(s: SeedSummary | None) -> str:
    """``[79.71, 80.23]``, a dash for one seed."""
    return DASH if s is None or s.low is None else f"[{fmt(s.low)}, {fmt(s.high)}]"


# --- rows for the figures ---------------------------------------------------------------------------------


def seed_points(
    records: list[TaskRecord], groups: list[SeedGroup], kind: str
) -> list[tuple[str, str, float]]:
    """(group label, task, value) of every seed of the groups of seeds, test (STS: or fasttest) results; Avg. last."""
    from stsbench.analyses.common import short_name
    from stsbench.average import AVG
    from stsbench.published.cells import result_modes
    from stsbench.published.registry import STS_TASKS, TRANSFER_TASKS

    tasks = STS_TASKS if kind == "sts" else TRANSFER_TASKS
    rows: list[tuple[str, str, float]] = []
    for task in [*tasks, AVG]:
        for g in (g for g in groups if g.n > 1):
            mode = next((m for m in modes_of(records, g, kind) if m in result_modes("test", tasks)), None)
            if mode is None:
                continue
            if task == AVG:
                values = average_values(records, g, kind, mode, tasks)
            else:
                values = task_values(records, g, kind, mode).get(task, [])
            rows += [(g.label, short_name(task), v) for v in values]
    return rows


DEV_COLUMNS = ("group", "seed", "step", "dev_spearman_x100")


def labelled_seed_runs(
    groups: Sequence[SeedGroup], runs: Sequence[TrainRun], labels: Mapping[str, str]
) -> list[tuple[str, str, TrainRun]]:
    """(group label, seed as text, run) of every run, groups in report order: what the figures from logs draw.

    A run whose checkpoint was not evaluated (so is in no group) comes last, named by ``labels[run.path]``.
    """
    ordered = [(g.label, r) for g in groups for r in g.runs]
    seen = {id(r) for _, r in ordered}
    ordered += [(labels.get(r.path, r.name), r) for r in runs if id(r) not in seen]
    return [(label, "" if r.config.get("seed") is None else str(r.config["seed"]), r) for label, r in ordered]


def dev_points(groups: list[SeedGroup], runs: list[TrainRun], labels: dict[str, str]) -> list[list[str]]:
    """(group label, seed, step, STS-B dev x100) of every evaluation of every run (:func:`labelled_seed_runs`).

    Rows of text for the CSV beside the dev curves (:data:`DEV_COLUMNS`), which the figure is drawn from.
    """
    return [
        [label, seed, str(step), repr(value * 100)]
        for label, seed, run in labelled_seed_runs(groups, runs, labels)
        for step, value in run.curve
        if value is not None
    ]
