"""A recipe as a plan: its steps (train -> evaluate -> analyses -> report), each keyed by what determines it.

Layout of ``OUT``: ``runs/<run>/seed-<s>/`` (training runs, as ``stsbench train --seeds`` lays them out),
``results/`` (what the report reads, and all it reads: ``stsbench run`` results, each run's seed aggregate
``runs__<run>/``, the analyses under ``results/analyses/`` and, copied before the report, each training run's
``stsbench.json`` and ``train_log.jsonl`` under ``results/train/<run>/seed-<s>/``, no weights),
``configs/<run>.yaml`` (the options each run's seeds train with), ``logs/`` (each step's output) and the report
itself (``report.md``, ``report.html``, ``figures/``). The report's command names ``OUT`` as it was given
(relative stays relative), since the report prints that command.

A step's ``key`` is the sha256 of everything it reads and nothing else (:mod:`stsbench.reproduce.state`): for a
training run its options resolved for the device it trains on, its corpus and the files it selects its checkpoint
on; for the other steps their options, the data files they read (by content, under their names relative to the
data folder) and the keys of the steps they read from, so that a change reaches every step downstream of it and
no other, and where the data folder or the reproduction lies changes none. Its ``code`` is the code that computes
it (:func:`stsbench.reproduce.state.step_code`): a step done with other code is *changed*, which a rerun does not
decide alone (``--rerun-changed``, ``--keep-changed``).

The report step of a reproduction: ``stsbench report`` on ``OUT/results``, its command and its key.

Its command names ``OUT`` as the user gave it (the report prints the command it was made with); its key reads
the same arguments with the folder written ``OUT`` (:data:`OUT`), the claims the report judges and the digests of
the published files of one's own it is held against: where the reproduction lies is no input of the report.

What a plan's steps read that no step writes, checked before any of them starts.

A reproduction that lacks its data, its training corpus or a model fails step by step, each after its own start
(26 failed steps for one missing corpus). :func:`missing` finds those inputs first: the SentEval files each
evaluation and training's STS-B dev read, each training's corpus (:func:`stsbench.data.corpora.resolve_train_file`,
which says how to fetch it), and each model named by the recipe (a backbone, the baseline) that is neither the
embedded model, a folder, nor in the local Hugging Face cache while the hub is out of reach. Nothing is downloaded
or imported beyond what names these (no torch).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from stsbench.analyses.registry import ANALYSES, get_analysis
from stsbench.data.corpora import CORPORA, resolve_train_file
from stsbench.data.integrity import differences
from stsbench.encoders.resolve import is_embedded, looks_like_path
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_text
from stsbench.paths import hub_offline_reason, resolve_data_dir
from stsbench.progress import seeds_a_setting
from stsbench.published.registry import file_key
from stsbench.recipes import Recipe, Run, run_options
from stsbench.reproduce.state import (
    Actions,
    Plan,
    ReproduceState,
    Step,
    changed_steps,
    code_of,
    corpus_entry,
    initial_actions,
    key_config,
    make_keys,
    model_identity,
    named_digests,
    step_arg,
    step_code,
    train_code,
    training_copy,
)
from stsbench.results.runs import RUN_META, TRAIN_LOG, declared_runs, write_recipe_runs, write_scale
from stsbench.results.write import copy_training_file, model_slug
from stsbench.sources import published_digest, sha256_file
from stsbench.tasks.registry import TASKS, get_task, resolve_tasks, task_names
from stsbench.train.config import default_length_buckets, load_yaml, make_config
from stsbench.train.config.options import AUGMENTATIONS, augment_names, find_method, option_fields
from stsbench.train.schedule import run_steps


def task_files(tasks: Iterable[str], data_dir: Path, mode: str) -> list[Path]:
    """The data files ``tasks`` read in ``mode``."""
    return [f for t in tasks for f in get_task(t).files(data_dir, mode)]  # type: ignore[arg-type]


def run_config(run: Run, data_dir: Path | None) -> dict[str, Any]:
    """The options every seed of ``run`` trains with: the packaged config's, its overrides and corpus."""
    options = {k: v for k, v in run_options(run, 0, "").items() if k not in ("seed", "output")}
    merged = {**load_yaml(run.config_file), **options}
    if data_dir is not None:
        merged["data_dir"] = str(data_dir)
    return {k: v for k, v in merged.items() if v is not None}


