"""Where data, caches and results live; the Hugging Face hub, reached or refused in one line.

Without a route to the hub a download fails fast, saying why, instead of retrying for minutes.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

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


def hub_offline_reason() -> str | None:
    """Why the hub cannot be reached, or None when it can (or a proxy decides)."""
    if os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "", "false", "False"):
        return "HF_HUB_OFFLINE is set"
    if any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")):
        return None
    from huggingface_hub import constants

    host = urlparse(constants.ENDPOINT).hostname or "huggingface.co"
    try:
        socket.create_connection((host, 443), timeout=5).close()
    except OSError as exc:
        return f"no connection to {host}: {exc.strerror or exc}"
    return None


def quiet_hub_errors() -> None:
    """Keep the hub client's retry chatter off the user's terminal (stsbench says what failed, once)."""
    from huggingface_hub.utils import logging as hf_logging

    hf_logging.set_verbosity_error()


def first_line(exc: BaseException, limit: int = 160) -> str:
    """The first line of an exception message, cut at a word boundary."""
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " ..."


def require_hub(what: str, advice: str) -> None:
    """Raise a one-line StsbenchError when the hub is unreachable and nothing local can stand in."""
    reason = hub_offline_reason()
    if reason is not None and reason != "HF_HUB_OFFLINE is set":
        raise StsbenchError(f"cannot fetch {what} from the Hugging Face hub ({reason}); {advice}")
    quiet_hub_errors()
