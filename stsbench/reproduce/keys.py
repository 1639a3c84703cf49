"""What keys a reproduce step: what its inputs *are*, never where they lie.

A step's ``key`` is the sha256 of its material: the settings, the data files' digests under their names
relative to the data folder (a corpus by its name and digest), the keys of the steps it reads, and for the
report its arguments with the reproduction's folder written ``OUT``. The same data folder given as
a relative path, as its absolute path or through a link, or moved elsewhere, gives the same keys. A step's
``code`` is what the code that computes it is (:func:`stsbench.sources.code_digest`: syntax trees, not bytes).

Each key is also computed the two ways earlier stsbench did, for records made then: ``previous_key`` (the
previous form: files under their absolute paths, the report's folders as given, the code's bytes in
``previous_code``) and ``legacy_key`` (0.1.0: the version in the key, no code recorded). A record whose key is
the previous one for today's inputs is the same step: it is rewritten once in the new form
(:func:`stsbench.reproduce.state.migrated`), its code too where the code is today's in the old form.

Each record also keeps its key's ``parts`` (a digest per field of the material, per option of a training's
config), so that a step that runs again can say which part changed (:func:`changed_parts`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

LEGACY_VERSION = "0.1.0"  # what keys held before the code had a digest of its own


def digest(obj: Any) -> str:
    """sha256 of ``obj`` as canonical JSON (sorted keys; paths as strings)."""
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha256s(files: Iterable[Path]) -> dict[Path, str | None]:
    """sha256 of each file (the data folder's cached ones, :func:`stsbench.data.integrity.file_sha256s`); None if absent."""
    from stsbench.data.integrity import file_sha256s

    files = sorted(set(files))
    sums = file_sha256s([f for f in files if f.is_file()])
    return {f: sums.get(f) for f in files}


def data_name(path: Path, data_dir: Path) -> str:
    """A data file's name: its path relative to the data folder, or its file name when it lies outside it."""
    return path.relative_to(data_dir).as_posix() if path.is_relative_to(data_dir) else path.name


def named_digests(files: Iterable[Path], data_dir: Path) -> dict[str, str | None]:
    """``{name relative to the data folder: sha256}`` of each file (None: absent)."""
    return {data_name(f, data_dir): sha for f, sha in _sha256s(files).items()}


def path_digests(files: Iterable[Path]) -> dict[str, str | None]:
    """``{path as planned: sha256}``: data files as the old form held them (:attr:`Keys.previous_key`)."""
    return {str(f): sha for f, sha in _sha256s(files).items()}


def corpus_entry(path: Path, data_dir: Path, lines: int | None = None) -> dict[str, Any]:
    """A corpus as a key holds it: its name (relative to the data folder), its digest and the lines read."""
    ((name, sha),) = named_digests([path], data_dir).items()
    return {"name": name, "sha256": sha, "lines": lines}


@dataclass(frozen=True)
class Keys:
    """A step's key in today's form, in the previous one, as 0.1.0 computed it, and the parts of today's."""

    key: str
    previous_key: str
    legacy_key: str
    parts: dict[str, str] = field(default_factory=dict)


def make_keys(
    material: dict[str, Any], previous: dict[str, Any], legacy: dict[str, Any] | None = None
) -> Keys:
    """The keys of ``material`` (today's form) and ``previous`` (the same inputs keyed in the previous form).

    ``legacy``: what differs in 0.1.0's material from ``previous`` (the keys of the steps read, which were
    legacy keys too).
    """
    old = {**previous, **(legacy or {}), "stsbench": LEGACY_VERSION}
    return Keys(digest(material), digest(previous), digest(old), key_parts(material))


def key_parts(material: dict[str, Any]) -> dict[str, str]:
    """A digest per field of ``material``; a mapping's fields one level down (``config.temperature``)."""
    parts = {}
    for name, value in material.items():
        if isinstance(value, dict) and value:
            parts.update({f"{name}.{k}": digest(v) for k, v in value.items()})
        else:
            parts[name] = digest(value)
    return parts


# the names a step's reason gives its key's parts
_PART_WORDS = {
    "corpus.sha256": "the corpus' content",
    "corpus.name": "the corpus' name",
    "corpus.lines": "the corpus lines read",
    "deps": "a step it reads",
    "args": "the report's options",
    "claims": "the claims",
    "model": "its model",
}


def changed_parts(recorded: dict[str, str] | None, parts: dict[str, str]) -> list[str]:
    """The parts of a key that differ between a record's ``recorded`` parts and today's, in words."""
    if not recorded:
        return []
    names = sorted(n for n in {*recorded, *parts} if recorded.get(n) != parts.get(n))
    words = []
    for n in names:
        if n in _PART_WORDS:
            words.append(_PART_WORDS[n])
        elif n.startswith("config."):
            words.append(f"option {n.split('.', 1)[1]}")
        elif n.startswith(("data.", "inputs.", "published_files.")):
            words.append(f"data file {n.split('.', 1)[1]}")
        else:
            words.append(n)
    return list(dict.fromkeys(words))


# options added after reproductions were recorded, at the value that trains as before: left out of a training's
# key there, so that a reproduction made before the option existed stays current (its code digest still moves)
NEUTRAL_DEFAULTS: dict[str, Any] = {"select_on": "stsb-dev", "augment": "none", "augment_views": "declared"}


def key_config(config: dict[str, Any], previous: bool = False) -> dict[str, Any]:
    """The options that key a training: all but where it writes, its data folder and the neutral defaults.

    Today's form leaves out ``train_file`` too (the corpus is keyed by its name and digest); ``previous``: the
    previous form, which held it as written.
    """
    dropped = ("output", "data_dir") if previous else ("output", "data_dir", "train_file")
    return {
        k: v
        for k, v in config.items()
        if k not in dropped and not (k in NEUTRAL_DEFAULTS and NEUTRAL_DEFAULTS[k] == v)
    }


@cache
def code_of(kind: str, form: str = "tree") -> str:
    """The digest of the code that computes a step of ``kind`` (a training's: with torch's, transformers').

    ``form="bytes"``: as stsbench computed it before it read syntax trees (for the migration). Computed once
    per process: the code a process plans with is the code it was started with.
    """
    from stsbench.sources import code_digest, library_versions

    if kind != "train":
        return code_digest(kind, form=form)
    return digest({"code": code_digest(kind, form=form), "libraries": library_versions()})


def train_code(pooler: str | None, form: str = "tree") -> str:
    """A training's code: the trainer's, and a plugin pooler's own source (``stsbench.poolers``)."""
    from stsbench.encoders.pooling import POOLERS, pooler_source

    if pooler is None or pooler in POOLERS:
        return code_of("train", form)
    return digest({"code": code_of("train", form), "pooler": pooler_source(pooler)})
