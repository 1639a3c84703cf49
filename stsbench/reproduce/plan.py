"""A recipe as a plan: its steps (train -> evaluate -> analyses -> report), each keyed by what determines it.

Layout of ``OUT``: ``runs/<run>/seed-<s>/`` (training runs, as ``stsbench train --seeds`` lays them out),
``results/`` (what the report reads, and all it reads: ``stsbench run`` results, each run's seed aggregate
``runs__<run>/``, the analyses under ``results/analyses/`` and, copied before the report, each training run's
``stsbench.json`` and ``train_log.jsonl`` under ``results/train/<run>/seed-<s>/``, no weights),
``configs/<run>.yaml`` (the options each run's seeds train with), ``logs/`` (each step's output) and the report
itself (``report.md``, ``report.html``, ``figures/``). The report's command names ``OUT`` as it was given
(relative stays relative), since the report prints that command.

A step's ``key`` is the sha256 of everything it reads and nothing else (:mod:`stsbench.reproduce.keys`): for a
training run its options resolved for the device it trains on, its corpus and the files it selects its checkpoint
on; for the other steps their options, the data files they read (by content, under their names relative to the
data folder) and the keys of the steps they read from, so that a change reaches every step downstream of it and
no other, and where the data folder or the reproduction lies changes none. Its ``code`` is the code that computes
it (:func:`stsbench.reproduce.keys.step_code`): a step done with other code is *changed*, which a rerun does not
decide alone (``--rerun-changed``, ``--keep-changed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from stsbench.errors import StsbenchError
from stsbench.recipes import Recipe, Run
from stsbench.reproduce.keys import (
    Keys,
    code_of,
    corpus_entry,
    digest,
    key_config,
    make_keys,
    model_identity,
    named_digests,
    step_code,
    train_code,
)
from stsbench.reproduce.report_step import CLAIMS_FILE, claims_data, kept_note, report_keys
from stsbench.results.labels import model_slug

__all__ = [
    "Plan",
    "Step",
    "build_plan",
    "code_of",
    "digest",
    "key_config",
    "kept_note",
    "report_step",
    "train_code",
]

Kind = Literal["train", "evaluate", "analysis", "report"]
KINDS: tuple[Kind, ...] = ("train", "evaluate", "analysis", "report")


@dataclass(frozen=True)
class Step:
    """One command of the plan and what it depends on."""

    id: str
    kind: Kind
    args: tuple[str, ...]  # after "stsbench"
    key: str
    deps: tuple[str, ...] = ()
    folder: Path | None = None  # a training step's run folder
    total_steps: int | None = None  # a training step's optimizer steps (None: unknown before its data is)
    model: str | None = None  # a training step's backbone
    method: str | None = None
    config: dict[str, Any] = field(default_factory=dict, compare=False)  # a training step's options (YAML)
    code: str = ""  # the digest of the code that computes it (a step done with other code is changed)
    parts: dict[str, str] = field(default_factory=dict, compare=False)  # a digest per part of the key
    # what it writes that is read after it, as patterns relative to OUT (stsbench.reproduce.seals: sealed when
    # it finishes); a training's are its run folder's results files
    outputs: tuple[str, ...] = ()
    data: tuple[Path, ...] = field(
        default=(), compare=False
    )  # the SentEval files it reads (keyed by content)


@dataclass(frozen=True)
class Plan:
    """The steps of a recipe in the order they may run, with the folder they write."""

    recipe: Recipe
    out: Path
    steps: tuple[Step, ...]
    data_dir: Path

    def step(self, step_id: str) -> Step:
        """The step called ``step_id``."""
        return next(s for s in self.steps if s.id == step_id)

    def dependants(self, step_id: str) -> set[str]:
        """Every step that reads, directly or not, what ``step_id`` writes."""
        found: set[str] = set()
        frontier = {step_id}
        while frontier:
            frontier = {s.id for s in self.steps if set(s.deps) & frontier} - found
            found |= frontier
        return found


def task_files(tasks: Iterable[str], data_dir: Path, mode: str) -> list[Path]:
    """The data files ``tasks`` read in ``mode``."""
    from stsbench.tasks.registry import get_task

    return [f for t in tasks for f in get_task(t).files(data_dir, mode)]  # type: ignore[arg-type]


def _keys(keys: Keys, code: str) -> dict[str, Any]:
    """A :class:`Step`'s key fields from ``keys`` and its code."""
    return dict(key=keys.key, parts=keys.parts, code=code)


