"""The dependency floors CI installs (.ci/floors.py) are pyproject's, and every dependency declares one."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytest.importorskip("tomllib", reason=".ci/floors.py reads pyproject.toml with tomllib (Python >= 3.11)")


def test_floors_pin_every_declared_floor():
    import tomllib

    out = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "floors.py"), "integrations"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.splitlines()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = project["dependencies"] + project["optional-dependencies"]["integrations"]
    floors = [r.split("#")[0].split(",<")[0].strip() for r in declared if not r.startswith("torch>=")]
    want = [r.replace(">=", "==") for r in floors]  # an upper bound (seaborn's) is not a floor
    assert out[: len(want)] == want
    assert {"transformers==4.56", "sentence-transformers==3.3", "safetensors==0.4.3"} <= set(out)
    assert out[len(want) :] == ["pyarrow<20"]  # the one transitive pin, with its reason in floors.py


def test_the_version_is_written_once_and_the_installed_package_reports_it():
    from importlib.metadata import version

    import tomllib

    import stsbench

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "stsbench.__version__"}
    assert version("stsbench") == stsbench.__version__  # what pip and `stsbench --version` say agree
