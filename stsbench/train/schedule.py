"""The schedule as pure functions: a step's learning rate, an epoch's steps.

The learning rate is what SimCSE's HF Trainer used. No torch here: ``stsbench reproduce`` plans with them.
"""

from __future__ import annotations

from stsbench.errors import StsbenchError


def linear_lr(step: int, total_steps: int, peak: float, warmup_steps: int = 0) -> float:
    """Return the lr of 0-based ``step``: linear warm-up to ``peak``, then linear decay to 0 at the end.

    Equal to ``transformers.get_linear_schedule_with_warmup`` (SimCSE: no warm-up, so it starts at ``peak``).
    """
    if step < warmup_steps:
        return peak * step / max(1, warmup_steps)
    return peak * max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


def batches_per_epoch(n: int, batch_size: int, world: int = 1) -> int:
    """Batches an epoch of ``n`` rows holds.

    One process: full batches plus the last partial one, unless it would hold a single row (no negative to
    contrast). ``world`` processes: full global batches of ``batch_size`` x ``world`` rows only, so that every
    process gets a full slice.
    """
    if world > 1:
        per_epoch = n // (batch_size * world)
        if per_epoch == 0:
            raise StsbenchError(
                f"{n} training rows fill no global batch of {batch_size} x {world} processes; "
                "lower --batch-size or use fewer processes"
            )
        return per_epoch
    full, rest = divmod(n, batch_size)
    return full + (1 if rest >= 2 else 0)


def run_steps(max_steps: int | None, epochs: int, lines: int | None, batch_size: int) -> int | None:
    """A run's optimizer steps on one process: ``max_steps``, else ``epochs`` over ``lines`` rows (None: unknown)."""
    if max_steps:
        return int(max_steps)
    return epochs * batches_per_epoch(lines, batch_size) if lines else None


def epoch_of(step: int, per_epoch: int) -> int:
    """The 1-based epoch of 1-based ``step`` (the log's ``epoch``)."""
    return (step - 1) // per_epoch + 1


def rows_before(step: int, n: int, batch_size: int) -> int:
    """Rows the batches of 0-based steps before ``step`` held, on one process without length buckets."""
    epochs, index = divmod(step, batches_per_epoch(n, batch_size))
    full, rest = divmod(n, batch_size)
    return epochs * (n if rest >= 2 else full * batch_size) + index * batch_size


def parse_buckets(spec: str) -> list[int]:
    """``--batch-buckets``: ``"8"`` -> ``[8]`` (lengths <= 8, > 8), ``"3:8"`` -> ``[3, 4, 5, 6, 7]`` (<= 3, 4, ..., >= 8).

    ESimCSE COLING Table 6: two coarse buckets split at buc_len (3 to 8), or the fine-grained {<= 3, 4, 5, 6, 7,
    >= 8} ("3~8"). A sentence goes to the bucket numbered by how many edges lie below its length.
    """
    text = spec.strip()
    try:
        if ":" in text:
            low, high = (int(p) for p in text.split(":"))
            edges = list(range(low, high))
        else:
            edges = [int(text)]
    except ValueError:
        raise StsbenchError(
            f"--batch-buckets {spec!r}: expected N (two buckets, <= N and > N) or A:B (<= A, A+1, ..., >= B), "
            "whole numbers, e.g. 8 or 3:8"
        ) from None
    if not edges or edges[0] < 0:
        raise StsbenchError(f"--batch-buckets {spec!r}: need 0 <= N, or 0 <= A < B")
    return edges
