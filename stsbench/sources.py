"""Digests of files: any file's bytes (one stat memo), and stsbench's own sources read and parsed, not imported.

These key every cache and reproduce step on its data and its code.

A cache that outlives a change of the code that filled it answers with the old code's figures: edit the ``avg``
pooler and a warm embedding cache still gave the old vectors. So every cache and every reproduce step is keyed
by the sha256 of the source files that compute it (and, where they matter, torch's and transformers' major.minor),
as the task cache already was (:func:`~stsbench.evaluation.run.load_task`). Files are read from the package
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

A file counts by what it *is* (:func:`tree_text`): its syntax tree with comments, docstrings and other bare
strings left out, walked canonically (node types and their non-empty fields, sorted), never its bytes nor
``ast.dump`` (whose text differs between Python 3.11, 3.12 and 3.13). A comment or docstring edit keeps every key;
a changed constant, name or statement moves it.
"""

from __future__ import annotations

import ast  # inspect and dataclasses import it: every CLI start has it loaded already
import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent  # the stsbench package folder

# Each kind of output and the modules whose closure computes it: the command that makes it and the library
# functions it calls (reproduce's steps are these commands in a process of their own).
ENTRIES: dict[str, tuple[str, ...]] = {
    # train.seeds plans the seeds of `train --seeds` (commands.train starts their processes)
    "train": ("stsbench.commands.train", "stsbench.train.loop", "stsbench.train.seeds"),
    "evaluate": ("stsbench.commands.run", "stsbench.evaluation.run"),
    "analysis": ("stsbench.commands.analyses", "stsbench.analyses.runner", "stsbench.analyses.registry"),
    "report": ("stsbench.commands.report", "stsbench.reports.render"),
    "bootstrap": (
        "stsbench.stats.bootstrap",
        "stsbench.tasks.intervals",
    ),  # the draw, and the call feeding it
}
# What maps a (model, text) to a vector: the encoders that run a model (hf.py), the poolers (pooling.py), the
# reading of a folder's declared settings and prompts (normalisation, lower-casing, the maximum length, the
# position limit that cuts a long text: resolve.py) and the choice among them (load.py: the pooler,
# normalisation and length a folder gets, its fix once needed a hand-bumped key; the encoder of a model in
# memory). Not cache.py (it stores vectors under their own sha256) nor fingerprint.py (the key itself).
EMBEDDING_FILES = ("encoders/hf.py", "encoders/load.py", "encoders/pooling.py", "encoders/resolve.py")

# The package files each kind's modules load at run time (beside its code: an edit is other code), relative to the
# package. The published registries are not here: they are report input, in the report step's key.
# tests/test_keys_inputs.py holds every package file either here, in the report's key or read at plan time.
PACKAGE_DATA: dict[str, tuple[str, ...]] = {
    "train": ("data/manifest.json",),
    "evaluate": ("data/manifest.json",),
    "analysis": ("data/manifest.json",),
    "report": ("reports/templates", "stats/best_of_quantiles.json"),
}
PUBLISHED_DATA = "published"  # every *.yaml there: the papers' figures the report sets beside the runs
# The libraries each kind runs on, by major.minor (a release that changes a figure changes one of those)
_MODELS = ("torch", "transformers", "tokenizers", "sentence-transformers", "numpy", "scipy")
LIBRARIES: dict[str, tuple[str, ...]] = {
    "train": ("torch", "transformers", "tokenizers", "numpy"),
    "evaluate": _MODELS,
    "analysis": _MODELS,
    "report": ("numpy", "scipy", "pandas", "matplotlib", "seaborn", "jinja2"),
}

