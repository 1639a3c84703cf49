"""The jobs of a reproduction as a table: live with rich on a terminal, a plain line per change off one.

A training step shows its step and ETA from its run's ``train_log.jsonl`` (the trainer's own log, the same
wherever it runs); a failed one the first line of its error. ``stsbench reproduce OUT --status`` prints the
same table once from ``OUT/reproduce.json`` (``--history``: with what the orchestration added to each session).

What ``stsbench reproduce`` shows without running anything: ``--status``, where a reproduction stands and which
done steps a rerun would run again and why, from its record (``--check``: replanned on the recipe and the data);
``--dry-run``, the plan, where each step stands and why it would run, what is missing here, the cost, the
published cells. The command passes its console (``commands/_console.table_console``).
"""

from __future__ import annotations

import copy
import json
import os
import time
from collections import Counter
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from stsbench.errors import StsbenchError
from stsbench.paths import DATA_ENV, resolve_data_dir
from stsbench.progress import duration, plural
from stsbench.reproduce.state import (
    STATE_FILE,
    UNVERIFIED,
    classify,
    load_state,
    recorded_again,
    recorded_changed,
    recorded_recipe,
    sequential_recipe,
    unverified,
    why_run,
)

ORDER = ("running", "failed", "interrupted", "queued", "not run", "skipped", "done")


