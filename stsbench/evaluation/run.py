"""The evaluation run: load every task's data, encode all their sentences once, score, write results.

:func:`evaluate` is the one entry point (``stsbench.evaluate``); it gathers its keywords on how the model is
loaded and encoded into an :class:`~stsbench.encoders.base.EncodeOptions` and calls :func:`evaluate_model`,
which ``stsbench run``, ``stsbench compare`` and the seeds run call with theirs. :func:`evaluate_encoder` scores
an encoder already built.

With ``output``, each task's results file (and an STS task's per-pair sidecar) is written as soon as the task
is scored, with its interval; once the last STS task is scored, the STS Avg. with its interval (each task's
bootstrap figures averaged replicate by replicate) goes to ``average_sts.json`` when the run has two STS tasks
or more.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from stsbench.data import integrity
from stsbench.data import sts as sts_reader
from stsbench.encoders.base import EmbeddingTable, EncodeOptions, Encoder, unique_texts
from stsbench.encoders.load import build_encoder
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_bytes, output_lock, to_json
from stsbench.metrics import AVG, raw_average, simcse_average
from stsbench.paths import resolve_data_dir
from stsbench.results.read import read_average, read_result
from stsbench.results.runs import RUN_META, SEEDS_FILE, build_aggregate, seed_dir, seed_dirs, write_aggregate
from stsbench.results.schema import SEED_RUNS_KIND, AverageResult, Provenance, TaskResult, read_json
from stsbench.results.write import (
    average_path,
    make_provenance,
    model_info,
    result_path,
    write_average,
    write_pairs,
    write_result,
)
from stsbench.sources import sha256_files
from stsbench.tasks.base import Mode, PairScores, Task
from stsbench.tasks.intervals import average_interval, check_bootstrap, sts_interval, transfer_interval
from stsbench.tasks.registry import resolve_tasks
from stsbench.tasks.sts import STSTask

log = logging.getLogger(__name__)
API_COMMAND = "stsbench.evaluate (Python API)"  # what provenance records of a run no command started


# -- the parsed-task cache ---------------------------------------------------------------------------------
#
# STS tasks as parsed, kept beside the embedding cache: a warm run does not read SentEval's files again.
#
# ``<cache>/tasks/<key>.parsed``, one file per task and split. The key is a sha256 of all that the parse
# depends on: the task's declaration (its :class:`~stsbench.data.sts_spec.STSSpec`), the split, the source of
# the readers (``stsbench/data/sts.py`` and ``integrity.py``, whose
# :func:`~stsbench.data.integrity.read_lines` reads every line: an edited reader parses again) and the sha256
# of each file read (cached by path, size, mtime_ns, ctime_ns and inode,
# :func:`stsbench.sources.sha256_files`, which the data check has computed already). The file is a JSON line
# (key, task name, scale, subset names, the arrays' types and lengths), the sha256 of that line and the
# arrays, then the arrays: the distinct sentences (newline-joined: a sentence is tokens joined by single
# spaces, never a newline), the int32 rows of each pair's two sentences, the float64 gold scores, the subset
# codes.
#
# A file that is missing, unreadable, of another key or whose digest does not match is never used: the task is
# read from its files and the cache file rewritten (atomically). Tasks whose ``load`` is their own (not
# :class:`~stsbench.tasks.sts.STSTask`'s) and transfer tasks are read as before.

TASK_CACHE_FORMAT = 1  # of a parsed task's cache file; raise it when its layout changes
TASKS_FOLDER = "tasks"


@lru_cache(maxsize=1)
def _readers_digest() -> str:
    h = hashlib.sha256()
    for module in (sts_reader, integrity):
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()


def cache_key(task: STSTask, data_dir: Path, mode: Mode) -> str:
    """The sha256 naming ``task``'s cache file for ``mode``'s split (files hashed, or read from the hash cache)."""
    files = task.files(data_dir, mode)
    digests = sha256_files(files)
    material = {
        "format": TASK_CACHE_FORMAT,
        "spec": repr(task.spec),
        "split": task.split(mode),
        "readers": _readers_digest(),
        "files": [[integrity.relative(data_dir, f), digests[Path(f)]] for f in files],
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


def _encode(pairs: sts_reader.Pairs, key: str) -> bytes:
    """The cache file: a JSON line (what the arrays are), the sha256 of that line and the arrays, the arrays."""
    texts = list(dict.fromkeys(pairs.sent1 + pairs.sent2))
    row = {t: i for i, t in enumerate(texts)}
    names = pairs.subsets()
    code = {n: i for i, n in enumerate(names)}
    arrays = {
        "texts": np.frombuffer("\n".join(texts).encode("utf-8"), dtype=np.uint8),
        "a": np.array([row[t] for t in pairs.sent1], dtype="<i4"),
        "b": np.array([row[t] for t in pairs.sent2], dtype="<i4"),
        "gold": np.asarray(pairs.gold, dtype="<f8"),
        "codes": np.array([code[s] for s in pairs.subset], dtype="<i4"),
    }
    meta = {
        "format": TASK_CACHE_FORMAT,
        "key": key,
        "name": pairs.name,
        "subsets": names,
        "scale": list(pairs.scale),
    }
    meta["arrays"] = [[name, a.dtype.str, len(a)] for name, a in arrays.items()]
    line = json.dumps(meta).encode()
    body = b"".join(a.tobytes() for a in arrays.values())
    return b"\n".join([line, hashlib.sha256(line + body).hexdigest().encode(), body])


def _decode(path: Path, key: str) -> sts_reader.Pairs | None:
    """The pairs a cache file holds; None when it is not there, not readable, of another key or corrupt."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        end = data.index(b"\n")
        line, digest, body = data[:end], data[end + 1 : end + 65], memoryview(data)[end + 66 :]
        check = hashlib.sha256(line)
        check.update(body)
        if check.hexdigest().encode() != digest:
            raise ValueError("its sha256 does not match")
        meta = json.loads(line)
        if meta["key"] != key:
            raise ValueError("the file of another task or data")
        arrays, offset = {}, 0
        for name, dtype, count in meta["arrays"]:
            arrays[name] = np.frombuffer(body, dtype=dtype, count=count, offset=offset)
            offset += arrays[name].nbytes
        if offset != len(body):
            raise ValueError("a length that does not match")
        texts = arrays["texts"].tobytes().decode("utf-8").split("\n")
        names = meta["subsets"]
        return sts_reader.Pairs(
            meta["name"],
            [texts[i] for i in arrays["a"].tolist()],
            [texts[i] for i in arrays["b"].tolist()],
            arrays["gold"].astype(np.float64),  # a copy: writable, native order
            [names[c] for c in arrays["codes"].tolist()],
            tuple(meta["scale"]),
        )
    except Exception as exc:  # truncated, damaged, another key: the task's files are read again
        log.debug("task cache file %s is not used (%s); the task's files are read again", path, exc)
        return None


