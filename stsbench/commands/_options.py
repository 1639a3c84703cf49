"""What the commands share (a helper, not a command: ``register_all`` skips it).

- the options several commands take, each defined once as a typer ``Annotated`` alias (``DataDirOpt``, ...),
  and :func:`encode_options`, the encoder's options they say;
- the one CLI generator, :func:`parameter`: a typed option (a training option, an analysis' option) as a typer
  parameter. Both ``stsbench train`` and every analysis command build their flags with it from the fields'
  declarations (:func:`stsbench.options.option`): the flag is ``--`` + the name with ``-`` for ``_``, a
  ``bool`` is ``--flag/--no-flag``, a ``Literal`` a choice typer shows and checks, the help the field's;
- :func:`table_console`, the console the commands print their tables on;
- :func:`with_suggestion`: a mistyped model name's nearest known one, added to the one line its failure ends
  in. ``stsbench run --model all-MiniLM-L6-v3`` fails where the model is looked up (a folder, the local hub
  cache, the hub), which knows nothing of the names stsbench ships; the CLI adds ``did you mean
  sentence-transformers/all-MiniLM-L6-v2 or sentence-transformers/all-MiniLM-L6-v3?`` to that line, offline
  too. Known names: the embedded model, the backbones of the packaged training configs and the models in the
  local hub cache. A hint names a full hub id, one the hub would find: a known name under its owner where one
  is known (``sentence-transformers/all-MiniLM-L6-v2``, not the embedded copy's short name), and a bare name
  near a known owner's model also under that owner: offline, ``all-MiniLM-L12-v2`` may be a typo of
  ``all-MiniLM-L6-v2`` or another model of ``sentence-transformers`` that lacks its owner, so both are named.
"""

from __future__ import annotations

import difflib
import inspect
import re
import shlex
import sys
from collections.abc import Iterable, Mapping
from dataclasses import fields
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional

import typer

from stsbench.configs import config_names, config_path
from stsbench.encoders.pooling import check_pooler
from stsbench.encoders.resolve import EMBEDDED_DEFAULT, check_prompt_options
from stsbench.errors import StsbenchError

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

    from stsbench.encoders.base import EncodeOptions  # numpy: imported where options are made


def opt(kind: Any, *decls: str, arg: bool = False, **kw: Any) -> Any:
    """``Annotated[kind, typer.Option(*decls, **kw)]`` (``typer.Argument`` with ``arg``), as an alias."""
    return Annotated[kind, (typer.Argument if arg else typer.Option)(*decls, **kw)]


ModelOpt = opt(
    str,
    "--model",
    "-m",
    help="Model: a name (all-MiniLM-L6-v2), a local HF/sentence-transformers dir, or a hub id.",
)
ModelsOpt = opt(list[str], "--model", "-m", help="Model(s) to compare; repeat --model for several.")


def _pooler_name(value: str | None) -> str | None:
    """Refuse a mistyped ``--pooler`` while parsing, before a command imports torch (seconds)."""
    return None if value is None else check_pooler(value)


