"""Where the report's numbers come from: models and fingerprints, commands, data checksums, versions."""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from typing import Any

from stsbench.data.integrity import MARK
from stsbench.reports.collect import Collection, Model, TrainRun, name_label
from stsbench.results.write import Checkout
from stsbench.tabular import DASH, Table, make_table
from stsbench.train.config import OPTIONS

EMBEDDING_LIBS = ("torch", "transformers", "sentence-transformers")  # stsbench.encoders.fingerprint's
VERSION_LIBS = ("torch", "transformers", "sentence-transformers", "numpy", "scipy", "python")


def _records(coll: Collection) -> list[tuple[str, Any, Any, str]]:
    """(path, model info, provenance, what) of every result, task and analysis."""
    out = [(r.path, r.result.model, r.result.provenance, r.result.task) for r in coll.tasks]
    out += [(a.path, a.model, a.provenance, a.variant) for a in coll.analyses]
    return sorted(out, key=lambda x: x[0])


def _short(commit: str | None) -> str:
    return (commit or DASH)[:8] + ("-dirty" if commit and commit.endswith("-dirty") else "")


def code_lines(checkout: Checkout | None, coll: Collection) -> list[str]:
    """What the Provenance section says of uncommitted code: nothing where the report's own code is clean.

    Made by a dirty checkout, the report names its package files that differ from its commit, and says of the
    results recorded as made by uncommitted code (``<sha>-dirty``) that which files differed then was not
    recorded: for those of the report's own commit, that the files named are the report's, not theirs.
    """
    if checkout is None or not checkout.dirty:
        return []
    short = _short(checkout.commit)
    files = ", ".join(f"`{f}`" for f in checkout.differing)
    lines = [f"This report was made by stsbench {short}-dirty: files differing from {short}: {files}."]
    dirty = sorted(
        {p.git_commit for _, _, p, _ in _records(coll) if p.git_commit and p.git_commit.endswith("-dirty")}
    )
    mine = f"{checkout.commit}-dirty"
    others = [_short(c) for c in dirty if c != mine]
    if mine in dirty:
        lines.append(
            f"Results recorded as made by {short}-dirty, the report's commit: the files above are those that differ "
            "as the report is made; which differed when the results were made was not recorded."
        )
    if others:
        lines.append(
            f"Results recorded as made by uncommitted code ({', '.join(others)}): which files differed from "
            f"{'that commit' if len(others) == 1 else 'those commits'} was not recorded when they were made."
        )
    return lines


def why_apart(models: list[Model], coll: Collection | None) -> list[str]:
    """A line per name that several models (fingerprints) share, saying what differs between them.

    The settings a result records (pooler, max length, dtype, prompt, kind), else the code that
    encoded: the fingerprint covers stsbench's encoding code and the embedding libraries (a cache key: other
    code may give other vectors), so results of one model made by other code are other rows, which without
    this line look like the same model twice.
    """
    commits: dict[str, set[str]] = defaultdict(set)
    libs: dict[str, set[str]] = defaultdict(set)
    for _, info, prov, _ in _records(coll) if coll is not None else []:
        commits[info.fingerprint].add(_short(prov.git_commit))
        libs[info.fingerprint].add(", ".join(f"{k} {prov.libraries.get(k, DASH)}" for k in EMBEDDING_LIBS))
    by_name: dict[str, list[Model]] = defaultdict(list)
    for m in models:
        by_name[name_label(m.info)].append(m)
    lines = []
    for same in by_name.values():
        if len(same) < 2:
            continue
        fields = {"pooler": "pooler", "max length": "max_length", "dtype": "dtype", "kind": "kind"}
        differ = [what for what, key in fields.items() if len({str(getattr(m.info, key)) for m in same}) > 1]
        who = " and ".join(m.label for m in same)
        if differ:
            lines.append(f"{who}: the same name, other {', '.join(differ)}.")
            continue
        code = [f"{m.label}: {', '.join(sorted(commits[m.key]))}" for m in same]
        if len({frozenset(commits[m.key]) for m in same}) > 1:
            also = " and other library versions" if len({frozenset(libs[m.key]) for m in same}) > 1 else ""
            lines.append(
                f"{who}: the same name, pooler, max length and dtype, encoded by other stsbench code"
                f"{also} (git commit of their results: {'; '.join(code)}). The fingerprint covers the encoding "
                "code, so results of other code are kept apart; whether the weights differ too the results do "
                "not tell."
            )
        else:
            lines.append(f"{who}: the same name and settings, other weights (model files).")
    return lines


