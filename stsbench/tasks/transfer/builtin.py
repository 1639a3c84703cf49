"""The SentEval transfer tasks (MR, CR, SUBJ, MPQA, SST2, TREC, MRPC) as objects.

Each is a module attribute, the lazy target :mod:`stsbench.tasks.registry` names
(``stsbench.tasks.transfer.builtin:MR``): importing this module imports torch, which a task lookup never does.
"""

from __future__ import annotations

from stsbench.tasks.base import Task
from stsbench.tasks.transfer.tasks import BinaryTask, MRPCTask, SST2Task, TRECTask

MR = BinaryTask("MR", "MR", "rt-polarity.pos", "rt-polarity.neg")
CR = BinaryTask("CR", "CR", "custrev.pos", "custrev.neg")
SUBJ = BinaryTask("SUBJ", "SUBJ", "subj.objective", "subj.subjective")
MPQA = BinaryTask("MPQA", "MPQA", "mpqa.pos", "mpqa.neg")
SST2 = SST2Task()
TREC = TRECTask()
MRPC = MRPCTask()
# SimCSE's order: MR, CR, SUBJ, MPQA, SST2, TREC, MRPC
TRANSFER_TASKS: list[Task] = [MR, CR, SUBJ, MPQA, SST2, TREC, MRPC]
