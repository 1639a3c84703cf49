"""One command per registered analysis (``stsbench length-bias | align-uniform | spectrum | repetition-probe``).

The commands are generated from :mod:`stsbench.analyses.registry`: the options shared by every analysis
(models, data and cache folders, pooler, device, batch size, output) are defined once here, each
analysis' own options come from the fields of its config type through the one CLI generator
(:mod:`stsbench.commands._generate`: flag ``--<field-name>``, the field's default and help, a ``Literal`` as a
choice). Per model: ``<output>/<model>/<pooler>/<analysis>.json``
(and any extra file of the analysis); per command: ``<output>/figures/<analysis>__<models>.{png,svg}``;
the report's tables of the numbers are printed with rich.
"""

from __future__ import annotations

import inspect
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from stsbench.analyses.registry import Analysis, all_analyses
from stsbench.commands._generate import parameter
from stsbench.commands._options import (
    AllowModifiedDataOpt,
    BatchSizeOpt,
    CacheDirOpt,
    DataDirOpt,
    DeviceOpt,
    MaxLengthOpt,
    ModelsOpt,
    NoCacheOpt,
    OutputOpt,
    PoolerOpt,
    PromptNameOpt,
    PromptOpt,
    encode_options,
)

DEFAULT_OUTPUT = Path("results/analyses")
KW = inspect.Parameter.KEYWORD_ONLY
# (name, annotation, default) of the options every analysis command has, in --help order around its own
MODELS = ("model", ModelsOpt, [])
DATA_DIR = ("data_dir", DataDirOpt, None)
ALLOW_MODIFIED = ("allow_modified_data", AllowModifiedDataOpt, False)
COMMON = [
    ("cache_dir", CacheDirOpt, None),
    ("no_cache", NoCacheOpt, False),
    ("pooler", PoolerOpt, None),
    ("max_length", MaxLengthOpt, None),
    ("device", DeviceOpt, None),
    ("batch_size", BatchSizeOpt, 128),
    ("output", OutputOpt, DEFAULT_OUTPUT),
    ("prompt", PromptOpt, None),
    ("prompt_name", PromptNameOpt, None),
]


def show(analysis: Analysis, stem: str, results: dict[str, Any]) -> None:
    """Print the report's tables of ``{label: result}`` with rich, each followed by its notes."""
    from rich.console import Console
    from rich.table import Table as RichTable

    console = Console(width=200)
    for table in analysis.terminal_tables(stem, results):
        out = RichTable(title=table.title)
        for column, align in zip(table.frame.columns, table.align, strict=True):
            out.add_column(str(column), justify="right" if align == "r" else "left")
        for row in table.frame.itertuples(index=False):
            out.add_row(*map(str, row))
        console.print(out)
        for note in table.notes:
            console.print(note, style="dim")
    for line in analysis.terminal_notes(results):
        console.print(line)


def make_command(analysis: Analysis) -> Callable[..., None]:
    """Build the typer command of ``analysis``: the shared options plus one per config field."""
    from stsbench.options import fields_of

    shared = [MODELS, *([DATA_DIR, ALLOW_MODIFIED] if analysis.uses_data_dir else []), *COMMON]
    taken = {name for name, _, _ in shared}
    fields = fields_of(analysis.config_type)
    for name in fields:
        if name in taken:
            raise TypeError(f"analysis {analysis.name}: option {name!r} is one every analysis has")
    own = [parameter(name, info, default=info.default) for name, info in fields.items()]
    first, *rest = (inspect.Parameter(name, KW, annotation=a, default=d) for name, a, d in shared)
    params = [first, *own, *rest]

    def command(**kw: Any) -> None:
        from stsbench.analyses.runner import run_analysis
        from stsbench.encoders import EMBEDDED_DEFAULT
        from stsbench.files import check_outputs

        encode = encode_options(kw)  # the COMMON options on loading and encoding; a prompt clash refused here
        # every output location is checked before any model loads (one line, exit 2)
        check_outputs(output=kw["output"], cache_dir=encode.cache_dir, use_cache=encode.use_cache)
        config = analysis.make_config(**{name: kw[name] for name in fields})
        run = run_analysis(
            analysis.name,
            models=kw["model"] or [EMBEDDED_DEFAULT],
            config=config,
            data_dir=kw.get("data_dir"),
            output=kw["output"],
            encode=encode,
            command=shlex.join(["stsbench", *sys.argv[1:]]),
            allow_modified_data=kw.get("allow_modified_data", False),
        )
        for path in run.files:
            typer.echo(f"wrote {path}", err=True)
        show(analysis, run.stem, run.results)
        modified = [f for r in run.records for f in r.provenance.data_modified or ()]
        if modified:
            from stsbench.data.integrity import modified_text

            typer.echo(f"every figure above was {modified_text(modified)}")

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    command.__doc__ = analysis.help
    command.__name__ = f"{analysis.name}_cmd"
    return command


def register(app: typer.Typer) -> None:
    """Add one command per registered analysis."""
    for analysis in all_analyses():
        app.command(analysis.command)(make_command(analysis))
