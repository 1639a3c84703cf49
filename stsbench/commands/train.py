"""``stsbench train``: SimCSE / ESimCSE / MoCoSE training to a checkpoint that ``stsbench run`` evaluates.

Its options are generated from the training config (:data:`stsbench.train.config.OPTIONS`): one flag per
field, with the field's type, choices, help text and defaults, grouped by the methods they belong to.
Every flag defaults to None ("not given"), so the YAML file and the method's defaults decide the rest.

``--seeds 1,2,3 [--parallel N] [--per-gpu K]``: the seeds are planned, their shared options written and their
outcome recorded by :mod:`stsbench.train.seeds`; their processes start here with reproduce's
:class:`~stsbench.reproduce.executors.LocalExecutor`, the one local runner. One at a time by default;
``--parallel N`` runs N at once: on CPU each gets cores/N threads (unless ``--threads`` says otherwise), on CUDA
each takes a GPU of its own (``CUDA_VISIBLE_DEVICES``) and a seed waits while every GPU is taken, unless
``--per-gpu K`` lets K processes share one. A seed is never split over processes. This process holds ``OUT``'s
lock (:func:`stsbench.files.output_lock`) for the whole run and each seed's process that of its folder; the
seeds' processes end with this one, killed outright included (:mod:`stsbench.train.lifeline`), and are stopped
when it is interrupted (each keeps its state at its last save step).
"""

from __future__ import annotations

import inspect
import json
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from stsbench.commands import _options as shared
from stsbench.commands._options import escape, opt, parameter, print_table, table_console
from stsbench.errors import RunFailed, StsbenchError
from stsbench.files import check_writable_dir, output_lock
from stsbench.reproduce.executors import Handle, Job, LocalExecutor, Resources, check_counts, visible_gpus
from stsbench.train.config import OPTIONS, TrainConfig, help_for, load_yaml, make_config, option_fields
from stsbench.train.config.options import Option, method_labels
from stsbench.train.lifeline import follow_parent

if TYPE_CHECKING:
    from stsbench.train.seeds import Outcome, SeedJob  # torch, through train.checkpoint: only for --seeds

FIRST = ("method", "model", "train_file", "output")  # shown first in --help, before --config
REPEATABLE = ("report_to", "augment")  # given several times, or once comma-separated
POLL_SECONDS = 0.1
TAIL = 50  # the last lines of a seed's output kept to say why it failed


def _parameter(option: Option) -> inspect.Parameter:
    """One config field as a typer option, through the one generator; not given (None): YAML and defaults decide."""
    name, panel = option.name, (None if option.group == "Options" else option.group)
    given = dict(help_text=help_for(name), choices=option.choices, panel=panel, repeatable=name in REPEATABLE)
    return parameter(name, option_fields()[name], default=None, show_default=False, **given)


def _run_options(
    *,
    config: opt(
        Path | None,
        "--config",
        help="A config shipped with stsbench by name (e.g. simcse-bert-base-official; docs/training.md "
        "lists them) or a YAML file of options (keys as the flags, e.g. dup_rate: 0.32); flags given here "
        "override it.",
    ) = None,
    resume: opt(bool, "--resume", help="Continue the run saved in OUTPUT/last.") = False,
    overwrite: opt(bool, "--overwrite", help="Replace an earlier run in OUTPUT.") = False,
    quiet: shared.QuietOpt = False,
    seeds: opt(
        str | None,
        "--seeds",
        help="Train one run per seed (e.g. 1,2,3,4,5) into OUTPUT/seed-<s>/ and write OUTPUT/seeds.json; "
        "with --resume, finish the unfinished seeds.",
        rich_help_panel="Several seeds",
    ) = None,
    parallel: shared.ParallelOpt = 1,
    per_gpu: shared.PerGpuOpt = 1,
    witness_steps: opt(int | None, "--witness-steps", min=1, hidden=True) = None,  # reproduce --carry-changed
) -> None:
    """The options of the run itself (its signature's), besides the config's."""


RUN_PARAMETERS = list(inspect.signature(_run_options, eval_str=True).parameters.values())