def models_table(models: list[Model], coll: Collection | None = None) -> Table:
    """One row per evaluated model: how it was loaded and its embedding fingerprint.

    ``coll``: the results, whose provenance says why two models of one name are apart (:func:`why_apart`).
    """
    columns = ["model", "run as", "kind", "pooler", "max length", "dtype", "fingerprint", "training run"]
    rows = [
        [
            m.label,
            "; ".join(m.names or (m.name,)),
            m.info.kind,
            m.pooler,
            DASH if m.info.max_length is None else str(m.info.max_length),
            m.info.dtype,
            m.info.fingerprint,
            m.run.path if m.run else DASH,
        ]
        for m in models
    ]
    notes = [
        "fingerprint: the embedding-cache key (weights, config, tokenizer, pooler, max length, dtype, prompt, and "
        "the encoding code: stsbench's encoding sources and the torch, transformers and sentence-transformers "
        "versions; in results of earlier stsbench versions, a version number of that code)."
    ]
    return make_table("provenance_models", "Models", columns, rows, notes + why_apart(models, coll))


def commands_table(coll: Collection) -> Table:
    """Each command line recorded in the results, with what it produced."""
    made: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path, _, prov, what in _records(coll):
        folder = path.rsplit("/", 1)[0] if "/" in path else "."
        made[prov.command or "(not recorded)"][folder].append(what)
    rows = []
    for command, folders in sorted(made.items(), key=lambda kv: min(kv[1])):
        produced = "; ".join(f"{', '.join(whats)} ({folder}/)" for folder, whats in sorted(folders.items()))
        rows.append([command, produced])
    notes = ["Folders are relative to the results folder; each command wrote one JSON per result named."]
    return make_table("provenance_commands", "Commands", ["command", "results"], rows, notes)


def train_command(run: TrainRun) -> str:
    """``stsbench train`` with every option the run's saved config sets away from the defaults."""
    parts = ["stsbench train"]
    for name in ("method", "model", "train_file", "output"):
        value = run.config.get(name)
        if name != "method" and isinstance(value, str) and (value == "." or value.startswith(("./", "../"))):
            # recorded relative to the run's folder (stsbench.results.write): shown relative to the results
            value = posixpath.normpath(posixpath.join(run.path, value))
        parts.append(f"--{name.replace('_', '-')} {value}")
    for name, opt in OPTIONS.items():
        value = run.config.get(name, opt.default)  # not in the config: its default, not said
        if name in ("method", "model", "train_file", "output", "data_dir") or value == opt.default:
            continue
        flag = name.replace("_", "-")
        if isinstance(value, bool):
            parts.append(f"--{flag}" if value else f"--no-{flag}")
        elif value is not None:
            parts.append(f"--{flag} {value}")
    return " ".join(parts)


def training_provenance_table(runs: list[TrainRun]) -> Table:
    """One row per training run: the command that reproduces it (rebuilt from its saved config)."""
    rows = [[r.path, train_command(r)] for r in sorted(runs, key=lambda r: r.path)]
    notes = [
        "Rebuilt from each run's saved config (stsbench.json, else the log's start record): the options that "
        "differ from `stsbench train`'s defaults; --data-dir is left out."
    ]
    return make_table("provenance_training", "Training runs", ["run", "equivalent command"], rows, notes)


def data_table(coll: Collection) -> Table:
    """Every data file the results read, with its sha256; a file seen with two checksums gets a row each."""
    provs = [prov for _, _, prov, _ in _records(coll)]
    seen = Counter(pair for prov in provs for pair in prov.data_files.items())
    # (file, sha256) that differ from the canonical file
    modified = {
        (n, d) for prov in provs for n, d in prov.data_files.items() if n in (prov.data_modified or {})
    }
    names = Counter(name for name, _ in seen)

    def note(name: str, digest: str) -> str:
        parts = []
        if names[name] > 1:
            parts.append("differs between results")
        if (name, digest) in modified:
            parts.append(f"{MARK} not the canonical file")
        return "; ".join(parts)

    rows = [[name, digest, str(n), note(name, digest)] for (name, digest), n in sorted(seen.items())]
    notes = ["Paths relative to the data folder (SentEval's downstream/, the training corpus' folder)."]
    return make_table("provenance_data", "Data files", ["file", "sha256", "results", "note"], rows, notes)


def versions_table(coll: Collection) -> Table:
    """Distinct (commit, library versions, device) sets and how many results each made."""
    counts: dict[tuple[str, ...], int] = defaultdict(int)
    for _, _, prov, _ in _records(coll):
        libraries = [prov.libraries.get(lib, DASH) for lib in VERSION_LIBS]
        counts[(prov.git_commit or DASH, prov.stsbench_version, *libraries, prov.device)] += 1
    columns = ["git commit", "stsbench", *VERSION_LIBS, "device", "results"]
    rows = [[*key, str(n)] for key, n in sorted(counts.items())]
    return make_table("provenance_versions", "Versions", columns, rows)


def created_range(coll: Collection) -> str | None:
    """Return 'first - last' creation time of the results (from their provenance), or None."""
    times = sorted(prov.created_at for _, _, prov, _ in _records(coll))
    return f"{times[0]} to {times[-1]}" if times else None
