"""``stsbench compare`` as one library call: each source read as results or evaluated first, then compared.

A small composition: a results folder is read by :mod:`stsbench.results.sides`, a model or a ``train --seeds``
folder is evaluated first through the embedding cache (:mod:`stsbench.evaluation`, imported only then: it loads
torch), and the statistics are :mod:`stsbench.stats.compare`'s.
"""

from __future__ import annotations

from pathlib import Path

from stsbench.encoders.base import EncodeOptions
from stsbench.encoders.resolve import is_model_dir, looks_like_path
from stsbench.errors import StsbenchError
from stsbench.results.labels import unique_label
from stsbench.results.seeds import is_seeds_folder
from stsbench.results.sides import side_from_aggregate, side_from_folder
from stsbench.stats.compare import MIXED, CompareResult, Side, compare_sides


def require_two(sources: list[str]) -> None:
    """Refuse, before anything is read or evaluated, fewer than two sources."""
    if len(sources) < 2:
        raise StsbenchError(
            "compare needs at least two results folders or models (the first is the reference)"
        )


def compare(
    sources: list[str],
    *,
    bootstrap: int = 1000,
    seed: int = 1111,
    mode: str | None = None,
    data_dir: Path | None = None,
    output: Path = Path("results"),
    cache_dir: Path | None = None,
    device: str | None = None,
    quiet: bool = False,
    prompt: str | None = None,
    prompt_name: str | None = None,
) -> CompareResult:
    """Compare every source after the first with the first (see :func:`load_sides` for what a source is).

    ``prompt`` / ``prompt_name`` apply to the models evaluated here (as ``stsbench run --prompt``).
    """
    encode = EncodeOptions(device=device, prompt=prompt, prompt_name=prompt_name, cache_dir=cache_dir)
    return compare_sources(
        sources, encode, bootstrap=bootstrap, seed=seed, mode=mode, data_dir=data_dir, output=output, quiet=quiet
    )


def compare_sources(
    sources: list[str],
    encode: EncodeOptions,
    *,
    bootstrap: int = 1000,
    seed: int = 1111,
    mode: str | None = None,
    data_dir: Path | None = None,
    output: Path = Path("results"),
    quiet: bool = False,
) -> CompareResult:
    """:func:`compare` with how the models and seeds evaluated here are loaded as one :class:`EncodeOptions`."""
    require_two(sources)
    sides = load_sides(sources, encode, mode=mode, data_dir=data_dir, output=output, quiet=quiet)
    return compare_sides(sides, bootstrap=bootstrap, seed=seed)


def load_sides(
    sources: list[str], encode: EncodeOptions, *, mode: str | None, data_dir: Path | None, output: Path, quiet: bool
) -> list[Side]:
    """A side per source: a results folder as it is, a seeds folder or a model evaluated first.

    A ``train --seeds`` folder is refused unless every seed has its kept checkpoint; then each seed is evaluated
    as ``stsbench run --model OUT`` does (through the cache) and the side is their aggregate. What each source
    is, and whether seeds meet one model, is settled before anything is evaluated.
    """
    found: list[Side | str] = []  # a results folder's side, or what to evaluate: "seeds" or "model"
    for src in sources:
        path = Path(src)
        if is_seeds_folder(path):  # evaluation imports torch: only where something is evaluated
            from stsbench.evaluation.seeds import require_every_seed

            require_every_seed(src)
            found.append("seeds")
        elif path.is_dir() and not is_model_dir(path):  # a checkpoint is evaluated, not read as results
            found.append(side_from_folder(path, mode=mode, source=src))
        elif not path.exists() and looks_like_path(src):  # a mistyped folder, not a hub id: say so first
            raise StsbenchError(
                f"{src}: no such folder; pass the --output folder of `stsbench run` (or a part of it, such as "
                "<output>/<model>/<pooler>/<mode>), a `stsbench train --seeds` folder or a model"
            )
        else:
            found.append("model")
    over_seeds = [f == "seeds" if isinstance(f, str) else f.seeds is not None for f in found]
    for src, seeds in zip(sources[1:], over_seeds[1:], strict=True):
        if seeds != over_seeds[0]:
            raise StsbenchError(f"{src} vs {sources[0]}: {MIXED}")
    if encode.prompted and "model" not in found:
        raise StsbenchError("--prompt and --prompt-name apply to models evaluated here; no source is a model")
    if encode.prompted and "seeds" in found:
        raise StsbenchError("--prompt and --prompt-name apply to models, not to seeds folders; drop them")

    options = {"data_dir": data_dir, "output": output, "show_progress": not quiet}
    sides: list[Side] = []
    taken: dict[str, Side] = {}
    # models and seeds are evaluated with run's own intervals: the results written under --output are the
    # ones `stsbench run` writes (a folder of earlier `stsbench run` results keeps its intervals)
    for src, what in zip(sources, found, strict=True):
        if what == "seeds":
            from stsbench.evaluation.seeds import run_seeds

            done = run_seeds(src, "sts", mode or "test", encode, **options)
            side = side_from_aggregate(done.aggregate, src, done.path or src)
        elif what == "model":
            from stsbench.evaluation.run import evaluate_model

            path = evaluate_model(src, "sts", mode or "test", encode, **options).paths[0].parent
            side = side_from_folder(path, mode=mode or "test", source=src)
        else:
            side = what
        side.label = unique_label(side.label, taken)
        taken[side.label] = side
        sides.append(side)
    return sides