def selection_files(select_on: str, data_dir: Path) -> list[Path]:
    """The files a training selects its checkpoint on: STS-B dev, or with ``sts-test`` the seven STS test sets."""
    if select_on == "sts-test":
        from stsbench.tasks.registry import resolve_tasks

        return task_files([t.name for t in resolve_tasks("sts")], data_dir, "test")
    return task_files(["STSBenchmark"], data_dir, "dev")


def seed_folder(out: Path, run: str, seed: int) -> Path:
    """Where a run's seed trains: ``OUT/runs/<run>/seed-<s>`` (the layout ``train --seeds`` writes)."""
    return out / "runs" / run / f"seed-{seed}"


def run_config(run: Run, data_dir: Path | None) -> dict[str, Any]:
    """The options every seed of ``run`` trains with: the packaged config's, its overrides and corpus."""
    from stsbench.recipes.check import run_options
    from stsbench.train.config import load_yaml

    options = {k: v for k, v in run_options(run, 0, "").items() if k not in ("seed", "output")}
    merged = {**load_yaml(run.config_file), **options}
    if data_dir is not None:
        merged["data_dir"] = str(data_dir)
    return {k: v for k, v in merged.items() if v is not None}


def _corpus(train_file: str, lines: int | None, data_dir: Path) -> tuple[Path, int | None]:
    """The file a training run reads and its line count (from the corpus' known size when it is absent)."""
    from stsbench.data.corpora import CORPORA, resolve_train_file

    try:
        path, name = resolve_train_file(train_file, lines, data_dir)
    except StsbenchError:  # absent: the dry run still shows the plan; training names what to fetch
        name = CORPORA.canonical(train_file)
        corpus = CORPORA.get(name) if name else None
        return data_dir / (corpus.file if corpus else train_file), lines or getattr(corpus, "lines", None)
    if lines is not None or not path.is_file():
        return path, lines
    with path.open("rb") as fh:
        return path, sum(1 for _ in fh)


def train_step(
    recipe: Recipe,
    run: Run,
    seed: int,
    out: Path,
    data_dir: Path,
    report_to: str | None = None,
    gpus: int = 0,
) -> Step:
    """A seed's training: ``stsbench train --config OUT/configs/<run>.yaml --seed S --output ...``.

    ``report_to``: also log to these trackers, the seeds grouped as ``<recipe>/<run>`` (not in the key: where
    the numbers are also logged changes none of them). ``gpus``: the GPUs it trains on (0: the CPU, or the
    config's ``device``), which resolve its device-dependent options.
    """
    from stsbench.train.config import default_length_buckets, make_config
    from stsbench.train.schedule import run_steps

    folder = seed_folder(out, run.name, seed)
    options = run_config(run, data_dir)
    cfg = make_config({**options, "seed": seed, "output": str(folder)})
    corpus, lines = _corpus(cfg.train_file, cfg.train_lines, data_dir)
    total = run_steps(cfg.max_steps, cfg.epochs, lines, cfg.batch_size)
    device = "cuda" if gpus else (cfg.device or "cpu")
    resolved = {
        **cfg.to_dict(),
        "length_buckets": cfg.length_buckets or default_length_buckets(device, cfg.pad_to_max_length),
    }
    selection = selection_files(cfg.select_on, data_dir)
    keys = make_keys(
        {
            "kind": "train",
            "config": key_config(resolved),
            "corpus": corpus_entry(corpus, data_dir, cfg.train_lines),
            "data": named_digests(selection, data_dir),
        }
    )
    config_file = out / "configs" / f"{run.name}.yaml"
    # not --quiet: the step's log holds its output (what it trained, each evaluation, where it saved)
    args = ("train", "--config", str(config_file), "--seed", str(seed), "--output", str(folder))
    if report_to and report_to != "none":
        args += ("--report-to", report_to, "--run-group", f"{recipe.name}/{run.name}")
    return Step(
        f"train/{run.name}/seed-{seed}",
        "train",
        args,
        **_keys(keys, train_code(cfg.to_dict())),
        folder=folder,
        total_steps=total,
        model=cfg.model,
        method=cfg.method,
        config=options,
        data=tuple(selection),
    )


