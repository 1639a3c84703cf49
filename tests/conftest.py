from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("STSBENCH_SHARED", ROOT.parent / "shared"))
DATA = SHARED / "data"
REFERENCE = SHARED / "reference" / "senteval"
# benchmarks/oracle.py drives SimCSE's SentEval fork for the benchmarks and the tests alike
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))


def make_tiny_bert(path: Path, seed: int = 0, nan: bool = False, pooler: bool = True) -> Path:
    """A random-init 2-layer BERT with all-MiniLM-L6-v2's tokenizer, saved as a HF folder."""
    import torch
    import transformers
    from transformers import AutoTokenizer, BertConfig, BertModel

    transformers.utils.logging.disable_progress_bar()
    from stsbench.encoders.resolve import embedded_model_path

    torch.manual_seed(seed)
    cfg = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        initializer_range=0.2,
    )  # 0.02 gives near-identical vectors whose ranks are float noise
    model = BertModel(cfg, add_pooling_layer=pooler)
    if nan:
        with torch.no_grad():
            model.embeddings.word_embeddings.weight.fill_(float("nan"))
    model.save_pretrained(path)
    AutoTokenizer.from_pretrained(embedded_model_path()).save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def tiny_bert(tmp_path_factory) -> Path:
    return make_tiny_bert(tmp_path_factory.mktemp("models") / "tiny-bert")


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
