"""Every training option in one dataclass: its default (the paper's), its help text, YAML loading, validation.

The CLI (``stsbench train``) and the YAML files under ``configs/`` both fill :class:`TrainConfig`; CLI
flags override the YAML, the YAML overrides the defaults below. Defaults are SimCSE's unsupervised BERT-base
settings (Gao et al., 2021, ``run_unsup_example.sh``) and ESimCSE's (Wu et al., 2022, Sec. 4.1 and 5).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stsbench.encoders.pooling import POOLERS
from stsbench.errors import StsbenchError

METHODS = ("simcse", "esimcse", "mocose")
REPETITION_KINDS = ("subword", "word", "stopword", "mask")
SAMPLINGS = ("paper", "official")
MOMENTUM_INITS = ("copy", "random")
QUEUE_STARTS = ("random", "batches")
PRECISIONS = ("fp32", "bf16", "fp16")
METHOD_NAMES = {"simcse": "SimCSE", "esimcse": "ESimCSE", "mocose": "MoCoSE"}
# defaults of a method's paper where it differs from SimCSE's (MoCoSE, Sec. 4.1)
METHOD_DEFAULTS = {"mocose": {"weight_decay": 1e-6, "eval_steps": 100}}


def _opt(default: Any, help_text: str, only: tuple[str, ...] | None = None) -> Any:
    """An option; ``only``: the methods it belongs to (others refuse it)."""
    return field(default=default, metadata={"help": help_text, "only": only})


ESIMCSE = ("esimcse",)
MOCOSE = ("mocose",)


@dataclass
class TrainConfig:
    """A training run, fully described (saved with every checkpoint)."""

    # what to train
    method: str | None = _opt(
        None, "simcse (unsup from a text file, sup from a sent0,sent1[,hard_neg] CSV), esimcse or mocose."
    )
    model: str | None = _opt(
        None, "Backbone: a local HF model dir, all-MiniLM-L6-v2, or a hub id (needs internet)."
    )
    train_file: str | None = _opt(
        None,
        "Training data: one sentence a line (.txt or 1-column CSV); sup SimCSE: "
        "CSV with header sent0,sent1[,hard_neg].",
    )
    output: str | None = _opt(
        None, "Output dir: the best checkpoint at its root, resumable state in DIR/last."
    )
    data_dir: str | None = _opt(
        None, "Folder holding SentEval's downstream/ for STS-B dev (default: $STSBENCH_DATA, else ./data)."
    )
    # optimisation (SimCSE / ESimCSE BERT-base)
    seed: int = _opt(42, "Random seed (data order, dropout, repetition, initialisations).")
    epochs: int = _opt(1, "Passes over the training file.")
    max_steps: int | None = _opt(
        None, "Stop after this many steps; the lr schedule then spans them (default: epochs)."
    )
    batch_size: int = _opt(64, "Sentences a batch (in-batch negatives: at least 2).")
    lr: float = _opt(3e-5, "Peak learning rate (AdamW), decayed linearly to 0.")
    warmup_steps: int = _opt(0, "Linear warm-up steps before the decay.")
    weight_decay: float = _opt(0.0, "AdamW weight decay (MoCoSE's default: 1e-6).")
    max_grad_norm: float = _opt(1.0, "Clip the gradient norm to this (0: no clipping).")
    max_length: int = _opt(32, "Truncate training sentences to this many tokens (repetition may add more).")
    length_buckets: int | None = _opt(
        None,
        "Encode each view in K passes of similar-length sentences, each padded to its own longest: less "
        "padding; the same function, but other dropout draws than one pass (default: 4 on CPU, 1 = SimCSE's "
        "single pass on GPU).",
    )
    pad_to_max_length: bool = _opt(
        False,
        "Pad every view to --max-length (static shapes, for --compile and CUDA graphs) instead of to the "
        "longest in the batch, as SimCSE's collator does (off: fewer padded tokens; the same function up "
        "to float rounding).",
    )
    dropout: float | None = _opt(
        None, "Set the backbone's hidden and attention dropout (default: the backbone's, 0.1 for BERT)."
    )
    # the contrastive objective
    temperature: float = _opt(0.05, "Softmax temperature tau of the InfoNCE loss.")
    pooler: str = _opt("cls", f"Training pooler: {' | '.join(POOLERS)}; cls adds SimCSE's MLP over [CLS].")
    mlp_only_train: bool | None = _opt(
        None,
        "Use the cls MLP only in training and evaluate [CLS] before it "
        "(default: on for unsup, off for sup, as SimCSE).",
    )
    hard_negative_weight: float = _opt(0.0, "Sup SimCSE: added to the hard negative's logit (SimCSE's w).")
    mlm_weight: float = _opt(0.0, "Weight of an auxiliary MLM loss (0: off; SimCSE used 0.1).")
    mlm_probability: float = _opt(0.15, "Masking rate of the MLM loss.")
    gaussian_noise_std: float = _opt(
        0.0,
        "Gaussian-dropout variant: add N(0, std^2) noise to the pooled embeddings of both views in "
        "training only (0: off; the report used 0.1).",
        ("simcse", "esimcse"),
    )
    precision: str = _opt(
        "fp32",
        "fp32, or bf16 / fp16 autocast on CUDA (the loss stays fp32; fp16 with gradient scaling).",
    )
    compile: bool = _opt(
        False, "torch.compile the backbone; the first step's time, compilation included, is logged apart."
    )
    tf32: bool = _opt(False, "Let fp32 matmuls on CUDA use TF32 tensor cores (CUDA only).")
    cuda_graph: bool = _opt(
        False,
        "Replay each step (forward, backward, clip, AdamW) from one CUDA graph: SimCSE on one CUDA device "
        "with --pad-to-max-length, fp32 or bf16. Other dropout draws than eager steps.",
    )
    # ESimCSE
    repetition: bool = _opt(
        True, "ESimCSE: the positive view repeats tokens (--no-repetition: dropout views).", ESIMCSE
    )
    repetition_kind: str = _opt(
        "subword", "ESimCSE: subword | word | stopword (insert one) | mask (insert [MASK]).", ESIMCSE
    )
    dup_rate: float = _opt(0.32, "ESimCSE: maximal repetition rate dup_rate (eq. 4).", ESIMCSE)
    repetition_sampling: str = _opt(
        "paper",
        "ESimCSE: paper (dup_len in [0, max(2, int(dup_rate*N))], fresh each "
        "batch) or official (randrange(min(10, int(dup_rate*L))), fixed per "
        "sentence).",
        ESIMCSE,
    )
    momentum: float = _opt(
        0.995, "ESimCSE: momentum lambda of the EMA encoder (eq. 6); 0 copies the online one.", ESIMCSE
    )
    momentum_init: str = _opt(
        "copy",
        "ESimCSE: start the momentum encoder as a copy of the online one (paper) or random (official code).",
        ESIMCSE,
    )
    queue_multiple: float = _opt(
        2.5, "ESimCSE: queue size as a multiple of the batch size (0: no momentum contrast).", ESIMCSE
    )
    queue_reset_each_epoch: bool = _opt(
        False, "ESimCSE: empty the queue at each epoch start (official code).", ESIMCSE
    )
    # MoCoSE
    projection_layers: int = _opt(1, "MoCoSE: projection layers of both branches (Table 4: 1).", MOCOSE)
    predictor_layers: int = _opt(2, "MoCoSE: predictor layers of the online branch (Table 4: 2).", MOCOSE)
    ema_decay_start: float = _opt(
        0.75, "MoCoSE: EMA decay eta of the target branch at the first step, ramped by a cosine.", MOCOSE
    )
    ema_decay_end: float = _opt(0.95, "MoCoSE: EMA decay eta at the last step.", MOCOSE)
    fgsm_epsilon: float = _opt(
        5e-9, "MoCoSE: FGSM step on the online branch's input embeddings (eq. 1; 0: off).", MOCOSE
    )
    queue_size: int = _opt(512, "MoCoSE: negative queue size K (global across processes).", MOCOSE)
    queue_start_size: int = _opt(
        128, "MoCoSE: random entries the queue starts from (K_start; Table 7).", MOCOSE
    )
    queue_start: str = _opt(
        "random",
        "MoCoSE: start the queue from K_start random entries, or empty (filled by the first batches).",
        MOCOSE,
    )
    queue_slice: str | None = _opt(
        None,
        "MoCoSE: the queue positions that join the loss, newest first, as START:END[,START:END] "
        "(Table 8: 256:768; default: all).",
        MOCOSE,
    )
    # model selection and bookkeeping
    eval_steps: int = _opt(
        125, "Evaluate on STS-B dev every N steps (and after the last step); keep the best (MoCoSE: 100)."
    )
    eval_at_start: bool = _opt(True, "Also evaluate the backbone before training (logged, never selected).")
    eval_batch_size: int = _opt(128, "Batch size of the dev evaluation.")
    save_steps: int | None = _opt(None, "Save the resumable state every N steps (default: eval_steps).")
    log_steps: int = _opt(10, "Append loss and lr to train_log.jsonl every N steps.")
    device: str | None = _opt(None, "cpu, cuda, cuda:1 (default: cuda if available, else cpu).")
    threads: int | None = _opt(
        None, "CPU threads for torch (default: torch's; 1 is faster on a busy machine)."
    )
    # read from the train file, not an option: (sent0, sent1[, hard_neg]) rows make sup SimCSE
    supervised: bool = field(default=False, init=False)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict of every option."""
        return dataclasses.asdict(self)


