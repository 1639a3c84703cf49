"""Option groups beside the common ones: selection and bookkeeping, Gaussian dropout, one mask for both views.

Model selection and bookkeeping are every method's; the Gaussian-dropout variant and one dropout mask for both
views are several methods'. A method's own options live in its options module (``stsbench/train/methods/<name>_options.py``); a group here
is one that more than one method takes. Nothing here imports the config or torch.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, field_validator

from stsbench.options import STRICT as _STRICT
from stsbench.options import option


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
        None,
        "The W&B and trackio group of the run (default: none; --seeds: OUTPUT's name and the method).",
    )
    run_name: str | None = option(
        None, "The W&B and trackio run name (default: the output folder's name, under its group)."
    )

    @field_validator("report_to", mode="before")
    @classmethod
    def _trackers(cls, value: Any) -> Any:
        from stsbench.train.tracking import parse_report_to

        return parse_report_to(value) if isinstance(value, str | list | tuple) else value
