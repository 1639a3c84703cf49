"""Run a plan: each step's command through an executor once the steps it reads are done, the state kept.

A step whose key and record say it is done is skipped; a failed step's dependants are ``skipped`` while the
others go on; Ctrl-C (or SIGTERM) stops the running steps (a training run keeps its last saved state), marks
them ``interrupted`` and leaves a state that the same command resumes. Every change is written to
``OUT/reproduce.json`` at once, so that ``stsbench reproduce OUT --status`` (another process) and a rerun after
``kill -9`` read where it stood.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from stsbench.errors import Interrupted, StsbenchError
from stsbench.reproduce.executors import Executor, Handle, Job, Resources
from stsbench.reproduce.plan import Plan, Step, prepare
from stsbench.reproduce.seals import seal
from stsbench.reproduce.state import initial_actions, log_path, save_state, session_record
from stsbench.results.portable import portable

POLL_SECONDS = 0.2


def first_error(log: Path, offset: int, returncode: int) -> str:
    """The one line a failed step is shown with: its ``error:`` line, the signal, or its last line.

    The whole of this session's output is read (from ``offset``): a step's log holds its progress, and under
    torchrun every rank's traceback, the first of which is the one to show.
    """
    from stsbench.train.seeds import failure_line

    try:
        with log.open("rb") as fh:
            fh.seek(offset)
            lines = fh.read().decode("utf-8", "replace").splitlines()
    except OSError:
        lines = []
    return failure_line(returncode, lines) or f"exited with status {returncode}"


def refuse_unfittable(
    plan: Plan, actions: dict[str, Any], executor: Executor, gpus: int, threads: int | None = None
) -> None:
    """One line, before anything runs, for a step the executor could never start (more GPUs than it has)."""
    for step in plan.steps:
        if actions[step.id][0] == "run":
            why = executor.never_fits(make_job(plan, step, (), gpus, threads=threads))
            if why is not None:
                raise StsbenchError(f"{step.id}: {why}")


def make_job(
    plan: Plan,
    step: Step,
    flags: tuple[str, ...],
    gpus: int,
    allow_modified: bool = False,
    threads: int | None = None,
) -> Job:
    """The executor's job of ``step``, its flags added.

    ``allow_modified``: an evaluation's and an analysis' ``--allow-modified-data`` (they mark what they score).
    ``threads``: the CPU threads the step's process gets (``reproduce --threads``, else the user's
    ``OMP_NUM_THREADS``): its ``OMP_NUM_THREADS``/``MKL_NUM_THREADS`` and the CPUs it asks for (the local executor's
    share otherwise; a Slurm job's ``cpus_per_task``); None: the executor's own. Never in the step's key or command
    line: where and how fast a step runs is no input of what it computes.
    A training step resumes when started again (preempted, requeued), or starts over when stopped before its
    first save (:meth:`Job.started_again`).
    """
    train = step.kind == "train"
    if allow_modified and step.kind in ("evaluate", "analysis"):
        flags = (*flags, "--allow-modified-data")
    env = {} if threads is None else {"OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)}
    return Job(
        id=step.id,
        args=(*step.args, *flags),
        log=log_path(plan.out, step.id),
        cwd=Path.cwd(),
        env=env,
        resources=Resources(gpus=gpus if train else min(gpus, 1), cpus=threads),
        distributed=train,
        resume_args=(*step.args, "--resume") if train else None,
        folder=step.folder if train else None,
        restart_args=step.args if train else None,
    )


class _Interrupted(Exception):
    pass


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise _Interrupted(signal.Signals(signum).name)


def run_plan(
    plan: Plan,
    state: dict[str, Any],
    executor: Executor,
    *,
    started: float,
    gpus: int = 0,
    changed: str = "rerun",
    show: Callable[[dict[str, Any]], None] = lambda state: None,
    allow_modified: bool = False,
    threads: int | None = None,
    checkout: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Run every step not done; return the state (its ``sessions`` gains this one). Raises on interruption.

    ``changed``: what to do with a step done by other code (:func:`stsbench.reproduce.state.decide`): run it
    again (``rerun``) or keep it (``keep``: its record keeps the code it ran with). ``threads``: each step's
    CPU threads (:func:`make_job`). ``checkout``: what the session's record adds about the code it runs (a dirty
    checkout's commit and the files that differ from it: :func:`stsbench.results.checkout.session_code`).
    """
    steps, records = {s.id: s for s in plan.steps}, state["steps"]
    actions = initial_actions(plan, state, changed)
    refuse_unfittable(plan, actions, executor, gpus, threads)
    for step in plan.steps:
        rec = records.setdefault(step.id, {})
        # paths relative to the reproduction's folder, which may be moved or copied
        rec.update(kind=step.kind, deps=list(step.deps), log=portable(log_path(plan.out, step.id), plan.out))
        if step.folder is not None:
            rec.update(folder=portable(step.folder, plan.out), total_steps=step.total_steps)
        if actions[step.id][0] == "skip":
            rec.update(status="done", key=step.key, parts=step.parts)
            if "files" not in rec:  # finished before its files were sealed: sealed once, as they are
                seal(rec, step, plan.out)
        else:
            rec.update(status="queued", key=step.key, parts=step.parts, error=None, progress=None)
    state["order"] = [s.id for s in plan.steps]  # --status shows the plan's order
    running: dict[str, tuple[Handle, float, int]] = {}
    intervals: list[tuple[float, float]] = []
    save_state(plan.out, state)
    show(state)
    old = {s: signal.signal(s, _raise_interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            ready = [
                steps[i]
                for i, r in records.items()
                if i in steps
                and r["status"] == "queued"
                and all(records[d]["status"] == "done" for d in steps[i].deps)
            ]
            for i, r in records.items():  # a step whose input failed cannot run
                if r["status"] == "queued" and any(
                    records[d]["status"] in ("failed", "skipped") for d in steps[i].deps
                ):
                    r.update(status="skipped", error="a step it needs failed")
            free = None if executor.slots is None else executor.slots - len(running)
            batch, idle, unfit = [], not running, []  # idle: no running job will free anything
            for step in ready:
                if free is not None and len(batch) >= free:
                    break
                job = make_job(plan, step, actions[step.id][1], gpus, allow_modified, threads)
                if not executor.fits(job):
                    unfit.append(step.id)
                    continue
                prepare(plan, step)  # a training's options file, the report's copies of the training logs
                if step.kind == "report":  # the copies the report reads, sealed in each training's record
                    for train in (s for s in plan.steps if s.folder is not None):
                        seal(records[train.id], train, plan.out, copies_only=True)
                batch.append(job)
            if batch:
                for job in batch:
                    job.log.parent.mkdir(parents=True, exist_ok=True)
                offsets = {j.id: j.log.stat().st_size if j.log.is_file() else 0 for j in batch}
                handles = executor.submit_many(batch)
                now = time.time()
                for job, handle in zip(batch, handles, strict=True):
                    running[job.id] = (handle, now, offsets[job.id])
                    records[job.id].update(
                        status="running",
                        started=now,
                        ended=None,
                        returncode=None,
                        where=handle.describe(),
                        code=steps[job.id].code,
                    )
                    records[job.id]["attempts"] = records[job.id].get("attempts", 0) + 1
                save_state(plan.out, state)
            changed = bool(batch)
            for sid, (handle, t0, offset) in list(running.items()):
                code = handle.poll()
                if code is None:
                    continue
                now = time.time()
                intervals.append((t0, now))
                del running[sid]
                rec = records[sid]
                rec.update(ended=now, returncode=code, seconds=round(now - t0, 3))
                if code == 0:
                    rec.update(status="done", error=None)
                    seal(rec, steps[sid], plan.out)  # what it wrote, sealed as it finished
                else:
                    rec.update(status="failed", error=first_error(log_path(plan.out, sid), offset, code))
                changed = True
            if changed:
                save_state(plan.out, state)
            show(state)
            if not running and not any(r["status"] == "queued" for i, r in records.items() if i in steps):
                break
            if idle and unfit and not batch:  # nothing ran, and what is ready did not fit: it never will
                for r in records.values():
                    if r.get("status") == "queued":
                        r["status"] = "not run"
                save_state(plan.out, state)
                raise StsbenchError(
                    f"{unfit[0]} cannot start: the executor cannot fit it with nothing running "
                    f"({executor.name}); ask for fewer GPUs (--gpus)"
                )
            time.sleep(POLL_SECONDS)
    except (_Interrupted, KeyboardInterrupt) as exc:
        for sid, (handle, t0, _) in running.items():
            handle.cancel()
            intervals.append((t0, time.time()))
            records[sid].update(
                status="interrupted", ended=time.time(), error=f"stopped by {exc or 'SIGINT'}"
            )
        for r in records.values():
            if r.get("status") == "queued":
                r["status"] = "not run"
        session = {**session_record(started, intervals), **(checkout or {}), "interrupted": True}
        state.setdefault("sessions", []).append(session)
        save_state(plan.out, state)
        show(state)
        raise Interrupted(
            f"interrupted ({exc or 'SIGINT'}); {len(running)} running step(s) stopped; "
            f"run the same command again to resume (stsbench reproduce {plan.out} --status shows where it stands)"
        ) from None
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        executor.close()
    state.setdefault("sessions", []).append({**session_record(started, intervals), **(checkout or {})})
    save_state(plan.out, state)
    show(state)
    return state
