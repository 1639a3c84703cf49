"""SimCSE / ESimCSE training: ``train(make_config(...))`` leaves a checkpoint ``stsbench run`` evaluates."""

from __future__ import annotations

import re

# the oldest torch the trainer runs on, pyproject's torch>=2.4 (tests/test_torch_floor.py keeps the two equal):
# torch.amp.GradScaler("cuda") (train/step.py, --precision fp16) is 2.3's; the CPU kernel of torch._fused_adamw_
# (train/step.py, --optimizer hf-adamw, the *-official configs' default) is 2.4's
TORCH_FLOOR = (2, 4)


def check_torch(version: str) -> None:
    """``StsbenchError`` (one line) for a torch older than :data:`TORCH_FLOOR`; ``version``: ``torch.__version__``."""
    from stsbench.errors import StsbenchError

    found = re.match(r"(\d+)\.(\d+)", version)
    if found and (int(found[1]), int(found[2])) < TORCH_FLOOR:
        floor = ".".join(map(str, TORCH_FLOOR))
        raise StsbenchError(
            f"stsbench train needs torch >= {floor} and this is torch {version}; "
            f"pip install 'torch>={floor}' (your CUDA or ROCm build of it)"
        )
