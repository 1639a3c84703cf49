"""Model names made into folder names, file names and labels: the one home of these rules.

- :func:`model_slug`: the results folder of a model (``sentence-transformers__all-MiniLM-L6-v2``; a path's
  last two parts); :func:`slug`: any text made safe as a file name; :func:`figure_stem`: a figure's name.
- :func:`base_label`: what tables, figures and the terminal call a model: a hub id or name as typed, a
  path's last part (never read from the file system, so the same results label alike on any machine).
- :func:`labelled`: unique labels for one command's models (the pooler joins them when the models differ
  in it, :func:`unique_label`'s ``#2`` marks a repeat, as in the report's tables); the report tells its
  models apart by fingerprint in ``stsbench.reports.models``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar

R = TypeVar("R")


def slug(text: str) -> str:
    """Make a model name or path safe as a file name."""
    s = re.sub(r"[^A-Za-z0-9._-]+", "_", text.strip("/\\")).strip("_.")
    return s or "model"


def model_slug(name: str) -> str:
    """A folder name for a model: the last path parts of a path, hub ids with ``__`` for ``/``."""
    p = Path(name)
    base = "__".join(p.parts[-2:]) if p.is_absolute() or name.startswith(".") else name.replace("/", "__")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", base).strip("._") or "model"


def figure_stem(stem: str, labels: list[str]) -> str:
    """Name a figure ``<stem>__<model1>+<model2>``; a hash instead when that gets long."""
    joined = "+".join(slug(model_slug(x)) for x in labels)
    if len(joined) > 80:
        joined = f"{len(labels)}models-{hashlib.sha256(joined.encode()).hexdigest()[:10]}"
    return f"{stem}__{joined}"


def last_part(path: str) -> str:
    r"""The last part of a path or hub id, ``/`` or ``\`` separated: ``C:\runs\simcse\`` -> ``simcse``."""
    return path.replace("\\", "/").rstrip("/").split("/")[-1]


SEED_FOLDER = re.compile(r"seed-\d+")  # `stsbench train --seeds ... --output OUT` writes OUT/seed-<s>


def base_label(name: str) -> str:
    """Return a folder's last part for a path (``/tmp/runs/simcse`` -> ``simcse``); a hub id or name as is.

    A seed's checkpoint keeps its seeds' folder: ``/runs/simcse/seed-1`` -> ``simcse/seed-1`` (the seeds of
    two methods would otherwise share their labels, and their figures' file names).
    """
    n = name.replace("\\", "/").rstrip("/")
    if n.startswith(("/", ".", "~")) or n.count("/") > 1:
        last = last_part(n) or n
        parts = n.split("/")
        if SEED_FOLDER.fullmatch(last) and len(parts) > 1 and parts[-2] not in ("", ".", ".."):
            return f"{parts[-2]}/{last}"
        return last
    return n


def unique_label(label: str, taken: Mapping[str, object]) -> str:
    """Return ``label``, or ``label #2``, ``#3``... when ``taken`` already has it."""
    first, k = label, 2
    while label in taken:
        label, k = f"{first} #{k}", k + 1
    return label


def labelled(done: list[tuple[str, str, R]]) -> dict[str, R]:
    """Return ``{label: result}`` from ``(label, pooler, result)``.

    The pooler joins the label when models differ in it; ``#2`` marks repeats.
    """
    with_pooler = len({p for _, p, _ in done}) > 1
    out: dict[str, R] = {}
    for base, pooler, result in done:
        out[unique_label(f"{base} ({pooler})" if with_pooler else base, out)] = result
    return out
