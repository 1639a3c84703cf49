"""``stsbench reproduce ... --carry-changed``: steps done by other code carried to today's, each on a witness.

Early cutoff, as build systems do it (Shake, Bazel's change pruning): a step whose key equals today's plan's but
whose code moved is witnessed, and where the witness agrees with its record the step is *carried* (its record now
names today's code and how it was carried); where not, it runs again with what reads it, after one line naming
the difference. The witnesses are ordinary jobs of a plan of their own (``OUT/carry/``, with its own state: an
interrupted carry resumes), run by the same executor as any step (``--parallel``, Slurm).

- a **training** is checked without a model first: every logged value of its ``train`` records other than the
  loss, its parts, ``grad_norm`` and ``time`` (the lr, the epoch, MoCoSE's EMA decay and queue fill) at every
  logged step against its method's ``schedule``; then replayed (``train --witness-steps W``) up to the first logged
  step at or after max(10, queue full, first momentum update, warm-up under way), and its logged records up to W
  (loss, parts, ``grad_norm``) and ``dev_spearman`` at step 0 and W compared: within 4 float32 ulps where the CPU
  kind equals the recorded one, within 1e-3 relative (or 4 float32 ulps of 1) otherwise ("other machine"). A
  run recorded on a GPU is carried only on a machine with one.
- an **evaluation**: every figure, interval and aggregate recomputed from its sealed per-pair files; its encoder
  witnessed by re-encoding one task with the weights where kept, else the baseline's (or the embedded model's
  canary, against the canary recorded with the step).
- an **analysis**: re-run on the weights where kept (one per analysis), else on the recipe's baseline (its own
  record) or the embedded model (a canary): compared with what that model's analysis recorded.
- the **report** is never carried: it is made again.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np

from stsbench import __version__
from stsbench.errors import StsbenchError
from stsbench.reproduce.state import (
    Plan,
    Step,
    digest,
    load_state,
    save_state,
    step_arg,
    training_copy,
    weights_here,
)
from stsbench.results.runs import TRAIN_LOG

WITNESS_DIR = "carry"  # OUT/carry: the witnesses' plan, state and outputs, removed once compared
ULPS, RELATIVE = 4, 1e-3  # the tolerance on the recorded machine's CPU kind, and on another
FIRST_STEPS = 10  # a training is replayed at least this far
# on another machine, a training's value is not resolved below 4 float32 ulps of 1: a cross-entropy is a difference
# of terms of order 1 (a loss of 1.8e-6 moved by 5.6e-9 between two CPU kinds, 0.3%: round-off, not a change)
TERMS_FLOOR = ULPS * float(np.spacing(np.float32(1.0)))
ANALYSIS_FLOOR = 1e-9  # an analysis' numbers (unit scale): a difference below it is round-off of a zero
# the STS task an encoder is witnessed on: the smallest that the step ran
TASK_ORDER = ("STS16", "STS13", "STS15", "STS12", "STS14", "STSBenchmark", "SICKRelatedness")


@dataclass
class Verdict:
    """What a step's witness found: ``difference`` (empty: it agrees), the evidence, the largest difference."""

    difference: str = ""
    evidence: str = ""
    largest: float = 0.0
    canary: str | None = None  # a canary's digest, recorded with the step


@dataclass
class Witness:
    """One witness job and the steps it speaks for; ``compare`` reads its output (its folder) into verdicts."""

    step: Step | None  # None: checked without a process (a difference found before any replay)
    carries: tuple[str, ...]
    compare: Callable[[Path | None], Verdict]
    notes: dict[str, str] = field(default_factory=dict)  # a step's own evidence, before the witness'


# -- tolerances ---------------------------------------------------------------------------------------------------


def close(new: float, old: float, same: bool, floor: float = 0.0) -> bool:
    """Whether ``new`` is ``old`` within 4 float32 ulps (``same`` CPU kind) or 1e-3 relative (another).

    ``floor``: an absolute difference below it counts as none (an analysis' numbers: a singular value of 1e-17
    is zero).
    """
    if not (math.isfinite(new) and math.isfinite(old)):
        return new == old or (math.isnan(new) and math.isnan(old))
    bound = ULPS * float(np.spacing(np.float32(abs(old)))) if same else RELATIVE * abs(old)
    return abs(new - old) <= max(bound, floor)