PoolerOpt = opt(
    str | None,
    "--pooler",
    callback=_pooler_name,
    help="cls | cls_before_pooler | avg | avg_first_last | avg_top2 (or a pooler a plugin registers); "
    "default: as the model declares.",
)
DataDirOpt = opt(
    Path | None,
    "--data-dir",
    help="Folder holding SentEval's downstream/ (default: $STSBENCH_DATA, else ./data).",
)
CacheDirOpt = opt(
    Path | None,
    "--cache-dir",
    help="Embedding cache folder (default: $STSBENCH_CACHE, else the user cache dir).",
)
NoCacheOpt = opt(bool, "--no-cache", help="Neither read nor write the embedding cache.")
OutputOpt = opt(Path, "--output", "-o", help="Folder for results JSON files.")
BatchSizeOpt = opt(int, "--batch-size", min=1, help="Encoding batch size.")
MaxLengthOpt = opt(
    int | None,
    "--max-length",
    min=1,
    help="Truncate inputs to this many tokens (default: no truncation, as SentEval; "
    "sentence-transformers models use their own max_seq_length).",
)
DeviceOpt = opt(str | None, "--device", help="cpu, cuda, cuda:1, mps (default: cuda if available, else cpu).")
SeedOpt = opt(int, "--seed", help="Random seed.")
QuietOpt = opt(bool, "--quiet", "-q", help="No progress bar (train: nor messages).")
AllowModifiedDataOpt = opt(
    bool,
    "--allow-modified-data",
    help="Score data files that differ from the canonical SentEval files (stsbench/data/manifest.json) "
    "instead of refusing; the results record the files, tables and reports mark the figures with a ‡.",
)
BootstrapOpt = opt(
    int,
    "--bootstrap",
    min=0,
    metavar="B",
    help="Resamples of the pairs for each STS figure's 95% interval and the Avg.'s, seeded by --seed; "
    "0: no STS intervals.",
)
PromptOpt = opt(
    str | None,
    "--prompt",
    help="Text prepended to every sentence, as sentence-transformers' encode(prompt=...) (e.g. 'query: '); "
    "it keys the cache and is recorded with the results.",
)
PromptNameOpt = opt(
    str | None,
    "--prompt-name",
    help="A prompt the model stores (config_sentence_transformers.json 'prompts'), by name; "
    "default: the model's default_prompt_name, if it has one.",
)
# reproduce's steps, train's seeds (--seeds)
ParallelOpt = opt(
    int,
    "--parallel",
    min=1,
    help="How many at once: reproduce, steps (local: each gets cores/N threads unless --threads or "
    "OMP_NUM_THREADS says, or its own GPU); train, with --seeds, seeds (CPU: cores/N threads each; CUDA: "
    "a GPU each, a seed waiting while every GPU is taken).",
)
PerGpuOpt = opt(
    int,
    "--per-gpu",
    min=1,
    help="With GPUs, N processes share each GPU (reproduce: steps', local; train: seeds', with --seeds); "
    "default 1: each its own; ignored on CPU.",
)
# the filters of the commands that read results folders (check, export-mteb)
ModelFilterOpt = opt(
    str | None,
    "--model",
    help="Only results of this model name (for a cell: the group of seeds, by name, method or folder).",
)
PoolerFilterOpt = opt(str | None, "--pooler", help="Only results with this pooler.")
ModeFilterOpt = opt(str | None, "--mode", help="Only results of this mode (test, dev, fasttest).")
# report and reproduce: a subset of a recipe's training runs and seeds
RunsOpt = opt(
    str | None,
    "--runs",
    metavar="NAME[,NAME]",
    help="Only these training runs, by name (reproduce: a sweep's name is all its runs); results of no "
    "training (a baseline) are kept, and the report judges what exists and says what is left out.",
)
SeedsOpt = opt(
    str | None, "--seeds", metavar="S[,S]", help="Only these seeds of the training runs (e.g. 1,2)."
)
OutOpt = opt(
    Path,
    "--out",
    "-o",
    help="Folder the command writes to (report: report.md, report.html, figures/; export-mteb: an MTEB "
    "cache, results/<org>__<model>/<revision>/; reproduce: runs, results, logs, report, state).",
)
StrictOpt = opt(
    bool,
    "--strict",
    help="Fail instead of going on: report exits with status 1 when a file was skipped (the report is still "
    "written); reproduce --dry-run exits with status 2 when something the run needs is missing.",
)
DifferenceOpt = opt(
    float | None,
    "--difference",
    help="The difference from a published figure that matters (points, default 1.0; check: with --tolerance "
    "seeds): 'reproduced' where the 95% interval over seeds of the difference from it lies inside ±this, "
    "'not reproduced' where it lies entirely outside, else 'inconclusive' (docs/uncertainty.md, One rule).",
)


class Format(str, Enum):
    """How ``run`` and ``compare`` print."""

    table = "table"
    json = "json"


FormatOpt = opt(Format, "--format", help="table or json.")


