"""Export a checkpoint of the tiny BERT, perturbed by a seed: ``export_worker.py OUT TINY SEED [KILL]``.

``KILL`` ends the process with ``os._exit`` (no cleanup, as a SIGKILL or a power cut): ``weights`` right after
``model.safetensors`` is written, ``commit-N`` after the N-th file of the written export is moved into place.
"""

from __future__ import annotations

import os
import pathlib
import sys
from pathlib import Path


def exporter_model(tiny: Path, seed: int):
    """The tiny BERT with seeded noise on its weights (each seed a different checkpoint), under the avg pooler."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from stsbench.train.model import ContrastiveEncoder

    model = ContrastiveEncoder(AutoModel.from_pretrained(tiny), "avg")
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    return model, AutoTokenizer.from_pretrained(tiny)


def export(out: Path, tiny: Path, seed: int) -> None:
    """:func:`stsbench.train.checkpoint.export_model` of :func:`exporter_model`."""
    from stsbench.train.checkpoint import export_model

    model, tokenizer = exporter_model(tiny, seed)
    export_model(
        out, model=model, tokenizer=tokenizer, eval_pooler="avg", meta={"method": "simcse", "step": seed}
    )


def _kill_after_weights() -> None:
    import transformers.modeling_utils as mu

    save = mu.safe_save_file

    def save_then_die(*args, **kwargs):
        save(*args, **kwargs)
        os._exit(3)

    mu.safe_save_file = save_then_die


def _kill_after_moves(n: int) -> None:
    replace = pathlib.Path.replace
    moved = []

    def replace_then_die(self, target):
        result = replace(self, target)
        staged = [any(part.startswith(".export") for part in Path(p).parent.parts) for p in (self, target)]
        if staged == [True, False]:
            moved.append(self)  # a file of the export moved from its hidden folder into the checkpoint
            if len(moved) == n:
                os._exit(3)
        return result

    pathlib.Path.replace = replace_then_die


def main() -> None:
    out, tiny, seed = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    kill = sys.argv[4] if len(sys.argv) > 4 else ""
    if kill == "weights":
        _kill_after_weights()
    elif kill.startswith("commit-"):
        _kill_after_moves(int(kill.removeprefix("commit-")))
    export(out, tiny, seed)


if __name__ == "__main__":
    main()
