"""A built-in method is its two files: nothing else in stsbench names what is specific to it.

A method's files are ``stsbench/train/methods/<name>.py`` (its class) and ``<name>_options.py`` (its spec and
option groups), with its configs (``stsbench/configs/<name>-*.yaml``). Every other module of the package: imports
neither file, names none of their own symbols (classes, functions, constants defined there and in no other
method's files), and names the module by one registry line only (``train/config/options.py``). The trainer
(``stsbench/train`` outside ``methods/``) never tests which method it runs: no built-in method's name appears in
its code. Read from the sources (``ast``), nothing imported.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "stsbench"
METHODS_DIR = PACKAGE / "train" / "methods"
BUILTIN = ("simcse", "esimcse", "mocose")
REGISTRY = PACKAGE / "train" / "config" / "options.py"


def own_files(method: str) -> list[Path]:
    return [METHODS_DIR / f"{method}.py", METHODS_DIR / f"{method}_options.py"]


def defined(path: Path) -> set[str]:
    """The names a module defines at its top level (classes, functions, assignments)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def specific_symbols() -> dict[str, set[str]]:
    """Each built-in method's own symbols: defined in its files and in no other method's (SPEC is everyone's)."""
    mine = {m: set().union(*(defined(p) for p in own_files(m))) for m in BUILTIN}
    return {m: names - set().union(*(mine[o] for o in BUILTIN if o != m)) for m, names in mine.items()}


def offences(path: Path, method: str, symbols: set[str]) -> list[str]:
    """Where module ``path`` names what is specific to ``method``: imports, bare names, module paths."""
    modules = {f"stsbench.train.methods.{method}", f"stsbench.train.methods.{method}_options"}
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.ImportFrom):
            if node.module in modules or any(
                f"{node.module}.{a.name}" in modules or a.name in symbols for a in node.names
            ):
                found.append(f"{line}: imports from {node.module}")
        elif isinstance(node, ast.Import) and any(a.name in modules for a in node.names):
            found.append(f"{line}: imports {method}'s module")
        elif isinstance(node, ast.Name) and node.id in symbols:
            found.append(f"{line}: names {node.id}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if any(m in node.value for m in modules):
                found.append(f"{line}: names the module in {node.value!r}")
    return found


def test_each_method_has_symbols_of_its_own():
    """The check is not empty: each method defines classes and helpers of its own."""
    symbols = specific_symbols()
    assert {"SimCSE", "SupSimCSE"} <= symbols["simcse"]
    assert {"ESimCSE", "ESimCSEOptions"} <= symbols["esimcse"]
    assert {"MoCoSE", "MoCoSEOptions", "mocose_decay", "fgsm", "parse_slices"} <= symbols["mocose"]


@pytest.mark.parametrize("method", BUILTIN)
def test_outside_its_files_only_the_registry_names_a_method(method):
    symbols = specific_symbols()[method]
    mine = set(own_files(method))
    problems = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in mine:
            continue
        found = offences(path, method, symbols)
        if path == REGISTRY:  # one line: METHODS.register(name, "<module>:SPEC")
            assert (
                len(found) == 1
                and "register" in path.read_text().splitlines()[int(found[0].split(":")[0]) - 1]
            )
            continue
        if found:
            problems[str(path.relative_to(PACKAGE.parent))] = found
    assert problems == {}


def test_the_trainer_never_tests_which_method_it_runs():
    """No built-in method's name in the code of stsbench/train outside methods/ (the registry's lines apart)."""
    found = []
    for path in sorted((PACKAGE / "train").rglob("*.py")):
        if METHODS_DIR in path.parents or path == REGISTRY:
            continue
        tree = ast.parse(path.read_text())
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if node.value.lower() in BUILTIN or node.value.lower() in {f"sup-{m}" for m in BUILTIN}:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_the_check_catches_a_module_that_reaches_into_a_method(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        "from stsbench.train.methods.mocose import fgsm\n"
        "import stsbench.train.methods.esimcse_options\n"
        "x = MoCoSE\n"
        "target = 'stsbench.train.methods.mocose:MoCoSE'\n"
    )
    symbols = specific_symbols()
    assert [f.split(":")[0] for f in offences(bad, "mocose", symbols["mocose"])] == ["1", "3", "4"]
    assert offences(bad, "esimcse", symbols["esimcse"]) == ["2: imports esimcse's module"]
