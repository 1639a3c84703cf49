"""Every training option, typed, the methods and augmentations that own them, and their loading from YAML and the CLI.

:class:`TrainConfig` is a frozen pydantic model, validated on construction, from Python, YAML or the CLI
alike. Its own fields are the options every method has (:class:`CommonOptions`,
:class:`SelectionOptions`); those of some methods only, the option groups of the registered methods
(:data:`METHODS`; the built-ins' in ``train/methods/<name>_options.py``), are its sub-model ``method_options``,
built for its method on first use (:func:`options_model`), read and given flat all the same. Each method's
:class:`MethodSpec` says which groups it takes and where its paper's defaults
differ from SimCSE's; a config refuses options of another method and gets its method's defaults.
Defaults are SimCSE's unsupervised BERT-base settings (Gao et al., 2021, ``run_unsup_example.sh``),
ESimCSE's (Wu et al., 2022, Sec. 4.1 and 5) and MoCoSE's (Cao et al., 2022, Sec. 4.1, Tables 3-8).

Adding an option is one field in its group, ``name: type = option(default, help, ge=..., ...)`` (a
``Literal`` for a choice): the flag, its ``--help`` line and choices, the YAML key, the type and bound checks
with their one-line messages, the refusal for other methods and the reports' view of it follow. A rule
between fields is a ``model_validator`` of the group raising :class:`StsbenchError`; a method whose paper
uses another default is one entry in its :class:`MethodSpec` ``defaults``.

**Methods.** A spec owns everything stsbench needs to know of a method: its class (a lazy ``"module:attr"`` target, so
that naming and checking methods imports no torch), the option groups it adds to the config, its paper's
defaults where they differ from SimCSE's, the class that trains on sentence pairs (if any) and the size of
its queue. The config (the ``method`` choices, the fields, the refusals), the CLI
(``--method`` and its option panels), :func:`stsbench.train.methods.build_method` and the resolution all read
the registry. Another package adds a method under the ``stsbench.methods`` entry-point group::

    [project.entry-points."stsbench.methods"]
    toy = "my_package.toy:SPEC"

Entry points are read when a config is first built or an option first looked up, never at import: the
module holding a spec may import :class:`~stsbench.train.config.options.TrainConfig` as any module may.

**Augmentations.** The papers' augmentations act at three stages, and an augmentation declares which:

- ``text``: string to string before tokenization (nlpaug-style: synonyms, typos, back-translation);
- ``tokens``: token ids to token ids after tokenization, before padding (crop, deletion, repetition, MLM
  replacement);
- ``embeddings``: on a view's input embeddings or position ids inside the forward pass (cut-off, shuffle).

It also declares the views it targets by default: ``anchor`` (x), ``positive`` (x+), ``online`` and ``target``
(a momentum method's branches) or ``both``; a method's spec says which it takes
(:attr:`~stsbench.train.config.options.MethodSpec.augment_views`), and the config refuses others in one line. ``--augment
NAME[,NAME]`` adds augmentations to a run, applied in the order given within each stage; their randomness comes
from the run's seeded generators (the batch's numpy generator for text and tokens, torch's for embeddings), so
a run is as deterministic with them as without. An augmentation's option groups join the training config
(every method takes them; a non-default value without the augmentation is refused). Another package adds one
under the ``stsbench.augmentations`` entry points::

    [project.entry-points."stsbench.augmentations"]
    swap = "my_package.swap:SPEC"

No torch here: configs name and check augmentations without importing one.

**Loading.** Options from YAML and the command line into a :class:`TrainConfig`; the table of options the CLI is built from.

Precedence: the method's defaults < the YAML file < the CLI flags. Every value goes through the same
validation as ``TrainConfig(...)`` from Python; a refusal names the file a bad value came from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache, partial
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticCustomError

from stsbench import options as describe
from stsbench.encoders.pooling import POOLERS, check_pooler
from stsbench.errors import StsbenchError
from stsbench.options import STRICT, flag, one_line, option
from stsbench.options import STRICT as _STRICT
from stsbench.registry import Registry, load_target
from stsbench.train.tracking import comma_names, parse_report_to

# -- the methods' registry -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MethodSpec:
    """A training method: what the config, the CLI, the resolution and ``build_method`` read of it.

    ``method``: its :class:`~stsbench.train.methods.base.Method` subclass or ``"module:attr"``; ``options``: the
    option groups (pydantic models of ``option(...)`` fields) it takes beyond the common ones, which may be
    shared with other methods; ``defaults``: its paper's values where they differ from the fields' defaults;
    ``supervised``: the class that trains on ``sent0,sent1[,hard_neg]`` CSV files (None: one sentence a
    line only); ``queue_size(cfg, processes)``: the negatives it queues at most (None: no queue); ``about``:
    what ``--method NAME`` trains on, for ``--help``; ``augment_views``: the views an ``--augment``
    augmentation may target (one sentence a line; () refuses every one).

    What reports, checks and dry runs ask of a method, it answers here: ``variant(config)``: what reports call
    a run of it (the papers' row names: ``unsup-SimCSE``, ``word repetition only``; None: :attr:`label`);
    ``components(config)``: the paper's components the run used, by name (an ablation table's columns);
    ``traceable_distance``: its runs log MoCoSE's maximum traceable distance (a momentum target), which figures
    draw against; ``model_options``: its options that name models it loads, which ``reproduce`` checks are
    here before it starts.
    """

    name: str
    label: str
    method: Any
    options: tuple[type[BaseModel], ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    supervised: Any = None
    queue_size: Callable[[TrainConfig, int], int] | None = None
    about: str = ""
    augment_views: tuple[str, ...] = ("anchor", "positive", "both")  # the views --augment may target
    variant: Callable[[Mapping[str, Any]], str] | None = None
    components: Callable[[Mapping[str, Any]], dict[str, bool]] | None = None
    traceable_distance: bool = False
    model_options: tuple[str, ...] = ()

    def run_label(self, config: Mapping[str, Any]) -> str:
        """What reports call a run of this method with ``config`` (its saved options)."""
        return self.variant(config) if self.variant is not None else self.label

    def used(self, config: Mapping[str, Any]) -> dict[str, bool]:
        """The paper's components a run with ``config`` used, by name (none for a method without components)."""
        return self.components(config) if self.components is not None else {}

    def accepts(self, name: str) -> bool:
        """Whether option ``name`` belongs to this method (options of no method's group belong to all)."""
        if any(name in group.model_fields for group in self.options):
            return True
        return not any(name in group.model_fields for spec in METHODS.values() for group in spec.options)

    def method_class(self, supervised: bool = False) -> type:
        """The class to build: :attr:`supervised`'s for a sentence-pair train file, else :attr:`method`'s."""
        target = self.supervised if supervised else self.method
        if target is None:
            raise StsbenchError(f"{self.label} trains on one sentence a line, not on sentence pairs")
        return _load_class("method", self.name, target)


