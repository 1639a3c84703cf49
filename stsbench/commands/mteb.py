"""``stsbench export-mteb``: a run's STS results in MTEB's results layout (the ``stsbench[mteb]`` extra)."""

from __future__ import annotations

from pathlib import Path

import typer

from stsbench.commands._options import ModeFilterOpt, ModelFilterOpt, OutOpt, PoolerFilterOpt, opt


def export_mteb_cmd(
    results: opt(Path, help="Folder of `stsbench run` results (searched recursively).", arg=True),
    out: OutOpt,
    model_name: opt(
        str | None,
        "--model-name",
        help="MTEB's ORG/NAME for the model (default: the hub id; the embedded model's is "
        "sentence-transformers/all-MiniLM-L6-v2; required for a local folder).",
    ) = None,
    revision: opt(
        str | None,
        "--revision",
        help="The model's revision folder (default: the hub snapshot's commit, else no_revision_available).",
    ) = None,
    model: ModelFilterOpt = None,
    pooler: PoolerFilterOpt = None,
    mode: ModeFilterOpt = None,
) -> None:
    """Write one run's STS12-16 and STSBenchmark results as MTEB task results (mteb.TaskResult) under OUT.

    MTEB reads them with ``mteb.ResultCache(cache_path=OUT).load_results()``. The main score is MTEB's: cosine
    Spearman over the test split (for STS12-16 every subset's pairs together: stsbench's ``all``), in [0, 1].
    SICKRelatedness is left out: MTEB scores it on all SICK pairs, not SentEval's test split.
    """
    from stsbench.results.mteb_layout import export_results

    done = export_results(results, out, model_name, revision, model=model, pooler=pooler, mode=mode)
    left = f"; left out (MTEB scores other pairs): {', '.join(done.left_out)}" if done.left_out else ""
    tasks = ", ".join(done.tasks)
    typer.echo(f"wrote {tasks} of {done.name}@{done.revision} to {done.folder}{left}", err=True)


def register(app: typer.Typer) -> None:
    """Add ``stsbench export-mteb``."""
    app.command("export-mteb")(export_mteb_cmd)
