"""What a plan's steps read that no step writes, checked before any of them starts.

A reproduction that lacks its data, its training corpus or a model fails step by step, each after its own start
(26 failed steps for one missing corpus). :func:`missing` finds those inputs first: the SentEval files each
evaluation and training's STS-B dev read, each training's corpus (:func:`stsbench.data.corpora.resolve_train_file`,
which says how to fetch it), and each model named by the recipe (a backbone, the baseline) that is neither the
embedded model, a folder, nor in the local Hugging Face cache while the hub is out of reach. Nothing is downloaded
or imported beyond what names these (no torch).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from stsbench.errors import StsbenchError
from stsbench.reproduce.plan import Plan, Step


@dataclass(frozen=True)
class Need:
    """One input missing here, the steps that read it and how to get it."""

    what: str  # "data", "corpus" or "model"
    name: str  # the file, corpus or model
    how: str  # how to get it, one clause
    steps: tuple[str, ...]

    def line(self) -> str:
        """``model bert-base-uncased (12 steps): how``."""
        n = len(self.steps)
        return f"{self.what} {self.name} ({n} step{'s' * (n != 1)}): {self.how}"


def _arg(step: Step, flag: str) -> str | None:
    """The value of ``flag`` in ``step``'s command line (None when absent)."""
    args = list(step.args)
    return args[args.index(flag) + 1] if flag in args[:-1] else None


def _data_needs(plan: Plan, steps: Iterable[Step], allow_modified: bool = False) -> list[Need]:
    """The SentEval files the steps read that are absent, or that differ from the canonical data."""
    from stsbench.data.integrity import differences

    readers: dict[Path, list[str]] = {}
    for step in steps:
        for f in step.data:
            readers.setdefault(f, []).append(step.id)
    absent = {f: ids for f, ids in readers.items() if not f.is_file()}
    needs = []
    if absent:
        ids = tuple(dict.fromkeys(i for group in absent.values() for i in group))
        first = min(absent)
        name = (
            f"{len(absent)} SentEval file(s) under {plan.data_dir} (e.g. {first.relative_to(plan.data_dir)})"
        )
        how = f"run `stsbench data download --data-dir {plan.data_dir}`, or pass the folder holding them (--data-dir)"
        needs.append(Need("data", name, how, ids))
    if not allow_modified:
        modified = differences(plan.data_dir, [f for f in readers if f not in absent])
        if modified:
            rel, why = next(iter(modified.items()))
            ids = tuple(dict.fromkeys(i for f, group in readers.items() if f not in absent for i in group))
            name = f"{len(modified)} file(s) under {plan.data_dir} (e.g. {rel}: {why})"
            how = (
                f"restore them (`stsbench data download --data-dir {plan.data_dir}`; `stsbench data verify` lists "
                "every difference) or pass --allow-modified-data to score them anyway, marked as modified"
            )
            needs.append(Need("modified data", name, how, ids))
    return needs


def _corpus_needs(plan: Plan, steps: Iterable[Step]) -> list[Need]:
    from stsbench.data.corpora import resolve_train_file

    found: dict[tuple[str, str], list[str]] = {}
    for step in steps:
        corpus = _arg(step, "--corpus") if step.kind == "analysis" else None
        if corpus is not None and not Path(corpus).is_file():  # plan.py resolved its name to this file
            how = f"{corpus} does not exist; put the corpus there (docs/reproduce.md) or pass --data-dir"
            found.setdefault((Path(corpus).name, how), []).append(step.id)
        if step.kind != "train":
            continue
        train_file, lines = step.config.get("train_file"), step.config.get("train_lines")
        if not train_file:
            continue
        try:
            path, _ = resolve_train_file(str(train_file), lines, plan.data_dir)
        except StsbenchError as exc:  # "corpus NAME: no FILE under DATA; run `...`"
            name, _, how = str(exc).partition(": ")
            found.setdefault((name.removeprefix("corpus "), how or name), []).append(step.id)
            continue
        if not path.is_file():
            found.setdefault((str(train_file), f"{path} does not exist; check the path"), []).append(step.id)
    return [Need("corpus", name, how, tuple(ids)) for (name, how), ids in found.items()]


