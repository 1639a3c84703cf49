"""The markdown report of train_speed.py: speed table, ratios, issue 19's acceptance 1, the loss check."""

from __future__ import annotations

import statistics

from flops import PEAKS, TFLOP
from speed_profile import profile_lines

# issue 19, acceptance 1, on an H100 (scaled by the peak of another GPU)
LIMIT_MS = {
    "eager": 15.0,
    "graph": 10.0,
    "compiled": 10.0,
    "compiled-graph": 10.0,
}  # graph: a compiled step too
RATIO_LIMIT = {"esimcse": 1.3, "mocose": 1.5}
BASELINE_FACTOR = 3.0
CPU_FLOOR_FACTOR = 1.5  # acceptance 3: a CPU step within 1.5x of its fp32 matmul floor


def median_ms(run) -> float:
    return statistics.median(run.ms)


def row(run, peak: dict[str, float | None], baseline) -> str:
    """One table row; failed runs keep their row with the reason."""
    if run.error:
        return f"| {run.method} | {run.precision} | {run.mode} | failed: {run.error} | | | | | | |"
    ms = median_ms(run)
    flops = statistics.mean(run.flops)
    tokens = statistics.mean(run.tokens)
    rate = peak.get(run.precision)
    mfu = f"{100 * flops / (ms / 1e3) / rate:.1f}%" if rate else "n/a"
    speedup = f"{median_ms(baseline) / ms:.2f}x" if baseline is not None and not baseline.error else ""
    return (
        f"| {run.method} | {run.precision} | {run.mode} | {ms:.2f} | {1e3 / ms:.1f} | "
        f"{tokens / (ms / 1e3):,.0f} | {flops / TFLOP:.4g} | {mfu} | {run.first_s:.2f} | {speedup} |"
    )


def find(runs, method: str, precision: str, mode: str):
    for run in runs:
        if (run.method, run.precision, run.mode) == (method, precision, mode) and not run.error:
            return run
    return None


def acceptance(runs, peak: dict[str, float | None], cuda: bool) -> list[str]:
    """Issue 19's acceptance 1 (on a GPU; budgets scaled by the bf16 peak off an H100) or 3 (on a CPU)."""
    h100 = PEAKS["H100"]["bf16"] * TFLOP
    scale = h100 / peak["bf16"] if cuda and peak.get("bf16") else None
    lines = []
    simcse = find(runs, "simcse", "fp32", "eager")
    if not cuda and simcse is not None and peak.get("fp32"):
        ms = median_ms(simcse)
        floor = statistics.mean(simcse.flops) / peak["fp32"] * 1e3
        ok = "holds" if ms <= CPU_FLOOR_FACTOR * floor else "FAILS"
        lines.append(
            f"- (acceptance 3) SimCSE fp32 eager: {ms:.1f} ms/step, fp32 matmul floor {floor:.1f} ms "
            f"(model FLOPs / measured rate): {ms / floor:.2f}x (at most {CPU_FLOOR_FACTOR}x): {ok}"
        )
    if scale is not None:
        for mode, limit in LIMIT_MS.items():
            run = find(runs, "simcse", "bf16", mode)
            if run is not None:
                ms = median_ms(run)
                ok = "holds" if ms <= limit * scale else "FAILS"
                lines.append(f"- SimCSE bf16 {mode}: {ms:.2f} ms/step, budget {limit * scale:.1f} ms: {ok}")
    for mode in LIMIT_MS:
        for precision in ("fp32", "tf32", "bf16"):
            simcse = find(runs, "simcse", precision, mode)
            for method, limit in RATIO_LIMIT.items():
                other = find(runs, method, precision, mode)
                if simcse is not None and other is not None:
                    ratio = median_ms(other) / median_ms(simcse)
                    ok = "holds" if ratio <= limit else "FAILS"
                    lines.append(
                        f"- {method} / simcse, {precision} {mode}: {ratio:.2f} (limit {limit}): {ok}"
                    )
    baseline = next((r for r in runs if r.method == "official" and not r.error), None)
    best = [r for r in runs if r.method == "simcse" and not r.error]
    if baseline is not None and best:
        fastest = min(best, key=median_ms)
        factor = median_ms(baseline) / median_ms(fastest)
        ok = "holds" if factor >= BASELINE_FACTOR else "FAILS"
        lines.append(
            f"- official-style baseline ({baseline.precision}) / fastest SimCSE row ({fastest.precision} "
            f"{fastest.mode}): {factor:.2f}x (at least {BASELINE_FACTOR}x): {ok}"
        )
    return lines


