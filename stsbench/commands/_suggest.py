"""A mistyped model name's nearest known one, added to the one line its failure ends in.

``stsbench run --model all-MiniLM-L6-v3`` fails where the model is looked up (a folder, the local hub cache, the
hub), which knows nothing of the names stsbench ships; the CLI adds ``did you mean all-MiniLM-L6-v2?`` to that
line (:func:`with_suggestion`), offline too. Known names: the embedded model, the backbones of the packaged
training configs and the models in the local hub cache.
"""

from __future__ import annotations

import difflib
import re

# the lookup's failures for a name that is no folder and no model it could fetch (stsbench.encoders.resolve)
_UNKNOWN_MODEL = re.compile(
    r"\bmodel '(?P<name>[^']+)' (?:is not a local folder|is neither a folder|from the Hugging Face hub)"
)
CUTOFF = 0.8  # difflib's ratio: a changed character or two in a name of 15


def known_models() -> list[str]:
    """The model names stsbench knows without the hub: embedded, the packaged configs', the local hub cache's."""
    import yaml

    from stsbench.configs import config_names, config_path
    from stsbench.encoders.resolve import EMBEDDED_DEFAULT

    names = {EMBEDDED_DEFAULT, f"sentence-transformers/{EMBEDDED_DEFAULT}"}
    for config in config_names():
        try:
            model = (yaml.safe_load(config_path(config).read_text(encoding="utf-8")) or {}).get("model")
        except (OSError, yaml.YAMLError, AttributeError):
            continue
        if isinstance(model, str):
            names.add(model)
    try:
        from huggingface_hub import scan_cache_dir

        names.update(r.repo_id for r in scan_cache_dir().repos if r.repo_type == "model")
    except Exception:  # noqa: BLE001, S110 - no cache, or one it cannot read: the names above
        pass
    return sorted(names)


def nearest_model(name: str, known: list[str] | None = None) -> str | None:
    """The known model name closest to ``name`` (case aside), or None: none is close, or ``name`` is one."""
    known = known_models() if known is None else known
    by_lower = {k.lower(): k for k in known}
    if name.lower() in by_lower:
        return None
    near = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=CUTOFF)
    return by_lower[near[0]] if near else None


def with_suggestion(message: str) -> str:
    """``message`` with ``; did you mean NAME?`` after it when it is a model lookup's failure for a near name."""
    found = _UNKNOWN_MODEL.search(message)
    if found is None:
        return message
    near = nearest_model(found["name"])
    return f"{message}; did you mean {near}?" if near else message