def model_missing(name: str) -> str | None:
    """How to get model ``name`` when it cannot be had here (None: the embedded one, a folder, or hub-cached).

    A hub id not in the local cache is missing only while the hub is out of reach (the run would download it).
    """
    from stsbench.encoders.resolve import is_embedded, looks_like_path

    if is_embedded(name):
        return None
    path = Path(name).expanduser()
    if path.exists() or looks_like_path(name):
        ok = (path / "config.json").is_file() or (path / "modules.json").is_file()
        return (
            None if ok else f"{path} is not a model folder (no config.json or modules.json); check the path"
        )
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return None
    from stsbench.hub import hub_offline_reason

    reason = hub_offline_reason()
    if reason is None:
        return None
    return (
        f"not in the local Hugging Face cache and the hub is out of reach ({reason}); download it where there "
        f"is internet (`huggingface-cli download {name}`) or set the run's `model:` to its folder"
    )


def extra_models(config: dict) -> dict[str, str]:
    """The models a training loads beside its backbone, name -> the option that names it.

    Its method's and its augmentations' (their specs' ``model_options``).
    """
    from stsbench.train.config.augmentations import AUGMENTATIONS, augment_names
    from stsbench.train.config.methods import find_method

    spec = find_method(config.get("method"))
    options = [*(spec.model_options if spec is not None else ())]
    options += [
        o for a in augment_names(str(config.get("augment") or "none")) for o in AUGMENTATIONS[a].model_options
    ]
    names: dict[str, str] = {}
    for option in dict.fromkeys(options):
        value = config.get(option)
        if value is None:  # the option at its default: the field's
            from stsbench.train.config.groups import option_fields

            value = option_fields()[option].default
        names.update({n.strip(): option for n in str(value or "").split(",") if n.strip()})
    return names


def _model_needs(plan: Plan, steps: Iterable[Step]) -> list[Need]:
    readers: dict[str, list[str]] = {}
    options: dict[str, str] = {}  # an augmentation's model -> the option that names it
    for step in steps:
        if step.kind == "train" and step.model:
            readers.setdefault(step.model, []).append(step.id)
            for name, option in extra_models(
                step.config
            ).items():  # a method's, back-translation's translators
                readers.setdefault(name, []).append(step.id)
                options[name] = option
        elif step.kind in ("evaluate", "analysis"):
            model = _arg(step, "--model")
            if model is not None and not Path(model).is_relative_to(plan.out):  # a run of this plan
                readers.setdefault(model, []).append(step.id)
    needs = []
    for name, ids in readers.items():
        how = model_missing(name)
        if how is not None and name in options:
            how = how.replace(
                "set the run's `model:` to its folder", f"set the run's `{options[name]}:` to its folder"
            )
        if how is not None:
            needs.append(Need("model", name, how, tuple(ids)))
    return needs


def missing(plan: Plan, to_run: Iterable[str] | None = None, allow_modified: bool = False) -> list[Need]:
    """What the steps ``to_run`` (default: all) read that is missing here, each with how to get it.

    SentEval files that differ from the canonical data count too, unless ``allow_modified``
    (``--allow-modified-data``): refused before any step starts, not by each evaluation after the trainings.
    """
    wanted = None if to_run is None else set(to_run)
    steps = [s for s in plan.steps if wanted is None or s.id in wanted]
    return [
        *_data_needs(plan, steps, allow_modified),
        *_corpus_needs(plan, steps),
        *_model_needs(plan, steps),
    ]


def refuse_missing(needs: list[Need]) -> None:
    """One line naming what is missing and how to get it (``stsbench reproduce --dry-run`` lists it all)."""
    if needs:
        first = needs[0].line()
        more = f"; and {len(needs) - 1} more" if len(needs) > 1 else ""
        word = "" if needs[0].what == "modified data" else "missing "
        raise StsbenchError(
            f"nothing was started: {word}{first}{more} (`--dry-run` lists what the run needs)"
        )
