"""Does a run score the canonical data? Each file it reads, compared with the checksum manifest.

A file the manifest lists differs when its size differs (no hashing needed) or, same size, its sha256 does.
A task that ships its own data declares its files' checksums (``STSSpec.checksums``), which are checked the
same way (:func:`register_canonical`). A file neither lists (a user's own task data) has no canonical version:
it is not checked here, only recorded with its sha256 in the results' provenance, as every data file is. A
missing file is left to the reader, whose error already names it.

The sha256 of a file is the one byte digest (:func:`stsbench.sources.sha256_files`): computed once and memoised
on disk by the file's absolute path, size, mtime_ns, ctime_ns and inode, so a warm run pays a ``stat`` per file.

Every data file is read through :func:`read_lines` here, whose errors name the file and line and say how to
restore it (`stsbench data verify`).
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from stsbench.errors import StsbenchError
from stsbench.paths import first_line, require_hub
from stsbench.sources import sha256_file, sha256_files

# -- reading a data file ----------------------------------------------------------------------------------


def read_lines(path: Path, encoding: str = "utf-8", splitlines: bool = False) -> list[str]:
    """Lines of ``path`` without line ends.

    ``splitlines=True`` splits as ``str.splitlines`` (what SentEval's STS12-16 reader does, which also
    breaks on form feeds and Unicode separators); otherwise lines break on newlines only, as ``for line in f``.
    """
    path = Path(path)
    if not path.is_file():
        raise StsbenchError(f"missing data file {path}; run `stsbench data verify` to see what is missing")
    return decode_lines(path.read_bytes(), path, encoding, splitlines)


def decode_lines(raw: bytes, path: Path, encoding: str = "utf-8", splitlines: bool = False) -> list[str]:
    """:func:`read_lines` of bytes already read from ``path`` (named in errors)."""
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise StsbenchError(
            f"{path}:{line}: bytes that are not {encoding} ({raw[exc.start : exc.end]!r}); "
            "restore the original file (`stsbench data verify`)"
        ) from None
    if splitlines:
        return text.splitlines()
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


HF_DATASET = "princeton-nlp/datasets-for-simcse"
SENTEVAL_ARCHIVE = "senteval.tar"
WIKI_FILE = "wiki1m_for_simcse.txt"


def senteval_text(raw: str) -> str:
    """SentEval's tokens (whitespace split) joined with single spaces, as SimCSE's batcher does."""
    return " ".join(raw.split())


# -- the canonical data --------------------------------------------------------------------------------------


ALLOW_OPTION = "--allow-modified-data"
MARK = "‡"  # beside a figure computed on modified data, in every table (reports use † for selection)


def modified_text(files: Iterable[str]) -> str:
    """What a figure on modified data is, naming the files that differ."""
    return f"computed on data that differs from the canonical files: {', '.join(sorted(set(files)))}"


def modified_note(files: Iterable[str]) -> str:
    """The footnote of a table whose marked figures are on modified data."""
    return f"{MARK} {modified_text(files)}"


@lru_cache(maxsize=1)
def load_manifest() -> dict:
    """The manifest shipped with the package: ``files`` maps a path under the data dir to sha256 and size."""
    return json.loads(resources.files("stsbench.data").joinpath("manifest.json").read_text(encoding="utf-8"))


# the canonical files tasks declare beside the manifest: a path as :func:`relative` gives it -> sha256, size
_declared: dict[str, dict] = {}


def register_canonical(folder: str | Path, checksums: dict, where: str = "a task") -> None:
    """Declare ``{file in folder: {"sha256", "size"}}`` canonical: runs refuse them modified, as manifest files.

    ``folder`` relative: under the data dir (as manifest paths are); absolute: a task's own folder.
    """
    for name, meta in checksums.items():
        sha, size = meta.get("sha256"), meta.get("size")
        if not (isinstance(sha, str) and len(sha) == 64 and isinstance(size, int) and size >= 0):
            raise StsbenchError(f"{where}: checksums[{name!r}] needs a 64-hex 'sha256' and an integer 'size'")
        _declared[(Path(folder) / name).as_posix()] = {"sha256": sha, "size": size}


def checksum_entry(path: Path) -> dict:
    """``{"sha256", "size"}`` of a file: what a task's ``checksums`` (and the manifest) hold for it."""
    return {"sha256": sha256_file(Path(path)), "size": Path(path).stat().st_size}


def _canonical(data_dir: Path, path: Path) -> tuple[str, dict] | None:
    """The name and checksums of ``path``'s canonical version: the manifest's, else a task's; None if neither."""
    rel = relative(data_dir, path)
    if rel in load_manifest()["files"]:
        return rel, load_manifest()["files"][rel]
    for key in (rel, Path(path).absolute().as_posix()):
        if key in _declared:
            return rel, _declared[key]
    return None


def relative(data_dir: Path, path: Path) -> str:
    """``path`` relative to the data dir, as the manifest and provenance name it (absolute if outside it)."""
    try:
        return Path(path).relative_to(data_dir).as_posix()
    except ValueError:
        return Path(path).as_posix()


