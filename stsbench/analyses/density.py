"""The density of predicted cosines by gold-score group: SimCSE Figure 4.

SimCSE (Gao et al. 2021, Figure 4) draws, for STS-B sentence pairs divided into five groups by their gold rating
(0-1, 1-2, 2-3, 3-4, 4-5), the density of the model's cosine similarity in each group: a good encoder keeps the
groups apart (higher ratings, higher cosines) while spreading the low-rated pairs. Here the groups are the
half-open intervals [0, 1), [1, 2), [2, 3), [3, 4) and [4, 5] of the gold score; each group's cosines are
summarised (pairs, mean, std, quartiles) and their density is estimated by a Gaussian kernel (scipy's
``gaussian_kde``, Scott's bandwidth) on a fixed grid of :data:`GRID` points over [-1, 1], stored in the result so
that the figure redraws from the results file alone. The split is an option: ``all`` (train, dev and test
together, the whole of STS-B) by default, as the paper's "STS-B pairs"; ``train``, ``dev`` or ``test`` alone.

The whole analysis is here: the compute, the report's table, the figure, the figures one by one and
:class:`CosineDensity`, its options and registry entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pydantic.dataclasses

from stsbench import metrics
from stsbench.analyses import figures as afig
from stsbench.analyses.registry import STSB, Number, StsbSplit, short_name
from stsbench.data.sts import Pairs, load_pairs
from stsbench.encoders.base import EmbeddingTable, Encoder, embed_table
from stsbench.options import option
from stsbench.tabular import DASH, Table, fmt, make_table

SPLITS = ("train", "dev", "test")
GROUP_EDGES = (0.0, 1.0, 2.0, 3.0, 4.0, 5.0)
GRID = 201  # density points over [-1, 1]
DensitySplit = Literal["all", "train", "dev", "test"]


@dataclass
class DensityGroup:
    """One gold-score group: its pairs' cosines summarised and their density on the grid."""

    label: str  # "0-1" ... "4-5"
    lo: float
    hi: float  # the last group includes it
    n_pairs: int
    mean: float | None
    std: float | None
    quartiles: list[float] | None  # 25%, 50%, 75%
    # on :attr:`CosineDensityResult.grid`; None with fewer than 2 distinct cosines
    density: list[float] | None


@dataclass
class CosineDensityResult:
    """The five groups of one model on one STS-B split (or all of them)."""

    task: str
    split: str  # train | dev | test | all
    n_pairs: int
    grid: list[float]
    bandwidth: str
    groups: list[DensityGroup]

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


def _group(label: str, lo: float, hi: float, cosines: np.ndarray, grid: np.ndarray) -> DensityGroup:
    n = len(cosines)
    if n == 0:
        return DensityGroup(label, lo, hi, 0, None, None, None, None)
    density = None
    if n > 1 and np.ptp(cosines) > 0:
        from scipy.stats import gaussian_kde

        density = [float(v) for v in gaussian_kde(cosines, bw_method="scott")(grid)]
    q = np.quantile(cosines, [0.25, 0.5, 0.75])
    std = float(cosines.std(ddof=1)) if n > 1 else None
    return DensityGroup(label, lo, hi, n, float(cosines.mean()), std, [float(v) for v in q], density)


def density_from_table(pairs: Pairs, table: EmbeddingTable, split: str) -> CosineDensityResult:
    """The five groups' cosine densities of ``pairs`` (gold on its own 0-5 scale) from embeddings in ``table``."""
    cosines = metrics.cosine_pairs(table[pairs.sent1], table[pairs.sent2])
    gold = np.asarray(pairs.gold, dtype=np.float64)
    grid = np.linspace(-1.0, 1.0, GRID)
    groups = []
    for k, (lo, hi) in enumerate(zip(GROUP_EDGES, GROUP_EDGES[1:], strict=False)):
        last = k == len(GROUP_EDGES) - 2
        mask = (gold >= lo) & ((gold <= hi) if last else (gold < hi))
        groups.append(_group(f"{lo:g}-{hi:g}", lo, hi, cosines[mask], grid))
    return CosineDensityResult(
        pairs.name, split, len(pairs.gold), [float(v) for v in grid], "scott (scipy gaussian_kde)", groups
    )


def _joined(parts: Sequence[Pairs], name: str) -> Pairs:
    def cat(field: str) -> list[str]:
        return [s for p in parts for s in getattr(p, field)]

    gold = np.concatenate([np.asarray(p.gold, dtype=np.float64) for p in parts])
    return Pairs(name, cat("sent1"), cat("sent2"), gold, cat("subset"), parts[0].scale)


def load_split(data_dir: Path, task: str, split: str) -> Pairs:
    """``split`` of ``task``, or every split of it joined (``all``)."""
    if split != "all":
        return load_pairs(data_dir, task, split)
    return _joined([load_pairs(data_dir, task, s) for s in SPLITS], task)


