"""An unsupervised SimCSE step written the way the official code runs it: the baseline of train_speed.py.

Follows princeton-nlp/SimCSE ``train.py`` + ``simcse/models.py`` (``BertForCL``, ``cl_forward``) under the HF
``Trainer`` loop its ``run_unsup_example.sh`` starts (``--fp16``):

- the model: HF ``BertModel`` without its pooler, SimCSE's ``MLPLayer`` (dense + tanh) over [CLS] in training;
- the batch: each sentence twice, shape (B, 2, T) flattened to (2B, T) for one forward pass, padded to the
  longest sentence of the batch (``OurDataCollatorWithPadding``: ``tokenizer.pad``, padding=True);
- the loss: cosine similarities of the two views / 0.05, cross-entropy against the diagonal;
- the step: fp16 autocast with a ``GradScaler`` on CUDA (fp32 on CPU, where fp16 autocast does not run), unscale,
  clip the gradient norm to 1.0, AdamW (torch's, foreach where the device has it), a linear lr decay, and one
  host sync on the loss per step (the Trainer's NaN/inf logging filter reads it, as ``loss.item()`` would).

Tokenisation runs per step on the host (``pretokenized=False``); ``pretokenized=True`` tokenises up front as
the official ``datasets.map(prepare_features)`` does and leaves the collator's ``tokenizer.pad`` in the step.
The attention kernel is whatever ``transformers`` picks today (SDPA), faster than the eager attention of the
transformers 4.2.1 the official code pinned: the baseline errs on the fast side.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch
from torch import nn


class OfficialSimCSE(nn.Module):
    """``BertForCL`` for unsup SimCSE: BERT, [CLS], MLP, InfoNCE with temperature 0.05."""

    def __init__(self, model_dir: Path | str, temperature: float = 0.05) -> None:
        super().__init__()
        from transformers import BertModel

        self.bert = BertModel.from_pretrained(model_dir, add_pooling_layer=False, dtype=torch.float32)
        hidden = self.bert.config.hidden_size
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())
        self.temperature = temperature

    def forward(self, input_ids, attention_mask, token_type_ids) -> torch.Tensor:
        bs, views, width = input_ids.shape  # (B, 2, T)
        out = self.bert(
            input_ids=input_ids.view(-1, width),
            attention_mask=attention_mask.view(-1, width),
            token_type_ids=token_type_ids.view(-1, width),
            return_dict=True,
        )
        z = self.mlp(out.last_hidden_state[:, 0]).view(bs, views, -1)  # (B, 2, H)
        sim = nn.functional.cosine_similarity(z[:, 0].unsqueeze(1), z[:, 1].unsqueeze(0), dim=-1)
        labels = torch.arange(bs, device=sim.device)
        return nn.functional.cross_entropy(sim / self.temperature, labels)


class OfficialStep:
    """One official-style training step per call on a batch of sentences; returns the loss as a float."""

    def __init__(
        self,
        model_dir: Path | str,
        *,
        device: str,
        max_length: int = 32,
        lr: float = 3e-5,
        total_steps: int = 1,
        pretokenized_texts: list[str] | None = None,
    ) -> None:
        import transformers
        from transformers import AutoTokenizer

        transformers.utils.logging.set_verbosity_error()
        self.device = device
        self.max_length = max_length
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = OfficialSimCSE(model_dir).to(device).train()
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr, weight_decay=0.0)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, lambda step: max(0.0, (total_steps - step) / max(1, total_steps))
        )
        cuda = torch.device(device).type == "cuda"
        self.scaler = torch.amp.GradScaler("cuda") if cuda else None
        self.precision = "fp16" if cuda else "fp32"
        self.features = None
        if pretokenized_texts is not None:  # datasets.map(prepare_features), before training
            enc = self.tokenizer(pretokenized_texts, max_length=max_length, truncation=True)
            keys = list(enc.keys())
            self.features = {text: {k: enc[k][i] for k in keys} for i, text in enumerate(pretokenized_texts)}

    def collate(self, texts: list[str]) -> dict[str, torch.Tensor]:
        """(B, 2, T) tensors on the device: each sentence twice, padded to the batch's longest."""
        if self.features is None:
            enc = self.tokenizer(
                [t for t in texts for _ in range(2)],
                max_length=self.max_length,
                truncation=True,
                padding=True,
                return_tensors="pt",
            )
        else:
            enc = self.tokenizer.pad(
                [self.features[t] for t in texts for _ in range(2)], padding=True, return_tensors="pt"
            )
        bs = len(texts)
        return {
            k: enc[k].view(bs, 2, -1).to(self.device, non_blocking=True)
            for k in ("input_ids", "attention_mask", "token_type_ids")
        }

    def __call__(self, texts: list[str]) -> tuple[float, int]:
        """Run a step on ``texts``; return its loss and the padded width of the batch."""
        batch = self.collate(texts)
        autocast = (
            torch.autocast("cuda", dtype=torch.float16)
            if self.scaler is not None
            else contextlib.nullcontext()
        )
        with autocast:
            loss = self.model(**batch)
        logged = loss.item()  # the Trainer's per-step read of the loss (NaN/inf filter, tr_loss)
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
        self.scheduler.step()
        self.optimizer.zero_grad(set_to_none=True)
        return logged, batch["input_ids"].shape[-1]
