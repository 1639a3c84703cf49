"""What the tests share besides fixtures: paths, the tiny BERTs, the CLI harness, what several test files use.

A plain module (``from helpers import ...``), so that it is imported once, under one name; the fixtures are in
``conftest.py``, which pytest loads itself.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
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


# --- the command line ---------------------------------------------------------------------------------------


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


def on_pythonpath(folder: Path, **env: str) -> dict[str, str]:
    """This process's environment with ``folder`` first on PYTHONPATH, and ``env`` set."""
    path = os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, **env}


def plugin_folder(root: Path, modules: dict[str, str], entry_points: str) -> Path:
    """``root`` that, on PYTHONPATH, installs a plugin: its ``modules`` (name: source) and their entry points."""
    for name, source in modules.items():
        (root / f"{name}.py").write_text(source)
    dist = root / f"{next(iter(modules))}-0.1.dist-info"
    dist.mkdir()
    (dist / "entry_points.txt").write_text(entry_points)
    return root


# what a run on cached embeddings must not import (transformers and sentence-transformers pull torch; the
# report stack pulls matplotlib, pandas and seaborn; scipy.stats costs a third of torch)
HEAVY = (
    "torch",
    "transformers",
    "sentence_transformers",
    "matplotlib",
    "pandas",
    "seaborn",
    "scipy.stats",
    "sklearn",
)


def run_cli_watching(args: list[str], watch: tuple[str, ...] = HEAVY) -> tuple[int, str, str, list[str]]:
    """``stsbench ARGS`` in a new interpreter: exit code, stdout, stderr, and which ``watch`` modules it imported."""
    code = (
        "import json, sys\n"
        f"sys.argv = ['stsbench', *{[str(a) for a in args]!r}]\n"
        "from stsbench.cli import main\n"
        "code = 0\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        f"heavy = [m for m in {watch!r} if m in sys.modules]\n"
        "print(json.dumps({'code': code, 'heavy': heavy}), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    *err, last = done.stderr.strip().splitlines() or [""]
    status = json.loads(last)
    return status["code"], done.stdout, "\n".join(err), status["heavy"]


def one_error_line(code: int, err: str, status: int = 2) -> str:
    """The one ``error:`` line of ``err``, asserting that it is the only one and the exit code is ``status``."""
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("error:")]
    assert code == status and len(lines) == 1, err
    return lines[0]


def one_line(exc, *needles: str) -> str:
    """The message of the raised ``exc``: one line, holding each of ``needles``."""
    msg = str(exc.value)
    assert "\n" not in msg, msg
    for n in needles:
        assert n in msg, msg
    return msg


# --- the trainer tests --------------------------------------------------------------------------------------


def make_train_files(root: Path) -> Path:
    """The trainer tests' tiny BERT (``tiny``, BERT's init), a train file, an NLI csv and a 40-pair STS-B dev."""
    import numpy as np

    make_tiny_bert(root / "tiny", max_positions=128, init_range=0.02)
    rng = np.random.default_rng(0)
    lines = [
        f"{SENTENCES[i % 12]} {SENTENCES[(i * 5 + 1) % 12]}" if i % 3 else SENTENCES[i % 12]
        for i in range(30)
    ]
    (root / "train.txt").write_text("\n".join(lines) + "\n")
    rows = ["sent0,sent1,hard_neg"] + [
        f'"{SENTENCES[i]}","{SENTENCES[(i + 1) % 12]}","{SENTENCES[(i + 6) % 12]}"' for i in range(12)
    ]
    (root / "nli.csv").write_text("\n".join(rows) + "\n")
    sts = root / "data" / "downstream" / "STS" / "STSBenchmark"
    sts.mkdir(parents=True)
    dev = [
        f"main-captions\tMSRvid\t2012test\t{i:04d}\t{rng.uniform(0, 5):.3f}\t{SENTENCES[i % 12]}\t"
        f"{SENTENCES[(i * 7 + 3) % 12]}"
        for i in range(40)
    ]
    (sts / "sts-dev.csv").write_text("\n".join(dev) + "\n")
    return root


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


