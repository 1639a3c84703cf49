"""The per-pair sidecar of an STS result: ``<task>.pairs.npz`` beside ``<task>.json`` (format: :mod:`.schema`).

It holds what the reported figure is computed from, so intervals and comparisons between models never need the
model again. The results file records the sidecar's name, sha256 and pair count; :func:`read_pairs` checks all
three, so a sidecar that is missing, edited, replaced or malformed is one line naming it, never a wrong number.
It also recomputes the figure from the pairs: a ``reported`` they do not give (edited by hand) is refused too.
:func:`verify_result` is that check alone, and every reader of results folders (``check``, ``compare``,
``report``) calls it on each task result.
"""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_npz
from stsbench.metrics import as_reported, simcse_average, spearman
from stsbench.results.schema import AverageResult, PairsEntry, TaskResult
from stsbench.results.store import companion_path, read_result
from stsbench.tasks.base import PairScores

if TYPE_CHECKING:
    from stsbench.stats.bootstrap import PairSet

SUFFIX = ".pairs.npz"
# array -> dtype as written (``U``: any string array)
_ARRAYS = {"cosine": "f8", "gold": "f8", "subset": "i2", "index": "i4", "subsets": "U"}
_RERUN = "rerun `stsbench run` for this model and task to write both files again"


def pairs_path(result_json: str | os.PathLike[str]) -> Path:
    """``<task>.pairs.npz`` beside ``<task>.json``."""
    return companion_path(Path(result_json), SUFFIX)


def write_pairs(result_json: str | os.PathLike[str], pairs: PairScores) -> PairsEntry:
    """Write the sidecar of the results file ``result_json`` (atomically); returns the result's ``pairs`` entry."""
    arrays = {
        "cosine": np.asarray(pairs.cosine, dtype=np.float64),
        "gold": np.asarray(pairs.gold, dtype=np.float64),
        "subset": np.asarray(pairs.subset, dtype=np.int16),
        "subsets": np.asarray(pairs.subsets, dtype=str),
        "index": np.asarray(pairs.index, dtype=np.int32),
    }
    path = pairs_path(result_json)
    data = atomic_write_npz(path, arrays)
    return {"file": path.name, "sha256": hashlib.sha256(data).hexdigest(), "n": len(arrays["gold"])}


def _sidecar_of(json_path: Path, result: TaskResult) -> tuple[Path, PairsEntry]:
    if result.task_type != "sts":
        raise StsbenchError(
            f"{json_path}: a {result.task_type} task result has no per-pair sidecar (STS only)"
        )
    entry = result.pairs
    if entry is None:
        raise StsbenchError(
            f"{json_path}: no per-pair sidecar recorded (written before sidecars existed); {_RERUN}"
        )
    name = entry.get("file") if isinstance(entry, dict) else None
    if (
        not isinstance(name, str)
        or not name
        or Path(name).name != name
        or not isinstance(entry.get("n"), int)
    ):
        raise StsbenchError(f"{json_path}: malformed 'pairs' entry {entry!r}; {_RERUN}")
    return json_path.parent / name, entry


def _check_arrays(path: Path, arrays: dict[str, np.ndarray], n: int) -> None:
    problems = []
    for key, dtype in _ARRAYS.items():
        a = arrays.get(key)
        if a is None:
            problems.append(f"no '{key}' array")
        elif key == "subsets":
            if a.dtype.kind != "U" or a.ndim != 1 or not len(a):
                problems.append("'subsets' is not a non-empty string array")
        elif a.dtype != np.dtype(dtype) or a.shape != (n,):
            problems.append(f"'{key}' is {a.dtype}{list(a.shape)}, expected {np.dtype(dtype)}[{n}]")
    if not problems:
        codes = arrays["subset"]
        if codes.min(initial=0) < 0 or codes.max(initial=0) >= len(arrays["subsets"]):
            problems.append("'subset' codes outside 'subsets'")
        elif not np.isfinite(arrays["cosine"]).all() or not np.isfinite(arrays["gold"]).all():
            problems.append("non-finite cosine or gold")
    if problems:
        raise StsbenchError(f"{path}: malformed per-pair sidecar ({'; '.join(problems)}); {_RERUN}")


