"""Writing and reading results files, and the provenance every result carries."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import platform
import re
import subprocess
from collections.abc import Iterable
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from stsbench import __version__
from stsbench.encoders.base import Encoder
from stsbench.errors import StsbenchError
from stsbench.io import atomic_write_json
from stsbench.results.schema import ModelInfo, Provenance, TaskResult

_LIBRARIES = ["torch", "transformers", "sentence-transformers", "numpy", "scipy", "tokenizers"]


def model_info(encoder: Encoder) -> ModelInfo:
    """The results' view of an encoder."""
    i = encoder.info
    return ModelInfo(i.name, i.path, i.fingerprint, i.pooler, i.max_length, i.dtype, i.kind)


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
    """``cpu`` or ``cuda:0 (GPU name)``, plus the thread count on CPU."""
    dev = getattr(getattr(encoder, "inner", encoder), "device", None)
    try:
        import torch

        if dev and str(dev).startswith("cuda") and torch.cuda.is_available():
            return f"{dev} ({torch.cuda.get_device_name(torch.device(dev))})"
        return f"cpu ({torch.get_num_threads()} threads)"
    except ImportError:
        return "cpu"


@lru_cache(maxsize=256)
def _sha256(path: str, size: int, mtime: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:  # noqa: PTH123 - hot path, plain open
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def data_checksums(data_dir: Path, files: Iterable[Path]) -> dict[str, str]:
    """sha256 of each data file, keyed by its path relative to the data dir."""
    out = {}
    for f in files:
        st = Path(f).stat()
        out[Path(f).relative_to(data_dir).as_posix()] = _sha256(str(f), st.st_size, st.st_mtime_ns)
    return out


def make_provenance(
    data_dir: Path,
    files: Iterable[Path],
    timings: dict[str, float],
    command: str | None = None,
    encoder: Encoder | None = None,
) -> Provenance:
    """Provenance for a result computed now."""
    return Provenance(
        stsbench_version=__version__,
        git_commit=git_commit(),
        created_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        libraries=library_versions(),
        device=device_name(encoder),
        data_files=data_checksums(Path(data_dir), files),
        timings={k: round(v, 3) for k, v in timings.items()},
        command=command,
    )


def model_slug(name: str) -> str:
    """A folder name for a model: the last path parts of a path, hub ids with ``__`` for ``/``."""
    p = Path(name)
    base = "__".join(p.parts[-2:]) if p.is_absolute() or name.startswith(".") else name.replace("/", "__")
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", base).strip("._") or "model"


def result_path(output: Path, result: TaskResult) -> Path:
    """``<output>/<model_slug>/<pooler>/<mode>/<task>.json``."""
    return (
        Path(output)
        / model_slug(result.model.name)
        / result.model.pooler
        / result.mode
        / f"{result.task}.json"
    )


def write_result(output: Path, result: TaskResult) -> Path:
    """Write one result atomically; returns its path."""
    return atomic_write_json(result_path(output, result), result.to_dict())


def read_result(path: Path) -> TaskResult:
    """Read a results file; a malformed or foreign file raises a one-line error naming it."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StsbenchError(f"{path}: not a readable JSON file ({exc})") from None
    if not isinstance(data, dict) or data.get("kind") != "stsbench.task_result":
        raise StsbenchError(f'{path}: not an stsbench task result (no "kind": "stsbench.task_result")')
    if data.get("schema_version") != 1:
        raise StsbenchError(
            f"{path}: results schema version {data.get('schema_version')!r}, this stsbench reads 1"
        )
    try:
        return TaskResult.from_dict(data)
    except (KeyError, TypeError) as exc:
        raise StsbenchError(f"{path}: malformed stsbench task result ({exc})") from None