def load_task(task: Task, data_dir: Path, mode: Mode, cache_root: Path | None):
    """``task.load(data_dir, mode)``, from ``<cache_root>/tasks/`` when an STS task's parse is there."""
    if cache_root is None or not isinstance(task, STSTask) or type(task).load is not STSTask.load:
        return task.load(data_dir, mode)
    try:
        key = cache_key(task, data_dir, mode)
    except OSError:  # a missing file: the reader's error names it
        return task.load(data_dir, mode)
    path = Path(cache_root) / TASKS_FOLDER / f"{key}.parsed"
    pairs = _decode(path, key)
    if pairs is not None:
        return pairs
    pairs = task.load(data_dir, mode)
    try:
        atomic_write_bytes(path, _encode(pairs, key))
    except OSError as exc:  # a read-only cache: the next run reads the files again, nothing else
        log.debug("task cache file %s not written (%s)", path, exc)
    return pairs


@dataclass
class RunResult:
    """What one ``stsbench run`` produced."""

    model: str
    mode: str
    pooler: str
    results: list[TaskResult]
    paths: list[Path] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # tasks without a split for this mode
    timings: dict[str, float] = field(default_factory=dict)
    pairs: dict[str, PairScores] = field(default_factory=dict)  # STS tasks: what each figure is computed from
    average: AverageResult | None = None  # the STS tasks' Avg. with its interval (when bootstrapped)
    prompt: str | None = None  # prepended to every sentence (encoders.resolve.choose_prompt); None: none
    prompt_name: str | None = None  # its name among the model's stored prompts


