"""One training step of the official SimCSE, ESimCSE and MoCoSE code, re-written in plain torch for parity tests.

Written from a reading of the official sources, independent of ``stsbench.train`` (nothing is imported from
it): the modules are Hugging Face ``BertModel`` parts and ``nn.Linear``/``nn.LayerNorm`` layers the test
fills with the same starting weights as stsbench's; the batches are the test's data. Which file and function
each part follows:

- the optimizer, :class:`TrainerAdamW`: transformers v4.2.1 ``src/transformers/optimization.py``
  ``AdamW.step`` (MoCoSE ran v4.11.3, the same ``step``), built as ``Trainer.create_optimizer_and_scheduler``
  (v4.2.1 ``trainer.py``; v4.11.3 ``create_optimizer``) builds it: betas (0.9, 0.999), eps 1e-8, correct_bias
  left True, weight decay off for biases and LayerNorm weights;
- the update around it, :func:`trainer_update`: ``Trainer.train`` and ``Trainer.training_step`` (v4.2.1
  ``trainer.py``): ``loss.backward()``, ``clip_grad_norm_(model.parameters(), max_grad_norm)``,
  ``optimizer.step()``, ``lr_scheduler.step()`` (``get_linear_schedule_with_warmup``, :func:`linear_lr`),
  ``model.zero_grad()``;
- SimCSE, :func:`simcse_loss`: princeton-nlp/SimCSE ``simcse/models.py`` ``cl_forward`` (the views of a
  sentence flattened into one encoder pass, [CLS] through ``MLPLayer`` (dense + tanh), ``Similarity`` =
  cosine / temp, cross-entropy against the diagonal; the MLM term ``cls.lm_head(mlm_outputs.last_hidden_state)``
  with weight ``mlm_weight``), the LM head loaded as ``train.py`` loads it
  (``BertForPreTraining...cls.predictions.state_dict()``), the masking of ``train.py``
  ``OurDataCollatorWithPadding.mask_tokens`` (:func:`mask_tokens`);
- ESimCSE, :class:`ESimCSEReference`: caskcsg/sentemb ``ESimCSE/esimcse/models.py`` ``cl_forward`` (the EMA
  ``param_m.data = param_m.data * momentum + param.data * (1 - momentum)`` over the encoder's parameters inside
  the training forward, after the online pass; ``loss_neg`` with ``pre_z1`` as extra negatives) and
  ``ESimCSE/esimcse/trainers.py`` ``CLTrainer.compute_loss`` (then, in eval mode and without gradient, the
  momentum encoder's [CLS] of the first view through the online ``cls.mlp`` -> ``eval_z``, appended to
  ``pre_z1`` and cut to the last ``neg_size``), then backward and the optimizer step;
- MoCoSE, :class:`MoCoSEReference`: xbdxwyh/mocose ``mocose.py`` ``MoCoSEModel.forward`` (the step counter and
  the three ``EMA.update`` calls at the start of the forward, decay ``1 - (1 - d)(cos(pi t / 15000) + 1) / 2``
  over ``state_dict``; both views from ``online_embeddings`` with the FGSM of ``MoCoSEEmbeddings.forward`` /
  ``fgsm_attack`` from the gradient a hook kept at the previous backward; online encoder -> ``online_pooler``
  (dense, no tanh) -> ``online_projection`` -> ``prodiction``; the target branch through the EMA copies with
  the keys undetached; ``InfoNCEWithQueue`` over ``queue[:, :queue_size + K_start]`` until that reaches K;
  ``dequeue_and_enqueue`` at the front), with the notebook's freezing of target encoder and pooler only.
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn


def linear_lr(step: int, total: int, peak: float) -> float:
    """``get_linear_schedule_with_warmup`` without warm-up: the lr of 0-based step ``step``."""
    return peak * max(0.0, (total - step) / max(1, total))


class TrainerAdamW(torch.optim.Optimizer):
    """transformers v4.2.1 ``optimization.py`` ``AdamW``, tensor by tensor as ``step`` has it."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, correct_bias=True):
        super().__init__(
            params,
            {
                "lr": lr,
                "betas": betas,
                "eps": eps,
                "weight_decay": weight_decay,
                "correct_bias": correct_bias,
            },
        )

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
                beta1, beta2 = group["betas"]
                state["step"] += 1
                exp_avg.mul_(beta1).add_(grad, alpha=1.0 - beta1)
                exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1.0 - beta2)
                denom = exp_avg_sq.sqrt().add_(group["eps"])
                step_size = group["lr"]
                if group["correct_bias"]:
                    bias_correction1 = 1.0 - beta1 ** state["step"]
                    bias_correction2 = 1.0 - beta2 ** state["step"]
                    step_size = step_size * math.sqrt(bias_correction2) / bias_correction1
                p.addcdiv_(exp_avg, denom, value=-step_size)
                if group["weight_decay"] > 0.0:
                    p.add_(p, alpha=-group["lr"] * group["weight_decay"])


