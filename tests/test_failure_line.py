"""The one line a failed step or seed is shown with is its worker's first real error, not torchrun's banner.

``fixtures/torchrun/*.log`` are real outputs (stdout and stderr together, as a step's log holds them) of
``python -m stsbench.train.lifeline torch.distributed.run --standalone --nproc_per_node=2 ...`` under torch
2.13 on CPU (gloo): ``worker-raises`` (each rank raises ``RuntimeError(f"boom in rank {RANK}")`` after
``init_process_group``, so torch prefixes its traceback ``[rankN]:``), ``worker-raises-before-init`` (the same
before it: no prefix), ``worker-killed`` (rank 1 killed by SIGKILL, as the OOM killer does; torchrun then
stops rank 0 with SIGTERM) and ``worker-error-line`` (``stsbench train`` at a huge --lr: each rank's
``error:`` line, exit status 3).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from stsbench.train.seeds import failure_line

LOGS = Path(__file__).resolve().parent / "fixtures" / "torchrun"


def log(name: str) -> list[str]:
    return (LOGS / f"{name}.log").read_text().splitlines()


@pytest.mark.parametrize(
    ("name", "line"),
    [
        ("worker-raises", "exited with status 1 (rank 0: RuntimeError: boom in rank 0)"),
        ("worker-raises-before-init", "exited with status 1 (RuntimeError: boom in rank 1)"),
        ("worker-killed", "exited with status 1 (rank 1 killed by SIGKILL)"),
        ("worker-error-line", "the loss is nan at step 2 (epoch 1); stopped, no checkpoint yet kept: lower --lr or "
         "check the train file"),
    ],
)
def test_a_torchrun_failure_is_shown_by_its_workers_first_error(name, line):
    shown = failure_line(1, log(name))
    assert shown == line
    assert "=====" not in shown and "ChildFailedError" not in shown


def test_one_process_failures_read_as_before():
    assert failure_line(0, ["error: no"]) is None
    assert failure_line(2, ["step 3", "error: the loss is nan at step 3"]) == "the loss is nan at step 3"
    assert failure_line(-signal.SIGKILL, ["step 3"]) == "killed by SIGKILL"
    assert failure_line(1, ["Traceback (most recent call last):", '  File "x.py", line 1, in <module>',
                            "RuntimeError: boom"]) == "exited with status 1 (RuntimeError: boom)"
    assert failure_line(1, ["", "last words "]) == "exited with status 1 (last words)"
    # a chained exception: the first one raised is the cause
    chained = ["Traceback (most recent call last):", "  File 'a.py'", "KeyError: 'x'", "",
               "During handling of the above exception, another exception occurred:", "",
               "Traceback (most recent call last):", "  File 'a.py'", "ValueError: no x"]
    assert failure_line(1, chained) == "exited with status 1 (KeyError: 'x')"


# a worker that raises once its process group is up (torch then prefixes its stderr lines [rankN]:)
WORKER = """
import os
import torch.distributed as dist
dist.init_process_group("gloo")
if os.environ["RANK"] == "1":
    raise ValueError("rank 1 has no data")
dist.barrier()
"""


@pytest.mark.slow  # torchrun and two processes importing torch
def test_a_live_torchrun_failure_started_as_the_executor_starts_it(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    launch = [sys.executable, "-m", "stsbench.train.lifeline", "torch.distributed.run", "--standalone"]
    done = subprocess.run(
        [*launch, "--nproc_per_node=2", str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode != 0 and "ChildFailedError" in done.stdout, done.stdout
    assert failure_line(done.returncode, done.stdout.splitlines()) == (
        f"exited with status {done.returncode} (rank 1: ValueError: rank 1 has no data)"
    )


def test_a_steps_line_reads_its_whole_log_not_its_last_lines(tmp_path):
    """Eight ranks' tracebacks run past 200 lines: the step's line still names rank 0's, the first.

    The step's log holds its progress first (steps run without --quiet), then each rank's traceback; the scheduler
    passed only the last 200 lines, which lost the first rank's.
    """
    from stsbench.reproduce.executors import first_error

    lines = log("worker-raises")
    rank1 = [ln for ln in lines if ln.startswith("[rank1]:")]
    others = [ln.replace("[rank1]:", f"[rank{k}]:").replace("rank 1", f"rank {k}") for k in range(2, 8) for ln in rank1]
    path = tmp_path / "train__simcse__seed-1.log"
    earlier = "an earlier session's output\n"
    progress = [f"step {i}/400, loss 0.5" for i in range(300)]
    # rank 0's traceback, then rank 1's, then ranks 2-7's, many times over as a real 8-process log interleaves them
    body = [*progress, *lines[: lines.index(rank1[-1]) + 1], *others * 5, *lines[lines.index(rank1[-1]) + 1 :]]
    path.write_text(earlier + "\n".join(body) + "\n", encoding="utf-8")
    assert len(body) - body.index(lines[0]) > 200
    shown = first_error(path, len(earlier.encode()), 1)
    assert shown == "exited with status 1 (rank 0: RuntimeError: boom in rank 0)"
