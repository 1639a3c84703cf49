"""Paths as the files record them: never the machine's, so results read the same wherever they are copied.

A file stsbench writes for later reading records a path relative to the folder its command wrote into (the
``--output`` of ``run`` and the analyses, a training run's own folder), with ``/`` between parts; a path in the
data folder as that folder's name and the path in it (``data/wiki/wiki1m_head.txt``, ``data_dir: "data"``: the
data themselves are identified by their checksums, ``provenance.data_files``). A recorded command line names its
paths the same way. :func:`portable` makes a path so, :func:`resolve` reads it back against the folder it is
relative to; files written before paths were recorded so hold absolute paths, which :func:`resolve` returns as
they are.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from pathlib import Path, PurePath, PurePosixPath
from typing import Any, TypeVar

from stsbench.results.schema import JsonObject

PurePathT = TypeVar("PurePathT", bound=PurePath)

# a path that shares nothing but the root with the folder it would be relative to: its last two parts after it
OUTSIDE = "..."
# the options of stsbench's commands whose value is the data folder
DATA_DIR_FLAGS = ("--data-dir",)
# the path-valued keys of a training run's saved config and resolution (stsbench.json, train_log.jsonl)
TRAINING_PATH_KEYS = ("output", "model", "train_file", "file", "backbone")


def _absolute(path: str | os.PathLike[str]) -> bool:
    return Path(path).is_absolute()


def _under(path: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` (posix) when it lies inside it, else None."""
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return None


def portable(
    path: str | os.PathLike[str] | None,
    base: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
) -> Any:
    """``path`` as a file records it: relative to ``base``, or ``<data folder name>/<path in it>``.

    Only absolute paths change (a relative one, a hub id or a name is kept as given); ``None`` stays None.
    ``base`` and ``data_dir`` are made absolute against the working directory. A path that shares nothing
    but the file system's root with ``base`` is ``.../<its last two parts>`` (not resolvable: named only).
    """
    if path is None or not isinstance(path, (str, os.PathLike)) or not _absolute(path):
        return path
    p = Path(os.path.normpath(path))
    if data_dir is not None:
        data = Path(os.path.normpath(Path(data_dir).expanduser().absolute()))
        if p == data:
            return data.name
        inside = _under(p, data)
        if inside is not None:
            return f"{data.name}/{inside}"
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


def resolve(recorded: str | None, base: str | os.PathLike[str]) -> str | None:
    """A recorded path read back: a relative one joined to ``base`` (normalised), an absolute one as it is."""
    if not recorded or _absolute(recorded):
        return recorded
    return os.path.normpath(Path(base) / recorded)


def shown(recorded: str | None, base: str | os.PathLike[str]) -> str | None:
    """A recorded path as one would type it here: relative to the working folder when it names an existing path.

    A model recorded as ``../../models/tiny`` (relative to the results folder ``base``) is shown as
    ``models/tiny`` from the folder the command runs in; a hub id, a name or a path that is not here is shown as
    recorded.
    """
    if not recorded or _absolute(recorded) or recorded.startswith(OUTSIDE):
        return recorded
    found = Path(resolve(recorded, base) or recorded)
    if not (recorded.startswith("..") or "/" in recorded) or not found.exists():
        return recorded
    return Path(os.path.relpath(found)).as_posix()


def same_path(recorded: str, given: str, base: str | os.PathLike[str]) -> bool:
    """Whether a recorded name or path is ``given``, a name or path as typed now.

    An absolute ``given`` is compared in its recorded form too, relative to ``base`` (the folder the file was
    written under): files written before record it absolute, newer ones relative.
    """
    return recorded == given or recorded == portable(given, base)


def portable_command(
    command: str | None, base: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None
) -> str | None:
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
        if eq and flag.startswith("--") and _absolute(value):
            out.append(f"{flag}={portable(value, base, data_dir)}")
        else:
            out.append(portable(w, base, data_dir))
    if out == words:
        return command
    return shlex.join(out)


def portable_model(model: Mapping[str, Any], base: str | os.PathLike[str]) -> JsonObject:
    """A results file's ``model`` block with its ``name`` (when a path) and ``path`` :func:`portable`."""
    return {**model, **{k: portable(model.get(k), base) for k in ("name", "path") if k in model}}