def trainer_groups(modules: list[nn.Module], weight_decay: float) -> list[dict]:
    """The Trainer's two groups: decay, and none for biases and LayerNorm weights (each parameter once)."""
    decay, no_decay, seen = [], [], set()
    for module in modules:
        for m in module.modules():
            for name, p in m.named_parameters(recurse=False):
                if id(p) in seen or not p.requires_grad:
                    continue
                seen.add(id(p))
                (no_decay if "bias" in name or isinstance(m, nn.LayerNorm) else decay).append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def trainer_update(
    optimizer: torch.optim.Optimizer, loss: torch.Tensor, lr: float, max_grad_norm: float
) -> None:
    """``training_step``'s backward, then ``train``'s clip, step (at this step's scheduled lr), zero_grad."""
    loss.backward()
    params = [p for g in optimizer.param_groups for p in g["params"]]
    torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.step()
    for p in params:
        p.grad = None


def cos_logits(a: torch.Tensor, b: torch.Tensor, temp: float) -> torch.Tensor:
    """``Similarity``: ``nn.CosineSimilarity(dim=-1)(a.unsqueeze(1), b.unsqueeze(0)) / temp``."""
    return nn.CosineSimilarity(dim=-1)(a.unsqueeze(1), b.unsqueeze(0)) / temp