# Files whose bytes count but whose imports are not followed: the package's __init__ (the version; its imports
# are the public API's re-exports) and this module (its ENTRIES name modules it never imports).
_NOT_FOLLOWED = ("stsbench", "stsbench.sources")
# The module that says where and how a step runs, never what it computes: the executors (local processes, Slurm)
# that `train --seeds` starts its seeds with, and the scheduler that runs reproduce's steps through them. Neither
# its bytes nor its imports count (a step's key names nothing about where it runs; tests/test_keys_inputs.py edits it
# and finds every key unchanged).
_WHERE_IT_RUNS = ("stsbench.reproduce.executors",)


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


def _module_name(text: str) -> bool:
    """Whether ``text`` names an stsbench module (``"stsbench.tasks.sts:STS12"``): dotted identifiers.

    A prefix test such as ``where.startswith("stsbench.")`` names none (``"stsbench."`` once put the package's
    ``__init__``, the whole public API, in every training key).
    """
    name = text.split(":", 1)[0]
    return name.startswith("stsbench.") and all(part.isidentifier() for part in name.split("."))


def _type_checking(test: ast.expr) -> bool:
    # `TYPE_CHECKING` or `typing.TYPE_CHECKING`: only a Name has an id, only an Attribute an attr
    return getattr(test, "id", getattr(test, "attr", None)) == "TYPE_CHECKING"


def _names(tree: ast.AST, module: str, is_package: bool) -> tuple[set[str], set[str]]:
    """The stsbench modules a file's code imports, and those its strings name (registry targets).

    Outside ``if TYPE_CHECKING:`` blocks.
    """
    found: set[str] = set()
    targets: set[str] = set()
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
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _module_name(node.value):
            targets.add(node.value.split(":", 1)[0])
        stack.extend(ast.iter_child_nodes(node))
    if is_package and any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__" for n in tree.body):
        # a lazy package (PEP 562) imports on first use a module it may name by its short name only
        # (train/config: {"TrainConfig": "options"}): each word that is one of its modules counts (others have
        # no file and are dropped by closure())
        found.update(f"{module}.{w}" for w in words)
    return {n for n in found if n == "stsbench" or n.startswith("stsbench.")}, targets


@cache
def _parsed(path: Path, size: int, mtime_ns: int, module: str) -> tuple[frozenset[str], frozenset[str]]:
    """The stsbench modules ``path`` imports and names: memoised by size and mtime in a process, on disk by content."""
    return _analysed(path.read_bytes(), str(path), module)[:2]


def _analysed(data: bytes, name: str, module: str) -> tuple[frozenset[str], frozenset[str], str]:
    """The stsbench modules a file imports and names, and its tree's sha256, from one parse (none where memoised)."""
    raw = hashlib.sha256(data).hexdigest()
    memo = _memo()
    found, tree = memo.get(f"imports:{module}:{raw}"), memo.get(f"tree:{raw}")
    if isinstance(found, list) and len(found) == 2 and isinstance(tree, str):
        return frozenset(found[0]), frozenset(found[1]), tree
    parsed = ast.parse(data, filename=name)
    imports, targets = _names(parsed, module, Path(name).name == "__init__.py")
    tree = hashlib.sha256(_canonical(parsed).encode("utf-8")).hexdigest()
    memo.update({f"imports:{module}:{raw}": [sorted(imports), sorted(targets)], f"tree:{raw}": tree})
    _MEMO_STATE["dirty"] = True
    return frozenset(imports), frozenset(targets), tree


def closure(
    modules: Iterable[str], root: Path | None = None, *, targets: bool = True, core: Iterable[str] = ()
) -> list[Path]:
    """Every source file the ``modules`` reach through imports (see the module docstring), sorted.

    ``targets``: follow the registries' ``"module:attr"`` strings too. ``core``: modules counted already, not
    followed further (a step's own targets add only what the shared core does not hold).
    """
    return sorted(set(_reach(modules, root or ROOT, targets, set(core)).values()))


