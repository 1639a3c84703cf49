"""Drive SimCSE's SentEval fork (../shared/reference/senteval) as SimCSE's evaluation.py does.

Used only by tests and benchmarks, as the oracle stsbench's numbers must equal; never by the package.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("STSBENCH_SHARED", ROOT.parent / "shared"))
REFERENCE = SHARED / "reference" / "senteval"
STS_NAMES = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness"]


def _importable() -> None:
    """Put the fork on ``sys.path`` and give it ``inspect.getargspec`` (gone in Python 3.11, used by senteval.utils)."""
    if str(REFERENCE) not in sys.path:
        sys.path.insert(0, str(REFERENCE))
    inspect.getargspec = inspect.getfullargspec


def patch_for_cpu(set_attr: Callable[[Any, str, Any], None] = setattr) -> None:
    """Make the fork run on a CPU-only machine with Python 3.11, the patches its README asks for.

    ``.cuda()`` of tensors and modules returns them unchanged and ``PyTorchClassifier`` keeps its data where it is
    (``cudaEfficient``). ``set_attr`` applies them: ``setattr`` for the whole process (the benchmarks), a
    ``pytest.MonkeyPatch``'s ``setattr`` to undo them after a test. Patching twice is a no-op.
    """
    _importable()
    import senteval.tools.classifier as clf

    init = clf.PyTorchClassifier.__init__
    if getattr(init, "stsbench_cpu", False):
        return

    def cpu_init(self, *a, **k):
        init(self, *a, **k)
        self.cudaEfficient = True

    cpu_init.stsbench_cpu = True  # type: ignore[attr-defined]
    set_attr(torch.Tensor, "cuda", lambda self, *a, **k: self)
    set_attr(torch.nn.Module, "cuda", lambda self, *a, **k: self)
    set_attr(clf.PyTorchClassifier, "__init__", cpu_init)


def import_senteval(cpu: bool = True):
    """Import the fork; with ``cpu``, patched for the CPU for the rest of the process (:func:`patch_for_cpu`).

    With ``cpu=False`` (a CUDA machine) the fork runs as written: ``.cuda()`` moves its classifiers to the GPU.
    """
    if cpu:
        patch_for_cpu()
    else:
        _importable()
    import senteval  # noqa: F401

    return sys.modules["senteval"]


def hf_batcher(
    model_dir: Path,
    pooler: str,
    normalize: bool = False,
    max_length: int | None = None,
    device: str = "cpu",
):
    """SimCSE evaluation.py's batcher (tokenise the joined words, pad per batch, pool), on a HF model.

    As evaluation.py, the model and each batch sit on ``device`` (its ``cuda``, or the CPU).
    """
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir).eval().to(device)

    def batcher(params, batch):
        if len(batch) >= 1 and len(batch[0]) >= 1 and isinstance(batch[0][0], bytes):
            batch = [[word.decode("utf-8") for word in s] for s in batch]
        sentences = [" ".join(s) for s in batch]
        if max_length is not None:
            enc = tokenizer(
                sentences, return_tensors="pt", padding=True, max_length=max_length, truncation=True
            )
        else:
            enc = tokenizer(sentences, return_tensors="pt", padding=True)
        enc = {k: v.to(device) for k, v in enc.items()}
        with torch.no_grad():
            out = model(**enc, output_hidden_states=True, return_dict=True)
        last, hidden, mask = out.last_hidden_state, out.hidden_states, enc["attention_mask"]

        def masked(h):
            return (h * mask.unsqueeze(-1)).sum(1) / mask.sum(-1).unsqueeze(-1)

        if pooler == "cls":
            vec = out.pooler_output
        elif pooler == "cls_before_pooler":
            vec = last[:, 0]
        elif pooler == "avg":
            vec = masked(last)
        elif pooler == "avg_first_last":
            vec = masked((hidden[1] + hidden[-1]) / 2.0)
        elif pooler == "avg_top2":
            vec = masked((hidden[-1] + hidden[-2]) / 2.0)
        else:
            raise ValueError(pooler)
        if normalize:
            vec = torch.nn.functional.normalize(vec, p=2, dim=1)
        return vec.cpu().numpy()

    return batcher


def table_batcher(table):
    """A batcher reading precomputed embeddings (an stsbench EmbeddingTable) for joined sentences."""

    def batcher(params, batch):
        return np.asarray(table[[" ".join(s) for s in batch]])

    return batcher


def run_oracle_sts(
    batcher, tasks: list[str], mode: str = "test", data: Path | None = None, cpu: bool = True
) -> dict[str, float]:
    """SimCSE's reported figures: x100 rounded, STS12-16 ``all`` Spearman, STS-B/SICK-R test (or dev) Spearman.

    ``cpu=False``: the fork unpatched, as on SimCSE's own GPU runs (:func:`import_senteval`).
    """
    senteval = import_senteval(cpu)
    params = {
        "task_path": str(data or SHARED / "data"),
        "usepytorch": True,
        "kfold": 5 if mode != "test" else 10,
    }
    se = senteval.engine.SE(params, batcher, lambda params, samples: None)
    results = se.eval(tasks)
    out = {}
    for task in tasks:
        r = results[task]
        if task in ("STSBenchmark", "SICKRelatedness"):
            split = "dev" if mode == "dev" else "test"
            out[task] = round(float(r[split]["spearman"][0]) * 100, 2)
        elif mode != "dev":
            out[task] = round(float(r["all"]["spearman"]["all"]) * 100, 2)
    return out