def build_tiny(files: Path, out: Path, **kw) -> tuple:
    """``train_config``'s model (in train mode), tokenizer and method, built on the CPU."""
    from stsbench.train.loop import build

    model, tokenizer, method, _ = build(train_config(files, out, **kw), files / "tiny", "cpu")
    return model.train(), tokenizer, method


def train_args(files: Path, out: Path, *extra: str) -> list[str]:
    """``stsbench train`` options: two SimCSE steps over the ``files`` fixture into ``out``, then ``extra``."""
    return [
        "train",
        "--method",
        "simcse",
        "--model",
        str(files / "tiny"),
        "--train-file",
        str(files / "train.txt"),
        "--data-dir",
        str(files / "data"),
        "--output",
        str(out),
        "--batch-size",
        "4",
        "--max-steps",
        "2",
        "--eval-steps",
        "2",
        "--eval-batch-size",
        "16",
        "--no-eval-at-start",
        "--lr",
        "1e-3",
        "--threads",
        "1",
        *extra,
    ]


def train_seed(files: Path, folder: Path, seed: int, method: str = "simcse") -> None:
    """One seed trained in this process with :func:`train_args`' options, into ``folder`` (``OUT/seed-<s>``)."""
    from stsbench.train.loop import train

    opts = {"max_steps": 2, "eval_steps": 2, "eval_at_start": False, "lr": 1e-3, "seed": seed}
    train(train_config(files, folder, method=method, **opts), show_progress=False)


def cos(a, b) -> float:
    """The cosine of two vectors, looped."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def by_hand(h, hp, queue=(), hard=(), w=0.0, tau=0.05) -> float:
    """The mean InfoNCE of ``h`` against its positives ``hp``, looped: eq. (2), eq. (7) with a ``queue``, or
    ``hard`` negatives weighted ``w``."""
    losses = []
    for i in range(len(h)):
        den = sum(math.exp(cos(h[i], p) / tau) for p in hp)
        den += sum(math.exp(cos(h[i], q) / tau) for q in queue)
        den += sum(math.exp(cos(h[i], n) / tau + (w if i == j else 0.0)) for j, n in enumerate(hard))
        losses.append(-math.log(math.exp(cos(h[i], hp[i]) / tau) / den))
    return sum(losses) / len(h)


class Killed(Exception):
    """Raised from a training's ``on_step`` to stop it there, as a killed process would."""


def weights(out: Path) -> dict:
    """The tensors of a training's last checkpoint (``out/last/state.pt``): model, method, queue, by name."""
    import torch

    state = torch.load(out / "last" / "state.pt", weights_only=True)
    return {
        **{f"model.{k}": v for k, v in state["model"].items()},
        **{f"method.{k}": v for k, v in state["method"].items()},
        "queue": state["method_extra"]["queue"]["items"],
    }


# the CUDA-graph and static-step tests' sentences: 24 lines of them make 6 full batches of 4
SIX_SENTENCES = [
    "a man is playing a guitar .",
    "the cat sleeps on the warm mat .",
    "stocks fell sharply on monday after the report .",
    "two dogs run across the green field .",
    "she plays the piano every evening .",
    "scientists discovered a new species of frog .",
]


def graph_config(tiny_bert, data_dir, tmp_path, **kw):
    """A SimCSE config over 24 pairs of :data:`SIX_SENTENCES` written to ``tmp_path`` (batch 4), and ``kw``."""
    from stsbench.train.config import make_config

    tmp_path.mkdir(parents=True, exist_ok=True)
    train_file = tmp_path / "train.txt"
    train_file.write_text(
        "\n".join(f"{s} {SIX_SENTENCES[(i + 2) % 6]}" for i, s in enumerate(SIX_SENTENCES * 4)) + "\n"
    )
    opts = {
        "method": "simcse",
        "model": str(tiny_bert),
        "train_file": str(train_file),
        "output": str(tmp_path / "out"),
        "data_dir": str(data_dir),
        "batch_size": 4,
        "eval_steps": 100,
        "save_steps": 100,
        "eval_batch_size": 64,
        **kw,
    }
    return make_config(opts)


