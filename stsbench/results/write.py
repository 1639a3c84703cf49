"""What stsbench writes for later reading and how it names it: paths, labels, provenance, writers.

- where each file goes (:func:`result_path`, :func:`average_path`, :func:`analysis_path`, :func:`figure_path`,
  :func:`pairs_path`; the files and their keys: :mod:`stsbench.results.schema`) and the writers of task
  results, averages and per-pair sidecars;
- model names made into folder names, file names and labels, the one home of these rules: :func:`model_slug`
  (``sentence-transformers__all-MiniLM-L6-v2``; a path's last two parts, safe as a file name),
  :func:`figure_stem`; :func:`base_label`, what tables, figures and the terminal call a model (a
  hub id or name as typed, a path's last part, never read from the file system, so the same results label
  alike on any machine); :func:`labelled`, unique labels for one command's models (the pooler joins them when
  the models differ in it, :func:`unique_label`'s ``#2`` marks a repeat; the report tells its models apart by
  fingerprint in ``stsbench.reports.collect``);
- paths as the files record them, never the machine's, so results read the same wherever they are copied:
  relative to the folder the command wrote into (the ``--output`` of ``run`` and the analyses, a training
  run's own folder), with ``/`` between parts; a path in the data folder as that folder's name and the path in
  it (``data/wiki/wiki1m_head.txt``, ``data_dir: "data"``: the data themselves are identified by their
  checksums, ``provenance.data_files``). A recorded command line names its paths the same way.
  :func:`portable` makes a path so, :func:`resolve` reads it back against the folder it is relative to; files
  written before paths were recorded so hold absolute paths, which :func:`resolve` returns as they are;
- the provenance every result carries, and the stsbench checkout the running code comes from: results record
  its commit (``<sha>-dirty`` where uncommitted code made them, :func:`git_commit`), never which files
  differed; a report made by a dirty checkout names them in its Provenance section
  (:func:`stsbench.reports.provenance.code_lines`), and each session of ``stsbench reproduce`` records them in
  ``reproduce.json`` (:func:`session_code`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import platform
import re
import shlex
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path, PurePath, PurePosixPath
from typing import TYPE_CHECKING, Any, TypeVar

from stsbench import __version__
from stsbench.data.integrity import differences, relative
from stsbench.encoders.resolve import prompt_slug
from stsbench.files import atomic_write_bytes, atomic_write_json, atomic_write_npz, to_json
from stsbench.results.schema import AverageResult, JsonObject, ModelInfo, PairsEntry, Provenance, TaskResult
from stsbench.sources import sha256_files
from stsbench.tasks.base import PairScores

if TYPE_CHECKING:
    from stsbench.encoders.base import Encoder

R = TypeVar("R")
StrPath = str | os.PathLike[str]  # a path as a caller may give it
PurePathT = TypeVar("PurePathT", bound=PurePath)


def model_slug(name: str) -> str:
    """A folder name for a model: the last path parts of a path, hub ids with ``__`` for ``/``."""
    p = Path(name)
    base = "__".join(p.parts[-2:]) if p.is_absolute() or name.startswith(".") else name.replace("/", "__")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", base).strip("._") or "model"


def figure_stem(stem: str, labels: list[str]) -> str:
    """Name a figure ``<stem>__<model1>+<model2>``; a hash instead when that gets long."""
    joined = "+".join(model_slug(x) for x in labels)
    if len(joined) > 80:
        joined = f"{len(labels)}models-{hashlib.sha256(joined.encode()).hexdigest()[:10]}"
    return f"{stem}__{joined}"


def last_part(path: str) -> str:
    r"""The last part of a path or hub id, ``/`` or ``\`` separated: ``C:\runs\simcse\`` -> ``simcse``."""
    return path.replace("\\", "/").rstrip("/").split("/")[-1]


SEED_FOLDER = re.compile(r"seed-\d+")  # `stsbench train --seeds ... --output OUT` writes OUT/seed-<s>


def base_label(name: str) -> str:
    """Return a folder's last part for a path (``/tmp/runs/simcse`` -> ``simcse``); a hub id or name as is.

    A seed's checkpoint keeps its seeds' folder: ``/runs/simcse/seed-1`` -> ``simcse/seed-1`` (the seeds of
    two methods would otherwise share their labels, and their figures' file names).
    """
    n = name.replace("\\", "/").rstrip("/")
    if n.startswith(("/", ".", "~")) or n.count("/") > 1:
        last = last_part(n) or n
        parts = n.split("/")
        if SEED_FOLDER.fullmatch(last) and len(parts) > 1 and parts[-2] not in ("", ".", ".."):
            return f"{parts[-2]}/{last}"
        return last
    return n


def unique_label(label: str, taken: Mapping[str, object]) -> str:
    """Return ``label``, or ``label #2``, ``#3``... when ``taken`` already has it."""
    first, k = label, 2
    while label in taken:
        label, k = f"{first} #{k}", k + 1
    return label


def labelled(done: list[tuple[str, str, R]]) -> dict[str, R]:
    """Return ``{label: result}`` from ``(label, pooler, result)``.

    The pooler joins the label when models differ in it; ``#2`` marks repeats.
    """
    with_pooler = len({p for _, p, _ in done}) > 1
    out: dict[str, R] = {}
    for base, pooler, result in done:
        out[unique_label(f"{base} ({pooler})" if with_pooler else base, out)] = result
    return out


# a path that shares nothing but the root with the folder it would be relative to: its last two parts after it
OUTSIDE = "..."
# the options of stsbench's commands whose value is the data folder
DATA_DIR_FLAGS = ("--data-dir",)
# the path-valued keys of a training run's saved config and resolution (stsbench.json, train_log.jsonl)
TRAINING_PATH_KEYS = ("output", "model", "train_file", "file", "backbone")


def portable(path: StrPath | None, base: StrPath, data_dir: StrPath | None = None) -> Any:
    """``path`` as a file records it: relative to ``base``, or ``<data folder name>/<path in it>``.

    Only absolute paths change (a relative one, a hub id or a name is kept as given); ``None`` stays None.
    ``base`` and ``data_dir`` are made absolute against the working directory. A path that shares nothing
    but the file system's root with ``base`` is ``.../<its last two parts>`` (not resolvable: named only).
    """
    if path is None or not isinstance(path, (str, os.PathLike)) or not Path(path).is_absolute():
        return path
    p = Path(os.path.normpath(path))
    if data_dir is not None:
        data = Path(os.path.normpath(Path(data_dir).expanduser().absolute()))
        if p == data or data in p.parents:
            return PurePosixPath(data.name, *p.relative_to(data).parts).as_posix()
    base = Path(os.path.normpath(Path(base).expanduser().absolute()))
    try:
        common = Path(os.path.commonpath([p, base]))
    except ValueError:  # another drive
        common = Path(p.anchor)
    if common == Path(p.anchor):  # nothing in common but the root: a machine's path, named by its end
        return "/".join((OUTSIDE, *p.parts[-2:]))
    return PurePosixPath(*Path(os.path.relpath(p, base)).parts).as_posix()


def output_of(file: PurePathT, depth: int = 3) -> PurePathT:
    """The ``--output`` a results file was written under, by its layout; the file's own folder when less deep.

    ``depth`` 3: ``<output>/<model>/<pooler>/<mode>/<file>`` (a task result, an average, a seed aggregate);
    2: ``<output>/<model>/<pooler>/<file>`` (an analysis). What a path the file records is relative to.
    """
    return file.parents[depth] if len(file.parents) > depth else file.parent


def resolve(recorded: str | None, base: StrPath) -> str | None:
    """A recorded path read back: a relative one joined to ``base`` (normalised), an absolute one as it is."""
    if not recorded or Path(recorded).is_absolute():
        return recorded
    return os.path.normpath(Path(base) / recorded)


def shown(recorded: str | None, base: StrPath) -> str | None:
    """A recorded path as one would type it here: relative to the working folder when it names an existing path.

    A model recorded as ``../../models/tiny`` (relative to the results folder ``base``) is shown as
    ``models/tiny`` from the folder the command runs in; a hub id, a name or a path that is not here is shown as
    recorded.
    """
    if not recorded or Path(recorded).is_absolute() or recorded.startswith(OUTSIDE):
        return recorded
    found = Path(resolve(recorded, base) or recorded)
    if not (recorded.startswith("..") or "/" in recorded) or not found.exists():
        return recorded
    return Path(os.path.relpath(found)).as_posix()


def same_path(recorded: str, given: str, base: StrPath) -> bool:
    """Whether a recorded name or path is ``given``, a name or path as typed now.

    An absolute ``given`` is compared in its recorded form too, relative to ``base`` (the folder the file was
    written under): files written before record it absolute, newer ones relative.
    """
    return recorded == given or recorded == portable(given, base)


def portable_command(command: str | None, base: StrPath, data_dir: StrPath | None = None) -> str | None:
    """A command line with each absolute path in it made :func:`portable` (``--opt PATH`` and ``--opt=PATH``).

    The data folder is the command's own ``--data-dir``, else ``data_dir``; a line that does not split as a
    shell would (an unbalanced quote) is returned unchanged.
    """
    if not command:
        return command
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    for i, w in enumerate(words):
        if w in DATA_DIR_FLAGS and i + 1 < len(words):
            data_dir = words[i + 1]
        elif "=" in w and w.split("=", 1)[0] in DATA_DIR_FLAGS:
            data_dir = w.split("=", 1)[1]
    out = []
    for w in words:
        flag, eq, value = w.partition("=")
        option = eq and flag.startswith("--") and Path(value).is_absolute()
        out.append(f"{flag}={portable(value, base, data_dir)}" if option else portable(w, base, data_dir))
    return command if out == words else shlex.join(out)


def portable_result(data: Mapping[str, Any], base: StrPath, data_dir: StrPath | None = None) -> JsonObject:
    """A task result's, average's or analysis result's dict with its paths :func:`portable`.

    ``base``: the ``--output`` it is written under; the values of ``config`` and of an analysis' ``result``
    that are absolute paths are made portable too (the repetition probe's corpus, in ``data_dir``: the folder
    its ``provenance.data_files`` are relative to). In ``model``: its ``name`` (when a path) and ``path``;
    in ``provenance``: its ``command`` (``data_dir``: the data folder of a command without
    ``--data-dir``) and the keys of ``data_files`` and ``data_modified``.
    """
    out = dict(data)
    if isinstance(model := out.get("model"), Mapping):
        out["model"] = {**model, **{k: portable(model.get(k), base) for k in ("name", "path") if k in model}}
    if isinstance(prov := out.get("provenance"), Mapping):
        prov = out["provenance"] = {**prov, "command": portable_command(prov.get("command"), base, data_dir)}
        for key in ("data_files", "data_modified"):
            if isinstance(prov.get(key), dict):
                prov[key] = {portable(k, base): v for k, v in prov[key].items()}
    for key in ("config", "result"):
        if isinstance(out.get(key), Mapping):
            out[key] = {k: portable(v, base, data_dir) for k, v in out[key].items()}
    return out


def portable_training(record: Any, base: StrPath) -> Any:
    """A training run's ``stsbench.json`` or ``train_log.jsonl`` record with its paths :func:`portable`.

    ``base``: the folder the file is in. Nested objects (``training``, ``resolution``, its ``corpus``, a
    log's ``config``) are walked; the data folder is the record's ``data_dir`` (its config's).
    """
    return _walk_training(record, base, _data_dir(record))


def _data_dir(value: Any) -> str | None:
    if not isinstance(value, Mapping):
        return None
    if isinstance(value.get("data_dir"), str):
        return value["data_dir"]
    return next((d for d in map(_data_dir, value.values()) if d is not None), None)


def _walk_training(value: Any, base: StrPath, data_dir: str | None) -> Any:
    if isinstance(value, list):
        return [_walk_training(v, base, data_dir) for v in value]
    if not isinstance(value, Mapping):
        return value
    out = {}
    for k, v in value.items():
        path = isinstance(v, str) and (k == "data_dir" or k in TRAINING_PATH_KEYS)
        here = v if k == "data_dir" else data_dir  # a data folder is named by its own name
        out[k] = portable(v, base, here) if path else _walk_training(v, base, data_dir)
    return out


def copy_training_file(source: StrPath, copy: StrPath) -> Path:
    """Copy a training run's ``stsbench.json`` or ``train_log.jsonl`` with its paths relative to the copy's folder.

    What the report step of ``stsbench reproduce`` copies under ``results/train/``: the copy's ``output``
    names the run folder it came from (``../../../../runs/simcse/seed-1``), the data by the data folder's name.
    A line of the log that is not JSON is copied as it is; paths already relative are kept.
    """
    source, copy = Path(source), Path(copy)
    text = source.read_text(encoding="utf-8")
    jsonl = source.suffix == ".jsonl"
    out = []
    for part in text.splitlines(keepends=True) if jsonl else [text]:
        try:
            data = json.loads(part)
        except ValueError:
            out.append(part)
            continue
        new = portable_training(data, copy.parent)
        out.append(part if new == data else json.dumps(new, sort_keys=True) + "\n" if jsonl else to_json(new))
    return atomic_write_bytes(copy, "".join(out).encode("utf-8"))


PACKAGE = "stsbench"  # only the package's own files: docs, tests and reports change no figure
ROOT = Path(__file__).resolve().parents[2]  # the checkout holding this package, when it is one
_LIBRARIES = ["torch", "transformers", "sentence-transformers", "numpy", "scipy", "tokenizers"]


def model_info(encoder: Encoder) -> ModelInfo:
    """The results' view of an encoder."""
    i = encoder.info
    # an encoder's own info (a user's class) may have no prompt fields
    prompt = (getattr(i, "prompt", None), getattr(i, "prompt_name", None))
    return ModelInfo(i.name, i.path, i.fingerprint, i.pooler, i.max_length, i.dtype, i.kind, *prompt)


def model_folder(model: ModelInfo) -> str:
    """The results folder of a model: :func:`model_slug` of its name, ``+prompt-<hash>`` for a prompted one."""
    return model_slug(model.name) + prompt_slug(model.prompt)


def _git(root: Path, *args: str, check: bool = True) -> str:
    git = ["git", "-C", str(root), *args]  # git, with arguments of ours
    return subprocess.run(git, capture_output=True, text=True, check=check, timeout=10).stdout  # noqa: S603


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The stsbench checkout's commit (``-dirty`` when it has uncommitted changes); None outside a checkout."""
    if not (ROOT / ".git").exists():
        return None
    try:
        sha = _git(ROOT, "rev-parse", "HEAD").strip()
        dirty = _git(ROOT, "status", "--porcelain", "--untracked-files=no", check=False).strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{sha}-dirty" if dirty else sha


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """Versions of the libraries that change numbers."""
    out = {"python": platform.python_version(), "stsbench": __version__}
    for lib in _LIBRARIES:
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[lib] = metadata.version(lib)
    return out


def device_name(encoder: Encoder | None = None) -> str:
    """``cpu`` or ``cuda:0 (GPU name)``, plus the thread count on CPU; ``cpu`` alone when torch never loaded."""
    dev = getattr(getattr(encoder, "inner", encoder), "device", None)
    torch = sys.modules.get("torch")
    if torch is None:  # not imported: nothing ran on torch (every embedding came from the cache)
        return "cpu"
    if dev and str(dev).startswith("cuda") and torch.cuda.is_available():
        return f"{dev} ({torch.cuda.get_device_name(torch.device(dev))})"
    return f"cpu ({torch.get_num_threads()} threads)"


def make_provenance(
    data_dir: Path,
    files: Iterable[Path],
    timings: dict[str, float],
    command: str | None = None,
    encoder: Encoder | None = None,
) -> Provenance:
    """Provenance for a result computed now."""
    files = list(files)
    return Provenance(
        stsbench_version=__version__,
        git_commit=git_commit(),
        created_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        libraries=library_versions(),
        device=device_name(encoder),
        # sha256 of each data file (cached on disk by path, size and mtime), by its path in the data dir
        data_files={relative(Path(data_dir), f): digest for f, digest in sha256_files(files).items()},
        timings={k: round(v, 3) for k, v in timings.items()},
        command=command,
        data_modified=differences(Path(data_dir), files) or None,
    )


def _in_model_folder(output: Path, model: ModelInfo, *parts: str) -> Path:
    return Path(output, model_folder(model), model.pooler, *parts)


def result_path(output: Path, result: TaskResult) -> Path:
    """``<output>/<model_slug>/<pooler>/<mode>/<task>.json``."""
    return _in_model_folder(output, result.model, result.mode, f"{result.task}.json")


def write_result(output: Path, result: TaskResult) -> Path:
    """Write one result atomically, its paths relative to ``output`` (:mod:`stsbench.results.write`)."""
    return atomic_write_json(result_path(output, result), portable_result(result.to_dict(), output))


AVERAGE_FILE = "average_sts.json"


def average_path(output: Path, model: ModelInfo, mode: str) -> Path:
    """``<output>/<model_slug>/<pooler>/<mode>/average_sts.json``, beside the task results it averages."""
    return _in_model_folder(output, model, mode, AVERAGE_FILE)


def write_average(output: Path, average: AverageResult) -> Path:
    """Write a run's ``average_sts.json`` atomically at :func:`average_path`, its paths relative to ``output``."""
    where = average_path(output, average.model, average.mode)
    return atomic_write_json(where, portable_result(average.to_dict(), output))


def analysis_path(output: Path, model: ModelInfo, stem: str) -> Path:
    """``<output>/<model_slug>/<pooler>/<stem>.json`` (``stem``: the analysis name plus its variant)."""
    return _in_model_folder(output, model, f"{stem}.json")


def companion_path(results: Path, suffix: str) -> Path:
    """A file written beside a results file: ``<stem><suffix>`` (the probe's ``.triples.jsonl``)."""
    return Path(results).with_name(f"{Path(results).stem}{suffix}")


def figure_path(output: Path, stem: str, labels: list[str]) -> Path:
    """``<output>/figures/<stem>__<models>`` (the figure writer adds ``.png`` and ``.svg``)."""
    return Path(output) / "figures" / figure_stem(stem, labels)


def pairs_path(result_json: StrPath) -> Path:
    """``<task>.pairs.npz`` beside ``<task>.json``."""
    return companion_path(Path(result_json), ".pairs.npz")


def write_pairs(result_json: StrPath, pairs: PairScores) -> PairsEntry:
    """Write the sidecar of the results file ``result_json`` (atomically); returns the result's ``pairs`` entry."""
    import numpy as np  # not on top: `reproduce --status` reads recorded paths through this module, without numpy

    dtypes = {"cosine": np.float64, "gold": np.float64, "subset": np.int16, "subsets": str, "index": np.int32}
    arrays = {k: np.asarray(getattr(pairs, k), dtype=dtype) for k, dtype in dtypes.items()}
    path = pairs_path(result_json)
    data = atomic_write_npz(path, arrays)
    return {"file": path.name, "sha256": hashlib.sha256(data).hexdigest(), "n": len(arrays["gold"])}


@dataclass(frozen=True)
class Checkout:
    """A checkout's commit (the full sha of HEAD) and its package files that differ from it, sorted.

    ``differing``: tracked files changed since the commit (staged or not) and untracked files that git does not
    ignore, under ``stsbench/``, as paths from the checkout's root.
    """

    commit: str
    differing: tuple[str, ...] = ()

    @property
    def dirty(self) -> bool:
        """Whether some file of the package differs from the commit."""
        return bool(self.differing)


def checkout(root: Path = ROOT) -> Checkout | None:
    """The checkout at ``root`` (default: the one this package runs from); None outside a git checkout or without git."""
    if not (root / ".git").exists():
        return None

    def git(*args: str) -> list[str]:
        return [line for line in _git(root, *args).splitlines() if line.strip()]

    try:
        (sha,) = git("rev-parse", "HEAD")
        changed = git("diff", "--name-only", "HEAD", "--", PACKAGE)
        untracked = git("ls-files", "--others", "--exclude-standard", "--", PACKAGE)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return Checkout(sha, tuple(sorted({*changed, *untracked})))


def session_code(found: Checkout | None) -> dict[str, Any]:
    """What a session of ``stsbench reproduce`` records of the code it starts on: nothing when it is clean.

    On a dirty checkout, ``git_commit`` as results record it (``<sha>-dirty``) and ``differing_files``, the
    package's files that differ from that commit when the session started.
    """
    if found is None or not found.dirty:
        return {}
    return {"git_commit": f"{found.commit}-dirty", "differing_files": list(found.differing)}
