"""Geometry of the embedding space: alignment/uniformity, singular-value spectra and the cosine density.

Alignment and uniformity as Wang & Isola (2020) define them and SimCSE (Fig. 2, 3) and MoCoSE (Fig. 4)
use them on STS-B: alignment over the pairs with gold > 4, uniformity over all pairs of distinct
sentences, here the unique sentences (both columns) of the chosen split. Spectra as SimCSE's appendix
and MoCoSE Fig. 7: singular values of the matrix of the unique STS-B sentence embeddings, divided by
the largest, raw and after centring. The alignment/uniformity computation itself is
:mod:`stsbench.tasks.align_uniform`, shared with the trainer's dev evaluations (their logged trajectories).

The density of predicted cosines by gold-score group, SimCSE Figure 4: SimCSE (Gao et al. 2021, Figure 4)
draws, for STS-B sentence pairs divided into five groups by their gold rating (0-1, 1-2, 2-3, 3-4, 4-5), the
density of the model's cosine similarity in each group: a good encoder keeps the groups apart (higher ratings,
higher cosines) while spreading the low-rated pairs. Here the groups are the half-open intervals [0, 1), [1,
2), [2, 3), [3, 4) and [4, 5] of the gold score; each group's cosines are summarised (pairs, mean, std,
quartiles) and their density is estimated by a Gaussian kernel (scipy's ``gaussian_kde``, Scott's bandwidth)
on a fixed grid of :data:`GRID` points over [-1, 1], stored in the result so that the figure redraws from the
results file alone. The split is an option: ``all`` (train, dev and test together, the whole of STS-B) by
default, as the paper's "STS-B pairs"; ``train``, ``dev`` or ``test`` alone.

The three analyses are here whole: the compute, the report's tables, the figures, the figures one by one, and
:class:`AlignUniform`, :class:`SpectrumAnalysis` and :class:`CosineDensity`, their options and registry
entries.
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
from stsbench.analyses.registry import SPLIT_HELP, STSB, Number, Split, StsbSplit, short_name
from stsbench.data.sts import Pairs, load_pairs
from stsbench.encoders.base import EmbeddingTable, Encoder, embed_table, unique_texts
from stsbench.errors import StsbenchError
from stsbench.options import option
from stsbench.tabular import DASH, Table, fmt, make_table
from stsbench.tasks.align_uniform import SENTENCE_SET, AlignUniformResult, align_uniform_from_table

# singular values below this share of the largest are float32 round-off, not directions the model uses
RANK_TOL = 1e-6


def align_uniform(
    encoder: Encoder,
    data_dir: Path,
    split: str = "dev",
    task: str = "STSBenchmark",
    positive_threshold: float = 4.0,
    batch_size: int = 128,
    show_progress: bool = True,
) -> AlignUniformResult:
    """Alignment and uniformity of ``encoder`` on STS-B ``split`` (through the cache)."""
    pairs = load_pairs(data_dir, task, split)
    table = embed_table(encoder, [*pairs.sent1, *pairs.sent2], batch_size, show_progress)
    return align_uniform_from_table(pairs, table, split, positive_threshold)


@dataclass
class Spectrum:
    """One singular-value curve and the numbers that summarise its anisotropy."""

    centered: bool
    label: str  # ``uncentred`` or ``centred`` (mean embedding removed)
    largest: float  # the largest singular value, that the curve is divided by
    normalized: list[float]  # s_k / s_1, descending
    effective_rank: float  # Roy & Vetterli: exp(entropy of s / sum s)
    top_share: float  # s_1^2 / sum s^2 (for the centred matrix: variance in the top principal component)
    numerical_rank: int  # singular values above RANK_TOL x the largest


@dataclass
class SpectrumResult:
    """Both spectra of one model plus average cosines between sentences."""

    task: str
    split: str
    n_sentences: int
    dim: int
    uncentred: Spectrum
    centred: Spectrum
    # mean cosine of ``n_random_pairs`` seeded random pairs of distinct sentences
    avg_cosine_random_pairs: float
    n_random_pairs: int
    seed: int
    avg_cosine_all_pairs: float  # the same mean over every pair of distinct sentences, exactly
    sentence_set: str = SENTENCE_SET

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for JSON."""
        return asdict(self)