METHODS: Registry[MethodSpec] = Registry("method", entry_points="stsbench.methods")
"""Every training method by name: the built-ins (their specs in ``stsbench/train/methods/*_options.py``), then plugins."""
# the built-ins, one line each: a method's spec is in its options module beside its class
METHODS.register("simcse", "stsbench.train.methods.simcse_options:SPEC")
METHODS.register("esimcse", "stsbench.train.methods.esimcse_options:SPEC")
METHODS.register("mocose", "stsbench.train.methods.mocose_options:SPEC")


def method_specs() -> list[MethodSpec]:
    """Every registered method's spec, loaded and checked (a plugin's target must be a spec of its own name)."""
    return METHODS.specs(MethodSpec)


def find_method(name: object) -> MethodSpec | None:
    """The spec of the method ``name`` names exactly, or None (no method, or an unknown one)."""
    return METHODS.get(name) if isinstance(name, str) and name in METHODS.names() else None


def method_choices() -> str:
    """``--method``'s help: each name with what it trains on, ``simcse (...), esimcse or mocose``."""
    return _either(f"{spec.name} ({spec.about})" if spec.about else spec.name for spec in method_specs())


def method_labels() -> str:
    """The methods for ``stsbench train``'s help: ``SimCSE (unsup or sup), ESimCSE or MoCoSE``."""
    return _either(
        f"{spec.label} (unsup or sup)" if spec.supervised else spec.label for spec in method_specs()
    )


def _either(names: Iterable[str]) -> str:
    """``a, b or c`` (``a`` alone for one)."""
    *rest, last = names
    return f"{', '.join(rest)} or {last}" if rest else last


