"""Writing and reading results files: every path, the one loader, and the provenance every result carries.

The files and their keys are documented in :mod:`stsbench.results.schema`. :func:`load_result` reads a
task or analysis result strictly (a malformed file is one line naming it); a file of another kind raises
:class:`OtherKind`, so a caller can skip what it does not want.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import platform
import subprocess
import sys
import types
import typing
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from stsbench import __version__
from stsbench.data.integrity import differences, relative
from stsbench.encoders.base import Encoder
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_json
from stsbench.results.labels import figure_stem, model_slug
from stsbench.results.portable import portable_result
from stsbench.results.schema import (
    ANALYSIS_KIND,
    AVERAGE_KIND,
    SCHEMA_VERSION,
    TASK_KIND,
    AnalysisResult,
    AverageResult,
    JsonObject,
    ModelInfo,
    Provenance,
    TaskResult,
)
from stsbench.sources import sha256_files

_LIBRARIES = ["torch", "transformers", "sentence-transformers", "numpy", "scipy", "tokenizers"]


def model_info(encoder: Encoder) -> ModelInfo:
    """The results' view of an encoder."""
    i = encoder.info
    # an encoder's own info (a user's class) may have no prompt fields
    prompt = (getattr(i, "prompt", None), getattr(i, "prompt_name", None))
    return ModelInfo(i.name, i.path, i.fingerprint, i.pooler, i.max_length, i.dtype, i.kind, *prompt)


def model_folder(model: ModelInfo) -> str:
    """The results folder of a model: :func:`model_slug` of its name, ``+prompt-<hash>`` for a prompted one."""
    from stsbench.encoders.resolve import prompt_slug

    return model_slug(model.name) + prompt_slug(model.prompt)


@lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The stsbench checkout's commit (``-dirty`` when it has uncommitted changes); None outside a checkout."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            timeout=10,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{sha}-dirty" if dirty else sha


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    """Versions of the libraries that change numbers."""
    out = {"python": platform.python_version(), "stsbench": __version__}
    for lib in _LIBRARIES:
        try:
            out[lib] = metadata.version(lib)
        except metadata.PackageNotFoundError:
            pass
    return out


def device_name(encoder: Encoder | None = None) -> str:
    """``cpu`` or ``cuda:0 (GPU name)``, plus the thread count on CPU; ``cpu`` alone when torch never loaded."""
    dev = getattr(getattr(encoder, "inner", encoder), "device", None)
    torch = sys.modules.get(
        "torch"
    )  # not imported: nothing ran on torch (every embedding came from the cache)
    if torch is None:
        return "cpu"
    if dev and str(dev).startswith("cuda") and torch.cuda.is_available():
        return f"{dev} ({torch.cuda.get_device_name(torch.device(dev))})"
    return f"cpu ({torch.get_num_threads()} threads)"


def data_checksums(data_dir: Path, files: Iterable[Path]) -> dict[str, str]:
    """sha256 of each data file (cached on disk by path, size and mtime), keyed by its path relative to the data dir."""
    return {relative(data_dir, f): digest for f, digest in sha256_files(files).items()}


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
        data_files=data_checksums(Path(data_dir), files),
        timings={k: round(v, 3) for k, v in timings.items()},
        command=command,
        data_modified=differences(Path(data_dir), files) or None,
    )


def result_path(output: Path, result: TaskResult) -> Path:
    """``<output>/<model_slug>/<pooler>/<mode>/<task>.json``."""
    return (
        Path(output) / model_folder(result.model) / result.model.pooler / result.mode / f"{result.task}.json"
    )


def write_result(output: Path, result: TaskResult) -> Path:
    """Write one result atomically, its paths relative to ``output`` (:mod:`stsbench.results.portable`)."""
    return atomic_write_json(result_path(output, result), portable_result(result.to_dict(), output))


AVERAGE_FILE = "average_sts.json"


def average_path(output: Path, model: ModelInfo, mode: str) -> Path:
    """``<output>/<model_slug>/<pooler>/<mode>/average_sts.json``, beside the task results it averages."""
    return Path(output) / model_folder(model) / model.pooler / mode / AVERAGE_FILE


def write_average(output: Path, average: AverageResult) -> Path:
    """Write a run's ``average_sts.json`` atomically at :func:`average_path`, its paths relative to ``output``."""
    where = average_path(output, average.model, average.mode)
    return atomic_write_json(where, portable_result(average.to_dict(), output))


def analysis_path(output: Path, model: ModelInfo, stem: str) -> Path:
    """``<output>/<model_slug>/<pooler>/<stem>.json`` (``stem``: the analysis name plus its variant)."""
    return Path(output) / model_folder(model) / model.pooler / f"{stem}.json"


def companion_path(results: Path, suffix: str) -> Path:
    """A file written beside a results file: ``<stem><suffix>`` (the probe's ``.triples.jsonl``)."""
    return Path(results).with_name(f"{Path(results).stem}{suffix}")


def figure_path(output: Path, stem: str, labels: list[str]) -> Path:
    """``<output>/figures/<stem>__<models>`` (the figure writer adds ``.png`` and ``.svg``)."""
    return Path(output) / "figures" / figure_stem(stem, labels)


class OtherKind(StsbenchError):
    """A readable JSON file that is not the kind of result asked for; ``kind`` says what it is."""

    def __init__(self, path: Path, kind: Any, wanted: Iterable[str]) -> None:
        self.path, self.kind = Path(path), kind
        names = '"kind": ' + " or ".join(f'"{k}"' for k in wanted)
        what = "task result" if list(wanted) == [TASK_KIND] else "result"
        super().__init__(f"{path}: not an stsbench {what} (no {names})")


class Unreadable(StsbenchError):
    """A file that cannot be read or is not JSON."""