def train_command(**options: Any) -> None:  # its help: train_command.__doc__ below, naming the methods
    follow_parent()  # a seed's process of `train --seeds` ends with it (no-op otherwise)
    run = {p.name: options.pop(p.name) for p in RUN_PARAMETERS}
    for name in REPEATABLE:  # typer gives a list; the config takes "a,b" (checked there)
        if options.get(name) is not None:
            options[name] = ",".join(options[name])
    cfg = make_config(options, run["config"])
    main_process = os.environ.get("RANK", "0") == "0"  # torchrun's rank 0, or a single process
    # Before any model or data loads, and before torch imports. Under torchrun rank 0 alone probes: another
    # rank's probe file could sit in the folder rank 0 creates and lists ("--output ... is not empty").
    if main_process:
        check_writable_dir(cfg.output, "--output")
    witness = run.pop("witness_steps")  # a carry's replay of one run (reproduce --carry-changed)
    if run["seeds"] is not None:
        if witness:
            raise StsbenchError("--witness-steps replays one run: give --seed, not --seeds")
        _train_seeds(cfg, options, **run)
        return
    if run["parallel"] != 1:
        raise StsbenchError("--parallel runs several seeds at once; give them with --seeds 1,2,3")
    if run["per_gpu"] != 1:
        raise StsbenchError(
            "--per-gpu shares a GPU among several seeds' processes; give them with --seeds 1,2,3"
        )
    from stsbench.train.loop import Witnessed, train, witness_until

    try:  # --witness-steps N: the run replayed to step N, its schedule as the whole run's (a carry's witness)
        on_step = witness_until(witness) if witness else None
        quiet = run["quiet"]
        result = train(
            cfg, resume=run["resume"], overwrite=run["overwrite"], show_progress=not quiet, on_step=on_step
        )
    except Witnessed:
        return
    if not run["quiet"] and main_process:  # under torchrun, rank 0 alone reports
        best = "none" if result.best_dev_spearman is None else f"{result.best_dev_spearman * 100:.2f}"
        at = f"at step {result.best_step} of {result.steps} ({result.wall_seconds:.0f} s)"
        where = f"checkpoint: {result.output}  (evaluate: stsbench run --model {result.output} --tasks sts)"
        typer.echo(f"best STS-B dev Spearman {best} {at}; {where}")


def _train_seeds(cfg: Any, options: dict[str, Any], config: Path | None, seeds: str, **run: Any) -> None:
    """``--seeds``: every seed's run (:func:`train_seeds`), then a table of their best dev scores."""
    from stsbench.train.seeds import parse_seeds  # torch, through train.checkpoint: only for --seeds

    numbers = parse_seeds(seeds)
    if options.get("seed") is not None:
        raise StsbenchError("--seeds and --seed: give the seeds with --seeds alone")
    given = {**(load_yaml(config) if config else {}), **{k: v for k, v in options.items() if v is not None}}

    def forward(seed: int, line: str) -> None:  # a seed's output line on stderr, marked with its seed
        if not run["quiet"]:
            typer.echo(f"seed {seed}: {line}", err=True)

    path, records = train_seeds(cfg, numbers, given, forward=forward, **run)
    rows = []
    for r in records:
        dev = r["best_dev_spearman"]
        status = r["status"] if r["error"] is None else f"{r['status']}: {escape(r['error'])}"
        best_dev = "-" if dev is None else f"{dev * 100:.2f}"
        rows.append((str(r["seed"]), status, str(r["best_step"] or "-"), best_dev))
    console = table_console()
    names = ("seed", "status", "best step", "best dev")
    print_table(console, [(col, {"justify": "left" if col == "status" else "right"}) for col in names], rows)
    best = json.loads(path.read_text(encoding="utf-8"))["best_dev_spearman"]
    if best is not None:
        spread = "" if best["std"] is None else f" ± {best['std'] * 100:.2f}"
        low, high = best["low"], best["high"]
        interval = "" if low is None else f", 95% interval [{low * 100:.2f}, {high * 100:.2f}]"
        line = f"best STS-B dev Spearman over {best['n']} finished seed(s): {best['mean'] * 100:.2f}"
        console.print(line + spread + interval, highlight=False)
    evaluate = f"(evaluate: stsbench run --model {path.parent} --tasks sts)"
    console.print(f"seeds: {path}  {evaluate}", highlight=False)
    failed = ", ".join(str(r["seed"]) for r in records if r["status"] != "finished")
    if failed:
        raise RunFailed(
            f"seed(s) {failed} failed (see above); fix the cause, then finish them with the same command and --resume"
        )


train_command.__doc__ = f"""Train {method_labels()}; keep the best STS-B dev checkpoint in OUTPUT.

    Several processes: torchrun --nproc_per_node N -m stsbench train ... (--batch-size is per process).
    """
train_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
    [_parameter(OPTIONS[n]) for n in FIRST]
    + RUN_PARAMETERS
    + [_parameter(option) for name, option in OPTIONS.items() if name not in FIRST]
)


def register(app: typer.Typer) -> None:
    """Add ``stsbench train``."""
    app.command("train", no_args_is_help=True)(train_command)


def seed_executor(cfg: TrainConfig, *, parallel: int, per_gpu: int, jobs: int) -> LocalExecutor:
    """The local executor for ``jobs`` seeds, ``parallel`` at once (never more processes than seeds).

    It deals GPUs where the training runs on CUDA (``device`` unset or ``cuda``, and CUDA available): those
    visible. On another device (``cpu``, ``cuda:N``, ``mps``) it deals none: every process trains where
    ``device`` says, on CPU with its share of the cores.
    """
    gpus: list[str] = []
    if cfg.device in (None, "cuda"):
        import torch

        if torch.cuda.is_available():
            gpus = visible_gpus()
    return LocalExecutor(parallel=max(1, min(parallel, jobs)), gpus=gpus, per_gpu=per_gpu)


