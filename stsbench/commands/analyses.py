"""``stsbench length-bias | align-uniform | spectrum | repetition-probe``: one or several models each.

Per model: ``<output>/<model>/<pooler>/<analysis>.json`` (and the probe's ``.triples.jsonl``); per command:
``<output>/figures/<analysis>__<models>.{png,svg}``; the numbers are printed as a table.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from stsbench.cli_options import (
    BatchSizeOpt,
    CacheDirOpt,
    DataDirOpt,
    DeviceOpt,
    MaxLengthOpt,
    ModelsOpt,
    NoCacheOpt,
    OutputOpt,
    PoolerOpt,
    SeedOpt,
)

DEFAULT_OUTPUT = Path("results/analyses")


class Split(str, Enum):
    """STS-B split."""

    train = "train"
    dev = "dev"
    test = "test"


SplitOpt = Annotated[Split, typer.Option("--split", help="STS-B split.")]


class Unit(str, Enum):
    """What a sentence's length counts."""

    words = "words"
    tokens = "tokens"


class Overlap(str, Enum):
    """How the probe measures overlap (see ``stsbench.analyses.repetition``)."""

    candidate = "candidate"
    jaccard = "jaccard"


def _go(
    analysis: str,
    variant: str | None,
    models: list[str],
    load: Any,
    compute: Callable[[Any], Any],
    config: dict[str, Any],
    files: list[Path],
    root: Path,
    output: Path,
    draw: Callable,
    show: Callable,
) -> None:
    from stsbench.analyses.runner import run_analysis
    from stsbench.encoders import EMBEDDED_DEFAULT

    command = shlex.join(["stsbench", *sys.argv[1:]])
    run = run_analysis(
        analysis,
        models or [EMBEDDED_DEFAULT],
        load,
        compute,
        config,
        files,
        root,
        output,
        draw,
        command,
        variant,
    )
    for path in run.files:
        typer.echo(f"wrote {path}", err=True)
    show(run.results)


def _load(
    pooler: str | None, max_length: int | None, device: str | None, cache_dir: Path | None, no_cache: bool
) -> Any:
    from stsbench.analyses.runner import LoadOptions

    return LoadOptions(pooler, max_length, device, cache_dir, not no_cache)


def length_bias_cmd(
    model: ModelsOpt = [],  # noqa: B006 - typer reads the default
    unit: Annotated[
        Unit, typer.Option("--unit", help="Length in words of the tokenized text, or model tokens.")
    ] = (Unit.words),
    threshold: Annotated[int, typer.Option("--threshold", help="Groups: difference <= T and > T.")] = 3,
    buckets: Annotated[str, typer.Option("--buckets", help="Finer buckets of the length difference.")] = (
        "0,1-2,3-4,5-7,8+"
    ),
    data_dir: DataDirOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
    pooler: PoolerOpt = None,
    max_length: MaxLengthOpt = None,
    device: DeviceOpt = None,
    batch_size: BatchSizeOpt = 128,
    output: OutputOpt = DEFAULT_OUTPUT,
) -> None:
    """Score pairs by length difference on STS12-16, STS-B, SICK-R test (ESimCSE Tables 1, 7)."""
    from stsbench.analyses import figures, tables
    from stsbench.analyses.common import LENGTH_TASKS, pair_files
    from stsbench.analyses.length_bias import length_bias, parse_buckets, threshold_buckets
    from stsbench.paths import resolve_data_dir

    parse_buckets(buckets)  # option errors before any model loads
    threshold_buckets(threshold)
    root = resolve_data_dir(data_dir)
    files = [f for t in LENGTH_TASKS for f in pair_files(root, t, "test")]
    config = {
        "tasks": LENGTH_TASKS,
        "split": "test",
        "unit": unit.value,
        "threshold": threshold,
        "buckets": buckets,
        "batch_size": batch_size,
        "max_length": max_length,
    }
    _go(
        "length_bias",
        unit.value,
        model,
        _load(pooler, max_length, device, cache_dir, no_cache),
        lambda enc: length_bias(enc, root, LENGTH_TASKS, unit.value, threshold, buckets, batch_size),
        config,
        files,
        root,
        output,
        figures.length_bias_figure,
        tables.print_length_bias,
    )


def align_uniform_cmd(
    model: ModelsOpt = [],  # noqa: B006
    split: SplitOpt = Split.dev,
    positive_threshold: Annotated[
        float, typer.Option("--positive-threshold", help="Positive: gold > this.")
    ] = 4.0,
    data_dir: DataDirOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
    pooler: PoolerOpt = None,
    max_length: MaxLengthOpt = None,
    device: DeviceOpt = None,
    batch_size: BatchSizeOpt = 128,
    output: OutputOpt = DEFAULT_OUTPUT,
) -> None:
    """Measure alignment and uniformity on STS-B (Wang & Isola 2020; SimCSE Fig. 2/3)."""
    from stsbench.analyses import figures, tables
    from stsbench.analyses.common import pair_files
    from stsbench.analyses.geometry import align_uniform
    from stsbench.paths import resolve_data_dir

    split = split.value
    root = resolve_data_dir(data_dir)
    config = {
        "task": "STSBenchmark",
        "split": split,
        "positive_threshold": positive_threshold,
        "batch_size": batch_size,
        "max_length": max_length,
    }
    _go(
        "align_uniform",
        split,
        model,
        _load(pooler, max_length, device, cache_dir, no_cache),
        lambda enc: align_uniform(enc, root, split, "STSBenchmark", positive_threshold, batch_size),
        config,
        pair_files(root, "STSBenchmark", split),
        root,
        output,
        figures.align_uniform_figure,
        tables.print_align_uniform,
    )


