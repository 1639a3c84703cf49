"""Pure numpy/scipy metrics: correlations and similarities (analyses add theirs below).

Spearman and Pearson are computed here with numpy, as ``scipy.stats`` computes them (the same operations, so the
same bits): importing ``scipy.stats`` costs about a third of torch's import, and a warm ``stsbench run`` needs
nothing else from it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# The name of SimCSE's Avg. wherever stsbench writes it: a table's column, a seed aggregate's or a comparison's key
# (the figure itself: simcse_average below).
AVG = "Avg."


def _finite(x: np.ndarray) -> np.ndarray:
    # np.nan_to_num, which costs more than the whole cosine: only when something is not finite
    return x if np.isfinite(x).all() else np.nan_to_num(x)


def cosine_pairs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of ``a[i]`` and ``b[i]``; NaN (a zero vector) becomes 0 as in SentEval.

    Computed in float64 so the ranking does not depend on float32 rounding.
    """
    a, b = _finite(np.asarray(a, dtype=np.float64)), _finite(np.asarray(b, dtype=np.float64))
    num = np.einsum("ij,ij->i", a, b)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sims = num / den
    return sims if np.isfinite(sims).all() else np.nan_to_num(sims, nan=0.0, posinf=0.0, neginf=0.0)


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x`` (1-D), ties given the mean of their ranks: ``scipy.stats.rankdata(x)``, float64."""
    x = np.asarray(x)
    order = np.argsort(x, kind="stable")
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])  # first position of each tie group
    counts = np.diff(np.r_[starts, len(x)])
    ranks = np.empty(len(x), dtype=np.float64)
    ranks[order] = np.repeat(starts + 1 + (counts - 1) / 2.0, counts)  # half-integers: exact in float64
    return ranks


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho with average ranks for ties: ``scipy.stats.spearmanr(x, y)[0]``, bit for bit.

    NaN for fewer than 2 pairs, a constant input or a NaN (scipy also warns).
    """
    x, y = np.asarray(x).ravel(), np.asarray(y).ravel()
    if len(x) != len(y):
        raise ValueError(f"spearman: {len(x)} values against {len(y)}")
    if len(x) <= 1 or np.isnan(x).any() or np.isnan(y).any() or (x == x[0]).all() or (y == y[0]).all():
        return float("nan")  # where scipy returns NaN: a NaN in an input, or a constant input
    # scipy's own steps: the ranks as two columns, then numpy's correlation matrix
    ranked = np.column_stack((average_ranks(x), average_ranks(y)))
    return float(np.corrcoef(ranked, rowvar=False)[1, 0])