def read_json(path: Path) -> Any:
    """Parse a JSON file; an unreadable one is a one-line error naming it."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Unreadable(f"{path}: not a readable JSON file ({exc})") from None


def check_version(path: Path, data: Mapping[str, Any], what: str, default: int | None = None) -> None:
    """Raise a one-line error unless ``data`` has this stsbench's :data:`SCHEMA_VERSION`.

    ``default``: the version of a file written before the key existed.
    """
    version = data.get("schema_version", default)
    if version != SCHEMA_VERSION:
        raise StsbenchError(
            f"{path}: {what} schema version {version!r}, this stsbench reads {SCHEMA_VERSION}"
        )


def _convert(tp: Any, value: Any) -> Any:
    if value is None:
        return None
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(tp) if a is not type(None)]
        return _convert(options[0], value) if len(options) == 1 else value
    if dataclasses.is_dataclass(tp):
        return build_dataclass(tp, value)
    origin = typing.get_origin(tp)
    if origin is list:
        (arg,) = typing.get_args(tp) or (Any,)
        if not isinstance(value, list):
            raise TypeError(f"expected a list, got {type(value).__name__}")
        return [_convert(arg, v) for v in value]
    if origin is tuple:
        return tuple(value)
    return value


def build_dataclass(cls: type, data: Any) -> Any:
    """Rebuild dataclass ``cls`` (nested dataclasses and lists of them) from its ``asdict`` form.

    A missing field without a default raises ``KeyError``; keys the class does not know are ignored (so a
    newer file with extra keys still reads).
    """
    if not isinstance(data, dict):
        raise TypeError(f"expected an object for {cls.__name__}, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.name in data:
            kwargs[f.name] = _convert(hints[f.name], data[f.name])
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise KeyError(f.name)
    return cls(**kwargs)


def _task(path: Path, data: JsonObject) -> TaskResult:
    check_version(path, data, "results")
    try:
        result = TaskResult.from_dict(data)
    except (KeyError, TypeError) as exc:
        raise StsbenchError(f"{path}: malformed stsbench task result ({exc})") from None
    bad = _bad_fields(result)
    if bad:
        raise StsbenchError(
            f"{path}: {'; '.join(bad)} (malformed stsbench task result); rerun `stsbench run`"
        )
    return result


def _bad_fields(result: TaskResult) -> list[str]:
    """What readers index, group or compute on, of the wrong type: ``reported`` a number, names strings."""
    bad = []
    if isinstance(result.reported, bool) or not isinstance(result.reported, (int, float)):
        bad.append(f"'reported' is {result.reported!r}, not a number")
    for key, value in (
        ("task", result.task),
        ("task_type", result.task_type),
        ("mode", result.mode),
        ("model.name", result.model.name),
        ("model.pooler", result.model.pooler),
        ("model.fingerprint", result.model.fingerprint),
    ):
        if not isinstance(value, str):
            bad.append(f"'{key}' is {value!r}, not a string")
    return bad


def _average(path: Path, data: JsonObject) -> AverageResult:
    check_version(path, data, "STS average")
    try:
        return build_dataclass(AverageResult, data)
    except (KeyError, TypeError) as exc:
        raise StsbenchError(f"{path}: malformed stsbench STS average (missing or bad {exc})") from None


def _analysis(path: Path, data: JsonObject, result_types: Mapping[str, type]) -> AnalysisResult:
    check_version(path, data, "analysis")
    name = data.get("analysis")
    if name not in result_types:
        raise StsbenchError(f"{path}: unknown analysis {name!r}; known: {', '.join(result_types)}")
    try:
        return AnalysisResult(
            name,
            build_dataclass(result_types[name], data["result"]),
            build_dataclass(ModelInfo, data["model"]),
            dict(data["config"]),
            build_dataclass(Provenance, data["provenance"]),
        )
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise StsbenchError(f"{path}: malformed stsbench analysis result (missing or bad {exc})") from None


def load_result(
    path: Path,
    kinds: Iterable[str] = (TASK_KIND, ANALYSIS_KIND),
    result_types: Mapping[str, type] | None = None,
) -> TaskResult | AnalysisResult | AverageResult:
    """Read one results file of one of ``kinds``, validated.

    An analysis' ``result`` is rebuilt as its type in ``result_types`` (``{analysis name: result
    dataclass}``, the registry's).

    Raises :class:`OtherKind` for a readable file of another kind, ``StsbenchError`` (one line naming the
    file) for an unreadable, malformed or other-version one.
    """
    kinds = tuple(kinds)
    data = read_json(path)
    kind = data.get("kind") if isinstance(data, dict) else None
    if kind not in kinds:
        raise OtherKind(path, kind, kinds)
    return result_from_json(path, data, result_types or {})


def result_from_json(
    path: Path, data: JsonObject, result_types: Mapping[str, type]
) -> TaskResult | AnalysisResult | AverageResult:
    """The result a parsed results file of a results kind holds, validated (``path``: for the error line)."""
    kind = data.get("kind")
    if kind == TASK_KIND:
        return _task(path, data)
    if kind == AVERAGE_KIND:
        return _average(path, data)
    if kind == ANALYSIS_KIND:
        return _analysis(path, data, result_types)
    raise OtherKind(path, kind, (TASK_KIND, ANALYSIS_KIND, AVERAGE_KIND))


def read_result(path: Path) -> TaskResult:
    """Read a task results file; a malformed or foreign file raises a one-line error naming it."""
    return load_result(path, kinds=(TASK_KIND,))  # type: ignore[return-value]


def read_average(path: Path) -> AverageResult:
    """Read an ``average_sts.json``; a malformed or foreign file raises a one-line error naming it."""
    return load_result(path, kinds=(AVERAGE_KIND,))  # type: ignore[return-value]