def flatten_views(views: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The collator's (bs, num_sent, len), padded to one length, as ``cl_forward`` flattens it: (bs * num_sent, len)."""
    width = max(v["input_ids"].shape[1] for v in views)
    padded = [{k: F.pad(t, (0, width - t.shape[1])) for k, t in v.items()} for v in views]
    return {k: torch.stack([v[k] for v in padded], dim=1).view(-1, width) for k in padded[0]}


def cls_mlp(bert: nn.Module, mlp: nn.Linear, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """``Pooler('cls')`` (last hidden state at [CLS]) then ``MLPLayer`` (dense + tanh)."""
    return torch.tanh(mlp(bert(**batch).last_hidden_state[:, 0]))


def simcse_loss(bert, mlp, views, temp, lm_head=None, mlm=None, mlm_weight=0.0) -> torch.Tensor:
    """SimCSE ``cl_forward``: the unsup loss on two views (the sentence twice), plus ``mlm_weight`` x MLM."""
    flat = flatten_views(views)
    z = cls_mlp(bert, mlp, flat).view(len(views[0]["input_ids"]), len(views), -1)
    logits = cos_logits(z[:, 0], z[:, 1], temp)
    loss = F.cross_entropy(logits, torch.arange(len(logits)))
    if mlm is not None:
        masked, labels = mlm  # every view's rows; the mean over masked tokens does not depend on their order
        scores = lm_head(bert(**masked).last_hidden_state)
        loss = loss + mlm_weight * F.cross_entropy(scores.view(-1, scores.shape[-1]), labels.view(-1))
    return loss


def mask_tokens(ids, special, mask_id: int, vocab: int, probability: float, generator: torch.Generator):
    """SimCSE ``train.py`` ``mask_tokens``: 15% picked, of those 80% [MASK], 10% a random word, 10% kept."""
    inputs, labels = ids.clone(), ids.clone()
    probability_matrix = torch.full(labels.shape, probability).masked_fill_(special, 0.0)
    masked = torch.bernoulli(probability_matrix, generator=generator).bool()
    labels[~masked] = -100
    replaced = torch.bernoulli(torch.full(labels.shape, 0.8), generator=generator).bool() & masked
    inputs[replaced] = mask_id
    random = torch.bernoulli(torch.full(labels.shape, 0.5), generator=generator).bool() & masked & ~replaced
    words = torch.randint(vocab, labels.shape, generator=generator)
    inputs[random] = words[random]
    return inputs, labels


class ESimCSEReference:
    """ESimCSE's official step: online forward, EMA (pre-step), loss with ``pre_z1``, keys, queue, then the step."""

    def __init__(self, bert, mlp, momentum_bert, *, momentum, neg_size, temp, lr, weight_decay=0.0):
        self.bert, self.mlp, self.momentum_bert = bert, mlp, momentum_bert
        self.momentum, self.neg_size, self.temp = momentum, neg_size, temp
        self.pre_z1: torch.Tensor | None = None
        self.optimizer = TrainerAdamW(trainer_groups([bert, mlp], weight_decay), lr=lr)

    def step(self, anchor, positive, lr: float, max_grad_norm: float) -> float:
        flat = flatten_views([anchor, positive])
        z = cls_mlp(self.bert, self.mlp, flat).view(len(anchor["input_ids"]), 2, -1)
        with torch.no_grad():  # models.py cl_forward: the EMA inside the training forward
            for param, param_m in zip(self.bert.parameters(), self.momentum_bert.parameters(), strict=True):
                param_m.data = param_m.data * self.momentum + param.data * (1.0 - self.momentum)
        z1, z2 = z[:, 0], z[:, 1]
        logits = cos_logits(z1, z2, self.temp)
        if self.pre_z1 is not None:
            logits = torch.cat([logits, cos_logits(z1, self.pre_z1, self.temp)], dim=1)
        loss = F.cross_entropy(logits, torch.arange(len(z1)))
        with torch.no_grad():  # trainers.py compute_loss: eval_z through the online MLP, before the step
            eval_z = torch.tanh(self.mlp(self.momentum_bert(**anchor).last_hidden_state[:, 0]))
        joined = eval_z if self.pre_z1 is None else torch.cat([self.pre_z1, eval_z])
        self.pre_z1 = joined[-self.neg_size :].clone()
        trainer_update(self.optimizer, loss, lr, max_grad_norm)
        return loss.item()


def ema_decay(step: int, decay: float, total_step: int = 15000) -> float:
    """``EMA.update``'s ``decay_new`` (``mocose.py``)."""
    return 1 - (1 - decay) * (math.cos(math.pi * step / total_step) + 1) / 2


class MoCoSEReference:
    """MoCoSE's official forward (EMA first, FGSM from the previous backward) and the Trainer's step.

    ``online_bert`` holds ``online_embeddings`` + ``online_encoder``; ``target_bert`` is a BertModel whose
    ``embeddings`` is the online one (the official target has none of its own) and whose encoder is the
    EMA'd copy. ``queue``: (K, H), newest first as ``dequeue_and_enqueue`` keeps it.
    """

    def __init__(
        self,
        online_bert,
        pooler,
        projection,
        prediction,
        queue,
        *,
        k,
        k_start,
        decay,
        fgsm,
        temp,
        lr,
        weight_decay,
    ):
        self.online_bert, self.pooler, self.projection, self.prediction = (
            online_bert,
            pooler,
            projection,
            prediction,
        )
        self.target_bert = copy.deepcopy(online_bert)
        self.target_bert.embeddings = online_bert.embeddings
        self.target_pooler = copy.deepcopy(pooler)
        self.target_projection = copy.deepcopy(projection)
        self.target_bert.encoder.requires_grad_(False)  # the notebook freezes target encoder and pooler only
        self.target_pooler.requires_grad_(False)
        self.queue, self.queue_size, self.k, self.k_start = queue.clone(), k_start, k, k_start
        self.decay, self.fgsm, self.temp, self.steps = decay, fgsm, temp, 0
        self.features_grad: torch.Tensor | None = None
        modules = [online_bert, pooler, projection, prediction, self.target_projection]
        self.optimizer = TrainerAdamW(trainer_groups(modules, weight_decay), lr=lr)

    def ema(self) -> None:
        """``EMA.update`` of target encoder, pooler and projection, over ``state_dict``."""
        self.steps += 1
        d = ema_decay(self.steps, self.decay)
        pairs = [
            (self.target_bert.encoder, self.online_bert.encoder),
            (self.target_pooler, self.pooler),
            (self.target_projection, self.projection),
        ]
        with torch.no_grad():
            for target, online in pairs:
                for e, m in zip(target.state_dict().values(), online.state_dict().values(), strict=True):
                    e.copy_(d * e + (1.0 - d) * m)

    def embed(self, batch: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``MoCoSEEmbeddings`` up to the word embeddings, with the hook and FGSM; the rest in BertEmbeddings."""
        x = self.online_bert.embeddings.word_embeddings(batch["input_ids"])
        if self.fgsm > 0:
            x.register_hook(self._keep_grad)
            if self.features_grad is not None:  # fgsm_attack: nothing on the first step
                x = x + self.fgsm * self.features_grad.sign()
        return {**{k: v for k, v in batch.items() if k != "input_ids"}, "inputs_embeds": x}

    def _keep_grad(self, grad: torch.Tensor) -> None:
        self.features_grad = grad

    def step(self, anchor: dict[str, torch.Tensor], lr: float, max_grad_norm: float) -> float:
        self.ema()
        online_in, target_in = self.embed(anchor), self.embed(anchor)
        hidden_online = self.online_bert(**online_in).last_hidden_state
        hidden_target = self.target_bert(**target_in).last_hidden_state
        online_out = self.prediction(self.projection(self.pooler(hidden_online[:, 0])))
        target_out = self.target_projection(self.target_pooler(hidden_target[:, 0]))
        if self.queue_size + self.k_start < self.k:
            negatives = self.queue[: self.queue_size + self.k_start]
        else:
            negatives = self.queue
        logits = torch.cat(
            [
                cos_logits(online_out, target_out, self.temp),
                cos_logits(online_out, negatives.detach(), self.temp),
            ],
            dim=1,
        )
        loss = F.cross_entropy(logits, torch.arange(len(online_out)))
        with torch.no_grad():  # dequeue_and_enqueue: at the front, cut to K once past it
            self.queue = torch.cat([target_out.detach(), self.queue])
            self.queue_size += len(target_out)
            if self.queue_size > self.k:
                self.queue = self.queue[: self.k]
        trainer_update(self.optimizer, loss, lr, max_grad_norm)
        return loss.item()
