"""The arithmetic behind the speed benchmarks (MFU, peaks, acceptance lines) and a tiny train_speed run."""

from __future__ import annotations

import re
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))
from flops import gpu_peak, matrix_params, step_flops  # noqa: E402
from speed_report import acceptance, report  # noqa: E402
from speed_timing import Run  # noqa: E402


@pytest.fixture(scope="module")
def bert_base():
    from transformers import BertConfig

    return BertConfig()


def test_a_bert_base_step_is_about_2_1_tflop(bert_base):
    # about 2.1 TFLOP: forward and backward over 2 x 64 x 32 tokens through 85M non-embedding params
    assert matrix_params(bert_base) == 12 * (4 * 768 * 768 + 2 * 768 * 3072) == 84_934_656
    simcse = step_flops("simcse", bert_base, 64, (32, 32))
    assert 2.09e12 < simcse < 2.13e12
    assert step_flops("official", bert_base, 64, (32, 32)) == simcse
    # ESimCSE adds the momentum encoder's forward of the anchor (a third of one view's forward + backward)
    esimcse = step_flops("esimcse", bert_base, 64, (32, 32))
    assert esimcse == pytest.approx(simcse * 7 / 6, rel=1e-3)
    # a longer repeated positive costs more
    assert step_flops("esimcse", bert_base, 64, (32, 40)) > esimcse
    # MoCoSE: target forward (1) + FGSM forward and input-gradient backward (2) + online step (3), one view
    mocose = step_flops("mocose", bert_base, 64, (32, 32))
    assert mocose == pytest.approx(simcse, rel=1e-2)
    assert step_flops("mocose", bert_base, 64, (32, 32), mocose_fgsm=False) == pytest.approx(
        simcse * 4 / 6, rel=1e-2
    )
    with pytest.raises(ValueError):
        step_flops("nope", bert_base, 64, (32, 32))


@pytest.mark.parametrize(
    ("name", "precision", "tflops"),
    [
        ("NVIDIA H100 80GB HBM3", "bf16", 989.0),
        ("NVIDIA H100 80GB HBM3", "tf32", 494.5),
        ("NVIDIA H100 80GB HBM3", "fp32", 67.0),
        ("NVIDIA H100 80GB HBM3", "fp16", 989.0),
        ("NVIDIA H100 PCIe", "bf16", 756.0),
        ("NVIDIA H200", "tf32", 494.5),
        ("NVIDIA A100-SXM4-80GB", "fp32", 19.5),
        ("NVIDIA A100-SXM4-80GB", "bf16", 312.0),
    ],
)
def test_gpu_peaks(name, precision, tflops):
    assert gpu_peak(name, precision) == tflops * 1e12


def test_unknown_gpu_has_no_peak():
    assert gpu_peak("Tesla T4", "bf16") is None


def timed(method, precision, mode, ms, flops=2.1e12):
    return Run(method, precision, mode, ms=[ms - 1, ms, ms + 5], tokens=[1000] * 3, flops=[flops] * 3)


H100 = {p: gpu_peak("NVIDIA H100 80GB HBM3", p) for p in ("fp32", "tf32", "bf16", "fp16")}


def test_acceptance_lines_judge_the_figures():
    runs = [
        timed("simcse", "bf16", "eager", 12.0),
        timed("esimcse", "bf16", "eager", 16.0),  # 1.33 > 1.3
        timed("mocose", "bf16", "eager", 17.0),  # 1.42 <= 1.5
        timed("simcse", "bf16", "compiled", 11.0),  # > 10 ms
        timed("official", "fp16", "eager", 40.0),  # 40 / 11 = 3.6x the fastest
    ]
    lines = "\n".join(acceptance(runs, H100, cuda=True))
    assert "SimCSE bf16 eager: 12.00 ms/step, budget 15.0 ms: holds" in lines
    assert "SimCSE bf16 compiled: 11.00 ms/step, budget 10.0 ms: FAILS" in lines
    assert "esimcse / simcse, bf16 eager: 1.33 (limit 1.3): FAILS" in lines
    assert "mocose / simcse, bf16 eager: 1.42 (limit 1.5): holds" in lines
    assert "3.64x (at least 3.0x): holds" in lines


def test_budgets_scale_with_a_slower_gpu():
    a100 = {p: gpu_peak("NVIDIA A100-SXM4-80GB", p) for p in ("fp32", "tf32", "bf16", "fp16")}
    lines = "\n".join(acceptance([timed("simcse", "bf16", "eager", 40.0)], a100, cuda=True))
    assert "budget 47.5 ms: holds" in lines  # 15 ms x 989 / 312


HEADER = dict.fromkeys(("shape", "device", "torch", "transformers", "date", "command"), "x")


