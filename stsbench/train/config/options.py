"""Every training option, typed: its default (the paper's), its bounds, its help text, the methods it belongs to.

:class:`TrainConfig` is a frozen pydantic model, validated on construction, from Python, YAML or the CLI
alike. Its fields come in groups: the options every method has (:class:`CommonOptions`,
:class:`SelectionOptions`) and those of some methods only (:class:`NoiseOptions`, :class:`ESimCSEOptions`,
:class:`MoCoSEOptions`). :data:`METHODS` says, per method, which groups it takes and where its paper's
defaults differ from SimCSE's; a config refuses options of another method and gets its method's defaults.
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
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from stsbench.encoders.pooling import POOLERS
from stsbench.errors import StsbenchError
from stsbench.train.config.describe import one_line


class MethodName(str, Enum):
    """The training methods, the one list of them (``MethodName.MOCOSE == "mocose"``)."""

    SIMCSE = "simcse"
    ESIMCSE = "esimcse"
    MOCOSE = "mocose"


def option(
    default: Any, help_text: str, *, short: str | None = None, why: str | None = None, **bounds
) -> Any:
    """A config field: default, help, bounds (``ge``, ``gt``, ``lt``, ``le``); ``why``: the refusal's reason."""
    extra = {k: v for k, v in (("short", short), ("why", why)) if v}
    return Field(default, description=help_text, json_schema_extra=extra or None, **bounds)


_STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)


class CommonOptions(BaseModel):
    """What to train and how to optimise it: every method's options."""

    model_config = _STRICT

    method: Literal[tuple(m.value for m in MethodName)] | None = option(  # type: ignore[valid-type]
        None, "simcse (unsup from a text file, sup from a sent0,sent1[,hard_neg] CSV), esimcse or mocose."
    )
    model: str | None = option(
        None, "Backbone: a local HF model dir, all-MiniLM-L6-v2, or a hub id (needs internet).", short="-m"
    )
    train_file: str | None = option(
        None,
        "Training data: one sentence a line (.txt or 1-column CSV); sup SimCSE: "
        "CSV with header sent0,sent1[,hard_neg].",
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
    )
    lr: float = option(3e-5, "Peak learning rate (AdamW), decayed linearly to 0.", gt=0)
    warmup_steps: int = option(0, "Linear warm-up steps before the decay.", ge=0)
    weight_decay: float = option(0.0, "AdamW weight decay.", ge=0)
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
    )
    temperature: float = option(0.05, "Softmax temperature tau of the InfoNCE loss.", gt=0)
    pooler: Literal[tuple(POOLERS)] | None = option(  # type: ignore[valid-type]
        None,
        "Training pooler; cls adds SimCSE's MLP over [CLS] (default: the pooling the backbone declares, "
        "e.g. a sentence-transformers model's mean pooling, else cls).",
    )
    mlp_only_train: bool | None = option(
        None,
        "Use the cls MLP only in training and evaluate [CLS] before it "
        "(default: on for unsup, off for sup, as SimCSE).",
    )
    hard_negative_weight: float = option(
        0.0, "Sup SimCSE: added to the hard negative's logit (SimCSE's w).", ge=0
    )
    mlm_weight: float = option(0.0, "Weight of an auxiliary MLM loss (0: off; SimCSE used 0.1).", ge=0)
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
    precision: Literal["fp32", "bf16", "fp16"] = option(
        "fp32", "fp32, or bf16 / fp16 autocast on CUDA (the loss stays fp32; fp16 with gradient scaling)."
    )
    compile: bool = option(
        False, "torch.compile the backbone; the first step's time, compilation included, is logged apart."
    )
    tf32: bool = option(False, "Let fp32 matmuls on CUDA use TF32 tensor cores (CUDA only).")
    cuda_graph: bool = option(
        False,
        "Replay each step (forward, backward, clip, AdamW) from one CUDA graph: SimCSE on one CUDA device "
        "with --pad-to-max-length, fp32 or bf16. Other dropout draws than eager steps.",
    )

    @field_validator("model", "train_file", "output", "data_dir", mode="before")
    @classmethod
    def _path_as_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, Path) else value


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