FIELDS = {f.name: f for f in dataclasses.fields(TrainConfig) if f.init}
REQUIRED = ("method", "model", "train_file", "output")
# options that may differ between a run and its resumption (they do not change what is computed)
RESUME_MAY_CHANGE = {
    "device",
    "threads",
    "length_buckets",
    "log_steps",
    "compile",
    "tf32",
    "eval_batch_size",
    "data_dir",
    "output",
}


def help_for(name: str) -> str:
    """Return the help text of option ``name`` with its default, for the CLI."""
    f = FIELDS[name]
    default = f.default
    text = f.metadata["help"]
    if default is None:
        return text
    if isinstance(default, bool):
        return f"{text} (default: {'on' if default else 'off'})"
    return f"{text} (default: {default})"


def _coerce(name: str, value: Any, where: str) -> Any:
    f = FIELDS[name]
    kind = str(f.type)
    if value is None:
        if "None" in kind:
            return None
        raise StsbenchError(f"{where}: option {name} cannot be empty")
    if kind.startswith("bool"):
        if isinstance(value, bool):
            return value
    elif kind.startswith("int"):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif kind.startswith("float"):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif kind.startswith("str"):
        if isinstance(value, (str, Path)):
            return str(value)
    raise StsbenchError(f"{where}: option {name} must be {kind.replace(' | None', '')}, got {value!r}")


