"""The training configs shipped with stsbench: ``stsbench train --config simcse-bert-base-official``.

One YAML file per paper setting beside this module (``<method>-<backbone>-<paper|official>.yaml``, and the
CPU runs ``*-minilm-cpu.yaml``); each names its corpus (``train_file: wiki1m``), never a path of one machine.
``--config`` takes one of their names or the path of a YAML file of one's own.
"""

from __future__ import annotations

from pathlib import Path

from stsbench.errors import StsbenchError
from stsbench.registry import Registry, packaged_files

SUFFIXES = (".yaml", ".yml")


def _configs() -> Registry[Path]:
    return packaged_files("config", __name__)


def config_names() -> list[str]:
    """The packaged configs' names, sorted."""
    return _configs().names()


def config_path(name: str) -> Path:
    """The file of packaged config ``name``; an unknown name is one line with the nearest."""
    try:
        return _configs().get(name)
    except StsbenchError as exc:
        raise StsbenchError(f"{exc}; or give the path of a YAML file") from None


def find_config(name_or_path: str | Path) -> Path:
    """An existing YAML file as it is, else the packaged config of that name.

    ``configs/<name>.yaml``, where configs lived in the repository before they were packaged, is the
    packaged ``<name>`` when no such file exists; a name may carry ``.yaml``.
    """
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return path
    text = str(name_or_path)
    stem = path.name.removesuffix(path.suffix) if path.suffix in SUFFIXES else path.name
    bare = "/" not in text and "\\" not in text
    if bare or (path.parent.name == "configs" and stem in _configs()):
        return config_path(stem)
    raise StsbenchError(
        f"config file {path} does not exist; give a YAML file or a packaged config ({', '.join(config_names())})"
    )
