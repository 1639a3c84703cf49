"""Options from YAML and the command line into a :class:`TrainConfig`; the table of options the CLI is built from.

Precedence: the method's defaults < the YAML file < the CLI flags. Every value goes through the same
validation as ``TrainConfig(...)`` from Python; a refusal names the file a bad value came from.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from stsbench import options as describe
from stsbench.errors import StsbenchError
from stsbench.train.config.groups import option_fields, option_groups, owners
from stsbench.train.config.methods import METHODS, method_choices
from stsbench.train.config.options import TrainConfig


@dataclass(frozen=True)
class Option:
    """One training option as the CLI, the YAML loader and the reports see it."""

    name: str
    kind: type  # bool, int, float or str
    default: Any  # SimCSE's; see method_defaults for the others'
    help: str
    choices: tuple[str, ...] | None
    methods: tuple[str, ...] | None  # the methods it belongs to; None: every method
    group: str  # "ESimCSE options": the labels of the methods it belongs to, for --help panels
    short: str | None = None
    label: str | None = None  # the option in the paper's words, for figure axes and titles

    @property
    def shown(self) -> str:
        """How figures and tables name it: its label, else its name (``EMA decay weight``, ``temperature``)."""
        return self.label or self.name

    @property
    def flag(self) -> str:
        """``--dup-rate``."""
        return describe.flag(self.name)

    @property
    def method_defaults(self) -> dict[str, Any]:
        """Defaults of methods whose paper differs from SimCSE's, by method label."""
        return {s.label: s.defaults[self.name] for s in METHODS.values() if self.name in s.defaults}


def _option(name: str) -> Option:
    info = option_fields()[name]
    group = option_groups().group_of.get(name)
    method = name == "method"  # its choices are the registry's (plugins' included), not a Literal's
    return Option(
        name=name,
        kind=describe.kind(info),
        default=info.default,
        help=f"{method_choices()}." if method else info.description or "",
        choices=tuple(METHODS.names()) if method else describe.choices(info),
        methods=tuple(str(s.name) for s in owners(name)) if group else None,
        group=f"{' or '.join(s.label for s in owners(name))} options" if group else "Options",
        short=describe.extra(info, "short"),
        label=describe.extra(info, "label"),
    )


@cache
def train_options() -> dict[str, Option]:
    """Every training option (every registered method's and augmentation's, read on first use), by name."""
    return {name: _option(name) for name in option_fields()}


def __getattr__(name: str) -> Any:  # OPTIONS: built on first use, as the config's groups are
    if name == "OPTIONS":
        return train_options()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def help_for(name: str) -> str:
    """Return the help text of option ``name`` with its default(s), for the CLI."""
    opt = train_options()[name]
    if opt.default is None:
        return opt.help
    shown = [("on" if opt.default else "off") if isinstance(opt.default, bool) else str(opt.default)]
    shown += [f"{label}: {value}" for label, value in opt.method_defaults.items()]
    return f"{opt.help} (default: {'; '.join(shown)})"


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Options from a YAML mapping (keys as in :class:`TrainConfig`, dashes or underscores), not yet validated.

    ``path``: a YAML file, or the name of a config shipped with stsbench (:mod:`stsbench.configs`).
    """
    import copy

    from stsbench.configs import find_config

    path = find_config(path)
    st = path.stat()
    # parsed once per process and file version: listing the recipes read the same configs 1,552 times without it
    return copy.deepcopy(_load_yaml(path, st.st_size, st.st_mtime_ns))


@lru_cache(maxsize=256)
def _load_yaml(path: Path, size: int, mtime_ns: int) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.load(
            path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise StsbenchError(f"{path}{line}: not valid YAML; fix the file") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise StsbenchError(f"{path}: expected a mapping of option: value, got {type(data).__name__}")
    out = {}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name not in train_options():
            raise StsbenchError(
                f"{path}: unknown option {key!r}; see `stsbench train --help` for the options"
            )
        out[name] = value
    return out


def make_config(cli: dict[str, Any], config_file: str | Path | None = None) -> TrainConfig:
    """Defaults (the method's paper's) < YAML file < CLI flags (``None`` in ``cli``: not given); validated.

    Also refuses a config that lacks method, model, train file or output (a run needs them).
    """
    from stsbench.train.config.resolve import check_complete

    given = load_yaml(config_file) if config_file is not None else {}
    sources = dict.fromkeys(given, str(config_file))
    for name, value in cli.items():
        if value is not None:
            given[name] = value
            sources[name] = "command line"
    try:
        cfg = TrainConfig.model_validate(given, context={"sources": sources})
    except ValidationError as exc:
        raise StsbenchError(describe.one_line(exc, TrainConfig, sources)) from None
    check_complete(cfg)
    return cfg