def compare_values(
    pairs: Iterable[tuple[str, float, float]], same: bool, floor: float = 0.0
) -> tuple[str, float]:
    """The first ``(what, new, recorded)`` out of tolerance as one clause (empty: none) and the largest difference."""
    largest, first = 0.0, ""
    for what, new, old in pairs:
        largest = max(largest, abs(new - old)) if math.isfinite(new - old) else largest
        if not first and not close(new, old, same, floor):
            first = f"{what} {new:.8g}, recorded {old:.8g}"
    return first, largest


def _numbers(tree: Any, path: str = "") -> Iterable[tuple[str, Any]]:
    """``(path, leaf)`` of a JSON tree's leaves."""
    if isinstance(tree, Mapping):
        for k in sorted(tree):
            yield from _numbers(tree[k], f"{path}.{k}" if path else str(k))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _numbers(v, f"{path}[{i}]")
    else:
        yield path, tree


def compare_trees(new: Any, old: Any, same: bool) -> tuple[str, float]:
    """Two JSON trees: every number within tolerance, every other leaf equal (first difference, largest)."""
    a, b = dict(_numbers(new)), dict(_numbers(old))
    if a.keys() != b.keys():
        return f"fields {', '.join(sorted(a.keys() ^ b.keys())[:3])} differ", 0.0
    numeric = [(k, a[k], b[k]) for k in a if _is_number(a[k]) and _is_number(b[k])]
    other = next(
        (k for k in a if not (_is_number(a[k]) and _is_number(b[k])) and not _same_leaf(a[k], b[k])), None
    )
    if other is not None:
        return f"{other} {a[other]!r}, recorded {b[other]!r}", 0.0
    return compare_values(((k, float(x), float(y)) for k, x, y in numeric), same, ANALYSIS_FLOOR)


def _same_leaf(a: Any, b: Any) -> bool:
    """Equal, or the same file named from two folders (a path says where an input was, not what it is)."""
    paths = isinstance(a, str) and isinstance(b, str) and "/" in a + b
    return a == b or (paths and Path(a).name == Path(b).name)


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def canary_digest(tree: Any) -> str:
    """A canary's digest: its numbers to 6 significant digits (another CPU's rounding does not move it)."""
    return digest([(k, float(f"{v:.6g}") if _is_number(v) else v) for k, v in _numbers(tree)])


# -- training -----------------------------------------------------------------------------------------------------


def read_log(path: Path) -> list[dict[str, Any]]:
    """A ``train_log.jsonl``'s records as written (a witness compares every key; a line not JSON is refused)."""
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        raise StsbenchError(
            f"{path}: not a readable training log ({exc}); --rerun-changed trains it again"
        ) from exc


def check_schedule(records: list[dict[str, Any]]) -> tuple[str, int, list[str]]:
    """Every logged non-loss value of the ``train`` records against the method's schedule, without a model.

    Returns the first difference (empty: none), how many records were checked and the keys compared.
    """
    from stsbench.train.methods.base import method_schedule

    start, trains = records[0], [r for r in records if r.get("event") == "train"]
    keys: dict[str, None] = {}
    for r in trains:
        want = method_schedule(r["step"], start["config"], start["train_rows"])
        keys.update(dict.fromkeys(want))
        if wrong := next((k for k, v in want.items() if r.get(k) != v), None):
            return (
                f"{wrong} at step {r['step']} {want[wrong]!r}, recorded {r.get(wrong)!r} (the schedule)",
                0,
                [],
            )
    return "", len(trains), list(keys)


def witness_step(records: list[dict[str, Any]]) -> tuple[int, str]:
    """The step a training is replayed to, and why.

    The first logged step at or after max(10, queue full, first momentum update, warm-up under way), computed
    from its config.
    """
    from stsbench.train.methods.base import method_schedule

    start = records[0]
    cfg, rows, total = start["config"], start["train_rows"], int(start["total_steps"])
    reasons = {"10": FIRST_STEPS}
    first = method_schedule(1, cfg, rows)
    if "negatives" in first:  # a queue: full once its fill stops growing
        fills = [method_schedule(s, cfg, rows)["negatives"] for s in range(1, min(total, 2000) + 1)]
        reasons["queue full"] = fills.index(max(fills)) + 1
    if "ema_decay" in first:
        reasons["first momentum update"] = 1
    if cfg.get("warmup_steps"):
        reasons["warm-up under way"] = 1
    logged = sorted(r["step"] for r in records if r.get("event") == "train")
    floor = max(reasons.values())
    at = next((s for s in logged if s >= floor), logged[-1] if logged else total)
    return at, f"max({', '.join(f'{k} at {v}' if k != '10' else k for k, v in reasons.items())})"