def _spectrum(x: np.ndarray, centered: bool) -> Spectrum:
    sv = metrics.singular_values(x, center=centered)
    top = float(sv[0])
    norm = (sv / top).tolist() if top > 0 else [0.0] * len(sv)
    rank = int(np.sum(sv > RANK_TOL * top)) if top > 0 else 0
    label = "centred" if centered else "uncentred"
    return Spectrum(centered, label, top, norm, metrics.effective_rank(sv), metrics.top_share(sv), rank)


def spectrum_from_vectors(
    x: np.ndarray, task: str, split: str, n_random_pairs: int = 10000, seed: int = 1111
) -> SpectrumResult:
    """Spectra and anisotropy numbers of the embedding matrix ``x`` (one row per distinct sentence)."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        raise StsbenchError(f"{task} {split} has fewer than 2 distinct sentences; a spectrum needs more")
    i, j = metrics.random_distinct_pairs(len(x), n_random_pairs, seed)
    rand = float(np.mean(metrics.cosine_pairs(x[i], x[j])))
    all_pairs = metrics.mean_cosine_all_pairs(x)
    spectra = _spectrum(x, False), _spectrum(x, True)
    return SpectrumResult(
        task, split, len(x), int(x.shape[1]), *spectra, rand, n_random_pairs, seed, all_pairs
    )


def spectrum(
    encoder: Encoder,
    data_dir: Path,
    split: str = "test",
    task: str = "STSBenchmark",
    n_random_pairs: int = 10000,
    seed: int = 1111,
    batch_size: int = 128,
    show_progress: bool = True,
) -> SpectrumResult:
    """Spectra of ``encoder``'s embeddings of the unique sentences of STS-B ``split`` (through the cache)."""
    if n_random_pairs < 1:
        raise StsbenchError(f"--random-pairs must be at least 1 (got {n_random_pairs})")
    pairs = load_pairs(data_dir, task, split)
    sents: Sequence[str] = unique_texts([pairs.sent1, pairs.sent2])
    table = embed_table(encoder, sents, batch_size, show_progress)
    return spectrum_from_vectors(table[sents], pairs.name, split, n_random_pairs, seed)


def _task_split(result: Any) -> str:
    """``STS-B dev``: the task and split of a result, as its tables and figures name them."""
    return f"{short_name(result.task)} {result.split}"


def align_uniform_table(variant: str, results: dict[str, Any]) -> Table:
    """l_align and l_uniform per model (lower is better for both)."""
    first = next(iter(results.values()))
    columns = ["model", "l_align", "l_uniform", "positive pairs", "sentences"]
    rows = [
        [label, fmt(r.alignment, 4), fmt(r.uniformity, 4), str(r.n_positive_pairs), str(r.n_sentences)]
        for label, r in results.items()
    ]
    notes = [
        f"{_task_split(first)}: alignment over the pairs with gold > {first.positive_threshold:g}, "
        "uniformity over every pair of distinct sentences (Wang & Isola 2020; SimCSE Fig. 2)."
    ]
    return make_table(variant, f"Alignment and uniformity ({_task_split(first)})", columns, rows, notes)


def spectrum_table(variant: str, results: dict[str, Any]) -> Table:
    """Effective rank, top-component share and mean cosines per model (MoCoSE Fig. 7's numbers)."""
    first = next(iter(results.values()))
    head = [n.column for n in spectrum_numbers(first)]  # erank, top share (raw, centred), mean cosines
    columns = ["model", "dim", *head[:4], "rank", *head[4:]]
    rows = []
    for label, r in results.items():
        cells = [fmt(n.value, n.decimals) for n in spectrum_numbers(r)]
        rows.append([label, str(r.dim), *cells[:4], str(r.uncentred.numerical_rank), *cells[4:]])
    notes = [
        f"Singular values of the {first.n_sentences} unique {_task_split(first)} sentence "
        "embeddings; erank: exp(entropy of s / sum s) (Roy & Vetterli); top share: s1^2 / sum s^2; "
        f"random pairs: {first.n_random_pairs}, seed {first.seed}. A flatter spectrum (higher erank, lower "
        "share) is a more isotropic space."
    ]
    return make_table(variant, f"Singular-value spectra ({_task_split(first)})", columns, rows, notes)