def train_progress(record: dict[str, Any], out: str | Path = ".") -> str:
    """``step 120/15625, ETA 1h02m`` from the run's log (its last logged step and the time it took).

    ``out``: the reproduction's folder, which the record's ``folder`` is relative to (an older record's is
    absolute).
    """
    from stsbench.results.write import resolve

    folder, total = resolve(record.get("folder"), out), record.get("total_steps")
    if not folder:
        return ""
    last = None
    try:
        with (Path(folder) / "train_log.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                with suppress(ValueError):  # a line that is not JSON: skipped
                    rec = json.loads(line)
                    if isinstance(rec, dict) and isinstance(rec.get("step"), int) and "time" in rec:
                        last = rec
    except OSError:
        return ""
    if last is None:
        return ""
    step, seconds = last["step"], float(last["time"])
    text = f"step {step}" + (f"/{total}" if total else "")
    if total and step > 0 and step < total:
        text += f", ETA {duration((total - step) * seconds / step)}"
    return text


CODE_CHANGED = "changed code"  # shown beside a done step computed by other code than this stsbench's


AGAIN = "done, to run again"  # a done step a rerun would run again (its key changed, its output is gone)
NOTES = {  # the detail beside a done step of other code, and beside one whose files are not sealed yet
    CODE_CHANGED: "ran with other stsbench code (--carry-changed, --rerun-changed, --keep-changed)",
    UNVERIFIED: "finished before stsbench sealed its files: the next run seals them",
}


def row(
    step_id: str,
    record: dict[str, Any],
    changed: str | None = None,
    out: str | Path = ".",
    again: str | None = None,
) -> tuple[str, str, str]:
    """(step, status, detail) of one step.

    ``changed``: it was computed by other code than this stsbench's (what moved, in words; empty: not known).

    ``out``: the reproduction's folder (a training's progress is read from its run folder in it). ``again``:
    why a rerun would run this done step again.
    """
    status = record.get("status", "queued")
    if again and status == "done":
        return step_id, AGAIN, again
    if unverified(record) and changed is None:
        return step_id, f"done, {UNVERIFIED}", NOTES[UNVERIFIED]
    if changed is not None and status == "done":
        moved = f"{changed} moved; " if changed else ""
        return step_id, f"done, {CODE_CHANGED}", moved + NOTES[CODE_CHANGED]
    detail = ""
    if status == "running":
        since = duration(time.time() - float(record.get("started") or time.time()))
        progress = train_progress(record, out) if record.get("kind") == "train" else ""
        detail = ", ".join(x for x in (progress, f"{since} so far", record.get("where") or "") if x)
    elif status in ("failed", "interrupted", "skipped"):
        detail = record.get("error") or ""
    elif status == "done" and record.get("seconds") is not None:
        own = own_seconds(record, out) if record.get("kind") == "train" else None
        detail = duration(own or record["seconds"])
        if own and own > record["seconds"] + 1:  # its log's wall time holds the attempts it resumed from
            detail += f" (resumed, {record.get('attempts', 2)} attempts)"
    return step_id, status, detail


def own_seconds(record: dict[str, Any], out: str | Path) -> float | None:
    """A training's own wall time, its log's ``end`` record's (the report's), over every attempt it resumed."""
    logs = [f for f in record.get("files", {}) if f.endswith("train_log.jsonl")]
    path = Path(out) / (logs[0] if logs else f"{record.get('folder')}/train_log.jsonl")
    with suppress(OSError, ValueError, IndexError):
        return json.loads(path.read_text(encoding="utf-8").splitlines()[-1]).get("wall_seconds")
    return None


def counts(state: dict[str, Any]) -> str:
    """``3 done, 1 running, 2 queued``."""
    found = Counter(r.get("status", "queued") for r in state.get("steps", {}).values())
    return ", ".join(f"{found[s]} {s}" for s in ORDER if s in found)


def status_line(
    state: dict[str, Any],
    changed: list[str] | frozenset[str] | Mapping[str, str],
    where: str,
    again: dict[str, str] | None = None,
    check: bool = False,
) -> str:
    """``--status`` as the one line an edition's README carries: how many steps, how many current, which not.

    Steps carried over to today's code (their record's ``carried``: the script and commit that carried them,
    the code they were done by) are counted among the current ones.

    ``changed``: the done steps whose code is not this stsbench's (:func:`stsbench.reproduce.state.recorded_changed`);
    ``again``: the done steps a rerun would run again, and why; ``check``: replanned (``--status --check``).
    """
    records, changed_by = state.get("steps", {}), changed if isinstance(changed, Mapping) else {}
    again = again or {}
    done = [i for i, r in records.items() if r.get("status") == "done" and i not in again]
    current = [i for i in done if i not in changed]
    changed = [i for i in changed if i not in again]
    named = f" ({', '.join(current)})" if 0 < len(current) <= 3 else ""
    parts = [f"{len(current)} done and current{named}"]
    if carried := [records[i]["carried"] for i in current if records[i].get("carried")]:
        by = {c.get("by", "a carry-over script") for c in carried}
        parts[0] += f", {len(carried)} of them carried over" + (f" by {by.pop()}" if len(by) == 1 else "")

    if changed:
        moved = ", ".join(dict.fromkeys(w for i in changed for w in changed_by.get(i, "").split(", ") if w))
        parts.append(
            f"{len(changed)} done by other stsbench code (done, {CODE_CHANGED}"
            + (f": {moved})" if moved else ")")
        )
    if loose := [i for i in done if unverified(records[i])]:
        parts.append(f"{len(loose)} of them {UNVERIFIED} (files not sealed yet: the next run seals them)")
    if again:
        first = next(iter(again))
        parts.append(f"{len(again)} to run again ({first}: {again[first]})")
    others = Counter(r.get("status", "queued") for r in records.values() if r.get("status") != "done")
    parts += [f"{n} {s}" for s, n in others.items()]
    command = f"stsbench reproduce {where} --status" + (" --check" if check else "")
    return f"`{command}` ({len(records)} steps): {'; '.join(parts)}."


def table(
    state: dict[str, Any],
    steps: list[str] | None = None,
    changed: Mapping[str, str] | None = None,
    out: str | Path = ".",
    again: dict[str, str] | None = None,
) -> Any:
    """A rich table of every step (the plan's order when ``steps`` is given); ``changed``: steps of other code.

    ``out``: the reproduction's folder, which its records' paths are relative to.
    """
    from rich.table import Table

    records = state.get("steps", {})
    title = f"{state.get('recipe', '')}: {counts(state)}"
    shown = Table("step", "status", "detail", title=title, title_justify="left")
    style = {"done": "green", "failed": "red", "running": "cyan"}
    style |= dict.fromkeys(("interrupted", f"done, {CODE_CHANGED}", AGAIN, "done, unverified"), "yellow")
    for sid in steps or list(records):
        _, status, detail = row(sid, records[sid], (changed or {}).get(sid), out, (again or {}).get(sid))
        shown.add_row(sid, f"[{style[status]}]{status}" if status in style else status, detail)
    return shown


def session_lines(state: dict[str, Any]) -> list[str]:
    """One line per session: wall time and what the orchestration added (its share of the wall time)."""
    return [
        f"session {i}: {s['steps_run']} step(s) run in {duration(s['wall_seconds'])} wall; orchestration "
        f"(planning, bookkeeping, waiting between steps) {s['orchestration_seconds']:.1f} s"
        + ("" if (share := s.get("orchestration_share")) is None else f" = {share:.1%} of the wall time")
        + (" (interrupted)" if s.get("interrupted") else "")
        for i, s in enumerate(state.get("sessions", []), start=1)
    ]


class Display:
    """Shows the state as it changes: a live rich table on a terminal, a plain line per change off one.

    Off a terminal (piped, a log file) a running step says again how far it is every ``every`` seconds: a long
    training once printed "running" and then nothing for an hour.
    """

    def __init__(self, console: Any, steps: list[str], out: str | Path = ".", every: float = 60.0) -> None:
        self.console, self.steps, self.out, self.every = console, steps, out, every
        # seen: a step -> its status last printed; said: a running step -> when its line was last printed
        self.live, self.seen, self.said = None, {}, {}
        if console.is_terminal:
            from rich.live import Live

            self.live = Live(console=console, refresh_per_second=2, transient=False)

    def __call__(self, state: dict[str, Any]) -> None:
        if self.live is not None:
            self.live.start()  # the first call starts it; rich returns at once from later ones
            self.live.update(table(state, self.steps, out=self.out))
            return
        now = time.monotonic()
        for sid in self.steps:
            record = state["steps"][sid]
            again = record.get("status") == "running" and now - self.said.get(sid, now) >= self.every
            if self.seen.get(sid) != record.get("status") or again:
                self.seen[sid], self.said[sid] = record.get("status", ""), now
                _, status, detail = row(sid, record, out=self.out)
                self.console.print(f"{sid}: {status}" + (f" ({detail})" if detail else ""), highlight=False)

    def close(self) -> None:
        """Stop the live table (its last frame stays)."""
        if self.live is not None:
            self.live.stop()  # rich returns at once where it never started


# -- what `stsbench reproduce` shows without running anything: --status and --dry-run --------------------


def again_steps(out: Path, state: dict, data_dir) -> dict[str, str] | None:  # noqa: ANN001
    """The done steps a rerun would run again, and why (which part of its key changed, what is gone).

    Replanned from the recipe the state names (a built-in, or a file the folder's recipe name still loads) on
    the data folder found (:func:`status`); None where it cannot be replanned (a recipe file gone).
    """
    from stsbench.reproduce.plan import planned  # the recipe replanned: the plan, here alone

    if data_dir is None:
        return {}
    try:
        recipe = recorded_recipe(state)
        trial = copy.deepcopy(state)
        plan, actions = planned(recipe, out, data_dir, trial, "keep", gpus=state.get("gpus", 0))
    except (StsbenchError, KeyError, TypeError):
        return None
    # a step of changed code is shown as such: the rerun asks --rerun-changed or --keep-changed
    return {
        s.id: why_run(s, r, actions) or "a step it reads runs"
        for s in plan.steps
        if (r := trial["steps"].get(s.id)) and r.get("status") == "done" and actions[s.id][0] == "run"
        if classify(s, r) != "changed"
    }


def data_folder(out: Path, state: dict, data_dir=None) -> Path:  # noqa: ANN001
    """The data a reproduction in ``out`` is judged on.

    ``--data-dir``, else ``$STSBENCH_DATA``, else the folder its record names (relative to ``out``) where it
    holds data, else ``./data``.
    """
    given, found = data_dir is not None or os.environ.get(DATA_ENV), out / state.get("data_dir", "")
    if not given and state.get("data_dir") and (found / "downstream").is_dir():
        return found
    return resolve_data_dir(data_dir, must_exist=False)


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
    console=None,  # noqa: ANN001 - the command's rich console (commands/_console.table_console)
) -> None:
    """``--status``: where the reproduction in ``out`` stands, from its record (:func:`recorded_again`).

    ``check``: replanned on the recipe and the data (:func:`again_steps`), which names what changed there too;
    ``history``: each past session's line (:func:`session_lines`), else one line saying how to see them.
    """
    if not (out / STATE_FILE).is_file():
        found = f"holds no reproduction ({STATE_FILE})" if out.exists() else "does not exist"
        raise StsbenchError(f"{out} {found}; give the --out of stsbench reproduce")
    state = load_state(out)
    changed = recorded_changed(state)
    note, replanned = "", ""  # replanned: what --check found changed, in one line
    if not check:
        again = recorded_again(state, out, changed)
    else:
        # one without downstream/ is no data: keys not checked (never "its key changed")
        again, where = {}, data_folder(out, state, data_dir)
        data = where if (where / "downstream").is_dir() else None
        note = "" if data else f"keys not checked: no SentEval data at {where} (give --data-dir DIR)"
        found = again_steps(out, state, data)
        if found is None:
            note = "not replanned: the recipe it ran from does not load here (the steps as recorded)"
        elif data is not None:
            again, replanned = found, what_changed(found)
    if line:  # the line an edition's README carries, which tests/test_editions.py compares with this output
        text = status_line(state, changed, given, again, check)
        print(f"{text[:-1]}; {note}." if note else text)  # noqa: T201 - the command's output, for a README
        return

    say = partial(console.print, highlight=False, markup=False, soft_wrap=True)
    order = [i for i in state.get("order", []) if i in state["steps"]] or None
    console.print(table(state, order, changed, out=out, again=again))
    if history:
        for text in session_lines(state):
            say(text)
    elif sessions := state.get("sessions", []):
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