def eager_and_graphed_losses(
    tiny_bert, data_dir, tmp_path, graphs: tuple[bool, ...] = (False, True), **kw
) -> dict[bool, list[float]]:
    """16 dropout-free CUDA steps run eagerly (False) and replayed from a CUDA graph (True): each run's losses."""
    from stsbench.train.loop import train

    losses = {}
    for graph in graphs:
        cfg = graph_config(
            tiny_bert,
            data_dir,
            tmp_path / str(graph),
            cuda_graph=graph,
            pad_to_max_length=True,
            device="cuda",
            dropout=0.0,
            max_steps=16,
            log_steps=1,
            **kw,
        )
        train(cfg, show_progress=False)
        log = (tmp_path / str(graph) / "out" / "train_log.jsonl").read_text().splitlines()
        losses[graph] = [json.loads(x)["loss"] for x in log if json.loads(x)["event"] == "train"]
    return losses


def loop_or_static_steps(tiny_bert, data_dir, tmp_path, static: bool, steps: int, **opts):
    """``steps`` training steps of the loop's kind (static: through :class:`StaticSteps`), their losses and state."""
    import numpy as np

    from stsbench.data.training import read_train_file
    from stsbench.train.config import make_config
    from stsbench.train.data import batch_rows
    from stsbench.train.graph import StaticSteps
    from stsbench.train.loop import build, seed_everything
    from stsbench.train.schedule import batches_per_epoch
    from stsbench.train.step import FiniteWatch, Precision, train_step

    train_file = tmp_path / "train.txt"
    tmp_path.mkdir(parents=True)
    train_file.write_text("\n".join(SIX_SENTENCES * 4) + "\n")  # 6 full batches an epoch
    cfg = make_config(
        {
            "model": str(tiny_bert),
            "train_file": str(train_file),
            "output": str(tmp_path / "out"),
            "data_dir": str(data_dir),
            "batch_size": 4,
            "pad_to_max_length": True,
            "length_buckets": 1,
            "max_length": 16,
            **opts,
        }
    )
    seed_everything(cfg.seed)
    model, _, method, optimizer = build(cfg, tiny_bert, "cpu")
    method.start(steps)
    watch = FiniteWatch("cpu")
    static_steps = StaticSteps(
        model, method, optimizer, max_grad_norm=cfg.max_grad_norm, precision=Precision(), watch=watch
    )
    data = read_train_file(train_file)
    losses, parts_seen, shapes = [], [], set()
    for step in range(steps):
        epoch, index = divmod(step, batches_per_epoch(len(data), cfg.batch_size))
        if index == 0:
            method.on_epoch_start(epoch)
        rows = batch_rows(data, seed=cfg.seed, epoch=epoch, index=index, batch_size=cfg.batch_size)
        rng = np.random.default_rng([cfg.seed, epoch, index, 1])
        views = method.make_views([data.rows[i] for i in rows], rows, rng)
        shapes.add(tuple(t["input_ids"].shape for t in (views.anchor, views.positive) if t is not None))
        lr = cfg.lr * (1 - step / steps)
        if static:
            loss, parts = static_steps(views, lr=lr, step=step + 1)
        else:
            loss, parts = train_step(
                model,
                method,
                optimizer,
                views,
                lr=lr,
                max_grad_norm=cfg.max_grad_norm,
                watch=(watch, step + 1),
            )
        losses.append(float(loss))
        parts_seen.append({k: float(v) for k, v in parts.items()})
    watch.check()
    queue = method.queue.negatives()
    return losses, parts_seen, shapes, queue, method, model


# --- the analysis tests -------------------------------------------------------------------------------------


