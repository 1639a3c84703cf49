"""MTEB's results layout, both ways: export stsbench's STS results through ``mteb.TaskResult``, read a folder back.

MTEB keeps ``<DIR>/results/<org>__<model>/<revision>/<task>.json`` beside a ``model_meta.json``
(``mteb/cache/result_cache.py``), one ``TaskResult`` per task: ``scores[split]`` is a list of score dicts, one
per ``hf_subset``. Its STS tasks score the ``test`` split, subset ``default``, and their main score is
``cosine_spearman``, in [0, 1]. Only the tasks whose pairs are SentEval's are exported: STS12-16, whose MTEB
test split is every subset's pairs in one list (so MTEB's main score is stsbench's ``all`` aggregate), and
STSBenchmark's test split. Not SICK-R: MTEB scores all 9,927 SICK pairs, SentEval its 4,927-pair test split.
``mteb`` is the optional extra ``stsbench[mteb]``; every function here imports it inside.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from stsbench.encoders.resolve import is_embedded
from stsbench.errors import StsbenchError
from stsbench.files import check_writable_dir
from stsbench.paths import first_line
from stsbench.results.read import load_results, select_run
from stsbench.results.schema import ModelInfo

MTEB_TASKS = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark")
SPLIT = "test"  # MTEB's eval split of all six
SUBSET = "default"  # their one hf_subset (eng-Latn)
PS = ("spearman", "pearson")  # the correlations MTEB keeps of an STS task
MODES = ("test", "fasttest")  # STS is scored on the test split in both (fasttest changes transfer tasks only)
EMBEDDED_MTEB_NAME = "sentence-transformers/all-MiniLM-L6-v2"
NO_REVISION = "no_revision_available"  # what MTEB writes where a model's revision is unknown
INSTALL = 'run `pip install "stsbench[mteb]"`'
MTEB_RESULTS_PREFIX = "mteb-results:"  # `stsbench check --against mteb-results:DIR`


def require_mteb(what: str) -> Any:
    """The ``mteb`` module, or a one-line ``StsbenchError`` saying how to install it."""
    try:
        import mteb
    except ImportError:
        raise StsbenchError(f"{what} needs the mteb package; {INSTALL}") from None
    return mteb


def mteb_identity(model: ModelInfo, name: str | None = None, revision: str | None = None) -> tuple[str, str]:
    """MTEB's ``org/name`` and revision of the evaluated model; ``name``/``revision`` override.

    The embedded model is ``sentence-transformers/all-MiniLM-L6-v2`` (its packaged copy names no commit); a hub
    id is its own name, its revision the commit of the snapshot folder it was read from.
    """
    if name is None:
        if is_embedded(model.name):
            name = EMBEDDED_MTEB_NAME
        elif re.fullmatch(r"[\w.\-]+/[\w.\-]+", model.name) and not Path(model.name).expanduser().exists():
            name = model.name
        else:
            msg = f"model '{model.name}' has no hub name MTEB can file it under; pass --model-name ORG/NAME"
            raise StsbenchError(msg)
    elif "/" not in name.strip("/") or name.count("/") > 1:
        raise StsbenchError(f"--model-name '{name}': MTEB names models ORG/NAME; pass one in that form")
    if revision is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", revision):
        raise StsbenchError(
            f"--revision {revision!r}: MTEB files it as one folder name; pass a commit, tag or branch made of "
            "letters, digits, '.', '_' and '-' (no '/' or '..')"
        )
    if revision is None:
        path = Path(model.path)
        commit = path.name if path.parent.name == "snapshots" else ""
        revision = commit if re.fullmatch(r"[0-9a-f]{40}", commit) else NO_REVISION
    return name, revision


@dataclass(frozen=True)
class Export:
    """What ``export_mteb`` wrote."""

    folder: Path  # ``<out>/results/<org>__<model>/<revision>``
    name: str
    revision: str
    tasks: tuple[str, ...]
    left_out: tuple[str, ...]  # tasks of the run that MTEB scores on other pairs (SICKRelatedness, transfer)


@dataclass(frozen=True)
class MtebModelScores:
    """One model's main scores in an MTEB results folder: task -> main score x100 (2 decimals)."""

    folder: Path
    name: str
    revision: str
    values: dict[str, float]


def read_mteb_results(folder: Path) -> dict[tuple[str, str], dict[str, float]]:
    """Every (model, revision) of an MTEB results folder, read through ``mteb.ResultCache``, with main scores.

    The main scores of the six tasks (test split, ``default`` subset), x100 and rounded to 2 decimals like
    stsbench's figures.
    """
    mteb = require_mteb("check --against mteb-results:DIR")
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        msg = f"MTEB results folder {folder} does not exist; pass the folder that holds results/"
        raise StsbenchError(msg)
    cache = mteb.ResultCache(cache_path=folder)
    layout = "results/<org>__<model>/<revision>/<task>.json"
    paths = cache.get_cache_paths(include_remote=False, require_model_meta=False)
    if not paths:
        raise StsbenchError(f"no MTEB results under {folder} (expected {layout}); pass MTEB's cache folder")
    try:
        loaded = cache.load_results(include_remote=False, require_model_meta=False)
    except Exception:  # name the file mteb cannot read
        for path in paths:
            try:
                mteb.TaskResult.from_disk(path)
            except Exception as exc:
                msg = f"{path}: not an MTEB task result ({first_line(exc)}); restore or remove it"
                raise StsbenchError(msg) from None
        raise
    models: dict[tuple[str, str], dict[str, float]] = {}
    for mr in loaded.model_results:
        values = {}
        for tr in (t for t in mr.task_results if t.task_name in MTEB_TASKS):
            mains = [s.get("main_score") for s in tr.scores.get(SPLIT, []) if s.get("hf_subset") == SUBSET]
            if len(mains) != 1 or not isinstance(mains[0], (int, float)) or isinstance(mains[0], bool):
                raise StsbenchError(
                    f"{folder}: {mr.model_name} {tr.task_name} has no numeric main_score for split "
                    f"'{SPLIT}', subset '{SUBSET}'; restore the file"
                )
            values[tr.task_name] = round(100 * float(mains[0]), 2)
        models[(mr.model_name, mr.model_revision or NO_REVISION)] = values
    return models


