"""Print pip constraints that pin every dependency of pyproject.toml at its declared floor (``name==floor``).

CI's floor job installs stsbench under these constraints (torch excepted: it is installed first, CPU build) and
runs the core tests, so a floor in pyproject is one the code was tested with. Usage:
``python3 .ci/floors.py [extra ...] > floors.txt``; the extras' floors are pinned too.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import tomllib

UNPINNED = {"torch"}  # installed before the package, at CI's CPU build
# not our dependencies, but the resolver picks them wrongly beside the floors: pyarrow (through datasets) >= 20
# needs NumPy 2 at import without declaring it, and then `import pandas` fails under numpy 1.24
TRANSITIVE = ["pyarrow<20"]


def floors(extras: list[str]) -> list[str]:
    """``name==version`` for each ``name>=version`` of the core list and ``extras``, then :data:`TRANSITIVE`."""
    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())[
        "project"
    ]
    reqs = list(project["dependencies"])
    for extra in extras:
        reqs += project["optional-dependencies"][extra]
    pins = {}
    for req in reqs:
        # name>=floor, optionally with an upper bound (seaborn>=0.13,<0.14): the floor is what is pinned
        pattern = r"([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9A-Za-z.]*)(\s*,\s*<[0-9A-Za-z.]+)?"
        m = re.fullmatch(pattern, req.split(";")[0].strip())
        if m is None:
            sys.exit(f"floors.py: {req!r} is not 'name>=version'; give every dependency a floor")
        if m[1].lower() not in UNPINNED:
            pins[m[1].lower()] = f"{m[1]}=={m[2]}"
    return [*pins.values(), *TRANSITIVE]


if __name__ == "__main__":
    sys.stdout.write("".join(f"{line}\n" for line in floors(sys.argv[1:])))
