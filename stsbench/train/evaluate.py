"""Model selection: STS-B dev Spearman of the online encoder, through the evaluation path of ``stsbench run``.

The dev pairs are read and scored by the STS-B task (:mod:`stsbench.tasks.sts`) and the sentences are tokenised,
batched and padded by :class:`~stsbench.encoders.hf.HFEncoder`; only the forward pass is the trainer's
(``ContrastiveEncoder.sentence_embedding``, the vector the exported checkpoint gives with its declared pooler).
So the trainer's dev figure is the one ``stsbench run --mode dev --tasks STSBenchmark`` reports on the checkpoint.
The test sets are for ``stsbench run`` on the saved checkpoint, except with ``select_on: sts-test``: MoCoSE's
official code keeps the checkpoint with the best mean of the seven STS test sets (``evalModel`` in its
mocose_tools.py: each task's Spearman x100 printed to two decimals, then averaged), never our default, and every
figure of a run selected so is marked in the report ("[selected on the STS test sets]").

Each dev evaluation also measures alignment and uniformity on the embeddings it has just encoded
(:func:`stsbench.tasks.align_uniform.align_uniform_from_table`, the function ``stsbench align-uniform`` runs on a
checkpoint): the training log's trajectory (SimCSE Figure 2), for the cost of the arithmetic alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from stsbench.encoders.base import EncodeOptions, embed_table
from stsbench.encoders.hf import HFEncoder
from stsbench.encoders.resolve import ModelSpec
from stsbench.errors import StsbenchError
from stsbench.tasks.align_uniform import align_uniform_from_table
from stsbench.tasks.base import Mode, Task
from stsbench.tasks.registry import resolve_tasks


class TrainingEncoder(HFEncoder):
    """The model being trained, seen through the runner's encoder (same tokenisation, batching, truncation)."""

    def __init__(self, model, tokenizer, device: torch.device | str) -> None:
        # no truncation unless asked (SentEval), never past the position embeddings: HFEncoder's rule
        limit = getattr(model.backbone.config, "max_position_embeddings", None)
        options = EncodeOptions(pooler=model.pooler, max_length=limit, device=str(device))
        super().__init__(ModelSpec("training", Path(), "train", model.pooler), options, fingerprint="")
        self._model = model
        self._tokenizer = tokenizer
        self._types = True  # ContrastiveEncoder drops the type ids itself for models without segments

    def embed_batch(self, input_ids: torch.Tensor, mask: torch.Tensor, hidden: bool) -> torch.Tensor:
        """The trainer's evaluation embedding ``(B, H)`` of one padded batch."""
        batch = {
            "input_ids": input_ids,
            "attention_mask": mask,
            "token_type_ids": torch.zeros_like(input_ids),
        }
        return self._model.sentence_embedding(batch)


@dataclass
class EvalSets:
    """STS tasks as they load them (their validation, their dropped rows), read once per run."""

    TASKS, MODE = "STSBenchmark", Mode.dev
    tasks: list[tuple[Task, Any]]
    texts: list[str]  # every task's sentences, each once
    tokenizer: Any
    batch_size: int

    @classmethod
    def load(cls, data_dir: Path, tokenizer, batch_size: int = 128) -> EvalSets:
        """Read the tasks :attr:`TASKS` names, in :attr:`MODE`."""
        tasks = [(task, task.load(data_dir, cls.MODE)) for task in resolve_tasks(cls.TASKS)]
        texts = list(dict.fromkeys(t for task, data in tasks for t in task.texts(data)))
        return cls(tasks, texts, tokenizer, batch_size)


class DevSet(EvalSets):
    """STS-B dev (``sts-dev.csv``): what a run selects its checkpoint on."""


class TestSets(EvalSets):
    """STS12-16, STS-B and SICK-R test: what ``select_on: sts-test`` selects on."""

    TASKS, MODE = "sts", Mode.test


@contextlib.contextmanager
def eager_forward(model: torch.nn.Module) -> Iterator[None]:
    """Within the block the modules ``--compile`` compiled in place run their own (eager) forward.

    ``nn.Module.compile`` keeps the compiled call in ``_compiled_call_impl``, which ``__call__`` prefers. An
    evaluation through it compiled an inference graph at every new batch shape and then marked the lengths and
    batch size dynamic, so that the training step, compiled after the evaluation before step 1, was traced with
    symbolic shapes (on a CPU: three recompilations in a 6-step run, none now). Evaluation runs in eager mode,
    as ``stsbench run`` runs the exported checkpoint, and the compiled step keeps its static shapes.
    """
    held = [(m, m._compiled_call_impl) for m in model.modules() if getattr(m, "_compiled_call_impl", None)]
    for module, _ in held:
        module._compiled_call_impl = None
    try:
        yield
    finally:
        for module, compiled in held:
            module._compiled_call_impl = compiled


def _embedded(model, tokenizer, texts: list[str], batch_size: int, device: torch.device | str):
    """The eval embeddings of ``texts`` (eval mode, no gradients, eager), the model's mode restored after."""
    was_training = model.training
    model.eval()
    try:
        encoder = TrainingEncoder(model, tokenizer, device)
        with eager_forward(model):
            return embed_table(encoder, texts, batch_size=batch_size, show_progress=False)
    finally:
        model.train(was_training)


@dataclass(frozen=True)
class DevScores:
    """One dev evaluation: the selection score and the geometry of the same embeddings."""

    spearman: float  # cosine Spearman, in [-1, 1]
    alignment: float | None  # l_align over the gold > 4 pairs (SimCSE Fig. 2's y); None: no such pair
    uniformity: float | None  # l_uniform over the unique sentences (its x)


def dev_scores(model, dev: DevSet, device: torch.device | str) -> DevScores:
    """The cosine Spearman on STS-B dev with the eval pooler (eval mode, no gradients), and l_align, l_uniform.

    A dev file without a pair above gold 4 (not STS-B's own) has no alignment: the evaluation logs none, and
    selects on the Spearman as ever.
    """
    table = _embedded(model, dev.tokenizer, dev.texts, dev.batch_size, device)
    ((task, data),) = dev.tasks
    spearman = float(task.evaluate(data, table, Mode.dev).details["dev"]["spearman"])
    try:
        geometry = align_uniform_from_table(data, table, "dev")
    except StsbenchError:
        return DevScores(spearman, None, None)
    return DevScores(spearman, geometry.alignment, geometry.uniformity)


def sts_test_average(model, sets: TestSets, device: torch.device | str) -> float:
    """The mean of the seven tasks' reported Spearman (x100, two decimals, as evalModel prints them), in [-1, 1]."""
    table = _embedded(model, sets.tokenizer, sets.texts, sets.batch_size, device)
    reported = [task.evaluate(data, table, Mode.test).reported for task, data in sets.tasks]
    return sum(reported) / len(reported) / 100
