"""stsbench's exact scores inside other trainers: a sentence-transformers evaluator and a Hugging Face callback.

Imported on its own (``from stsbench.integrations import ...``), never by ``import stsbench``. Both score as
:func:`stsbench.evaluate` does (:func:`~stsbench.evaluation.run.evaluate_model`: the tasks, tokenisation, pooling
and Spearman of ``stsbench run``), by default STS-B dev, as SimCSE selects checkpoints. Neither caches
(``use_cache=False`` in their :class:`~stsbench.encoders.base.EncodeOptions`): the weights change between
evaluations.

- :func:`sentence_transformers_evaluator` builds an evaluator (a subclass of ``BaseEvaluator`` in
  sentence-transformers 6.x, ``SentenceEvaluator`` before) to pass as ``evaluator=`` to its trainer.
- :class:`STSBenchCallback` scores every ``eval_steps`` optimiser steps and writes through the trainer's own
  ``log`` (metrics added to the ``logs`` dict in ``on_log``/``on_evaluate`` miss the reporting integrations,
  W&B, TensorBoard...). Attach it with :meth:`STSBenchCallback.attach`, which also keeps the trainer.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from stsbench.encoders.base import EncodeOptions
from stsbench.errors import StsbenchError


def _scores(model, encode: EncodeOptions, *, tasks, mode, data_dir, tokenizer=None) -> dict[str, float]:
    """``{task: reported figure}`` for the model as it is now (the evaluation restores train mode)."""
    from stsbench.evaluation.run import evaluate_model

    # the figures only: no intervals at every evaluation step of a training run
    run = evaluate_model(model, tasks, mode, encode, tokenizer=tokenizer, data_dir=data_dir, bootstrap=0)
    return {r.task: r.reported for r in run.results}


def sentence_transformers_evaluator(
    tasks: str | list[str] = "STSBenchmark",
    mode: str = "dev",
    *,
    data_dir: Path | None = None,
    batch_size: int = 128,
    name: str = "stsbench",
):
    """An evaluator for ``SentenceTransformerTrainer(evaluator=...)``; metrics ``{name}_{task}_{mode}``.

    The primary metric is the first task's figure (Spearman x100 for STS), higher is better.
    """
    try:  # sentence-transformers >= 6
        from sentence_transformers.base.evaluation.evaluator import BaseEvaluator
    except ImportError:  # 3.1 - 5.x
        from sentence_transformers.evaluation import SentenceEvaluator as BaseEvaluator

    class STSBenchEvaluator(BaseEvaluator):
        """stsbench's scores of a SentenceTransformer (its own pooling), as ``stsbench run`` computes them."""

        def __init__(self) -> None:
            super().__init__()
            self.name = name
            self.greater_is_better = True
            self.primary_metric = None

        def __call__(self, model, output_path: str | None = None, epoch: int = -1, steps: int = -1):
            encode = EncodeOptions(batch_size=batch_size, use_cache=False)
            scores = _scores(model, encode, tasks=tasks, mode=mode, data_dir=data_dir)
            metrics = {f"{task}_{mode}": value for task, value in scores.items()}
            self.primary_metric = next(iter(metrics))
            metrics = self.prefix_name_to_metrics(metrics, self.name)
            store = getattr(self, "store_metrics_in_model_card_data", None)
            if store is not None:  # (model, metrics, epoch, step) since 3.4; (model, metrics) in 3.3
                when = (epoch, steps) if len(inspect.signature(store).parameters) >= 4 else ()
                store(model, metrics, *when)
            return metrics

        def get_config_dict(self) -> dict[str, Any]:
            return {"tasks": tasks, "mode": mode}

    return STSBenchEvaluator()


class STSBenchCallback(TrainerCallback):
    """Scores the model being trained every ``eval_steps`` steps and logs ``stsbench/{task}_{mode}``.

    ``encoder_of`` picks the sentence encoder inside the trained model (default: its ``base_model``, e.g. the
    BertModel of a BertForMaskedLM); ``pooler`` is SimCSE's pooler for it (default ``cls``, SimCSE's).
    """

    def __init__(
        self,
        tokenizer,
        *,
        eval_steps: int,
        tasks: str | list[str] = "STSBenchmark",
        mode: str = "dev",
        pooler: str | None = None,
        data_dir: Path | None = None,
        batch_size: int = 128,
        encoder_of: Callable[[Any], Any] = lambda model: getattr(model, "base_model", model),
    ) -> None:
        if eval_steps < 1:
            raise StsbenchError(f"eval_steps must be >= 1, got {eval_steps}")
        self.tokenizer, self.eval_steps = tokenizer, eval_steps
        self.tasks, self.mode, self.data_dir, self.encoder_of = tasks, mode, data_dir, encoder_of
        self.encode = EncodeOptions(pooler=pooler, batch_size=batch_size, use_cache=False)
        self.trainer = None
        self.history: list[tuple[int, dict[str, float]]] = []

    def attach(self, trainer) -> STSBenchCallback:
        """Add this callback to ``trainer`` and keep it, to log through ``trainer.log``."""
        self.trainer = trainer
        trainer.add_callback(self)
        return self

    def on_step_end(self, args, state, control, model=None, **kwargs: Any):
        """Every ``eval_steps`` steps: score, remember, and log through the trainer."""
        if state.global_step % self.eval_steps or model is None:
            return control
        if self.trainer is None:
            raise StsbenchError("STSBenchCallback needs its trainer: add it with callback.attach(trainer)")
        given = dict(tasks=self.tasks, mode=self.mode, data_dir=self.data_dir, tokenizer=self.tokenizer)
        scores = _scores(self.encoder_of(model), self.encode, **given)
        self.history.append((state.global_step, scores))
        self.trainer.log({f"stsbench/{task}_{self.mode}": value for task, value in scores.items()})
        return control