def _stale_average(path: Path, written: list[TaskResult], before: dict[str, str | None]) -> None:
    """Remove an ``average_sts.json`` that averages a task just rewritten without a new average.

    It is kept when every rewritten task it averages has the same figure and byte-identical pairs as before
    (``before``: the sidecar sha256 each results file recorded before this run rewrote it): its inputs did not
    change, so neither did it.
    """
    try:
        average = read_average(path)
    except StsbenchError:
        return  # not ours to judge
    changed = [
        r.task
        for r in written
        if r.task in average.tasks
        and (
            r.pairs is None
            or before.get(r.task) != r.pairs["sha256"]
            or average.figures.get(r.task) != r.reported
        )
    ]
    if changed:
        path.unlink(missing_ok=True)
        log.info("removed %s: it averaged results this run replaced (%s)", path, ", ".join(changed))


def _recorded_sha256(path: Path) -> str | None:
    """The sidecar sha256 an existing results file records (None: no file, no sidecar, or unreadable)."""
    if not path.exists():
        return None
    try:
        entry = read_result(path).pairs
    except StsbenchError:
        return None
    return entry.get("sha256") if isinstance(entry, dict) else None


def _write_task(output: Path, result: TaskResult, pairs: PairScores | None) -> list[Path]:
    """A task's results file and (STS) its per-pair sidecar: both written, or neither.

    The JSON is rendered first, so a result it cannot hold (a non-finite number) writes nothing; a failed
    JSON write removes the sidecar just written, leaving no sidecar that its results file does not name.
    """
    try:
        to_json(result.to_dict())
    except ValueError as exc:
        raise StsbenchError(
            f"{result.task}: the result cannot be written ({exc}); nothing was written"
        ) from None
    if pairs is None:
        return [write_result(output, result)]
    where = result_path(output, result)
    result.pairs = write_pairs(where, pairs)
    try:
        return [write_result(output, result)]
    except BaseException:
        where.with_name(result.pairs["file"]).unlink(missing_ok=True)
        raise


def _results_lock(output: Path | None, encoder: Encoder, mode: Mode) -> AbstractContextManager:
    """The lock of ``<output>/<model>/<pooler>/<mode>/`` while a run writes there; none without ``output``.

    A second run on the same model waits (its results replace the first one's whole): interleaved, the two
    could leave one run's ``average_sts.json`` beside the other's task results.
    """
    if output is None:
        return nullcontext()
    return output_lock(average_path(output, model_info(encoder), mode.value).parent, "--output", wait=True)


def _average(run: RunResult, sts: list[TaskResult], interval: dict, provenance: Provenance) -> AverageResult:
    """The run's STS Avg. (SimCSE's: the mean of the rounded figures) with its interval."""
    figures = {r.task: r.reported for r in sts}
    average = simcse_average(list(figures.values()))
    return AverageResult(list(figures), figures, average, interval, sts[0].model, run.mode, provenance)


def _write_average(
    run: RunResult, output: Path | None, written: list[TaskResult], before: dict[str, str | None]
) -> None:
    """Write the run's ``average_sts.json`` (two STS tasks or more), else drop a stale one."""
    if output is None or not written:
        return
    where = average_path(output, written[0].model, run.mode)
    if run.average is not None and len(written) > 1:  # the Avg. of one task is that task
        run.paths.append(write_average(output, run.average))
    elif where.exists():
        _stale_average(where, written, before)


