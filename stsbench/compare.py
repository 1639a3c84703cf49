"""``stsbench compare`` as one library call: each source read as results or evaluated first, then compared.

A small composition: a results folder is read into a side here (:func:`side_from_folder`), a model or a ``train --seeds``
folder is evaluated first through the embedding cache (:mod:`stsbench.evaluation`, imported only then: it loads
torch), and the statistics are :mod:`stsbench.stats.compare`'s.
"""

from __future__ import annotations

from pathlib import Path

from stsbench.encoders.base import EncodeOptions
from stsbench.encoders.resolve import is_model_dir, looks_like_path, prompt_suffix
from stsbench.errors import StsbenchError
from stsbench.metrics import AVG, raw_average, simcse_average
from stsbench.results.read import (
    TaskRecord,
    read_folder,
    read_pairs,
    seed_aggregates,
)
from stsbench.results.runs import is_seeds_folder, tested_values
from stsbench.results.schema import TASK_KIND, SeedAggregate
from stsbench.results.write import base_label, unique_label
from stsbench.stats.compare import MIXED, CompareResult, Side, compare_sides
from stsbench.tasks.registry import task_names


def require_two(sources: list[str]) -> None:
    """Refuse, before anything is read or evaluated, fewer than two sources."""
    if len(sources) < 2:
        raise StsbenchError(
            "compare needs at least two results folders or models (the first is the reference)"
        )


def compare(
    sources: list[str],
    *,
    bootstrap: int = 1000,
    seed: int = 1111,
    mode: str | None = None,
    data_dir: Path | None = None,
    output: Path = Path("results"),
    cache_dir: Path | None = None,
    device: str | None = None,
    quiet: bool = False,
    prompt: str | None = None,
    prompt_name: str | None = None,
) -> CompareResult:
    """Compare every source after the first with the first (see :func:`compare_sources` for what a source is).

    ``prompt`` / ``prompt_name`` apply to the models evaluated here (as ``stsbench run --prompt``).
    """
    encode = EncodeOptions(device=device, prompt=prompt, prompt_name=prompt_name, cache_dir=cache_dir)
    given = {"mode": mode, "data_dir": data_dir, "output": output, "quiet": quiet}
    return compare_sources(sources, encode, bootstrap=bootstrap, seed=seed, **given)


def compare_sources(
    sources: list[str],
    encode: EncodeOptions,
    *,
    bootstrap: int = 1000,
    seed: int = 1111,
    mode: str | None = None,
    data_dir: Path | None = None,
    output: Path = Path("results"),
    quiet: bool = False,
) -> CompareResult:
    """:func:`compare` with how the models and seeds evaluated here are loaded as one :class:`EncodeOptions`.

    A side per source: a results folder as it is, a seeds folder or a model evaluated first. A ``train --seeds``
    folder is refused unless every seed has its kept checkpoint; then each seed is evaluated as ``stsbench run
    --model OUT`` does (through the cache) and the side is their aggregate. What each source is, and whether seeds
    meet one model, is settled before anything is evaluated.
    """
    require_two(sources)
    found: list[Side | str] = []  # a results folder's side, or what to evaluate: "seeds" or "model"
    for src in sources:
        path = Path(src)
        if is_seeds_folder(path):  # evaluation imports torch: only where something is evaluated
            from stsbench.evaluation.run import require_every_seed

            require_every_seed(src)
            found.append("seeds")
        elif path.is_dir() and not is_model_dir(path):  # a checkpoint is evaluated, not read as results
            found.append(side_from_folder(path, mode=mode, source=src))
        elif not path.exists() and looks_like_path(src):  # a mistyped folder, not a hub id: say so first
            raise StsbenchError(
                f"{src}: no such folder; pass the --output folder of `stsbench run` (or a part of it, such as "
                "<output>/<model>/<pooler>/<mode>), a `stsbench train --seeds` folder or a model"
            )
        else:
            found.append("model")
    over_seeds = [f == "seeds" if isinstance(f, str) else f.seeds is not None for f in found]
    for src, seeds in zip(sources[1:], over_seeds[1:], strict=True):
        if seeds != over_seeds[0]:
            raise StsbenchError(f"{src} vs {sources[0]}: {MIXED}")
    if encode.prompted and "model" not in found:
        raise StsbenchError("--prompt and --prompt-name apply to models evaluated here; no source is a model")
    if encode.prompted and "seeds" in found:
        raise StsbenchError("--prompt and --prompt-name apply to models, not to seeds folders; drop them")

    options = {"data_dir": data_dir, "output": output, "show_progress": not quiet}
    taken: dict[str, Side] = {}  # each side by its label, in the order of the sources
    # models and seeds are evaluated with run's own intervals: the results written under --output are the
    # ones `stsbench run` writes (a folder of earlier `stsbench run` results keeps its intervals)
    for src, what in zip(sources, found, strict=True):
        if what == "seeds":
            from stsbench.evaluation.run import run_seeds

            done = run_seeds(src, "sts", mode or "test", encode, **options)
            side = side_from_aggregate(done.aggregate, src, done.path or src)
        elif what == "model":
            from stsbench.evaluation.run import evaluate_model

            path = evaluate_model(src, "sts", mode or "test", encode, **options).paths[0].parent
            side = side_from_folder(path, mode=mode or "test", source=src)
        else:
            side = what
        side.label = unique_label(side.label, taken)
        taken[side.label] = side
    return compare_sides(list(taken.values()), bootstrap=bootstrap, seed=seed)