def share(default: float, help_text: str, **more: Any) -> Any:
    """An option that is a share strictly between 0 and 1 (of positions, words or features)."""
    return option(default, help_text, gt=0, lt=1, **more)


# -- the augmentations' registry -----------------------------------------------------------------------------


STAGES = ("text", "tokens", "embeddings")
TARGETS = ("anchor", "positive", "online", "target", "both")
NONE = "none"


@dataclass(frozen=True)
class AugmentationSpec:
    """An augmentation: its class, its stage, the views it targets, its option groups, a line for ``--help``.

    ``augmentation``: a :class:`~stsbench.train.augment.base.Augmentation` subclass or ``"module:attr"``;
    ``model_options``: its options that name models (``reproduce`` checks those are here before it starts).
    """

    name: str
    stage: str
    augmentation: Any
    views: str = "positive"
    options: tuple[type[BaseModel], ...] = ()
    about: str = ""
    # its options naming models it loads (comma-separated): reproduce's checks
    model_options: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for what, value, choices in (("stage", self.stage, STAGES), ("views", self.views, TARGETS)):
            if value not in choices:
                raise StsbenchError(
                    f"augmentation {self.name!r}: {what} {value!r}; choose from {', '.join(choices)}"
                )

    @classmethod
    def of(cls, module: str, stage: str, name: str, *options: type[BaseModel], about: str = "", **more: Any):
        """A built-in's spec: its class in ``module`` named after it; ``about``: its first group's doc."""
        target = f"{module}:{name.title().replace('-', '')}"
        return cls(name, stage, target, options=options, about=about or options[0].__doc__, **more)

    def augmentation_class(self) -> type:
        """The class to build (imported now)."""
        return _load_class("augmentation", self.name, self.augmentation)


def _load_class(kind: str, name: str, target: Any) -> type:
    try:
        return load_target(target)
    except (ImportError, AttributeError) as exc:
        raise StsbenchError(f"{kind} {name!r}: its class {target!r} failed to load: {exc}") from None


AUGMENTATIONS: Registry[AugmentationSpec] = Registry("augmentation", entry_points="stsbench.augmentations")
"""Every augmentation by name: the built-ins, then plugins."""
AUGMENTATIONS.register("repetition", "stsbench.train.augment.repetition:SPEC")
AUGMENTATIONS.register("crop", "stsbench.train.augment.deletion:CROP")
AUGMENTATIONS.register("word-deletion", "stsbench.train.augment.deletion:WORD_DELETION")
AUGMENTATIONS.register("delete-one-word", "stsbench.train.augment.deletion:DELETE_ONE_WORD")
AUGMENTATIONS.register("mlm", "stsbench.train.augment.mlm:MLM")
AUGMENTATIONS.register("mask-fill", "stsbench.train.augment.mlm:MASK_FILL")
AUGMENTATIONS.register("typos", "stsbench.train.augment.text:TYPOS")
AUGMENTATIONS.register("back-translation", "stsbench.train.augment.text:BACK_TRANSLATION")
AUGMENTATIONS.register("synonyms", "stsbench.train.augment.text:SYNONYMS")
AUGMENTATIONS.register("paraphrase", "stsbench.train.augment.text:PARAPHRASE")
AUGMENTATIONS.register("token-cutoff", "stsbench.train.augment.cutoff:TOKEN_CUTOFF")
AUGMENTATIONS.register("feature-cutoff", "stsbench.train.augment.cutoff:FEATURE_CUTOFF")
AUGMENTATIONS.register("position-shuffle", "stsbench.train.augment.cutoff:POSITION_SHUFFLE")


def augmentation_specs() -> list[AugmentationSpec]:
    """Every registered augmentation's spec, loaded and checked (a plugin's must be a spec of its own name)."""
    return AUGMENTATIONS.specs(AugmentationSpec)


def parse_augment(value: str | list[str] | tuple[str, ...] | None) -> str:
    """``"repetition, toy"`` or a list of names -> ``"repetition,toy"`` (order kept, each once); ``none``: none."""
    # an unknown name: one line with the nearest
    names = comma_names(value, lambda name: name if name == NONE else AUGMENTATIONS.check(name))
    return ",".join(n for n in names if n != NONE) or NONE


