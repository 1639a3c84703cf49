"""The scale results were made at, kept with them: ``<results>/scale.json``.

A mini recipe's results are not the paper's setting (another backbone, fewer steps, a corpus slice). What says so
belongs to the results, not to the command that happens to render them: ``stsbench reproduce`` writes the recipe's
banner here (:func:`stsbench.reproduce.plan.mini_banner`), and every report of these results, by reproduce or by
hand, sets it on each table and figure and in the images themselves.

``{"kind": "stsbench.scale", "schema_version": 1, "banner": "Mini scale: ..."}``
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from stsbench.errors import StsbenchError
from stsbench.results.schema import SCALE_KIND, SCHEMA_VERSION

SCALE_FILE = "scale.json"


def write_scale(results_dir: Path, banner: str) -> Path:
    """Record ``banner`` as the scale of the results under ``results_dir`` (atomic)."""
    from stsbench.files import atomic_write_text

    data = {"kind": SCALE_KIND, "schema_version": SCHEMA_VERSION, "banner": banner}
    return atomic_write_text(Path(results_dir) / SCALE_FILE, json.dumps(data, indent=2) + "\n")


def read_banners(folders: Iterable[str | Path]) -> list[str]:
    """The banners recorded in ``folders`` (each once, in folder order); a malformed file is a one-line error."""
    found: list[str] = []
    for folder in folders:
        path = Path(folder) / SCALE_FILE
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise StsbenchError(f"{path}: not readable JSON ({exc}); remove it or write it again") from None
        banner = data.get("banner") if isinstance(data, dict) and data.get("kind") == SCALE_KIND else None
        if not isinstance(banner, str) or not banner.strip():
            raise StsbenchError(f"{path}: not a scale file (kind {SCALE_KIND!r} with a banner); remove it")
        if banner not in found:
            found.append(banner)
    return found


def report_banner(folders: Iterable[str | Path], given: str | None = None) -> str | None:
    """The banner a report of ``folders`` carries: theirs, then ``given`` (``--banner``) where it adds to them."""
    return "; ".join(dict.fromkeys([*read_banners(folders), *([given] if given else [])])) or None
