"""Reaching the Hugging Face hub: fail fast, in one line, when there is no route to it."""

from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

from stsbench.errors import StsbenchError


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
