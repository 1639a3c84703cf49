"""Task names and task sets, as SentEval and SimCSE name them."""

from __future__ import annotations

from stsbench.errors import StsbenchError
from stsbench.tasks.base import Task
from stsbench.tasks.sts import STS_TASKS
from stsbench.tasks.transfer import TRANSFER_TASKS

TASKS: dict[str, Task] = {t.name: t for t in [*STS_TASKS, *TRANSFER_TASKS]}
TASK_SETS: dict[str, list[str]] = {
    "sts": [t.name for t in STS_TASKS],
    "transfer": [t.name for t in TRANSFER_TASKS],
    "full": [t.name for t in [*STS_TASKS, *TRANSFER_TASKS]],
}


def resolve_tasks(spec: str | list[str]) -> list[Task]:
    """Turn ``sts``, ``full``, ``STS12,STSBenchmark`` (or a list of those) into tasks, in order, once each."""
    items = spec.split(",") if isinstance(spec, str) else [s for x in spec for s in x.split(",")]
    names: list[str] = []
    lower = {n.lower(): n for n in TASKS}
    for raw in (i.strip() for i in items):
        if not raw:
            continue
        if raw.lower() in TASK_SETS:
            names += TASK_SETS[raw.lower()]
        elif raw.lower() in lower:
            names.append(lower[raw.lower()])
        else:
            known = ", ".join([*TASK_SETS, *TASKS])
            raise StsbenchError(f"unknown task '{raw}'; choose from: {known}")
    if not names:
        raise StsbenchError("no task given; use --tasks sts (or transfer, full, or task names)")
    return [TASKS[n] for n in dict.fromkeys(names)]
