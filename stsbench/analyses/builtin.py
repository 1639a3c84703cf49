"""The five built-in analyses as registry entries (see :mod:`stsbench.analyses.registry`).

Each class names its command, options (a frozen dataclass: the CLI's flags come from its fields), the data
files it reads (they go into provenance), its compute function, result type, the report's tables and its
figure. The numbers come from :mod:`~stsbench.analyses.length_bias`, :mod:`~stsbench.analyses.geometry`
:mod:`~stsbench.analyses.repetition` and :mod:`~stsbench.analyses.density`; those modules (numpy, scipy, pandas) are imported when an
analysis runs, named as ``"module:attribute"`` here, so building the CLI stays fast.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal, Optional

from pydantic.dataclasses import dataclass

from stsbench.analyses import DEFAULT_BUCKETS
from stsbench.analyses.registry import Analysis, Encodes, register_analysis
from stsbench.errors import StsbenchError
from stsbench.options import option

LB, GEO, REP = "stsbench.analyses.length_bias", "stsbench.analyses.geometry", "stsbench.analyses.repetition"
DENSITY = "stsbench.analyses.density"
TABLES, FIGURES = "stsbench.analyses.tables", "stsbench.analyses.figures"
NUMBERS = "stsbench.analyses.numbers"
log = logging.getLogger("stsbench")
STSB = "STSBenchmark"
Split = Literal["train", "dev", "test"]
SPLIT_HELP = "STS-B split."


@dataclass(frozen=True)
class LengthBiasConfig:
    """Options of ``stsbench length-bias``."""

    unit: Literal["words", "tokens"] = option(
        "words", "Length in words of the tokenized text, or model tokens."
    )
    threshold: int = option(3, "Groups: difference <= T and > T.", ge=0)
    buckets: str = option(DEFAULT_BUCKETS, "Finer buckets of the length difference.")


@register_analysis
class LengthBias(Analysis):
    """ESimCSE's length bias: STS scores by the length difference of a pair."""

    name = "length_bias"
    command = "length-bias"
    title = "Length bias"
    describe = "length-bias results"
    make = "stsbench length-bias --model MODEL [--model MODEL2 ...] --output RESULTS/analyses"
    help = "Score pairs by length difference on STS12-16, STS-B, SICK-R test (ESimCSE Tables 1, 7)."
    config_type = LengthBiasConfig
    result_type = f"{LB}:LengthBiasResult"

    def prepare(self, config: LengthBiasConfig) -> None:
        """Option errors before any model loads."""
        from stsbench.analyses.length_bias import parse_buckets, threshold_buckets

        parse_buckets(config.buckets)
        threshold_buckets(config.threshold)

    def data_files(
        self, config: LengthBiasConfig, data_dir: Path | None, prepared: Any
    ) -> tuple[Path, list[Path]]:
        """Every test file of the seven tasks."""
        root = Path(data_dir or ".")
        from stsbench.analyses.common import LENGTH_TASKS, pair_files

        return root, [f for t in LENGTH_TASKS for f in pair_files(root, t, "test")]

    def encodes(self, config: LengthBiasConfig) -> Encodes:
        """The seven test sets."""
        from stsbench.analyses.common import LENGTH_TASKS

        return Encodes(splits=tuple((t, "test") for t in LENGTH_TASKS))

    def variant(self, config: LengthBiasConfig) -> str:
        """``words`` or ``tokens``."""
        return config.unit

    def record(self, config: LengthBiasConfig) -> dict[str, Any]:
        """The tasks and split beside the options."""
        from stsbench.analyses.common import LENGTH_TASKS

        return {"tasks": LENGTH_TASKS, "split": "test", **super().record(config)}

    def compute(
        self, encoder: Any, config: LengthBiasConfig, *, data_dir: Path | None, prepared: Any, batch_size: int
    ) -> Any:
        """:func:`stsbench.analyses.length_bias.length_bias` on the seven test sets."""
        from stsbench.analyses.common import LENGTH_TASKS
        from stsbench.analyses.length_bias import length_bias

        return length_bias(
            encoder, data_dir, LENGTH_TASKS, config.unit, config.threshold, config.buckets, batch_size
        )

    table_builders = (
        f"{TABLES}:length_bias_table1",
        f"{TABLES}:length_bias_table7",
    )  # ESimCSE arXiv Table 1, COLING Table 7
    draw = f"{FIGURES}:length_bias_figure"
    number_builder = f"{NUMBERS}:length_bias_numbers"
    published_builder = f"{NUMBERS}:length_bias_published"

    def terminal_tables(self, variant: str, results: dict[str, Any]) -> list[Any]:
        """The report's two tables, then each model's finer buckets."""
        from stsbench.analyses import tables as T

        buckets = [T.length_bias_buckets_table(variant, label, r) for label, r in results.items()]
        return [*self.tables(variant, results), *buckets]

    def terminal_notes(self, results: dict[str, Any]) -> list[str]:
        """Why a group has no number (``n/a STS-B >3: no pairs``)."""
        from stsbench.analyses.common import short_name

        return [
            f"n/a {label}: {short_name(d.task)} {g.label}: {g.reason}"
            for label, r in results.items()
            for d in r.datasets
            for g in [*d.threshold_groups, *d.buckets]
            if g.reason
        ]


