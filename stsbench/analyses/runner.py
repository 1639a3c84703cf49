"""Run one analysis over several models: load each (cached) encoder, compute, write its JSON; one figure.

Per model: ``<output>/<model_slug>/<pooler>/<name>.json`` (the probe adds ``.triples.jsonl``); per call:
``<output>/figures/<name>__<models>.{png,svg}``; ``name`` is the analysis plus the option that selects its
data (``length_bias_words``, ``align_uniform_dev``, ``spectrum_test``), so runs with other data do not
overwrite each other.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stsbench.analyses.common import AnalysisResult, figure_stem


@dataclass
class LoadOptions:
    """How every model of a run is loaded (the CLI's common options)."""

    pooler: str | None = None
    max_length: int | None = None
    device: str | None = None
    cache_dir: Path | None = None
    use_cache: bool = True


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


def model_label(name: str) -> str:
    """Show a model in figures and tables: the name, or a path's last two parts."""
    parts = Path(name).parts
    return "/".join(parts[-2:]) if Path(name).exists() and len(parts) > 1 else name


def _labelled(done: list[tuple[str, str, Any]]) -> dict[str, Any]:
    """``{label: result}``; the pooler joins the label when models differ in it, ``#2`` marks repeats."""
    with_pooler = len({p for _, p, _ in done}) > 1
    out: dict[str, Any] = {}
    for base, pooler, result in done:
        label = f"{base} ({pooler})" if with_pooler else base
        first, k = label, 2
        while label in out:
            label, k = f"{first} #{k}", k + 1
        out[label] = result
    return out


@dataclass
class AnalysisRun:
    """What :func:`run_analysis` produced."""

    results: dict[str, Any]  # label -> the analysis' typed result
    files: list[Path]  # every file written


def run_analysis(
    analysis: str,
    models: list[str],
    load: LoadOptions,
    compute: Callable[[Any], Any],
    config: dict[str, Any],
    data_files: list[Path],
    data_root: Path,
    output: Path,
    draw: Callable[[dict[str, Any], Path], list[Path]],
    command: str | None = None,
    variant: str | None = None,
) -> AnalysisRun:
    """``compute(encoder)`` for each model, one results JSON each (with provenance), one comparison figure."""
    from stsbench.encoders import load_encoder
    from stsbench.io import atomic_write_json
    from stsbench.results.store import make_provenance, model_info, model_slug

    stem = f"{analysis}_{variant}" if variant else analysis
    done: list[tuple[str, str, Any]] = []  # (label, pooler, result)
    written: list[Path] = []
    for name in models:
        enc = TimedEncoder(
            load_encoder(
                name,
                pooler=load.pooler,
                max_length=load.max_length,
                device=load.device,
                cache_dir=load.cache_dir,
                use_cache=load.use_cache,
            )
        )
        t0 = time.perf_counter()
        result = compute(enc)
        total = time.perf_counter() - t0
        timings = {"encode": enc.seconds, "analyse": total - enc.seconds}
        prov = make_provenance(data_root, data_files, timings, command, encoder=enc.inner)
        info = model_info(enc)
        record = AnalysisResult(analysis, result.to_dict(), info, config, prov)
        path = Path(output) / model_slug(info.name) / info.pooler / f"{stem}.json"
        written.append(atomic_write_json(path, record.to_dict()))
        if hasattr(result, "triples"):
            from stsbench.analyses.repetition import write_triples

            written.append(write_triples(path.with_name(f"{stem}.triples.jsonl"), result.triples))
        done.append((model_label(name), info.pooler, result))
    results = _labelled(done)
    written += draw(results, Path(output) / "figures" / figure_stem(stem, list(results)))
    return AnalysisRun(results, written)
