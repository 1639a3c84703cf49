"""Run one registered analysis over several models: the library call behind every analysis command.

``run_analysis("spectrum", models=["all-MiniLM-L6-v2"], output="results/analyses", split="dev")`` loads
each (cached) encoder, computes, and, given an ``output``, writes one results file per model with
provenance (the data files the analysis declares) and one comparison figure; paths come from
:mod:`stsbench.results.write`: ``<output>/<model_slug>/<pooler>/<stem>.json`` (plus the analysis' extra
files, e.g. the probe's ``.triples.jsonl``) and ``<output>/figures/<stem>__<models>.{png,svg}``, ``stem``
being the analysis name plus the option that selects its data (``length_bias_words``,
``align_uniform_dev``, ``spectrum_test``), so runs with other data do not overwrite each other.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import Any

from stsbench.analyses.registry import Analysis, get_analysis
from stsbench.data.integrity import check_data
from stsbench.encoders.base import EncodeOptions
from stsbench.encoders.resolve import prompt_suffix
from stsbench.files import atomic_write_json
from stsbench.paths import resolve_data_dir
from stsbench.results import write
from stsbench.results.schema import AnalysisResult


class TimedEncoder:
    """An encoder proxy that adds up the seconds spent in ``encode`` (for provenance timings)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.info = inner.info
        self.seconds = 0.0

    def encode(self, texts: Sequence[str], batch_size: int = 128, show_progress: bool = True) -> Any:
        """Delegate and time."""
        t0 = time.perf_counter()
        try:
            return self.inner.encode(texts, batch_size=batch_size, show_progress=show_progress)
        finally:
            self.seconds += time.perf_counter() - t0


@dataclass
class AnalysisRun:
    """What :func:`run_analysis` produced."""

    analysis: Analysis
    stem: str  # the file stem: the analysis name plus its variant
    results: dict[str, Any]  # label -> the analysis' typed result
    records: list[AnalysisResult] = field(default_factory=list)  # one envelope per model, with provenance
    files: list[Path] = field(default_factory=list)  # every file written


def run_analysis(
    name: str,
    *,
    models: Sequence[str] = (),
    encoders: Sequence[Any] = (),
    config: Any = None,
    data_dir: Path | None = None,
    output: Path | None = None,
    encode: EncodeOptions | None = None,
    command: str | None = None,
    allow_modified_data: bool = False,
    **options: Any,
) -> AnalysisRun:
    """Run analysis ``name`` over ``models`` (names to load) and ``encoders`` (already built).

    ``config`` is the analysis' config object, else it is built from ``options`` (unknown ones are a
    one-line error). ``encode``: how the named models are loaded, and the batch size every model encodes with. With ``output``, each model's results file (with provenance), the analysis' extra
    files and the comparison figure are written; the returned :class:`AnalysisRun` lists them. Data files
    that differ from the canonical ones are refused before any model loads unless ``allow_modified_data``
    (then each record's ``provenance.data_modified`` names them).
    """
    analysis = get_analysis(name)
    encode = encode or EncodeOptions()
    config = config if config is not None else analysis.make_config(**options)
    prepared = analysis.prepare(config)  # option errors and shared inputs, before any model loads
    root = resolve_data_dir(data_dir) if analysis.uses_data_dir else None
    data_root, files = analysis.data_files(config, root, prepared)
    check_data(data_root, files, allow_modified_data)
    variant = analysis.variant(config)
    stem = f"{analysis.name}_{variant}" if variant else analysis.name
    record = {**analysis.record(config), "batch_size": encode.batch_size, "max_length": encode.max_length}
    run = AnalysisRun(analysis, stem, {})
    done: list[tuple[str, str, Any]] = []  # (label, pooler, result)
    from stsbench import encoders as loader

    loaded = ((model, loader.build_encoder(model, encode)) for model in models)  # each when its turn comes
    for given, inner in chain(((built.info.name, built) for built in encoders), loaded):
        enc = TimedEncoder(inner)
        t0 = time.perf_counter()
        result = analysis.compute(enc, config, data_dir=root, prepared=prepared, batch_size=encode.batch_size)
        timings = {"encode": enc.seconds, "analyse": time.perf_counter() - t0 - enc.seconds}
        prov = write.make_provenance(data_root, files, timings, command, encoder=inner)
        info = write.model_info(enc)
        envelope = AnalysisResult(
            analysis=analysis.name, result=result.to_dict(), model=info, config=record, provenance=prov
        )
        run.records.append(envelope)
        if output is not None:
            path = write.analysis_path(output, info, stem)
            portable = write.portable_result(envelope.to_dict(), output, data_root)
            run.files.append(atomic_write_json(path, portable))
            run.files += analysis.extra_files(result, path)
        label = write.base_label(given) + prompt_suffix(info.prompt, info.prompt_name)
        done.append((label, info.pooler, result))
    run.results = write.labelled(done)
    if output is not None:
        run.files += analysis.figure(run.results, write.figure_path(output, stem, list(run.results)))
    return run