def _cache_root(encoder: Encoder) -> Path | None:
    """The embedding cache's root of a cached encoder (its bootstrap replicates are kept beside), else None."""
    cache = getattr(encoder, "cache", None)
    return cache.dir.parents[1] if cache is not None and hasattr(cache, "dir") else None


def check_task_data(tasks: list[Task], mode: Mode, data_dir: Path, allow_modified_data: bool = False) -> None:
    """Refuse data files of ``tasks`` (in ``mode``) that differ from the canonical ones, unless allowed."""
    files = [f for t in tasks if t.supports(mode) for f in t.files(data_dir, mode)]
    integrity.check_data(data_dir, files, allow_modified_data)


def evaluate_encoder(
    encoder: Encoder,
    tasks: list[Task],
    mode: Mode,
    data_dir: Path,
    *,
    seed: int = 1111,
    batch_size: int = 128,
    show_progress: bool = True,
    output: Path | None = None,
    command: str | None = None,
    bootstrap: int = 1000,
    allow_modified_data: bool = False,
) -> RunResult:
    """Score ``encoder`` on ``tasks``; with ``output``, write one results file per task (see the module).

    ``bootstrap``: resamples for the STS tasks' 95% intervals (0: none), seeded by ``seed``. All data is read
    and validated before anything is encoded, so bad data fails before any cost and before any file is written.
    Data that differs from the canonical files (the manifest) is refused unless ``allow_modified_data``; then
    each result's ``provenance.data_modified`` names the files that differ.
    """
    bootstrap = check_bootstrap(bootstrap)
    mode = Mode(mode)
    kept = [t for t in tasks if t.supports(mode)]
    skipped = [t.name for t in tasks if not t.supports(mode)]
    check_task_data(kept, mode, data_dir, allow_modified_data)
    t0 = time.perf_counter()
    root = _cache_root(encoder)  # parsed STS tasks and bootstrap replicates are kept there too
    loaded = [(t, load_task(t, data_dir, mode, root)) for t in kept]
    texts = unique_texts(t.texts(d) for t, d in loaded)
    t1 = time.perf_counter()
    vectors = encoder.encode(texts, batch_size=batch_size, show_progress=show_progress)
    table = EmbeddingTable(texts, vectors)
    t2 = time.perf_counter()
    run = RunResult(
        encoder.info.name,
        mode.value,
        encoder.info.pooler,
        [],
        skipped=skipped,
        timings={"load": t1 - t0, "encode": t2 - t1},
        prompt=getattr(encoder.info, "prompt", None),
        prompt_name=getattr(encoder.info, "prompt_name", None),
    )
    config = {"seed": seed, "batch_size": batch_size, "n_sentences": len(texts)}
    sts_files = [f for t, _ in loaded if t.kind == "sts" for f in t.files(data_dir, mode)]
    n_sts = sum(t.kind == "sts" for t, _ in loaded)
    sts: list[TaskResult] = []
    replicates: list[np.ndarray] = []  # each STS task's bootstrap figures, for the Avg.
    before: dict[str, str | None] = {}  # STS task -> the sidecar sha256 its results file held before this run
    with _results_lock(output, encoder, mode):  # one run at a time writes this model's results; others wait
        for task, data in loaded:
            start = time.perf_counter()
            scores = task.evaluate(data, table, mode, seed)
            elapsed = time.perf_counter() - start
            prov = make_provenance(
                data_dir,
                task.files(data_dir, mode),
                {"encode_all_tasks": t2 - t1, "evaluate": elapsed},
                command,
                encoder,
            )
            result = TaskResult(
                task.name,
                task.kind,
                mode.value,
                scores.reported,
                scores.metric,
                scores.details,
                model_info(encoder),
                {**config, "task_sentences": len(set(task.texts(data)))},
                prov,
                scores.n_pairs,
                task_version=task.version,
            )
            run.results.append(result)
            if task.kind != "sts":
                result.interval = transfer_interval(scores.metric, scores.details)
                if output is not None:
                    run.paths += _write_task(output, result, None)
                continue
            run.pairs[task.name] = scores.pairs
            sts.append(result)
            if bootstrap:
                start = time.perf_counter()
                result.interval, figures = sts_interval(
                    task.name, scores.pairs, bootstrap, seed, cache_dir=root
                )
                replicates.append(figures)
                run.timings["bootstrap"] = run.timings.get("bootstrap", 0.0) + time.perf_counter() - start
            if output is not None:
                before[task.name] = _recorded_sha256(result_path(output, result))
                run.paths += _write_task(output, result, scores.pairs)
            if len(sts) == n_sts:
                if bootstrap:
                    interval = average_interval(replicates, [r.interval for r in sts])
                    timings = {"bootstrap": run.timings["bootstrap"]}
                    prov = make_provenance(data_dir, sts_files, timings, command, encoder)
                    run.average = _average(run, sts, interval, prov)
                _write_average(run, output, sts, before)
    run.timings["evaluate"] = time.perf_counter() - t2
    return run