def compare_training(
    witness: list[dict[str, Any]], recorded: list[dict[str, Any]], at: int, schedule: Iterable[str]
) -> Verdict:
    """A replay's records up to step ``at`` against the recorded ones (:func:`close`).

    ``schedule``: the keys :func:`check_schedule` compared, not compared here.
    """
    same = recorded[0].get("cpu") is not None and recorded[0].get("cpu") == witness[0].get("cpu")
    sched = {"event", "step", "time", "loss", "grad_norm", *schedule}
    values, compared = [], 0
    for event, keys in (("train", None), ("eval", ("dev_spearman",))):
        mine = {r["step"]: r for r in witness if r.get("event") == event}
        for r in (r for r in recorded if r.get("event") == event and r["step"] <= at):
            if r["step"] not in mine:
                return Verdict(f"no {event} record at step {r['step']} in the replay")
            names = keys or ("loss", "grad_norm", *sorted(k for k in r if k not in sched))
            values += [(f"{k} at step {r['step']}", float(mine[r["step"]][k]), float(r[k])) for k in names]
            compared += event == "train"
    if compared == 0:
        return Verdict(f"no logged training step up to {at} to compare")
    first, largest = compare_values(values, same, 0.0 if same else TERMS_FLOOR)
    unknown = " (its record names no CPU kind)" if recorded[0].get("cpu") is None else ""
    where = (
        "the same CPU kind, within 4 float32 ulps"
        if same
        else f"other machine{unknown}, within 1e-3 relative or 4 float32 ulps of 1"
    )
    names = sorted({v[0].split(" at ")[0] for v in values})
    return Verdict(first, f"{', '.join(names)} up to step {at} ({where})", largest)


def gpu_here() -> str | None:
    """The kind of the first GPU here (None: none); torch is asked only where a run was recorded on a GPU."""
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def training_witness(step: Step, record: Mapping[str, Any], out: Path, home: Path) -> Witness:
    """A training's witness: its schedule checked now, then a replay to the witnessed step."""
    assert step.folder is not None
    kept = weights_here(dict(record), out) and (step.folder / TRAIN_LOG).is_file()
    recorded = read_log((step.folder if kept else training_copy(step.folder, out)) / TRAIN_LOG)
    start = recorded[0]
    if str(start.get("device", "cpu")).startswith("cuda") and (here := gpu_here()) != start.get("gpu", here):
        raise StsbenchError(
            f"{step.id}: needs a {start.get('gpu', 'CUDA')} GPU; run there, or --rerun-changed"
        )
    wrong, n, keys = check_schedule(recorded)
    if wrong:
        return Witness(None, (step.id,), lambda _: Verdict(wrong))
    at, why = witness_step(recorded)
    name = step.id.replace("/", "__")
    config = home / "configs" / f"{name}.yaml"
    args = ("train", "--config", str(config), "--seed", step_arg(step, "--seed") or "1")
    args += ("--output", str(home / name), "--witness-steps", str(at))
    key, outputs = digest({"witness": step.key, "at": at}), (f"{name}/{TRAIN_LOG}",)
    job = replace(
        step, id=f"carry/{step.id}", kind="witness", args=args, folder=None, deps=(), key=key, outputs=outputs
    )

    def compare(folder: Path | None) -> Verdict:
        assert folder is not None
        found = compare_training(read_log(folder / name / TRAIN_LOG), recorded, at, keys)
        found.evidence = (
            f"replayed to step {at}, {why}: {found.evidence}; the schedule ({', '.join(keys)}) equal at {n} logged "
            "steps"
        )
        return found

    return Witness(job, (step.id,), compare)


# -- evaluation ---------------------------------------------------------------------------------------------------