def _forecast(recipe, plan, device: str, say) -> None:  # noqa: ANN001
    """``--until-decided --dry-run``: the seeds each claim is expected to need, and the added trainings' cost."""
    from stsbench.reproduce.estimate import count, duration, price
    from stsbench.reproduce.plan import forecast, seeds_to_add

    source = plan.out / "reproduction.json"
    refine = ", --refine" if recipe.refine else ""
    say(f"sequential plan (--until-decided{refine}, at most {recipe.until} seeds a run):")
    if not source.is_file():
        say(
            f"  no forecast: {source} holds no verdicts yet (the planned seeds' report writes them; an earlier "
            "edition's folder as --out forecasts from its seeds)"
        )
        return
    verdicts = json.loads(source.read_text(encoding="utf-8"))
    if "sequential" in verdicts and not seeds_to_add(recipe, verdicts):  # this plan's own looks, all settled
        say(f"  every verdict of {source} is settled at its look: no seeds to add")
        return
    claims, per_run = forecast(recipe, verdicts)
    say(
        f"  forecast at the differences and spreads of {source} (a claim's statement or a cell by simulation):"
    )
    for label, expected in claims:
        each = ", ".join(f"{e:.1f}" for e in expected)
        what = "statements" if label.startswith("claim") else "cells"
        say(f"  {label}: about {max(expected, default=0):.1f} seeds (its {what}: {each})")
    extra = {name: n - have for name, n in per_run.items() if n > (have := len(recipe.run(name).seeds))}
    if not extra:
        say("  no seeds expected beyond the planned ones")
        return
    one = {s.id.split("/")[1]: s for s in plan.steps if s.kind == "train"}  # a training of each run, priced
    seconds = 0.0
    for name, more in extra.items():
        here = price(count(replace(plan, steps=(one[name],))), device).seconds
        seconds = seconds + more * here if here is not None and seconds is not None else None
    cost = f", about {duration(seconds)} of training one at a time" if seconds else ""
    say(f"  expected trainings added: {sum(extra.values()):.1f} over {len(extra)} run(s){cost}")