def augment_names(value: str) -> list[str]:
    """The names of a config's canonical ``augment`` (none: [])."""
    return [] if value == NONE else value.split(",")


# -- selection, bookkeeping and the groups several methods share ---------------------------------------------


class NoiseOptions(BaseModel):
    """The Gaussian-dropout variant (SimCSE and ESimCSE)."""

    model_config = _STRICT

    gaussian_noise_std: float = option(
        0.0,
        "Gaussian-dropout variant: add N(0, std^2) noise to the pooled embeddings of both views in "
        "training only (0: off; the report used 0.1).",
        ge=0,
    )
    gaussian_dropout_p: float = option(
        0.0,
        "The report's Gaussian dropout: replace this share of the training embeddings' entries (both views) "
        "by N(0, std^2) draws, training only (0: off; the report: 0.1).",
        ge=0,
        le=1,
    )
    gaussian_dropout_std: float = option(
        0.1, "Gaussian dropout: std of the replacing draws (the report: 0.1).", ge=0
    )


class FixedMaskOptions(BaseModel):
    """SimCSE Table 4's "Fixed 0.1": both views through one dropout mask."""

    model_config = _STRICT

    fixed_dropout_mask: bool = option(
        False,
        "One dropout mask for both views (SimCSE Table 4's 'Fixed 0.1'): each sentence is encoded once and its "
        "embedding is both x and x+; only where the two views are the same tokens.",
    )


class SelectionOptions(BaseModel):
    """Model selection and bookkeeping: every method's options."""

    model_config = _STRICT

    eval_steps: int = option(
        125, "Evaluate on STS-B dev every N steps (and after the last step); keep the best.", ge=1
    )
    eval_at_start: bool = option(True, "Also evaluate the backbone before training (logged, never selected).")
    select_on: Literal["stsb-dev", "sts-test"] = option(
        "stsb-dev",
        "What keeps the best checkpoint: stsb-dev (SimCSE, ESimCSE and our default) or sts-test, the mean of the "
        "seven STS test sets (MoCoSE's official code; its figures are then marked as selected on the test sets).",
    )
    eval_batch_size: int = option(128, "Batch size of the dev evaluation.", ge=1)
    save_steps: int | None = option(
        None, "Save the resumable state every N steps (default: eval_steps).", ge=1
    )
    log_steps: int = option(10, "Append loss and lr to train_log.jsonl every N steps.", ge=1)
    device: str | None = option(None, "cpu, cuda, cuda:1 (default: cuda if available, else cpu).")
    threads: int | None = option(
        None, "CPU threads for torch (default: torch's; 1 is faster on a busy machine).", ge=1
    )
    report_to: str = option(
        "none",
        "Also log loss, its parts, lr and dev scores to these trackers: none, tensorboard, wandb, trackio "
        "(several: comma-separated or the flag repeated; pip install 'stsbench[tracking]').",
    )
    tracking_project: str = option("stsbench", "The W&B and trackio project the run logs to.")
    run_group: str | None = option(
        None, "The W&B and trackio group of the run (default: none; --seeds: OUTPUT's name and the method)."
    )
    run_name: str | None = option(
        None, "The W&B and trackio run name (default: the output folder's name, under its group)."
    )

    @field_validator("report_to", mode="before")
    @classmethod
    def _trackers(cls, value: Any) -> Any:
        return parse_report_to(value) if isinstance(value, str | list | tuple) else value


# -- the options every method has ----------------------------------------------------------------------------


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
        0.0, "Weight of an auxiliary MLM loss (0: off; SimCSE used 0.1).", ge=0, label="MLM weight λ"
    )
    mlm_probability: float = share(0.15, "Masking rate of the MLM loss.")
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


# -- the groups gathered: which option belongs to whom -------------------------------------------------------


@dataclass(frozen=True)
class Groups:
    """Every method's option groups, then every augmentation's, each once; what each option belongs to."""

    groups: tuple[type[BaseModel], ...]
    of_methods: frozenset[type[BaseModel]]  # the groups some method takes (the others: augmentations' only)
    group_of: Mapping[str, type[BaseModel]]  # an option of a method's or an augmentation's group -> the group
    augmentation_of: Mapping[str, tuple[str, ...]]  # an augmentation's option -> the augmentations taking it
    # every option, in the saved config's order: common, the groups, selection
    fields: Mapping[str, FieldInfo]


