"""Every training option, typed: its default (the paper's), its bounds, its help text, the methods it belongs to.

:class:`TrainConfig` is a frozen pydantic model, validated on construction, from Python, YAML or the CLI
alike. Its fields come in groups: the options every method has (:class:`CommonOptions`,
:class:`~stsbench.train.config.shared_options.SelectionOptions`) and those of some methods only, the option groups of the registered methods
(:data:`~stsbench.train.config.methods.METHODS`; the built-ins' in ``train/methods/<name>_options.py``). Each method's
:class:`~stsbench.train.config.methods.MethodSpec` says which groups it takes and where its paper's defaults
differ from SimCSE's; a config refuses options of another method and gets its method's defaults.
Defaults are SimCSE's unsupervised BERT-base settings (Gao et al., 2021, ``run_unsup_example.sh``),
ESimCSE's (Wu et al., 2022, Sec. 4.1 and 5) and MoCoSE's (Cao et al., 2022, Sec. 4.1, Tables 3-8).

Adding an option is one field in its group, ``name: type = option(default, help, ge=..., ...)`` (a
``Literal`` for a choice): the flag, its ``--help`` line and choices, the YAML key, the type and bound checks
with their one-line messages, the refusal for other methods and the reports' view of it follow. A rule
between fields is a ``model_validator`` of the group raising :class:`StsbenchError`; a method whose paper
uses another default is one entry in its :class:`MethodSpec` ``defaults``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ValidationError, field_validator, model_validator

from stsbench.encoders.pooling import POOLERS, check_pooler
from stsbench.errors import StsbenchError
from stsbench.train.config.augmentations import AUGMENTATIONS, TARGETS, augment_names, augmentation_specs
from stsbench.train.config.describe import flag, one_line
from stsbench.train.config.fields import STRICT as _STRICT
from stsbench.train.config.fields import option
from stsbench.train.config.methods import METHODS, MethodSpec, find_method, method_choices, method_specs
from stsbench.train.config.shared_options import SelectionOptions

__all__ = ["GROUP_OF", "CommonOptions", "SelectionOptions", "TrainConfig", "owners"]


class CommonOptions(BaseModel):
    """What to train and how to optimise it: every method's options."""

    model_config = _STRICT

    method: Literal[tuple(METHODS.names())] | None = option(  # type: ignore[valid-type]
        None, f"{method_choices()}."
    )
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
        0.0, "Weight of an auxiliary MLM loss (0: off; SimCSE used 0.1).", ge=0,
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


# an augmentation's option -> the names of the augmentations that take it (method_groups fills it)
AUGMENTATION_OF: dict[str, tuple[str, ...]] = {}


def method_groups() -> tuple[type[BaseModel], ...]:
    """Every method's option groups, then every augmentation's, each once; a field declared twice is refused."""
    owner = dict.fromkeys((*CommonOptions.model_fields, *SelectionOptions.model_fields), "the common options")
    groups: list[type[BaseModel]] = []
    # an augmentation's options are every method's, checked by TrainConfig._augment_options
    sources = [(f"method {m.name!r}", None, m.options) for m in method_specs()]
    sources += [(f"augmentation {a.name!r}", a.name, a.options) for a in augmentation_specs()]
    for who, augmentation, options in sources:
        for group in options:
            if group in groups:
                if augmentation is not None:  # a group several augmentations share (a flavour of theirs)
                    for name in group.model_fields:
                        AUGMENTATION_OF[name] = (*AUGMENTATION_OF.get(name, ()), augmentation)
                continue
            for name in group.model_fields:
                if name in owner:
                    raise StsbenchError(
                        f"{who}: option {name!r} of {group.__name__} is already one of {owner[name]}; give it "
                        "another name"
                    )
                owner[name] = group.__name__
                if augmentation is not None:
                    AUGMENTATION_OF[name] = (augmentation,)
            groups.append(group)
    return tuple(groups)


METHOD_GROUPS = method_groups()
# the fields of the methods' groups, by group (fields of none are common)
GROUP_OF: dict[str, type[BaseModel]] = {name: group for group in METHOD_GROUPS for name in group.model_fields}


def owners(name: str) -> list[MethodSpec]:
    """The methods option ``name`` belongs to."""
    return [spec for spec in METHODS.values() if spec.accepts(name)]