class Dtype(str, Enum):
    """Weights and activations of the encoder at evaluation time."""

    float32 = "float32"
    bfloat16 = "bfloat16"
    float16 = "float16"


DtypeOpt = opt(
    Dtype,
    "--dtype",
    help="Encoder precision. float32 (default) gives the papers' and SentEval's numbers; bfloat16/float16 "
    "are faster where the hardware has them (GPUs, CPUs with AMX) and move scores by about 0.01.",
)


def encode_options(given: Mapping[str, Any]) -> EncodeOptions:
    """The :class:`~stsbench.encoders.base.EncodeOptions` that a command's shared options above say.

    ``given``: the command's keywords (``locals()`` of the command, or its ``**kw``); the fields named as
    EncodeOptions names them are read, ``no_cache`` as ``use_cache``, a :class:`Dtype` as its value; one the
    command lacks keeps its default. ``--prompt`` with ``--prompt-name`` is refused here, before anything loads.
    """
    from stsbench.encoders.base import EncodeOptions

    values = {f.name: given[f.name] for f in fields(EncodeOptions) if f.name in given}
    if "no_cache" in given:
        values["use_cache"] = not given["no_cache"]
    if isinstance(values.get("dtype"), Dtype):
        values["dtype"] = values["dtype"].value
    check_prompt_options(values.get("prompt"), values.get("prompt_name"))
    return EncodeOptions(**values)


def runs_and_seeds(runs: str | None, seeds: str | None) -> tuple[list[str] | None, list[int] | None]:
    """``--runs a,b`` and ``--seeds 1,2`` as lists (None: not given); a bad seed or an empty list is one line."""
    names = None if runs is None else [n.strip() for n in runs.split(",") if n.strip()]
    try:
        numbers = None if seeds is None else [int(s) for s in seeds.split(",") if s.strip()]
    except ValueError:
        raise StsbenchError(
            f"--seeds {seeds!r}: give whole numbers separated by commas, e.g. 1,2,3"
        ) from None
    if names == [] or numbers == []:
        raise StsbenchError("--runs and --seeds need at least one name or seed")
    return names, numbers


def parameter(
    name: str,
    info: FieldInfo,
    *,
    default: Any,
    help_text: str | None = None,
    choices: tuple[str, ...] | None = None,
    panel: str | None = None,
    repeatable: bool = False,
    show_default: bool = True,
) -> inspect.Parameter:
    """``info`` as a keyword-only typer parameter; ``default`` None: the option may be left out (``Optional``).

    ``choices``: the values allowed where they are not the field's ``Literal`` (a registry's names);
    ``repeatable``: given several times, or once comma-separated (a list of its type).
    """
    from stsbench import options  # pydantic: not for `stsbench run`

    flag, kind, short = options.flag(name), options.kind(info), options.extra(info, "short")
    decls = [f"{flag}/--no-{flag[2:]}"] if kind is bool else [flag, *([short] if short else [])]
    allowed = choices or options.choices(info)
    annotation: Any = Literal[allowed] if allowed else kind  # a Literal: typer shows and checks the choices
    if repeatable:
        annotation = list[annotation]  # type: ignore[valid-type]
    if default is None:
        annotation = Optional[annotation]  # noqa: UP045 - typer needs Optional on 3.10
    help_text = info.description if help_text is None else help_text
    metavar = {"metavar": "NAME[,NAME]"} if repeatable else {}
    option = typer.Option(*decls, help=help_text, show_default=show_default, rich_help_panel=panel, **metavar)
    annotation = Annotated[annotation, option]
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)


def command_line() -> str:
    """The command as typed, shell-quoted: what the results record as the command that made them."""
    return shlex.join(["stsbench", *sys.argv[1:]])


def table_console():
    """A rich console on stdout; piped or redirected, 200 columns wide instead of rich's 80, so no cell is cut."""
    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=200)


def escape(text: str) -> str:
    """``rich.markup.escape``: rich is imported where a table is printed, not for ``--help``."""
    from rich.markup import escape as escape_markup

    return escape_markup(text)


