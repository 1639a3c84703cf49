"""The sides ``stsbench compare`` compares, read from results folders (the statistics: :mod:`stsbench.stats.compare`).

A side is one model's STS results under a folder (``stsbench run --output``, or a part of it such as
``<output>/<model>/<pooler>/<mode>``) with the per-pair sidecars behind them (:mod:`stsbench.results.pairs`), or
the seed aggregate of several training seeds (``seeds.json`` of ``stsbench run`` on a ``train --seeds`` folder).
The folder is read by the one reader, strictly (:func:`stsbench.results.folder.read_folder`): a results file
that cannot be read, is malformed or lies about its pairs is one line naming it.
"""

from __future__ import annotations

from pathlib import Path

from stsbench.encoders.resolve import prompt_suffix
from stsbench.errors import StsbenchError
from stsbench.metrics import AVG, raw_average, simcse_average
from stsbench.results.folder import TaskRecord, check_aggregate_versions, read_folder, seed_aggregates
from stsbench.results.labels import base_label
from stsbench.results.pairs import read_pairs
from stsbench.results.schema import TASK_KIND
from stsbench.results.seeds import SeedAggregate, read_aggregate, tested_values
from stsbench.stats.compare import Side
from stsbench.tasks.names import task_names


def side_from_seeds(path: Path, source: str) -> Side:
    """A side from one seed aggregate file (its STS tasks and Avg., per seed)."""
    data = read_aggregate(path)
    if data is None:
        raise StsbenchError(
            f"{path}: not a seed aggregate; pass the seeds.json of `stsbench run --model OUT`"
        )
    check_aggregate_versions(path, data)
    return side_from_aggregate(data, source, path)


def side_from_aggregate(data: SeedAggregate, source: str, where: Path | str) -> Side:
    """A side from a seed aggregate (:func:`stsbench.results.seeds.build_aggregate`'s dict) read at ``where``."""
    rows = data["tasks"]
    sts = [t for t in _task_order([t for t in rows if t != AVG]) if t in task_names("sts")]
    if not sts:
        raise StsbenchError(f"{where}: the seed aggregate has no STS task; run the seeds with --tasks sts")
    values = {t: [float(v) for v in tested_values(rows[t])] for t in sts}  # unrounded where stored
    if AVG in rows:
        values[AVG] = [float(v) for v in tested_values(rows[AVG])]
    elif all("raw" in rows[t] for t in sts):  # transfer tasks ran too: the plain mean of the raw figures
        values[AVG] = [raw_average([values[t][i] for t in sts]) for i in range(len(values[sts[0]]))]
    else:  # an aggregate written before raw figures: each seed's STS Avg. as SimCSE prints it
        values[AVG] = [simcse_average([values[t][i] for t in sts]) for i in range(len(values[sts[0]]))]
    return Side(
        label=base_label(str(data["model"])),
        source=source,
        model=str(data["model"]),
        fingerprint="",
        pooler=str(data["pooler"]),
        mode=str(data["mode"]),
        figures={},
        data_files={},
        pairs={},
        seeds=values,
        seed_ids=[int(s) for s in data["seeds"]],
        rounded=not all("raw" in rows[t] for t in sts),
    )


def side_from_folder(folder: Path, *, mode: str | None = None, source: str | None = None) -> Side:
    """The STS results of the one model (or seed aggregate) under ``folder``, with the pairs behind them."""
    folder = Path(folder)
    aggregates = [p for p, _ in seed_aggregates(folder) if mode is None or p.parent.name == mode]
    if len(aggregates) == 1:
        return side_from_seeds(aggregates[0], source or str(folder))
    if len(aggregates) > 1:
        names = ", ".join(str(p.parent.relative_to(folder)) for p in aggregates[:4])
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
    first = recs[0].result
    by_task = {rec.result.task: rec for rec in recs}
    order = _task_order(list(by_task))
    pairs = {}
    for rec in recs:
        if rec.result.pairs is None:
            raise StsbenchError(
                f"{folder / rec.path}: no per-pair sidecar (written before stsbench kept them); rerun "
                "`stsbench run` on this model to write it (the embedding cache makes that fast)"
            )
        pairs[rec.result.task] = read_pairs(folder / rec.path)
    return Side(
        label=base_label(first.model.name) + prompt_suffix(first.model.prompt, first.model.prompt_name),
        source=source or str(folder),
        model=first.model.name,
        fingerprint=first.model.fingerprint,
        pooler=first.model.pooler,
        mode=first.mode,
        figures={t: by_task[t].result.reported for t in order},
        data_files={t: by_task[t].result.provenance.data_files for t in order},
        pairs={t: pairs[t] for t in order},
    )


def _task_order(tasks: list[str]) -> list[str]:
    known = task_names("sts")
    return sorted(tasks, key=lambda t: (known.index(t) if t in known else len(known), t))