def _norm(v: np.ndarray) -> np.ndarray:
    # np.linalg.norm(v, axis=-1) as scipy calls it: a plain sum of squares (without `axis` numpy takes a BLAS dot,
    # which rounds differently)
    return np.sqrt(np.add.reduce(v * v))


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r: ``scipy.stats.pearsonr(x, y)[0]`` (scipy >= 1.14's steps, bit for bit).

    The centred vectors are scaled by their largest entry before the norm (no premature overflow), each divided
    by its norm, then dotted; clipped to [-1, 1]. NaN for a constant input; fewer than 2 pairs is an error.
    """
    x, y = np.asarray(x), np.asarray(y)
    dtype = np.result_type(x, y)
    dtype = dtype if np.issubdtype(dtype, np.floating) else np.dtype(np.float64)
    x, y = x.astype(dtype, copy=False).ravel(), y.astype(dtype, copy=False).ravel()
    if len(x) != len(y):
        raise ValueError(f"pearson: {len(x)} values against {len(y)}")
    if len(x) < 2:
        raise ValueError("pearson: x and y must have length at least 2")
    if (x == x[0]).all() or (y == y[0]).all():
        return float("nan")
    xm, ym = x - x.mean(), y - y.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        xmax, ymax = np.abs(xm).max(), np.abs(ym).max()
        normx = xmax * _norm(xm / xmax)
        normy = ymax * _norm(ym / ymax)
        r = np.clip(np.dot(xm / normx, ym / normy), -1.0, 1.0)
    return float(np.round(r)) if len(x) == 2 else float(r)


def as_reported(value: float) -> float:
    """A correlation or accuracy in [0, 1] as the papers print it: x100, rounded to 2 decimals."""
    return round(float(value) * 100.0, 2)


def simcse_average(values: Sequence[float | None]) -> float | None:
    """SimCSE's Avg. column: the mean of the figures as printed (already rounded), rounded to 2 decimals.

    SimCSE ``evaluation.py`` averages its ``"%.2f"`` task strings. Every table and summary of stsbench prints
    its Avg. from here (a test over seeds reads :func:`raw_average`). None when there are no figures or one is
    missing (an Avg. over fewer tasks is another number than the paper's).
    """
    avg = raw_average(values)
    return None if avg is None else round(avg, 2)


def raw_average(values: Sequence[float | None]) -> float | None:
    """The plain mean of unrounded figures: the Avg. every test over seeds reads (docs/uncertainty.md, One rule).

    None when there are no figures or one is missing, as :func:`simcse_average`.
    """
    if not values or any(v is None for v in values):
        return None
    return sum(values) / len(values)  # type: ignore[arg-type]


# --- analyses: length bias, alignment/uniformity, spectra --------------------------------------------------


def normalise_gold(gold: np.ndarray, scale: tuple[float, float]) -> np.ndarray:
    """Gold scores mapped to [0, 1]: ``(g - lo) / (hi - lo)`` (0-5 STS: g/5; 1-5 SICK: (g-1)/4).

    ESimCSE (COLING) Tables 1 and 7 compare cosine similarity with "the normalized ground truths".
    """
    lo, hi = float(scale[0]), float(scale[1])
    if not hi > lo:
        raise ValueError(f"gold scale {scale} is empty")
    return (np.asarray(gold, dtype=np.float64) - lo) / (hi - lo)


def mean_abs_diff(sims: np.ndarray, target: np.ndarray) -> float:
    """Mean ``|sim - target|`` (ESimCSE COLING Table 7, before x100)."""
    sims = np.asarray(sims, dtype=np.float64)
    if sims.size == 0:
        raise ValueError("no pairs")
    return float(np.mean(np.abs(sims - np.asarray(target, dtype=np.float64))))


def spearman_or_reason(x: np.ndarray, y: np.ndarray, min_n: int = 3) -> tuple[float | None, str | None]:
    """Spearman's rho, or ``(None, reason)`` where it is undefined (too few pairs, constant input)."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) < min_n:
        return None, f"{len(x)} pair(s), a correlation needs at least {min_n}"
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        which = "similarities" if np.ptp(x) == 0 else "gold scores"
        return None, f"constant {which}"
    return spearman(x, y), None


def bucket_of(values: np.ndarray, bounds: list[tuple[int, int | None]]) -> np.ndarray:
    """Index of the bucket ``[lo, hi]`` (``hi`` None: open) holding each value; -1 where none does."""
    values = np.asarray(values)
    out = np.full(values.shape, -1, dtype=np.int64)
    for k, (lo, hi) in enumerate(bounds):
        inside = (values >= lo) & ((values <= hi) if hi is not None else True)
        out[inside & (out < 0)] = k
    return out


def l2_normalise(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (float64); zero rows stay zero."""
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def alignment(x: np.ndarray, y: np.ndarray, alpha: float = 2.0) -> float:
    """l_align = E ||f(x) - f(y)||^alpha over positive pairs, f L2-normalised (Wang & Isola 2020, eq. 4)."""
    if len(x) == 0:
        raise ValueError("no positive pairs")
    d = np.linalg.norm(l2_normalise(x) - l2_normalise(y), axis=1)
    return float(np.mean(d**alpha))


def uniformity(x: np.ndarray, t: float = 2.0, block: int = 1024) -> float:
    """l_uniform = log E exp(-t ||f(x) - f(y)||^2) over distinct pairs i < j (Wang & Isola 2020, eq. 5).

    The same pairs as their ``torch.pdist(x).pow(2).mul(-t).exp().mean().log()``; computed as a
    log-sum-exp over row blocks so it neither overflows nor builds the n x n matrix at once.
    """
    from scipy.special import logsumexp

    u = l2_normalise(x)
    n = len(u)
    if n < 2:
        raise ValueError("uniformity needs at least 2 points")
    parts = []
    for start in range(0, n - 1, block):
        rows = u[start : start + block]
        sq = np.maximum(2.0 - 2.0 * rows @ u.T, 0.0)  # ||a - b||^2 of unit vectors
        iu = np.arange(len(rows))[:, None] + start < np.arange(n)[None, :]  # only j > i
        parts.append(logsumexp(-t * sq[iu]))
    return float(logsumexp(parts) - np.log(n * (n - 1) / 2))


def singular_values(x: np.ndarray, center: bool = False) -> np.ndarray:
    """Singular values of the embedding matrix (rows = sentences), descending.

    ``center`` subtracts the mean row first (the spectrum of the covariance rather than of the raw matrix).
    """
    x = np.asarray(x, dtype=np.float64)
    if center:
        x = x - x.mean(axis=0, keepdims=True)
    return np.linalg.svd(x, compute_uv=False)


def effective_rank(sv: np.ndarray) -> float:
    """Effective rank: exp of the entropy of ``p = sv / sum(sv)`` (Roy & Vetterli 2007; 0 log 0 = 0)."""
    s = np.asarray(sv, dtype=np.float64)
    total = s.sum()
    if total <= 0:
        return 0.0
    p = s[s > 0] / total
    return float(np.exp(-np.sum(p * np.log(p))))


def top_share(sv: np.ndarray) -> float:
    """Share of the squared singular values (variance, if centred) in the top component: s1^2 / sum s^2."""
    s2 = np.asarray(sv, dtype=np.float64) ** 2
    return float(s2[0] / s2.sum()) if s2.sum() > 0 else 0.0


def random_distinct_pairs(n: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``m`` ordered pairs ``(i, j)``, ``i != j``, uniform over all such pairs of ``range(n)``."""
    if n < 2:
        raise ValueError("need at least 2 items for a pair")
    rng = np.random.default_rng(seed)
    i = rng.integers(0, n, size=m)
    j = (i + rng.integers(1, n, size=m)) % n
    return i, j


def mean_cosine_all_pairs(x: np.ndarray) -> float:
    """Mean cosine over all distinct pairs, exactly: (||sum u||^2 - sum ||u||^2) / (n (n - 1))."""
    u = l2_normalise(x)
    n = len(u)
    if n < 2:
        raise ValueError("need at least 2 items for a pair")
    total = u.sum(axis=0)
    return float((total @ total - np.sum(u * u)) / (n * (n - 1)))
