"""``stsbench data verify`` and ``stsbench data download``."""

from __future__ import annotations

from pathlib import Path

import typer

from stsbench.commands._options import DataDirOpt, opt, print_table, table_console
from stsbench.data.integrity import download, verify
from stsbench.errors import StsbenchError
from stsbench.files import check_writable_dir
from stsbench.paths import resolve_data_dir
from stsbench.progress import plural


def _show(checks, data_dir: Path) -> None:
    bad = [c for c in checks if c.status not in ("ok", "absent (optional)")]
    console = table_console()
    if bad:
        columns = [(col, {"overflow": "fold"}) for col in ("file", "problem", "expected", "found")]
        rows = [(c.path, c.status, c.expected[:16], (c.actual or "-")[:16]) for c in bad]
        print_table(console, columns, rows, title=f"data files that do not match the manifest ({data_dir})")
        raise StsbenchError(
            f"{len(bad)} of {len(checks)} data files under {data_dir} are missing or differ from the manifest; "
            "run `stsbench data download` or restore them from SimCSE's senteval.tar"
        )
    ok = sum(c.status == "ok" for c in checks)
    absent = f" ({plural(len(checks) - ok, 'optional file')} absent)" if ok != len(checks) else ""
    files = f"{plural(ok, 'data file')} under {data_dir} match{'es' if ok == 1 else ''}"
    console.print(f"{files} the manifest{absent}")


def register(app: typer.Typer) -> None:
    """Add the ``data`` group."""
    group = typer.Typer(help="Get and check the SentEval data.", no_args_is_help=True, rich_markup_mode=None)
    app.add_typer(group, name="data")

    @group.command("verify")
    def verify_cmd(data_dir: DataDirOpt = None) -> None:
        """Check every data file against the checksum manifest kept in stsbench."""
        root = resolve_data_dir(data_dir)
        _show(verify(root), root)

    @group.command("download")
    def download_cmd(
        data_dir: DataDirOpt = None,
        wiki: opt(
            bool,
            "--wiki",
            help="Also fetch wiki1m_for_simcse.txt into DATA/wiki/ (the training corpus that train_file: wiki1m names).",
        ) = False,
    ) -> None:
        """Fetch SimCSE's senteval.tar from the Hugging Face hub, extract downstream/, verify it."""
        root = resolve_data_dir(data_dir, must_exist=False)
        check_writable_dir(root, "--data-dir")
        _show(download(root, wiki), root)