def print_table(
    console, columns: Iterable[tuple[str, dict]], rows: Iterable, heading="", notes=(), soft_wrap=False, **kw
) -> None:  # noqa: ANN001
    """``heading``, a rich table of ``columns`` (a name and ``add_column``'s keywords each) and ``notes``.

    ``kw``: the table's own keywords (title, caption). A heading line, not the table's title: rich wraps a
    title to the table's width (three lines for a long model path in a narrow terminal), a line the terminal
    folds at most once.
    """
    from rich.table import Table

    if heading:
        console.print(heading, soft_wrap=True, highlight=False)
    table = Table(**kw)
    for name, keywords in columns:
        table.add_column(name, **keywords)
    for row in rows:
        table.add_row(*row)
    console.print(table)
    for note in notes:
        console.print(note, highlight=False, soft_wrap=soft_wrap)


# the lookup's failures for a name that is no folder and no model it could fetch (stsbench.encoders.resolve)
_UNKNOWN_MODEL = re.compile(
    r"\bmodel '(?P<name>[^']+)' (?:is not a local folder|is neither a folder|from the Hugging Face hub)"
)
CUTOFF = 0.8  # difflib's ratio: a changed character or two in a name of 15


def known_models() -> list[str]:
    """The model names stsbench knows without the hub: embedded, the packaged configs', the local hub cache's."""
    import yaml

    names = {EMBEDDED_DEFAULT, f"sentence-transformers/{EMBEDDED_DEFAULT}"}
    for config in config_names():
        try:
            model = (yaml.safe_load(config_path(config).read_text(encoding="utf-8")) or {}).get("model")
        except (OSError, yaml.YAMLError, AttributeError):
            continue
        if isinstance(model, str):
            names.add(model)
    try:
        from huggingface_hub import scan_cache_dir

        names.update(r.repo_id for r in scan_cache_dir().repos if r.repo_type == "model")
    except Exception:  # noqa: BLE001, S110 - no cache, or one it cannot read: the names above
        pass
    return sorted(names)


def _owner_less(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def nearest_model(name: str, known: list[str] | None = None) -> str | None:
    """The full hub id of the known model closest to ``name`` (case aside), or None: none is close, or it is ``name``.

    A bare ``name`` (no owner) is matched against the known names without their owners too, so ``all-minilm-l6-v3``
    and ``all-MiniLM-L12-v2`` (in the local hub cache as ``sentence-transformers/all-MiniLM-L12-v2``) find theirs.
    """
    known = known_models() if known is None else known
    # a known hub id by its name without the owner (the first owner sorted where two share a name), and a bare
    # known name under its owner where one is known: the embedded all-MiniLM-L6-v2 as sentence-transformers'
    owned = {_owner_less(k).lower(): k for k in sorted(known, reverse=True) if "/" in k}
    by_lower = {k.lower(): owned.get(k.lower(), k) for k in known}
    if "/" not in name:
        by_lower = {**owned, **by_lower}
    full = by_lower.get(name.lower())
    if full is not None:
        return None if full.lower() == name.lower() else full
    near = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=CUTOFF)
    return by_lower[near[0]] if near else None


def suggestions(name: str, known: list[str] | None = None) -> list[str]:
    """The full hub ids ``name`` may have meant: the nearest known one, and ``name`` under its owner when bare."""
    near = nearest_model(name, known)
    if near is None:
        return []
    found = [near]
    if "/" not in name and "/" in near and _owner_less(near).lower() != name.lower():
        found.append(f"{near.rsplit('/', 1)[0]}/{name}")  # not a typo but another model of that owner
    return found


def with_suggestion(message: str) -> str:
    """``message`` with ``; did you mean ID?`` after it when it is a model lookup's failure for a near name."""
    found = _UNKNOWN_MODEL.search(message)
    if found is None:
        return message
    names = suggestions(found["name"])
    return f"{message}; did you mean {' or '.join(names)}?" if names else message
