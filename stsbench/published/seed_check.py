"""``stsbench check --tolerance seeds``: whether each published figure lies inside the 95% interval over seeds.

Reads the seed aggregate that ``stsbench run --model OUT`` writes for a seeds folder
(:mod:`stsbench.results.seeds`); pure, no printing. A figure is ``inside`` when low <= published <= high,
``outside`` otherwise; with one seed there is no interval (``no interval``), and a published task the seeds
were not evaluated on is ``missing``. Every row must be inside for the check to pass, but the Avg.: it is
compared only when the seeds' Avg. is over the published row's tasks, else it is ``not checked`` (an Avg. of
two tasks is another number than the paper's Avg. of seven), as plain ``check`` marks it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stsbench.average import AVG
from stsbench.errors import StsbenchError
from stsbench.progress import plural
from stsbench.published.check import EPS, check_split, comparable_tasks
from stsbench.published.registry import Entry, get_entry
from stsbench.results.folder import seed_aggregates
from stsbench.results.seeds import SEEDS_FILE

NOT_CHECKED = "not checked"


@dataclass(frozen=True)
class SeedRow:
    """One published task (or Avg.) beside the seeds' summary of it (None when they lack it)."""

    task: str
    published: float
    seeds: dict[str, Any] | None  # the aggregate's row: values, mean, std, n, low, high
    checked: bool = True  # False: an Avg. over other tasks than the published one's

    @property
    def status(self) -> str:
        """``inside``, ``outside``, ``no interval`` (one seed), ``missing`` or ``not checked``."""
        if not self.checked:
            return NOT_CHECKED
        if self.seeds is None:
            return "missing"
        if self.seeds["low"] is None:
            return "no interval"
        inside = self.seeds["low"] - EPS <= self.published <= self.seeds["high"] + EPS
        return "inside" if inside else "outside"


@dataclass(frozen=True)
class SeedComparison:
    """One seed aggregate against one published entry."""

    entry: Entry
    path: Path  # the aggregate's file
    aggregate: dict[str, Any]
    rows: tuple[SeedRow, ...]

    @property
    def passed(self) -> bool:
        """Every published figure inside its seed interval (an Avg. over other tasks is not checked)."""
        return all(r.status in ("inside", NOT_CHECKED) for r in self.rows)

    def summary(self) -> str:
        """One line: passed, or which rows are outside, without an interval, or missing."""
        n = sum(r.checked for r in self.rows)
        seeds = plural(len(self.aggregate["seeds"]), "seed")
        if self.passed:
            return f"all {plural(n, 'figure')} of {self.entry.key} inside the 95% interval over {seeds}"
        parts = []
        for status, what in (
            ("outside", "outside the 95% interval over " + seeds),
            ("no interval", "without an interval (one seed: train more)"),
            ("missing", f"not evaluated in {self.path}"),
        ):
            names = [r.task for r in self.rows if r.status == status]
            if names:
                parts.append(f"{', '.join(names)} {what}")
        return "; ".join(parts)


def find_aggregates(
    results_dir: Path, model: str | None = None, pooler: str | None = None, mode: str | None = None
) -> list[tuple[Path, dict[str, Any]]]:
    """Every seed aggregate under ``results_dir`` that matches the filters (the one reader's scan)."""
    found = []
    for path, agg in seed_aggregates(results_dir):
        wanted = {"model": model, "pooler": pooler, "mode": mode}
        if any(v is not None and agg[k] != v for k, v in wanted.items()):
            continue
        found.append((path, agg))
    return found


def check_seeds(
    results_dir: Path,
    key: str,
    model: str | None = None,
    pooler: str | None = None,
    mode: str | None = None,
) -> SeedComparison:
    """Compare the one seed aggregate under ``results_dir`` (after the filters) with published entry ``key``."""
    entry = get_entry(key)
    published = dict(comparable_tasks(entry))
    found = find_aggregates(results_dir, model, pooler, mode)
    if not found:
        raise StsbenchError(
            f"no seed aggregate ({SEEDS_FILE}) under {results_dir} matches; --tolerance seeds needs the results "
            "of `stsbench run --model OUT` on a `stsbench train --seeds` folder, or give a numeric --tolerance"
        )
    if len(found) > 1:
        names = "; ".join(f"{a['model']}/{a['pooler']}/{a['mode']}" for _, a in found)
        raise StsbenchError(
            f"{results_dir} holds {len(found)} seed aggregates (model/pooler/mode: {names}); "
            "narrow with --model/--pooler/--mode"
        )
    path, agg = found[0]
    if agg.get("data_modified"):  # never inside a published interval: not the data the paper scored
        seeds = ", ".join(f"seed {s}: {', '.join(f)}" for s, f in agg["data_modified"].items())
        raise StsbenchError(
            f"{path}: computed on data that differs from the canonical files ({seeds}); not comparable with "
            f"{key}: rerun the seeds on the canonical data (`stsbench data verify`)"
        )
    check_split(entry, agg["mode"], results_dir)
    rows = [SeedRow(t, v, agg["tasks"].get(t)) for t, v in published.items()]
    if AVG in entry.values and AVG in agg["tasks"]:
        averaged = {t for t in agg["tasks"] if not t.endswith(AVG)}  # "Avg.", "STS Avg.", "Transfer Avg."
        same = averaged == set(published)
        rows.append(SeedRow(AVG, entry.values[AVG], agg["tasks"][AVG], checked=same))
    return SeedComparison(entry, path, agg, tuple(rows))
