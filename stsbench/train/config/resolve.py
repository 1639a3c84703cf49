"""A config resolved against its data and its machine: a separate record, so the config stays machine-independent.

:func:`finalize` reads what the train file decides (sup or unsup, hence ``mlp_only_train``; absolute paths)
and :meth:`ResolvedConfig.on_device` what the device decides (``length_buckets``, processes, the effective
queue). Both return new objects: the caller's :class:`TrainConfig` is never changed. A run saves
``ResolvedConfig.to_dict()`` (the options, with what the data decides filled in: the same flat dict on any
machine) and, beside it, ``resolution.to_dict()``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from stsbench.errors import StsbenchError
from stsbench.train.config.options import BEFORE_VIEW_OPTIONS, TrainConfig, find_method, option_fields

# The one list of the fields that do not change what is computed (or only where files are): a resumed run
# may change them, and reports/ablations.py leaves them out when it compares runs. length_buckets is not one
# of them: K passes draw other dropout masks than one pass, so it changes the result.
# compile and tf32: speed settings, the same function with other float rounding (as device); report_to and the
# tracking names: where the same numbers are also logged
BOOKKEEPING = frozenset(
    "output data_dir device threads log_steps eval_batch_size save_steps eval_at_start supervised compile "
    "tf32 report_to tracking_project run_group run_name".split()
)
# Options added after reproductions were recorded, at the value that does what stsbench did before them: left out
# of a training's key at that value (stsbench.reproduce.state.key_config), so that a new option retrains nothing.
# The rule: an option that changes what is computed enters this list with its neutral value when it is added.
EARLIER: dict[str, Any] = {"select_on": "stsb-dev", "augment": "none", "augment_views": "declared"}
# resolution fields that fill the saved config: the data decides them, not the machine
FROM_DATA = ("train_file", "model", "mlp_only_train", "save_steps", "supervised", "pooler")


def default_length_buckets(device: str, pad_to_max_length: bool = False) -> int:
    """Less padding pays on CPU (4 passes); on a GPU (or with static shapes) one big pass is faster (SimCSE's)."""
    return 4 if str(device).split(":")[0] == "cpu" and not pad_to_max_length else 1


def effective_queue_size(cfg: TrainConfig, world: int = 1) -> int:
    """Queued negatives at most, by the method's ``queue_size`` (ESimCSE's M, MoCoSE's K); 0 without a queue."""
    spec = find_method(cfg.method)
    return spec.queue_size(cfg, world) if spec is not None and spec.queue_size is not None else 0


def declared_training_pooler(model: str | None) -> str:
    """The pooler a backbone declares (a sentence-transformers Pooling config, a stsbench checkpoint's), else cls.

    Only local folders and the embedded all-MiniLM-L6-v2 are read (no download here); anything else trains
    SimCSE's cls (MLP over [CLS]), right for plain BERT-like models.
    """
    from stsbench.encoders.resolve import resolve_model
    from stsbench.train.model import EMBEDDED_NAMES

    if not model or not (model.lower() in EMBEDDED_NAMES or Path(model).expanduser().is_dir()):
        return "cls"
    try:
        spec = resolve_model(model)
    except StsbenchError:
        return "cls"
    return spec.pooler if spec.kind in ("sentence-transformers", "stsbench") and spec.pooler else "cls"


def eval_pooler(cfg: TrainConfig | ResolvedConfig) -> str:
    """Return the pooler the checkpoint is evaluated with (SimCSE: the MLP stays unless mlp_only_train)."""
    if cfg.pooler == "cls" and cfg.mlp_only_train:
        return "cls_before_pooler"
    return cfg.pooler


class TrainResolution(BaseModel):
    """What a config comes to against its data and its machine (saved beside the config, never in it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    supervised: bool  # (sent0, sent1[, hard_neg]) rows: sup SimCSE
    train_file: str | None  # absolute: a resumed run may start from another directory
    model: str | None  # absolute when a local folder
    mlp_only_train: bool  # default: on for unsup, off for sup (SimCSE)
    save_steps: int  # default: eval_steps
    eval_pooler: str
    pooler: str = "cls"  # default: the pooling the backbone declares (declared_training_pooler), else cls
    queued_negatives: int  # the queue length at most, over all processes (effective_queue_size)
    length_buckets: int | None  # default by device: see default_length_buckets
    device: str | None = None  # the device trained on (None: not yet chosen)
    processes: int = 1
    # what was read: corpus name (None: a plain file), file, lines, their sha256 (None: not read yet)
    corpus: dict[str, Any] | None = None
    # the hidden dropout the backbone trains with: ``dropout`` when set, else its own config's (None: not
    # loaded yet). Runs are grouped by it, so that an unset dropout and the backbone's own value are one setting
    backbone_dropout: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able dict."""
        return self.model_dump()


class ResolvedConfig:
    """A config and its resolution: what the loop and the methods read.

    Attributes are the config's, except those the resolution decides (``train_file``, ``model``,
    ``mlp_only_train``, ``save_steps``, ``supervised``, ``length_buckets``); ``.config`` is the config as
    given. Setting an option builds a new config from it and resolves that again.
    """

    __slots__ = ("config", "resolution")
    _RESOLVED = frozenset((*FROM_DATA, "length_buckets"))

    def __init__(self, config: TrainConfig, resolution: TrainResolution) -> None:
        object.__setattr__(self, "config", config)
        object.__setattr__(self, "resolution", resolution)

    def __getattr__(self, name: str) -> Any:
        if name in ResolvedConfig.__slots__:  # not set yet (copy, unpickling): no lookup through itself
            raise AttributeError(name)
        if name in ResolvedConfig._RESOLVED:
            return getattr(self.resolution, name)
        if name in option_fields():
            return getattr(self.config, name)
        if name in TrainResolution.model_fields:
            return getattr(self.resolution, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name not in option_fields():
            raise AttributeError(f"{name} is not a training option")
        new = finalize(
            self.config.replace(**{name: value}), self.resolution.supervised, corpus=self.resolution.corpus
        )
        if self.resolution.device is not None:
            new = new.on_device(self.resolution.device, self.resolution.processes)
        object.__setattr__(self, "config", new.config)
        object.__setattr__(self, "resolution", new.resolution)

    def __reduce__(self) -> tuple:  # copy and pickle rebuild it from its two parts
        return (ResolvedConfig, (self.config, self.resolution))

    def __repr__(self) -> str:
        return f"ResolvedConfig({self.config!r}, {self.resolution!r})"

    def on_device(self, device: str, world: int = 1) -> ResolvedConfig:
        """Resolved for ``device`` and ``world`` processes; the config itself is unchanged."""
        buckets = self.config.length_buckets or default_length_buckets(device, self.config.pad_to_max_length)
        update = {"device": device, "processes": world, "length_buckets": buckets}
        update["queued_negatives"] = effective_queue_size(self.config, world)
        return ResolvedConfig(self.config, self.resolution.model_copy(update=update))

    def with_backbone_dropout(self, p: float | None) -> ResolvedConfig:
        """Resolved with the loaded backbone's hidden dropout (:attr:`TrainResolution.backbone_dropout`)."""
        return ResolvedConfig(self.config, self.resolution.model_copy(update={"backbone_dropout": p}))

    def to_dict(self) -> dict[str, Any]:
        """The saved config: every option, with what the data decides filled in; the same on any machine."""
        return {**self.config.to_dict(), **{k: getattr(self.resolution, k) for k in FROM_DATA}}


def finalize(
    cfg: TrainConfig | ResolvedConfig, supervised: bool, corpus: dict[str, Any] | None = None
) -> ResolvedConfig:
    """Resolve ``cfg`` against its data (``supervised``: the train file holds pairs); check the method takes it.

    A corpus name in ``train_file`` becomes the file it resolves to in the data folder; ``corpus``: what the
    run read (``TrainData.identity``), recorded in the resolution.
    """
    if isinstance(cfg, ResolvedConfig):
        cfg = cfg.config
    spec = find_method(cfg.method)
    if supervised and (spec is None or spec.supervised is None):
        raise StsbenchError(
            f"{cfg.train_file or cfg.train_dataset} holds sentence pairs (sup SimCSE); {cfg.method} trains on one "
            "sentence a line"
        )
    if cfg.hard_negative_weight > 0 and not supervised:
        raise StsbenchError("--hard-negative-weight needs a sent0,sent1,hard_neg CSV train file")
    # record where the data and a local backbone are, whatever the directory a resumed run starts from
    train_file = cfg.train_file
    if train_file:
        from stsbench.data.corpora import resolve_train_file

        path = resolve_train_file(train_file, cfg.train_lines, cfg.data_dir, strict=False)[0]
        train_file = str(path.resolve())
    model = cfg.model
    if model and Path(model).expanduser().is_dir():
        model = str(Path(model).expanduser().resolve())
    mlp_only_train = (not supervised) if cfg.mlp_only_train is None else cfg.mlp_only_train
    pooler = cfg.pooler or declared_training_pooler(model)
    resolution = TrainResolution(
        supervised=supervised,
        train_file=train_file,
        model=model,
        mlp_only_train=mlp_only_train,
        save_steps=cfg.save_steps if cfg.save_steps is not None else cfg.eval_steps,
        eval_pooler=eval_pooler(cfg.replace(mlp_only_train=mlp_only_train, pooler=pooler)),
        pooler=pooler,
        queued_negatives=effective_queue_size(cfg),
        length_buckets=cfg.length_buckets,
        corpus=corpus,
    )
    return ResolvedConfig(cfg, resolution)


def resume_conflicts(saved: Mapping[str, Any], run: ResolvedConfig) -> list[str]:
    """The fields (not bookkeeping) whose saved value differs from ``run``'s: a resume must refuse them.

    An option newer than the saved run was at its default there (the view options: at what stsbench did before
    them). Runs saved before the resolution record hold the ``length_buckets`` they used: such a saved value is
    compared with the one this run resolves to.
    """
    fields = option_fields()
    spec = find_method(saved.get("method"))
    before = {k: v for k, v in BEFORE_VIEW_OPTIONS.items() if spec is None or spec.accepts(k)}
    saved = {**{k: f.default for k, f in fields.items() if k not in saved}, **before, **saved}
    now = run.to_dict()
    if saved.get("length_buckets") is not None and now.get("length_buckets") is None:
        now["length_buckets"] = run.resolution.length_buckets
    return sorted(k for k in set(saved) | set(now) if k not in BOOKKEEPING and saved.get(k) != now.get(k))
