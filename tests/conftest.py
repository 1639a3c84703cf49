from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

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


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-bert")


@pytest.fixture(scope="module")
def tokenizer():
    """all-MiniLM-L6-v2's tokenizer, the tiny BERTs' vocabulary."""
    from transformers import AutoTokenizer

    from stsbench.encoders.resolve import embedded_model_path

    return AutoTokenizer.from_pretrained(embedded_model_path())


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    """The trainer tests' tiny BERT (``tiny``, BERT's init), a train file, an NLI csv and a 40-pair STS-B dev."""
    import numpy as np

    root = tmp_path_factory.mktemp("train")
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


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA / "downstream").is_dir():
        pytest.skip(f"shared data not found at {DATA}")
    return DATA


@pytest.fixture()
def cache_dir(tmp_path) -> Path:
    return tmp_path / "cache"


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


@pytest.fixture
def one_thread():
    """Run a test on one torch thread: the machine is shared, and 1 thread keeps the numbers bit-stable."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
