"""What ``stsbench reproduce`` shows without running anything: ``--status`` and ``--dry-run``.

``--status``: where a reproduction stands, and which done steps a rerun would run again and why, from its record
(``--check``: replanned on the recipe and the data). ``--dry-run``: the plan, where each step stands and why it
would run, what is missing here, the cost, the published cells.
"""

from __future__ import annotations

from pathlib import Path

from stsbench.commands._console import table_console
from stsbench.errors import StsbenchError
from stsbench.progress import plural
from stsbench.reproduce.state import (
    STATE_FILE,
    classify,
    load_state,
    planned,
    recorded_again,
    recorded_changed,
    recorded_recipe,
    why_run,
)
from stsbench.reproduce.view import session_lines, status_line, table


def status_data(out: Path, state: dict, data_dir) -> tuple[Path | None, str]:  # noqa: ANN001
    """The data folder ``--status --check`` replans on, and the note it prints where there is none.

    ``--data-dir``, else ``$STSBENCH_DATA``, else the one the reproduction recorded (relative to its folder), else
    ``./data``. A folder without ``downstream/`` is no data: the keys are not checked (never "its key changed"),
    and the note says which flag gives it.
    """
    import os

    from stsbench.paths import DATA_ENV

    recorded = state.get("data_dir")
    if data_dir is not None or os.environ.get(DATA_ENV) or not recorded:
        from stsbench.paths import resolve_data_dir

        where = resolve_data_dir(data_dir, must_exist=False)
    else:
        where = out / recorded
    if (where / "downstream").is_dir():
        return where, ""
    return None, f"keys not checked: no SentEval data at {where} (give --data-dir DIR)"


def again_steps(out: Path, state: dict, data_dir) -> dict[str, str] | None:  # noqa: ANN001
    """The done steps a rerun would run again, and why (which part of its key changed, what is gone).

    Replanned from the recipe the state names (a built-in, or a file the folder's recipe name still loads) on
    the data folder found (:func:`status_data`); None where it cannot be replanned (a recipe file gone).
    """
    import copy

    if data_dir is None:
        return {}
    try:
        recipe = recorded_recipe(state)
        trial = copy.deepcopy(state)
        plan, actions = planned(recipe, out, data_dir, trial, "keep", gpus=state.get("gpus", 0))
    except (StsbenchError, KeyError, TypeError):
        return None
    found = {}
    for step in plan.steps:
        record = trial["steps"].get(step.id)
        if record and classify(step, record) == "changed":
            continue  # shown as changed code: the rerun asks --rerun-changed or --keep-changed
        if record and record.get("status") == "done" and actions[step.id][0] == "run":
            found[step.id] = why_run(step, record, actions) or "a step it reads runs"
    return found


# what the default --status says it read (the line format leaves it out: an edition's README carries that line)
RECORD_NOTE = (
    "judged from the record (each step's code, sealed files); --status --check replans on the recipe and the data "
    "and says what changed"
)


def status(
    out: Path,
    given: str,
    line: bool = False,
    data_dir=None,  # noqa: ANN001
    check: bool = False,
    history: bool = False,
) -> None:
    """``--status``: where the reproduction in ``out`` stands, from its record (:func:`recorded_again`).

    ``check``: replanned on the recipe and the data (:func:`again_steps`), which names what changed there too;
    ``history``: each past session's line (:func:`session_lines`), else one line saying how to see them.
    """
    if not (out / STATE_FILE).is_file():
        raise StsbenchError(
            f"{out} holds no reproduction ({STATE_FILE}); give the --out of stsbench reproduce"
        )
    state = load_state(out)
    changed = recorded_changed(state, out)
    note, replanned = "", ""  # replanned: what --check found changed, in one line
    if not check:
        again = recorded_again(state, out, changed)
    else:
        again = {}
        data, note = status_data(out, state, data_dir)
        found = again_steps(out, state, data)
        if found is None:
            note = "not replanned: the recipe it ran from does not load here (the steps as recorded)"
        elif data is not None:
            again, replanned = found, what_changed(found)
    if line:  # the line an edition's README carries, which tests/test_editions.py compares with this output
        text = status_line(state, changed, given, again, check)
        print(f"{text[:-1]}; {note}." if note else text)  # noqa: T201 - the command's output, for a README
        return
    console = table_console()

    def say(text: str) -> None:
        console.print(text, highlight=False, markup=False, soft_wrap=True)

    order = [i for i in state.get("order", []) if i in state["steps"]] or None
    console.print(table(state, order, frozenset(changed), out=out, again=again))
    sessions = state.get("sessions", [])
    if history:
        for text in session_lines(state):
            say(text)
    elif sessions:
        say(f"{plural(len(sessions), 'session')} recorded (--history lists them)")
    if changed:  # reported, not refused: the folder is read as it stands
        say(
            f"{len(changed)} done step(s) ran with other stsbench code (or libraries) than this one; "
            "a rerun asks --rerun-changed or --keep-changed"
        )
    if again:
        say(f"{len(again)} done step(s) would run again (the detail says why)")
    if replanned:
        say(replanned)
    if note or not check:
        say(note or RECORD_NOTE)


def what_changed(again: dict[str, str]) -> str:
    """``--status --check``'s answer: what the replan found changed (each cause once, with its first step)."""
    if not again:
        return "replanned on the recipe and the data: nothing there changed since each step ran"
    causes: dict[str, str] = {}  # a cause -> its first step; a step that runs for what it reads is no cause
    for sid, why in again.items():
        if not why.startswith(("it reads ", "a step it reads")):
            causes.setdefault(why, sid)
    named = "; ".join(f"{sid}: {why}" for why, sid in list(causes.items())[:3]) or "a step they read runs"
    more = f"; and {len(causes) - 3} more" if len(causes) > 3 else ""
    return f"replanned on the recipe and the data, what changed: {named}{more}"