def _data_flag(data_dir: Path) -> tuple[str, ...]:
    return ("--data-dir", str(data_dir))


def evaluate_step(run: Run, trains: list[Step], out: Path, data_dir: Path) -> Step:
    """Every seed of a run, then their aggregate: ``stsbench run --model OUT/runs/<run>``."""
    from stsbench.tasks.registry import task_names

    assert run.evaluate is not None
    tasks = task_names(list(run.evaluate.tasks))
    files = task_files(tasks, data_dir, run.evaluate.mode)
    material = {"kind": "evaluate", "tasks": sorted(tasks), "mode": run.evaluate.mode}
    keys = make_keys({**material, "data": named_digests(files, data_dir), "deps": [t.key for t in trains]})
    model = str(out / "runs" / run.name)
    args = ("run", "--model", model, "--tasks", ",".join(tasks), "--mode", run.evaluate.mode)
    args += ("--output", str(out / "results"), *_data_flag(data_dir))
    deps = tuple(t.id for t in trains)
    folders = [f"runs__{run.name}", *(f"{run.name}__seed-{s}" for s in run.seeds)]
    outputs = tuple(f"results/{d}{prompted}/**/*" for d in folders for prompted in ("", "+*"))
    code = _keys(keys, task_code(tasks))
    return Step(
        f"evaluate/{run.name}", "evaluate", args, **code, deps=deps, outputs=outputs, data=tuple(files)
    )


def task_code(tasks: Iterable[str]) -> str:
    """An evaluation's code: the evaluator's and that of each plugin task it runs."""
    from stsbench.tasks.registry import TASKS

    return step_code("evaluate", {f"task {t}": TASKS.plugin(t) for t in tasks})


def baseline_step(recipe: Recipe, out: Path, data_dir: Path) -> Step:
    """The backbone evaluated as it is: ``stsbench run --model <baseline>``."""
    from stsbench.tasks.registry import task_names

    assert recipe.baseline is not None
    tasks = task_names(list(recipe.baseline.evaluate.tasks))
    mode = recipe.baseline.evaluate.mode
    files = task_files(tasks, data_dir, mode)
    model = model_identity(recipe.baseline.model)
    material = {"kind": "evaluate", "model": model, "tasks": sorted(tasks), "mode": mode}
    keys = make_keys({**material, "data": named_digests(files, data_dir)})
    args = ("run", "--model", recipe.baseline.model, "--tasks", ",".join(tasks), "--mode", mode)
    args += ("--output", str(out / "results"), *_data_flag(data_dir))
    return Step(
        "evaluate/baseline",
        "evaluate",
        args,
        **_keys(keys, task_code(tasks)),
        outputs=(f"results/{model_slug(recipe.baseline.model)}/**/*",),
        data=tuple(files),
    )


def _option_flags(options: dict[str, Any]) -> tuple[str, ...]:
    flags: list[str] = []
    for name, value in sorted(options.items()):
        flag = "--" + str(name).replace("_", "-")
        if isinstance(value, bool):
            flags.append(flag if value else "--no-" + flag[2:])
        else:
            flags += [flag, str(value)]
    return tuple(flags)