@cache
def option_groups() -> Groups:
    """The groups of every registered method and augmentation (plugins' included), read once."""
    owner = dict.fromkeys((*CommonOptions.model_fields, *SelectionOptions.model_fields), "the common options")
    groups: list[type[BaseModel]] = []
    augmentation_of: dict[str, tuple[str, ...]] = {}
    # an augmentation's options are every method's, checked by TrainConfig._augmentations_fit
    sources = [(f"method {m.name!r}", None, m.options) for m in method_specs()]
    sources += [(f"augmentation {a.name!r}", a.name, a.options) for a in augmentation_specs()]
    for who, augmentation, options in sources:
        for group in options:
            if group in groups:
                if augmentation is not None:  # a group several augmentations share (a flavour of theirs)
                    for name in group.model_fields:
                        augmentation_of[name] = (*augmentation_of.get(name, ()), augmentation)
                continue
            for name in group.model_fields:
                if name in owner:
                    raise StsbenchError(
                        f"{who}: option {name!r} of {group.__name__} is already one of {owner[name]}; give it "
                        "another name"
                    )
                owner[name] = group.__name__
                if augmentation is not None:
                    augmentation_of[name] = (augmentation,)
            groups.append(group)
    fields = {
        **CommonOptions.model_fields,
        **{n: f for g in groups for n, f in g.model_fields.items()},
        **SelectionOptions.model_fields,
    }
    group_of = {name: group for group in groups for name in group.model_fields}
    of_methods = frozenset(g for m in method_specs() for g in m.options)
    return Groups(tuple(groups), of_methods, group_of, augmentation_of, fields)


def option_fields() -> Mapping[str, FieldInfo]:
    """Every training option's field, in the order a saved config lists them."""
    return option_groups().fields


def mine(spec: MethodSpec | None) -> set[str]:
    """The options of the method ``spec`` (None: an unknown method, every option)."""
    return {n for n in option_fields() if spec is None or spec.accepts(n)}


def owners(name: str) -> list[MethodSpec]:
    """The methods option ``name`` belongs to."""
    return [spec for spec in METHODS.values() if spec.accepts(name)]


@cache
def options_model(method: str | None) -> type[BaseModel]:
    """The sub-model of ``method``'s own options: its groups and every augmentation's (None: every group)."""
    found = option_groups()
    spec = METHODS.get(method) if method is not None else None
    mine = [g for g in found.groups if spec is None or g in spec.options or g not in found.of_methods]
    label = spec.label if spec is not None else "Any method"
    name = "".join(ch for ch in label.title() if ch.isalnum()) + "MethodOptions"
    return create_model(name, __base__=tuple(reversed(mine)) or _Empty)


class _Empty(BaseModel):
    """The options of a method without groups of its own, and no augmentation's."""

    model_config = STRICT


# -- the config ----------------------------------------------------------------------------------------------


__all__ = ["CommonOptions", "SelectionOptions", "TrainConfig", "owners"]


