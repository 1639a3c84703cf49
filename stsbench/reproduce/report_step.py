"""The report step of a reproduction: ``stsbench report`` on ``OUT/results``, its command and its key.

Its command names ``OUT`` as the user gave it (the report prints the command it was made with); its key reads
the same arguments with the folder written ``OUT`` (:data:`OUT`), the claims the report judges and the digests of
the published files of one's own it is held against: where the reproduction lies is no input of the report.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stsbench.reproduce.keys import Keys, make_keys
from stsbench.results.recipe_runs import declared_runs

if TYPE_CHECKING:
    from stsbench.recipes import Recipe
    from stsbench.reproduce.plan import Step


def kept_note(kept: Sequence[str]) -> str:
    """The report's note naming the steps kept with ``--keep-changed`` (computed by other code than the rest)."""
    names = ", ".join(kept[:6]) + (f" and {len(kept) - 6} more" if len(kept) > 6 else "")
    return (
        f"Mixed code: {len(kept)} step(s) were kept from earlier stsbench code than the rest "
        f"(stsbench reproduce --keep-changed): {names}."
    )


CLAIMS_FILE = "claims.yaml"  # OUT/claims.yaml: the recipe's claims, which the report step judges


def claims_data(recipe: Recipe) -> list[dict[str, Any]]:
    """The recipe's claims as the claims file holds them, the recipe's δ on those without their own."""
    out = []
    for c in recipe.claims:
        data = c.model_dump(by_alias=True)
        if recipe.delta is not None and c.delta is None and c.kind not in ("plateau", "collapse"):
            data.update(delta=recipe.delta.value, delta_reason=f"the recipe's: {recipe.delta.reason}")
        out.append(data)
    return out


def published_files(recipe: Recipe) -> dict[str, str | None]:
    """The sha256 of each published file of one's own the recipe's runs are held against (None: not there)."""
    from stsbench.published.registry import file_key

    found: dict[str, str | None] = {}
    for address in (a for run in recipe.runs for a in run.addresses):
        in_file = file_key(address)
        if in_file is not None:
            path = Path(in_file[0]).expanduser()
            found[in_file[0]] = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
    return found


def report_args(recipe: Recipe, out: Path, kept: Sequence[str] = (), banner: str | None = None) -> list[str]:
    """``report --results OUT/results --out OUT ...``, the report step's command.

    Only the options that differ from the report's defaults, so that the command reads as one typed by hand.
    ``banner``: a mini recipe's (:func:`stsbench.reproduce.plan.mini_banner`).
    """
    from stsbench.reports.seeds import BASELINE

    args = ["report", "--results", str(out / "results"), "--out", str(out), "--title", recipe.report.title]
    if recipe.report.baseline != BASELINE:
        args += ["--baseline", recipe.report.baseline]
    if recipe.verdict:
        for run in recipe.runs:
            args += [a for address in run.addresses for a in ("--against", f"{run.name}={address}")]
    if recipe.claims:  # written by prepare() beside the results
        args += ["--claims", str(out / CLAIMS_FILE)]
    if recipe.cell_delta is not None:  # the recipe's difference that matters for its cells
        args += ["--difference", f"{recipe.cell_delta.value:g}"]
    for key in recipe.figures:  # the papers' figures it regenerates, each under its number and caption
        args += ["--figures", key]
    if kept:
        args += ["--note", kept_note(kept)]
    if recipe.omitted:  # reproduce --runs/--seeds: the report shows that subset and says once what it leaves out
        args += ["--note", f"A subset of recipe {recipe.name}: {'; '.join(recipe.omitted)}."]
        args += ["--runs", ",".join(r.name for r in recipe.runs)]
        args += ["--seeds", ",".join(map(str, sorted({s for r in recipe.runs for s in r.seeds})))]
    if banner:
        args += ["--banner", banner]
    return args


OUT = Path("OUT")  # the reproduction's folder as the report's key writes it: where it lies is no input


def report_keys(
    recipe: Recipe, before: list[Step], out: Path, kept: Sequence[str] = (), banner: str | None = None
) -> tuple[list[str], Keys]:
    """The report step's command (``out`` as the user gave it: the report prints it) and its keys.

    Its key reads the same arguments with the folder written ``OUT``, and the cells the recipe holds its runs
    against (which the report reads from ``results/recipe_runs.json``, whatever the verdict). ``kept``: the steps
    kept with ``--keep-changed``, named by a ``--note`` (the report never mixes code versions silently).
    """
    args = report_args(recipe, out, kept, banner)
    material: dict[str, Any] = {
        "kind": "report",
        "args": report_args(recipe, OUT, kept, banner),
        "deps": [s.key for s in before],
    }
    previous: dict[str, Any] = {"kind": "report", "args": args, "deps": [s.previous_key for s in before]}
    if recipe.claims:
        material["claims"] = previous["claims"] = claims_data(recipe)
    # the cells the report sets beside the runs' settings (results/recipe_runs.json): another cell, another report
    material["runs"] = [{"name": r.name, "published": list(r.published)} for r in declared_runs(recipe)]
    files = published_files(recipe)
    if files:  # a published file of one's own: edited, the report is made again
        material["published_files"] = {Path(f).name: sha for f, sha in files.items()}
        previous["published_files"] = files
    return args, make_keys(material, previous, {"deps": [s.legacy_key for s in before]})
