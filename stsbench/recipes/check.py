"""Every name a recipe holds, checked against the registries: what ``load_recipe`` refuses before anything runs."""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING, Any

from stsbench.errors import StsbenchError

if TYPE_CHECKING:
    from stsbench.recipes import Recipe, Run


def check_recipe(recipe: Recipe) -> None:
    """Raise a one-line :class:`StsbenchError` at the first name that does not exist or value that is refused."""
    from stsbench.published.registry import get_cell, get_entry

    for key in recipe.published:
        get_entry(key)
    for address in recipe.unreproducible:  # a row or a cell, as --list accounts for them
        get_cell(address)
    if recipe.claims:  # each claim's figure a registered task (or best-dev, Avg.), or an analysis' it runs
        from stsbench.reports.collect import analysis_figure, with_task_figure

        made = analysis_stems(recipe)
        for i, claim in enumerate(recipe.claims, start=1):
            check_measured(recipe, with_task_figure(claim, f"claims: claim {i}"), i)
            parsed = analysis_figure(claim.figure)
            if parsed is not None and parsed[0] not in made:
                raise StsbenchError(
                    f"claims: claim {i}: figure {claim.figure!r} reads {parsed[0]} results, which the recipe's "
                    f"analyses do not make (they make: {', '.join(made) or 'none'})"
                )
    for key in recipe.figures:
        check_figure(recipe, key)
    for run in recipe.runs:
        try:
            check_run(run)
        except StsbenchError as exc:
            raise StsbenchError(f"run {run.name}: {exc}") from None
    for analysis in recipe.analyses:
        check_analysis(analysis.name, analysis.options, with_corpus=analysis.corpus is not None)


def check_measured(recipe: Recipe, claim: Any, i: int) -> None:
    """Refuse a claim on a task figure (a task, ``Avg.``, ``Transfer Avg.``) that a run it names never measures.

    ``best-dev`` and ``final-dev`` every training measures; an analysis figure is checked against the analyses.
    """
    from stsbench.metrics import AVG
    from stsbench.published.check import result_modes
    from stsbench.published.registry import STS_TASKS, TRANSFER_TASKS
    from stsbench.reports.collect import FINAL_DEV, TRANSFER_AVG, analysis_figure
    from stsbench.tasks.registry import task_names

    if claim.figure in ("best-dev", FINAL_DEV) or analysis_figure(claim.figure) is not None:
        return
    needed = {AVG: STS_TASKS, TRANSFER_AVG: TRANSFER_TASKS}.get(claim.figure, (claim.figure,))
    modes = result_modes("dev" if claim.mode == "dev" else "test", needed)
    names = {r.name: r for r in recipe.runs}
    for setting in claim.settings():
        run = names.get(setting)
        if run is None:  # the baseline's model: evaluated as the recipe's baseline says
            continue
        ev = run.evaluate
        tasks = set(task_names(list(ev.tasks))) if ev is not None and ev.mode in modes else set()
        lacking = [t for t in needed if t not in tasks]
        if lacking:
            what = "evaluate: null" if ev is None else f"evaluate: {', '.join(ev.tasks)} in {ev.mode}"
            raise StsbenchError(
                f"claims: claim {i}: figure {claim.figure!r} ({claim.mode}) of run {setting} is never measured "
                f"({what}; it lacks {', '.join(lacking[:3])}{' ...' if len(lacking) > 3 else ''}): evaluate the "
                f"run on them ({'sts' if set(needed) <= set(STS_TASKS) else 'transfer'}, mode {modes[0]}), or "
                "judge a figure every training measures (best-dev, final-dev)"
            )


# what a figure's renderer draws from: an analysis the recipe runs (and the STS tasks it evaluates)
RENDERER_ANALYSIS = {
    "spectrum": "spectrum",
    "align-map": "align_uniform",
    "align-distance": "align_uniform",
    "cosine-density": "cosine_density",
}


def varied_options(recipe: Recipe) -> set[str]:
    """The training options whose value differs between the recipe's runs (a sweep's, or runs set apart by hand)."""
    settings = [
        {str(k).replace("-", "_"): v for k, v in {**r.overrides, **r.point}.items()} for r in recipe.runs
    ]
    names = {name for s in settings for name in s}
    return {name for name in names if len({repr(s.get(name)) for s in settings}) > 1}