class TrainConfig(SelectionOptions, CommonOptions):
    """A training run's options, machine-independent (saved with every checkpoint); validated on construction.

    The options every method has are fields; a method's own (and the augmentations') are
    :attr:`method_options`, a sub-model its spec owns (:func:`~stsbench.train.config.options.options_model`),
    read as attributes of the config all the same (``cfg.dup_rate``), and given flat, as the CLI flags and the
    YAML keys are. Options not given take the method's defaults (its ``MethodSpec``); options of another
    method are refused; every refusal is a one-line :class:`StsbenchError`. What the data and the device
    decide is not here but in :class:`stsbench.train.config.resolve.TrainResolution`.
    """

    model_config = _STRICT

    # the method's own options (a sub-model of its spec's, built by _split; Any: validated there, not here)
    method_options: Any = Field(default_factory=lambda: options_model(None)())

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise StsbenchError(one_line(exc, type(self))) from None

    def __getattr__(self, name: str) -> Any:
        own = self.__dict__.get("method_options") if not name.startswith("_") else None
        if own is not None:
            if name in type(own).model_fields:
                return getattr(own, name)
            info = option_fields().get(name)
            if info is not None:  # another method's option: at its default, as a saved config lists it
                return info.default
        return super().__getattr__(name)  # type: ignore[misc]

    @model_validator(mode="before")
    @classmethod
    def _split(cls, data: Any, info: ValidationInfo) -> Any:
        """Flat options in: the method's own go to its sub-model; those of another method are refused."""
        if not isinstance(data, dict) or "method_options" in data:
            return data
        method = data.get("method")
        spec = find_method(method)
        common = cls.model_fields
        known = option_fields()
        if spec is not None:
            foreign = sorted(n for n in data if n in known and n not in common and not spec.accepts(n))
            if foreign:
                flags = ", ".join("--" + n.replace("_", "-") for n in foreign)
                them = owners(foreign[0])
                plural = "s" if len(foreign) > 1 else ""
                raise StsbenchError(
                    f"{flags}: {' or '.join(s.label for s in them)} option{plural}, not for {spec.label}; "
                    f"use with {' or '.join(f'--method {s.name}' for s in them)}"
                )
        model = options_model(spec.name if spec is not None else None)
        own = {n: v for n, v in data.items() if n in model.model_fields}
        try:
            options = model.model_validate(own)
        except ValidationError as exc:
            raise StsbenchError(one_line(exc, model, (info.context or {}).get("sources"))) from None
        return {**{n: v for n, v in data.items() if n not in own}, "method_options": options}

    # pickled as the options given: the sub-model's class is built, not importable
    def __reduce__(self) -> tuple:
        return (partial(TrainConfig, **{n: getattr(self, n) for n in self.given()}), ())

    def given(self) -> set[str]:
        """The options given to this config (the others are defaults), flat."""
        return (self.model_fields_set - {"method_options"}) | self.method_options.model_fields_set

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
        taking = option_groups().augmentation_of
        problems += [
            f"{flag(name)} is an option of the augmentation{'s' if len(taking[name]) > 1 else ''} "
            f"{' or '.join(taking[name])}; add --augment {taking[name][0]}, or drop {flag(name)}"
            for name in sorted(self.given() & taking.keys())
            if not set(taking[name]) & set(used) and getattr(self, name) != option_fields()[name].default
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
        given = self.given()
        for name, value in (spec.defaults if spec else {}).items():
            if name not in given:  # frozen: set once, here, before anyone sees it
                holder = self if name in type(self).model_fields else self.method_options
                object.__setattr__(holder, name, value)
        return self

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of every option (every method's: another's at its default), in saved order."""
        values = {**self.model_dump(exclude={"method_options"}), **self.method_options.model_dump()}
        return {name: values.get(name, info.default) for name, info in option_fields().items()}

    def replace(self, **changes: Any) -> TrainConfig:
        """A new config: the options given to this one, with ``changes`` (validated again)."""
        return TrainConfig(**{**{n: getattr(self, n) for n in self.given()}, **changes})

    @classmethod
    def from_dict(cls, saved: Mapping[str, Any]) -> TrainConfig:
        """The config of a saved flat dict (``to_dict()`` or a run's saved ``training``).

        A saved dict holds every option; those of other methods at their defaults are dropped, and so are
        keys that are not options (``supervised``, a resolution's).
        """
        fields = option_fields()
        own = mine(find_method(saved.get("method")))
        keep = {n: v for n, v in saved.items() if n in fields and (n in own or v != fields[n].default)}
        # a run saved before the view options existed ran these behaviours, whatever today's defaults
        before = {n: v for n, v in BEFORE_VIEW_OPTIONS.items() if n not in saved and n in own}
        return cls(**before, **keep)


# what stsbench did before the options of its views (target view and embeddings, MLM views and head) existed,
# where today's default differs: a run saved before them is read as it ran
BEFORE_VIEW_OPTIONS: dict[str, Any] = {
    "target_view": "clean",
    "target_embeddings": "target",
    "mlm_views": "anchor",
    "mlm_head_init": "random",
}


# -- YAML and the CLI into a config --------------------------------------------------------------------------


@dataclass(frozen=True)
class Option:
    """One training option as the CLI, the YAML loader and the reports see it."""

    name: str
    kind: type  # bool, int, float or str
    default: Any  # SimCSE's; see method_defaults for the others'
    help: str
    choices: tuple[str, ...] | None
    methods: tuple[str, ...] | None  # the methods it belongs to; None: every method
    group: str  # "ESimCSE options": the labels of the methods it belongs to, for --help panels
    short: str | None = None
    label: str | None = None  # the option in the paper's words, for figure axes and titles

    @property
    def shown(self) -> str:
        """How figures and tables name it: its label, else its name (``EMA decay weight``, ``temperature``)."""
        return self.label or self.name

    @property
    def flag(self) -> str:
        """``--dup-rate``."""
        return describe.flag(self.name)

    @property
    def method_defaults(self) -> dict[str, Any]:
        """Defaults of methods whose paper differs from SimCSE's, by method label."""
        return {s.label: s.defaults[self.name] for s in METHODS.values() if self.name in s.defaults}


def _option(name: str) -> Option:
    info = option_fields()[name]
    group = option_groups().group_of.get(name)
    method = name == "method"  # its choices are the registry's (plugins' included), not a Literal's
    return Option(
        name=name,
        kind=describe.kind(info),
        default=info.default,
        help=f"{method_choices()}." if method else info.description or "",
        choices=tuple(METHODS.names()) if method else describe.choices(info),
        methods=tuple(str(s.name) for s in owners(name)) if group else None,
        group=f"{' or '.join(s.label for s in owners(name))} options" if group else "Options",
        short=describe.extra(info, "short"),
        label=describe.extra(info, "label"),
    )


@cache
def train_options() -> dict[str, Option]:
    """Every training option (every registered method's and augmentation's, read on first use), by name."""
    return {name: _option(name) for name in option_fields()}


def __getattr__(name: str) -> Any:  # OPTIONS: built on first use, as the config's groups are
    if name == "OPTIONS":
        return train_options()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def help_for(name: str) -> str:
    """Return the help text of option ``name`` with its default(s), for the CLI."""
    opt = train_options()[name]
    if opt.default is None:
        return opt.help
    shown = [("on" if opt.default else "off") if isinstance(opt.default, bool) else str(opt.default)]
    shown += [f"{label}: {value}" for label, value in opt.method_defaults.items()]
    return f"{opt.help} (default: {'; '.join(shown)})"


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Options from a YAML mapping (keys as in :class:`TrainConfig`, dashes or underscores), not yet validated.

    ``path``: a YAML file, or the name of a config shipped with stsbench (:mod:`stsbench.configs`).
    """
    import copy

    from stsbench.configs import find_config

    path = find_config(path)
    st = path.stat()
    # parsed once per process and file version: listing the recipes read the same configs 1,552 times without it
    return copy.deepcopy(_load_yaml(path, st.st_size, st.st_mtime_ns))


@lru_cache(maxsize=256)
def _load_yaml(path: Path, size: int, mtime_ns: int) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.load(
            path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        )
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise StsbenchError(f"{path}{line}: not valid YAML; fix the file") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise StsbenchError(f"{path}: expected a mapping of option: value, got {type(data).__name__}")
    out = {}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name not in train_options():
            raise StsbenchError(
                f"{path}: unknown option {key!r}; see `stsbench train --help` for the options"
            )
        out[name] = value
    return out


def make_config(cli: dict[str, Any], config_file: str | Path | None = None) -> TrainConfig:
    """Defaults (the method's paper's) < YAML file < CLI flags (``None`` in ``cli``: not given); validated.

    Also refuses a config that lacks method, model, train file or output (a run needs them).
    """
    given = load_yaml(config_file) if config_file is not None else {}
    sources = dict.fromkeys(given, str(config_file))
    for name, value in cli.items():
        if value is not None:
            given[name] = value
            sources[name] = "command line"
    try:
        cfg = TrainConfig.model_validate(given, context={"sources": sources})
    except ValidationError as exc:
        raise StsbenchError(describe.one_line(exc, TrainConfig, sources)) from None
    check_complete(cfg)
    return cfg


REQUIRED = ("method", "model", "train_file", "output")


def check_complete(cfg: TrainConfig) -> None:
    """Refuse a config that lacks what a run needs (a config from Python may be partial)."""
    for name in REQUIRED:
        if name == "train_file" and getattr(cfg, "train_dataset", None):  # the data given as a dataset
            continue
        if getattr(cfg, name) in (None, ""):
            alternative = " or --train-dataset" if name == "train_file" else ""
            raise StsbenchError(f"missing {flag(name)}{alternative} (or {name}: in the --config file)")