def spectrum_cmd(
    model: ModelsOpt = [],  # noqa: B006
    split: SplitOpt = Split.test,
    random_pairs: Annotated[
        int, typer.Option("--random-pairs", help="Random pairs for the mean cosine.")
    ] = 10000,
    seed: SeedOpt = 1111,
    data_dir: DataDirOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
    pooler: PoolerOpt = None,
    max_length: MaxLengthOpt = None,
    device: DeviceOpt = None,
    batch_size: BatchSizeOpt = 128,
    output: OutputOpt = DEFAULT_OUTPUT,
) -> None:
    """Plot singular-value spectra of STS-B embeddings, raw and centred (MoCoSE Fig. 7)."""
    from stsbench.analyses import figures, tables
    from stsbench.analyses.common import pair_files
    from stsbench.analyses.geometry import spectrum
    from stsbench.errors import StsbenchError
    from stsbench.paths import resolve_data_dir

    split = split.value
    if random_pairs < 1:
        raise StsbenchError(f"--random-pairs must be at least 1 (got {random_pairs})")
    root = resolve_data_dir(data_dir)
    config = {
        "task": "STSBenchmark",
        "split": split,
        "random_pairs": random_pairs,
        "seed": seed,
        "batch_size": batch_size,
        "max_length": max_length,
    }
    _go(
        "spectrum",
        split,
        model,
        _load(pooler, max_length, device, cache_dir, no_cache),
        lambda enc: spectrum(enc, root, split, "STSBenchmark", random_pairs, seed, batch_size),
        config,
        pair_files(root, "STSBenchmark", split),
        root,
        output,
        figures.spectrum_figure,
        tables.print_spectrum,
    )


def repetition_probe_cmd(
    model: ModelsOpt = [],  # noqa: B006
    corpus: Annotated[
        Optional[Path],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option("--corpus", help="Sentences, one a line (e.g. wiki1m_for_simcse.txt)."),
    ] = None,
    n: Annotated[int, typer.Option("--n", help="Number of queries (triples).")] = 100,
    seed: SeedOpt = 1111,
    min_overlap: Annotated[
        float, typer.Option("--min-overlap", help="Lowest overlap of a candidate.")
    ] = 0.13,
    max_overlap: Annotated[
        float, typer.Option("--max-overlap", help="Highest overlap of a candidate.")
    ] = 0.17,
    overlap: Annotated[
        Overlap,
        typer.Option("--overlap", help="candidate: share of s1's words found in q; jaccard: word sets."),
    ] = Overlap.candidate,
    triples: Annotated[
        Optional[Path],  # noqa: UP045
        typer.Option("--triples", help="Reuse the triples a previous run saved (.triples.jsonl)."),
    ] = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
    pooler: PoolerOpt = None,
    max_length: MaxLengthOpt = None,
    device: DeviceOpt = None,
    batch_size: BatchSizeOpt = 128,
    output: OutputOpt = DEFAULT_OUTPUT,
) -> None:
    """Probe whether repeating shared words raises similarity (ESimCSE COLING 5.5, Table 8)."""
    from stsbench.analyses import figures, tables
    from stsbench.analyses.repetition import draw_sample, repetition_probe, sample_from_file
    from stsbench.errors import StsbenchError

    # one sample, drawn before any model loads, so every model is probed on the same triples
    if triples is not None:
        sample = sample_from_file(triples)
    elif corpus is None:
        raise StsbenchError("give --corpus FILE (sentences, one a line) or --triples FILE (a saved sample)")
    else:
        sample = draw_sample(corpus, n, seed, min_overlap, max_overlap, overlap.value)
        if len(sample.triples) < n:
            typer.echo(
                f"warning: only {len(sample.triples)} of {n} queries found a candidate with "
                f"{min_overlap:.0%}-{max_overlap:.0%} overlap; the probe uses those",
                err=True,
            )
    source = Path(triples if triples is not None else corpus)
    config = {
        "corpus": str(corpus) if corpus else None,
        "triples_from": str(triples) if triples else None,
        "n": n,
        "seed": seed,
        "min_overlap": min_overlap,
        "max_overlap": max_overlap,
        "overlap": overlap.value,
        "batch_size": batch_size,
        "max_length": max_length,
    }
    _go(
        "repetition_probe",
        None,
        model,
        _load(pooler, max_length, device, cache_dir, no_cache),
        lambda enc: repetition_probe(enc, sample, batch_size),
        config,
        [source],
        source.parent,
        output,
        figures.repetition_figure,
        tables.print_repetition,
    )


def register(app: typer.Typer) -> None:
    """Add the four analysis commands."""
    app.command("length-bias")(length_bias_cmd)
    app.command("align-uniform")(align_uniform_cmd)
    app.command("spectrum")(spectrum_cmd)
    app.command("repetition-probe")(repetition_probe_cmd)