def check_figure(recipe: Recipe, key: str) -> None:
    """A figure the recipe names: in the registry, in scope, drawn, and drawn from what the recipe makes."""
    from stsbench.published.figures import get_figure

    fig = get_figure(key)
    where = f"figures: {key}"
    if fig.out_of_scope or not fig.drawn:
        raise StsbenchError(f"{where}: stsbench does not draw it ({fig.out_of_scope or fig.missing})")
    if fig.renderer in ("sweep", "grid"):
        swept = varied_options(recipe)
        if fig.setting not in swept:
            raise StsbenchError(
                f"{where}: drawn against {fig.setting}, which no run of the recipe sweeps "
                f"(its sweeps: {', '.join(sorted(swept)) or 'none'})"
            )
    if fig.renderer in ("distance", "align-distance"):
        from stsbench.train.config.options import find_method, method_specs

        swept = [find_method(r.method) for r in recipe.runs if r.sweep_of is not None]
        if not any(spec is not None and spec.traceable_distance for spec in swept):
            traced = " or ".join(s.label for s in method_specs() if s.traceable_distance)
            raise StsbenchError(
                f"{where}: drawn against the traceable distance: the recipe sweeps no {traced}"
            )
    analysis = RENDERER_ANALYSIS.get(fig.renderer or "")
    if analysis is not None and analysis not in {a.name for a in recipe.analyses}:
        raise StsbenchError(f"{where}: drawn from the {analysis} analysis, which the recipe does not run")
    if fig.renderer == "trajectory" and not recipe.runs:
        raise StsbenchError(
            f"{where}: drawn from the training logs' dev evaluations: the recipe trains no run"
        )
    if fig.renderer == "align-map" and not any(r.evaluate is not None for r in recipe.runs):
        raise StsbenchError(
            f"{where}: coloured by the STS Avg.: the recipe evaluates no run on the STS tasks"
        )


def analysis_stems(recipe: Recipe) -> list[str]:
    """The results file stems the recipe's analyses write (``length_bias_tokens``, ``align_uniform_dev``)."""
    from stsbench.analyses.registry import get_analysis

    stems = []
    for a in recipe.analyses:
        analysis = get_analysis(a.name)
        variant = analysis.variant(analysis.make_config(**a.options))
        stems.append(f"{analysis.name}_{variant}" if variant else analysis.name)
    return list(dict.fromkeys(stems))


def run_options(run: Run, seed: int, output: str) -> dict[str, Any]:
    """The training options a run's seed adds to its config: its overrides, corpus, seed and output."""
    options = {str(k).replace("-", "_"): v for k, v in run.overrides.items()}
    if run.corpus is not None:
        options["train_file"] = run.corpus.name
        options["train_lines"] = run.corpus.lines
    return {**options, "seed": seed, "output": output}


def check_run(run: Run) -> None:
    """Method, packaged config (of that method), training options and values, corpus, tasks, published row."""
    from stsbench.data.corpora import CORPORA
    from stsbench.train.config import OPTIONS, load_yaml, make_config
    from stsbench.train.config.options import METHODS

    method = METHODS.check(run.method)
    config = load_yaml(run.config_file)
    if config.get("method") != method:
        raise StsbenchError(f"config {run.config} trains {config.get('method')}, not {method}")
    options = run_options(run, run.seeds[0], "RUN")
    for name in options:
        if name not in OPTIONS:
            near = difflib.get_close_matches(name, list(OPTIONS), n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise StsbenchError(f"unknown training option {name!r}{hint}")
    if run.corpus is not None:
        CORPORA.check(run.corpus.name)
    cfg = make_config(options, run.config_file)
    if cfg.method != method:  # an override may not change what the config trains
        raise StsbenchError(f"overrides change the method to {cfg.method}")
    for address in run.addresses:
        _check_published(run, address)


def _check_published(run: Run, address: str) -> None:
    """The row or cell exists and the run evaluates what it needs (a dev table: its training's best dev)."""
    from stsbench.published.check import BEST_DEV, figure_of
    from stsbench.published.registry import get_cell
    from stsbench.tasks.registry import task_names

    entry, column = get_cell(address)
    if entry.kind != "scores":
        raise StsbenchError(
            f"{entry.key} is an analysis table: name it in the recipe's published, not a run's"
        )
    columns = [column] if column is not None else list(entry.values)
    for col in columns:  # what the seeds must have for each cell (stsbench.published.check.figure_of)
        figure = figure_of(entry, col)
        if figure is None or figure.kind == BEST_DEV:  # none of ours, or the training's own best dev score
            continue
        if run.evaluate is None:
            raise StsbenchError(
                f"its published {entry.key}#{col} needs the seeds evaluated on {', '.join(figure.tasks)}; "
                "give the run an evaluate"
            )
        tasks = task_names(list(run.evaluate.tasks))
        missing = [t for t in figure.tasks if t not in tasks]
        if missing:
            raise StsbenchError(
                f"its published row {entry.key} has {col}, over {', '.join(missing)}, which it does not evaluate"
            )
        if run.evaluate.mode not in figure.modes:
            raise StsbenchError(
                f"its published row {entry.key} is on the {figure.mode} split; evaluate with mode {figure.modes[0]}"
            )


def check_analysis(name: str, options: dict[str, Any], with_corpus: bool = False) -> None:
    """The analysis is registered and takes these options (and a corpus, where the recipe gives one)."""
    import dataclasses

    from stsbench.analyses.registry import get_analysis

    analysis = get_analysis(name)
    analysis.make_config(**options)
    if with_corpus and "corpus" not in {f.name for f in dataclasses.fields(analysis.config_type)}:
        raise StsbenchError(f"analysis {name} reads no corpus; remove its corpus")