def differences(data_dir: Path, files: Iterable[Path]) -> dict[str, str]:
    """``{relative path: how it differs}`` for each existing file among ``files`` that is not canonical.

    Canonical: as the manifest lists it, or as the task that ships it declares it (:func:`register_canonical`).
    """
    listed: dict[Path, tuple[str, dict]] = {}
    for f in files:
        found = _canonical(Path(data_dir), Path(f))
        if found is not None and Path(f).is_file():
            listed[Path(f)] = found
    out: dict[str, str] = {}
    same_size = []
    for f, (rel, meta) in listed.items():
        size, expected = f.stat().st_size, meta["size"]
        if size != expected:
            out[rel] = f"{size} bytes, the canonical file has {expected}"
        else:
            same_size.append(f)
    for f, digest in sha256_files(same_size).items():
        rel, meta = listed[f]
        if digest != meta["sha256"]:
            out[rel] = "same size, other sha256"
    return dict(sorted(out.items()))


def check_data(data_dir: Path, files: Iterable[Path], allow_modified: bool = False) -> dict[str, str]:
    """Refuse non-canonical data in one line naming the file and the fix, unless ``allow_modified``.

    Returns :func:`differences` (empty on canonical data).
    """
    diff = differences(data_dir, files)
    if diff and not allow_modified:
        rel, why = next(iter(diff.items()))
        more = f" (and {len(diff) - 1} more file(s))" if len(diff) > 1 else ""
        if rel in load_manifest()["files"]:
            what = "the canonical SentEval data"
            fix = f"`stsbench data download --data-dir {data_dir}`; `stsbench data verify` lists every difference"
        else:  # a task's own data: only its package has the original
            what, fix = "the canonical file its task declares", "reinstall the package that ships the task"
        raise StsbenchError(
            f"{Path(data_dir) / rel}: differs from {what} ({why}){more}; restore it ({fix}) "
            f"or pass {ALLOW_OPTION} to score it anyway, marked as modified"
        )
    return diff


# -- `stsbench data verify` and `stsbench data download` ---------------------------------------------------


@dataclass
class FileCheck:
    """One manifest entry checked against the data dir."""

    path: str
    status: str  # ``ok`` | ``missing`` | ``size`` | ``sha256`` | ``absent (optional)``
    expected: str
    actual: str | None = None


def verify(data_dir: Path) -> list[FileCheck]:
    """Check every manifest file under ``data_dir`` (size first, then sha256)."""
    manifest = load_manifest()
    optional = tuple(manifest.get("optional", []))
    out = []
    for rel, meta in sorted(manifest["files"].items()):
        f = Path(data_dir) / rel
        if not f.is_file():
            out.append(
                FileCheck(rel, "absent (optional)" if rel.startswith(optional) else "missing", meta["sha256"])
            )
        elif f.stat().st_size != meta["size"]:
            out.append(FileCheck(rel, "size", str(meta["size"]), str(f.stat().st_size)))
        else:
            digest = sha256_file(f, fresh=True)  # read now: verify is the check that trusts no memo
            out.append(FileCheck(rel, "ok" if digest == meta["sha256"] else "sha256", meta["sha256"], digest))
    return out


def _hub_download(filename: str) -> Path:
    where = (
        "extract it so that DATA_DIR/downstream/ exists"
        if filename.endswith(".tar")
        else "put it in DATA_DIR/wiki/"
    )
    advice = (
        f"on a machine with internet fetch https://huggingface.co/datasets/{HF_DATASET}/resolve/main/{filename}, "
        f"{where}, then run `stsbench data verify --data-dir DATA_DIR`"
    )
    require_hub(f"{filename} (dataset {HF_DATASET})", advice)
    from huggingface_hub import hf_hub_download

    try:
        return Path(hf_hub_download(HF_DATASET, filename, repo_type="dataset"))
    except Exception as exc:  # proxy errors, 404, missing local cache entry: the same advice
        raise StsbenchError(
            f"cannot fetch {filename} from the Hugging Face hub ({first_line(exc)}); {advice}"
        ) from None


def extract_senteval(archive: Path, data_dir: Path) -> int:
    """Extract the archive's ``downstream/`` tree into ``data_dir`` (atomically per file tree); returns file count."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar, tempfile.TemporaryDirectory(dir=data_dir, prefix=".extract-") as tmp:
        members = []
        for m in tar.getmembers():
            parts = Path(m.name).parts
            if "downstream" not in parts:
                continue
            rel = Path(*parts[parts.index("downstream") :])
            if m.isfile() and ".." not in rel.parts:
                m.name = rel.as_posix()
                members.append(m)
        if not members:
            raise StsbenchError(f"{archive}: no downstream/ folder inside; is this SimCSE's senteval.tar?")
        tar.extractall(tmp, members=members, filter="data")
        target = data_dir / "downstream"
        previous = Path(tmp) / "previous"  # the tree replaced goes with the temporary folder
        if target.exists():
            target.rename(previous)
        try:
            (Path(tmp) / "downstream").rename(target)
        except OSError as exc:
            if previous.exists():
                previous.rename(target)
            raise StsbenchError(
                f"cannot put the extracted data at {target} ({exc.strerror}); nothing changed"
            ) from None
    # where a run before this one kept the replaced tree; the data is now the archive's, so it is not needed
    shutil.rmtree(data_dir / ".downstream-old", ignore_errors=True)
    return len(members)


def download(data_dir: Path, wiki: bool = False) -> list[FileCheck]:
    """Fetch and extract SimCSE's ``senteval.tar`` (and optionally the 1M-sentence wiki corpus), then verify."""
    archive = _hub_download(SENTEVAL_ARCHIVE)
    extract_senteval(archive, Path(data_dir))
    if wiki:
        src = _hub_download(WIKI_FILE)
        (Path(data_dir) / "wiki").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, Path(data_dir) / "wiki" / WIKI_FILE)
    return verify(data_dir)
