"""A recipe's ``sweep:`` (one training option) and ``grid:`` (two) as the runs they stand for.

A paper's sweep table varies one setting (ESimCSE's dup rate, MoCoSE's EMA decay) or two (MoCoSE's projection x
predictor layers) with everything else fixed. A recipe writes it once::

    runs:
      - name: dup-rate
        method: esimcse
        config: esimcse-minilm-cpu
        seeds: [1, 2, 3]
        sweep: {option: dup_rate, values: [0.08, 0.16, 0.24, 0.32]}
        published: "esimcse-arxiv/table9/dup-rate#dup_rate={dup_rate}"

and it is read as one run per value (per pair of values for a grid, the first axis outermost), named
deterministically ``<name>.<option>-<value>[.<option>-<value>]`` (``dup-rate.dup_rate-0.08``; a character a
folder name cannot hold becomes ``_``), each with the swept options added to its overrides and its published
cell the template filled with them (``{dup_rate}`` -> ``0.08``: Python's ``str`` of the YAML value, which is how
the registry's column names spell the papers' settings; an axis' ``labels``, one per value, replace them where the
paper spells a setting otherwise: ``{option: fgsm_epsilon, values: [0, 5.0e-9], labels: ["no FGSM", "eps=5e-9"]}``).
``also_published`` is filled the same way. A claim may name the sweep itself among its settings
(``among: [dup-rate]``): that stands for every run of the sweep, in its order.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_EXPANDED = ("sweep_of", "point")  # what the expansion fills in a run: never written by hand


def shown(value: Any) -> str:
    """A swept value as the registry's column names and run names spell it (``True`` as ``true``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def point_name(base: str, point: dict[str, Any]) -> str:
    """``<base>.<option>-<value>...``: the run a sweep's point is, as a folder name."""
    parts = [base, *(f"{option}-{shown(value)}" for option, value in point.items())]
    return _UNSAFE.sub("_", ".".join(parts))


def _check_option(name: str, option: Any) -> None:
    """Refuse a swept option that is not a training option, naming the nearest one.

    Refused here, a misspelt option is not blamed on a claim naming the sweep's runs or on its published template.
    """
    import difflib

    from stsbench.train.config import OPTIONS

    if option not in OPTIONS:
        near = difflib.get_close_matches(str(option), list(OPTIONS), n=1)
        hint = f"; did you mean {near[0]}?" if near else ""
        raise ValueError(f"run {name}: its sweep's option {option!r} is not a training option{hint}")


def _axes(run: dict[str, Any]) -> list[dict[str, Any]]:
    name = run.get("name", "?")
    if "sweep" in run and "grid" in run:
        raise ValueError(f"run {name}: give sweep (one option) or grid (two), not both")
    axes = [run["sweep"]] if "sweep" in run else list(run["grid"])
    if "grid" in run and len(axes) != 2:
        raise ValueError(f"run {name}: a grid has two axes (a sweep has one), got {len(axes)}")
    for axis in axes:
        if not isinstance(axis, dict) or not {"option", "values"} <= set(axis) <= {
            "option",
            "values",
            "labels",
        }:
            raise ValueError(
                f"run {name}: each axis is {{option: NAME, values: [...], labels: [...]}}, got {axis!r}"
            )
        _check_option(name, axis["option"])
        values = axis["values"]
        if not isinstance(values, list) or len(values) < 2:
            raise ValueError(f"run {name}: {axis['option']} needs two values or more, got {values!r}")
        if len({shown(v) for v in values}) != len(values):
            raise ValueError(f"run {name}: {axis['option']}'s values repeat: {values}")
        labels = axis.get("labels")
        if labels is not None and (not isinstance(labels, list) or len(labels) != len(values)):
            raise ValueError(f"run {name}: {axis['option']}'s labels are one per value, got {labels!r}")
    if len({axis["option"] for axis in axes}) != len(axes):
        raise ValueError(f"run {name}: a grid varies two different options")
    return axes


def _points(run: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, str]]]:
    """Each point of the sweep or grid: its options' values, and how the paper spells each (its label)."""
    axes = _axes(run)
    spelt = [
        list(zip(a["values"], a.get("labels") or [shown(v) for v in a["values"]], strict=True)) for a in axes
    ]
    options = [a["option"] for a in axes]
    return [
        (
            dict(zip(options, [v for v, _ in pairs], strict=True)),
            dict(zip(options, [s for _, s in pairs], strict=True)),
        )
        for pairs in itertools.product(*spelt)
    ]


def _cell(template: str | None, spelt: dict[str, str], name: str) -> str | None:
    if template is None:
        return None
    try:
        return template.format(**spelt)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(
            f"run {name}: published {template!r} cannot be filled from {sorted(spelt)} ({exc}); "
            "write each swept option as {option}"
        ) from None


def expand(data: Any) -> Any:
    """A recipe's raw mapping with each sweep or grid run replaced by its runs, and claims' sweep names too."""
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        return data
    runs: list[Any] = []
    members: dict[str, list[str]] = {}
    for run in data["runs"]:
        if not isinstance(run, dict):
            runs.append(run)
            continue
        written = [k for k in _EXPANDED if k in run]
        if written:
            raise ValueError(
                f"run {run.get('name', '?')}: {written[0]} is filled by sweep or grid, not written"
            )
        if "sweep" not in run and "grid" not in run:
            runs.append(run)
            continue
        base = str(run.get("name", "?"))
        rest = {k: v for k, v in run.items() if k not in ("sweep", "grid")}
        names = []
        for point, spelt in _points(run):
            name = point_name(base, point)
            overlap = sorted(set(point) & {str(k).replace("-", "_") for k in rest.get("overrides") or {}})
            if overlap:
                raise ValueError(f"run {base}: {overlap[0]} is swept and also in its overrides")
            expanded = {
                **rest,
                "name": name,
                "overrides": {**(rest.get("overrides") or {}), **point},
                "published": _cell(rest.get("published"), spelt, base),
                "also_published": [_cell(t, spelt, base) for t in rest.get("also_published") or []],
                "sweep_of": base,
                "point": point,
            }
            if rest.get("label"):
                expanded["label"] = f"{rest['label']} ({', '.join(f'{k}={v}' for k, v in spelt.items())})"
            runs.append(expanded)
            names.append(name)
        members[base] = names
    claims = data.get("claims")
    if members and isinstance(claims, list):
        claims = [_claim_with_members(c, members) for c in claims]
    return {**data, "runs": runs, **({"claims": claims} if claims is not None else {})}


def _claim_with_members(claim: Any, members: dict[str, list[str]]) -> Any:
    if not isinstance(claim, dict):
        return claim
    from stsbench.stats.claims import listing_fields

    out = dict(claim)
    for field in listing_fields():
        if isinstance(out.get(field), list):
            out[field] = [m for s in out[field] for m in members.get(s, [s])]
    return out