def _reach(
    modules: Iterable[str], root: Path, targets: bool = True, core: set[str] | None = None
) -> dict[str, Path]:
    """``{module: file}`` of every module ``modules`` reach (:func:`closure`)."""
    seen: dict[str, Path] = {}
    frontier, start, core = list(modules), set(modules), core or set()
    while frontier:
        module = frontier.pop()
        if module in seen or module in _WHERE_IT_RUNS:
            continue
        path = _path_of(module, root)
        if path is None:  # a name imported from a module (a function, a class): not a module itself
            continue
        seen[module] = path
        if module in _NOT_FOLLOWED or (module in core and module not in start):
            continue
        st = path.stat()
        imports, named = _parsed(path, st.st_size, st.st_mtime_ns, module)
        frontier.extend((imports | named if targets else imports) - seen.keys())
    _save_memo()
    return seen


# The kinds of step whose shared core follows no registry target: each step adds the closures of the targets its
# own method, augmentation, pooler, corpus, task or analysis names (an edit to one method moves its trainings only)
PER_STEP = ("train", "evaluate", "analysis")
# beside a core's entries: the method options, which shape every resolved training config
CORE: dict[str, tuple[str, ...]] = {
    "train": tuple(f"stsbench.train.methods.{m}_options" for m in ("simcse", "esimcse", "mocose"))
}


def code_modules(kind: str, targets: Iterable[str] = (), root: Path | None = None) -> dict[str, str]:
    """``{file: its tree's sha256}`` of the code computing a step of ``kind`` that names ``targets`` (modules).

    The kind's core (:data:`ENTRIES`, :data:`CORE`; the registries' strings followed only for kinds outside
    :data:`PER_STEP`), then each target's closure beyond it (strings followed: a method's spec names its class).
    """
    root = root or ROOT
    found = _reach((*ENTRIES[kind], *CORE.get(kind, ())), root, kind not in PER_STEP)
    found.update(_reach(targets, root, core=set(found)) if targets else {})
    out = {p.relative_to(root).as_posix(): file_sha(p).hex() for p in found.values()}
    _save_memo()
    return dict(sorted(out.items()))


