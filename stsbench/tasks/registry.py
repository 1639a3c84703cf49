"""The task objects by SentEval name (the names and sets themselves: :mod:`stsbench.tasks.names`)."""

from __future__ import annotations

from stsbench.tasks.base import Task
from stsbench.tasks.names import task_names
from stsbench.tasks.sts import STS_TASKS
from stsbench.tasks.transfer import TRANSFER_TASKS

TASKS: dict[str, Task] = {t.name: t for t in [*STS_TASKS, *TRANSFER_TASKS]}


def resolve_tasks(spec: str | list[str]) -> list[Task]:
    """Turn ``sts``, ``full``, ``STS12,STS-B`` (or a list of those) into tasks, in order, once each."""
    return [TASKS[n] for n in task_names(spec)]
