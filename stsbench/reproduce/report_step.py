"""The report step of a reproduction: ``stsbench report`` on ``OUT/results``, its command and its key.

Its command names ``OUT`` as the user gave it (the report prints the command it was made with); its key reads
the same arguments with the folder written ``OUT`` (:data:`OUT`), the claims the report judges and the digests of
the published files of one's own it is held against: where the reproduction lies is no input of the report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from stsbench.files import sha256_file
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


def own_files(recipe: Recipe) -> dict[str, Path]:
    """The published files of one's own the recipe's runs are held against: ``{path as the key names it: file}``.

    The key names a file by its path relative to the recipe's folder (where the recipe reads it from), so that
    ``mine/a/table.yaml`` and ``mine/b/table.yaml`` are two files and the reproduction keys the same anywhere.
    """
    from stsbench.published.registry import file_key

    found: dict[str, Path] = {}
    for address in (a for run in recipe.runs for a in run.addresses):
        in_file = file_key(address)
        if in_file is not None:
            path = Path(in_file[0]).expanduser()
            found[_relative(path, recipe)] = path
    return found


def _relative(path: Path, recipe: Recipe) -> str:
    folder = Path(recipe.folder) if recipe.folder else None
    return path.relative_to(folder).as_posix() if folder and path.is_relative_to(folder) else path.as_posix()


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
    if (
        recipe.omitted
    ):  # reproduce --runs/--seeds: the report shows that subset and says once what it leaves out
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
    """The report step's command (``out`` as the user gave it: the report prints it) and its key.

    Its key reads the same arguments with the folder written ``OUT`` and one's own published files named from the
    recipe's folder, the claims, the cells the recipe holds its runs against (which the report reads from
    ``results/recipe_runs.json``, whatever the verdict), every published registry (``stsbench/published/*.yaml``:
    the report may set any of its rows beside the runs) and one's own published files by content. ``kept``: the
    steps kept with ``--keep-changed``, named by a ``--note`` (the report never mixes code versions silently).
    """
    from stsbench.published.registry import file_key
    from stsbench.sources import published_digest

    args = report_args(recipe, out, kept, banner)

    def keyed(
        address: str,
    ) -> str:  # /abs/mine/table.yaml#row -> mine/table.yaml#row (a registry key as it is)
        in_file = file_key(address)
        return f"{_relative(Path(in_file[0]), recipe)}#{in_file[1]}" if in_file else address

    def portable(arg: str) -> str:  # an --against argument, run=ADDRESS
        run, eq, address = arg.partition("=")
        return f"{run}={keyed(address)}" if eq else arg

    material: dict[str, Any] = {
        "kind": "report",
        "args": [portable(a) for a in report_args(recipe, OUT, kept, banner)],
        "deps": [s.key for s in before],
        "published": published_digest(),
    }
    if recipe.claims:
        material["claims"] = claims_data(recipe)
    # what the report reads of the recipe's runs (results/recipe_runs.json): their labels, sweeps, points and the
    # cells set beside them; another label or cell, another report
    material["runs"] = [
        {**asdict(r), "published": [keyed(c) for c in r.published]} for r in declared_runs(recipe)
    ]
    files = own_files(recipe)
    if files:  # a published file of one's own: edited, the report is made again
        material["published_files"] = {
            name: sha256_file(f) if f.is_file() else None for name, f in files.items()
        }
    return args, make_keys(material)
