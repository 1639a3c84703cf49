"""SentEval's three validation protocols (``tools/validation.py``) on top of the batched probes.

- :func:`inner_kfold` (MR, CR, SUBJ, MPQA): outer stratified k-fold; in each outer training set an inner
  stratified k-fold picks the L2 value, then a model with it is trained on the outer training set (5% held out for
  early stopping) and scored on the outer test fold.
- :func:`kfold` (TREC, MRPC): stratified k-fold on the training set picks the L2 value, then one model on the whole
  training set (5% held out) is scored on the test set.
- :func:`split` (SST2): each L2 value trained on train, early-stopped and picked on dev, scored on test.

Figures are rounded where SentEval rounds them: ``round(100 * mean, 2)`` per L2 value and per fold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from stsbench.tasks.transfer.classifier import (
    Job,
    ProbeConfig,
    augment,
    default_device,
    predict,
    train_probes,
)


def stratified_kfold(y: np.ndarray, k: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``sklearn.model_selection.StratifiedKFold(k, shuffle=True, random_state=seed).split`` (sklearn >= 0.22).

    Class order is order of first appearance; per class, fold sizes come from a round robin over the sorted
    labels, and the block of fold numbers is shuffled with ``RandomState(seed)``, one class after the other.
    """
    y = np.asarray(y)
    rng = np.random.RandomState(seed)
    _, first, inverse = np.unique(y, return_index=True, return_inverse=True)
    _, class_perm = np.unique(first, return_inverse=True)
    encoded = class_perm[inverse.reshape(-1)]
    n_classes = len(first)
    if np.all(k > np.bincount(encoded)):
        raise ValueError(
            f"cannot split {len(y)} rows into {k} stratified folds: every class is smaller than {k}"
        )
    ordered = np.sort(encoded)
    allocation = np.asarray([np.bincount(ordered[i::k], minlength=n_classes) for i in range(k)])
    test_folds = np.empty(len(y), dtype="i")
    for cls in range(n_classes):
        folds = np.arange(k).repeat(allocation[:, cls])
        rng.shuffle(folds)
        test_folds[encoded == cls] = folds
    rows = np.arange(len(y))
    return [(rows[test_folds != i], rows[test_folds == i]) for i in range(k)]


@dataclass
class ProtocolResult:
    """SentEval's ``devacc`` and ``acc`` (x100, rounded as SentEval rounds) and what led to them."""

    dev_acc: float
    test_acc: float
    details: dict[str, Any] = field(default_factory=dict)
    yhat: np.ndarray | None = None  # test predictions of the final model (KFold, Split)


def _l2_scores(grid: tuple[float, ...], accs: list[list[float]]) -> list[float]:
    """``round(100 * np.mean(scores), 2)`` per L2 value (``accs[r]`` = the folds' accuracies for ``grid[r]``)."""
    return [float(round(100 * np.mean(a), 2)) for a in accs]


def _holdout_job(rows: np.ndarray, l2: float, cfg: ProbeConfig) -> Job:
    """SentEval's ``validation_split``: the model's own permutation holds out the first 5% for early stopping."""
    rng = np.random.RandomState(cfg.seed)
    perm = rng.permutation(len(rows))
    n_dev = int(cfg.validation_split * len(rows))
    return Job(train=rows[perm[n_dev:]], dev=rows[perm[:n_dev]], l2=(l2,), rng=rng)


def _acc(predicted: np.ndarray, gold: np.ndarray) -> float:
    """SentEval's test accuracy: ``round(100 * (1.0 * correct / n), 2)``."""
    return round(100 * (1.0 * int((predicted == np.asarray(gold)).sum()) / len(gold)), 2)


