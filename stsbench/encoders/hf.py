"""Hugging Face and sentence-transformers encoders: deduplicated, length-bucketed, per-batch padded encoding."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from stsbench.encoders.base import EncodeOptions, EncoderInfo
from stsbench.encoders.pooling import needs_hidden_states, pool
from stsbench.encoders.resolve import (
    ModelSpec,
    check_token_ids,
    check_vocabulary,
    position_limit,
    read_json,
    transformer_dir,
)
from stsbench.errors import StsbenchError
from stsbench.progress import progress_bar

# called with the positions in ``texts`` of a finished batch's rows and their float32 vectors
OnBatch = Callable[[np.ndarray, np.ndarray], None]


def pick_device(device: str | None) -> str:
    """``device`` as given (checked: :func:`check_device`), else cuda when available, else cpu."""
    import torch

    if device:
        return check_device(device)
    return "cuda" if torch.cuda.is_available() else "cpu"


def check_device(device: str) -> str:
    """Refuse a ``--device`` torch does not know or cannot use here, in one line, before a model loads."""
    import torch

    try:
        dev = torch.device(device)
    except (RuntimeError, ValueError):
        raise StsbenchError(f"unknown device '{device}'; use cpu, cuda, cuda:N or mps") from None
    backend = getattr(torch, dev.type, None) if dev.type != "cpu" else None
    if backend is not None and hasattr(backend, "is_available") and not backend.is_available():
        cpu_only = dev.type == "cuda" and torch.version.cuda is None
        build = " (this torch is a CPU-only build)" if cpu_only else ""
        raise StsbenchError(f"--device {device}: {dev.type} is not available here{build}; use --device cpu")
    if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
        raise StsbenchError(
            f"--device {device}: there is no such GPU ({torch.cuda.device_count()} visible); pick cuda:0 to "
            f"cuda:{torch.cuda.device_count() - 1}"
        )
    return device


def _load_error(path: Path, exc: Exception) -> StsbenchError:
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
    return StsbenchError(
        f"cannot load the model in {path} ({reason}); a weights or config file may be corrupt or truncated: "
        "re-download or re-save the model"
    )


def check_finite(vectors: np.ndarray, texts: Sequence[str], name: str) -> np.ndarray:
    """Refuse NaN/inf embeddings: they would turn into silently wrong correlations."""
    bad = ~np.isfinite(vectors).all(axis=1)
    if bad.any():
        first = texts[int(np.argmax(bad))]
        raise StsbenchError(
            f"model {name} returned NaN/inf embeddings for {int(bad.sum())} of {len(texts)} sentences "
            f"(first: {first[:60]!r}); check the weights and --dtype, or try another --pooler"
        )
    return vectors


class _SpecEncoder:
    """What both encoders of a resolved model keep: the spec, the options they run with, their info.

    The prompt is prepended to every text and pooled with it (include_prompt, the default); "" rather than
    None: sentence-transformers would apply the model's default prompt to None, and
    stsbench.encoders.resolve.choose_prompt has already chosen it (or not).
    """

    def __init__(
        self, spec: ModelSpec, options: EncodeOptions, key: str, length: int | None, **extra
    ) -> None:
        self.spec = spec
        self.max_length = options.max_length
        self.device = options.device
        self.dtype = options.dtype
        self.prompt = options.prompt or ""
        prompt = (self.prompt or None, options.prompt_name if self.prompt else None)
        self.info = EncoderInfo(
            spec.name, str(spec.path), key, options.pooler, length, self.dtype, spec.kind, extra, *prompt
        )
        self._model = None
        self.n_encoded = 0  # texts that went through the network (the cache's tests read it)

    def encode(
        self,
        texts: Sequence[str],
        batch_size: int = 128,
        show_progress: bool = True,
        on_batch: OnBatch | None = None,
    ) -> np.ndarray:
        """Embed ``texts``, float32 ``(n, d)``; ``on_batch`` gets each finished batch (the cache stores it).

        A batch with NaN/inf vectors is not passed on, and the whole call then fails as ``check_finite`` says.
        """
        if len(texts) == 0:
            return np.zeros((0, 0), dtype=np.float32)
        return self._encode(texts, batch_size, show_progress, on_batch)


class HFEncoder(_SpecEncoder):
    """A ``transformers`` model plus one of SimCSE's poolers (also runs Transformer+Pooling ST models)."""

    def __init__(self, spec: ModelSpec, options: EncodeOptions, *, fingerprint: str) -> None:
        """``options`` as resolved for ``spec``: its pooler (chosen), its length, its prompt's text."""
        self.pooler = options.pooler
        super().__init__(spec, options, fingerprint, options.max_length, normalize=spec.normalize)
        self._tokenizer = None
        self._config: dict = {}  # config.json; a live model (encoders.load) brings its own

    def _load(self) -> None:
        if self._model is not None:
            return
        import torch
        import transformers
        from transformers import AutoModel, AutoTokenizer

        transformers.utils.logging.set_verbosity_error()
        transformers.utils.logging.disable_progress_bar()
        self._config = read_json(self.spec.path / "config.json")  # {}: the load below says why
        try:
            self._tokenizer = AutoTokenizer.from_pretrained(self.spec.path)
        except Exception as exc:  # json/OSError: all mean "this folder does not load"
            raise _load_error(self.spec.path, exc) from None
        # before the weights load: a tokenizer without its vocabulary turns every word into [UNK]
        check_vocabulary(self._tokenizer, self._config.get("vocab_size"), self.spec.path)
        try:
            model = AutoModel.from_pretrained(self.spec.path, dtype=getattr(torch, self.dtype))
        except Exception as exc:  # safetensors/json/OSError: all mean "this folder does not load"
            raise _load_error(self.spec.path, exc) from None
        self.device = pick_device(self.device)
        self.attach(model, self._tokenizer)

    def attach(self, model, tokenizer) -> None:
        """Run ``model`` (a loaded ``transformers`` model, moved to ``self.device``) with ``tokenizer``."""
        self._tokenizer = tokenizer
        self._model = model.to(self.device).eval()
        self._types = "token_type_ids" in inspect.signature(model.forward).parameters

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids per text, truncated to ``max_length`` when set (no padding)."""
        self._load()
        if self.prompt:  # before lower-casing and truncation, as sentence-transformers prepends it
            texts = [self.prompt + t for t in texts]
        if self.spec.do_lower_case:
            texts = [t.lower() for t in texts]
        # no truncation unless asked (SentEval), but never past the position embeddings
        if not self._config and hasattr(self._model, "config"):
            self._config = self._model.config.to_dict()
        limit = min(filter(None, (self.max_length, position_limit(self._config))), default=None)
        ids_only = {"padding": False, "return_token_type_ids": False, "return_attention_mask": False}
        enc = self._tokenizer(list(texts), truncation=limit is not None, max_length=limit, **ids_only)
        check_token_ids(enc["input_ids"], texts, self._config.get("vocab_size"), self.spec.name)
        return enc["input_ids"]

    def _encode(self, texts, batch_size: int, show_progress: bool, on_batch: OnBatch | None) -> np.ndarray:
        """Each distinct token sequence once, in length-bucketed batches, pooled."""
        import torch

        # texts that tokenize alike ("inc ." / "inc.", case under an uncased vocabulary) run once
        first: dict[tuple[int, ...], int] = {}
        where = np.array([first.setdefault(tuple(i), len(first)) for i in self.tokenize(texts)])
        ids = [list(i) for i in first]
        users: list[list[int]] = [[] for _ in ids]  # positions in ``texts`` of each distinct sequence
        for pos, i in enumerate(where):
            users[i].append(pos)
        pad_id = self._tokenizer.pad_token_id or 0
        hidden = needs_hidden_states(self.pooler)
        out: np.ndarray | None = None
        # eval mode (no dropout) while encoding, then as it was: a live model wrapped earlier may have been put
        # back in train mode since (sentence-transformers before 6 leaves its modules in train mode)
        was_training = self._model.training
        self._model.eval()
        try:
            with (
                torch.inference_mode(),
                progress_bar(f"encoding {len(ids)} sentences", len(ids), enabled=show_progress) as advance,
            ):
                for rows in length_batches([len(i) for i in ids], batch_size):
                    width = len(ids[rows[0]])
                    padded = [ids[i] + [pad_id] * (width - len(ids[i])) for i in rows]
                    input_ids = torch.tensor(padded, dtype=torch.int64, device=self.device)
                    ones = [[1] * len(ids[i]) + [0] * (width - len(ids[i])) for i in rows]
                    mask = torch.tensor(ones, dtype=torch.int64, device=self.device)
                    vecs = self.embed_batch(input_ids, mask, hidden).float().cpu().numpy()
                    if out is None:
                        out = np.empty((len(ids), vecs.shape[1]), dtype=np.float32)
                    out[rows] = vecs
                    self.n_encoded += len(rows)
                    if on_batch is not None and np.isfinite(vecs).all():
                        on_batch(
                            np.array([p for i in rows for p in users[i]]),
                            np.repeat(vecs, [len(users[i]) for i in rows], axis=0),
                        )
                    advance(len(rows))
        finally:
            self._model.train(was_training)
        return check_finite(out[where], texts, self.spec.name)

    def embed_batch(self, input_ids, mask, hidden: bool):
        """Pooled (and, when declared, normalised) vectors ``(B, H)`` of one padded batch."""
        import torch

        extra = {"token_type_ids": torch.zeros_like(input_ids)} if self._types else {}
        outputs = self._model(
            input_ids=input_ids, attention_mask=mask, output_hidden_states=hidden, return_dict=True, **extra
        )
        try:
            vecs = pool(outputs, mask, self.pooler)
        except ValueError as exc:
            raise StsbenchError(f"model {self.spec.name}: {exc}") from None
        if self.spec.normalize:
            vecs = torch.nn.functional.normalize(vecs, p=2, dim=1)
        return vecs


def length_batches(lengths: Sequence[int], batch_size: int) -> list[list[int]]:
    """Row indices in batches of at most ``batch_size``, longest first, cut so that most need no padding.

    Sorted by length, a batch stops where the length changes when its rows of the leading length are at
    least an eighth of a batch: such a batch has no padding, so its attention mask is all ones and the
    model takes its unmasked attention path. A length with fewer rows than that shares a padded batch with
    the next shorter ones rather than running as a batch of a few rows (many tiny batches cost more than a
    little padding, on GPUs above all).
    """
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    least = max(1, batch_size // 8)
    batches: list[list[int]] = []
    start = 0
    while start < len(order):
        end = min(start + batch_size, len(order))
        width = lengths[order[start]]  # the leading length, which runs up to ``same``
        same = next((i for i in range(start, end) if lengths[order[i]] != width), end)
        if same < end and same - start >= least:
            end = same
        batches.append(order[start:end])
        start = end
    return batches


class SentenceTransformerEncoder(_SpecEncoder):
    """Module stacks stsbench does not run itself go through sentence-transformers."""

    def __init__(self, spec: ModelSpec, options: EncodeOptions, *, fingerprint: str) -> None:
        """``options`` as resolved for ``spec``: its prompt's text chosen, pooler ``declared``."""
        length = options.max_length or spec.max_length
        super().__init__(spec, options, fingerprint, length, modules=spec.declared.get("modules", []))

    def _encode(self, texts, batch_size: int, show_progress: bool, on_batch: OnBatch | None) -> np.ndarray:
        """By ``SentenceTransformer.encode`` (it sorts by length itself); ``on_batch`` gets all at the end."""
        import torch

        if self._model is None:
            from sentence_transformers import SentenceTransformer

            try:
                self._model = SentenceTransformer(str(self.spec.path), device=pick_device(self.device))
            except Exception as exc:
                raise _load_error(self.spec.path, exc) from None
            folder = transformer_dir(self.spec.path)
            tokenizer = getattr(self._model, "tokenizer", None)
            if folder is not None and tokenizer is not None:
                vocab_size = read_json(folder / "config.json").get("vocab_size")
                check_vocabulary(tokenizer, vocab_size, self.spec.path)
            self._model.to(getattr(torch, self.dtype))
            if self.max_length:
                self._model.max_seq_length = self.max_length
        options = {"batch_size": batch_size, "show_progress_bar": show_progress, "prompt": self.prompt}
        vecs = self._model.encode(list(texts), convert_to_tensor=True, **options).float().cpu().numpy()
        self.n_encoded += len(texts)
        check_finite(vecs, texts, self.spec.name)
        if on_batch is not None:
            on_batch(np.arange(len(texts)), vecs)
        return vecs
