"""No import cycle at any depth in stsbench: every module, not only between top-level packages.

What counts (grimp builds the graph from the sources, nothing is imported): every ``import`` in a module, at its
top, inside a function or under ``if TYPE_CHECKING:`` (an annotation that needs a module above it is a layering to
fix, not to hide); and importing ``a.b.c``
imports the packages ``a.b`` and ``a`` first, so a package whose ``__init__`` imports one of its modules that
imports back into the package is a cycle too. The import-linter contracts (pyproject, ``lint-imports`` in CI)
check the packages' siblings at every depth; this test checks the modules themselves.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import grimp


def module_graph(package: str) -> dict[str, set[str]]:
    """Each module of ``package`` -> the modules of ``package`` it imports, with the packages those imply."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        out: set[str] = set()
        for target in graph.find_modules_directly_imported_by(module):
            parts = target.split(".")
            out.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))  # the target and its packages
        out.discard(module)
        edges[module] = out
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def test_stsbench_has_no_import_cycle_at_any_depth():
    assert cycles(module_graph("stsbench")) == []


def test_the_check_finds_each_kind_of_cycle(tmp_path, monkeypatch):
    """A function-level import, a package whose __init__ imports a module that imports its sibling, a TYPE_CHECKING one."""
    files = {
        "toypkg/__init__.py": "",
        "toypkg/a.py": "def f():\n    from toypkg import b\n",
        "toypkg/b.py": "import toypkg.a\n",
        "toypkg/sub/__init__.py": "from toypkg.sub import one\n",
        "toypkg/sub/one.py": "from toypkg.sub import two\n",
        "toypkg/sub/two.py": "",
        "toypkg/typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import toypkg.typed2\n",
        "toypkg/typed2.py": "import toypkg.typed\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))
    found = cycles(module_graph("toypkg"))
    sys.modules.pop("toypkg", None)
    assert found == [["toypkg.a", "toypkg.b"], ["toypkg.sub", "toypkg.sub.one"], ["toypkg.typed", "toypkg.typed2"]]


def test_the_contracts_cover_every_package():
    """import-linter's acyclic contract reaches the deepest package (pyproject's ``depth``)."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    config = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]
    (acyclic,) = [c for c in config["contracts"] if c["type"] == "acyclic_siblings"]
    packages = {p.parent.relative_to(root).parts for p in (root / "stsbench").rglob("__init__.py")}
    deepest = max(len(parts) for parts in packages)  # ("stsbench", "train", "config"): 3
    assert acyclic["depth"] >= deepest - 1 and config["exclude_type_checking_imports"] is False
