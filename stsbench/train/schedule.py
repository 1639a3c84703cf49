"""The learning-rate schedule as a pure function of the step (what SimCSE's HF Trainer used)."""

from __future__ import annotations


def linear_lr(step: int, total_steps: int, peak: float, warmup_steps: int = 0) -> float:
    """Return the lr of 0-based ``step``: linear warm-up to ``peak``, then linear decay to 0 at the end.

    Equal to ``transformers.get_linear_schedule_with_warmup`` (SimCSE: no warm-up, so it starts at ``peak``).
    """
    if step < warmup_steps:
        return peak * step / max(1, warmup_steps)
    return peak * max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))
