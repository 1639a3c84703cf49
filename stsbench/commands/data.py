"""``stsbench data verify`` and ``stsbench data download``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stsbench.commands._options import DataDirOpt


def _show(checks, data_dir: Path) -> None:
    from rich.table import Table

    from stsbench.commands._console import table_console
    from stsbench.errors import StsbenchError
    from stsbench.progress import plural

    bad = [c for c in checks if c.status not in ("ok", "absent (optional)")]
    console = table_console()
    if bad:
        table = Table(title=f"data files that do not match the manifest ({data_dir})")
        for col in ("file", "problem", "expected", "found"):
            table.add_column(col, overflow="fold")
        for c in bad:
            table.add_row(c.path, c.status, c.expected[:16], (c.actual or "-")[:16])
        console.print(table)
        raise StsbenchError(
            f"{len(bad)} of {len(checks)} data files under {data_dir} are missing or differ from the manifest; "
            "run `stsbench data download` or restore them from SimCSE's senteval.tar"
        )
    ok = sum(c.status == "ok" for c in checks)
    console.print(
        f"{plural(ok, 'data file')} under {data_dir} match{'es' if ok == 1 else ''} the manifest"
        + (f" ({plural(len(checks) - ok, 'optional file')} absent)" if ok != len(checks) else "")
    )


def register(app: typer.Typer) -> None:
    """Add the ``data`` group."""
    data_app = typer.Typer(
        help="Get and check the SentEval data.", no_args_is_help=True, rich_markup_mode=None
    )
    app.add_typer(data_app, name="data")

    @data_app.command("verify")
    def verify_cmd(data_dir: DataDirOpt = None) -> None:
        """Check every data file against the checksum manifest kept in stsbench."""
        from stsbench.data.manifest import verify
        from stsbench.paths import resolve_data_dir

        root = resolve_data_dir(data_dir)
        _show(verify(root), root)

    @data_app.command("download")
    def download_cmd(
        data_dir: DataDirOpt = None,
        wiki: Annotated[
            bool,
            typer.Option(
                "--wiki",
                help="Also fetch wiki1m_for_simcse.txt into DATA/wiki/ (the training corpus that train_file: wiki1m names).",
            ),
        ] = False,
    ) -> None:
        """Fetch SimCSE's senteval.tar from the Hugging Face hub, extract downstream/, verify it."""
        from stsbench.data.manifest import download
        from stsbench.files import check_writable_dir
        from stsbench.paths import resolve_data_dir

        root = resolve_data_dir(data_dir, must_exist=False)
        check_writable_dir(root, "--data-dir")
        _show(download(root, wiki), root)