def _corpus(train_file: str, lines: int | None, data_dir: Path) -> tuple[Path, int | None]:
    """The file a training run reads and its line count (from the corpus' known size when it is absent)."""
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

    Its run folder is ``OUT/runs/<run>/seed-<s>`` (the layout ``train --seeds`` writes). ``report_to``: also
    log to these trackers, the seeds grouped as ``<recipe>/<run>`` (not in the key: where the numbers are also
    logged changes none of them). ``gpus``: the GPUs it trains on (0: the CPU, or the config's ``device``),
    which resolve its device-dependent options. It selects its checkpoint on STS-B dev, or with ``select_on:
    sts-test`` on the seven STS test sets.
    """
    folder = out / "runs" / run.name / f"seed-{seed}"
    options = run_config(run, data_dir)
    cfg = make_config({**options, "seed": seed, "output": str(folder)})
    corpus, lines = _corpus(cfg.train_file, cfg.train_lines, data_dir)
    device = "cuda" if gpus else (cfg.device or "cpu")
    length_buckets = cfg.length_buckets or default_length_buckets(device, cfg.pad_to_max_length)
    if cfg.select_on == "sts-test":
        selection = task_files([t.name for t in resolve_tasks("sts")], data_dir, "test")
    else:
        selection = task_files(["STSBenchmark"], data_dir, "dev")
    config = key_config({**cfg.to_dict(), "length_buckets": length_buckets})
    entry, data = corpus_entry(corpus, data_dir, cfg.train_lines), named_digests(selection, data_dir)
    keys = make_keys({"kind": "train", "config": config, "corpus": entry, "data": data})
    config_file = out / "configs" / f"{run.name}.yaml"
    # not --quiet: the step's log holds its output (what it trained, each evaluation, where it saved)
    args = ("train", "--config", str(config_file), "--seed", str(seed), "--output", str(folder))
    if report_to and report_to != "none":
        args += ("--report-to", report_to, "--run-group", f"{recipe.name}/{run.name}")
    return Step(
        f"train/{run.name}/seed-{seed}",
        "train",
        args,
        **keys,
        code=train_code(cfg.to_dict()),
        folder=folder,
        total_steps=run_steps(cfg.max_steps, cfg.epochs, lines, cfg.batch_size),
        model=cfg.model,
        method=cfg.method,
        config=options,
        data=tuple(selection),
    )


def evaluation_step(
    step_id: str, model: str, spec: Any, out: Path, data_dir: Path, keyed: dict, **fields: Any
) -> Step:
    """``stsbench run --model MODEL`` on ``spec``'s tasks, keyed with ``keyed`` beside them.

    Its code is the evaluator's and that of each plugin task it runs.
    """
    tasks = task_names(list(spec.tasks))
    files = task_files(tasks, data_dir, spec.mode)
    material = {"kind": "evaluate", "tasks": sorted(tasks), "mode": spec.mode, **keyed}
    keys = make_keys({**material, "data": named_digests(files, data_dir)})
    args = ("run", "--model", model, "--tasks", ",".join(tasks), "--mode", spec.mode)
    args += ("--output", str(out / "results"), "--data-dir", str(data_dir))
    code = step_code("evaluate", {f"task {t}": TASKS.plugin(t) for t in tasks}, {TASKS: tasks})
    return Step(step_id, "evaluate", args, **keys, code=code, data=tuple(files), **fields)


def _option_flags(options: dict[str, Any]) -> tuple[str, ...]:
    flags: list[str] = []
    for name, value in sorted(options.items()):
        f = str(name).replace("_", "-")  # a bool: --name or --no-name
        flags += [f"--{f}" if value else f"--no-{f}"] if isinstance(value, bool) else [f"--{f}", str(value)]
    return tuple(flags)


def analysis_steps(recipe: Recipe, trains: dict[str, Step], out: Path, data_dir: Path) -> list[Step]:
    """Each analysis on each checkpoint it names (default: every seed of every run) and the baseline.

    Every seed by default, so that an analysis' figures come with their spread over seeds as the scores do
    (the report's analysis sections: mean, std and the 95% interval over seeds).
    """
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
            flags += ("--data-dir", str(data_dir))
            _, files = analysis.data_files(config, data_dir, None)
            inputs["data"] = named_digests(files, data_dir)
        code, read = (
            step_code("analysis", {"analysis": ANALYSES.plugin(a.name)}, {ANALYSES: [a.name]}),
            tuple(files),
        )
        variant = analysis.variant(config)
        stem = f"{analysis.name}_{variant}" if variant else analysis.name
        chosen = [
            trains[f"train/{r.name}/seed-{s}"]
            for r in recipe.runs
            if a.runs is None or r.name in a.runs
            for s in a.seeds or r.seeds
            if s in r.seeds
        ]
        models: list[tuple[str, str, Any]] = [(t.id.split("/", 1)[1], str(t.folder), t) for t in chosen]
        if a.baseline and recipe.baseline is not None:
            models.append(("baseline", recipe.baseline.model, None))
        for label, model, train in models:
            folder = label.replace("/", "__") if train is not None else model_slug(model)
            material = {"kind": "analysis", "name": a.name, "options": a.options, "inputs": inputs}
            keys = make_keys({**material, "model": train.key if train is not None else model_identity(model)})
            args = (analysis.command, "--model", model, *flags, "--output", str(out / "results" / "analyses"))
            deps = (train.id,) if train is not None else ()
            outputs, sid = (f"results/analyses/{folder}/*/{stem}.*",), f"analysis/{i}-{a.name}/{label}"
            steps.append(
                Step(sid, "analysis", args, **keys, code=code, deps=deps, outputs=outputs, data=read)
            )

    return steps


def mini_banner(recipe: Recipe) -> str | None:
    """A mini recipe's banner for every table and figure: its backbone, steps, corpus and seeds, not the paper's."""
    if recipe.flavour != "mini":
        return None
    found: dict[str, None] = {}
    for run in recipe.runs:
        c = run_config(run, None)
        steps = f"{c['max_steps']} steps" if c.get("max_steps") else f"{c.get('epochs', 1)} epoch(s)"
        corpus = Path(str(c.get("train_file", "?"))).name
        lines = f"'s first {c['train_lines']:,} lines" if c.get("train_lines") else ""
        found[f"{c.get('model')}, {steps} of {c.get('batch_size')} sentences from {corpus}{lines}"] = None
    seeds = sorted({len(r.seeds) for r in recipe.runs})
    return f"Mini scale: {'; '.join(found)}; {seeds_a_setting(seeds[0], seeds[-1])}: not the paper's setting."


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


def report_args(recipe: Recipe, out: Path, kept: Sequence[str] = (), banner: str | None = None) -> list[str]:
    """``report --results OUT/results --out OUT ...``, the report step's command.

    Only the options that differ from the report's defaults, so that the command reads as one typed by hand.
    ``banner``: a mini recipe's (:func:`stsbench.reproduce.plan.mini_banner`).
    """
    from stsbench.reports.seeds import BASELINE

    title = recipe.report.title  # the recipe's seeds, then the plan's: said where the title gives a number
    title += f", then seeds until decided (at most {recipe.until} a run)" if recipe.until is not None else ""
    args = ["report", "--results", str(out / "results"), "--out", str(out), "--title", title]
    if recipe.report.baseline != BASELINE:
        args += ["--baseline", recipe.report.baseline]
    if recipe.verdict:
        args += [a for r in recipe.runs for addr in r.addresses for a in ("--against", f"{r.name}={addr}")]
    if recipe.claims:  # written by prepare() beside the results
        args += ["--claims", str(out / CLAIMS_FILE)]
    if recipe.cell_delta is not None:  # the recipe's difference that matters for its cells
        args += ["--difference", f"{recipe.cell_delta.value:g}"]
    # the papers' figures it regenerates, each under its number and caption
    args += [a for key in recipe.figures for a in ("--figures", key)]
    if kept:
        args += ["--note", kept_note(kept)]
    # reproduce --runs/--seeds: the report shows that subset and says once what it leaves out
    if recipe.omitted:
        args += ["--note", f"A subset of recipe {recipe.name}: {'; '.join(recipe.omitted)}."]
        args += ["--runs", ",".join(r.name for r in recipe.runs)]
        args += ["--seeds", ",".join(map(str, sorted({s for r in recipe.runs for s in r.seeds})))]
    if banner:
        args += ["--banner", banner]
    if recipe.until is not None:  # reproduce --until-decided: the claims and cells judged at their looks
        args += ["--sequential", str(recipe.until), *(["--refine"] if recipe.refine else [])]
    return args


def forecast(
    recipe: Recipe, verdicts: Mapping[str, Any]
) -> tuple[list[tuple[str, list[float]]], dict[str, float]]:
    """The seeds the sequential plan is expected to train, at the differences and spreads ``verdicts`` measured.

    ``verdicts``: a report's ``reproduction.json`` (this reproduction's planned seeds, or an earlier edition's).
    Each paired statement's expected stopping n at its measured difference and per-seed spread, and each
    published cell's of one run at its seeds' m - P and std (:func:`stsbench.stats.sequential.expected_seeds`,
    a claim's m statements at 0.025/m, ``recipe.refine`` as the plan runs); a verdict the plan does not cover,
    or without a spread, at the maximum. Returns each claim's and target's label ("claim 1 (its text)", "KEY
    against RUN") with its statements' or cells' expected seeds, and each run's: the largest of the verdicts
    that read it (the slowest sets the count), never below its planned seeds.
    """
    from stsbench.published.registry import get_cell
    from stsbench.stats import sequential

    top = recipe.until or 10
    runs = {r.name: r for r in recipe.runs}
    found, per_run = [], {name: float(len(r.seeds)) for name, r in runs.items()}

    def expect(diff: float, spread: float | None, delta: float, at: Any, parts: Sequence[str]) -> float:
        n = sequential.expected_seeds(diff, spread, delta, at, refine=recipe.refine) if at and spread else top
        for p in (p for p in parts if p in per_run):
            per_run[p] = max(per_run[p], n)
        return float(n)

    for i, (claim, judged) in enumerate(zip(recipe.claims, verdicts.get("claims", []), strict=False), 1):
        m = len(claim.statements())
        at = sequential.plan(top, "paired", m) if claim.kind in sequential.COVERED else None
        expected = []
        for parts, st in zip(claim.statements(), judged["statements"], strict=False):
            spread = st["se"] * math.sqrt(st["used"]) if st.get("se") and st.get("used") else None
            paired = st.get("design") in ("paired", "one-sample")
            delta = st.get("delta") or judged.get("delta") or 0.5
            expected.append(expect(st["diff"], spread, delta, at if paired else None, parts))
        rule = f"; {m} statements, constants by {at.rule}" if at and at.rule != "the table" else ""
        found.append((f"claim {i} ({claim.text or claim.kind}{rule})", expected))
    for t in verdicts.get("targets", []):  # a cell against one run: the cell plan; any other at the maximum
        entry = get_cell(t["key"])[0]
        at = sequential.plan(top, "cell") if entry.runs == 1 and not entry.best_of else None
        cells = [c for c in t["cells"] if c.get("diff") is not None]
        expected = [expect(c["diff"], c.get("std"), c["difference"], at, [t["group"]]) for c in cells]
        found.append((f"{t.get('address') or t['key']} against {t['group']}", expected))
    return found, per_run


def seeds_to_add(recipe: Recipe, verdicts: Mapping[str, Any]) -> dict[str, list[int]]:
    """The seeds each run trains before the sequential plan's next look (``reproduce --until-decided``).

    ``verdicts``: the report's ``reproduction.json``. A claim's statement or a published cell is open while
    inconclusive (not stopped by futility) on fewer than the maximum's seeds, and with ``recipe.refine`` while its
    note says the plan left it open (a direction shown, its size not yet); a claim contradicted is settled
    whole. Each run an open verdict reads gets seeds up to the next look after the seeds its verdict's runs
    share (the next integers after its largest), so the runs a statement pairs reach the look together, on the
    same seed ids. Empty: every verdict is settled.
    """
    from stsbench.stats import decide, sequential

    at = sequential.plan(recipe.until or 10)
    runs = {r.name: r for r in recipe.runs}
    target: dict[str, int] = {}

    def reach(names: Sequence[str]) -> None:
        names = [n for n in names if n in runs]
        shared = min((len(runs[n].seeds) for n in names), default=at.maximum)
        look = at.next_look(shared + 1)
        for n in names if look is not None else ():
            target[n] = max(target.get(n, 0), look)

    def open_(word: str, n: Sequence[int] | None, note: str | None = None) -> bool:  # n: a side's seeds
        going = recipe.refine and "sequential: open" in (note or "")
        return (word == decide.INCONCLUSIVE or going) and min(n or [0]) < at.maximum

    for claim, judged in zip(recipe.claims, verdicts.get("claims", []), strict=False):
        if judged["verdict"] == decide.CONTRADICTED:
            continue
        for parts, st in zip(claim.statements(), judged["statements"], strict=False):
            if open_(st["outcome"], st.get("n"), st.get("note")):
                reach(parts)
    for t in verdicts.get("targets", []):  # a cell: against its run's seeds
        if t["group"] in runs and any(open_(c["verdict"], [len(runs[t["group"]].seeds)]) for c in t["cells"]):
            reach([t["group"]])
    out = {}
    for name, count in target.items():
        seeds = runs[name].seeds
        if count > len(seeds):
            out[name] = list(range(max(seeds) + 1, max(seeds) + 1 + count - len(seeds)))
    return out


OUT = Path("OUT")  # the reproduction's folder as the report's key writes it: where it lies is no input


def report_step(
    recipe: Recipe, before: list[Step], out: Path, kept: Sequence[str] = (), carried: Sequence[str] = ()
) -> Step:
    """``stsbench report --results OUT/results --out OUT``, ``--against`` the runs' published rows.

    Its command names ``out`` as the user gave it (the report prints it). Its key reads the same arguments
    with the folder written ``OUT`` and one's own published files named from the recipe's folder, the claims,
    the cells the recipe holds its runs against (which the report reads from ``results/recipe_runs.json``,
    whatever the verdict), every published registry (``stsbench/published/*.yaml``: the report may set any of
    its rows beside the runs) and one's own published files by content, each under its path relative to the
    recipe's folder (where the recipe reads it from), so that ``mine/a/table.yaml`` and ``mine/b/table.yaml``
    are two files and the reproduction keys the same anywhere. ``kept``: the steps kept with
    ``--keep-changed``, named by a ``--note`` (the report never mixes code versions silently).
    """
    banner = mini_banner(recipe)
    root = Path(recipe.folder) if recipe.folder else None

    def relative(path: Path) -> str:
        return path.relative_to(root).as_posix() if root and path.is_relative_to(root) else path.as_posix()

    # /abs/mine/table.yaml#row -> mine/table.yaml#row (a registry key as it is)
    def keyed(address: str) -> str:
        in_file = file_key(address)
        return f"{relative(Path(in_file[0]))}#{in_file[1]}" if in_file else address

    def portable(arg: str) -> str:  # an --against argument, run=ADDRESS
        run, eq, address = arg.partition("=")
        return f"{run}={keyed(address)}" if eq else arg

    material: dict[str, Any] = {
        "kind": "report",
        "args": [portable(a) for a in report_args(recipe, OUT, kept, banner)],
        "deps": [s.key for s in before],
        "published": published_digest(),
    }
    if recipe.claims:
        material["claims"] = claims_data(recipe)
    if carried:  # named in its Provenance (read from reproduce.json): another set, another report
        material["carried"] = list(carried)
    # what the report reads of the recipe's runs (results/recipe_runs.json): their labels, sweeps, points and the
    # cells set beside them; another label or cell, another report
    material["runs"] = [
        {**asdict(r), "published": [keyed(c) for c in r.published]} for r in declared_runs(recipe)
    ]
    own = [Path(f[0]).expanduser() for f in map(file_key, (a for r in recipe.runs for a in r.addresses)) if f]
    if own:  # a published file of one's own: edited, the report is made again
        material["published_files"] = {relative(f): sha256_file(f) if f.is_file() else None for f in own}
    args, deps = tuple(report_args(recipe, out, kept, banner)), tuple(s.id for s in before)
    keys = make_keys(material)
    return Step("report", "report", args, **keys, code=code_of("report"), deps=deps, outputs=("report.md",))


def build_plan(
    recipe: Recipe,
    out: Path,
    data_dir: str | Path | None = None,
    report_to: str | None = None,
    kept: Sequence[str] = (),
    gpus: int = 0,
    carried: Sequence[str] = (),
) -> Plan:
    """Every step of ``recipe`` writing into ``out``, keyed; the data folder as ``--data-dir`` resolves it.

    ``report_to``: the training steps also log to these trackers (``stsbench train --report-to``). ``kept``:
    steps kept from other code (``--keep-changed``), which the report names. ``gpus``: the GPUs a training
    runs on (``reproduce --gpus``; 0: the CPU), which its device-dependent options resolve for. An evaluation
    reads every seed of a run, then writes their aggregate (``stsbench run --model OUT/runs/<run>``); the
    baseline is the backbone evaluated as it is (``stsbench run --model <baseline>``).
    """
    data = resolve_data_dir(data_dir, must_exist=False).absolute()
    given = Path(out).expanduser()
    out = given.absolute()
    trains: dict[str, Step] = {}
    evaluations, evaluate = [], partial(evaluation_step, out=out, data_dir=data)
    if (base := recipe.baseline) is not None:
        keyed, outputs = {"model": model_identity(base.model)}, (f"results/{model_slug(base.model)}/**/*",)
        step = evaluate("evaluate/baseline", base.model, base.evaluate, keyed=keyed, outputs=outputs)
        evaluations.append(step)
    for run in recipe.runs:
        seeds = [train_step(recipe, run, s, out, data, report_to, gpus) for s in run.seeds]
        trains.update({t.id: t for t in seeds})
        if run.evaluate is not None:  # else its figure is the training's own best dev score
            folders = [f"runs__{run.name}", *(f"{run.name}__seed-{s}" for s in run.seeds)]
            keyed, deps = {"deps": [t.key for t in seeds]}, tuple(t.id for t in seeds)
            outputs = tuple(f"results/{d}{p}/**/*" for d in folders for p in ("", "+*"))
            model = str(out / "runs" / run.name)
            evaluations.append(
                evaluate(f"evaluate/{run.name}", model, run.evaluate, keyed=keyed, deps=deps, outputs=outputs)
            )
    steps = [*trains.values(), *evaluations, *analysis_steps(recipe, trains, out, data)]
    return Plan(recipe, out, (*steps, report_step(recipe, steps, given, kept, carried)), data)


def training_copies(plan: Plan) -> list[tuple[Path, Path]]:
    """``(source, copy)`` of each training run's ``stsbench.json`` and ``train_log.jsonl``, the report's inputs.

    The copies go to ``OUT/results/train/<run>/seed-<s>/``, so that ``OUT/results`` alone (no weights) is what
    the report reads: the layout of the checked-in ``reports/cpu-mini-replication``.
    """
    return [
        (step.folder / name, training_copy(step.folder, plan.out) / name)
        for step in plan.steps
        if step.kind == "train" and step.folder is not None
        for name in (RUN_META, TRAIN_LOG)
    ]


def planned(
    recipe: Any,
    out: Path,
    data_dir: str | Path | None,
    state: ReproduceState,
    changed: str,
    report_to: str | None = None,
    gpus: int = 0,
) -> tuple[Plan, Actions]:
    """The plan a run of ``recipe`` into ``out`` follows given its ``state``, and each step's action.

    With ``changed="keep"``, the steps kept from other code are named by the report, whose key then holds their
    names (:func:`stsbench.reproduce.plan.kept_note`). ``gpus``: what the trainings run on (their key's device).
    """
    plan = build_plan(recipe, out, data_dir, report_to, gpus=gpus)
    actions = initial_actions(plan, state, changed)
    kept = [s.id for s in changed_steps(plan, state) if actions[s.id][0] == "skip" and s.kind != "report"]
    records = {s.id: state["steps"].get(s.id) or {} for s in plan.steps if actions[s.id][0] == "skip"}
    carried = [i for i, r in records.items() if r.get("carried") and r.get("code") == plan.step(i).code]
    if kept or carried:  # the report, keyed with their names
        plan = build_plan(recipe, out, data_dir, report_to, kept, gpus, carried)
        actions = initial_actions(plan, state, changed)
    return plan, actions


def prepare(plan: Plan, step: Step) -> None:
    """Write what ``step``'s command reads and no step writes: a training's options file, the report's copies.

    The report's: its runs' sweeps and published cells, the whole recipe's scale (a subset's is not kept with
    its results), its claims and each training's logs copied under ``results/train/`` (with their paths
    relative to the copy).
    """
    if step.kind in ("train", "witness") and step.config:  # the options its seeds share, beside the runs
        atomic_write_text(Path(step.args[2]), yaml.safe_dump(step.config, sort_keys=True))
    if step.kind != "report":
        return
    results = plan.out / "results"
    write_recipe_runs(results, plan.recipe)
    if (banner := mini_banner(plan.recipe)) and not plan.recipe.omitted:
        write_scale(results, banner)
    if plan.recipe.claims:
        atomic_write_text(plan.out / CLAIMS_FILE, yaml.safe_dump(claims_data(plan.recipe), sort_keys=False))
    for source, copy in training_copies(plan):
        if not source.is_file() and copy.is_file():
            continue  # a finished run whose folder (weights) is not kept: its copy is what the report reads
        if not source.is_file():
            raise StsbenchError(
                f"{source} is missing, and no copy of it under {copy.parent}; train the run again"
            )
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy_training_file(source, copy)


@dataclass(frozen=True)
class Need:
    """One input missing here, the steps that read it and how to get it."""

    what: str  # "data", "corpus" or "model"
    name: str  # the file, corpus or model
    how: str  # how to get it, one clause
    steps: tuple[str, ...]

    def line(self) -> str:
        """``model bert-base-uncased (12 steps): how``."""
        n = len(self.steps)
        return f"{self.what} {self.name} ({n} step{'s' * (n != 1)}): {self.how}"


def model_missing(name: str) -> str | None:
    """How to get model ``name`` when it cannot be had here (None: the embedded one, a folder, or hub-cached).

    A hub id not in the local cache is missing only while the hub is out of reach (the run would download it).
    """
    if is_embedded(name):
        return None
    path = Path(name).expanduser()
    if path.exists() or looks_like_path(name):
        if (path / "config.json").is_file() or (path / "modules.json").is_file():
            return None
        return f"{path} is not a model folder (no config.json or modules.json); check the path"
    from huggingface_hub import try_to_load_from_cache

    reason = None if isinstance(try_to_load_from_cache(name, "config.json"), str) else hub_offline_reason()
    if reason is None:
        return None
    return (
        f"not in the local Hugging Face cache and the hub is out of reach ({reason}); download it where there "
        f"is internet (`huggingface-cli download {name}`) or set the run's `model:` to its folder"
    )


def extra_models(config: dict) -> dict[str, str]:
    """The models a training loads beside its backbone, name -> the option that names it.

    Its method's and its augmentations' (their specs' ``model_options``).
    """
    spec = find_method(config.get("method"))
    options = [*(spec.model_options if spec is not None else ())]
    augments = augment_names(str(config.get("augment") or "none"))
    options += [o for a in augments for o in AUGMENTATIONS[a].model_options]
    names: dict[str, str] = {}
    for option in dict.fromkeys(options):
        value = config.get(option)  # None: the option at its default, the field's
        value = option_fields()[option].default if value is None else value
        names.update({n.strip(): option for n in str(value or "").split(",") if n.strip()})
    return names


def missing(plan: Plan, to_run: Iterable[str] | None = None, allow_modified: bool = False) -> list[Need]:
    """What the steps ``to_run`` (default: all) read that is missing here, each with how to get it.

    SentEval files that differ from the canonical data count too, unless ``allow_modified``
    (``--allow-modified-data``): refused before any step starts, not by each evaluation after the trainings.
    """
    wanted = None if to_run is None else set(to_run)
    # the steps that read each SentEval file, (corpus, how to get it), model; a model -> the option naming it
    files, corpora, models, options = {}, {}, {}, {}
    for step in (s for s in plan.steps if wanted is None or s.id in wanted):
        for f in step.data:
            files.setdefault(f, []).append(step.id)
        corpus = step_arg(step, "--corpus") if step.kind == "analysis" else None
        if corpus is not None and not Path(corpus).is_file():  # plan.py resolved its name to this file
            how = f"{corpus} does not exist; put the corpus there (docs/reproduce.md) or pass --data-dir"
            corpora.setdefault(Path(corpus), (Path(corpus).name, how, []))[2].append(step.id)
        train_file, lines = step.config.get("train_file"), step.config.get("train_lines")
        if step.kind == "train" and train_file:
            try:
                path, _ = resolve_train_file(str(train_file), lines, plan.data_dir)
            except StsbenchError as exc:  # "corpus NAME: no FILE under DATA; run `...`"
                name, _, how = str(exc).partition(": ")
                file = _corpus(str(train_file), lines, plan.data_dir)[0]  # an analysis may read it too
                corpora.setdefault(file, (name.removeprefix("corpus "), how or name, []))[2].append(step.id)
            else:
                if not path.is_file():
                    how = f"{path} does not exist; check the path"
                    corpora.setdefault(path, (str(train_file), how, []))[2].append(step.id)
        if step.kind == "train" and step.model:
            extras = extra_models(step.config)
            options.update(extras)
            for name in (step.model, *extras):
                models.setdefault(name, []).append(step.id)
        elif step.kind in ("evaluate", "analysis"):
            model = step_arg(step, "--model")
            if model is not None and not Path(model).is_relative_to(plan.out):  # a run of this plan
                models.setdefault(model, []).append(step.id)

    def ids(found: list[Path]) -> tuple[str, ...]:  # the steps that read ``found``, each once, in order
        return tuple(dict.fromkeys(i for f in found for i in files[f]))

    absent = [f for f in files if not f.is_file()]
    present = [f for f in files if f not in absent]
    where, needs = plan.data_dir, []
    if absent:
        name = f"{len(absent)} SentEval file(s) under {where} (e.g. {min(absent).relative_to(where)})"
        how = f"run `stsbench data download --data-dir {where}`, or pass the folder holding them (--data-dir)"
        needs.append(Need("data", name, how, ids(absent)))
    modified = {} if allow_modified else differences(where, present)
    if modified:
        rel, why = next(iter(modified.items()))
        name = f"{len(modified)} file(s) under {where} (e.g. {rel}: {why})"
        how = (
            f"restore them (`stsbench data download --data-dir {where}`; `stsbench data verify` lists "
            "every difference) or pass --allow-modified-data to score them anyway, marked as modified"
        )
        needs.append(Need("modified data", name, how, ids(present)))
    needs += [Need("corpus", name, how, tuple(readers)) for name, how, readers in corpora.values()]
    for name, readers in models.items():
        if (how := model_missing(name)) is not None:  # an augmentation's model: the option that names it
            named = how.replace("set the run's `model:`", f"set the run's `{options.get(name, 'model')}:`")
            needs.append(Need("model", name, named, tuple(readers)))
    return needs


def refuse_missing(needs: list[Need]) -> None:
    """One line naming what is missing and how to get it (``stsbench reproduce --dry-run`` lists it all)."""
    if needs:
        more = f"; and {len(needs) - 1} more" if len(needs) > 1 else ""
        word = "" if needs[0].what == "modified data" else "missing "
        what = f"{word}{needs[0].line()}{more}"
        raise StsbenchError(f"nothing was started: {what} (`--dry-run` lists what the run needs)")
