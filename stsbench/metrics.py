"""Pure numpy/scipy metrics: correlations and similarities (analyses add theirs below)."""

from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr, spearmanr


def cosine_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of ``a[i]`` and ``b[i]``; NaN (a zero vector) becomes 0 as in SentEval.

    Computed in float64 so the ranking does not depend on float32 rounding.
    """
    a = np.nan_to_num(np.asarray(a, dtype=np.float64))
    b = np.nan_to_num(np.asarray(b, dtype=np.float64))
    num = np.einsum("ij,ij->i", a, b)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sims = num / den
    return np.nan_to_num(sims, nan=0.0, posinf=0.0, neginf=0.0)


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho (scipy's, average ranks for ties)."""
    return float(spearmanr(x, y)[0])


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r."""
    return float(pearsonr(x, y)[0])


def as_reported(value: float) -> float:
    """A correlation or accuracy in [0, 1] as the papers print it: x100, rounded to 2 decimals."""
    return round(float(value) * 100.0, 2)
