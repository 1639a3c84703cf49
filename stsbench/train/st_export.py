"""The sentence-transformers side of a checkpoint, built with its own module classes and written by its ``save()``.

Every SimCSE pooler (SimCSE ``evaluation.py``) is expressed with sentence-transformers modules (a plugin pooler is
not: its checkpoint has no sentence-transformers side), so
``SentenceTransformer(DIR)`` (and MTEB through it) gives the vectors of ``stsbench run --model DIR``:

- ``cls_before_pooler``: Pooling(cls).
- ``cls``: Pooling(cls) + Dense(H, H, tanh) holding SimCSE's MLP (sup SimCSE evaluates MLP([CLS])).
- ``avg``: Pooling(mean).
- ``avg_first_last``: WeightedLayerPooling over hidden_states[1:] with weight 1 on the first and last layers and 0
  elsewhere (their mean), then Pooling(mean); ``avg_top2``: the same over the last two layers. The backbone's
  config asks for ``output_hidden_states``: without it WeightedLayerPooling silently passes the last layer through.

``save()`` writes ``modules.json``, ``sentence_bert_config.json`` and ``config_sentence_transformers.json``; the model
card (``README.md``) is ours: the training config and the measured STS-B dev figure, with hub metadata.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch

from stsbench.encoders.pooling import POOLERS, needs_hidden_states
from stsbench.files import atomic_write_text


def st_modules():
    """sentence-transformers' module classes (Transformer, Pooling, Dense...), where this version keeps them."""
    try:  # sentence-transformers >= 6
        from sentence_transformers.sentence_transformer import modules
    except ImportError:  # 3.1 - 5.x
        from sentence_transformers import models as modules
    return modules


def _layer_weights(pooler: str, layers: int) -> tuple[int, torch.Tensor]:
    """(layer_start, weights) over ``hidden_states[layer_start:]`` whose weighted mean is the pooler's average."""
    if pooler == "avg_top2":
        return layers - 1, torch.tensor([1.0, 1.0])
    weights = torch.zeros(layers)
    weights[0] += 1.0  # hidden_states[1], the first transformer layer (SimCSE's "first")
    weights[-1] += 1.0
    return 1, weights


def build_modules(folder: Path, model, eval_pooler: str) -> list:
    """The module stack for the backbone saved in ``folder`` (read back from there)."""
    m = st_modules()
    config = model.backbone.config
    hidden = int(config.hidden_size)
    max_len = min(int(getattr(config, "max_position_embeddings", 512)), 512)
    if needs_hidden_states(eval_pooler):
        cfg_path = folder / "config.json"
        saved = json.loads(cfg_path.read_text(encoding="utf-8"))
        atomic_write_text(cfg_path, json.dumps({**saved, "output_hidden_states": True}, indent=2) + "\n")
    stack: list = [m.Transformer(str(folder), max_seq_length=max_len)]
    if needs_hidden_states(eval_pooler):
        start, weights = _layer_weights(eval_pooler, int(config.num_hidden_layers))
        stack.append(
            m.WeightedLayerPooling(
                hidden,
                num_hidden_layers=int(config.num_hidden_layers),
                layer_start=start,
                layer_weights=torch.nn.Parameter(weights),
            )
        )
    stack.append(m.Pooling(hidden, pooling_mode="cls" if eval_pooler.startswith("cls") else "mean"))
    if eval_pooler == "cls":
        stack.append(
            m.Dense(
                hidden,
                hidden,
                bias=True,
                activation_function=torch.nn.Tanh(),
                init_weight=model.mlp.dense.weight.detach().cpu().clone(),
                init_bias=model.mlp.dense.bias.detach().cpu().clone(),
            )
        )
    return stack


def model_card(meta: dict[str, Any], eval_pooler: str) -> str:
    """README.md for the hub: metadata header, how to load, the measured STS-B dev figure, the training config."""
    dev = meta.get("best_dev_spearman")
    dev_row = (
        f"| STS-B dev | {dev * 100:.2f} | {meta.get('step', '?')} |"
        if dev is not None
        else "| STS-B dev | - | - |"
    )
    training = json.dumps(meta.get("training", {}), indent=2, sort_keys=True, default=str)
    return f"""---
library_name: sentence-transformers
pipeline_tag: sentence-similarity
tags:
- sentence-transformers
- sentence-similarity
- stsbench
- {meta.get("method", "contrastive")}
base_model: {meta.get("backbone", "")}
---

# {meta.get("method", "contrastive")} checkpoint trained with stsbench

Backbone `{meta.get("backbone", "")}`, evaluation pooler `{eval_pooler}` (expressed with sentence-transformers
modules, so `SentenceTransformer(path)` gives the vectors `stsbench run --model path` scores).

```python
from sentence_transformers import SentenceTransformer
model = SentenceTransformer("path/or/hub-id")
```

## Measured

| task | Spearman x100 | step |
| --- | ---: | ---: |
{dev_row}

Test figures: `stsbench run --model path --tasks sts` (SentEval's protocol; never used for model selection).

## Training config

```json
{training}
```
"""


def write_sentence_transformers(folder: Path, model, eval_pooler: str, meta: dict[str, Any]) -> bool:
    """Build the stack, ``save()`` it into ``folder`` (beside the backbone) and write the model card.

    False, writing nothing, for a pooler another package registered (``stsbench.poolers``): sentence-transformers
    has no module for it, and a stack of its own (mean pooling) would give other vectors than ``stsbench run``.
    """
    if eval_pooler not in POOLERS:
        return False
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(modules=build_modules(folder, model, eval_pooler), device="cpu")
    st.save(str(folder), create_model_card=False)
    atomic_write_text(folder / "README.md", model_card(meta, eval_pooler))
    return True
