"""What the tests share besides fixtures: paths, the tiny BERTs, the trainer tests' sentences, the CLI harness.

A plain module (``from helpers import ...``), so that it is imported once, under one name; the fixtures are in
``conftest.py``, which pytest loads itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("STSBENCH_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "data"
REFERENCE = SHARED / "reference" / "senteval"
# the trainer tests' sentences: their train file, NLI csv and STS-B dev
SENTENCES = [
    "a man is playing a guitar .",
    "a woman is slicing an onion .",
    "the cat sleeps on the warm mat .",
    "stocks fell sharply on monday after the report .",
    "two dogs run across the green field .",
    "the river flooded the small village last spring .",
    "a child reads a book under a tree .",
    "the committee approved the new budget .",
    "rain is expected for most of the week .",
    "she plays the piano every evening .",
    "the train to boston was delayed by an hour .",
    "scientists discovered a new species of frog .",
]
# benchmarks/oracle.py drives SimCSE's SentEval fork for the benchmarks and the tests alike
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))


def build_tiny_bert(
    *,
    seed: int = 0,
    dropout: float = 0.1,
    max_positions: int = 128,
    init_range: float = 0.02,
    pooler: bool = True,
):
    """The tests' one tiny random-init BERT: 2 layers of 32 dims, 2 heads, all-MiniLM-L6-v2's 30,522 word pieces.

    The defaults (BERT's own init) are the trainer tests' model; :func:`make_tiny_bert` saves the evaluation
    tests' wider-init one. ``seed`` seeds torch's global generator, which draws the weights.
    """
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=max_positions,
        initializer_range=init_range,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
    )
    return BertModel(cfg, add_pooling_layer=pooler)


def make_tiny_bert(
    path: Path,
    seed: int = 0,
    nan: bool = False,
    pooler: bool = True,
    *,
    max_positions: int = 512,
    init_range: float = 0.2,  # 0.02 gives near-identical vectors whose ranks are float noise
) -> Path:
    """:func:`build_tiny_bert` with all-MiniLM-L6-v2's tokenizer, saved as a HF folder."""
    import torch
    import transformers
    from transformers import AutoTokenizer

    transformers.utils.logging.disable_progress_bar()
    from stsbench.encoders.resolve import embedded_model_path

    model = build_tiny_bert(seed=seed, max_positions=max_positions, init_range=init_range, pooler=pooler)
    if nan:
        with torch.no_grad():
            model.embeddings.word_embeddings.weight.fill_(float("nan"))
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(embedded_model_path()).save_pretrained(path)
    return path


def run_cli(args: list[str], capsys) -> tuple[int, str, str]:
    """Run the console entry point in-process; returns (exit code, stdout, stderr)."""
    from stsbench.cli import main

    old = sys.argv
    sys.argv = ["stsbench", *map(str, args)]
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        sys.argv = old
    out, err = capsys.readouterr()
    return code, out, err


def count_hf_encodes(monkeypatch) -> list[int]:
    """From now on, the number of texts of each ``HFEncoder.encode`` call (what was encoded, not read from a cache)."""
    from stsbench.encoders import hf

    calls: list[int] = []
    real = hf.HFEncoder.encode

    def counting(self, texts, *args, **kwargs):
        calls.append(len(texts))
        return real(self, texts, *args, **kwargs)

    monkeypatch.setattr(hf.HFEncoder, "encode", counting)
    return calls


def run_cli_process(
    args: list[str], *, env: dict[str, str] | None = None, timeout: float = 900
) -> subprocess.CompletedProcess:
    """Run ``python -m stsbench ARGS`` in a fresh process (what a user's shell gets: exit code, stdout, stderr)."""
    return subprocess.run(
        [sys.executable, "-m", "stsbench", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def train_config(files: Path, out: Path, **kw):
    """The trainer tests' tiny config over the ``files`` fixture (ESimCSE, batch 4, a dev check every 3 steps)."""
    from stsbench.train.config import make_config

    opts = {
        "method": "esimcse",
        "model": str(files / "tiny"),
        "train_file": str(files / "train.txt"),
        "output": str(out),
        "data_dir": str(files / "data"),
        "batch_size": 4,
        "eval_steps": 3,
        "eval_batch_size": 16,
        "log_steps": 1,
        **kw,
    }
    return make_config(opts)


def folder_digests(folder: Path) -> dict[str, str]:
    """Every file below ``folder``: its POSIX path relative to ``folder`` -> the sha256 of its bytes.

    Tests compare folders by these, never by whole contents: pytest's diff of two dicts of whole files (a 660 KB
    report.html) ran for half an hour (#51.14).
    """
    import hashlib

    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def same_files(made: dict[str, str], kept: dict[str, str]) -> str:
    """Empty when two :func:`folder_digests` agree, else a short line naming the first difference."""
    only = sorted(set(made) ^ set(kept))
    if only:
        return f"{len(only)} file(s) in one folder only, first {only[0]} ({'made' if only[0] in made else 'kept'})"
    differ = [k for k in sorted(made) if made[k] != kept[k]]
    return f"{len(differ)} file(s) differ, first {differ[0]}" if differ else ""


def first_difference(a: str, b: str) -> str:
    """The first line where two texts differ, both sides (a short message, not a diff of the whole texts)."""
    left, right = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(left, right, strict=False), start=1):
        if x != y:
            return f"line {i}: {x[:200]!r} != {y[:200]!r}"
    return f"{len(left)} line(s) against {len(right)}"


def assert_same_report(made: Path, kept: Path, skip: Callable[[str], bool] = lambda name: False) -> None:
    """A regenerated report folder ``made`` is the checked-in one ``kept``, byte for byte (files ``skip`` aside).

    report.md names the matplotlib (and seaborn) that drew; the text must agree under any versions of them,
    the figures only under the versions that drew the checked-in ones (CI's dependency-floor venv differs):
    under other versions the test is skipped after the text is checked.
    """
    import re

    import matplotlib
    import pytest
    import seaborn

    version = re.compile(r"(matplotlib|seaborn) [0-9][0-9A-Za-z.]*")
    made_md, kept_md = (version.sub(r"\1", (f / "report.md").read_text(encoding="utf-8")) for f in (made, kept))
    same = made_md == kept_md  # compared apart: pytest's diff of two whole reports is what the message replaces
    assert same, f"report.md differs at {first_difference(made_md, kept_md)}"
    drawn_by = [f"matplotlib {matplotlib.__version__}", f"seaborn {seaborn.__version__}"]
    if not all(name in (kept / "report.md").read_text(encoding="utf-8") for name in drawn_by):
        pytest.skip(f"figures were drawn with other versions than {', '.join(drawn_by)}")
    mine = {k: v for k, v in folder_digests(made).items() if not skip(k)}
    theirs = {k: v for k, v in folder_digests(kept).items() if not skip(k)}
    differs = same_files(mine, theirs)
    assert not differs, differs


def reproduction_figures(out: Path, *, logs: bool = False) -> dict[str, str]:
    """Every figure of a ``stsbench reproduce`` folder's results (task results and analyses), by file and field.

    ``logs``: each training's logged steps too (event, step, loss, dev Spearman), from ``OUT/runs``.
    """
    import json

    found = {}
    for f in sorted((out / "results").rglob("*.json")):
        data = json.loads(f.read_text())
        for key in ("reported", "scores", "interval", "result", "tasks"):
            if key in data:
                found[f"{f.relative_to(out)}:{key}"] = json.dumps(data[key], sort_keys=True)
    for log in sorted((out / "runs").rglob("train_log.jsonl")) if logs else []:
        records = [json.loads(ln) for ln in log.read_text().splitlines() if ln.strip()]
        steps = [
            (r["event"], r["step"], r.get("loss"), r.get("dev_spearman")) for r in records if "time" in r
        ]
        found[str(log.relative_to(out))] = json.dumps(steps)
    return found


def reproduce_step(out: Path, step: str) -> dict:
    """The state ``OUT/reproduce.json`` records of ``step`` (``{}`` before it is written or while half-read)."""
    import json

    try:
        return json.loads((out / "reproduce.json").read_text())["steps"].get(step, {})
    except (OSError, ValueError):
        return {}


# one run (SimCSE on the tiny BERT, two seeds), the reproduce and Slurm tests' recipe
_TINY_RECIPE = """name: {name}
title: "{title}"
flavour: mini
{verdict}runs:
  - name: simcse
    method: simcse
    config: simcse-minilm-cpu
    overrides: {{model: {model}, train_file: {train}, train_lines: null, max_steps: {steps}, eval_steps: {eval_steps},
                {save}batch_size: 4, eval_batch_size: 64, lr: 1.0e-3, eval_at_start: false}}
    seeds: [1, 2]
    evaluate: {{tasks: [STSBenchmark], mode: dev}}
{run_published}{analyses}{claims}report:
  title: "{title}"
"""


def tiny_recipes(root: Path, recipes: dict[str, dict]) -> Path:
    """``root`` with a tiny BERT (``tiny/``), a 30-line ``train.txt`` and a recipe file per ``recipes`` entry.

    Each entry (file name -> options) sets ``name``, ``title``, ``steps``, and optionally ``eval_steps`` (2),
    ``save_steps`` (the config's), ``analyses`` (True: align_uniform on the first seed) and ``published`` (a
    registry key of a row on STS-B dev: the run is judged against it; else ``verdict: false``) and ``claims``
    (YAML lines of the recipe's claims, under ``claims:``).
    """
    make_tiny_bert(root / "tiny", max_positions=128, init_range=0.02)
    lines = [f"{SENTENCES[i % 12]} {SENTENCES[(i * 5 + 1) % 12]}" for i in range(30)]
    (root / "train.txt").write_text("\n".join(lines) + "\n")
    for file, opts in recipes.items():
        save = f"save_steps: {opts['save_steps']}, " if opts.get("save_steps") else ""
        analyses = "analyses:\n  - {name: align_uniform}\n" if opts.get("analyses", True) else ""
        key = opts.get("published")
        text = _TINY_RECIPE.format(
            name=opts["name"],
            title=opts["title"],
            verdict=f"published: [{key}]\n" if key else "verdict: false\nverdict_reason: a tiny test run\n",
            model=root / "tiny",
            train=root / "train.txt",
            steps=opts["steps"],
            eval_steps=opts.get("eval_steps", 2),
            save=save,
            run_published=f"    published: {key}\n" if key else "",
            analyses=analyses,
            claims=f"claims:\n{opts['claims']}" if opts.get("claims") else "",
        )
        (root / file).write_text(text)
    return root


def shared_once(tmp_path_factory, name: str, make) -> Path:
    """``make(folder)`` once per test session (under xdist, once for all workers); returns ``folder``.

    The folder lives in the session's temporary folder (the one the xdist workers share), made under a lock and
    marked done, so that a test module and a worker that come later find it ready.
    """
    from filelock import FileLock

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the session's folder, which the xdist workers share
    folder = base / name
    with FileLock(f"{folder}.lock"):
        if not (base / f"{name}.done").is_file():
            if folder.exists():  # a half-made one (a worker that failed): start again
                import shutil

                shutil.rmtree(folder)
            folder.mkdir(parents=True)
            make(folder)
            (base / f"{name}.done").write_text("")
    return folder


# the reproduce and Slurm tests' recipe: 6 steps saved every 2 (a training stopped after step 2 has a state to
# resume), one dev check at the end, an analysis, the verdict against a published row (ESimCSE's STS-B dev figure
# of unsup SimCSE: one task, so that the evaluation is STS-B dev's 1,500 pairs, not the seven STS test sets)
TINY = {
    "name": "tiny",
    "title": "A tiny reproduction",
    "steps": 6,
    "eval_steps": 6,
    "save_steps": 2,
    "published": "esimcse-arxiv/table4/unsup-simcse-bert-base",
    # a claim the report judges over the two seeds: the tiny BERT's best STS-B dev is nowhere near 90
    "claims": '  - {kind: collapse, settings: [simcse], below: 90, figure: best-dev, text: "far below 90"}\n',
}


def tiny_folder(tmp_path_factory) -> Path:
    """:func:`tiny_recipes`' folder with ``tiny.yaml`` (:data:`TINY`), made once for the session."""
    return shared_once(tmp_path_factory, "tiny-recipe", lambda root: tiny_recipes(root, {"tiny.yaml": TINY}))


def reproduce_status(out: Path) -> int:
    """The exit status a finished reproduction in ``out`` ends with: 1 when its verdict says some published
    figure was not reproduced (``OUT/reproduction.json``), else 0 (docs/commands.md, exit codes)."""
    path = Path(out) / "reproduction.json"
    if not path.is_file():
        return 0
    cells = [c for t in json.loads(path.read_text())["targets"] for c in t["cells"]]
    return int(any(c["verdict"] == "not reproduced" for c in cells))


def tiny_reproduction(tmp_path_factory) -> Path:
    """The uninterrupted reproduction of :func:`tiny_folder`'s ``tiny.yaml`` (its ``--out``), by the local
    executor with two processes; made once for the session (:func:`shared_once`)."""
    recipe = tiny_folder(tmp_path_factory) / "tiny.yaml"

    def make(root: Path) -> None:
        env = {**os.environ, "STSBENCH_DATA": str(DATA)}
        args = ["reproduce", recipe, "--out", root / "clean", "--parallel", "2"]
        done = run_cli_process(args, env=env, timeout=900)
        assert done.returncode == reproduce_status(root / "clean"), done.stdout + done.stderr

    return shared_once(tmp_path_factory, "tiny-reproduction", make) / "clean"