def align_uniform_numbers(result: Any) -> list[Number]:
    """l_align and l_uniform."""
    row = _task_split(result)
    return [
        Number(row, "l_align", result.alignment, 4, headline=True),
        Number(row, "l_uniform", result.uniformity, 4, headline=True),
    ]


def spectrum_numbers(result: Any) -> list[Number]:
    """Effective rank and top-component share (raw, centred), mean cosines."""
    row = _task_split(result)
    return [
        Number(row, "erank raw", result.uncentred.effective_rank),
        Number(row, "erank centred", result.centred.effective_rank, headline=True),
        Number(row, "top share raw", result.uncentred.top_share, 4),
        Number(row, "top share centred", result.centred.top_share, 4, headline=True),
        Number(row, "mean cos (random pairs)", result.avg_cosine_random_pairs, 4),
        Number(row, "mean cos (all pairs)", result.avg_cosine_all_pairs, 4),
    ]


def align_uniform_figure(results: dict[str, AlignUniformResult], stem: Path) -> list[Path]:
    """Place models on the l_align-l_uniform plane (SimCSE Fig. 2/3); lower-left is better."""
    plt = afig.pyplot()
    fig, ax = plt.subplots(figsize=(4.5, 3.6 + 0.15 * len(results)))
    markers = "osD^vP*Xhp<>"
    for k, (label, r) in enumerate(results.items()):
        # a legend, not labels beside the points: models close on the plane would print over each other
        ax.scatter([r.uniformity], [r.alignment], s=30, marker=markers[k % len(markers)], label=label)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
    first = next(iter(results.values()))
    ax.set(xlabel=r"$\ell_{uniform}$", ylabel=r"$\ell_{align}$")
    ax.set_title(
        f"{_task_split(first)}: {first.n_positive_pairs} positive pairs (gold > "
        f"{first.positive_threshold:g}), {first.n_sentences} sentences",
        fontsize=8,
    )
    ax.margins(0.25)
    return afig.laid_out(fig, stem)


def spectrum_figure(results: dict[str, SpectrumResult], stem: Path) -> list[Path]:
    """Singular values / largest on a log scale, uncentred and centred (MoCoSE Fig. 7)."""
    plt = afig.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.4), sharey=True)
    for ax, which in zip(axes, ("uncentred", "centred"), strict=True):
        for label, r in results.items():
            s = getattr(r, which)
            k = s.numerical_rank  # values past it are round-off (below RANK_TOL): not drawn
            name = f"{label} (erank {s.effective_rank:.0f}, rank {k}/{len(s.normalized)})"
            ax.plot(np.arange(1, k + 1), s.normalized[:k], label=name)
        ax.set_yscale("log")
        ax.set_xlabel(f"index (below {RANK_TOL:g} x largest: round-off, not drawn)", fontsize=8)
        ax.set_title(f"{which} embeddings", fontsize=9)
        ax.legend(fontsize=6)
    first = next(iter(results.values()))
    axes[0].set_ylabel("singular value / largest")
    fig.suptitle(f"{_task_split(first)}: {first.n_sentences} unique sentences", fontsize=9)
    return afig.laid_out(fig, stem)


@pydantic.dataclasses.dataclass(frozen=True)
class AlignUniformConfig:
    """Options of ``stsbench align-uniform``."""

    split: Split = option("dev", SPLIT_HELP)
    positive_threshold: float = option(4.0, "Positive: gold > this.")


class AlignUniform(StsbSplit):
    """Wang & Isola's alignment and uniformity on STS-B."""

    name = "align_uniform"
    command = "align-uniform"
    title = "Alignment and uniformity"
    describe = "alignment/uniformity results"
    help = "Measure alignment and uniformity on STS-B (Wang & Isola 2020; SimCSE Fig. 2/3)."
    config_type = AlignUniformConfig
    result_type = AlignUniformResult

    def compute(self, encoder: Any, config: Any, *, data_dir: Path | None, prepared: Any, batch_size: int):
        """:func:`stsbench.analyses.geometry.align_uniform`."""
        return align_uniform(encoder, data_dir, config.split, STSB, config.positive_threshold, batch_size)

    table_builders = (align_uniform_table,)
    draw = staticmethod(align_uniform_figure)
    number_builder = staticmethod(align_uniform_numbers)


