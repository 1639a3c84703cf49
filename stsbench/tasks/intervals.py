"""The 95% interval of each task's reported figure, and of the STS Avg. (the results' ``interval``).

STS tasks: a percentile bootstrap over pairs (:func:`stsbench.stats.bootstrap.bootstrap_figures`), resampling
within each subset where the figure pools subsets (STS12-16's ``all``), every task resampled jointly for the Avg.
Transfer tasks: their accuracy's own sampling error, no resampling: a Wilson interval where one fixed set of
``n`` sentences is scored once (SST2, TREC, MRPC test; SST2 dev), Student's t over the folds where the figure is
the mean of k folds (MR, CR, SUBJ, MPQA; TREC and MRPC in dev mode, whose figure is their k-fold accuracy on
train). Bounds are in the units of ``reported`` (x100, 2 decimals).
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_bytes
from stsbench.tasks.base import PairScores

LEVEL = 0.95
BOOTSTRAP = "percentile bootstrap over pairs"
STRATIFIED = ", stratified by subset"
JOINT = ", every task resampled jointly"
WILSON = "wilson binomial"
FOLDS = "t over k folds"


def check_bootstrap(bootstrap: Any) -> int:
    """``bootstrap`` as a resample count (>= 0; 0: no STS intervals), or one line saying what is wrong."""
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise StsbenchError(
            f"bootstrap must be a whole number of resamples >= 0 (0: no intervals), got {bootstrap!r}"
        )
    return bootstrap


def _bounds(low: float, high: float, scale: float = 1.0) -> dict[str, float]:
    return {"low": round(float(low) * scale, 2), "high": round(float(high) * scale, 2)}


def _replicates_key(task: str, pairs: PairScores, bootstrap: int, seed: int) -> str:
    """What determines a task's bootstrap replicates: the pairs as scored, B, the seed and the code that draws.

    The code is the sources of :mod:`stsbench.stats.bootstrap`, of this module (which feeds it the pairs) and of
    what they import, as syntax trees (:func:`stsbench.sources.code_digest`): an edit draws the replicates anew
    (the version string, unchanged across edits, kept them).
    """
    from stsbench.sources import code_digest

    h = hashlib.sha256(f"{task}\0{bootstrap}\0{seed}\0{code_digest('bootstrap')}\0".encode())
    for array in (pairs.cosine, pairs.gold, pairs.subset):
        h.update(np.ascontiguousarray(array).tobytes())
    return h.hexdigest()


def _cached_replicates(task: str, pairs: PairScores, bootstrap: int, seed: int, cache_dir: Path | None):
    """The task's ``(bootstrap,)`` replicates, read from ``cache_dir/bootstrap`` when computed there before.

    A warm run (every embedding cached) spends most of its time here otherwise: the replicates are a pure
    function of the key's inputs, so they are stored like the embeddings, and a damaged file is recomputed.
    """
    from stsbench.stats.bootstrap import PairSet, bootstrap_figures

    where = None
    if cache_dir is not None:
        where = Path(cache_dir) / "bootstrap" / f"{_replicates_key(task, pairs, bootstrap, seed)}.npy"
        try:
            stored = np.load(where, allow_pickle=False)
            if stored.dtype == np.float64 and stored.shape == (bootstrap,):
                return stored
        except (OSError, ValueError):
            pass  # not there yet, or damaged: compute it
    replicates = bootstrap_figures([PairSet(task, pairs.cosine, pairs.gold, pairs.subset)], bootstrap, seed)[
        task
    ]
    if where is not None:
        buffer = io.BytesIO()
        np.save(buffer, replicates, allow_pickle=False)
        try:
            atomic_write_bytes(where, buffer.getvalue())
        except OSError:
            pass  # a cache that cannot be written (read-only, full disk) costs time, not the result
    return replicates


def sts_interval(
    task: str,
    pairs: PairScores,
    bootstrap: int,
    seed: int,
    level: float = LEVEL,
    cache_dir: Path | None = None,
) -> tuple[dict[str, Any], np.ndarray]:
    """A task's interval and its ``(bootstrap,)`` replicates (raw scale), for the Avg. (``bootstrap`` >= 1).

    The resamples are seeded by ``(seed, task)``: a task's interval is the same alone or beside other tasks.
    ``cache_dir``: an embedding cache's root, whose ``bootstrap/`` keeps the replicates of pairs scored before.
    """
    from stsbench.stats.bootstrap import percentile_interval

    replicates = _cached_replicates(task, pairs, bootstrap, seed, cache_dir)
    method = BOOTSTRAP + (STRATIFIED if len(pairs.subsets) > 1 else "")
    low, high = percentile_interval(replicates, level)
    return {
        "method": method,
        "B": bootstrap,
        "level": level,
        "seed": seed,
        **_bounds(low, high, 100.0),
    }, replicates


def average_interval(
    replicates: Sequence[np.ndarray], intervals: Sequence[dict[str, Any]], level: float = LEVEL
) -> dict[str, Any]:
    """The Avg.'s interval: replicate ``b`` of the Avg. is the mean of every task's replicate ``b``.

    ``intervals``: the tasks' own (their B and seed are the Avg.'s).
    """
    from stsbench.stats.bootstrap import percentile_interval

    low, high = percentile_interval(np.mean(np.stack(replicates), axis=0), level)
    stratified = STRATIFIED if any(STRATIFIED in iv["method"] for iv in intervals) else ""
    first = intervals[0]
    common = {"B": first["B"], "level": level, "seed": first["seed"]}
    return {"method": BOOTSTRAP + JOINT + stratified, **common, **_bounds(low, high, 100.0)}


def transfer_interval(metric: str, details: Mapping[str, Any], level: float = LEVEL) -> dict[str, Any] | None:
    """The interval of a transfer task's ``reported`` accuracy (``metric`` ``test_acc`` or ``dev_acc``).

    None for a protocol it does not know (a result written by another tool).
    """
    from stsbench.stats.accuracy import binomial_interval, fold_interval

    split = "dev" if metric == "dev_acc" else "test"
    protocol = details.get("protocol")
    if protocol == "inner_kfold":
        values = [f[metric] for f in details["folds"]]
    elif protocol == "kfold" and split == "dev":
        values = list(details["fold_dev_acc"])
    elif protocol in ("kfold", "split"):
        n = int(details[f"n_{split}"])
        low, high = binomial_interval(float(details[metric]), n, level)
        return {"method": WILSON, "level": level, "n": n, **_bounds(low, high)}
    else:
        return None
    low, high = fold_interval(values, level)
    return {"method": FOLDS, "level": level, "k": len(values), **_bounds(low, high)}