def inner_kfold(
    x: np.ndarray, y: np.ndarray, nclasses: int, cfg: ProbeConfig, device: torch.device | None = None
) -> ProtocolResult:
    """SentEval's ``InnerKFoldClassifier`` (its folds use ``random_state=1111`` whatever the seed)."""
    device = device or default_device()
    xt, y, grid = augment(x, device), np.asarray(y), cfg.l2_grid
    outer = stratified_kfold(y, cfg.kfold, 1111)
    inner_jobs: list[Job] = []
    for tr, _ in outer:
        for itr, ite in stratified_kfold(y[tr], cfg.kfold, 1111):
            inner_jobs.append(Job(train=tr[itr], dev=tr[ite], l2=grid, rng=np.random.RandomState(cfg.seed)))
    inner = train_probes(xt, y, nclasses, inner_jobs, cfg, device)
    chosen, folds = [], []
    for o in range(len(outer)):
        fits = inner[o * cfg.kfold : (o + 1) * cfg.kfold]
        scores = _l2_scores(grid, [[f.dev_acc()[r] for f in fits] for r in range(len(grid))])
        best = int(np.argmax(scores))
        chosen.append(grid[best])
        folds.append(
            {
                "l2": grid[best],
                "dev_acc": scores[best],
                "l2_dev_acc": dict(zip(map(str, grid), scores, strict=True)),
            }
        )
    final = train_probes(
        xt,
        y,
        nclasses,
        [_holdout_job(tr, l2, cfg) for (tr, _), l2 in zip(outer, chosen, strict=True)],
        cfg,
        device,
    )
    for fold, (_, te), fit in zip(folds, outer, final, strict=True):
        fold["test_acc"] = _acc(predict(fit.weights[0], x[te], device), y[te])
        fold["epochs"] = int(fit.epochs[0])
    # np.float64's round, as SentEval applies it to np.mean (it can differ from Python's in the last digit)
    dev_acc = float(round(np.mean([f["dev_acc"] for f in folds]), 2))
    test_acc = float(round(np.mean([f["test_acc"] for f in folds]), 2))
    return ProtocolResult(dev_acc, test_acc, {"protocol": "inner_kfold", "kfold": cfg.kfold, "folds": folds})


def kfold(
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    nclasses: int,
    cfg: ProbeConfig,
    device: torch.device | None = None,
) -> ProtocolResult:
    """SentEval's ``KFoldClassifier``: L2 by stratified k-fold on train, final model scored on test."""
    device = device or default_device()
    xt, y, grid = augment(x_train, device), np.asarray(y_train), cfg.l2_grid
    splits = stratified_kfold(y, cfg.kfold, cfg.seed)
    jobs = [Job(train=tr, dev=te, l2=grid, rng=np.random.RandomState(cfg.seed)) for tr, te in splits]
    fits = train_probes(xt, y, nclasses, jobs, cfg, device)
    fold_accs = [[f.dev_acc()[r] for f in fits] for r in range(len(grid))]
    scores = _l2_scores(grid, fold_accs)
    best = int(np.argmax(scores))
    (fit,) = train_probes(xt, y, nclasses, [_holdout_job(np.arange(len(y)), grid[best], cfg)], cfg, device)
    yhat = predict(fit.weights[0], x_test, device)
    details = {
        "protocol": "kfold",
        "kfold": cfg.kfold,
        "l2": grid[best],
        "l2_dev_acc": dict(zip(map(str, grid), scores, strict=True)),
        "fold_dev_acc": [round(100 * a, 2) for a in fold_accs[best]],
        "epochs": int(fit.epochs[0]),
    }
    return ProtocolResult(scores[best], _acc(yhat, y_test), details, yhat)


def split(
    x: dict[str, np.ndarray],
    y: dict[str, np.ndarray],
    nclasses: int,
    cfg: ProbeConfig,
    device: torch.device | None = None,
) -> ProtocolResult:
    """SentEval's ``SplitClassifier`` on ``train``/``valid``/``test``.

    SentEval retrains the chosen L2 value from the same seed on the same data for the test score; that run is
    the one already trained, so its kept model is reused.
    """
    device = device or default_device()
    n_tr, n_dev = len(y["train"]), len(y["valid"])
    xt = augment(np.concatenate([x["train"], x["valid"]]), device)
    yy = np.concatenate([y["train"], y["valid"]])
    job = Job(
        train=np.arange(n_tr),
        dev=np.arange(n_tr, n_tr + n_dev),
        l2=cfg.l2_grid,
        rng=np.random.RandomState(cfg.seed),
    )
    (fit,) = train_probes(xt, yy, nclasses, [job], cfg, device)
    scores = [round(100 * a, 2) for a in fit.dev_acc()]
    best = int(np.argmax(scores))
    yhat = predict(fit.weights[best], x["test"], device)
    details = {
        "protocol": "split",
        "l2": cfg.l2_grid[best],
        "l2_dev_acc": dict(zip(map(str, cfg.l2_grid), scores, strict=True)),
        "epochs": int(fit.epochs[best]),
    }
    return ProtocolResult(scores[best], _acc(yhat, y["test"]), details, yhat)
