"""Digests of stsbench's own source files, read as bytes, nothing imported: what keys a cache on its code.

A cache that outlives a change of the code that filled it answers with the old code's figures: edit the ``avg``
pooler and a warm embedding cache still gave the old vectors. So every cache and every reproduce step is keyed
by the sha256 of the source files that compute it (and, where they matter, torch's and transformers' major.minor),
as the task cache already was (:mod:`stsbench.evaluation.task_cache`). Files are read as bytes from the package
folder, never imported: a warm ``stsbench run`` stays fast and loads no torch.

What each key covers (:data:`ENTRIES`): the static import closure of the module(s) that compute that output.
The closure follows every ``import`` and ``from ... import`` of an ``stsbench`` module in a file, those inside
functions included (the CLI imports lazily), but not those under ``if TYPE_CHECKING:`` (never run); and every
string literal naming an ``stsbench`` module (``"stsbench.tasks.sts:STS12"``: the registries' lazy targets). A
package's ``__init__.py`` counts only where it is imported by name, not as the parent of every module below it
(``stsbench/__init__.py`` imports the public API, so counting it would make every key depend on all the code:
its own bytes count where it is imported, for the version, but not what it imports). A package whose
``__init__.py`` defines ``__getattr__`` (PEP 562: names imported on first use) reaches each of its modules that
a string in it names by its short name (``train/config``'s ``"options"``, ``"load"``, ``"resolve"``).
The embedding key (:data:`EMBEDDING_FILES`) names its files instead: it is computed on every warm run.
"""

from __future__ import annotations

import ast  # inspect and dataclasses import it: every CLI start has it loaded already
import hashlib
from collections.abc import Iterable
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent  # the stsbench package folder

# Each kind of output and the modules whose closure computes it: the command that makes it and the library
# functions it calls (reproduce's steps are these commands in a process of their own).
ENTRIES: dict[str, tuple[str, ...]] = {
    "train": ("stsbench.commands.train", "stsbench.train.loop", "stsbench.train.seeds"),
    "evaluate": ("stsbench.commands.run", "stsbench.evaluation.run", "stsbench.evaluation.seeds"),
    "analysis": ("stsbench.commands.analyses", "stsbench.analyses.runner", "stsbench.analyses.builtin"),
    "report": ("stsbench.commands.report", "stsbench.reports.render"),
    "bootstrap": ("stsbench.stats.bootstrap", "stsbench.tasks.intervals"),  # the draw, and the call that feeds it
}
# What maps a (model, text) to a vector: the encoders that run a model (hf.py; live.py for one in memory), the
# poolers, prompts, the reading of a folder's declared settings (normalisation, lower-casing, the maximum length:
# resolve.py; the position limit that cuts a long text: folder.py) and the choice among them (load.py: the pooler,
# normalisation and length a folder gets; its fix once needed a hand-bumped key). Not cache.py (it stores vectors
# under their own sha256) nor fingerprint.py (the key itself).
EMBEDDING_FILES = (
    "encoders/folder.py",
    "encoders/hf.py",
    "encoders/live.py",
    "encoders/load.py",
    "encoders/pooling.py",
    "encoders/prompts.py",
    "encoders/resolve.py",
)


# Files whose bytes count but whose imports are not followed: the package's __init__ (the version; its imports
# are the public API's re-exports) and this module (its ENTRIES name modules it never imports).
_NOT_FOLLOWED = ("stsbench", "stsbench.sources")


def _path_of(module: str, root: Path) -> Path | None:
    """The file of ``stsbench.x.y`` under ``root`` (a module file or a package's ``__init__.py``), or None."""
    parts = module.split(".")[1:]
    if not parts:
        return root / "__init__.py"
    base = root.joinpath(*parts)
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _names(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The stsbench modules a file's code imports or names, outside ``if TYPE_CHECKING:`` blocks."""
    found: set[str] = set()
    words: set[str] = set()  # a lazy package's short module names ("resolve"), see below
    package = module if is_package else module.rpartition(".")[0]
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            words.add(node.value)
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{a.name}" for a in node.names)  # `from pkg import module`
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("stsbench."):
            found.add(node.value.split(":", 1)[0])
        stack.extend(ast.iter_child_nodes(node))
    if is_package and any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
        # a lazy package (PEP 562) imports on first use a module it may name by its short name only
        # (train/config: {"TrainConfig": "options"}): each word that is one of its modules counts (others have
        # no file and are dropped by closure())
        found.update(f"{module}.{w}" for w in words)
    return {n for n in found if n == "stsbench" or n.startswith("stsbench.")}


@cache
def _parsed(path: Path, size: int, mtime_ns: int, module: str) -> frozenset[str]:
    """The stsbench modules ``path`` imports (memoised by its size and mtime: parsed once per process)."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    return frozenset(_names(tree, module, path.name == "__init__.py"))


def closure(modules: Iterable[str], root: Path | None = None) -> list[Path]:
    """Every source file the ``modules`` reach through imports (see the module docstring), sorted."""
    root = root or ROOT
    seen: dict[str, Path] = {}
    frontier = list(modules)
    while frontier:
        module = frontier.pop()
        if module in seen:
            continue
        path = _path_of(module, root)
        if path is None:  # a name imported from a module (a function, a class): not a module itself
            continue
        seen[module] = path
        if module in _NOT_FOLLOWED:
            continue
        st = path.stat()
        frontier.extend(_parsed(path, st.st_size, st.st_mtime_ns, module) - seen.keys())
    return sorted(set(seen.values()))


def files_digest(files: Iterable[Path], root: Path | None = None) -> str:
    """sha256 over each file's path (relative to ``root``) and bytes."""
    root = root or ROOT
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f"{f.relative_to(root).as_posix()}\0".encode())
        h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def source_digest(*relpaths: str, root: Path | None = None) -> str:
    """sha256 of the named files and folders under ``root`` (a folder: every ``.py`` below it)."""
    root = root or ROOT
    files: set[Path] = set()
    for rel in relpaths:
        path = root / rel
        files.update(path.rglob("*.py") if path.is_dir() else [path])
    return files_digest(files, root)


def code_digest(kind: str, root: Path | None = None) -> str:
    """The digest of the code that computes an output of ``kind`` (:data:`ENTRIES`; ``embedding`` too).

    ``root``: the package folder to read (default :data:`ROOT`, this one).
    """
    if kind == "embedding":
        return source_digest(*EMBEDDING_FILES, root=root)
    try:
        entries = ENTRIES[kind]
    except KeyError:
        raise ValueError(f"no code digest for {kind!r}; known: {', '.join([*ENTRIES, 'embedding'])}") from None
    return files_digest(closure(entries, root), root)


def library_versions(names: Iterable[str] = ("torch", "transformers")) -> dict[str, str]:
    """``{"torch": "2.13", ...}``: each installed library's major.minor (read from its metadata, not imported)."""
    from importlib import metadata

    out = {}
    for name in names:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        out[name] = ".".join(version.split("+")[0].split(".")[:2])
    return out