def cosine_density(
    encoder: Encoder,
    data_dir: Path,
    split: str = "all",
    task: str = "STSBenchmark",
    batch_size: int = 128,
    show_progress: bool = True,
) -> CosineDensityResult:
    """SimCSE Figure 4's densities for ``encoder`` on STS-B ``split`` (through the cache)."""
    pairs = load_split(data_dir, task, split)
    table = embed_table(encoder, [*pairs.sent1, *pairs.sent2], batch_size, show_progress)
    return density_from_table(pairs, table, split)


def _summary(g: DensityGroup) -> str:
    """The group's mean cosine and its first and third quartiles."""
    return (
        DASH if g.mean is None else f"{fmt(g.mean, 3)} [{fmt(g.quartiles[0], 2)}, {fmt(g.quartiles[2], 2)}]"
    )


def density_table(variant: str, results: dict[str, Any]) -> Table:
    """Per model and gold-score group: pairs, mean cosine and its quartiles (SimCSE Fig. 4's numbers)."""
    first = next(iter(results.values()))
    columns = ["model", *[f"gold {g.label}" for g in first.groups], "pairs"]
    rows = []
    for label, r in results.items():
        rows.append([label, *map(_summary, r.groups), " / ".join(str(g.n_pairs) for g in r.groups)])
    notes = [
        f"Cosine of the {first.n_pairs} {short_name(first.task)} pairs ({first.split}) by gold score: the mean, "
        "then the first and third quartiles, per group (gold 0 to 1, 1 excluded, ... 4 to 5, 5 included); pairs "
        "per group in the last column. SimCSE Figure 4 draws these groups' densities."
    ]
    title = f"Cosine by gold score ({short_name(first.task)} {first.split})"
    return make_table(variant, title, columns, rows, notes)


def density_numbers(result: Any) -> list[Number]:
    """Each gold group's mean cosine, and the spread between the highest- and lowest-rated groups' means."""
    row = f"mean cosine, {short_name(result.task)} {result.split}"
    out = [Number(row, f"gold {g.label}", g.mean, 3) for g in result.groups]
    first, last = result.groups[0].mean, result.groups[-1].mean
    gap = None if first is None or last is None else last - first
    label = f"gold {result.groups[-1].label} minus gold {result.groups[0].label}"
    return [*out, Number(row, label, gap, 3, headline=True)]


def density_figure(results: dict[str, CosineDensityResult], stem: Path) -> list[Path]:
    """SimCSE Fig. 4: per model, the density of cosine by gold-score group, the groups stacked up the y-axis."""
    plt = afig.pyplot()
    n = len(results)
    fig, axes = plt.subplots(1, n, figsize=(3.2 * n + 0.6, 3.4), sharex=True, squeeze=False)
    first = next(iter(results.values()))
    for ax, (label, r) in zip(axes.flat, results.items(), strict=True):
        top = max((max(g.density) for g in r.groups if g.density), default=1.0)
        for k, g in enumerate(r.groups):
            if g.density is None:
                continue
            curve = [k + 0.9 * v / top for v in g.density]
            ax.fill_between(r.grid, k, curve, alpha=0.6)
            ax.plot(r.grid, curve, color="black", linewidth=0.6)
        ax.set_yticks(range(len(r.groups)), [g.label for g in r.groups])
        ax.set_title(label, fontsize=8)
        ax.set_xlabel("cosine similarity")
        ax.set_xlim(-1.0, 1.0)
    axes.flat[0].set_ylabel("gold score group")
    title = f"{short_name(first.task)} {first.split} ({first.n_pairs} pairs): cosine density by gold score"
    fig.suptitle(title, fontsize=9)
    return afig.save(fig, stem, tight=True)


@pydantic.dataclasses.dataclass(frozen=True)
class CosineDensityConfig:
    """Options of ``stsbench cosine-density``."""

    split: DensitySplit = option("all", "STS-B split; all: train, dev and test together.")


class CosineDensity(StsbSplit):
    """The density of predicted cosines by gold-score group on STS-B (SimCSE Figure 4)."""

    name = "cosine_density"
    command = "cosine-density"
    title = "Cosine density by gold score"
    describe = "cosine-density results"
    make = "stsbench cosine-density --model MODEL --output RESULTS/analyses"
    help = "Density of cosine similarities by gold-score group on STS-B (SimCSE Fig. 4)."
    config_type = CosineDensityConfig
    result_type = CosineDensityResult

    def splits(self, config: CosineDensityConfig) -> tuple[str, ...]:
        """The split, or each split (``all``)."""
        return SPLITS if config.split == "all" else (config.split,)

    def compute(self, encoder: Any, config: Any, *, data_dir: Path | None, prepared: Any, batch_size: int):
        """:func:`stsbench.analyses.density.cosine_density`."""
        return cosine_density(encoder, data_dir, config.split, STSB, batch_size)

    table_builders = (density_table,)
    draw = staticmethod(density_figure)
    number_builder = staticmethod(density_numbers)