def analysis_steps(recipe: Recipe, trains: dict[str, Step], out: Path, data_dir: Path) -> list[Step]:
    """Each analysis on each checkpoint it names (default: every seed of every run) and the baseline.

    Every seed by default, so that an analysis' figures come with their spread over seeds as the scores do
    (the report's analysis sections: mean, std and the 95% interval over seeds).
    """
    from stsbench.analyses.registry import ANALYSES, get_analysis

    steps = []
    for i, a in enumerate(recipe.analyses, start=1):
        analysis = get_analysis(a.name)
        options = dict(a.options)
        inputs: dict[str, Any] = {}
        if a.corpus is not None:
            corpus, _ = _corpus(a.corpus.name, a.corpus.lines, data_dir)
            options["corpus"] = str(corpus)
            inputs["corpus"] = corpus_entry(corpus, data_dir)
        flags = _option_flags(options)
        config = analysis.make_config(**options)
        files: list[Path] = []
        if analysis.uses_data_dir:
            flags += _data_flag(data_dir)
            _, files = analysis.data_files(config, data_dir, None)
            inputs["data"] = named_digests(files, data_dir)
        code = step_code("analysis", {"analysis": ANALYSES.plugin(a.name)})
        variant = analysis.variant(config)
        stem = f"{analysis.name}_{variant}" if variant else analysis.name
        models: list[tuple[str, str, Step | None]] = []
        for run in recipe.runs:
            if a.runs is not None and run.name not in a.runs:
                continue
            for seed in a.seeds or run.seeds:
                if seed in run.seeds:
                    train = trains[f"train/{run.name}/seed-{seed}"]
                    models.append((f"{run.name}/seed-{seed}", str(train.folder), train))
        if a.baseline and recipe.baseline is not None:
            models.append(("baseline", recipe.baseline.model, None))
        for label, model, train in models:
            folder = label.replace("/", "__") if train is not None else model_slug(model)
            material = {"kind": "analysis", "name": a.name, "options": a.options, "inputs": inputs}
            keys = make_keys({**material, "model": train.key if train is not None else model_identity(model)})
            args = (analysis.command, "--model", model, *flags, "--output", str(out / "results" / "analyses"))
            deps = (train.id,) if train is not None else ()
            step_id = f"analysis/{i}-{a.name}/{label}"
            outputs = (f"results/analyses/{folder}/*/{stem}.*",)
            step = Step(
                step_id, "analysis", args, **_keys(keys, code), deps=deps, outputs=outputs, data=tuple(files)
            )
            steps.append(step)
    return steps


def mini_banner(recipe: Recipe) -> str | None:
    """A mini recipe's banner for every table and figure: its backbone, steps, corpus and seeds, not the paper's."""
    if recipe.flavour != "mini":
        return None
    found: list[str] = []
    for run in recipe.runs:
        c = run_config(run, None)
        steps = f"{c['max_steps']} steps" if c.get("max_steps") else f"{c.get('epochs', 1)} epoch(s)"
        corpus = Path(str(c.get("train_file", "?"))).name
        lines = f"'s first {c['train_lines']:,} lines" if c.get("train_lines") else ""
        text = f"{c.get('model')}, {steps} of {c.get('batch_size')} sentences from {corpus}{lines}"
        if text not in found:
            found.append(text)
    from stsbench.progress import seeds_a_setting

    seeds = sorted({len(r.seeds) for r in recipe.runs})
    return f"Mini scale: {'; '.join(found)}; {seeds_a_setting(seeds[0], seeds[-1])}: not the paper's setting."


def report_step(recipe: Recipe, before: list[Step], out: Path, kept: Sequence[str] = ()) -> Step:
    """``stsbench report --results OUT/results --out OUT``, ``--against`` the runs' published rows.

    ``out`` as the user gave it (:func:`stsbench.reproduce.report_step.report_keys`); ``kept``: the steps kept
    with ``--keep-changed``, which the report names.
    """
    args, keys = report_keys(recipe, before, out, kept, mini_banner(recipe))
    deps = tuple(s.id for s in before)
    return Step(
        "report", "report", tuple(args), **_keys(keys, code_of("report")), deps=deps, outputs=("report.md",)
    )


