"""SentEval transfer tasks (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC)."""

from __future__ import annotations

from stsbench.tasks.base import Task

TRANSFER_TASKS: list[Task] = []
