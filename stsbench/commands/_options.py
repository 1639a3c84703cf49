"""CLI options shared by several commands, defined once (typer ``Annotated`` types; a helper, not a command)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

if TYPE_CHECKING:
    from stsbench.encoders.base import EncodeOptions

ModelOpt = Annotated[
    str,
    typer.Option(
        "--model",
        "-m",
        help="Model: a name (all-MiniLM-L6-v2), a local HF/sentence-transformers dir, or a hub id.",
    ),
]
ModelsOpt = Annotated[
    list[str],
    typer.Option("--model", "-m", help="Model(s) to compare; repeat --model for several."),
]


def _pooler_name(value: str | None) -> str | None:
    """Refuse a mistyped ``--pooler`` while parsing, before a command imports torch (seconds)."""
    from stsbench.encoders.pooling import check_pooler

    return None if value is None else check_pooler(value)


PoolerOpt = Annotated[
    Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
    typer.Option(
        "--pooler",
        callback=_pooler_name,
        help="cls | cls_before_pooler | avg | avg_first_last | avg_top2 (or a pooler a plugin registers); "
        "default: as the model declares.",
    ),
]
DataDirOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--data-dir", help="Folder holding SentEval's downstream/ (default: $STSBENCH_DATA, else ./data)."
    ),
]
CacheDirOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option(
        "--cache-dir", help="Embedding cache folder (default: $STSBENCH_CACHE, else the user cache dir)."
    ),
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Neither read nor write the embedding cache.")]
OutputOpt = Annotated[Path, typer.Option("--output", "-o", help="Folder for results JSON files.")]
BatchSizeOpt = Annotated[int, typer.Option("--batch-size", min=1, help="Encoding batch size.")]
MaxLengthOpt = Annotated[
    Optional[int],  # noqa: UP045
    typer.Option(
        "--max-length",
        min=1,
        help="Truncate inputs to this many tokens (default: no truncation, as SentEval; "
        "sentence-transformers models use their own max_seq_length).",
    ),
]
DeviceOpt = Annotated[
    Optional[str],  # noqa: UP045
    typer.Option("--device", help="cpu, cuda, cuda:1, mps (default: cuda if available, else cpu)."),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Random seed.")]
AllowModifiedDataOpt = Annotated[
    bool,
    typer.Option(
        "--allow-modified-data",
        help="Score data files that differ from the canonical SentEval files (stsbench/data/manifest.json) "
        "instead of refusing; the results record the files, tables and reports mark the figures with a ‡.",
    ),
]
BootstrapOpt = Annotated[
    int,
    typer.Option(
        "--bootstrap",
        min=0,
        metavar="B",
        help="Resamples of the pairs for each STS figure's 95% interval and the Avg.'s, seeded by --seed; "
        "0: no STS intervals.",
    ),
]


class Dtype(str, Enum):
    """Weights and activations of the encoder at evaluation time."""

    float32 = "float32"
    bfloat16 = "bfloat16"
    float16 = "float16"


DtypeOpt = Annotated[
    Dtype,
    typer.Option(
        "--dtype",
        help="Encoder precision. float32 (default) gives the papers' and SentEval's numbers; bfloat16/float16 "
        "are faster where the hardware has them (GPUs, CPUs with AMX) and move scores by about 0.01.",
    ),
]


def _text_option(flag: str, help: str) -> Any:
    """An optional free-text option (``None`` when not given)."""
    return Annotated[Optional[str], typer.Option(flag, help=help)]  # noqa: UP045


PromptOpt = _text_option(
    "--prompt",
    "Text prepended to every sentence, as sentence-transformers' encode(prompt=...) (e.g. 'query: '); "
    "it keys the cache and is recorded with the results.",
)
PromptNameOpt = _text_option(
    "--prompt-name",
    "A prompt the model stores (config_sentence_transformers.json 'prompts'), by name; "
    "default: the model's default_prompt_name, if it has one.",
)


def encode_options(given: Mapping[str, Any]) -> EncodeOptions:
    """The :class:`~stsbench.encoders.base.EncodeOptions` that a command's shared options above say.

    ``given``: the command's keywords (``locals()`` of the command, or its ``**kw``); the fields named as
    EncodeOptions names them are read, ``no_cache`` as ``use_cache``, a :class:`Dtype` as its value; one the
    command lacks keeps its default. ``--prompt`` with ``--prompt-name`` is refused here, before anything loads.
    """
    from dataclasses import fields

    from stsbench.encoders.base import EncodeOptions
    from stsbench.encoders.resolve import check_prompt_options

    values = {f.name: given[f.name] for f in fields(EncodeOptions) if f.name in given}
    if "no_cache" in given:
        values["use_cache"] = not given["no_cache"]
    if isinstance(values.get("dtype"), Dtype):
        values["dtype"] = values["dtype"].value
    check_prompt_options(values.get("prompt"), values.get("prompt_name"))
    return EncodeOptions(**values)


def runs_and_seeds(runs: str | None, seeds: str | None) -> tuple[list[str] | None, list[int] | None]:
    """``--runs a,b`` and ``--seeds 1,2`` as lists (None: not given); a bad seed or an empty list is one line."""
    from stsbench.errors import StsbenchError

    names = [n.strip() for n in runs.split(",") if n.strip()] if runs is not None else None
    numbers = None
    if seeds is not None:
        try:
            numbers = [int(s) for s in seeds.split(",") if s.strip()]
        except ValueError:
            raise StsbenchError(f"--seeds {seeds!r}: give whole numbers separated by commas, e.g. 1,2,3") from None
    if names == [] or numbers == []:
        raise StsbenchError("--runs and --seeds need at least one name or seed")
    return names, numbers