def check_limit(precision: str, spread: float | None, cuda: bool) -> float | None:
    """The loss check's bound: 0 in fp32 on a CPU (bit for bit), 1e-3 in fp32/TF32 on CUDA, else 2 x spread."""
    if precision == "fp32" and not cuda:
        return 0.0
    if precision in ("fp32", "tf32"):
        return 1e-3
    return None if spread is None else 2 * spread


def report(*, header: dict, args, config, runs, checks, peak) -> str:
    """The whole report as markdown."""
    cuda = "cuda" in args.device
    baseline = next((r for r in runs if r.method == "official"), None)
    peak_text = ", ".join(f"{p} {v / TFLOP:.4g}" if v else f"{p} n/a" for p, v in peak.items())
    lines = [
        f"Training speed, {header['shape']} ({config.num_hidden_layers} layers, {config.hidden_size} wide), "
        f"batch {args.batch_size}, max length {args.max_length}, {args.steps} timed steps a row "
        f"(+{args.warmup} warm-up), data {args.train_file.name}",
        "",
        f"- device: {header['device']}; torch {header['torch']}, transformers {header['transformers']}",
        f"- date: {header['date']}",
        f"- command: `{header['command']}`",
        f"- peak TFLOP/s used for MFU: {peak_text}"
        + ("" if cuda else " (this CPU's measured fp32 matmul rate at the model's layer shapes)"),
        "",
        "| method | precision | mode | ms/step (median) | steps/s | tokens/s | TFLOP/step | MFU "
        "| first step s | speed-up vs baseline |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|",
        *(row(r, peak, baseline) for r in runs),
        "",
        "tokens/s: the batch's non-padding tokens, each sentence once. TFLOP/step: model FLOPs of the "
        "branches the method runs at the padded shapes of the step (benchmarks/flops.py). first step: "
        "wall seconds of the first warm-up step (compilation included in compiled rows). modes: graph = "
        "--cuda-graph, compiled = --compile, compiled-graph = both, each with --pad-to-max-length. baseline: official-style unsup SimCSE step "
        "(benchmarks/official_step.py).",
    ]
    lines += profile_lines(runs)
    accepted = acceptance(runs, peak, cuda)
    if accepted:
        where = "" if cuda else " (the GPU budgets and ratios are judged on a GPU; here for reference)"
        lines += ["", f"Issue 19, acceptance{where}:", *accepted]
    if checks:
        lines += [
            "",
            f"Loss check: the first {args.check_steps} steps of today's loop against the pre-issue-19 step "
            "(benchmarks/legacy_step.py), same seed and batches, default options. Below fp32 the limit is "
            "twice the spread: the largest difference that precision makes to the old step's own losses "
            "(old step at that precision vs at fp32, same run), since each of the two steps is a rounding of "
            "the same fp32 step",
            "",
            "| method | precision | max abs loss difference | spread vs fp32 | limit | |",
            "|---|---|---:|---:|---:|---|",
        ]
        for method, precision, diff, spread, error in checks:
            limit = check_limit(precision, spread, cuda)
            shown = "" if spread is None else f"{spread:.3g}"
            if error:
                lines.append(f"| {method} | {precision} | failed: {error} | | | |")
            elif limit is None:
                lines.append(f"| {method} | {precision} | {diff:.3g} | {shown} | n/a | no spread measured |")
            else:
                ok = "holds" if diff <= limit else "FAILS"
                lines.append(f"| {method} | {precision} | {diff:.3g} | {shown} | {limit:.3g} | {ok} |")
    return "\n".join(lines)