@dataclass(frozen=True)
class RepetitionConfig:
    """Options of ``stsbench repetition-probe``."""

    corpus: Optional[Path] = option(None, "Sentences, one a line (e.g. wiki1m_for_simcse.txt).")  # noqa: UP045 - typer
    n: int = option(100, "Number of queries (triples).", ge=1)
    seed: int = option(1111, "Random seed.")
    min_overlap: float = option(0.13, "Lowest overlap of a candidate.", ge=0, le=1)
    max_overlap: float = option(0.17, "Highest overlap of a candidate.", ge=0, le=1)
    overlap: Literal["candidate", "jaccard"] = option(
        "candidate", "candidate: share of s1's words found in q; jaccard: word sets."
    )
    triples: Optional[Path] = option(None, "Reuse the triples a previous run saved (.triples.jsonl).")  # noqa: UP045


@register_analysis
class RepetitionProbe(Analysis):
    """ESimCSE COLING 5.5: whether repeating shared words raises similarity."""

    name = "repetition_probe"
    command = "repetition-probe"
    title = "Repetition probe"
    describe = "repetition-probe results"
    make = "stsbench repetition-probe --model MODEL --corpus wiki1m_for_simcse.txt --output RESULTS/analyses"
    help = "Probe whether repeating shared words raises similarity (ESimCSE COLING 5.5, Table 8)."
    config_type = RepetitionConfig
    result_type = f"{REP}:RepetitionResult"
    uses_data_dir = False

    def prepare(self, config: RepetitionConfig) -> Any:
        """Draw one sample before any model loads, so every model is probed on the same triples."""
        from stsbench.analyses.repetition import draw_sample, sample_from_file

        if config.triples is not None:
            return sample_from_file(config.triples)
        if config.corpus is None:
            raise StsbenchError(
                "give --corpus FILE (sentences, one a line) or --triples FILE (a saved sample)"
            )
        sample = draw_sample(
            config.corpus, config.n, config.seed, config.min_overlap, config.max_overlap, config.overlap
        )
        if len(sample.triples) < config.n:
            log.warning(
                "warning: only %d of %d queries found a candidate with %.0f%%-%.0f%% overlap; the probe uses those",
                len(sample.triples),
                config.n,
                100 * config.min_overlap,
                100 * config.max_overlap,
            )
        return sample

    def data_files(
        self, config: RepetitionConfig, data_dir: Path | None, prepared: Any
    ) -> tuple[Path, list[Path]]:
        """The corpus, or the triples file reused."""
        source = Path(config.triples if config.triples is not None else config.corpus)  # type: ignore[arg-type]
        return source.parent, [source]

    def encodes(self, config: RepetitionConfig) -> Encodes:
        """Each triple's query and its two candidates: at most ``3 n`` sentences."""
        return Encodes(sentences=3 * config.n)

    def record(self, config: RepetitionConfig) -> dict[str, Any]:
        """``triples`` is stored as ``triples_from``."""
        rec = super().record(config)
        rec["triples_from"] = rec.pop("triples")
        return rec

    def compute(
        self, encoder: Any, config: RepetitionConfig, *, data_dir: Path | None, prepared: Any, batch_size: int
    ) -> Any:
        """:func:`stsbench.analyses.repetition.repetition_probe` on the prepared sample."""
        from stsbench.analyses.repetition import repetition_probe

        return repetition_probe(encoder, prepared, batch_size)

    def extra_files(self, result: Any, path: Path) -> list[Path]:
        """The scored triples, ``<stem>.triples.jsonl`` (``--triples`` reads them back)."""
        from stsbench.analyses.repetition import write_triples
        from stsbench.results.write import companion_path

        return [write_triples(companion_path(path, ".triples.jsonl"), result.triples)]

    table_builders = (f"{TABLES}:repetition_table",)
    draw = f"{FIGURES}:repetition_figure"
    number_builder = f"{NUMBERS}:repetition_numbers"
    published_builder = f"{NUMBERS}:repetition_published"


