"""The layers and the absence of import cycles are a contract (pyproject's ``[tool.importlinter]``), checked here.

``lint-imports`` must pass on the package, and fail once one module imports a layer above its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
pytestmark = pytest.mark.skipif(
    LINT is None, reason="import-linter is in the dev extra: pip install -e '.[dev]'"
)


def _lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root)}  # the stsbench under ``root``, not the installed one
    done = subprocess.run([LINT, "--no-cache"], cwd=root, env=env, capture_output=True, text=True, timeout=300)
    done.stdout = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)  # import-linter 2.6 colours its lines even in a pipe
    return done


def test_the_package_keeps_its_layers_and_has_no_cycles():
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    ("module", "upward", "broken"),
    [
        ("data/__init__.py", "from stsbench.results import schema", ["Layers"]),  # data is below results
        # tasks import stats: a cycle as well
        ("stats/__init__.py", "from stsbench.tasks import registry", ["Layers", "No import cycles"]),
    ],
)
def test_an_upward_import_breaks_the_contract(module, upward, broken, tmp_path):
    shutil.copytree(ROOT / "stsbench", tmp_path / "stsbench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    assert _lint(tmp_path).returncode == 0  # the copy as it is keeps both contracts
    target = tmp_path / "stsbench" / module
    target.write_text(target.read_text() + f"\n{upward}  # upward\n")
    done = _lint(tmp_path)
    assert done.returncode != 0
    for name in broken:
        assert any(line.startswith(name) and line.endswith("BROKEN") for line in done.stdout.splitlines())
    importer = "stsbench." + module.removesuffix("/__init__.py").replace("/", ".")
    assert importer in done.stdout, done.stdout