@pydantic.dataclasses.dataclass(frozen=True)
class SpectrumConfig:
    """Options of ``stsbench spectrum``."""

    split: Split = option("test", SPLIT_HELP)
    random_pairs: int = option(10000, "Random pairs for the mean cosine.", ge=1)
    seed: int = option(1111, "Random seed.")


class SpectrumAnalysis(StsbSplit):
    """Singular-value spectra of STS-B embeddings (MoCoSE Fig. 7)."""

    name = "spectrum"
    command = "spectrum"
    title = "Singular-value spectra"
    help = "Plot singular-value spectra of STS-B embeddings, raw and centred (MoCoSE Fig. 7)."
    config_type = SpectrumConfig
    result_type = SpectrumResult

    def compute(self, encoder: Any, config: Any, *, data_dir: Path | None, prepared: Any, batch_size: int):
        """:func:`stsbench.analyses.geometry.spectrum`."""
        return spectrum(encoder, data_dir, config.split, STSB, config.random_pairs, config.seed, batch_size)

    table_builders = (spectrum_table,)
    draw = staticmethod(spectrum_figure)
    number_builder = staticmethod(spectrum_numbers)


# -- cosine density by gold score (SimCSE Figure 4) ----------------------------------------------------------


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
        mask = (gold >= lo) & ((gold <= hi) if k == len(GROUP_EDGES) - 2 else (gold < hi))  # the last: [4, 5]
        groups.append(_group(f"{lo:g}-{hi:g}", lo, hi, cosines[mask], grid))
    bandwidth = "scott (scipy gaussian_kde)"
    return CosineDensityResult(pairs.name, split, len(pairs.gold), grid.tolist(), bandwidth, groups)


def load_split(data_dir: Path, task: str, split: str) -> Pairs:
    """``split`` of ``task``, or every split of it joined (``all``)."""
    if split != "all":
        return load_pairs(data_dir, task, split)
    parts = [load_pairs(data_dir, task, s) for s in SPLITS]
    sent1, sent2, subset = ([s for p in parts for s in getattr(p, f)] for f in ("sent1", "sent2", "subset"))
    gold = np.concatenate([np.asarray(p.gold, dtype=np.float64) for p in parts])
    return Pairs(task, sent1, sent2, gold, subset, parts[0].scale)


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
    return make_table(variant, f"Cosine by gold score ({_task_split(first)})", columns, rows, notes)


def density_numbers(result: Any) -> list[Number]:
    """Each gold group's mean cosine, and the spread between the highest- and lowest-rated groups' means."""
    row = f"mean cosine, {_task_split(result)}"
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
        ax.set(xlabel="cosine similarity", xlim=(-1.0, 1.0))
    axes.flat[0].set_ylabel("gold score group")
    fig.suptitle(f"{_task_split(first)} ({first.n_pairs} pairs): cosine density by gold score", fontsize=9)
    return afig.laid_out(fig, stem)


@pydantic.dataclasses.dataclass(frozen=True)
class CosineDensityConfig:
    """Options of ``stsbench cosine-density``."""

    split: DensitySplit = option("all", "STS-B split; all: train, dev and test together.")


class CosineDensity(StsbSplit):
    """The density of predicted cosines by gold-score group on STS-B (SimCSE Figure 4)."""

    name = "cosine_density"
    command = "cosine-density"
    title = "Cosine density by gold score"
    help = "Density of cosine similarities by gold-score group on STS-B (SimCSE Fig. 4)."
    config_type = CosineDensityConfig
    result_type = CosineDensityResult

    def pair_splits(self, config: CosineDensityConfig) -> tuple[tuple[str, str], ...]:
        """The STS-B split, or each split (``all``)."""
        return tuple((STSB, s) for s in (SPLITS if config.split == "all" else (config.split,)))

    def compute(self, encoder: Any, config: Any, *, data_dir: Path | None, prepared: Any, batch_size: int):
        """:func:`stsbench.analyses.geometry.cosine_density`."""
        return cosine_density(encoder, data_dir, config.split, STSB, batch_size)

    table_builders = (density_table,)
    draw = staticmethod(density_figure)
    number_builder = staticmethod(density_numbers)