def dry_run(
    recipe,
    out,
    data_dir,
    report_to,
    changed: str,
    strict: bool,
    parallel: int,
    gpus: int,
    allow_modified: bool = False,
    threads: int | None = None,
) -> None:  # noqa: ANN001
    """The plan, where each step stands in ``plan.out``, what is missing here, the cost, the published cells.

    ``threads``: each step's CPU threads (``--threads``, ``OMP_NUM_THREADS``), which name the device of this run.
    """
    from collections import Counter

    from stsbench.published.registry import get_entry
    from stsbench.reproduce.estimate import count, duration, estimates, this_device
    from stsbench.reproduce.plan import missing

    console = table_console()

    def say(text: str) -> None:
        console.print(text, highlight=False, markup=False, soft_wrap=True)

    where = Path(out).expanduser()
    state = load_state(where) if (where / STATE_FILE).is_file() else {"steps": {}}
    # as the run would plan it (the steps it would keep named by the report), the state read, never written
    plan, actions = planned(
        recipe, out, data_dir, state, "keep" if changed == "ask" else changed, report_to, gpus
    )
    trains = [s for s in plan.steps if s.kind == "train"]
    say(f"{recipe.name}: {recipe.title}")
    say(f"into {plan.out} (data: {plan.data_dir})")
    say(f"runs ({len(trains)} trainings):")
    for run in recipe.runs:
        steps = sorted({s.total_steps for s in trains if s.id.startswith(f"train/{run.name}/")}, key=str)
        against = f", held against {run.published}" if run.published else ""
        say(
            f"  {run.name}: {run.method}, config {run.config}, seeds {','.join(map(str, run.seeds))}, "
            f"{'/'.join('unknown' if s is None else f'{s:,}' for s in steps)} steps each{against}"
        )
    for line in recipe.omitted:  # --runs/--seeds
        say(f"  left out: {line}")
    kinds = Counter(s.kind for s in plan.steps)
    say("plan: " + ", ".join(f"{n} {k}" for k, n in kinds.items()) + " step(s)")
    stands = {}
    for s in plan.steps:  # changed code; else what this run does: resume, run (a step it reads runs), done
        found = classify(s, state["steps"].get(s.id))
        if found != "changed":
            found = "done" if actions[s.id][0] == "skip" else "resume" if found == "resume" else "run"
        stands[s.id] = found
    words = {"done": "done", "changed": "changed code", "resume": "to resume", "run": "to run"}
    for s in plan.steps:
        after = f"  after {len(s.deps)}" if s.deps else ""
        why = why_run(s, state["steps"].get(s.id), actions) if stands[s.id] in ("run", "resume") else ""
        say(f"  {s.id}  [{s.key[:12]}]{after}  {words[stands[s.id]]}" + (f" ({why})" if why else ""))
    found = Counter(words[v] for v in stands.values())
    say("in " + str(plan.out) + ": " + ", ".join(f"{n} {w}" for w, n in found.items()))
    if found["changed code"]:
        hint = {
            "ask": "the run stops until --rerun-changed or --keep-changed says which",
            "rerun": "run again",
        }
        say(f"  changed code: done by other stsbench code; {hint.get(changed, 'kept')} ({changed})")
    needs = missing(plan, [i for i, v in stands.items() if v != "done"], allow_modified)
    if needs:
        say(f"missing here ({len(needs)}):")
        for need in needs:
            say(f"  {need.line()}")
    else:
        say("missing here: nothing (data, corpora and models found)")
    from dataclasses import replace

    left = replace(plan, steps=tuple(s for s in plan.steps if stands[s.id] != "done"))
    counts = count(left)
    of = (
        f"{len(left.steps)} of {len(plan.steps)} steps" if len(left.steps) < len(plan.steps) else "every step"
    )
    if not left.steps:
        say("estimated time of what is left: nothing left to run (every step done and current)")
    else:
        say(
            f"estimated time of what is left ({of}), one step at a time (counted parts x measured unit times, a "
            "cold embedding cache):"
        )
        say(f"  counted: {counts.line()}")
    for e in estimates(plan, this_device(parallel, gpus, threads), counts) if left.steps else ():
        parts = ", ".join(f"{name} {duration(s)}" for name, s in e.parts.items())
        total = duration(e.seconds)
        if e.missing and e.seconds is not None:
            total = f"at least {total}"
        say(f"  {e.device}: {total}" + (f" ({parts})" if parts else ""))
        if e.missing:
            say(f"    no measured time on it for: {', '.join(e.missing)}")
        if e.sources:
            say(f"    from {'; '.join(e.sources)}")
        if parallel > 1 and e.device.endswith("(this run)") and e.seconds is not None:
            say(f"    with --parallel {parallel}: about {duration(e.seconds / parallel)} wall at best")
    judged = "with a verdict" if recipe.verdict else f"no verdict: {recipe.verdict_reason}"
    say(f"published cells ({judged}):")
    for key in recipe.published:
        entry = get_entry(key)
        cells = ", ".join(f"{t} {entry.format(v)}" for t, v in entry.values.items())  # table's precision
        # soft_wrap: a citation is one line however long (a pipe's 200 columns cut it mid-reference)
        say(f"  {key}: {cells}")
        say(f"    {entry.cite}")
    if strict and needs:
        raise StsbenchError(f"{len(needs)} input(s) missing here (--strict): {needs[0].line()}")
