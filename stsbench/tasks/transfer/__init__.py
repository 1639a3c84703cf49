"""SentEval transfer tasks (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC)."""

from __future__ import annotations

from stsbench.tasks.base import Task
from stsbench.tasks.transfer.tasks import BinaryTask, MRPCTask, SST2Task, TRECTask

# SimCSE's order: MR, CR, SUBJ, MPQA, SST2, TREC, MRPC
TRANSFER_TASKS: list[Task] = [
    BinaryTask("MR", "MR", "rt-polarity.pos", "rt-polarity.neg"),
    BinaryTask("CR", "CR", "custrev.pos", "custrev.neg"),
    BinaryTask("SUBJ", "SUBJ", "subj.objective", "subj.subjective"),
    BinaryTask("MPQA", "MPQA", "mpqa.pos", "mpqa.neg"),
    SST2Task(),
    TRECTask(),
    MRPCTask(),
]