def _report(header: dict, device: str, check: int, shape: tuple[int, int], **parts) -> str:
    """The report of ``parts`` (runs, checks, peak) for a batch of 64 x 32 tokens and a model of ``shape``."""
    sizes = {"batch_size": 64, "max_length": 32, "steps": 3, "warmup": 1}
    args = Namespace(device=device, train_file=Path("w.txt"), check_steps=check, **sizes)
    config = Namespace(num_hidden_layers=shape[0], hidden_size=shape[1])
    return report(header=header, args=args, config=config, **parts)


def test_cpu_floor_line_and_report():
    runs = [
        timed("simcse", "fp32", "eager", 100.0, flops=5e9),
        Run("mocose", "fp32", "eager", error="Boom: x"),
    ]
    peak = {p: 1e11 for p in ("fp32", "tf32", "bf16", "fp16")}  # floor 50 ms
    lines = "\n".join(acceptance(runs, peak, cuda=False))
    assert "floor 50.0 ms" in lines and "2.00x (at most 1.5x): FAILS" in lines
    checks = [("simcse", "fp32", 0.0, None, None)]
    text = _report(HEADER, "cpu", 2, (2, 64), runs=runs, checks=checks, peak=peak)
    assert "| simcse | fp32 | eager | 100.00 | 10.0 | 10,000 | 0.005 | 50.0% |" in text
    assert "| mocose | fp32 | eager | failed: Boom: x |" in text
    assert "| simcse | fp32 | 0 |  | 0 | holds |" in text


def test_the_bf16_loss_bound_is_twice_the_measured_spread():
    """The bf16 check's limit comes from the fp32-vs-bf16 spread of the old step in the same run."""
    checks = [
        ("simcse", "bf16", 0.00187, 0.0011, None),  # within 2 x 0.0011
        ("esimcse", "bf16", 0.00245, 0.0010, None),  # beyond 2 x 0.0010
        ("mocose", "bf16", 0.001, None, None),  # the fp32 run failed: no bound to judge by
        ("simcse", "fp32", 0.0004, None, None),
        ("mocose", "fp32", None, None, "Boom"),
    ]
    text = _report(HEADER, "cuda", 20, (12, 768), runs=[], checks=checks, peak=H100)
    assert "| simcse | bf16 | 0.00187 | 0.0011 | 0.0022 | holds |" in text
    assert "| esimcse | bf16 | 0.00245 | 0.001 | 0.002 | FAILS |" in text
    assert "| mocose | bf16 | 0.001 |  | n/a | no spread measured |" in text
    assert "| simcse | fp32 | 0.0004 |  | 0.001 | holds |" in text
    assert "| mocose | fp32 | failed: Boom | | | |" in text