class CountingEncoder:
    """Deterministic bag-of-words vectors (blake2b buckets); counts every text it is asked to encode."""

    def __init__(self, dim: int = 16) -> None:
        from stsbench.encoders.base import EncoderInfo

        self.dim = dim
        self.encoded = 0
        self.info = EncoderInfo("fake", "/nonexistent", f"fake-{dim}", "avg", None, "float32", "fake")

    def encode(self, texts, batch_size: int = 128, show_progress: bool = True):
        import hashlib

        import numpy as np

        self.encoded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.split():
                out[i, hashlib.blake2b(w.encode(), digest_size=2).digest()[0] % self.dim] += 1.0
            out[i, 0] += 0.1  # no zero rows
        return out


def table_of(mapping: dict[str, list[float]]):
    """An :class:`EmbeddingTable` of ``mapping``'s texts and vectors (float32)."""
    import numpy as np

    from stsbench.encoders.base import EmbeddingTable

    return EmbeddingTable(list(mapping), np.array(list(mapping.values()), dtype=np.float32))


_WORDS = "the a cat dog sat ran on mat park big small red blue house tree car road".split()


def make_data_dir(root: Path, pairs_per_file: int = 6, equal_lengths_stsb: bool = False) -> Path:
    """A SentEval-shaped folder: every STS12-16 subset, STS-B and SICK test (+ STS-B dev) with random text."""
    import numpy as np

    from stsbench.data.sts import STS_SUBSETS

    rng = np.random.default_rng(0)

    def sentence(n: int) -> str:
        return " ".join(rng.choice(_WORDS, size=n))

    def pair(i: int, equal: bool = False) -> tuple[str, str]:
        n1 = 3 + i % 4
        n2 = n1 if equal else n1 + (i * 3) % 9
        return sentence(n1), sentence(n2)

    for task, subsets in STS_SUBSETS.items():
        folder = root / "downstream" / "STS" / f"{task}-en-test"
        folder.mkdir(parents=True)
        for sub in subsets:
            ps = [pair(i) for i in range(pairs_per_file)]
            (folder / f"STS.input.{sub}.txt").write_text("".join(f"{a}\t{b}\n" for a, b in ps))
            (folder / f"STS.gs.{sub}.txt").write_text(
                "".join(f"{i % 6 * 0.9:.1f}\n" for i in range(pairs_per_file))
            )
    stsb = root / "downstream" / "STS" / "STSBenchmark"
    stsb.mkdir(parents=True)
    for split, n in (("test", 12), ("dev", 10)):
        rows = []
        for i in range(n):
            a, b = pair(i, equal=equal_lengths_stsb)
            rows.append(f"main-captions\tMSRvid\t2012test\t{i:04d}\t{i % 6 * 0.95:.2f}\t{a}\t{b}\n")
        (stsb / f"sts-{split}.csv").write_text("".join(rows))
    sick = root / "downstream" / "SICK"
    sick.mkdir(parents=True)
    lines = ["pair_ID\tsentence_A\tsentence_B\trelatedness_score\tentailment_judgment\n"]
    for i in range(10):
        a, b = pair(i)
        lines.append(f"{i}\t{a}\t{b}\t{1 + i % 5 * 0.9:.1f}\tNEUTRAL\n")
    (sick / "SICK_test_annotated.txt").write_text("".join(lines))
    return root


def mock_pairs(scale=(0.0, 5.0)):
    """Six pairs of hand-set lengths and cosines, and their :class:`EmbeddingTable` (gold on ``scale``)."""
    import numpy as np

    from stsbench.data.sts import Pairs

    # length differences 0, 3, 4, 1, 3, 7 (words); cosines set directly by 2-d unit vectors at the given angle
    s1 = ["a", "a b c d", "a", "a b", "x y z w", "q"]
    s2 = ["b", "e", "b c d e f", "c", "v", "r s t u v w o p"]
    cos = [0.9, 0.5, 0.1, 0.8, 0.3, -0.2]
    vecs = {}
    for a, b, c in zip(s1, s2, cos, strict=True):
        vecs[a] = [1.0, 0.0]
        vecs[b] = [c, math.sqrt(1 - c * c)]
    gold = (
        np.array([4.5, 2.0, 1.0, 5.0, 2.5, 0.0])
        if scale == (0.0, 5.0)
        else np.array([4.6, 2.6, 1.8, 5.0, 3.0, 1.0])
    )
    return Pairs("MOCK", s1, s2, gold, ["x"] * 6, scale), table_of(vecs)