def rescore(record: Mapping[str, Any], out: Path) -> tuple[str, int]:
    """Every figure, interval and aggregate of an evaluation recomputed from its sealed files by today's code.

    Returns the first difference (empty: none) and how many were recomputed (a transfer task keeps no pairs).
    """
    from stsbench.results.read import read_average, read_result, read_sidecar, verify_average
    from stsbench.results.runs import summary_dict
    from stsbench.tasks.intervals import average_interval, sts_interval

    files = sorted(out / f for f in record.get("files", {}) if f.endswith(".json"))
    drawn: dict[Path, dict[str, Any]] = {}  # a folder's tasks -> (replicates, interval)
    done = 0

    def differs(f: Path, what: str, new: Any, old: Any) -> str:
        return f"{f.relative_to(out)}: {what} {new}, recorded {old}" if new != old else ""

    try:
        for f in (f for f in files if f.name not in ("average_sts.json", "seeds.json")):
            if read_result(f).task_type != "sts":
                continue
            result, pairs = read_sidecar(f)  # its figure from its pairs (one line where it is not)
            iv, done = result.interval or {}, done + 1
            if iv.get("B"):
                new, reps = sts_interval(result.task, pairs, iv["B"], iv["seed"], iv["level"])
                drawn.setdefault(f.parent, {})[result.task] = (reps, new)
                if wrong := differs(f, "interval", [new["low"], new["high"]], [iv["low"], iv["high"]]):
                    return wrong, done
        for f in (f for f in files if f.name == "average_sts.json"):
            avg, found, done = read_average(f), drawn.get(f.parent, {}), done + 1
            verify_average(f, avg)  # its Avg. of its tasks' figures
            if avg.interval and set(found) >= set(avg.tasks):
                new = average_interval(*zip(*(found[t] for t in avg.tasks), strict=True))
                old = [avg.interval["low"], avg.interval["high"]]
                if wrong := differs(f, "Avg. interval", [new["low"], new["high"]], old):
                    return wrong, done
        for f in (f for f in files if f.name == "seeds.json"):
            data, done = json.loads(f.read_text(encoding="utf-8")), done + 1
            for task, row in data.get("tasks", {}).items():
                mine = [g for s in data["seeds"] for g in files if g.match(f"*__seed-{s}/*/*/{task}.json")]
                figures = [read_result(g).reported for g in mine]
                fresh = summary_dict(figures if len(figures) == len(data["seeds"]) else row["values"])
                if wrong := differs(f, task, fresh, {k: row.get(k) for k in fresh}):
                    return wrong, done
    except StsbenchError as exc:
        return str(exc), done
    return "", done


def _pairs_of(files: Iterable[str], task: str, under: str = "") -> str | None:
    """The sealed per-pair file of ``task`` (under ``under``), relative to OUT."""
    return next(
        (f for f in sorted(files) if f.startswith(under) and f.endswith(f"/test/{task}.pairs.npz")), None
    )


def encoder_reference(plan: Plan, state: Mapping[str, Any], step: Step) -> tuple[str, str | None, str]:
    """(model, its recorded per-pair file or None, task) an evaluation's encoder is witnessed on.

    The weights where kept (a seed's folder and its own pairs), else the baseline evaluation's, else the embedded
    model against a canary (the file None).
    """
    from stsbench.encoders.resolve import EMBEDDED_DEFAULT

    tasks = (step_arg(step, "--tasks") or "").split(",")
    task = next((t for t in TASK_ORDER if t in tasks), tasks[0])
    files = state["steps"].get(step.id, {}).get("files", {})
    model = Path(step_arg(step, "--model") or "")
    if model.is_relative_to(plan.out / "runs") and weights_here(state["steps"][step.id], plan.out):
        for seed in sorted(model.glob("seed-*"))[:1]:
            if found := _pairs_of(files, task, f"results/{model.name}__{seed.name}/"):
                return str(seed), found, task
    if "evaluate/baseline" in state["steps"] and (
        found := _pairs_of(state["steps"]["evaluate/baseline"].get("files", {}), task)
    ):
        return step_arg(plan.step("evaluate/baseline"), "--model") or "", found, task
    return EMBEDDED_DEFAULT, None, task


# -- analysis -----------------------------------------------------------------------------------------------------


def analysis_of(step_id: str) -> str:
    """``analysis/1-length_bias`` of ``analysis/1-length_bias/simcse/seed-1``: one analysis, one witness."""
    return "/".join(step_id.split("/")[:2])


def analysis_reference(plan: Plan, state: Mapping[str, Any], step: Step) -> tuple[str, list[str]]:
    """(model, the recorded files its witness is compared with) of an analysis.

    The weights where kept, else the recipe's baseline step of that analysis, else the embedded model (its kept
    results where the reproduction holds them, else none: a canary).
    """
    from stsbench.encoders.resolve import EMBEDDED_DEFAULT
    from stsbench.results.write import model_slug

    for s in (s for s in plan.steps if analysis_of(s.id) == analysis_of(step.id)):
        record, model = state["steps"].get(s.id, {}), step_arg(s, "--model") or ""
        ours = Path(model).is_relative_to(plan.out)  # a run's weights: here only where kept
        if record.get("files") and (not ours or (weights_here(record, plan.out) and Path(model).exists())):
            return model, [f for f in record["files"] if f.endswith(".json")]
    stem = Path(step.outputs[0]).name.removesuffix(".*")
    found = (plan.out / "results" / "analyses" / model_slug(EMBEDDED_DEFAULT)).glob(f"*/{stem}.json")
    return EMBEDDED_DEFAULT, sorted(f.relative_to(plan.out).as_posix() for f in found)