def test_train_speed_runs_on_cpu_with_a_tiny_model(tmp_path):
    out = tmp_path / "speed.md"
    cmd = [
        sys.executable,
        str(BENCH / "train_speed.py"),
        "--device",
        "cpu",
        "--tiny-shape",
        "--steps",
        "2",
        "--warmup",
        "1",
        "--check-steps",
        "2",
        "--methods",
        "simcse,esimcse",
        "--threads",
        "1",
        "--markdown",
        str(out),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert text.strip() in done.stdout
    for name in ("simcse", "esimcse", "official"):
        assert f"| {name} | fp32 | eager | " in text
    assert "failed" not in text
    # fp32 on CPU: the new loop's first losses equal the old step's to the bit
    assert "| simcse | fp32 | 0 |  | 0 | holds |" in text and "| esimcse | fp32 | 0 |  | 0 | holds |" in text


def test_isolated_rows_each_run_in_a_process_of_their_own(tmp_path):
    """--isolate (on CUDA by default): a row that breaks its process (a failed graph capture) breaks no other."""
    out = tmp_path / "speed.md"
    cmd = [sys.executable, str(BENCH / "train_speed.py"), "--device", "cpu", "--tiny-shape", "--steps", "2"]
    cmd += ["--warmup", "1", "--check-steps", "0", "--methods", "simcse", "--threads", "1", "--no-baseline"]
    cmd += ["--modes", "eager", "--isolate", "yes", "--markdown", str(out), "--profile-steps", "2"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "simcse fp32 eager: own process" in done.stderr and "(own process) ..." in done.stderr
    text = out.read_text()
    assert "| simcse | fp32 | eager | " in text and "failed" not in text
    # --profile-steps: the child's profile came back with its row (a missed goal comes with its profile)
    assert "Profiles: 2 more steps a row" in text
    assert re.search(r"\| simcse \| fp32 \| eager \| [\d.]+ \| [\d.]+ \| \d+% \| \d+ \|", text)
    assert "- simcse fp32 eager: `aten::" in text


def test_profile_summary_counts_overlapping_kernels_once():
    from speed_profile import busy_us, kind

    assert busy_us([(0, 10), (5, 12), (20, 25), (21, 22)]) == 17
    assert busy_us([]) == 0
    assert kind("sm90_xmma_gemm_bf16bf16_bf16f32") == "matmul" and kind("aten::addmm") == "matmul"
    assert kind("pytorch_flash::flash_fwd_kernel") == "attention"
    assert kind("multi_tensor_apply_kernel<FusedAdamMathFunctor>") == "optimizer"
    assert kind("vectorized_layer_norm_kernel") == "normalisation"
    assert kind("triton_poi_fused_gelu_0") == "other"


def test_a_failed_profile_keeps_its_row_and_says_why():
    from speed_profile import profile_lines

    ok = timed("simcse", "bf16", "graph", 12.0)
    ok.profile = {
        "steps": 10,
        "device": "cuda",
        "wall_ms": 12.0,
        "busy_ms": 10.5,
        "launches": 410.0,
        "kinds": {"matmul": 6.0, "attention": 1.0, "other": 3.5},
        "top": [["sm90_xmma_gemm", 4.0, 60.0]],
    }
    bad = timed("esimcse", "bf16", "graph", 15.0)
    bad.profile = {"error": "RuntimeError: CUPTI_ERROR_NOT_INITIALIZED"}
    text = "\n".join(profile_lines([ok, bad]))
    row = "| simcse | bf16 | graph | 12.00 | 10.50 | 88% | 410 | 1.00 | 6.00 | 0.00 | 0.00 | 0.00 | 3.50 |"
    assert row in text
    assert "| esimcse | bf16 | graph | profile failed: RuntimeError: CUPTI_ERROR_NOT_INITIALIZED |" in text
    assert "- simcse bf16 graph: `sm90_xmma_gemm` 4.00 (60)" in text
    only_bad = "\n".join(profile_lines([bad]))
    assert "Profile of esimcse bf16 graph failed: RuntimeError" in only_bad
    assert profile_lines([timed("mocose", "bf16", "graph", 13.0)]) == []


def test_split_log_parts_the_epoch_by_its_records():
    from epoch_speed import split_log

    from stsbench.errors import StsbenchError

    records = [
        {"event": "start", "total_steps": 4},
        {"event": "eval", "step": 0, "time": 3.0, "dev_spearman": 0.1},
        {"event": "compile", "step": 1, "seconds": 2.0},
        {"event": "train", "step": 2, "time": 6.0},
        {"event": "eval", "step": 2, "time": 7.5, "dev_spearman": 0.2},
        {"event": "train", "step": 4, "time": 9.0},
        {"event": "eval", "step": 4, "time": 9.5, "dev_spearman": 0.3},
        {"event": "end", "step": 4, "wall_seconds": 10.0, "best_dev_spearman": 0.3},
    ]
    got = split_log(records)
    assert (
        got["start_s"] == 3.0 and got["evals"] == 2 and got["eval_s"] == 2.0 and got["eval_median_s"] == 1.0
    )
    assert (got["steps"], got["wall"], got["first_step_s"], got["best_dev"]) == (4, 10.0, 2.0, 0.3)
    assert got["eval_max_s"] == 1.5
    assert got["finished"] and got["total_steps"] == 4
    with pytest.raises(StsbenchError, match="no end record"):
        split_log(records[:-1])
    with pytest.raises(StsbenchError, match="no train record"):
        split_log([r for r in records if r.get("step") != 4 or r["event"] != "train"])


def test_a_stopped_epoch_is_split_up_to_its_last_record_and_projected():
    """gpu_suite's epoch part stops the run before the device call's limit: what it did, and the epoch from it."""
    from epoch_speed import projected, split_log
    from epoch_speed import report as epoch_report

    records = [
        {"event": "start", "step": 0, "total_steps": 8},
        {"event": "eval", "step": 0, "time": 3.0, "dev_spearman": 0.1},
        {"event": "train", "step": 2, "time": 6.0},
        {"event": "eval", "step": 2, "time": 7.5, "dev_spearman": 0.2},
        {"event": "train", "step": 4, "time": 9.0},
    ]
    got = split_log(records, finished=False)
    assert not got["finished"] and (got["steps"], got["total_steps"], got["wall"]) == (4, 8, 9.0)
    assert (got["evals"], got["eval_s"], got["best_dev"]) == (1, 1.5, 0.2)
    # 2 s before the run's clock, 3 s set-up, 4 evaluations (steps 2, 4, 6, 8) at 1.5 s, 8 steps at 4.5 / 4 s
    assert projected(got, before_clock=2.0, eval_steps=2) == pytest.approx(2.0 + 3.0 + 6.0 + 9.0)
    args = Namespace(
        bert_base_shape=False, tiny_shape=True, model=None, batch_size=32, max_length=32, lines=256,
        eval_steps=2, save_steps=500, device="cpu", timeout=11.0,
    )  # fmt: skip
    official = Namespace(ms=[10.0, 12.0, 14.0], precision="fp32")
    text = epoch_report(
        args, head_lines=11914, wall=11.0, split=got, official=official, command=["python", "-m"]
    )
    assert "**Stopped at --timeout 11 s after 4 of 8 steps**" in text
    assert "stsbench epoch, stopped at the timeout" in text and "| **20.0 s** |" in text
    assert "official-style steps alone x 8" in text and "stsbench's projected epoch** | **0.00x**" in text
    assert "whole epoch" not in text
    # a compiling first step (its compile record) counts once, and the mean is taken over the steps after it:
    # 4.5 s of steps, 2.5 of them the first, so 7 more steps at 2 / 3 s each
    compiled = split_log([*records, {"event": "compile", "step": 1, "seconds": 2.5}], finished=False)
    assert projected(compiled, before_clock=2.0, eval_steps=2) == pytest.approx(
        2.0 + 3.0 + 6.0 + 2.5 + 7 * 2 / 3
    )
    nothing = split_log(records[:1], finished=False)
    assert nothing["steps"] == 0 and projected(nothing, before_clock=1.0, eval_steps=2) is None
    assert "no step was logged before the timeout" in epoch_report(
        args, head_lines=11914, wall=11.0, split=nothing, official=None, command=["python"]
    )


def test_epoch_speed_runs_a_small_epoch_on_cpu(tmp_path):
    """The epoch benchmark, shrunk: `stsbench train` in its own process, split by its log, beside the official step."""
    out = tmp_path / "epoch.md"
    cmd = [sys.executable, str(BENCH / "epoch_speed.py"), "--device", "cpu", "--tiny-shape", "--lines", "96"]
    cmd += ["--batch-size", "32", "--eval-steps", "2", "--official-steps", "2", "--official-warmup", "1"]
    cmd += ["--threads", "1", "--markdown", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert text.strip() in done.stdout
    assert "3 steps over wiki1m_head.txt's 11,914 lines cycled to 96" in text
    assert "of which 2 dev evaluations" in text  # after steps 2 and 3 (the last)
    assert "official-style steps alone x 3" in text and "judged on an H100" in text
    bad = subprocess.run([*cmd[:2], "--lines", "10"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--lines must be at least --batch-size" in bad.stderr
    # past --timeout the run (its process group) is stopped and the table still comes back, from its log so far:
    # tests/test_gpu_paths.py's dry run of the GPU suite's epoch part, which stops its run so


def test_import_seconds_reads_the_interpreters_importtime_report():
    """eval_speed.py --explain: the cold run's imports, from `python -X importtime`'s own lines."""
    from eval_speed import import_seconds

    report = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       100 |        100 |   _io",
            "import time:       300 |        400 | encodings",
            "import time:       200 |        200 |     torch._C",
            "import time:       500 |       1500 |   torch.nn",
            "import time:      1000 |       2500 | torch",
            "import time:       700 |        700 | torch.cuda",
            "a line of the program's own",
        ]
    )
    total, roots = import_seconds(report)
    assert total == pytest.approx(0.0036) and roots == pytest.approx({"torch": 0.0032, "encodings": 0.0004})
    assert list(roots) == ["torch", "encodings"]
    real = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import json"], capture_output=True, text=True, check=True
    )
    total, roots = import_seconds(real.stderr)
    assert "json" in roots and 0 < roots["json"] <= total


def test_loss_check_measures_the_spread_from_the_old_step_in_fp32(monkeypatch):
    """Below fp32 the check trains the old step a third time, in fp32; its gap to the old bf16 losses is the spread."""
    import train_speed

    losses = {
        ("bf16", False): [1.0, 2.0, 3.0],  # today's loop in bf16
        ("bf16", True): [1.001, 2.0, 2.998],  # the old step in bf16
        ("fp32", True): [1.0005, 2.0015, 2.999],  # the old step in fp32
    }
    calls = []

    def fake(method, precision, legacy, *rest):
        calls.append((precision, legacy))
        return losses[precision, legacy]

    monkeypatch.setattr(train_speed, "check_losses", fake)
    gap, spread = train_speed.loss_check("simcse", "bf16", None, None, None)
    assert gap == pytest.approx(0.002) and spread == pytest.approx(0.0015)
    assert calls == [("bf16", False), ("bf16", True), ("fp32", True)]
    calls.clear()
    losses["fp32", False] = [1.0, 2.0, 3.0]
    assert train_speed.loss_check("simcse", "fp32", None, None, None) == (pytest.approx(0.0015), None)
    assert calls == [("fp32", False), ("fp32", True)]  # fp32: no third run