# --- the published numbers' and the docs' tests -------------------------------------------------------------

# MTEB's published all-MiniLM-L6-v2 figures (the registry's mteb/all-MiniLM-L6-v2 row)
MTEB = {"STS12": 72.37, "STS13": 80.60, "STS14": 75.59, "STS15": 85.39, "STS16": 78.99, "STSBenchmark": 82.03}


def write_result(
    root: Path,
    task: str,
    reported: float,
    model: str = "all-MiniLM-L6-v2",
    pooler: str = "avg",
    mode: str = "test",
) -> Path:
    """A task result of ``reported`` where ``stsbench run`` writes it: ``root/model/pooler/mode/task.json``."""
    from stsbench.files import atomic_write_json
    from stsbench.results.schema import ModelInfo, Provenance, TaskResult

    result = TaskResult(
        task=task,
        task_type="sts",
        mode=mode,
        reported=reported,
        metric="spearman_all",
        scores={"all": {"spearman": reported / 100}},
        model=ModelInfo(model, f"/models/{model}", "f" * 16, pooler, 256, "float32", "sentence-transformers"),
        config={"seed": 1111},
        provenance=Provenance("0.1.0", None, "2024-01-01T00:00:00Z", {}, "cpu", {}, {"encode": 1.0}),
        n_pairs=10,
    )
    return atomic_write_json(root / model / pooler / mode / f"{task}.json", result.to_dict())


RUN_MARK = "<!-- run -->"  # the line before a docs example that the tests run


@dataclass(frozen=True)
class Block:
    """A fenced code block: where it is, its info string, its text, and whether ``<!-- run -->`` marks it."""

    page: Path
    line: int  # 1-based line of the opening fence
    end: int  # 1-based line of the closing fence
    info: str
    body: str
    marked: bool

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def fenced_blocks(page: Path) -> list[Block]:
    """The page's fenced blocks (```), each with whether the line before its fence is the run marker."""
    import re

    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        fence = re.match(r"^\s*(`{3,})(.*)$", lines[i])
        if not fence:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip().startswith(fence.group(1)))
        marked = i > 0 and lines[i - 1].strip() == RUN_MARK
        body = "\n".join(lines[i + 1 : end])
        blocks.append(Block(page, i + 1, end + 1, fence.group(2).strip(), body, marked))
        i = end + 1
    return blocks


def block_after(page: Path, mark: str) -> str:
    """The body of the one fenced block of ``page`` whose fence follows a ``mark`` line (``<!-- recipe -->``)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks = [b for b in fenced_blocks(page) if lines[b.line - 2].strip() == mark]
    assert len(blocks) == 1, f"{page.name}: one block after {mark}, found {len(blocks)}"
    return blocks[0].body


# --- report and reproduction folders ------------------------------------------------------------------------


def folder_digests(folder: Path) -> dict[str, str]:
    """Every file below ``folder``: its POSIX path relative to ``folder`` -> the sha256 of its bytes.

    Tests compare folders by these, never by whole contents: pytest's diff of two dicts of whole files (a 660 KB
    report.html) ran for half an hour.
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
    made_md, kept_md = (
        version.sub(r"\1", (f / "report.md").read_text(encoding="utf-8")) for f in (made, kept)
    )
    same = (
        made_md == kept_md
    )  # compared apart: pytest's diff of two whole reports is what the message replaces
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