def load_yaml(path: str | Path) -> dict[str, Any]:
    """Options from a YAML mapping (keys as in :class:`TrainConfig`, dashes or underscores)."""
    import yaml

    path = Path(path)
    if not path.is_file():
        raise StsbenchError(f"config file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
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
        if name not in FIELDS:
            raise StsbenchError(
                f"{path}: unknown option {key!r}; see `stsbench train --help` for the options"
            )
        out[name] = _coerce(name, value, str(path))
    return out


def make_config(cli: dict[str, Any], config_file: str | Path | None = None) -> TrainConfig:
    """Defaults (the method's paper's) < YAML file < CLI flags (``None`` in ``cli``: not given); validated."""
    given = load_yaml(config_file) if config_file is not None else {}
    for name, value in cli.items():
        if value is not None:
            given[name] = _coerce(name, value, "command line")
    defaults = METHOD_DEFAULTS.get(str(given.get("method")), {})
    cfg = TrainConfig(**{**defaults, **given})
    validate(cfg, set(given))
    return cfg


def validate(cfg: TrainConfig, given: set[str] | None = None) -> None:
    """Refuse inconsistent options with one line each (file checks happen when the data is read)."""
    given = set(given or ())
    for name in REQUIRED:
        if getattr(cfg, name) in (None, ""):
            flag = "--" + name.replace("_", "-")
            raise StsbenchError(f"missing {flag} (or {name}: in the --config file)")
    if cfg.method not in METHODS:
        raise StsbenchError(f"unknown method {cfg.method!r}; choose simcse, esimcse or mocose")
    foreign = sorted(
        n for n in given if FIELDS[n].metadata["only"] and cfg.method not in FIELDS[n].metadata["only"]
    )
    if foreign:
        flags = ", ".join("--" + n.replace("_", "-") for n in foreign)
        owners = " or ".join(METHOD_NAMES[m] for m in FIELDS[foreign[0]].metadata["only"])
        methods = " or ".join(f"--method {m}" for m in FIELDS[foreign[0]].metadata["only"])
        plural = "s" if len(foreign) > 1 else ""
        raise StsbenchError(
            f"{flags}: {owners} option{plural}, not for {METHOD_NAMES[cfg.method]}; use with {methods}"
        )

    def need(ok: bool, msg: str) -> None:
        if not ok:
            raise StsbenchError(msg)

    need(
        cfg.batch_size >= 2,
        f"--batch-size {cfg.batch_size} leaves no in-batch negatives; use at least 2 (the papers use 64)",
    )
    need(cfg.epochs >= 1, "--epochs must be at least 1")
    need(cfg.max_steps is None or cfg.max_steps >= 1, "--max-steps must be at least 1")
    need(cfg.lr > 0, "--lr must be positive")
    need(cfg.warmup_steps >= 0, "--warmup-steps must be 0 or more")
    need(cfg.weight_decay >= 0, "--weight-decay must be 0 or more")
    need(cfg.max_grad_norm >= 0, "--max-grad-norm must be 0 or more")
    need(cfg.max_length >= 2, "--max-length must be at least 2 (the special tokens)")
    need(cfg.length_buckets is None or cfg.length_buckets >= 1, "--length-buckets must be at least 1")
    need(cfg.dropout is None or 0 <= cfg.dropout < 1, "--dropout must be in [0, 1)")
    need(cfg.temperature > 0, "--temperature must be positive")
    need(cfg.pooler in POOLERS, f"unknown pooler {cfg.pooler!r}; choose from {', '.join(POOLERS)}")
    need(cfg.hard_negative_weight >= 0, "--hard-negative-weight must be 0 or more")
    need(cfg.mlm_weight >= 0, "--mlm-weight must be 0 or more")
    need(0 < cfg.mlm_probability < 1, "--mlm-probability must be in (0, 1)")
    need(
        cfg.repetition_kind in REPETITION_KINDS,
        f"unknown repetition kind {cfg.repetition_kind!r}; choose from {', '.join(REPETITION_KINDS)}",
    )
    need(0 <= cfg.dup_rate <= 1, "--dup-rate must be in [0, 1]")
    need(
        cfg.repetition_sampling in SAMPLINGS,
        f"unknown repetition sampling {cfg.repetition_sampling!r}; choose paper or official",
    )
    need(0 <= cfg.momentum < 1, "--momentum must be in [0, 1) (eq. 6)")
    need(
        cfg.momentum_init in MOMENTUM_INITS,
        f"unknown momentum init {cfg.momentum_init!r}; choose copy or random",
    )
    need(cfg.queue_multiple >= 0, "--queue-multiple must be 0 or more")
    need(cfg.gaussian_noise_std >= 0, "--gaussian-noise-std must be 0 or more")
    need(cfg.precision in PRECISIONS, f"unknown precision {cfg.precision!r}; choose fp32, bf16 or fp16")
    need(cfg.projection_layers >= 0, "--projection-layers must be 0 or more")
    need(cfg.predictor_layers >= 0, "--predictor-layers must be 0 or more")
    need(
        0 <= cfg.ema_decay_start < 1 and 0 <= cfg.ema_decay_end < 1,
        "--ema-decay-start and --ema-decay-end must be in [0, 1) (eq. 2)",
    )
    need(cfg.fgsm_epsilon >= 0, "--fgsm-epsilon must be 0 or more")
    need(cfg.queue_size >= 0, "--queue-size must be 0 or more")
    need(
        0 <= cfg.queue_start_size <= cfg.queue_size,
        f"--queue-start-size {cfg.queue_start_size} must be between 0 and --queue-size {cfg.queue_size}",
    )
    need(
        cfg.queue_start in QUEUE_STARTS,
        f"unknown queue start {cfg.queue_start!r}; choose random or batches",
    )
    if cfg.queue_slice is not None:
        parse_slices(cfg.queue_slice, cfg.queue_size)
    need(cfg.eval_steps >= 1, "--eval-steps must be at least 1")
    need(cfg.eval_batch_size >= 1, "--eval-batch-size must be at least 1")
    need(cfg.save_steps is None or cfg.save_steps >= 1, "--save-steps must be at least 1")
    need(cfg.log_steps >= 1, "--log-steps must be at least 1")
    need(cfg.threads is None or cfg.threads >= 1, "--threads must be at least 1")


def finalize(cfg: TrainConfig, supervised: bool) -> TrainConfig:
    """Fill the defaults that depend on the data (sup vs unsup) and check the method accepts it."""
    if supervised and cfg.method != "simcse":
        raise StsbenchError(
            f"{cfg.train_file} holds sentence pairs (sup SimCSE); {cfg.method} trains on one sentence a line"
        )
    if cfg.hard_negative_weight > 0 and not supervised:
        raise StsbenchError("--hard-negative-weight needs a sent0,sent1,hard_neg CSV train file")
    if cfg.mlp_only_train is None:
        cfg.mlp_only_train = not supervised
    # record where the data and a local backbone are, whatever the directory a resumed run starts from
    if cfg.train_file:
        cfg.train_file = str(Path(cfg.train_file).expanduser().resolve())
    if cfg.model and Path(cfg.model).expanduser().is_dir():
        cfg.model = str(Path(cfg.model).expanduser().resolve())
    if cfg.save_steps is None:
        cfg.save_steps = cfg.eval_steps
    cfg.supervised = supervised
    return cfg


def effective_queue_size(cfg: TrainConfig, world: int = 1) -> int:
    """Queued negatives at most: ESimCSE's M = queue_multiple x (global) batch (Sec. 5.4: 2.5x), MoCoSE's K."""
    if cfg.method == "esimcse":
        return int(cfg.queue_multiple * cfg.batch_size * world)
    if cfg.method == "mocose":
        return cfg.queue_size
    return 0


def traceable_distance(decay: float, queue: int, batch: int) -> float:
    """MoCoSE eq. (4): d_trace = 1 / (1 - eta) + queue_size / batch_size (steps back to the oldest key)."""
    return 1.0 / (1.0 - decay) + queue / batch


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


def eval_pooler(cfg: TrainConfig) -> str:
    """Return the pooler the checkpoint is evaluated with (SimCSE: the MLP stays unless mlp_only_train)."""
    if cfg.pooler == "cls" and cfg.mlp_only_train:
        return "cls_before_pooler"
    return cfg.pooler
