"""Model FLOPs of a training step per method, and the peak a device could reach: the two halves of MFU.

FLOPs count the matrix multiplies of a BERT-like encoder (Kaplan et al., 2020, Table 1; PaLM, Chowdhury et
al., 2022, App. B): a forward pass costs 2 x (non-embedding matrix parameters) per token plus 4 x layers x
width x hidden per sequence for attention (QK^T and the weighted sum of V); the backward pass costs twice the
forward. Each method is counted over the branches it really runs (:func:`step_flops`). The width is the
padded length the step feeds, so the count is what the hardware computes, padding included.

Peaks are the dense (non-sparse) tensor-core rates of NVIDIA's data sheets, keyed by the name
``torch.cuda.get_device_name`` returns; on a CPU the peak is the measured fp32 matrix-multiply rate at the
model's own layer shapes (:func:`cpu_matmul_rate`).
"""

from __future__ import annotations

import time

import torch

TFLOP = 1e12
# dense TFLOP/s per precision (fp16 = bf16); the first key found in the device name wins, so PCIe before SXM
PEAKS = {
    "H100 PCIe": {"bf16": 756.0, "tf32": 378.0, "fp32": 51.0},
    "H100": {"bf16": 989.0, "tf32": 494.5, "fp32": 67.0},  # SXM (HBM3), the H100 80GB HBM3
    "H200": {"bf16": 989.0, "tf32": 494.5, "fp32": 67.0},
    "A100": {"bf16": 312.0, "tf32": 156.0, "fp32": 19.5},
}


def gpu_peak(device_name: str, precision: str) -> float | None:
    """Peak FLOP/s of ``device_name`` at ``precision`` (fp32 / tf32 / bf16 / fp16), None for an unknown GPU."""
    key = "bf16" if precision == "fp16" else precision
    for name, peaks in PEAKS.items():
        if name.lower() in device_name.lower():
            return peaks[key] * TFLOP
    return None


def matrix_params(config) -> int:
    """Weights of the dense layers one token passes through: per layer Q, K, V, O (H x H) and the FFN (H x I)."""
    h, inter = config.hidden_size, config.intermediate_size
    return config.num_hidden_layers * (4 * h * h + 2 * h * inter)


def forward_flops(config, rows: int, width: int, heads: int = 1) -> float:
    """One forward pass of ``rows`` sequences padded to ``width``, plus ``heads`` H x H layers per sequence.

    ``heads`` counts the layers on the pooled vector (SimCSE's MLP, MoCoSE's projection and predictor).
    """
    h = config.hidden_size
    dense = 2 * matrix_params(config) * rows * width
    attention = 4 * config.num_hidden_layers * rows * width * width * h
    return float(dense + attention + 2 * heads * h * h * rows)


def step_flops(method: str, config, rows: int, widths: tuple[int, int], mocose_fgsm: bool = True) -> float:
    """Model FLOPs of one training step of ``method`` on ``rows`` sentences; ``widths`` = (anchor, positive).

    - simcse (and the official-style baseline): both views forward and backward (3x a forward).
    - esimcse: both views forward and backward, then the momentum encoder's no-grad forward of the anchor.
    - mocose: the target branch's no-grad forward (encoder, projection); with FGSM, an online forward and a
      backward to the input embeddings only (2x a forward: no weight gradients); then the online forward and
      backward (encoder, MLP, projection, predictor).

    The loss's similarity matrix (B x (B + queue) x H) is left out: under 0.1% at BERT-base's size.
    """
    anchor, positive = widths
    if method in ("simcse", "official"):
        return 3 * (forward_flops(config, rows, anchor, 1) + forward_flops(config, rows, positive, 1))
    if method == "esimcse":
        trained = 3 * (forward_flops(config, rows, anchor, 1) + forward_flops(config, rows, positive, 1))
        return trained + forward_flops(config, rows, anchor, 1)
    if method == "mocose":
        online = forward_flops(config, rows, anchor, 4)  # MLP, projection, 2 predictor layers
        target = forward_flops(config, rows, anchor, 2)  # MLP, projection
        return target + (2 * online if mocose_fgsm else 0.0) + 3 * online
    raise ValueError(f"unknown method {method}")


def cpu_matmul_rate(config, tokens: int, repeats: int = 3) -> float:
    """fp32 FLOP/s of ``torch.mm`` on this CPU at the model's layer shapes for ``tokens`` rows, best of ``repeats``."""
    h, inter = config.hidden_size, config.intermediate_size
    shapes = [(h, h, 4), (h, inter, 1), (inter, h, 1)]
    mats = [(torch.randn(tokens, k), torch.randn(n, k).t(), count) for k, n, count in shapes]
    flops = sum(2 * tokens * a.shape[1] * b.shape[1] * count for a, b, count in mats)
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for a, b, count in mats:
            for _ in range(count):
                torch.mm(a, b)
        best = min(best, time.perf_counter() - t)
    return flops / best
