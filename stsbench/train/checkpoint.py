"""What a run leaves on disk.

``DIR/`` (the best dev checkpoint) is a model folder every loader reads: the backbone (``save_pretrained``),
its tokenizer, ``stsbench.json`` (the evaluation pooler, for ``stsbench run --model DIR``) and the
sentence-transformers modules and model card (:mod:`stsbench.train.st_export`: ``SentenceTransformer(DIR)`` gives
the same vectors for every pooler). ``DIR/last/state.pt`` is
the resumable state: weights, optimizer, step, RNG states, best dev score, config, queue, momentum encoder.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import torch

from stsbench.encoders.resolve import EXPORT_COMMIT
from stsbench.errors import StsbenchError
from stsbench.files import atomic_write_json, current_umask, visible_entries
from stsbench.results.schema import RUN_KIND, SCHEMA_VERSION
from stsbench.train.log import LAST, STATE_FILE
from stsbench.train.st_export import write_sentence_transformers

META_FILE = "stsbench.json"
STAGING = ".export-tmp"  # an export being written; EXPORT_COMMIT: a complete one being moved into place
LOG_FILE = "train_log.jsonl"


def is_run_dir(path: Path) -> bool:
    """Tell whether an earlier ``stsbench train`` wrote ``path`` (its log alone: one that died before a save)."""
    return any((path / name).is_file() for name in (META_FILE, f"{LAST}/{STATE_FILE}", LOG_FILE))


def prepare_output(out: Path, resume: bool, overwrite: bool) -> None:
    """Refuse to mix runs: a used DIR needs --resume (continue) or --overwrite (start again)."""
    if resume:
        if not (out / LAST / STATE_FILE).is_file():
            raise StsbenchError(
                f"no resumable state in {out / LAST}; run without --resume to start a new run"
            )
        finish_export(out)  # a kill among an export's renames: the checkpoint is whole again
        return
    if out.exists() and not out.is_dir():
        raise StsbenchError(f"--output {out} is a file; pass a folder")
    used = visible_entries(out)
    if used:
        if not overwrite:
            raise StsbenchError(
                f"--output {out} is not empty; pass --resume to continue its run, --overwrite to "
                "replace it, or another --output"
            )
        if not is_run_dir(out):
            raise StsbenchError(
                f"--output {out} holds files that no stsbench run wrote; refusing to --overwrite "
                "them, pass an empty or new folder"
            )
        for entry in used:  # not the folder: its lock file, which this run may hold, stays
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    out.mkdir(parents=True, exist_ok=True)


def _backbone_state(model, eval_pooler: str) -> dict[str, torch.Tensor]:
    """Copy the backbone's weights; for the ``cls`` pooler SimCSE's MLP becomes BERT's pooler (dense+tanh)."""
    state = {k: v.detach().cpu().clone() for k, v in model.backbone.state_dict().items()}
    if eval_pooler == "cls":
        if "pooler.dense.weight" not in state:
            raise StsbenchError(
                "the backbone has no pooler layer to hold the MLP; train with --mlp-only-train"
            )
        state["pooler.dense.weight"] = model.mlp.dense.weight.detach().cpu().clone()
        state["pooler.dense.bias"] = model.mlp.dense.bias.detach().cpu().clone()
    return state


