"""One process of a torchrun-launched test: ``distributed_worker.py JOBS_JSON``, the jobs run one after another.

Starting torchrun and importing torch in every process costs more than a tiny run, so one launch runs several.
``JOBS_JSON`` names a file ``{"status": DIR, "jobs": [...]}``; a job is ``{"name", "cli": [ARGS]}`` (the
``stsbench`` command line, in this process) or ``{"name", "train": OPTIONS, "kill_at": N, "resume": bool}``
(:func:`stsbench.train.loop.train`; ``kill_at`` > 0 raises after that step in every process: a crash after the
step, before the next save). The jobs share one process group. Each process writes ``DIR/NAME.RANK.json`` (``ok``, ``message``) after each job.
A job that fails otherwise than by its ``kill_at`` ends the process, so that torchrun ends the launch rather
than leave the other processes waiting in a collective; the jobs after it have no status file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from stsbench.train import distributed
from stsbench.train.config import make_config
from stsbench.train.loop import train


class Killed(BaseException):
    """The simulated crash: a BaseException, as SystemExit, so nothing on the way catches it."""


def run_cli(args: list[str]) -> None:
    from stsbench.cli import main

    sys.argv = ["stsbench", *args]
    try:
        main()
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise


def run_job(job: dict) -> str:
    """Run one job; its status message (empty, or how the planned crash stopped it)."""
    if "cli" in job:
        run_cli(job["cli"])
        return ""

    def on_step(step: int) -> None:
        if step == job.get("kill_at", 0):
            raise Killed(f"killed at step {step}")

    try:
        train(
            make_config(job["train"]), resume=job.get("resume", False), show_progress=False, on_step=on_step
        )
    except Killed as exc:
        return str(exc)
    return ""


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    status, rank = Path(spec["status"]), os.environ["RANK"]
    # One process group for all the jobs: a group made again after destroy_process_group would read the
    # first one's rendezvous keys, still in torchrun's store, and wait forever. Each run joins the group
    # (distributed.setup keeps one that exists); it is left once, after the last job.
    leave, distributed.cleanup = distributed.cleanup, lambda: None
    # A real launch joins its group once per run: init_process_group (gloo) waits for every process, so no
    # process passes it (and rank 0 locks and lists --output) before the others have checked --output. A group
    # kept from the job before waits for nobody: each later job meets at a barrier instead, or rank 0 could list
    # the output folder while a process still behind probes it (its `.stsbench-write-check.*` file: "not empty").
    join = distributed.setup

    def setup_and_meet(device):
        kept = distributed.active()
        ctx = join(device)
        if kept:
            distributed.barrier()
        return ctx

    distributed.setup = setup_and_meet
    try:
        for job in spec["jobs"]:
            try:
                message = run_job(job)
            except BaseException as exc:
                message = f"{type(exc).__name__}: {exc}"
                (status / f"{job['name']}.{rank}.json").write_text(
                    json.dumps({"ok": False, "message": message})
                )
                raise
            outcome = {"ok": not message, "message": message}
            (status / f"{job['name']}.{rank}.json").write_text(json.dumps(outcome))
    finally:
        leave()


if __name__ == "__main__":
    main()
