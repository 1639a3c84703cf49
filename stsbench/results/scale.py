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
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from stsbench.errors import StsbenchError
from stsbench.results.schema import FIRST_VERSION, SCALE_KIND, SCHEMA_VERSION

SCALE_FILE = "scale.json"


@dataclass(frozen=True)
class Scale:
    """``scale.json``: the banner every report of the results carries."""

    banner: str
    kind: Literal["stsbench.scale"] = SCALE_KIND
    schema_version: int = FIRST_VERSION  # a file without the key: the first version


def write_scale(results_dir: Path, banner: str) -> Path:
    """Record ``banner`` as the scale of the results under ``results_dir`` (atomic)."""
    from stsbench.files import atomic_write_text

    data = {
        "kind": SCALE_KIND,
        "schema_version": SCHEMA_VERSION,
        "banner": banner,
    }  # this key order: the bytes
    return atomic_write_text(Path(results_dir) / SCALE_FILE, json.dumps(data, indent=2) + "\n")


def read_scale(path: Path) -> Scale:
    """One ``scale.json``, validated; a malformed file is a one-line error."""
    from stsbench.results.validation import Malformed, validated

    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StsbenchError(f"{path}: not readable JSON ({exc}); remove it or write it again") from None
    try:
        if not isinstance(data, dict) or data.get("kind") != SCALE_KIND:
            raise Malformed("kind")
        scale = validated(Scale, data)
    except Malformed:
        scale = None
    if scale is None or not scale.banner.strip():
        raise StsbenchError(f"{path}: not a scale file (kind {SCALE_KIND!r} with a banner); remove it")
    return scale


def read_banners(folders: Iterable[str | Path]) -> list[str]:
    """The banners recorded in ``folders`` (each once, in folder order); a malformed file is a one-line error."""
    found: list[str] = []
    for folder in folders:
        path = Path(folder) / SCALE_FILE
        if not path.is_file():
            continue
        banner = read_scale(path).banner
        if banner not in found:
            found.append(banner)
    return found


def report_banner(folders: Iterable[str | Path], given: str | None = None) -> str | None:
    """The banner a report of ``folders`` carries: theirs, then ``given`` (``--banner``) where it adds to them."""
    return "; ".join(dict.fromkeys([*read_banners(folders), *([given] if given else [])])) or None