def portable_provenance(
    provenance: Mapping[str, Any],
    base: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
) -> JsonObject:
    """A ``provenance`` block with its ``command`` and any absolute ``data_files`` key :func:`portable`.

    ``data_dir``: the data folder of a command without ``--data-dir`` (the probe's corpus folder).
    """
    out = dict(provenance)
    out["command"] = portable_command(out.get("command"), base, data_dir)
    files = out.get("data_files")
    if isinstance(files, dict):
        out["data_files"] = {portable(k, base): v for k, v in files.items()}
    modified = out.get("data_modified")
    if isinstance(modified, dict):
        out["data_modified"] = {portable(k, base): v for k, v in modified.items()}
    return out


def portable_result(
    data: Mapping[str, Any], base: str | os.PathLike[str], data_dir: str | os.PathLike[str] | None = None
) -> JsonObject:
    """A task result's, average's or analysis result's dict with its paths :func:`portable`.

    ``base``: the ``--output`` it is written under; the values of ``config`` and of an analysis' ``result``
    that are absolute paths are made portable too (the repetition probe's corpus, in ``data_dir``: the folder
    its ``provenance.data_files`` are relative to).
    """
    out = dict(data)
    if isinstance(out.get("model"), Mapping):
        out["model"] = portable_model(out["model"], base)
    if isinstance(out.get("provenance"), Mapping):
        out["provenance"] = portable_provenance(out["provenance"], base, data_dir)
    for key in ("config", "result"):
        if isinstance(out.get(key), Mapping):
            out[key] = {k: portable(v, base, data_dir) for k, v in out[key].items()}
    return out


def portable_training(record: Any, base: str | os.PathLike[str]) -> Any:
    """A training run's ``stsbench.json`` or ``train_log.jsonl`` record with its paths :func:`portable`.

    ``base``: the folder the file is in. Nested objects (``training``, ``resolution``, its ``corpus``, a
    log's ``config``) are walked; the data folder is the record's ``data_dir`` (its config's).
    """
    return _walk_training(record, base, _data_dir(record))


def _data_dir(value: Any) -> str | None:
    if isinstance(value, Mapping):
        if isinstance(value.get("data_dir"), str):
            return value["data_dir"]
        for v in value.values():
            found = _data_dir(v)
            if found is not None:
                return found
    return None


def _walk_training(value: Any, base: str | os.PathLike[str], data_dir: str | None) -> Any:
    if isinstance(value, list):
        return [_walk_training(v, base, data_dir) for v in value]
    if not isinstance(value, Mapping):
        return value
    out = {}
    for k, v in value.items():
        if k == "data_dir" and isinstance(v, str):
            out[k] = portable(v, base, v)
        elif k in TRAINING_PATH_KEYS and isinstance(v, str):
            out[k] = portable(v, base, data_dir)
        else:
            out[k] = _walk_training(v, base, data_dir)
    return out


def copy_training_file(source: str | os.PathLike[str], copy: str | os.PathLike[str]) -> Path:
    """Copy a training run's ``stsbench.json`` or ``train_log.jsonl`` with its paths relative to the copy's folder.

    What the report step of ``stsbench reproduce`` copies under ``results/train/``: the copy's ``output``
    names the run folder it came from (``../../../../runs/simcse/seed-1``), the data by the data folder's name.
    A line of the log that is not JSON is copied as it is; paths already relative are kept.
    """
    import json

    from stsbench.files import atomic_write_bytes, to_json

    source, copy = Path(source), Path(copy)
    base = copy.parent
    text = source.read_text(encoding="utf-8")
    if source.suffix == ".jsonl":
        lines = []
        for line in text.splitlines(keepends=True):
            try:
                rec = json.loads(line)
            except ValueError:
                lines.append(line)
                continue
            new = portable_training(rec, base)
            lines.append(line if new == rec else json.dumps(new, sort_keys=True) + "\n")
        out = "".join(lines)
    else:
        try:
            data = json.loads(text)
        except ValueError:
            out = text
        else:
            new = portable_training(data, base)
            out = text if new == data else to_json(new)
    return atomic_write_bytes(copy, out.encode("utf-8"))
