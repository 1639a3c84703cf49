"""The one registry shape: tasks, training methods, poolers and analyses are each a :class:`Registry`.

Modelled on lm-evaluation-harness' ``lm_eval/api/registry.py``: a registry maps a name to its object, or to a
lazy ``"module:attr"`` target imported on first lookup, so that listing and checking names imports nothing
heavy (a mistyped task is refused before torch loads). Other packages add entries through an entry-point group
(``[project.entry-points."stsbench.tasks"]``, ...): each entry point's value is a ``module:attr`` target
registered under the entry point's name, or a bare module whose import registers its entries (decorators).

Names are matched exactly first, then through :attr:`Registry.aliases` and the registry's ``normalise``
(``STS-B``, ``sts_b`` and ``STSB`` give one key), and an unknown name is one line with the nearest known name.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Generic, TypeVar

from stsbench.errors import StsbenchError

T = TypeVar("T")


def load_target(ref: Any) -> Any:
    """Return ``ref`` itself, or the object a ``"module:attr"`` string names (imported now)."""
    if not isinstance(ref, str):
        return ref
    module, sep, attr = ref.partition(":")
    if not sep:
        raise StsbenchError(f"registry target {ref!r} is not of the form 'module:attr'")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Registry(Generic[T]):
    """Named entries of one kind: ``registry.get(name)``, ``name in registry``, ``list(registry)``.

    ``what`` names the kind in messages ("task", "pooler"); ``entry_points`` is the group other packages
    register under; ``normalise`` maps a spelling to the key that tells entries apart (default: the name).
    """

    def __init__(
        self, what: str, *, entry_points: str | None = None, normalise: Callable[[str], str] | None = None
    ) -> None:
        self.what = what
        self.entry_points = entry_points
        self._normalise = normalise or (lambda name: name)
        self._targets: dict[str, Any] = {}  # name -> object or "module:attr"
        self._loaded: dict[str, T] = {}
        self.aliases: dict[str, str] = {}  # another spelling -> name
        self._spellings: dict[str, str] = {}  # normalised spelling -> name
        self._plugins_loaded = entry_points is None

    # -- registering ----------------------------------------------------------------------------------------------
    def register(self, name: str, target: Any = None, *, aliases: tuple[str, ...] = ()) -> Any:
        """Register ``target`` (an object or ``"module:attr"``) as ``name``; without a target, a decorator.

        Registering a name twice with another target is an error (two packages claiming one name).
        """
        if target is None:

            def decorate(obj: Any) -> Any:
                self.register(name, obj, aliases=aliases)
                return obj

            return decorate
        old = self._targets.get(name)
        # a lazy target, now registered by its own import (a decorator), is the same one
        reference = f"{getattr(target, '__module__', None)}:{getattr(target, '__qualname__', None)}"
        same = old is None or old is target or old == target or old == reference
        if not same and self._loaded.get(name) is not target:
            raise StsbenchError(f"{self.what} {name!r} is registered twice ({old!r} and {target!r})")
        self._targets[name] = target
        self._loaded.pop(name, None)
        self._spellings[self._normalise(name)] = name
        for alias in aliases:
            self.aliases[alias] = name
            self._spellings[self._normalise(alias)] = name
        return target

    def unregister(self, name: str) -> None:
        """Remove ``name`` and its aliases (a test's toy entry); an unknown name is ignored."""
        key = self.canonical(name)
        if key is None:
            return
        self._targets.pop(key)
        self._loaded.pop(key, None)
        self.aliases = {a: n for a, n in self.aliases.items() if n != key}
        self._spellings = {s: n for s, n in self._spellings.items() if n != key}

    # -- looking up -----------------------------------------------------------------------------------------------
    def target(self, name: str) -> Any:
        """What ``name`` is registered as: its object, or its ``"module:attr"`` string while not yet imported."""
        key = self.check(name)
        return self._loaded.get(key, self._targets[key])

    def _load_plugins(self) -> None:
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        # ~50 ms of a start: read only when a name is not built in, or when every name is listed
        from importlib import metadata

        for ep in metadata.entry_points(group=self.entry_points):
            try:
                if ":" in ep.value:
                    if ep.name not in self._targets:
                        self.register(ep.name, ep.value)
                else:
                    importlib.import_module(ep.value)  # its import registers its entries
            except Exception as exc:  # a broken plugin is named, not a traceback
                raise StsbenchError(
                    f"the {self.what} plugin {ep.name!r} ({ep.value}, entry point group {self.entry_points}) "
                    f"failed to load: {exc}"
                ) from None

    def plugin(self, name: str) -> dict[str, Any] | None:
        """What the plugin entry ``name`` is, for a key (:func:`stsbench.sources.module_identity`).

        None for a built-in entry or a name not registered (a path where a corpus name may stand).
        """
        key = self.canonical(name)
        if key is None:
            return None
        target = self._loaded.get(key, self._targets[key])
        module = target.split(":")[0] if isinstance(target, str) else getattr(target, "__module__", None)
        if not isinstance(module, str) or module.split(".")[0] == "stsbench":
            return None
        from stsbench.sources import module_identity

        return module_identity(module)

    def names(self) -> list[str]:
        """Every registered name, in registration order (built-ins first)."""
        self._load_plugins()
        return list(self._targets)

    def canonical(self, name: str) -> str | None:
        """The registered name ``name`` spells (itself, an alias or a normalised spelling), or None.

        Built-in entries win over plugins (a plugin cannot take a built-in name), so the plugins are looked for
        only when ``name`` is not a built-in's.
        """
        found = self._lookup(name)
        if found is None and not self._plugins_loaded:
            self._load_plugins()
            found = self._lookup(name)
        return found

    def _lookup(self, name: str) -> str | None:
        if name in self._targets:
            return name
        return self.aliases.get(name, self._spellings.get(self._normalise(name)))

    def check(self, name: str, *, extra: tuple[str, ...] = ()) -> str:
        """The registered name ``name`` spells, or ``StsbenchError`` with the nearest known name.

        ``extra``: further valid choices to list and suggest (task sets such as ``sts``), checked by the caller.
        """
        found = self.canonical(name)
        if found is not None:
            return found
        known = [*extra, *self.names(), *self.aliases]
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.6) or difflib.get_close_matches(
            name.lower(), [k.lower() for k in known], n=1, cutoff=0.6
        )
        hint = ""
        if near:
            lower = {k.lower(): k for k in known}
            pick = near[0] if near[0] in known else lower[near[0]]
            hint = f"did you mean '{self.canonical(pick) or pick}'? "
        raise StsbenchError(
            f"unknown {self.what} '{name}'; {hint}choose from: {', '.join([*extra, *self.names()])}"
        )

    def get(self, name: str) -> T:
        """The entry ``name`` spells, its target imported on first use."""
        key = self.check(name)
        if key not in self._loaded:
            try:
                self._loaded[key] = load_target(self._targets[key])
            except (ImportError, AttributeError) as exc:
                raise StsbenchError(
                    f"{self.what} {key!r}: its target {self._targets[key]!r} failed to load: {exc}"
                ) from None
        return self._loaded[key]

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.canonical(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def values(self) -> list[T]:
        """Every entry, loaded (imports every target)."""
        return [self.get(name) for name in self.names()]

    def items(self) -> list[tuple[str, T]]:
        """Every entry, loaded (imports every target)."""
        return [(name, self.get(name)) for name in self.names()]

    def specs(self, kind: type) -> list[T]:
        """Every entry, loaded and checked: a ``kind`` whose ``name`` is the name it is registered under.

        A plugin's entry point that names something else is refused in one line naming it.
        """
        out = []
        for name in self.names():
            spec = self.get(name)
            if not isinstance(spec, kind) or getattr(spec, "name", None) != name:
                raise StsbenchError(
                    f"the {self.what} {name!r} in the registry (entry point group {self.entry_points}) is "
                    f"{spec!r}, not a {kind.__name__} named {name!r}"
                )
            out.append(spec)
        return out


@cache
def packaged_files(what: str, package: str) -> Registry[Path]:
    """The ``*.yaml`` files shipped in ``package`` (configs, recipes), each a ``what`` named by its stem, any case."""
    registry: Registry[Path] = Registry(what, normalise=str.lower)
    for f in sorted(resources.files(package).iterdir(), key=lambda f: f.name):
        if f.name.endswith(".yaml"):
            registry.register(f.name.removesuffix(".yaml"), Path(str(f)))
    return registry
