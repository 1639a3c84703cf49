"""The checksum manifest of the SentEval data, `stsbench data verify` and `stsbench data download`."""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from stsbench.errors import StsbenchError
from stsbench.sources import sha256_file

HF_DATASET = "princeton-nlp/datasets-for-simcse"
SENTEVAL_ARCHIVE = "senteval.tar"
WIKI_FILE = "wiki1m_for_simcse.txt"


def load_manifest() -> dict:
    """The manifest shipped with the package: ``files`` maps a path under the data dir to sha256 and size."""
    return json.loads(resources.files("stsbench.data").joinpath("manifest.json").read_text(encoding="utf-8"))


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
    from stsbench.paths import first_line, require_hub

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