def _result_of(path: Path) -> Any:
    """An analysis results file's ``result`` (what it measured; not where or when)."""
    return json.loads(path.read_text(encoding="utf-8")).get("result")


# -- the carry ----------------------------------------------------------------------------------------------------


def witnesses(plan: Plan, state: dict[str, Any], changed: list[Step]) -> list[Witness]:
    """The witnesses of the ``changed`` steps (the report is made again, never carried)."""
    out, home = plan.out, plan.out / WITNESS_DIR
    found: list[Witness] = []
    shared: dict[tuple[str, ...], Witness] = {}  # one encoder or analysis witness per reference
    for step in (s for s in changed if s.kind != "report"):
        record = state["steps"][step.id]
        if step.kind == "train":
            found.append(training_witness(step, record, out, home))
            continue
        if step.kind == "evaluate":
            wrong, n = rescore(record, out)
            if wrong:
                found.append(Witness(None, (step.id,), lambda _, w=wrong: Verdict(w)))
                continue
            model, ref, task = encoder_reference(plan, state, step)
            ident = ("evaluate", model, task)
            name = f"encode__{len(shared)}"
            args = ("run", "--model", model, "--tasks", task, "--mode", "test", "--output", str(home / name))
            args += ("--data-dir", str(plan.data_dir))
            evidence = f"{n} figures, intervals and aggregates recomputed from its per-pair files"
        else:
            model, refs = analysis_reference(plan, state, step)
            ident = ("analysis", analysis_of(step.id), model)
            name = f"analysis__{len(shared)}"
            flags = list(step.args)
            flags[flags.index("--model") + 1] = model
            flags[flags.index("--output") + 1] = str(home / name)
            args, ref, task, evidence = tuple(flags), refs, "", ""
        if ident not in shared:
            key = digest({"witness": list(ident), "code": step.code})
            job = Step(f"carry/{name}", "witness", args, key, code=step.code, outputs=(f"{name}/**/*",))
            shared[ident] = Witness(job, (), _compare_shared(step.kind, ref, task, name, model, out))
            found.append(shared[ident])
        w = shared[ident]
        w.carries += (step.id,)
        w.notes[step.id] = evidence
    return found


def _compare_shared(kind: str, ref: Any, task: str, name: str, model: str, out: Path) -> Callable:
    """The comparison of an encoder or analysis witness, the same verdict for every step it speaks for."""

    def compare(folder: Path | None) -> Verdict:
        assert folder is not None
        if kind == "evaluate":
            got = sorted((folder / name).glob(f"**/test/{task}.pairs.npz"))
            if not got:
                return Verdict(f"the witness wrote no {task} pairs")
            new = np.load(got[0])["cosine"]
            if ref is None:  # a canary: its digest recorded with the step
                return Verdict("", f"canary: {model} on {task}", 0.0, canary_digest(new.tolist()))
            old = np.load(out / ref)["cosine"]
            if new.shape != old.shape:
                return Verdict(f"{task} pairs {new.shape[0]}, recorded {old.shape[0]}")
            pairs = zip(map(f"{task} cosine of pair {{}}".format, range(len(new))), new, old, strict=True)
            first, largest = compare_values(pairs, False)
            return Verdict(
                first, f"{model} re-encoded {task}: its cosines within 1e-3 relative of {ref}", largest
            )
        got = {f.name: f for f in (folder / name).glob("**/*.json")}
        if not got:
            return Verdict("the witness wrote no results")
        if not ref:
            tree = {k: _result_of(f) for k, f in sorted(got.items())}
            return Verdict("", f"canary: {model}", 0.0, canary_digest(tree))
        for rel in ref:
            mine = got.get(Path(rel).name)
            if mine is None:
                return Verdict(f"the witness wrote no {Path(rel).name}")
            first, largest = compare_trees(_result_of(mine), _result_of(out / rel), False)
            if first:
                return Verdict(f"{Path(rel).name}: {first}")
        return Verdict(
            "", f"re-run on {model}: {', '.join(Path(r).name for r in ref)} within 1e-3 relative", largest
        )

    return compare