def evaluate(
    model: Any,
    tasks: str | list[str] = "sts",
    mode: str = "test",
    pooler: str | None = None,
    *,
    tokenizer: Any = None,
    data_dir: Path | None = None,
    output: Path | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    batch_size: int = 128,
    max_length: int | None = None,
    device: str | None = None,
    dtype: str = "float32",
    seed: int = 1111,
    show_progress: bool = False,
    revision: str | None = None,
    bootstrap: int = 1000,
    allow_modified_data: bool = False,
    command: str | None = API_COMMAND,
    prompt: str | None = None,
    prompt_name: str | None = None,
) -> RunResult:
    """Score ``model`` on ``tasks`` as ``stsbench run`` does; public as ``stsbench.evaluate``.

    The keywords on how the model is loaded and encoded become one :class:`EncodeOptions`, passed to
    :func:`evaluate_model` (which ``stsbench run`` calls with its options').

    ``model``: a name, hub id or folder (as ``--model``); a ``transformers`` model with its ``tokenizer``
    (pooler default ``cls``, SimCSE's); a ``SentenceTransformer`` (its own pooling unless ``pooler`` is given);
    or any object with ``encode(list[str]) -> array`` (not cached unless it carries an ``info.fingerprint``).
    ``dtype`` and ``revision`` (branch, tag or commit of a hub id) apply to models loaded by name; a live model
    is run in the dtype it has.
    ``result.results[i].reported`` is the figure of the table (Spearman x 100, 2 decimals), ``.interval`` its
    95% interval (STS: a percentile bootstrap over pairs with ``bootstrap`` resamples seeded by ``seed``, 0 for
    none; ``result.average`` holds the STS Avg.'s); ``result.pairs[task]`` the per-pair cosines and gold scores.
    Data that differs from the canonical files is refused unless ``allow_modified_data`` (then recorded in each
    result's ``provenance.data_modified``). ``command`` is what each result's provenance records as its origin.
    ``prompt`` (a text) or ``prompt_name`` (one the model stores in ``config_sentence_transformers.json``) is
    prepended to every sentence, as sentence-transformers does; it keys the cache and is in ``model`` of
    each result (see :func:`stsbench.encoders.resolve.choose_prompt`).
    Nothing heavy is imported before the data is checked, nor at all when every embedding is in the cache.
    """
    encode = EncodeOptions(
        pooler=pooler, max_length=max_length, device=device, dtype=dtype, prompt=prompt, prompt_name=prompt_name,
        revision=revision, batch_size=batch_size, cache_dir=cache_dir, use_cache=use_cache,
    )  # fmt: skip
    return evaluate_model(
        model, tasks, mode, encode, tokenizer=tokenizer, data_dir=data_dir, output=output, seed=seed,
        show_progress=show_progress, bootstrap=bootstrap, allow_modified_data=allow_modified_data, command=command,
    )  # fmt: skip