class ESimCSEOptions(BaseModel):
    """ESimCSE: word repetition (Sec. 3.2) and momentum contrast (Sec. 3.3)."""

    model_config = _STRICT

    repetition: bool = option(
        True, "ESimCSE: the positive view repeats tokens (--no-repetition: dropout views)."
    )
    repetition_kind: Literal["subword", "word", "stopword", "mask"] = option(
        "subword", "ESimCSE: subword | word | stopword (insert one) | mask (insert [MASK])."
    )
    dup_rate: float = option(0.32, "ESimCSE: maximal repetition rate dup_rate (eq. 4).", ge=0, le=1)
    repetition_sampling: Literal["paper", "official"] = option(
        "paper",
        "ESimCSE: paper (dup_len in [0, max(2, int(dup_rate*N))], fresh each "
        "batch) or official (randrange(min(10, int(dup_rate*L))), fixed per sentence).",
    )
    momentum: float = option(
        0.995,
        "ESimCSE: momentum lambda of the EMA encoder (eq. 6); 0 copies the online one.",
        why="is outside [0, 1) (eq. 6)",
        ge=0,
        lt=1,
    )
    momentum_init: Literal["copy", "random"] = option(
        "copy",
        "ESimCSE: start the momentum encoder as a copy of the online one (paper) or random (official code).",
    )
    queue_multiple: float = option(
        2.5, "ESimCSE: queue size as a multiple of the batch size (0: no momentum contrast).", ge=0
    )
    queue_reset_each_epoch: bool = option(
        False, "ESimCSE: empty the queue at each epoch start (official code)."
    )
    momentum_mlp: Literal["momentum", "online"] = option(
        "momentum",
        "ESimCSE: EMA over backbone + MLP, keys through the EMA'd MLP (momentum), or EMA over the backbone "
        "only, keys through the online MLP (online: official models.py:161-163, 188-189).",
    )


class MoCoSEOptions(BaseModel):
    """MoCoSE: EMA target branch, FGSM, negative queue (Sec. 3, eqs. 1-4)."""

    model_config = _STRICT

    projection_layers: int = option(1, "MoCoSE: projection layers of both branches (Table 4: 1).", ge=0)
    predictor_layers: int = option(2, "MoCoSE: predictor layers of the online branch (Table 4: 2).", ge=0)
    ema_decay_start: float = option(
        0.75,
        "MoCoSE: EMA decay eta of the target branch at the first step, ramped by a cosine.",
        why="is outside [0, 1) (eq. 2)",
        ge=0,
        lt=1,
    )
    ema_decay_end: float = option(
        0.95,
        "MoCoSE: EMA decay eta at the end of the schedule (1: the official code's).",
        why="is outside [0, 1] (eq. 2)",
        ge=0,
        le=1,
    )
    ema_schedule: Literal["run", "steps", "fixed"] = option(
        "run",
        "MoCoSE: eta by a cosine over the run (paper Sec. 4.1), over --ema-schedule-steps (official: "
        "end 1, 15000 steps, mocose.py:43), or fixed at --ema-decay-start.",
    )
    ema_schedule_steps: int = option(
        15000, "MoCoSE: length of the 'steps' EMA schedule (official mocose.py:34: 15000).", ge=1
    )
    target_view: Literal["augmented", "clean"] = option(
        "augmented",
        "MoCoSE: the target branch sees the augmented view (dropout + FGSM, paper Alg. 1 and official) or "
        "clean tokens in eval mode.",
    )
    key_gradient: Literal["stop", "official"] = option(
        "stop",
        "MoCoSE: stop-gradient at the keys (paper) or the official code's (keys undetached, target "
        "projection trained and EMA'd, target encoder frozen).",
    )
    fgsm_epsilon: float = option(
        5e-9, "MoCoSE: FGSM step on the online branch's input embeddings (eq. 1; 0: off).", ge=0
    )
    queue_size: int = option(512, "MoCoSE: negative queue size K (global across processes).", ge=0)
    queue_start_size: int = option(
        128, "MoCoSE: random entries the queue starts from (K_start; Table 7).", ge=0
    )
    queue_start: Literal["random", "batches"] = option(
        "random",
        "MoCoSE: start the queue from K_start random entries, or empty (filled by the first batches).",
    )
    queue_slice: str | None = option(
        None,
        "MoCoSE: the queue positions that join the loss, newest first, as START:END[,START:END] "
        "(Table 8: 256:768; default: all).",
    )

    @model_validator(mode="after")
    def _queue_fits(self) -> MoCoSEOptions:
        if not self.queue_start_size <= self.queue_size:
            raise StsbenchError(
                f"--queue-start-size {self.queue_start_size} must be between 0 and --queue-size {self.queue_size}"
            )
        if self.queue_slice is not None:
            parse_slices(self.queue_slice, self.queue_size)
        return self


