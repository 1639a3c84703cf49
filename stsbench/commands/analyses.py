"""One command per registered analysis (``stsbench length-bias | align-uniform | spectrum | repetition-probe``).

The commands are generated from :mod:`stsbench.analyses.registry`: the options shared by every analysis
(models, data and cache folders, pooler, device, batch size, output) are defined once here, each
analysis' own options come from the fields of its config type through the one CLI generator
(:func:`stsbench.commands._options.parameter`: flag ``--<field-name>``, the field's default and help, a ``Literal`` as a
choice). Per model: ``<output>/<model>/<pooler>/<analysis>.json``
(and any extra file of the analysis); per command: ``<output>/figures/<analysis>__<models>.{png,svg}``;
the report's tables of the numbers are printed with rich.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from stsbench.analyses.registry import Analysis, all_analyses
from stsbench.commands import _options as shared
from stsbench.commands._options import command_line, encode_options, parameter, print_table
from stsbench.data.integrity import modified_text
from stsbench.encoders import EMBEDDED_DEFAULT
from stsbench.files import check_outputs
from stsbench.options import fields_of

DEFAULT_OUTPUT = Path("results/analyses")
KW = inspect.Parameter.KEYWORD_ONLY
# (name, annotation, default) of the options every analysis command has, in --help order around its own
MODELS = ("model", shared.ModelsOpt, [])
DATA_DIR = ("data_dir", shared.DataDirOpt, None)
ALLOW_MODIFIED = ("allow_modified_data", shared.AllowModifiedDataOpt, False)
COMMON = [
    ("cache_dir", shared.CacheDirOpt, None),
    ("no_cache", shared.NoCacheOpt, False),
    ("pooler", shared.PoolerOpt, None),
    ("max_length", shared.MaxLengthOpt, None),
    ("device", shared.DeviceOpt, None),
    ("batch_size", shared.BatchSizeOpt, 128),
    ("output", shared.OutputOpt, DEFAULT_OUTPUT),
    ("prompt", shared.PromptOpt, None),
    ("prompt_name", shared.PromptNameOpt, None),
]


def show(analysis: Analysis, stem: str, results: dict[str, Any]) -> None:
    """Print the report's tables of ``{label: result}`` with rich, each followed by its notes."""
    from rich.console import Console

    console = Console(width=200)
    for table in analysis.terminal_tables(stem, results):
        aligned = zip(table.frame.columns, table.align, strict=True)
        columns = [(str(col), {"justify": "right" if a == "r" else "left"}) for col, a in aligned]
        rows = (map(str, row) for row in table.frame.itertuples(index=False))
        print_table(console, columns, rows, title=table.title)
        for note in table.notes:
            console.print(note, style="dim")
    for line in analysis.terminal_notes(results):
        console.print(line)


def make_command(analysis: Analysis) -> Callable[..., None]:
    """Build the typer command of ``analysis``: the shared options plus one per config field."""
    common = [MODELS, *([DATA_DIR, ALLOW_MODIFIED] if analysis.uses_data_dir else []), *COMMON]
    taken = {name for name, _, _ in common}
    fields = fields_of(analysis.config_type)
    for name in fields:
        if name in taken:
            raise TypeError(f"analysis {analysis.name}: option {name!r} is one every analysis has")
    own = [parameter(name, info, default=info.default) for name, info in fields.items()]
    first, *rest = (inspect.Parameter(name, KW, annotation=a, default=d) for name, a, d in common)
    params = [first, *own, *rest]

    def command(**kw: Any) -> None:
        from stsbench.analyses.runner import run_analysis

        encode = encode_options(kw)  # the COMMON options on loading and encoding; a prompt clash refused here
        # every output location is checked before any model loads (one line, exit 2)
        check_outputs(output=kw["output"], cache_dir=encode.cache_dir, use_cache=encode.use_cache)
        config = analysis.make_config(**{name: kw[name] for name in fields})
        given = {k: kw[k] for k in ("data_dir", "output", "allow_modified_data") if k in kw}  # those it has
        models = kw["model"] or [EMBEDDED_DEFAULT]
        run = run_analysis(
            analysis.name, models=models, config=config, encode=encode, command=command_line(), **given
        )
        for path in run.files:
            typer.echo(f"wrote {path}", err=True)
        show(analysis, run.stem, run.results)
        modified = [f for r in run.records for f in r.provenance.data_modified or ()]
        if modified:
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