class _StsbSplit(Analysis):
    """An analysis of an STS-B split: its files in provenance, the split in the file stem."""

    def splits(self, config: Any) -> tuple[str, ...]:
        """The STS-B splits it reads: the one of ``--split``."""
        return (config.split,)

    def data_files(self, config: Any, data_dir: Path | None, prepared: Any) -> tuple[Path, list[Path]]:
        """The STS-B file of each split."""
        from stsbench.analyses.common import pair_files

        root = Path(data_dir or ".")
        return root, [f for s in self.splits(config) for f in pair_files(root, STSB, s)]

    def encodes(self, config: Any) -> Encodes:
        """Each STS-B split."""
        return Encodes(splits=tuple((STSB, s) for s in self.splits(config)))

    def variant(self, config: Any) -> str:
        """The split."""
        return config.split

    def record(self, config: Any) -> dict[str, Any]:
        """The task beside the options."""
        return {"task": STSB, **super().record(config)}


@dataclass(frozen=True)
class AlignUniformConfig:
    """Options of ``stsbench align-uniform``."""

    split: Split = option("dev", SPLIT_HELP)
    positive_threshold: float = option(4.0, "Positive: gold > this.")


@register_analysis
class AlignUniform(_StsbSplit):
    """Wang & Isola's alignment and uniformity on STS-B."""

    name = "align_uniform"
    command = "align-uniform"
    title = "Alignment and uniformity"
    describe = "alignment/uniformity results"
    make = "stsbench align-uniform --model MODEL --output RESULTS/analyses"
    help = "Measure alignment and uniformity on STS-B (Wang & Isola 2020; SimCSE Fig. 2/3)."
    config_type = AlignUniformConfig
    result_type = f"{GEO}:AlignUniformResult"

    def compute(
        self,
        encoder: Any,
        config: AlignUniformConfig,
        *,
        data_dir: Path | None,
        prepared: Any,
        batch_size: int,
    ) -> Any:
        """:func:`stsbench.analyses.geometry.align_uniform`."""
        from stsbench.analyses.geometry import align_uniform

        return align_uniform(encoder, data_dir, config.split, STSB, config.positive_threshold, batch_size)

    table_builders = (f"{TABLES}:align_uniform_table",)
    draw = f"{FIGURES}:align_uniform_figure"
    number_builder = f"{NUMBERS}:align_uniform_numbers"


@dataclass(frozen=True)
class SpectrumConfig:
    """Options of ``stsbench spectrum``."""

    split: Split = option("test", SPLIT_HELP)
    random_pairs: int = option(10000, "Random pairs for the mean cosine.", ge=1)
    seed: int = option(1111, "Random seed.")


@register_analysis
class Spectrum(_StsbSplit):
    """Singular-value spectra of STS-B embeddings (MoCoSE Fig. 7)."""

    name = "spectrum"
    command = "spectrum"
    title = "Singular-value spectra"
    describe = "spectrum results"
    make = "stsbench spectrum --model MODEL --output RESULTS/analyses"
    help = "Plot singular-value spectra of STS-B embeddings, raw and centred (MoCoSE Fig. 7)."
    config_type = SpectrumConfig
    result_type = f"{GEO}:SpectrumResult"

    def compute(
        self, encoder: Any, config: SpectrumConfig, *, data_dir: Path | None, prepared: Any, batch_size: int
    ) -> Any:
        """:func:`stsbench.analyses.geometry.spectrum`."""
        from stsbench.analyses.geometry import spectrum

        return spectrum(encoder, data_dir, config.split, STSB, config.random_pairs, config.seed, batch_size)

    table_builders = (f"{TABLES}:spectrum_table",)
    draw = f"{FIGURES}:spectrum_figure"
    number_builder = f"{NUMBERS}:spectrum_numbers"


@dataclass(frozen=True)
class CosineDensityConfig:
    """Options of ``stsbench cosine-density``."""

    split: Literal["all", "train", "dev", "test"] = option(
        "all", "STS-B split; all: train, dev and test together."
    )


@register_analysis
class CosineDensity(_StsbSplit):
    """The density of predicted cosines by gold-score group on STS-B (SimCSE Figure 4)."""

    name = "cosine_density"
    command = "cosine-density"
    title = "Cosine density by gold score"
    describe = "cosine-density results"
    make = "stsbench cosine-density --model MODEL --output RESULTS/analyses"
    help = "Density of cosine similarities by gold-score group on STS-B (SimCSE Fig. 4)."
    config_type = CosineDensityConfig
    result_type = f"{DENSITY}:CosineDensityResult"

    def splits(self, config: CosineDensityConfig) -> tuple[str, ...]:
        """The split, or each split (``all``)."""
        from stsbench.analyses.density import SPLITS

        return SPLITS if config.split == "all" else (config.split,)

    def compute(
        self,
        encoder: Any,
        config: CosineDensityConfig,
        *,
        data_dir: Path | None,
        prepared: Any,
        batch_size: int,
    ) -> Any:
        """:func:`stsbench.analyses.density.cosine_density`."""
        from stsbench.analyses.density import cosine_density

        return cosine_density(encoder, data_dir, config.split, STSB, batch_size)

    table_builders = (f"{TABLES}:density_table",)
    draw = f"{FIGURES}:density_figure"
    number_builder = f"{NUMBERS}:density_numbers"