def carry(
    plan: Plan,
    state: dict[str, Any],
    changed: list[Step],
    run: Callable[[Plan, dict[str, Any]], dict[str, Any]],
    say: Callable[[str], None],
    checkout: Mapping[str, Any] | None = None,
) -> list[str]:
    """Witness the ``changed`` steps and carry those that agree; return those that do not.

    Carried: their records name today's code and how (``state`` saved); each that is not is named in one line
    through ``say``. ``run``: runs a plan of witnesses on the state of ``OUT/carry``
    (:func:`stsbench.reproduce.executors.run_plan` with this run's executor).
    """
    found = witnesses(plan, state, changed)
    home = plan.out / WITNESS_DIR
    jobs, failed = [w.step for w in found if w.step is not None], {}
    if jobs:
        wstate = run(Plan(plan.recipe, home, tuple(jobs), plan.data_dir), load_state(home))
        state.setdefault("sessions", []).append({**wstate["sessions"][-1], "carry": True})
        failed = {i: r.get("error") for i, r in wstate["steps"].items() if r.get("status") != "done"}
    verdicts: dict[str, Verdict] = {}
    for w in found:
        if w.step is not None and w.step.id in failed:
            verdicts.update({s: Verdict(f"its witness failed: {failed[w.step.id]}") for s in w.carries})
            continue
        got = w.compare(home)
        for s in w.carries:  # each step's own evidence first
            verdicts[s] = replace(got, evidence="; ".join(filter(None, (w.notes.get(s), got.evidence))))
    commit = (checkout or {}).get("git_commit")
    again = []
    for sid, v in verdicts.items():
        record = state["steps"][sid]
        if v.canary is not None:  # against the canary recorded with the step by the carry before
            old = record.get("canary")
            v.difference = v.difference or (
                f"canary {v.canary[:12]}, recorded {old[:12]}" if old not in (None, v.canary) else ""
            )
            v.evidence += (
                ", equal to the one recorded" if old else " (recorded: the first carry has none to compare)"
            )
        if v.difference:
            say(f"{sid}: {v.difference}")
            again.append(sid)
            continue
        by = f"stsbench reproduce --carry-changed (stsbench {__version__}" + (
            f", commit {commit})" if commit else ")"
        )
        record["carried"] = {  # type: ignore[typeddict-unknown-key]
            "from": record.get("code"),
            "to": plan.step(sid).code,
            "by": by,
            "on": date.today().isoformat(),
            "compared": v.evidence,
            "largest_difference": v.largest,
            **({"earlier": record["carried"]} if record.get("carried") else {}),
        }
        record["code"] = plan.step(sid).code
        if v.canary is not None:
            record["canary"] = v.canary  # type: ignore[typeddict-unknown-key]
    save_state(plan.out, state)
    shutil.rmtree(home, ignore_errors=True)
    reads = {
        i: d for i in again for d in plan.step(i).deps if d not in again and plan.step(d).kind == "train"
    }
    if gone := {i: d for i, d in reads.items() if not weights_here(state["steps"][d], plan.out)}:
        first, more = next(iter(gone.items())), f" ({len(gone)} steps not carried read weights not kept here)"
        raise StsbenchError(
            f"{first[0]} runs again and reads the weights of {first[1]}, not kept here{more}: --rerun-changed "
            "trains them again, --keep-changed keeps the steps as they are (the carried ones stay carried)"
        )
    return again


def dry_run_lines(plan: Plan, state: dict[str, Any], changed: list[Step]) -> tuple[list[str], float]:
    """``--dry-run --carry-changed``: each witness, the steps it speaks for and its time from the records.

    A replay's: its recorded time to the witnessed step; another witness': its first step's recorded time.
    """
    lines, total = [], 0.0
    for w in witnesses(plan, state, changed):
        if w.step is None:
            lines.append(f"  {', '.join(w.carries)}: runs again ({w.compare(None).difference})")
            continue
        first, args = plan.step(w.carries[0]), w.step.args
        if args[0] == "train":
            at, log = int(args[-1]), read_log(training_copy(first.folder, plan.out) / TRAIN_LOG)  # type: ignore[arg-type]
            seconds = max(r.get("time", 0.0) for r in log if r.get("step", 0) <= at)
        else:
            seconds = float(state["steps"].get(first.id, {}).get("seconds") or 0.0)
        n, total = len(w.carries), total + seconds
        lines.append(
            f"  {w.step.id} ({n} step{'s' * (n != 1)}): stsbench {args[0]} ..., {seconds:.0f} s by the records"
        )
    return lines, total