def seed_threads(cfg: TrainConfig, executor: LocalExecutor) -> int | None:
    """The ``--threads`` each seed's process is given: its share of the cores where several train on CPU at once.

    None with one process at a time (torch's own default), with ``--threads`` given (the seeds' options hold
    it), or on a GPU or another device.
    """
    on_cpu = not executor.gpus and cfg.device in (None, "cpu")
    return executor.threads if on_cpu and executor.slots > 1 and cfg.threads is None else None


def run_seed_jobs(
    jobs: Sequence[SeedJob],
    config_file: Path,
    *,
    executor: LocalExecutor,
    cfg: TrainConfig,
    quiet: bool,
    forward: Callable[[int, str], None],
) -> dict[int, Outcome]:
    """Run the jobs' processes through ``executor`` in their order, as many at once as it fits.

    ``forward(seed, line)`` gets each output line as it comes. Interrupted (Ctrl-C), the running processes are
    stopped before this returns.
    """
    from stsbench.train.seeds import Outcome, failure_line, seed_args

    threads = seed_threads(cfg, executor)
    resources = Resources(cpus=cfg.threads if not executor.gpus else None)
    waiting = deque(jobs)
    running: dict[int, tuple[Handle, deque[str]]] = {}
    outcomes: dict[int, Outcome] = {}
    try:
        while waiting or running:
            while waiting and len(running) < executor.slots:
                seed_job = waiting[0]
                args = seed_args(seed_job, config_file, threads=threads, quiet=quiet)
                job = Job(f"seed-{seed_job.seed}", args, log=None, cwd=Path.cwd(), resources=resources)
                if not executor.fits(job):
                    if not running:  # cannot happen with GPUs free; a hang if it did
                        raise StsbenchError(
                            f"seed {seed_job.seed} cannot start: no GPU is free with nothing running"
                        )
                    break
                waiting.popleft()
                tail: deque[str] = deque(maxlen=TAIL)
                on_line = partial(_on_line, seed_job.seed, tail, forward)
                running[seed_job.seed] = (executor.submit(job, on_line), tail)
            for seed, (handle, last) in list(running.items()):
                if (code := handle.poll()) is not None:
                    del running[seed]
                    outcomes[seed] = Outcome(seed, code, failure_line(code, list(last)), list(last))
            if running:
                time.sleep(POLL_SECONDS)
        return {j.seed: outcomes[j.seed] for j in jobs}
    finally:  # interrupted: stop what still runs (each saved its state at its last save step)
        for handle, _ in running.values():
            handle.cancel()


def _on_line(seed: int, tail: deque[str], forward: Callable[[int, str], None], line: str) -> None:
    """Keep ``line`` in the seed's ``tail`` and hand it on."""
    tail.append(line)
    forward(seed, line)


def train_seeds(
    cfg: TrainConfig,
    seeds: Sequence[int],
    given: Mapping[str, Any],
    *,
    parallel: int = 1,
    per_gpu: int = 1,
    resume: bool = False,
    overwrite: bool = False,
    quiet: bool = False,
    forward: Callable[[int, str], None] = lambda seed, line: None,
) -> tuple[Path, list[dict[str, Any]]]:
    """Train every seed of ``seeds``, then write ``OUT/seeds.json``.

    ``given``: the options as given (the YAML file's and the flags); ``per_gpu``: the seeds' processes that
    share one GPU (ignored on CPU). Returns the path of ``seeds.json`` and the per-seed records (failed ones
    included).
    """
    from stsbench.train.seeds import plan, write_options, write_records

    check_counts(parallel, per_gpu)
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise StsbenchError(
            "--seeds under torchrun: each seed is its own run; launch one torchrun per seed "
            "(--seed s --output OUT/seed-<s>)"
        )
    out = Path(cfg.output).expanduser()
    with output_lock(out):  # the seeds' processes lock their own OUT/seed-<s>
        jobs = plan(out, seeds, cfg, resume=resume, overwrite=overwrite)
        todo = [j for j in jobs if not j.skip]
        for j in (j for j in jobs if j.skip):
            forward(j.seed, f"finished already ({j.folder}); kept")
        config_file = write_options(out, cfg, given)
        executor = seed_executor(cfg, parallel=parallel, per_gpu=per_gpu, jobs=len(todo))
        outcomes = run_seed_jobs(todo, config_file, executor=executor, cfg=cfg, quiet=quiet, forward=forward)
        return write_records(out, cfg, jobs, outcomes)