def side_from_aggregate(data: SeedAggregate, source: str, where: Path | str) -> Side:
    """A side from a seed aggregate (:func:`stsbench.results.runs.build_aggregate`'s dict) read at ``where``."""
    rows = data["tasks"]
    sts = sorted((t for t in rows if t != AVG and t in task_names("sts")), key=_task_order)
    if not sts:
        raise StsbenchError(f"{where}: the seed aggregate has no STS task; run the seeds with --tasks sts")
    values = {t: [float(v) for v in tested_values(rows[t])] for t in (*sts, AVG) if t in rows}  # unrounded
    raw = all("raw" in rows[t] for t in sts)
    if AVG not in rows:  # transfer tasks ran too: the plain mean of the raw figures (else SimCSE's Avg.)
        values[AVG] = [
            (raw_average if raw else simcse_average)(list(s))
            for s in zip(*(values[t] for t in sts), strict=False)
        ]
    seeds = {"seeds": values, "seed_ids": [int(s) for s in data["seeds"]], "rounded": not raw}
    empty = {"fingerprint": "", "figures": {}, "data_files": {}, "pairs": {}}
    return _side(str(data["model"]), source, str(data["pooler"]), str(data["mode"]), **empty, **seeds)


def side_from_folder(folder: Path, *, mode: str | None = None, source: str | None = None) -> Side:
    """The STS results of the one model (or seed aggregate) under ``folder``, with the pairs behind them."""
    folder = Path(folder)
    aggregates = [(p, a) for p, a in seed_aggregates(folder) if mode is None or p.parent.name == mode]
    if len(aggregates) == 1:
        return side_from_aggregate(aggregates[0][1], source or str(folder), aggregates[0][0])
    if len(aggregates) > 1:
        names = ", ".join(str(p.parent.relative_to(folder)) for p, _ in aggregates[:4])
        raise StsbenchError(
            f"{folder} holds {len(aggregates)} seed aggregates ({names}{', ...' if len(aggregates) > 4 else ''}); "
            "pass the folder of one (<output>/<seeds folder>/<pooler>/<mode>)"
        )

    # a file that cannot be read, or was scored by another version of its task, is named
    found = read_folder(folder, kinds=(TASK_KIND,), strict=True, current_versions=True)
    sts = [r for r in found.tasks if r.result.task_type == "sts" and (mode is None or r.result.mode == mode)]
    if not sts:
        where = f" in mode {mode}" if mode else ""
        raise StsbenchError(
            f"{folder}: no STS results{where}; pass the --output folder of `stsbench run --tasks sts` "
            "(or a model name to evaluate it)"
        )
    groups: dict[tuple[str, str, str], list[TaskRecord]] = {}
    for rec in sts:
        r = rec.result
        groups.setdefault((r.model.fingerprint, r.model.pooler, r.mode), []).append(rec)
    if len(groups) > 1:
        names = sorted({f"{recs[0].result.model.name} ({k[1]}, {k[2]})" for k, recs in groups.items()})
        raise StsbenchError(
            f"{folder} holds STS results of {len(groups)} models or modes ({'; '.join(names)}); pass one "
            "model's folder (<output>/<model>/<pooler>/<mode>) or --mode"
        )
    (recs,) = groups.values()
    for rec in recs:
        if rec.result.pairs is None:
            raise StsbenchError(
                f"{folder / rec.path}: no per-pair sidecar (written before stsbench kept them); rerun "
                "`stsbench run` on this model to write it (the embedding cache makes that fast)"
            )
    pairs = {rec.result.task: read_pairs(folder / rec.path) for rec in recs}
    ordered = sorted(recs, key=lambda rec: _task_order(rec.result.task))
    by_task = {rec.result.task: rec.result for rec in ordered}
    first = recs[0].result
    extra = dict(fingerprint=first.model.fingerprint, pairs={t: pairs[t] for t in by_task})
    extra.update(figures={t: r.reported for t, r in by_task.items()})
    extra.update(data_files={t: r.provenance.data_files for t, r in by_task.items()})
    side = _side(first.model.name, source or str(folder), first.model.pooler, first.mode, **extra)
    side.label += prompt_suffix(first.model.prompt, first.model.prompt_name)
    return side


def _side(model: str, source: str, pooler: str, mode: str, **fields) -> Side:
    """A :class:`Side` of ``model``'s results, labelled by its name."""
    return Side(label=base_label(model), source=source, model=model, pooler=pooler, mode=mode, **fields)


def _task_order(task: str) -> tuple[int, str]:
    known = task_names("sts")
    return (known.index(task) if task in known else len(known), task)
