"""``stsbench export-mteb``: a run's STS results in MTEB's results layout (the ``stsbench[mteb]`` extra)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer


def export_mteb_cmd(
    results: Annotated[Path, typer.Argument(help="Folder of `stsbench run` results (searched recursively).")],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="MTEB cache folder: results/<org>__<model>/<revision>/ goes here."),
    ],
    model_name: Annotated[
        Optional[str],  # noqa: UP045 - typer needs Optional on 3.10
        typer.Option(
            "--model-name",
            help="MTEB's ORG/NAME for the model (default: the hub id; the embedded model's is "
            "sentence-transformers/all-MiniLM-L6-v2; required for a local folder).",
        ),
    ] = None,
    revision: Annotated[
        Optional[str],  # noqa: UP045
        typer.Option(
            "--revision",
            help="The model's revision folder (default: the hub snapshot's commit, else no_revision_available).",
        ),
    ] = None,
    model: Annotated[Optional[str], typer.Option(help="Only results of this model name.")] = None,  # noqa: UP045
    pooler: Annotated[Optional[str], typer.Option(help="Only results with this pooler.")] = None,  # noqa: UP045
    mode: Annotated[Optional[str], typer.Option(help="Only results of this mode (test, fasttest).")] = None,  # noqa: UP045
) -> None:
    """Write one run's STS12-16 and STSBenchmark results as MTEB task results (mteb.TaskResult) under OUT.

    MTEB reads them with ``mteb.ResultCache(cache_path=OUT).load_results()``. The main score is MTEB's: cosine
    Spearman over the test split (for STS12-16 every subset's pairs together: stsbench's ``all``), in [0, 1].
    SICKRelatedness is left out: MTEB scores it on all SICK pairs, not SentEval's test split.
    """
    from stsbench.results.mteb_layout import export_results

    done = export_results(results, out, model_name, revision, model=model, pooler=pooler, mode=mode)
    left = f"; left out (MTEB scores other pairs): {', '.join(done.left_out)}" if done.left_out else ""
    typer.echo(
        f"wrote {', '.join(done.tasks)} of {done.name}@{done.revision} to {done.folder}{left}", err=True
    )


def register(app: typer.Typer) -> None:
    """Add ``stsbench export-mteb``."""
    app.command("export-mteb")(export_mteb_cmd)