def read_sidecar(result_json: str | os.PathLike[str]) -> tuple[TaskResult, PairScores]:
    """The results file and its per-pair sidecar, checked against each other (sha256, pair count, arrays, figure)."""
    json_path = Path(result_json)
    result = read_result(json_path)
    return result, _load_sidecar(json_path, result)


def verify_result(result_json: str | os.PathLike[str], result: TaskResult) -> bool:
    """Check a task result's ``reported`` against its own per-pair sidecar; every reader of results calls this.

    True: the sidecar's sha256, pair count and arrays match what the results file records, and the Spearman of
    its cosines against its gold, as reported (x100, 2 decimals), is ``reported``. False: nothing to check it
    against (a transfer result keeps no pairs; an STS result written before sidecars existed). A file whose
    figure its own pairs do not give, or whose sidecar is missing, edited or malformed, raises one line naming it.
    """
    if result.task_type != "sts" or result.pairs is None:
        return False
    _load_sidecar(Path(result_json), result)
    return True


def verify_average(path: str | os.PathLike[str], average: AverageResult) -> None:
    """Check an ``average_sts.json`` against the results it averages: one line naming it when they disagree.

    Its ``reported`` must be the Avg. of its ``figures``, and each figure the ``reported`` of that task's results
    file beside it (a run rewrites or removes the average with its tasks, so anything else is an edit by hand or
    an average left over from results that are gone).
    """
    path = Path(path)
    fix = "rerun `stsbench run` on its tasks to write it again"
    if simcse_average(list(average.figures.values())) != average.reported:
        raise StsbenchError(f"{path}: 'reported' {average.reported} is not the Avg. of its 'figures'; {fix}")
    for task in average.tasks:
        beside = path.with_name(f"{task}.json")
        try:
            figure = read_result(beside).reported
        except StsbenchError:
            figure = None
        if figure is None or figure != average.figures.get(task):
            now = "no readable results file" if figure is None else f"{figure}"
            raise StsbenchError(
                f"{path}: averages {task} {average.figures.get(task)}, but {beside.name} beside it has {now}; {fix}"
            )


def _load_sidecar(json_path: Path, result: TaskResult) -> PairScores:
    path, entry = _sidecar_of(json_path, result)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise StsbenchError(
            f"{path}: missing (the per-pair sidecar {json_path.name} names); {_RERUN}"
        ) from None
    except OSError as exc:
        raise StsbenchError(f"{path}: cannot read the per-pair sidecar ({exc.strerror}); {_RERUN}") from None
    if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
        raise StsbenchError(
            f"{path}: sha256 differs from the one {json_path.name} records (edited or replaced); {_RERUN}"
        )
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise StsbenchError(f"{path}: not a readable .npz ({type(exc).__name__}); {_RERUN}") from None
    _check_arrays(path, arrays, entry["n"])
    _check_figure(json_path, result, arrays)
    return PairScores(
        arrays["cosine"],
        arrays["gold"],
        arrays["subset"],
        [str(s) for s in arrays["subsets"]],
        arrays["index"],
    )


def _check_figure(json_path: Path, result: TaskResult, arrays: dict[str, np.ndarray]) -> None:
    """Refuse a results file whose ``reported`` is not the figure its own pairs give."""
    cosine, gold = arrays["cosine"], arrays["gold"]
    given = None if np.ptp(cosine) == 0 or np.ptp(gold) == 0 else as_reported(spearman(cosine, gold))
    if given is None or abs(given - result.reported) > 1e-9:
        gives = "no figure (constant scores)" if given is None else f"{given:.2f}"
        raise StsbenchError(
            f"{json_path}: 'reported' {result.reported} is not what its per-pair sidecar gives ({gives}; "
            f"edited by hand?); {_RERUN}"
        )


def read_pairs(result_json: str | os.PathLike[str]) -> PairSet:
    """The pairs behind an STS result, as the bootstrap takes them (strata: the subsets); checked, see above."""
    from stsbench.stats.bootstrap import PairSet

    result, pairs = read_sidecar(result_json)
    return PairSet(result.task, pairs.cosine, pairs.gold, pairs.subset, pairs.index)
