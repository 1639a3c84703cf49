"""``stsbench length-bias | align-uniform | spectrum | repetition-probe``: one or several models each.

Per model: ``<output>/<model>/<pooler>/<analysis>.json`` (and the probe's ``.triples.jsonl``); per command:
``<output>/figures/<analysis>__<models>.{png,svg}``; the numbers are printed as a table.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

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


class Unit(str, Enum):
    """What a sentence's length counts."""

    words = "words"
    tokens = "tokens"


class Overlap(str, Enum):
    """How the probe measures overlap (see ``stsbench.analyses.repetition``)."""

    candidate = "candidate"
    jaccard = "jaccard"


class _Timed:
    """An encoder proxy that adds up the seconds spent in ``encode`` (for provenance timings)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.info = inner.info
        self.seconds = 0.0

    def encode(self, texts: Sequence[str], batch_size: int = 128, show_progress: bool = True):
        """Delegate and time."""
        t0 = time.perf_counter()
        try:
            return self.inner.encode(texts, batch_size=batch_size, show_progress=show_progress)
        finally:
            self.seconds += time.perf_counter() - t0


def _label(name: str, pooler: str, names: list[str]) -> str:
    base = Path(name).name if ("/" in name or "\\" in name) and Path(name).exists() else name
    return f"{base} ({pooler})" if names.count(name) > 1 or len(set(names)) < len(names) else base


def _run(
    analysis: str,
    models: list[str],
    opts: dict[str, Any],
    config: dict[str, Any],
    compute: Callable[[Any], Any],
    files: list[Path],
    data_dir: Path | None,
) -> dict[str, Any]:
    """For each model: load (cached) encoder, compute, write the JSON; returns ``{label: result}``."""
    from stsbench.analyses.common import AnalysisResult
    from stsbench.encoders import load_encoder
    from stsbench.io import atomic_write_json
    from stsbench.results.store import make_provenance, model_info, model_slug

    if not models:
        from stsbench.encoders import EMBEDDED_DEFAULT

        models = [EMBEDDED_DEFAULT]
    out: dict[str, Any] = {}
    for name in models:
        enc = _Timed(
            load_encoder(
                name,
                pooler=opts["pooler"],
                max_length=opts["max_length"],
                device=opts["device"],
                cache_dir=opts["cache_dir"],
                use_cache=not opts["no_cache"],
            )
        )
        t0 = time.perf_counter()
        result = compute(enc)
        total = time.perf_counter() - t0
        info = model_info(enc)
        prov = make_provenance(
            data_dir,
            files,
            {"encode": enc.seconds, "analyse": total - enc.seconds},
            shlex.join(["stsbench", *sys.argv[1:]]),
            encoder=enc.inner,
        )
        payload = result.to_dict()
        record = AnalysisResult(analysis, payload, info, config, prov)
        path = opts["output"] / model_slug(info.name) / info.pooler / f"{analysis}.json"
        atomic_write_json(path, record.to_dict())
        typer.echo(f"wrote {path}", err=True)
        if analysis == "repetition_probe":
            from stsbench.analyses.repetition import write_triples

            tpath = write_triples(path.with_name(f"{analysis}.triples.jsonl"), result.triples)
            typer.echo(f"wrote {tpath}", err=True)
        label = _label(name, info.pooler, models)
        out[label] = result
    return out


def _figure(analysis: str, results: dict[str, Any], output: Path, draw: Callable) -> None:
    from stsbench.analyses.common import figure_stem

    for p in draw(results, output / "figures" / figure_stem(analysis, list(results))):
        typer.echo(f"wrote {p}", err=True)


def _fmt(v: float | None, scale: float = 100.0, digits: int = 2) -> str:
    return "n/a" if v is None else f"{v * scale:.{digits}f}"


def _opts(**kw: Any) -> dict[str, Any]:
    return kw


def length_bias_cmd(
    model: ModelsOpt = [],  # noqa: B006 - typer reads the default
    unit: Annotated[
        Unit, typer.Option("--unit", help="Length in words of the tokenized text, or model tokens.")
    ] = (Unit.words),
    threshold: Annotated[
        int, typer.Option("--threshold", min=0, help="Groups: difference <= T and > T.")
    ] = 3,
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
    from stsbench.analyses import figures
    from stsbench.analyses.common import LENGTH_TASKS, pair_files
    from stsbench.analyses.length_bias import length_bias, parse_buckets, threshold_buckets
    from stsbench.paths import resolve_data_dir

    parse_buckets(buckets)
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
    opts = _opts(
        pooler=pooler,
        max_length=max_length,
        device=device,
        cache_dir=cache_dir,
        no_cache=no_cache,
        output=output,
    )
    results = _run(
        "length_bias",
        model,
        opts,
        config,
        lambda enc: length_bias(enc, root, LENGTH_TASKS, unit.value, threshold, buckets, batch_size),
        files,
        root,
    )
    _figure("length_bias", results, output, figures.length_bias_figure)
    from stsbench.analyses.tables import print_length_bias

    print_length_bias(results)


def align_uniform_cmd(
    model: ModelsOpt = [],  # noqa: B006
    split: Annotated[Split, typer.Option("--split", help="STS-B split.")] = Split.dev,
    positive_threshold: Annotated[
        float, typer.Option("--positive-threshold", help="Positive pair: gold > this.")
    ] = (4.0),
    data_dir: DataDirOpt = None,
    cache_dir: CacheDirOpt = None,
    no_cache: NoCacheOpt = False,
    pooler: PoolerOpt = None,
    max_length: MaxLengthOpt = None,
    device: DeviceOpt = None,
    batch_size: BatchSizeOpt = 128,
    output: OutputOpt = DEFAULT_OUTPUT,
) -> None:
    """Alignment and uniformity on STS-B (Wang & Isola 2020; SimCSE Fig. 2/3), models on one plane."""
    from stsbench.analyses import figures
    from stsbench.analyses.common import pair_files
    from stsbench.analyses.geometry import align_uniform
    from stsbench.paths import resolve_data_dir

    root = resolve_data_dir(data_dir)
    config = {
        "task": "STSBenchmark",
        "split": split.value,
        "positive_threshold": positive_threshold,
        "batch_size": batch_size,
        "max_length": max_length,
    }
    opts = _opts(
        pooler=pooler,
        max_length=max_length,
        device=device,
        cache_dir=cache_dir,
        no_cache=no_cache,
        output=output,
    )
    results = _run(
        "align_uniform",
        model,
        opts,
        config,
        lambda enc: align_uniform(enc, root, split.value, "STSBenchmark", positive_threshold, batch_size),
        pair_files(root, "STSBenchmark", split.value),
        root,
    )
    _figure("align_uniform", results, output, figures.align_uniform_figure)
    from stsbench.analyses.tables import print_align_uniform

    print_align_uniform(results)


def spectrum_cmd(
    model: ModelsOpt = [],  # noqa: B006
    split: Annotated[Split, typer.Option("--split", help="STS-B split.")] = Split.test,
    random_pairs: Annotated[
        int, typer.Option("--random-pairs", min=1, help="Random pairs for the mean cosine.")
    ] = (10000),
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
    from stsbench.analyses import figures
    from stsbench.analyses.common import pair_files
    from stsbench.analyses.geometry import spectrum
    from stsbench.paths import resolve_data_dir

    root = resolve_data_dir(data_dir)
    config = {
        "task": "STSBenchmark",
        "split": split.value,
        "random_pairs": random_pairs,
        "seed": seed,
        "batch_size": batch_size,
        "max_length": max_length,
    }
    opts = _opts(
        pooler=pooler,
        max_length=max_length,
        device=device,
        cache_dir=cache_dir,
        no_cache=no_cache,
        output=output,
    )
    results = _run(
        "spectrum",
        model,
        opts,
        config,
        lambda enc: spectrum(enc, root, split.value, "STSBenchmark", random_pairs, seed, batch_size),
        pair_files(root, "STSBenchmark", split.value),
        root,
    )
    _figure("spectrum", results, output, figures.spectrum_figure)
    from stsbench.analyses.tables import print_spectrum

    print_spectrum(results)


def repetition_probe_cmd(
    model: ModelsOpt = [],  # noqa: B006
    corpus: Annotated[
        Path | None,
        typer.Option(  # noqa: UP045
            "--corpus", help="Sentences, one a line (e.g. wiki1m_for_simcse.txt)."
        ),
    ] = None,
    n: Annotated[int, typer.Option("--n", min=1, help="Number of queries (triples).")] = 100,
    seed: SeedOpt = 1111,
    min_overlap: Annotated[
        float, typer.Option("--min-overlap", help="Lowest overlap of a candidate.")
    ] = 0.13,
    max_overlap: Annotated[
        float, typer.Option("--max-overlap", help="Highest overlap of a candidate.")
    ] = 0.17,
    overlap: Annotated[
        Overlap,
        typer.Option(
            "--overlap", help="candidate: share of s1's words found in q; jaccard: of the word sets."
        ),
    ] = Overlap.candidate,
    triples: Annotated[
        Path | None,
        typer.Option(  # noqa: UP045
            "--triples", help="Reuse the triples a previous run saved (.triples.jsonl) instead of sampling."
        ),
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
    from stsbench.analyses import figures
    from stsbench.analyses.repetition import draw_sample, repetition_probe, sample_from_file
    from stsbench.analyses.tables import print_repetition
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
    config = {
        "corpus": str(corpus) if corpus else None,
        "n": n,
        "seed": seed,
        "min_overlap": min_overlap,
        "max_overlap": max_overlap,
        "overlap": overlap.value,
        "triples_from": str(triples) if triples else None,
        "batch_size": batch_size,
        "max_length": max_length,
    }
    opts = _opts(
        pooler=pooler,
        max_length=max_length,
        device=device,
        cache_dir=cache_dir,
        no_cache=no_cache,
        output=output,
    )
    files = [Path(triples)] if triples is not None else [Path(corpus)]
    results = _run(
        "repetition_probe",
        model,
        opts,
        config,
        lambda enc: repetition_probe(enc, sample, batch_size),
        files,
        files[0].parent,
    )
    _figure("repetition_probe", results, output, figures.repetition_figure)
    print_repetition(results)


def register(app: typer.Typer) -> None:
    """Add the four analysis commands."""
    app.command("length-bias")(length_bias_cmd)
    app.command("align-uniform")(align_uniform_cmd)
    app.command("spectrum")(spectrum_cmd)
    app.command("repetition-probe")(repetition_probe_cmd)