def evaluate_model(
    model: Any,
    tasks: str | list[str],
    mode: str,
    encode: EncodeOptions,
    *,
    tokenizer: Any = None,
    data_dir: Path | None = None,
    output: Path | None = None,
    seed: int = 1111,
    show_progress: bool = False,
    bootstrap: int = 1000,
    allow_modified_data: bool = False,
    command: str | None = API_COMMAND,
) -> RunResult:
    """:func:`evaluate` with how the model is loaded and encoded as one :class:`EncodeOptions`."""
    check_bootstrap(bootstrap)  # before a model loads
    mode = Mode(mode)
    task_list, root = resolve_tasks(tasks), resolve_data_dir(data_dir)
    check_task_data(task_list, mode, root, allow_modified_data)

    was_training = getattr(model, "training", False) is True  # before loading: that puts it in eval mode
    encoder = build_encoder(model, encode, tokenizer=tokenizer)
    try:
        result = evaluate_encoder(
            encoder,
            task_list,
            mode,
            root,
            seed=seed,
            batch_size=encode.batch_size,
            show_progress=show_progress,
            output=Path(output) if output is not None else None,
            command=command,
            bootstrap=bootstrap,
            allow_modified_data=allow_modified_data,
        )
    finally:  # a live model is run in eval mode (no dropout); hand it back as it came
        if was_training:
            model.train()
    if result.skipped:
        log.info("%s have no %s split; skipped", ", ".join(result.skipped), mode.value)
    return result


# -- `stsbench run --model OUT` on a seeds folder ----------------------------------------------------------
#
# ``stsbench run --model OUT`` on a seeds folder: evaluate every finished seed, then the seed aggregate.
#
# Each ``OUT/seed-<s>`` checkpoint is evaluated as its own model
# (:func:`stsbench.evaluation.run.evaluate_model`, its results written as usual under
# ``<output>/<model_slug(OUT/seed-<s>)>/``); then per task and Avg. the seeds' values, mean, std, n and 95%
# t-interval go to ``<output>/<model_slug(OUT)>/<pooler>/<mode>/seeds.json`` (:mod:`stsbench.results.runs`). A
# seed that has not finished training is left out, and named.


@dataclass
class SeedsRun:
    """What ``stsbench run`` on a seeds folder produced."""

    aggregate: dict[str, Any]  # the seed aggregate, as written
    path: Path | None  # where it was written (None without an output folder)
    results: dict[int, RunResult]  # each seed's own run
    left_out: list[str] = field(default_factory=list)  # unfinished seeds, one note each


def seed_scores(result: RunResult, raw: bool = False) -> dict[str, float]:
    """A seed's figures by task, with ``Avg.`` (``STS Avg.`` and ``Transfer Avg.`` when both kinds ran).

    ``raw``: the unrounded figures (:attr:`TaskResult.raw`), the Avg. their plain mean: what tests read.
    """
    figure = (lambda r: r.raw) if raw else (lambda r: r.reported)
    scores: dict[str, float] = {r.task: figure(r) for r in result.results}
    kinds = [k for k in ("sts", "transfer") if any(r.task_type == k for r in result.results)]
    for kind in kinds:
        values = [figure(r) for r in result.results if r.task_type == kind]
        avg = raw_average(values) if raw else simcse_average(values)
        label = AVG if len(kinds) == 1 else f"{'STS' if kind == 'sts' else 'Transfer'} {AVG}"
        if avg is not None:
            scores[label] = avg
    return scores


def _not_trained(folder: Path) -> str | None:
    """Why a seed's run folder has no kept checkpoint to evaluate; None when it has one."""
    from stsbench.train.log import run_status

    status = run_status(folder)
    if status == "finished" and (folder / RUN_META).is_file():
        return None
    return "finished without a checkpoint" if status == "finished" else f"not finished ({status})"


