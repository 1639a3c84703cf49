"""Every task in one :class:`~stsbench.registry.Registry`: names, short names, task sets, versions, the task objects.

Looking up, listing and checking names, a task's kind and version, and resolving STS tasks import no torch,
transformers or :mod:`stsbench.tasks.transfer` (commands refuse a typo before anything heavy loads): an STS
task is a declaration (:class:`~stsbench.data.sts_spec.STSSpec`), a transfer task a :class:`LazyTask`
whose object is imported when it runs.

Another package adds a task under the ``stsbench.tasks`` entry-point group, either ``ToySTS =
"toy_sts:TASK"`` (the entry point's name is the task's) or ``toy_sts = "toy_sts"`` (a module whose import
calls :func:`register_task`). A task added so is in no task set: ``--tasks sts`` stays the papers' seven,
and so does every Avg.; reports give it a column of its own (:func:`task_columns`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stsbench.data.sts_spec import BUILTIN_STS, STSSpec
from stsbench.errors import StsbenchError
from stsbench.registry import Registry, load_target

if TYPE_CHECKING:
    from stsbench.tasks.base import Task


# -- names ---------------------------------------------------------------------------------------------------


__all__ = ["TASKS", "LazyTask", "STSSpec", "get_task", "register_task", "resolve_tasks", "task_version"]


def _key(name: str) -> str:
    """A spelling reduced to what tells tasks apart: ``STS-B``, ``sts_b`` and ``STSB`` all give ``stsb``."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


@dataclass(frozen=True)
class LazyTask:
    """A task known by name, kind and version whose object (``target``, ``"module:attr"``) loads when it runs."""

    name: str
    kind: str
    target: str
    version: int = 1
    aliases: tuple[str, ...] = ()

    def load_task(self) -> Task:
        """The task object (imports its module)."""
        return load_target(self.target)


TASKS: Registry[Any] = Registry("task", entry_points="stsbench.tasks", normalise=_key)


def register_task(task: Any) -> Any:
    """Register an :class:`STSSpec`, a :class:`LazyTask` or a Task object under its name and aliases."""
    aliases = tuple(getattr(task, "aliases", ()))
    for alias in aliases:
        if TASKS.aliases.get(alias, task.name) != task.name:
            raise StsbenchError(
                f"task {task.name!r}: its alias {alias!r} already names {TASKS.aliases[alias]!r}"
            )
    TASKS.register(task.name, task, aliases=aliases)
    return task


STS_TASK_NAMES: tuple[str, ...] = tuple(spec.name for spec in BUILTIN_STS)
TRANSFER_TASK_NAMES = ("MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC")  # SimCSE's order
for _spec in BUILTIN_STS:
    register_task(_spec)
for _name in TRANSFER_TASK_NAMES:
    register_task(LazyTask(_name, "transfer", f"stsbench.tasks.transfer.tasks:{_name}"))
TASK_NAMES = STS_TASK_NAMES + TRANSFER_TASK_NAMES  # the built-in tasks
# the papers' task sets: what ``--tasks sts`` runs and every Avg. is over
TASK_SETS: dict[str, tuple[str, ...]] = {
    "sts": STS_TASK_NAMES,
    "transfer": TRANSFER_TASK_NAMES,
    "full": TASK_NAMES,
}
SHORT_NAMES: dict[str, str] = {s.name: s.aliases[0] for s in BUILTIN_STS if s.aliases}  # the papers' headers


def task_entry(name: str) -> Any:
    """What is registered under ``name`` (light: an STS declaration or a :class:`LazyTask`, or a plugin's Task).

    A plugin's entry, once loaded, also answers to its aliases.
    """
    entry = TASKS.get(name)
    if entry.name != TASKS.check(name):
        raise StsbenchError(
            f"the task registered as {TASKS.check(name)!r} calls itself {entry.name!r}; name its entry point "
            f"{entry.name!r}"
        )
    missing = [a for a in getattr(entry, "aliases", ()) if a not in TASKS.aliases]
    if missing:
        register_task(entry)
    return entry


def _find(raw: str) -> str:
    """The registered name ``raw`` spells; plugins' aliases are read (their modules imported) only on a miss."""
    if raw in TASKS:
        return TASKS.check(raw)
    for name in TASKS.names():
        if name not in TASK_NAMES:  # a plugin's task: its aliases are known once it is loaded
            task_entry(name)
    return TASKS.check(raw, extra=tuple(TASK_SETS))


def task_names(spec: str | list[str]) -> list[str]:
    """``sts``, ``full``, ``STS12,STS-B`` (or a list of those) as task names, in order, once each.

    Raises ``StsbenchError`` for an unknown name, suggesting the nearest known one.
    """
    items = spec.split(",") if isinstance(spec, str) else [s for x in spec for s in x.split(",")]
    names: list[str] = []
    for raw in (i.strip() for i in items):
        if not raw:
            continue
        names += TASK_SETS[raw.lower()] if raw.lower() in TASK_SETS else [_find(raw)]
    if not names:
        raise StsbenchError("no task given; use --tasks sts (or transfer, full, or task names)")
    return list(dict.fromkeys(names))


def task_version(name: str) -> int:
    """The task's current version (what results of it must carry to be compared); light."""
    return int(getattr(task_entry(name), "version", 1))


def task_kind(name: str) -> str:
    """``sts`` or ``transfer``; light."""
    return str(task_entry(name).kind)


def short_name(name: str) -> str:
    """The column a task is printed as: its first alias (STS-B, SICK-R), else its name; other text as is."""
    if name not in TASKS:
        return name
    aliases = getattr(task_entry(name), "aliases", ())
    return aliases[0] if aliases else TASKS.check(name)


def task_columns(kind: str) -> list[str]:
    """Every registered task of ``kind`` in registry order (the built-ins first, then plugins' tasks)."""
    return [n for n in TASKS.names() if task_kind(n) == kind]


_tasks: dict[str, tuple[Any, Task]] = {}  # name -> (registry entry, its task object): one object per entry


def get_task(name: str) -> Task:
    """The runnable task ``name`` spells (an STS declaration becomes an :class:`~stsbench.tasks.sts.STSTask`)."""
    entry = task_entry(name)
    known = _tasks.get(entry.name)
    if known is not None and known[0] is entry:
        return known[1]
    if isinstance(entry, STSSpec):
        from stsbench.tasks.sts import STSTask

        task = STSTask(entry)
    elif isinstance(entry, LazyTask):
        task = entry.load_task()
        if (task.name, task.version) != (entry.name, entry.version):
            raise StsbenchError(
                f"{entry.target} is task {task.name!r} version {task.version}, registered as {entry.name!r} "
                f"version {entry.version}"
            )
    else:
        task = entry
    _tasks[entry.name] = (entry, task)
    return task


def resolve_tasks(spec: str | list[str]) -> list[Task]:
    """Turn ``sts``, ``full``, ``STS12,STS-B`` (or a list of those) into tasks, in order, once each."""
    return [get_task(n) for n in task_names(spec)]