def pick_mteb_model(
    folder: Path, models: dict[tuple[str, str], dict[str, float]], name: str | None
) -> MtebModelScores:
    """The model of the folder to compare: the one named ``name`` (at one revision).

    For a run whose MTEB name is unknown (``name`` None: a local model), the folder's only model.
    """
    keys = sorted(models) if name is None else [k for k in sorted(models) if k[0] == name]
    if len(keys) != 1:
        there = ", ".join(f"{n}@{r}" for n, r in sorted(models))
        who = name or "a local model (its MTEB name is unknown)"
        why = f"{len(keys)} results folders for {who}" if keys else f"no results of {name}"
        msg = f"{folder} holds {why} (models there: {there}); point at a folder with one of them"
        raise StsbenchError(msg)
    (model, revision) = keys[0]
    values = {t: models[keys[0]][t] for t in MTEB_TASKS if t in models[keys[0]]}
    if not values:
        tasks = ", ".join(MTEB_TASKS)
        raise StsbenchError(f"{folder}: the MTEB results of {model} have none of {tasks}; nothing to compare")
    return MtebModelScores(folder, model, revision, values)


def export_results(
    results_dir: Path,
    out: Path,
    name: str | None = None,
    revision: str | None = None,
    model: str | None = None,
    pooler: str | None = None,
    mode: str | None = None,
) -> Export:
    """``stsbench export-mteb``: one run's STS results under ``results_dir`` in MTEB's layout under ``out``.

    The run is picked by ``select_run``. Every file is built and validated by mteb first, then moved into place
    one by one (a rename): a failure leaves no half-written file. The model's entry is MTEB's registry entry of
    ``name`` at ``revision``, else an empty ``ModelMeta`` with what stsbench knows.
    """
    mteb = require_mteb("export-mteb")
    check_writable_dir(out, "--out")
    measured = load_results(results_dir)
    by_task = select_run(measured, MTEB_TASKS, results_dir, model=model, pooler=pooler, mode=mode)
    if not by_task:
        found = ", ".join(sorted({m.result.task for m in measured}))
        raise StsbenchError(
            f"no STS12-16 or STSBenchmark result under {results_dir} (found: {found}); "
            "run `stsbench run --tasks sts` first"
        )
    chosen = [by_task[t] for t in MTEB_TASKS if t in by_task]
    first = chosen[0].result
    if first.mode not in MODES:
        msg = f"the results were run in {first.mode} mode; MTEB scores the test split: rerun with --mode test"
        raise StsbenchError(msg)
    name, revision = mteb_identity(first.model, name, revision)
    modified = sorted({f for m in chosen for f in m.result.provenance.data_modified or ()})
    if modified:
        raise StsbenchError(
            f"the results were computed on data that differs from the canonical files ({', '.join(modified)}); "
            "MTEB would file them as canonical: rerun on the canonical data (`stsbench data verify`)"
        )
    from mteb.models.model_implementations import MODEL_REGISTRY
    from mteb.models.model_meta import ModelMeta, ScoringFunction

    if name in MODEL_REGISTRY:
        meta = MODEL_REGISTRY[name].model_copy(update={"revision": revision})
    else:
        fw = ["Sentence Transformers" if first.model.kind.startswith("sentence-transformers") else "PyTorch"]
        cos = ScoringFunction.COSINE  # stsbench scores cosine similarity
        info = {"name": name, "revision": revision, "similarity_fn_name": cos}
        meta = ModelMeta.create_empty(info | {"max_tokens": first.model.max_length, "framework": fw})
    task_results = []
    for r in (m.result for m in chosen):
        # STS12-16: the ``all`` aggregate (every subset's pairs concatenated, MTEB's single test split)
        s = r.scores[SPLIT] if r.task == "STSBenchmark" else {k: r.scores["aggregate"][k]["all"] for k in PS}
        sp = s["spearman"]
        scores = {SPLIT: {SUBSET: {"cosine_spearman": sp, "cosine_pearson": s["pearson"], "main_score": sp}}}
        seconds, when = sum(r.provenance.timings.values()), datetime.fromisoformat(r.provenance.created_at)
        task = mteb.get_task(r.task)
        tr = mteb.TaskResult.from_task_results(task, scores, evaluation_time=float(seconds), date=when)
        task_results.append(tr)
    out = Path(out).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".stsbench-mteb.", dir=out) as tmp:
        cache = mteb.ResultCache(cache_path=tmp)
        for tr in task_results:
            cache.save_to_cache(tr, meta)
        staged = Path(tmp)
        for path in sorted(p for p in staged.rglob("*") if p.is_file()):
            dest = out / path.relative_to(staged)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(path, dest)  # same file system: a rename
    folder = out / "results" / meta.model_name_as_path() / revision
    left_out = sorted({m.result.task for m in measured if m.run == chosen[0].run} - set(MTEB_TASKS))
    return Export(folder, name, revision, tuple(tr.task_name for tr in task_results), tuple(left_out))
