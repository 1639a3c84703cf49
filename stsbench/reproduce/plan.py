"""A recipe as a plan: its steps (train -> evaluate -> analyses -> report), each keyed by what determines it.

Layout of ``OUT``: ``runs/<run>/seed-<s>/`` (training runs, as ``stsbench train --seeds`` lays them out),
``results/`` (what the report reads, and all it reads: ``stsbench run`` results, each run's seed aggregate
``runs__<run>/``, the analyses under ``results/analyses/`` and, copied before the report, each training run's
``stsbench.json`` and ``train_log.jsonl`` under ``results/train/<run>/seed-<s>/``, no weights),
``configs/<run>.yaml`` (the options each run's seeds train with), ``logs/`` (each step's output) and the report
itself (``report.md``, ``report.html``, ``figures/``). The report's command names ``OUT`` as it was given
(relative stays relative), since the report prints that command.

A step's ``key`` is the sha256 of the settings and data that determine its output: for a training run its
resolved config, the sha256 of its corpus and of STS-B dev; for the other steps their options, the data files
they read and the keys of the steps they read from, so that a change reaches every step downstream of it and no
other. Its ``code`` is the digest of the stsbench source files that compute it (:func:`stsbench.sources.code_digest`,
read as bytes, nothing imported), and for a training run torch's and transformers' major.minor too: a step done
with other code is *changed*, which a rerun does not decide alone (``--rerun-changed``, ``--keep-changed``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from stsbench.errors import StsbenchError
from stsbench.recipes import Recipe, Run

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
    # the key as stsbench 0.1.0 computed it (the version in the key, no code recorded): a record made then
    # with this key has this step's settings, and only its code is unknown
    legacy_key: str = ""


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


def digest(obj: Any) -> str:
    """sha256 of ``obj`` as canonical JSON (sorted keys; paths as strings)."""
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def file_digests(files: Iterable[Path]) -> dict[str, str | None]:
    """sha256 of each file (the data folder's cached ones, :func:`stsbench.data.integrity.file_sha256s`); None if absent."""
    from stsbench.data.integrity import file_sha256s

    files = sorted(set(files))
    present = [f for f in files if f.is_file()]
    sums = file_sha256s(present)
    return {str(f): sums.get(f) for f in files}


def task_files(tasks: Iterable[str], data_dir: Path, mode: str) -> list[Path]:
    """The data files ``tasks`` read in ``mode``."""
    from stsbench.tasks.registry import get_task

    return [f for t in tasks for f in get_task(t).files(data_dir, mode)]  # type: ignore[arg-type]


LEGACY_VERSION = "0.1.0"  # what keys held before the code had a digest of its own


def _keys(material: dict[str, Any], legacy: dict[str, Any] | None = None) -> dict[str, str]:
    """``key`` of ``material`` (the settings and data) and ``legacy_key``, as 0.1.0 keyed it.

    ``legacy``: what differs in 0.1.0's material (the keys of the steps read, which were legacy keys too).
    """
    old = {**material, **(legacy or {}), "stsbench": LEGACY_VERSION}
    return {"key": digest(material), "legacy_key": digest(old)}


@cache
def code_of(kind: str) -> str:
    """The digest of the code that computes a step of ``kind`` (a training's: with torch's, transformers').

    Computed once per process: the code a process plans with is the code it was started with.
    """
    from stsbench.sources import code_digest, library_versions

    if kind != "train":
        return code_digest(kind)
    return digest({"code": code_digest(kind), "libraries": library_versions()})


def train_code(pooler: str | None) -> str:
    """A training's code: the trainer's, and a plugin pooler's own source (``stsbench.poolers``)."""
    from stsbench.encoders.pooling import POOLERS, pooler_source

    if pooler is None or pooler in POOLERS:
        return code_of("train")
    return digest({"code": code_of("train"), "pooler": pooler_source(pooler)})


def seed_folder(out: Path, run: str, seed: int) -> Path:
    """Where a run's seed trains: ``OUT/runs/<run>/seed-<s>`` (the layout ``train --seeds`` writes)."""
    return out / "runs" / run / f"seed-{seed}"


def run_config(run: Run, data_dir: Path | None) -> dict[str, Any]:
    """The options every seed of ``run`` trains with: the packaged config's, its overrides and corpus."""
    from stsbench.configs import config_path
    from stsbench.recipes.check import run_options
    from stsbench.train.config import load_yaml

    options = {k: v for k, v in run_options(run, 0, "").items() if k not in ("seed", "output")}
    merged = {**load_yaml(config_path(run.config)), **options}
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


# options added after reproductions were recorded, at the value that trains as before: left out of a training's
# key there, so that a reproduction made before the option existed stays current (its code digest still moves)
NEUTRAL_DEFAULTS: dict[str, Any] = {"select_on": "stsb-dev", "augment": "none", "augment_views": "declared"}


def key_config(config: dict[str, Any]) -> dict[str, Any]:
    """The options that key a training: all but where it writes, its data folder and the neutral defaults."""
    return {
        k: v
        for k, v in config.items()
        if k not in ("output", "data_dir") and not (k in NEUTRAL_DEFAULTS and NEUTRAL_DEFAULTS[k] == v)
    }


def train_step(
    recipe: Recipe, run: Run, seed: int, out: Path, data_dir: Path, report_to: str | None = None
) -> Step:
    """A seed's training: ``stsbench train --config OUT/configs/<run>.yaml --seed S --output ...``.

    ``report_to``: also log to these trackers, the seeds grouped as ``<recipe>/<run>`` (not in the key: where
    the numbers are also logged changes none of them).
    """
    from stsbench.train.config import make_config
    from stsbench.train.schedule import run_steps

    folder = seed_folder(out, run.name, seed)
    options = run_config(run, data_dir)
    cfg = make_config({**options, "seed": seed, "output": str(folder)})
    corpus, lines = _corpus(cfg.train_file, cfg.train_lines, data_dir)
    total = run_steps(cfg.max_steps, cfg.epochs, lines, cfg.batch_size)
    dev = task_files(["STSBenchmark"], data_dir, "dev")
    keys = _keys(
        {
            "kind": "train",
            "config": key_config(cfg.to_dict()),
            "corpus": {"file": file_digests([corpus]), "lines": cfg.train_lines},
            "data": list(file_digests(dev).values()),
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
        keys["key"],
        legacy_key=keys["legacy_key"],
        code=train_code(cfg.pooler),
        folder=folder,
        total_steps=total,
        model=cfg.model,
        method=cfg.method,
        config=options,
    )


def _data_flag(data_dir: Path) -> tuple[str, ...]:
    return ("--data-dir", str(data_dir))


def evaluate_step(run: Run, trains: list[Step], out: Path, data_dir: Path) -> Step:
    """Every seed of a run, then their aggregate: ``stsbench run --model OUT/runs/<run>``."""
    from stsbench.tasks.registry import task_names

    assert run.evaluate is not None
    tasks = task_names(list(run.evaluate.tasks))
    files = task_files(tasks, data_dir, run.evaluate.mode)
    keys = _keys(
        {
            "kind": "evaluate",
            "tasks": tasks,
            "mode": run.evaluate.mode,
            "data": list(file_digests(files).values()),
            "deps": [t.key for t in trains],
        },
        {"deps": [t.legacy_key for t in trains]},
    )
    model = str(out / "runs" / run.name)
    args = ("run", "--model", model, "--tasks", ",".join(tasks), "--mode", run.evaluate.mode)
    args += ("--output", str(out / "results"), *_data_flag(data_dir))
    deps = tuple(t.id for t in trains)
    return Step(f"evaluate/{run.name}", "evaluate", args, **keys, code=code_of("evaluate"), deps=deps)


def baseline_step(recipe: Recipe, out: Path, data_dir: Path) -> Step:
    """The backbone evaluated as it is: ``stsbench run --model <baseline>``."""
    from stsbench.tasks.registry import task_names

    assert recipe.baseline is not None
    tasks = task_names(list(recipe.baseline.evaluate.tasks))
    mode = recipe.baseline.evaluate.mode
    files = task_files(tasks, data_dir, mode)
    keys = _keys(
        {
            "kind": "evaluate",
            "model": recipe.baseline.model,
            "tasks": tasks,
            "mode": mode,
            "data": list(file_digests(files).values()),
        }
    )
    args = ("run", "--model", recipe.baseline.model, "--tasks", ",".join(tasks), "--mode", mode)
    args += ("--output", str(out / "results"), *_data_flag(data_dir))
    return Step("evaluate/baseline", "evaluate", args, **keys, code=code_of("evaluate"))


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
    from stsbench.analyses.registry import get_analysis

    steps = []
    for i, a in enumerate(recipe.analyses, start=1):
        analysis = get_analysis(a.name)
        options = dict(a.options)
        inputs: dict[str, Any] = {}
        if a.corpus is not None:
            corpus, _ = _corpus(a.corpus.name, a.corpus.lines, data_dir)
            options["corpus"] = str(corpus)
            inputs["corpus"] = file_digests([corpus])
        flags = _option_flags(options)
        if analysis.uses_data_dir:
            flags += _data_flag(data_dir)
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
            keys = _keys(
                {
                    "kind": "analysis",
                    "name": a.name,
                    "options": a.options,
                    "inputs": inputs,
                    "model": train.key if train is not None else model,
                },
                {"model": train.legacy_key} if train is not None else None,
            )
            args = (analysis.command, "--model", model, *flags, "--output", str(out / "results" / "analyses"))
            deps = (train.id,) if train is not None else ()
            step_id = f"analysis/{i}-{a.name}/{label}"
            steps.append(Step(step_id, "analysis", args, **keys, code=code_of("analysis"), deps=deps))
    return steps


def kept_note(kept: Sequence[str]) -> str:
    """The report's note naming the steps kept with ``--keep-changed`` (computed by other code than the rest)."""
    names = ", ".join(kept[:6]) + (f" and {len(kept) - 6} more" if len(kept) > 6 else "")
    return (
        f"Mixed code: {len(kept)} step(s) were kept from earlier stsbench code than the rest "
        f"(stsbench reproduce --keep-changed): {names}."
    )


CLAIMS_FILE = "claims.yaml"  # OUT/claims.yaml: the recipe's claims, which the report step judges


def claims_data(recipe: Recipe) -> list[dict[str, Any]]:
    """The recipe's claims as the claims file holds them, the recipe's δ on those without their own."""
    out = []
    for c in recipe.claims:
        data = c.model_dump(by_alias=True)
        if recipe.delta is not None and c.delta is None and c.kind not in ("plateau", "collapse"):
            data.update(delta=recipe.delta.value, delta_reason=f"the recipe's: {recipe.delta.reason}")
        out.append(data)
    return out


def published_files(recipe: Recipe) -> dict[str, str | None]:
    """The sha256 of each published file of one's own the recipe's runs are held against (None: not there)."""
    from stsbench.published.registry import file_key

    found: dict[str, str | None] = {}
    for address in (a for run in recipe.runs for a in run.addresses):
        in_file = file_key(address)
        if in_file is not None:
            path = Path(in_file[0]).expanduser()
            found[in_file[0]] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    return found


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
    seeds = sorted({len(r.seeds) for r in recipe.runs})
    n = "-".join(map(str, (seeds[0], seeds[-1])) if len(seeds) > 1 else map(str, seeds))
    return f"Mini scale: {'; '.join(found)}; {n} seeds a setting: not the paper's setting."


def report_step(recipe: Recipe, before: list[Step], out: Path, kept: Sequence[str] = ()) -> Step:
    """``stsbench report --results OUT/results --out OUT``, ``--against`` the runs' published rows.

    ``out`` as the user gave it: the report prints the command it was made with. Only the options that
    differ from the report's defaults are passed, so that the command reads as one typed by hand.
    ``kept``: the steps kept with ``--keep-changed``, named by a ``--note`` (the report never mixes code
    versions silently).
    """
    from stsbench.reports.seeds import BASELINE

    args = ["report", "--results", str(out / "results"), "--out", str(out), "--title", recipe.report.title]
    if recipe.report.baseline != BASELINE:
        args += ["--baseline", recipe.report.baseline]
    if recipe.verdict:
        for run in recipe.runs:
            args += [a for address in run.addresses for a in ("--against", f"{run.name}={address}")]
    if recipe.claims:  # written by prepare() beside the results
        args += ["--claims", str(out / CLAIMS_FILE)]
    if recipe.cell_delta is not None:  # the recipe's difference that matters for its cells
        args += ["--difference", f"{recipe.cell_delta.value:g}"]
    for key in recipe.figures:  # the papers' figures it regenerates, each under its number and caption
        args += ["--figures", key]
    if kept:
        args += ["--note", kept_note(kept)]
    if recipe.omitted:  # reproduce --runs/--seeds: the report says what this subset leaves out
        args += ["--note", f"A subset of recipe {recipe.name}: {'; '.join(recipe.omitted)}."]
    banner = mini_banner(recipe)
    if banner:
        args += ["--banner", banner]
    material: dict[str, Any] = {"kind": "report", "args": args, "deps": [s.key for s in before]}
    if recipe.claims:
        material["claims"] = claims_data(recipe)
    files = published_files(recipe)
    if files:  # a published file of one's own: edited, the report is made again
        material["published_files"] = files
    keys = _keys(material, {"deps": [s.legacy_key for s in before]})
    return Step("report", "report", tuple(args), **keys, code=code_of("report"), deps=tuple(s.id for s in before))


def build_plan(
    recipe: Recipe,
    out: Path,
    data_dir: str | Path | None = None,
    report_to: str | None = None,
    kept: Sequence[str] = (),
) -> Plan:
    """Every step of ``recipe`` writing into ``out``, keyed; the data folder as ``--data-dir`` resolves it.

    ``report_to``: the training steps also log to these trackers (``stsbench train --report-to``).
    ``kept``: steps kept from other code (``--keep-changed``), which the report names.
    """
    from stsbench.paths import resolve_data_dir

    data = resolve_data_dir(data_dir, must_exist=False).absolute()
    given = Path(out).expanduser()
    out = given.absolute()
    trains = {}
    evaluations = []
    for run in recipe.runs:
        seeds = [train_step(recipe, run, s, out, data, report_to) for s in run.seeds]
        trains.update({t.id: t for t in seeds})
        if run.evaluate is not None:  # else its figure is the training's own best dev score
            evaluations.append(evaluate_step(run, seeds, out, data))
    if recipe.baseline is not None:
        evaluations.insert(0, baseline_step(recipe, out, data))
    analyses = analysis_steps(recipe, trains, out, data)
    steps = [*trains.values(), *evaluations, *analyses]
    return Plan(recipe, out, (*steps, report_step(recipe, steps, given, kept)), data)


def training_copies(plan: Plan) -> list[tuple[Path, Path]]:
    """``(source, copy)`` of each training run's ``stsbench.json`` and ``train_log.jsonl``, the report's inputs.

    The copies go to ``OUT/results/train/<run>/seed-<s>/``, so that ``OUT/results`` alone (no weights) is what
    the report reads: the layout of the checked-in ``reports/cpu-mini-replication``.
    """
    from stsbench.results.runs import RUN_META, TRAIN_LOG

    pairs = []
    for step in plan.steps:
        if step.kind == "train" and step.folder is not None:
            copy = plan.out / "results" / "train" / step.folder.relative_to(plan.out / "runs")
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

        if plan.recipe.claims:
            import yaml

            atomic_write_text(plan.out / CLAIMS_FILE, yaml.safe_dump(claims_data(plan.recipe), sort_keys=False))

        for source, copy in training_copies(plan):  # with their paths relative to the copy (issue 36.10)
            copy.parent.mkdir(parents=True, exist_ok=True)
            copy_training_file(source, copy)