class SelectionOptions(BaseModel):
    """Model selection and bookkeeping: every method's options."""

    model_config = _STRICT

    eval_steps: int = option(
        125, "Evaluate on STS-B dev every N steps (and after the last step); keep the best.", ge=1
    )
    eval_at_start: bool = option(True, "Also evaluate the backbone before training (logged, never selected).")
    eval_batch_size: int = option(128, "Batch size of the dev evaluation.", ge=1)
    save_steps: int | None = option(
        None, "Save the resumable state every N steps (default: eval_steps).", ge=1
    )
    log_steps: int = option(10, "Append loss and lr to train_log.jsonl every N steps.", ge=1)
    device: str | None = option(None, "cpu, cuda, cuda:1 (default: cuda if available, else cpu).")
    threads: int | None = option(
        None, "CPU threads for torch (default: torch's; 1 is faster on a busy machine).", ge=1
    )


@dataclass(frozen=True)
class MethodSpec:
    """A method: its label, the option groups it takes beyond the common ones, its paper's other defaults."""

    name: MethodName
    label: str
    groups: tuple[type[BaseModel], ...] = ()
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def accepts(self, name: str) -> bool:
        """Whether option ``name`` belongs to this method (common options belong to all)."""
        owner = GROUP_OF.get(name)
        return owner is None or owner in self.groups


METHODS: dict[str, MethodSpec] = {
    spec.name.value: spec
    for spec in (
        MethodSpec(MethodName.SIMCSE, "SimCSE", (NoiseOptions,)),
        MethodSpec(MethodName.ESIMCSE, "ESimCSE", (NoiseOptions, ESimCSEOptions)),
        # MoCoSE Sec. 4.1: weight decay 1e-6; a dev evaluation every 100 steps
        MethodSpec(MethodName.MOCOSE, "MoCoSE", (MoCoSEOptions,), {"weight_decay": 1e-6, "eval_steps": 100}),
    )
}
METHOD_NAMES = {name: spec.label for name, spec in METHODS.items()}
# the fields of the method-specific groups, by group (fields of neither are common)
GROUP_OF: dict[str, type[BaseModel]] = {
    name: group for group in (NoiseOptions, ESimCSEOptions, MoCoSEOptions) for name in group.model_fields
}


def owners(name: str) -> list[MethodSpec]:
    """The methods option ``name`` belongs to."""
    return [spec for spec in METHODS.values() if spec.accepts(name)]


# field order is the reverse MRO: common, noise, ESimCSE, MoCoSE, selection (the order of the saved dict)
class TrainConfig(SelectionOptions, MoCoSEOptions, ESimCSEOptions, NoiseOptions, CommonOptions):
    """A training run's options, machine-independent (saved with every checkpoint); validated on construction.

    Options not given take the method's defaults (:data:`METHODS`); options of another method are refused;
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
        method = data.get("method") if isinstance(data, dict) else None
        spec = METHODS.get(method) if isinstance(method, str) else None
        if spec is None:
            return data
        foreign = sorted(n for n in data if n in cls.model_fields and not spec.accepts(n))
        if foreign:
            flags = ", ".join("--" + n.replace("_", "-") for n in foreign)
            them = owners(foreign[0])
            plural = "s" if len(foreign) > 1 else ""
            raise StsbenchError(
                f"{flags}: {' or '.join(s.label for s in them)} option{plural}, not for {spec.label}; "
                f"use with {' or '.join(f'--method {s.name.value}' for s in them)}"
            )
        return data

    @model_validator(mode="after")
    def _method_defaults(self) -> TrainConfig:
        spec = METHODS.get(self.method or "")
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
        spec = METHODS.get(str(saved.get("method")))
        fields = cls.model_fields
        keep = {
            n: v
            for n, v in saved.items()
            if n in fields and (spec is None or spec.accepts(n) or v != fields[n].default)
        }
        # a run saved before issue 16 ran these behaviours, whatever today's defaults
        before = {
            n: v for n, v in BEFORE_ISSUE_16.items() if n not in saved and (spec is None or spec.accepts(n))
        }
        return cls(**before, **keep)


# what stsbench did before the options of issue 16 existed, where today's default differs (for old saved runs)
BEFORE_ISSUE_16: dict[str, Any] = {"target_view": "clean", "mlm_views": "anchor", "mlm_head_init": "random"}


def parse_slices(spec: str, size: int) -> list[tuple[int, int]]:
    """``"0:256,768:1024"`` -> ``[(0, 256), (768, 1024)]``: queue positions, newest first (MoCoSE Table 8)."""
    out = []
    for part in spec.split(","):
        bounds = part.strip().split(":")
        try:
            start, end = (int(b) for b in bounds)
        except ValueError:
            raise StsbenchError(
                f"--queue-slice {spec!r}: expected START:END[,START:END] with whole numbers, e.g. 256:768"
            ) from None
        if not 0 <= start < end <= size:
            raise StsbenchError(
                f"--queue-slice {part.strip()!r}: need 0 <= START < END <= --queue-size ({size})"
            )
        out.append((start, end))
    return out