# field order is the reverse MRO: common, the methods' groups in registration order (noise, ESimCSE, MoCoSE,
# then plugins'), selection: the order of the saved dict
class TrainConfig(SelectionOptions, *reversed(METHOD_GROUPS), CommonOptions):  # type: ignore[misc]
    """A training run's options, machine-independent (saved with every checkpoint); validated on construction.

    Options not given take the method's defaults (its ``MethodSpec``); options of another method are refused;
    every refusal is a one-line :class:`StsbenchError`. What the data and the device decide is not here but
    in :class:`stsbench.train.config.resolve.TrainResolution`.
    """

    model_config = _STRICT

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise StsbenchError(one_line(exc, type(self))) from None

    @model_validator(mode="before")
    @classmethod
    def _only_own_options(cls, data: Any) -> Any:
        spec = find_method(data.get("method")) if isinstance(data, dict) else None
        if spec is None:
            return data
        foreign = sorted(n for n in data if n in cls.model_fields and not spec.accepts(n))
        if foreign:
            flags = ", ".join("--" + n.replace("_", "-") for n in foreign)
            them = owners(foreign[0])
            plural = "s" if len(foreign) > 1 else ""
            raise StsbenchError(
                f"{flags}: {' or '.join(s.label for s in them)} option{plural}, not for {spec.label}; "
                f"use with {' or '.join(f'--method {s.name}' for s in them)}"
            )
        return data

    @model_validator(mode="after")
    def _augmentations_fit(self) -> TrainConfig:
        """Each --augment fits the method's views; an augmentation's option is given with the augmentation."""
        used = augment_names(self.augment)

        def views(name: str) -> str:
            return AUGMENTATIONS[name].views if self.augment_views == "declared" else self.augment_views

        spec = find_method(self.method)
        takes = spec.augment_views if spec is not None else TARGETS
        problems = [
            f"--augment {name}: it augments the {views(name)} view(s), and {spec.label} takes "
            f"augmentations of {', '.join(takes) or 'no view'}; drop it, or train a method that takes it"
            for name in used
            if views(name) not in takes
        ]
        problems += [
            f"{flag(name)} is an option of the augmentation{'s' if len(AUGMENTATION_OF[name]) > 1 else ''} "
            f"{' or '.join(AUGMENTATION_OF[name])}; add --augment {AUGMENTATION_OF[name][0]}, or drop {flag(name)}"
            for name in sorted(self.model_fields_set & AUGMENTATION_OF.keys())
            if not set(AUGMENTATION_OF[name]) & set(used)
            and getattr(self, name) != type(self).model_fields[name].default
        ]
        if used and getattr(self, "fixed_dropout_mask", False):
            problems.append(
                f"--fixed-dropout-mask: one mask for both views needs them to be the same tokens, and --augment "
                f"{','.join(used)} makes them differ; drop one of the two"
            )
        if problems:
            raise StsbenchError(problems[0])
        return self

    @model_validator(mode="after")
    def _method_defaults(self) -> TrainConfig:
        spec = find_method(self.method)
        for name, value in (spec.defaults if spec else {}).items():
            if name not in self.model_fields_set:
                object.__setattr__(self, name, value)  # frozen: set once, here, before anyone sees it
        return self

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of every option, in field order."""
        return self.model_dump()

    def replace(self, **changes: Any) -> TrainConfig:
        """A new config: the options given to this one, with ``changes`` (validated again)."""
        return TrainConfig(**{**{n: getattr(self, n) for n in self.model_fields_set}, **changes})

    @classmethod
    def from_dict(cls, saved: Mapping[str, Any]) -> TrainConfig:
        """The config of a saved flat dict (``to_dict()`` or a run's saved ``training``).

        A saved dict holds every option; those of other methods at their defaults are dropped, and so are
        keys that are not options (``supervised``, a resolution's).
        """
        spec = find_method(saved.get("method"))
        fields = cls.model_fields
        keep = {
            n: v
            for n, v in saved.items()
            if n in fields and (spec is None or spec.accepts(n) or v != fields[n].default)
        }
        # a run saved before the view options existed ran these behaviours, whatever today's defaults
        before = {
            n: v for n, v in BEFORE_VIEW_OPTIONS.items() if n not in saved and (spec is None or spec.accepts(n))
        }
        return cls(**before, **keep)


# what stsbench did before the options of its views (target view and embeddings, MLM views and head) existed,
# where today's default differs: a run saved before them is read as it ran
BEFORE_VIEW_OPTIONS: dict[str, Any] = {
    "target_view": "clean",
    "target_embeddings": "target",
    "mlm_views": "anchor",
    "mlm_head_init": "random",
}
