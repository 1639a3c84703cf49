"""The options every method has: what to train on, how to optimise it, the views, the pooler, the device.

:class:`~stsbench.train.config.options.TrainConfig` takes them as its own fields, beside the selection and
bookkeeping options (:mod:`.shared_options`) and the method's own options (its sub-model, :mod:`.groups`).
Nothing here imports a plugin: the method's name is checked against the registry when a config is validated.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, field_validator, model_validator
from pydantic_core import PydanticCustomError

from stsbench.encoders.pooling import POOLERS, check_pooler
from stsbench.errors import StsbenchError
from stsbench.options import STRICT as _STRICT
from stsbench.options import flag, option
from stsbench.train.config.methods import METHODS

__all__ = ["CommonOptions"]


class CommonOptions(BaseModel):
    """What to train and how to optimise it: every method's options."""

    model_config = _STRICT

    # a name, not a Literal: the registry's, plugins included (read on first use), checked by _registered_method
    method: str | None = option(None, "The training method (stsbench train --help lists them).")
    model: str | None = option(
        None, "Backbone: a local HF model dir, all-MiniLM-L6-v2, or a hub id (needs internet).", short="-m"
    )
    train_file: str | None = option(
        None,
        "Training data: one sentence a line (.txt or 1-column CSV); sup SimCSE: "
        "CSV with header sent0,sent1[,hard_neg]. Or a corpus name, found in the data folder: wiki1m "
        "(`stsbench data download --wiki`), nli.",
    )
    train_dataset: str | None = option(
        None,
        "Training data as a Hugging Face datasets dataset instead of --train-file: a folder saved with "
        "save_to_disk, data files (.csv, .json, .jsonl, .parquet, .txt) or a folder of them, or a dataset in "
        "the local cache (offline: HF_DATASETS_OFFLINE=1); one text column is unsup, sent0,sent1[,hard_neg] sup.",
    )
    train_split: str | None = option(
        None, "--train-dataset's split (default: train, or its only split).", why="must name a split"
    )
    text_column: str | None = option(
        None,
        "--train-dataset's sentence column (default: sent0,sent1[,hard_neg], else text, else the only one).",
    )
    train_lines: int | None = option(
        None,
        "Train on the first N lines of the train file only (a CSV's header is one); e.g. 11914, the head "
        "of wiki1m shipped as wiki/wiki1m_head.txt (default: every line).",
        ge=2,
    )
    output: str | None = option(
        None, "Output dir: the best checkpoint at its root, resumable state in DIR/last.", short="-o"
    )
    data_dir: str | None = option(
        None, "Folder holding SentEval's downstream/ for STS-B dev (default: $STSBENCH_DATA, else ./data)."
    )
    seed: int = option(42, "Random seed (data order, dropout, repetition, initialisations).")
    epochs: int = option(1, "Passes over the training file.", ge=1)
    max_steps: int | None = option(
        None, "Stop after this many steps; the lr schedule then spans them (default: epochs).", ge=1
    )
    batch_size: int = option(
        64,
        "Sentences a batch (in-batch negatives: at least 2).",
        why="leaves no in-batch negatives; use at least 2 (the papers use 64)",
        ge=2,
        label="batch size",
    )
    lr: float = option(3e-5, "Peak learning rate (AdamW), decayed linearly to 0.", gt=0)
    warmup_steps: int = option(0, "Linear warm-up steps before the decay.", ge=0)
    weight_decay: float = option(0.0, "AdamW weight decay.", ge=0)
    weight_decay_exclude: Literal["none", "bias-layernorm"] = option(
        "none",
        "Parameters kept out of the weight decay: none, or biases and LayerNorm weights (bias-layernorm: "
        "the Hugging Face Trainer's, which the official SimCSE, ESimCSE and MoCoSE code trained with).",
    )
    optimizer: Literal["torch-adamw", "hf-adamw"] = option(
        "torch-adamw",
        "AdamW as torch has it (torch-adamw), or as the Hugging Face Trainer had it (hf-adamw: eps added "
        "before the bias correction, weight decay after the update; transformers 4.2.1 optimization.py, "
        "what the official SimCSE, ESimCSE and MoCoSE code trained with).",
    )
    max_grad_norm: float = option(1.0, "Clip the gradient norm to this (0: no clipping).", ge=0)
    max_length: int = option(
        32,
        "Truncate training sentences to this many tokens (repetition may add more).",
        why="is too short for the special tokens; use at least 2",
        ge=2,
    )
    length_buckets: int | None = option(
        None,
        "Encode each view in K passes of similar-length sentences, each padded to its own longest: less "
        "padding; the same function, but other dropout draws than one pass, so it changes the result "
        "(default: 4 on CPU, 1 = SimCSE's single pass on GPU; the choice is saved in the run's resolution).",
        ge=1,
    )
    batch_buckets: str | None = option(
        None,
        "Draw every batch from one bucket of sentence lengths (ESimCSE COLING Table 6's buc_len): N for two "
        "buckets (<= N, > N), A:B for <= A, A+1, ..., >= B (Table 6's 3~8: 3:8); default: no buckets.",
        label="buc_len",
    )
    batch_bucket_unit: Literal["words", "tokens"] = option(
        "words",
        "--batch-buckets' sentence length: whitespace words (our reading; the paper does not say) or the "
        "tokenizer's word-pieces, special tokens excluded.",
    )
    pad_to_max_length: bool = option(
        False,
        "Pad every view to --max-length (static shapes, for --compile and CUDA graphs) instead of to the "
        "longest in the batch, as SimCSE's collator does (off: fewer padded tokens; the same function up "
        "to float rounding).",
    )
    dropout: float | None = option(
        None,
        "Set the backbone's hidden and attention dropout (default: the backbone's, 0.1 for BERT).",
        ge=0,
        lt=1,
        label="dropout rate p",
    )
    augment: str = option(
        "none",
        "Augmentations added to the views, by name from the augmentation registry, applied in this order "
        "within each stage (text, tokens, embeddings); each targets the views its entry declares (none: "
        "the method's own views only; docs/extending.md lists how to add one).",
    )
    augment_views: Literal["declared", "anchor", "positive", "online", "target", "both"] = option(
        "declared",
        "The views --augment's augmentations act on: each the ones its entry declares (declared; SimCSE "
        "Table 2's: the positive x+, the paper being silent), or these for all (both: x and x+, or a momentum "
        "method's online and target branches, each drawn on its own).",
    )
    temperature: float = option(0.05, "Softmax temperature tau of the InfoNCE loss.", gt=0)
    # a name, not a Literal: the registry's, plugins included (stsbench.poolers), checked by _registered_pooler
    pooler: str | None = option(
        None,
        f"Training pooler: {', '.join(POOLERS)}, or one another package registers (stsbench.poolers entry "
        "point); cls adds SimCSE's MLP over [CLS] (default: the pooling the backbone declares, e.g. a "
        "sentence-transformers model's mean pooling, else cls).",
    )
    mlp_only_train: bool | None = option(
        None,
        "Use the cls MLP only in training and evaluate [CLS] before it "
        "(default: on for unsup, off for sup, as SimCSE).",
    )
    hard_negative_weight: float = option(
        0.0, "Sup SimCSE: added to the hard negative's logit (SimCSE's w).", ge=0
    )
    mlm_weight: float = option(
        0.0,
        "Weight of an auxiliary MLM loss (0: off; SimCSE used 0.1).",
        ge=0,
        label="MLM weight λ",
    )
    mlm_probability: float = option(0.15, "Masking rate of the MLM loss.", gt=0, lt=1)
    mlm_views: Literal["all", "anchor"] = option(
        "all",
        "MLM on every view, each masked on its own (official SimCSE train.py:484-485), or on the anchor only.",
    )
    mlm_head_init: Literal["pretrained", "random"] = option(
        "pretrained",
        "MLM head: the backbone's pretrained LM head where its checkpoint has one (official SimCSE "
        "train.py:371-373), else random; or random (BERT init).",
    )
    pooler_activation: Literal["tanh", "none"] = option(
        "tanh",
        "The cls training pooler: dense + tanh (SimCSE) or dense alone (official MoCoSE mocose.py:103-113).",
    )
    pooler_init: Literal["random", "backbone"] = option(
        "random",
        "The cls training pooler's start: random (BERT init) or the backbone's pretrained pooler "
        "(official MoCoSE notebook).",
    )
    ddp_gradient: Literal["global", "average"] = option(
        "global",
        "Several processes: the gradient of the global batch's loss (global: N processes of batch B step "
        "as one of batch N*B), or DDP's plain average of each process's gradient through its own slice "
        "(average: the official SimCSE/ESimCSE code under torch DDP, 1/N of global's).",
    )
    precision: Literal["fp32", "bf16", "fp16"] = option(
        "fp32", "fp32, or bf16 / fp16 autocast on CUDA (the loss stays fp32; fp16 with gradient scaling)."
    )
    compile: bool = option(
        False, "torch.compile the backbone; the first step's time, compilation included, is logged apart."
    )
    tf32: bool = option(
        False,
        "Let fp32 matmuls on CUDA use TF32 tensor cores during the training steps (CUDA only; evaluations fp32).",
    )
    cuda_graph: bool = option(
        False,
        "Replay each step (forward, backward, clip, AdamW, EMA and queue) from one CUDA graph: one CUDA "
        "device, --pad-to-max-length, fp32 or bf16; ESimCSE and MoCoSE once their queue is full. Other "
        "dropout draws than eager steps.",
    )

    @field_validator("model", "train_file", "train_dataset", "output", "data_dir", mode="before")
    @classmethod
    def _path_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, Path) else value

    @field_validator("augment", mode="before")
    @classmethod
    def _augmentations(cls, value: Any) -> Any:
        from stsbench.train.config.augmentations import parse_augment

        return parse_augment(value) if isinstance(value, str | list | tuple) else value

    @field_validator("batch_buckets", mode="before")
    @classmethod
    def _buckets(cls, value: Any) -> Any:
        from stsbench.train.schedule import parse_buckets

        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if isinstance(value, str):
            parse_buckets(value)  # a bad spec: one line
            return value.strip()
        return value

    @field_validator("method")
    @classmethod
    def _registered_method(cls, value: str | None) -> str | None:
        names = METHODS.names()
        if value is not None and value not in names:
            raise PydanticCustomError("unknown_choice", "unknown method", {"choices": tuple(names)})
        return value

    @field_validator("pooler")
    @classmethod
    def _registered_pooler(cls, value: str | None) -> str | None:
        return None if value is None else check_pooler(value)  # unknown: one line naming every registered one

    @model_validator(mode="after")
    def _one_source(self) -> CommonOptions:
        if self.train_file and self.train_dataset:
            raise StsbenchError("--train-file and --train-dataset: give the training data by one of them")
        for name in ("train_split", "text_column"):
            if getattr(self, name) is not None and not self.train_dataset:
                raise StsbenchError(f"{flag(name)} reads a --train-dataset; give one, or drop {flag(name)}")
        if self.batch_bucket_unit != "words" and self.batch_buckets is None:
            raise StsbenchError(
                "--batch-bucket-unit sets --batch-buckets' length; give --batch-buckets, or drop it"
            )
        return self