def dry_run(
    recipe,
    out,
    data_dir,
    report_to,
    *,
    changed: str,
    strict: bool,
    parallel: int,
    gpus: int,
    allow_modified: bool = False,
    threads: int | None = None,
    console=None,
) -> None:  # noqa: ANN001
    """The plan, where each step stands in ``plan.out``, what is missing here, the cost, the published cells.

    ``threads``: each step's CPU threads (``--threads``, ``OMP_NUM_THREADS``), which name the device of this run.
    """
    from stsbench.published.registry import get_entry
    from stsbench.reproduce.estimate import count, duration, estimates, this_device
    from stsbench.reproduce.plan import missing, planned

    say = partial(console.print, highlight=False, markup=False, soft_wrap=True)
    state = load_state(Path(out).expanduser())
    if recipe.until is not None:  # with the seeds the sequential plan added, as the run would plan them
        recipe = sequential_recipe(recipe, state)
    # as the run would plan it (the steps it would keep named by the report), the state read, never written
    mode = "keep" if changed == "ask" else changed
    plan, actions = planned(recipe, out, data_dir, state, mode, report_to, gpus)
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
    say("plan: " + ", ".join(f"{n} {k}" for k, n in Counter(s.kind for s in plan.steps).items()) + " step(s)")
    stands, words = {}, {"done": "done", "changed": "changed code", "resume": "to resume", "run": "to run"}
    words["blind"] = "not judged (no data)"
    # without the data no key holds: a done step is not judged
    blind = not (plan.data_dir / "downstream").is_dir()
    for s in plan.steps:  # changed code; else what this run does: resume, run (a step it reads runs), done
        found = classify(s, record := state["steps"].get(s.id))
        if blind and record and record.get("status") == "done":
            found = "blind"
        elif found != "changed":
            found = "done" if actions[s.id][0] == "skip" else "resume" if found == "resume" else "run"
        stands[s.id], after = found, f"  after {len(s.deps)}" if s.deps else ""
        why = why_run(s, record, actions) if found in ("run", "resume") else ""
        say(f"  {s.id}  [{s.key[:12]}]{after}  {words[found]}" + (f" ({why})" if why else ""))
    found = Counter(words[v] for v in stands.values())
    say("in " + str(plan.out) + ": " + ", ".join(f"{n} {w}" for w, n in found.items()))
    if found[words["blind"]]:
        say(
            f"data not found at {plan.data_dir}: {found[words['blind']]} done step(s) not judged; give --data-dir"
        )
    if found["changed code"]:
        ask = "the run stops until --carry-changed, --rerun-changed or --keep-changed says which"
        hint = {"ask": ask, "rerun": "run again", "carry": "witnessed, carried where the witness agrees"}
        say(f"  changed code: done by other stsbench code; {hint.get(changed, 'kept')} ({changed})")
    if found["changed code"] and changed == "carry":
        from stsbench.reproduce.carry import dry_run_lines

        say("witnesses (--carry-changed), each an ordinary job; a step whose witness disagrees runs again:")
        lines, seconds = dry_run_lines(plan, state, [s for s in plan.steps if stands[s.id] == "changed"])
        for line in lines:
            say(line)
        say(
            f"  in all about {duration(seconds)} by the records, one at a time (each step they carry is not run)"
        )
    if needs := missing(plan, [i for i, v in stands.items() if v != "done"], allow_modified):
        say(f"missing here ({len(needs)}):")
        for need in needs:
            say(f"  {need.line()}")
    else:
        say("missing here: nothing (data, corpora and models found)")
    # a witnessed step is counted above; the report over them is made again
    witnessed = {
        s.id for s in plan.steps if changed == "carry" and stands[s.id] == "changed" and s.kind != "report"
    }
    left = replace(
        plan,
        steps=tuple(s for s in plan.steps if stands[s.id] not in ("done", "blind") and s.id not in witnessed),
    )
    n, counts = len(left.steps), count(left)
    of = f"{n} of {len(plan.steps)} steps" if n < len(plan.steps) else "every step"
    if not left.steps:
        done = "none judged without the data" if blind else "every step done and current"
        say(f"estimated time of what is left: nothing left to run ({done})")
    else:
        say(
            f"estimated time of what is left ({of}), one step at a time (counted parts x measured unit times, a "
            f"cold embedding cache):\n  counted: {counts.line()}"
        )
    for e in estimates(plan, this_device(parallel, gpus, threads), counts) if left.steps else ():
        parts = ", ".join(f"{name} {duration(s)}" for name, s in e.parts.items())
        total = ("at least " if e.missing and e.seconds is not None else "") + duration(e.seconds)
        say(f"  {e.device}: {total}" + (f" ({parts})" if parts else ""))
        if e.missing:
            say(f"    no measured time on it for: {', '.join(e.missing)}")
        if e.sources:
            say(f"    from {'; '.join(e.sources)}")
        if parallel > 1 and e.device.endswith("(this run)") and e.seconds is not None:
            say(f"    with --parallel {parallel}: about {duration(e.seconds / parallel)} wall at best")
    if recipe.until is not None:
        _forecast(recipe, plan, this_device(parallel, gpus, threads), say)
    judged = "with a verdict" if recipe.verdict else f"no verdict: {recipe.verdict_reason}"
    say(f"published cells ({judged}):")
    for key in recipe.published:
        entry = get_entry(key)
        cells = ", ".join(f"{t} {entry.format(v)}" for t, v in entry.values.items())  # table's precision
        # soft_wrap: a citation is one line however long (a pipe's 200 columns cut it mid-reference)
        say(f"  {key}: {cells}\n    {entry.cite}")
    if strict and needs:
        raise StsbenchError(f"{len(needs)} input(s) missing here (--strict): {needs[0].line()}")
