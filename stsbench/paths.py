"""Where data, caches and results live."""

from __future__ import annotations

import os
from pathlib import Path

from stsbench.errors import StsbenchError

DATA_ENV = "STSBENCH_DATA"
CACHE_ENV = "STSBENCH_CACHE"


def resolve_data_dir(data_dir: str | os.PathLike[str] | None = None, must_exist: bool = True) -> Path:
    """``--data-dir``, else ``$STSBENCH_DATA``, else ``./data``; the folder holds ``downstream/``."""
    if data_dir is not None:
        path, origin = Path(data_dir), "--data-dir"
    elif os.environ.get(DATA_ENV):
        path, origin = Path(os.environ[DATA_ENV]), f"${DATA_ENV}"
    else:
        path, origin = Path("data"), "the default ./data"
    path = path.expanduser()
    if must_exist and not (path / "downstream").is_dir():
        raise StsbenchError(
            f"no SentEval data at {path}/downstream (from {origin}); run `stsbench data download --data-dir "
            f"{path}` or point --data-dir / ${DATA_ENV} at a folder holding downstream/"
        )
    return path


def default_cache_dir() -> Path:
    """``$STSBENCH_CACHE``, else the user cache dir (e.g. ``~/.cache/stsbench``)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("stsbench"))