def finished_seeds(folder: str) -> tuple[dict[int, str], list[str]]:
    """The seeds of ``folder`` whose training finished with a checkpoint, and a note for each one left out.

    A seed's model name is ``folder/seed-<s>``, ``folder`` as given (its results folder is named from it).
    """
    chosen, left_out = {}, []
    for s, d in seed_dirs(Path(folder).expanduser()).items():
        why = _not_trained(d)
        if why is None:
            chosen[s] = f"{folder.rstrip('/')}/{d.name}"
        else:
            left_out.append(f"seed {s} left out: {d} is {why}")
    return chosen, left_out


def require_every_seed(folder: str) -> None:
    """Refuse, in one line, a seeds folder with a seed not trained to its kept checkpoint yet.

    The seeds are those of ``OUT/seeds.json`` and the ``seed-<s>`` folders. ``stsbench compare`` compares a
    method over all the seeds it was trained with: leaving a failed one out would pick the seeds that worked.
    """
    out = Path(folder).expanduser()
    records = _seed_records(out)
    seeds = sorted(set(seed_dirs(out)) | set(records))
    for s in seeds:
        d = seed_dir(out, s)
        why = _not_trained(d) if d.is_dir() else f"not started (no {d.name} folder)"
        if why is None:
            continue
        error = records.get(s, {}).get("error")
        if error:
            why += f"; it failed: {error}"
        if why.startswith("finished"):  # --resume keeps a finished seed: only training it again helps
            fix = f"train it again with `stsbench train ... --seed {s} --output {d} --overwrite`"
        else:
            listed = ",".join(map(str, seeds))
            fix = f"finish it with `stsbench train ... --seeds {listed} --output {folder} --resume`"
        raise StsbenchError(f"{folder}: seed {s} has no kept checkpoint ({why}); {fix}")


def _seed_records(out: Path) -> dict[int, dict[str, Any]]:
    """The per-seed records of ``OUT/seeds.json`` (none without that file), by seed."""
    path = out / SEEDS_FILE
    data = read_json(path) if path.is_file() else None
    runs = data.get("runs") if isinstance(data, dict) and data.get("kind") == SEED_RUNS_KIND else None
    if not isinstance(runs, list):
        return {}
    return {r["seed"]: r for r in runs if isinstance(r, dict) and isinstance(r.get("seed"), int)}


def run_seeds(
    folder: str, tasks: str | list[str], mode: str, encode: EncodeOptions, **options: Any
) -> SeedsRun:
    """Evaluate every finished seed of ``folder`` and aggregate.

    ``encode`` and ``options`` are :func:`stsbench.evaluation.run.evaluate_model`'s, the same for every seed.
    """
    seeds, left_out = finished_seeds(folder)
    for note in left_out:
        log.warning("%s (finish it with stsbench train ... --seeds ... --resume)", note)
    if not seeds:
        raise StsbenchError(
            f"{folder} holds no seed that finished training; finish them with "
            f"`stsbench train ... --seeds ... --output {folder} --resume`"
        )
    results = {s: evaluate_model(name, tasks, mode, encode, **options) for s, name in seeds.items()}
    poolers = sorted({r.pooler for r in results.values()})
    if len(poolers) > 1:
        raise StsbenchError(
            f"the seeds of {folder} evaluate with different poolers ({', '.join(poolers)}); pass --pooler"
        )
    first = next(iter(results.values()))
    per_seed = {
        s: {"model": r.model, "scores": seed_scores(r), "raw": seed_scores(r, raw=True)}
        for s, r in results.items()
    }
    aggregate = build_aggregate(folder, first.pooler, first.mode, per_seed)
    modified = {
        str(s): sorted({f for t in r.results for f in t.provenance.data_modified or ()})
        for s, r in results.items()
    }
    if any(modified.values()):  # the seeds whose figures are on data that differs from the canonical files
        aggregate["data_modified"] = {s: files for s, files in modified.items() if files}
    output = options.get("output")
    path = write_aggregate(output, aggregate) if output is not None else None
    return SeedsRun(aggregate, path, results, left_out)
