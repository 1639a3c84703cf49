"""Every name a recipe holds, checked against the registries: what ``load_recipe`` refuses before anything runs."""

from __future__ import annotations

import difflib
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.recipes import Recipe, Run


def check_recipe(recipe: Recipe) -> None:
    """Raise a one-line :class:`StsbenchError` at the first name that does not exist or value that is refused."""
    from stsbench.published.registry import get_entry

    for key in recipe.published:
        get_entry(key)
    if recipe.claims:  # each claim's figure a registered task (or best-dev, Avg.)
        from stsbench.reports.claims import with_task_figure

        for i, claim in enumerate(recipe.claims, start=1):
            with_task_figure(claim, f"claims: claim {i}")
    for run in recipe.runs:
        try:
            check_run(run)
        except StsbenchError as exc:
            raise StsbenchError(f"run {run.name}: {exc}") from None
    for analysis in recipe.analyses:
        check_analysis(analysis.name, analysis.options, with_corpus=analysis.corpus is not None)


def run_options(run: Run, seed: int, output: str) -> dict[str, Any]:
    """The training options a run's seed adds to its config: its overrides, corpus, seed and output."""
    options = {str(k).replace("-", "_"): v for k, v in run.overrides.items()}
    if run.corpus is not None:
        options["train_file"] = run.corpus.name
        options["train_lines"] = run.corpus.lines
    return {**options, "seed": seed, "output": output}


def check_run(run: Run) -> None:
    """Method, packaged config (of that method), training options and values, corpus, tasks, published row."""
    from stsbench.configs import config_path
    from stsbench.data.corpora import CORPORA
    from stsbench.published.registry import get_cell
    from stsbench.tasks.registry import task_names
    from stsbench.train.config import OPTIONS, load_yaml, make_config
    from stsbench.train.config.methods import METHODS

    method = METHODS.check(run.method)
    config = load_yaml(config_path(run.config))
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
    cfg = make_config(options, config_path(run.config))
    if cfg.method != method:  # an override may not change what the config trains
        raise StsbenchError(f"overrides change the method to {cfg.method}")
    if run.published is None:
        return
    entry, column = get_cell(run.published)
    if run.evaluate is None:  # held against the training's own best STS-B dev score
        if entry.split != "dev":
            raise StsbenchError(
                f"its published row {entry.key} is not on STS-B dev; evaluate its seeds (evaluate: {{...}})"
            )
        return
    tasks = task_names(list(run.evaluate.tasks))
    columns = [column] if column is not None else list(entry.task_values)
    missing = [t for t in columns if t in entry.task_values and t not in tasks]
    if missing:
        raise StsbenchError(f"its published row {entry.key} has {', '.join(missing)}, which it does not evaluate")
    want = ("test", "fasttest") if entry.split == "test" else (entry.split,)
    if entry.split is not None and run.evaluate.mode not in want:
        raise StsbenchError(
            f"its published row {entry.key} is on the {entry.split} split; evaluate with mode {want[0]}"
        )


def check_analysis(name: str, options: dict[str, Any], with_corpus: bool = False) -> None:
    """The analysis is registered and takes these options (and a corpus, where the recipe gives one)."""
    import dataclasses

    from stsbench.analyses.registry import get_analysis

    analysis = get_analysis(name)
    analysis.make_config(**options)
    if with_corpus and "corpus" not in {f.name for f in dataclasses.fields(analysis.config_type)}:
        raise StsbenchError(f"analysis {name} reads no corpus; remove its corpus")
