"""Prompts prepended to every text, as sentence-transformers' ``encode(prompt=..., prompt_name=...)`` does.

A model folder may store named prompts in ``config_sentence_transformers.json`` (``"prompts": {"query":
"query: "}``) and a ``default_prompt_name`` that applies when no prompt is asked for. The rules are
sentence-transformers' (``SentenceTransformer._resolve_prompt``): ``prompt`` wins, else ``prompt_name`` is
looked up, else the default applies; an empty prompt means none (and turns the default off). The text is
prepended to each sentence before tokenizing, for every kind of model; a Pooling module with
``include_prompt: false`` (which excludes the prompt's tokens from the mean) is run by sentence-transformers
itself. Reads JSON only: the cached path imports no torch.
"""

from __future__ import annotations

import json
from pathlib import Path

from stsbench.errors import StsbenchError

ST_CONFIG = "config_sentence_transformers.json"


def stored_prompts(path: Path) -> tuple[dict[str, str], str | None]:
    """``(prompts, default_prompt_name)`` a model folder stores (``({}, None)`` when it stores none)."""
    try:
        cfg = json.loads((Path(path) / ST_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, None
    if not isinstance(cfg, dict):
        return {}, None
    prompts = cfg.get("prompts") if isinstance(cfg.get("prompts"), dict) else {}
    default = cfg.get("default_prompt_name")
    return {str(k): str(v or "") for k, v in prompts.items()}, default if isinstance(default, str) else None


def check_prompt_options(prompt: str | None, prompt_name: str | None) -> None:
    """Refuse ``--prompt`` with ``--prompt-name``: sentence-transformers ignores the name then, we say so."""
    if prompt is not None and prompt_name is not None:
        raise StsbenchError("pass --prompt TEXT or --prompt-name NAME, not both")


def choose_prompt(
    prompts: dict[str, str],
    default_name: str | None,
    prompt: str | None,
    prompt_name: str | None,
    where: str,
) -> tuple[str | None, str | None]:
    """``(prompt text, its stored name)`` to encode with; ``(None, None)`` for none. ``where`` names the model."""
    check_prompt_options(prompt, prompt_name)
    if prompt_name is not None:
        if prompt_name not in prompts:
            stored = f"stores the prompts {', '.join(sorted(prompts))}" if prompts else "stores no prompts"
            raise StsbenchError(
                f"--prompt-name {prompt_name}: model {where} {stored} ({ST_CONFIG}); pass one of them "
                "or the text with --prompt"
            )
        text = prompts[prompt_name]
        return (text, prompt_name) if text else (None, None)
    if prompt is None and default_name is not None and prompts.get(default_name):
        return prompts[default_name], default_name
    return (prompt, None) if prompt else (None, None)


def prompt_suffix(prompt: str | None, prompt_name: str | None) -> str:
    """What a label adds for a prompted model: `` [prompt query]``, `` [prompt 'query: ']``; "" without one."""
    if not prompt:
        return ""
    return f" [prompt {prompt_name}]" if prompt_name else f" [prompt {prompt!r}]"


def prompt_slug(prompt: str | None) -> str:
    """What a results folder adds for a prompted model: ``+prompt-<8 hex of the text>``; "" without one."""
    if not prompt:
        return ""
    import hashlib

    return "+prompt-" + hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8]
