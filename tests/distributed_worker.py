"""One process of a torchrun-launched test run: ``distributed_worker.py OPTIONS_JSON KILL_AT [resume]``.

Trains with :func:`stsbench.train.loop.train`; ``KILL_AT`` > 0 raises after that step in every process (a
crash after the step, before the next save), to test resuming a multi-process run.
"""

from __future__ import annotations

import json
import sys

from stsbench.train.config import make_config
from stsbench.train.loop import train


def main() -> None:
    opts, kill_at = json.loads(sys.argv[1]), int(sys.argv[2])
    resume = sys.argv[3:] == ["resume"]

    def on_step(step: int) -> None:
        if step == kill_at:
            raise SystemExit(f"killed at step {step}")

    train(make_config(opts), resume=resume, show_progress=False, on_step=on_step)


if __name__ == "__main__":
    main()