def export_model(out: Path, model, tokenizer, eval_pooler: str, meta: dict[str, Any]) -> None:
    """Write the evaluable checkpoint at ``out``: the previous checkpoint stays whole until this one is.

    Everything is first written into ``out/.export-tmp`` (the seconds a save takes: a kill there leaves the
    previous checkpoint untouched, and the next export removes the leftover). The complete folder is then
    renamed ``out/.export-ready`` and its files moved into place, ``stsbench.json`` last
    (:func:`finish_export`); a kill among those renames leaves ``.export-ready``, which the model loader
    refuses and the next export or ``--resume`` completes.
    """
    import transformers

    transformers.utils.logging.disable_progress_bar()  # no "Writing model shards" bar under ours
    finish_export(out)  # an earlier export stopped among its renames: the folder is the newer one once done
    staging = out / STAGING
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    model.backbone.save_pretrained(staging, state_dict=_backbone_state(model, eval_pooler))
    tokenizer.save_pretrained(staging)
    st = write_sentence_transformers(staging, model, eval_pooler, meta)
    atomic_write_json(
        staging / META_FILE,
        {
            "kind": RUN_KIND,
            "schema_version": SCHEMA_VERSION,
            **meta,
            "pooler": eval_pooler,
            "max_length": None,
            "sentence_transformers": st,
        },
    )
    for path in staging.rglob("*"):
        if path.is_file():
            # as a plain open() would: a checkpoint is meant to be shared
            path.chmod(0o666 & ~current_umask())
    staging.replace(out / EXPORT_COMMIT)
    finish_export(out)


def finish_export(out: Path) -> None:
    """Move a complete export's files from ``out/.export-ready`` into place, ``stsbench.json`` last.

    Each move is a rename; run again after a kill, it moves what is left (the files are the same export's).
    """
    ready = out / EXPORT_COMMIT
    if not ready.is_dir():
        return
    meta = ready / META_FILE
    files = sorted(p for p in ready.rglob("*") if p.is_file() and p != meta)
    for src in files + ([meta] if meta.is_file() else []):
        dst = out / src.relative_to(ready)
        dst.parent.mkdir(parents=True, exist_ok=True)
        src.replace(dst)
    shutil.rmtree(ready)


def rng_states(device: torch.device | str = "cpu") -> dict[str, Any]:
    """Python, numpy and torch generator states: the CPU's, and on a CUDA ``device`` that device's alone.

    Each process of a distributed run saves its own (``rng_per_rank``) for the GPU it trains on:
    ``get_rng_state_all`` would make every process open a context on every GPU of the node.
    """
    np_state = np.random.get_state()
    states = {
        "python": random.getstate(),
        "numpy": [np_state[0], np_state[1].tolist(), *np_state[2:]],
        "torch": torch.get_rng_state(),
    }
    device = torch.device(device)
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        states["cuda"] = torch.cuda.get_rng_state(index)
        states["cuda_device"] = index
    return states


def set_rng_states(states: dict[str, Any], device: torch.device | str = "cpu") -> None:
    """Restore :func:`rng_states`: on a CUDA ``device``, that device's generator.

    A checkpoint saved by earlier stsbench holds every GPU's state; the device's own is taken from it.
    """
    random.setstate(tuple(x if not isinstance(x, list) else tuple(x) for x in states["python"]))
    np_state = states["numpy"]
    np.random.set_state((np_state[0], np.asarray(np_state[1], dtype=np.uint32), *np_state[2:]))
    torch.set_rng_state(states["torch"])
    device = torch.device(device)
    if "cuda" not in states or device.type != "cuda":
        return
    index = device.index if device.index is not None else torch.cuda.current_device()
    saved = states["cuda"]
    if isinstance(saved, list | tuple):  # get_rng_state_all's, one per GPU (older checkpoints)
        saved = saved[index]
    torch.cuda.set_rng_state(saved, index)


def save_state(out: Path, state: dict[str, Any]) -> None:
    """``DIR/last/state.pt`` atomically (temporary file + rename), and a readable ``progress.json``."""
    folder = out / LAST
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{STATE_FILE}.tmp"
    try:
        # a file object: a full disk is an OSError (errno 28), not torch's RuntimeError
        with tmp.open("wb") as fh:
            torch.save(state, fh)
        tmp.replace(folder / STATE_FILE)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(folder / STATE_FILE)
        raise
    atomic_write_json(
        folder / "progress.json", {k: state[k] for k in ("step", "epoch", "best_dev_spearman", "best_step")}
    )


def load_state(out: Path) -> dict[str, Any]:
    """Read ``DIR/last/state.pt`` (tensors and plain containers only)."""
    path = out / LAST / STATE_FILE
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        raise StsbenchError(
            f"cannot read {path} ({reason}); the file is damaged: start again with --overwrite"
        ) from None