def _is_bare_string(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _walk(node: object, out: list[str]) -> None:
    """Append the canonical text of ``node`` (see :func:`tree_text`) to ``out``."""
    if isinstance(node, ast.AST):
        out.append(type(node).__name__ + "(")
        for name in sorted(node._fields):
            value = getattr(node, name, None)
            if value is None or (isinstance(value, list) and not value):
                continue  # absent, or a field a later Python added empty (type_params)
            if isinstance(value, list) and (name == "body" or name == "orelse" or name == "finalbody"):
                # only a docstring: `pass`
                value = [v for v in value if not _is_bare_string(v)] or [ast.Pass()]
            out.append(name + "=")
            _walk(value, out)
        out.append(")")
    elif isinstance(node, list):
        out.append("[")
        for item in node:
            _walk(item, out)
            out.append(",")
        out.append("]")
    else:  # a constant's value, an identifier, an operator's flag
        out.append(f"{type(node).__name__}:{node!r};")


def tree_text(source: str | bytes, filename: str = "<source>") -> str:
    """The canonical text of ``source``'s syntax tree: what a file of code is, without its comments and docs.

    Node types and each non-empty field in sorted order, bare strings (docstrings) left out of every body, no
    line numbers: the same text on every supported Python for the same code (``tests/test_sources.py`` pins a
    golden digest, and checks it on each other interpreter it finds).
    """
    return _canonical(ast.parse(source, filename=filename))


def _canonical(tree: ast.AST) -> str:
    out: list[str] = []
    _walk(tree, out)
    return "".join(out)


# in the cache folder: per source file's bytes' sha256, its tree's and its imports
MEMO_FILE = "code-memo.json"
_MEMO: dict[str, Any] = {}
_MEMO_STATE: dict[str, Any] = {"read": None, "dirty": False}


@cache
def _digester() -> str:
    """sha256 of this file's bytes: the code that fills the memo, which versions it."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


def _cache_file(name: str) -> Path | None:
    """``name`` in the cache folder; None where this module is read alone (another interpreter's check)."""
    try:
        from stsbench.paths import default_cache_dir

        return default_cache_dir() / name
    except ImportError:
        return None


def _read_json(where: Path) -> dict[str, Any]:
    """A memo file's dict; {} when absent or damaged (its digests are computed again)."""
    try:
        data = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(where: Path, data: dict[str, Any]) -> None:
    """Replace a memo file atomically; a cache folder that cannot be written only costs the next process."""
    from stsbench.files import atomic_write_bytes  # importable wherever _cache_file() is

    try:
        atomic_write_bytes(where, json.dumps(data).encode("utf-8"))
    except OSError:
        pass


def _memo() -> dict[str, Any]:
    """The memo of parsed files, read from the cache folder once per process (a warm process parses nothing).

    Keyed by content, not by path: the same bytes are the same tree, and import the same modules, on every
    supported Python. A damaged or absent file is parsed again, and so is a memo another version of this module
    (:func:`_digester`) wrote: discarded whole, so a warm machine and a cold one digest alike.
    """
    where = _cache_file(MEMO_FILE)
    if where is not None and _MEMO_STATE["read"] != where:
        _MEMO_STATE["read"] = where
        stored = _read_json(where)
        if stored.get("digester") == _digester():
            _MEMO.update(stored)
    return _MEMO


def _save_memo() -> None:
    """Write the memo atomically when it grew; a cache folder that cannot be written only costs parsing."""
    where = _cache_file(MEMO_FILE)
    if where is not None and _MEMO_STATE["dirty"]:
        _MEMO_STATE["dirty"] = False
        _write_json(where, {**_MEMO, "digester": _digester()})


def file_sha(path: Path) -> bytes:
    """sha256 of one source file's canonical tree (:func:`tree_text`), memoised by its bytes' sha256.

    The bytes' sha256 is :func:`sha256_file`'s: a file whose stat is unchanged is neither read nor parsed again.
    """
    raw = sha256_file(path)
    memo = _memo()
    if not isinstance(memo.get(f"tree:{raw}"), str):
        text = tree_text(path.read_bytes(), str(path))
        memo[f"tree:{raw}"] = hashlib.sha256(text.encode("utf-8")).hexdigest()
        _MEMO_STATE["dirty"] = True
    return bytes.fromhex(memo[f"tree:{raw}"])


# -- the bytes of any file: one digest, one stat memo ---------------------------------------------------------------

# in the cache folder: absolute path -> [size, mtime_ns, sha256, ctime_ns, inode]
SHA_FILE = "file-sha256.json"
_STAMPS: dict[str, list] = {}
_STAMPS_READ: set[Path] = set()


def bytes_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read now in 4 MiB chunks: the one place a file is read for its digest."""
    h = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_files(files: Iterable[Path], *, fresh: bool = False) -> dict[Path, str]:
    """sha256 of each file's bytes, read only where its stat moved since it was last digested.

    The stat: size, mtime_ns, ctime_ns and inode, remembered in this process and on disk for every process
    (``<cache dir>/file-sha256.json``). The one byte digest of stsbench: data files, a step's sealed outputs, a model's files, source files (under
    :func:`file_sha`'s tree). An mtime can be set back (``touch -r``, ``cp -p``), a ctime cannot, and a file
    replaced is another inode. ``fresh``: read every file now (``stsbench data verify``, which trusts no memo).
    """
    where = _cache_file(SHA_FILE)
    if where is not None and where not in _STAMPS_READ:
        _STAMPS.update(_read_json(where))
        _STAMPS_READ.add(where)
    out, grew = {}, False
    for f in files:
        key = str(Path(f).absolute())
        st = Path(key).stat()
        hit, stamp = _STAMPS.get(key), [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        if fresh or not (isinstance(hit, list) and len(hit) == 5 and hit[:2] + hit[3:] == stamp):
            new = [*stamp[:2], bytes_sha256(Path(key)), *stamp[2:]]
            grew = grew or new != hit
            hit = _STAMPS[key] = new
        out[Path(f)] = hit[2]
    if grew and where is not None:  # merged with what another process wrote meanwhile, the files gone dropped
        _write_json(where, {k: v for k, v in {**_read_json(where), **_STAMPS}.items() if Path(k).exists()})
    return out


def sha256_file(path: Path, *, fresh: bool = False) -> str:
    """The sha256 of one file's bytes (:func:`sha256_files`)."""
    return sha256_files([path], fresh=fresh)[Path(path)]


def files_digest(files: Iterable[Path], root: Path | None = None) -> str:
    """sha256 over each file's path (relative to ``root``) and what it is (:func:`file_sha`)."""
    root = root or ROOT
    h = hashlib.sha256()
    for f in sorted(files):
        h.update(f"{f.relative_to(root).as_posix()}\0".encode() + file_sha(f))
    _save_memo()
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
    if kind not in ENTRIES:
        raise ValueError(f"no code digest for {kind!r}; known: {', '.join([*ENTRIES, 'embedding'])}")
    return files_digest(closure(ENTRIES[kind], root), root)


def library_versions(names: Iterable[str] = ("torch", "transformers")) -> dict[str, str]:
    """``{"torch": "2.13", ...}``: each installed library's major.minor (read from its metadata, not imported)."""
    return {name: ".".join(distribution_version(name).split("+")[0].split(".")[:2]) for name in names}


def distribution_version(name: str) -> str:
    """An installed distribution's version (its metadata, nothing imported); ``absent`` where it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "absent"


def _data_files(rel: str) -> dict[str, Path]:
    """``{name: file}`` of a :data:`PACKAGE_DATA` entry (a file, or every file of a folder), named from ``rel``."""
    path = ROOT / rel
    if not path.is_dir():
        return {rel: path}
    found = (f for f in path.rglob("*") if f.is_file() and "__pycache__" not in f.parts)
    return {f"{rel}/{f.relative_to(path).as_posix()}": f for f in sorted(found)}


def package_data_digest(kind: str) -> str:
    """sha256 over the package files :data:`PACKAGE_DATA` names for ``kind`` (their names and bytes)."""
    h = hashlib.sha256()
    for name, f in (item for rel in PACKAGE_DATA.get(kind, ()) for item in _data_files(rel).items()):
        h.update(f"{name}\0".encode())
        h.update(hashlib.sha256(f.read_bytes()).digest() if f.is_file() else b"absent")
    return h.hexdigest()


def published_digest() -> dict[str, str]:
    """``{file: sha256}`` of every published registry and the figures' registry (``published/*.yaml``)."""
    return {
        f.name: hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted((ROOT / PUBLISHED_DATA).glob("*.yaml"))
    }


def module_identity(module: str) -> dict[str, Any]:
    """A plugin's code as a key holds it: its top-level package's files (syntax trees), its distribution and version.

    Every ``.py`` file of the package counts, so an edit to a helper its entry calls moves the digest too. Found
    without importing it (``importlib.util.find_spec`` of a top-level name imports nothing).
    """
    import importlib.util
    from importlib import metadata

    top = module.split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    files: dict[str, Path] = {}  # name relative to the package -> file
    if spec is not None and spec.submodule_search_locations:
        for loc in map(Path, spec.submodule_search_locations):
            files.update({f.relative_to(loc).as_posix(): f for f in loc.rglob("*.py")})
    elif spec is not None and spec.origin and spec.origin.endswith(".py"):
        files = {Path(spec.origin).name: Path(spec.origin)}
    h = hashlib.sha256()
    for rel, f in sorted(files.items()):
        h.update(f"{rel}\0".encode() + file_sha(f))
    dists = metadata.packages_distributions().get(top, [])
    name = dists[0] if dists else None
    return {
        "module": top,
        "distribution": name,
        "version": distribution_version(name) if name else None,
        "code": h.hexdigest() if files else None,
    }
