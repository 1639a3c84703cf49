"""A mistyped model name's nearest known one, added to the one line its failure ends in.

``stsbench run --model all-MiniLM-L6-v3`` fails where the model is looked up (a folder, the local hub cache, the
hub), which knows nothing of the names stsbench ships; the CLI adds ``did you mean
sentence-transformers/all-MiniLM-L6-v2 or sentence-transformers/all-MiniLM-L6-v3?`` to that line
(:func:`with_suggestion`), offline too. Known names: the embedded model, the backbones of the packaged training
configs and the models in the local hub cache. A hint names a full hub id, one the hub would find: a known name
under its owner where one is known (``sentence-transformers/all-MiniLM-L6-v2``, not the embedded copy's short
name), and a bare name near a known owner's model also under that owner: offline, ``all-MiniLM-L12-v2`` may be a
typo of ``all-MiniLM-L6-v2`` or another model of ``sentence-transformers`` that lacks its owner, so both are named.
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


def _owner_less(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def nearest_model(name: str, known: list[str] | None = None) -> str | None:
    """The full hub id of the known model closest to ``name`` (case aside), or None: none is close, or it is ``name``.

    A bare ``name`` (no owner) is matched against the known names without their owners too, so ``all-minilm-l6-v3``
    and ``all-MiniLM-L12-v2`` (in the local hub cache as ``sentence-transformers/all-MiniLM-L12-v2``) find theirs.
    """
    known = known_models() if known is None else known
    # a known hub id by its name without the owner (the first owner sorted where two share a name), and a bare
    # known name under its owner where one is known: the embedded all-MiniLM-L6-v2 as sentence-transformers'
    owned = {_owner_less(k).lower(): k for k in sorted(known, reverse=True) if "/" in k}
    by_lower = {k.lower(): owned.get(k.lower(), k) for k in known}
    if "/" not in name:
        by_lower = {**owned, **by_lower}
    full = by_lower.get(name.lower())
    if full is not None:
        return None if full.lower() == name.lower() else full
    near = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=CUTOFF)
    return by_lower[near[0]] if near else None


def suggestions(name: str, known: list[str] | None = None) -> list[str]:
    """The full hub ids ``name`` may have meant: the nearest known one, and ``name`` under its owner when bare."""
    near = nearest_model(name, known)
    if near is None:
        return []
    found = [near]
    if "/" not in name and "/" in near and _owner_less(near).lower() != name.lower():
        found.append(f"{near.rsplit('/', 1)[0]}/{name}")  # not a typo but another model of that owner
    return found


def with_suggestion(message: str) -> str:
    """``message`` with ``; did you mean ID?`` after it when it is a model lookup's failure for a near name."""
    found = _UNKNOWN_MODEL.search(message)
    if found is None:
        return message
    names = suggestions(found["name"])
    return f"{message}; did you mean {' or '.join(names)}?" if names else message