def build_plan(
    recipe: Recipe,
    out: Path,
    data_dir: str | Path | None = None,
    report_to: str | None = None,
    kept: Sequence[str] = (),
    gpus: int = 0,
) -> Plan:
    """Every step of ``recipe`` writing into ``out``, keyed; the data folder as ``--data-dir`` resolves it.

    ``report_to``: the training steps also log to these trackers (``stsbench train --report-to``).
    ``kept``: steps kept from other code (``--keep-changed``), which the report names. ``gpus``: the GPUs a
    training runs on (``reproduce --gpus``; 0: the CPU), which its device-dependent options resolve for.
    """
    from stsbench.paths import resolve_data_dir

    data = resolve_data_dir(data_dir, must_exist=False).absolute()
    given = Path(out).expanduser()
    out = given.absolute()
    trains = {}
    evaluations = []
    for run in recipe.runs:
        seeds = [train_step(recipe, run, s, out, data, report_to, gpus) for s in run.seeds]
        trains.update({t.id: t for t in seeds})
        if run.evaluate is not None:  # else its figure is the training's own best dev score
            evaluations.append(evaluate_step(run, seeds, out, data))
    if recipe.baseline is not None:
        evaluations.insert(0, baseline_step(recipe, out, data))
    analyses = analysis_steps(recipe, trains, out, data)
    steps = [*trains.values(), *evaluations, *analyses]
    return Plan(recipe, out, (*steps, report_step(recipe, steps, given, kept)), data)


def training_copy(folder: Path, out: Path) -> Path:
    """Where the report step copies a training's logs: ``OUT/results/train/<run>/seed-<s>/``."""
    return out / "results" / "train" / folder.relative_to(out / "runs")


def training_copies(plan: Plan) -> list[tuple[Path, Path]]:
    """``(source, copy)`` of each training run's ``stsbench.json`` and ``train_log.jsonl``, the report's inputs.

    The copies go to ``OUT/results/train/<run>/seed-<s>/``, so that ``OUT/results`` alone (no weights) is what
    the report reads: the layout of the checked-in ``reports/cpu-mini-replication``.
    """
    from stsbench.results.runs import RUN_META, TRAIN_LOG

    pairs = []
    for step in plan.steps:
        if step.kind == "train" and step.folder is not None:
            copy = training_copy(step.folder, plan.out)
            pairs += [(step.folder / name, copy / name) for name in (RUN_META, TRAIN_LOG)]
    return pairs


def prepare(plan: Plan, step: Step) -> None:
    """Write what ``step``'s command reads and no step writes: a training's options file, the report's copies."""
    from stsbench.files import atomic_write_text

    if step.kind == "train":  # the options its seeds share, beside the runs
        import yaml

        atomic_write_text(Path(step.args[2]), yaml.safe_dump(step.config, sort_keys=True))
    elif step.kind == "report":
        from stsbench.results.portable import copy_training_file
        from stsbench.results.recipe_runs import write_recipe_runs
        from stsbench.results.scale import write_scale

        write_recipe_runs(
            plan.out / "results", plan.recipe
        )  # its runs' sweeps and published cells, for the report
        banner = mini_banner(plan.recipe)
        if (
            banner and not plan.recipe.omitted
        ):  # the whole recipe's scale, kept with its results (a subset's is not)
            write_scale(plan.out / "results", banner)

        if plan.recipe.claims:
            import yaml

            atomic_write_text(
                plan.out / CLAIMS_FILE, yaml.safe_dump(claims_data(plan.recipe), sort_keys=False)
            )

        for source, copy in training_copies(plan):  # with their paths relative to the copy
            if not source.is_file() and copy.is_file():
                continue  # a finished run whose folder (weights) is not kept: its copy is what the report reads
            if not source.is_file():
                raise StsbenchError(
                    f"{source} is missing, and no copy of it under {copy.parent}; train the run again"
                )
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy_training_file(source, copy)
