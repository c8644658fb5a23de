"""Matrix products of half values from plain Rust triple loops (bench/half-products) against torch.matmul,
on torch tensors on the GPU.

    python3 -P bench/half_products.py [--sizes 4096 2048] [--reps 20] [--out bench/results]
    compute-sanitizer --tool racecheck python3 -P bench/half_products.py --sanitize

For each kernel and size it checks the result against the exact product of the same inputs (f64: every
element within the reduction bound plus one step of the half type, `within_bound`), then times both with
CUDA events (median of `reps` calls after a warm-up, inputs in device memory, nothing moved between host
and device). It writes half-products.md, and history.csv's rows under $RS2GPU_BENCH_COMMIT
(bench/gpu_checks.sh sets it).
With --sanitize it runs each kernel once, untimed, on a product just large enough for the tensor-core
entry point (SANITIZE_SHAPE), for compute-sanitizer to watch.
"""
from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))  # appended: an installed rs2gpu takes precedence over the source tree

from bench.report import commit_date, update_history  # noqa: E402
CRATE = REPO / "bench" / "half-products"
EPSILON = 2.0 ** -23
KERNELS = {"matmul_bf16": ("bfloat16", False), "matmul_f16": ("float16", False),
           "matmul_nt_bf16": ("bfloat16", True), "matmul_nt_f16": ("float16", True)}
# m x k x n: 1536² outputs are 8 per thread an H100 or H200 holds (the tiles entry point's fill); k 40 ends
# inside a slice of 32
SANITIZE_SHAPE = (1536, 40, 1536)


def median_us(torch, call, reps: int) -> float:
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1000)
    return float(np.median(times))


def within_bound(torch, c, a, b, transposed: bool) -> tuple[bool, float]:
    """Whether every element of `c` lies within the reduction bound of the exact product: n·ε·Σ|aₖbₖ| from
    Rust's sequential f32 sum, which lies within (n - 1)·ε/2·Σ|aₖbₖ| of the exact one, plus a step of the
    half type at the result (its one rounding); and the largest ratio of an error to its allowance."""
    left, right = a.double(), (b.double().t() if transposed else b.double())
    exact = left @ right
    steps = torch.finfo(c.dtype).eps * exact.abs()
    allowance = 1.5 * a.shape[1] * EPSILON * (left.abs() @ right.abs()) + steps
    ratio = float(((c.double() - exact).abs() / allowance.clamp_min(1e-300)).max())
    return ratio <= 1.0, ratio


def product(torch, kernels, name: str, m: int, k: int, n: int) -> dict:
    """One call of the kernel `name` on random m x k and k x n (or n x k) tensors: the tensors, the call
    and whether its result lies within the bound."""
    dtype_name, transposed = KERNELS[name]
    dtype = getattr(torch, dtype_name)
    generator = torch.Generator(device="cuda").manual_seed(m * n + k)
    a = torch.randn(m, k, device="cuda", generator=generator).to(dtype)
    b = torch.randn(*((n, k) if transposed else (k, n)), device="cuda", generator=generator).to(dtype)
    c = torch.empty(m, n, device="cuda", dtype=dtype)
    kernel = getattr(kernels, name)

    def call():
        kernel(c.view(-1), a.view(-1), b.view(-1), k, n)
    call()
    torch.cuda.synchronize()
    ok, ratio = within_bound(torch, c, a, b, transposed)
    return {"a": a, "b": b, "call": call, "variant": kernel.last_variants, "within_bound": ok, "ratio": ratio,
            "torch": lambda out=torch.empty_like(c): torch.matmul(a, b.t() if transposed else b, out=out)}


def run(sizes: list[int], reps: int) -> list[dict]:
    import torch

    import rs2gpu
    kernels = rs2gpu.load(CRATE, backend="cuda")
    rows = []
    for name in KERNELS:
        for size in sizes:
            made = product(torch, kernels, name, size, size, size)
            ours, theirs = median_us(torch, made["call"], reps), median_us(torch, made["torch"], reps)
            flops = 2 * size ** 3
            rows.append({"kernel": name, "size": f"{size}x{size}x{size}", "within_bound": made["within_bound"],
                         "error_of_bound": made["ratio"], "variant": made["variant"], "rs2gpu_us": ours,
                         "torch_us": theirs, "rs2gpu_tflops": flops / ours / 1e6, "torch_tflops": flops / theirs / 1e6,
                         "of_torch": theirs / ours})
            print(f"{name:16} {size:5}³  {rows[-1]['rs2gpu_tflops']:7.1f} TFLOP/s  torch "
                  f"{rows[-1]['torch_tflops']:7.1f}  {100 * theirs / ours:5.1f} % of torch  "
                  f"bound {made['within_bound']} ({made['ratio']:.3f})  {made['variant']}", flush=True)
    return rows


def sanitize() -> int:
    import torch

    import rs2gpu
    kernels = rs2gpu.load(CRATE, backend="cuda")
    failures = 0
    for name in KERNELS:
        made = product(torch, kernels, name, *SANITIZE_SHAPE)
        tiles = made["variant"] == [f"rs2gpu_{name}_0_tiles"]
        failures += not (tiles and made["within_bound"])
        print(f"{name:16} {made['variant']} within bound: {made['within_bound']} ({made['ratio']:.3f})", flush=True)
    return 1 if failures else 0


def table(rows: list[dict], device: str, commit: str) -> str:
    title = "Half-precision products from plain Rust loops against torch.matmul"
    lines = [f"# {title} ({device}, {commit or 'no commit'})", "",
             "CUDA events, median, device tensors; `a · b` (NN) and `a · bᵀ` (NT), f32 sums rounded once to the "
             "half type.", "",
             "| kernel | m×k×n | rs2gpu TFLOP/s | torch TFLOP/s | % of torch | within bound (error / allowance) |",
             "|---|---|---:|---:|---:|---|"]
    for r in rows:
        within = f"{'yes' if r['within_bound'] else 'NO'} ({r['error_of_bound']:.3f})"
        lines.append(f"| {r['kernel']} | {r['size']} | {r['rs2gpu_tflops']:.1f} | {r['torch_tflops']:.1f} | "
                     f"{100 * r['of_torch']:.1f} | {within} |")
    return "\n".join(lines) + "\n"


def history_rows(rows: list[dict], commit: str, run_date: str) -> list[dict]:
    """history.csv's rows of a run: torch.matmul's µs as `hand_us`, rs2gpu's as `gen_us`."""
    return [{"commit": commit, "commit_date": commit_date(commit), "run_date": run_date, "bench": "half_products.py",
             "kernel": r["kernel"], "size_label": r["size"], "size": int(r["size"].split("x")[0]),
             "check": "bound" if r["within_bound"] else "FAILED", "hand_us": r["torch_us"], "gen_us": r["rs2gpu_us"],
             "ratio": r["rs2gpu_us"] / r["torch_us"]} for r in rows]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4096, 2048])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--sanitize", action="store_true", help="run each kernel once, for compute-sanitizer")
    args = parser.parse_args(argv)
    if args.sanitize:
        return sanitize()
    import torch
    rows = run(args.sizes, args.reps)
    device = torch.cuda.get_device_name()
    commit = os.environ.get("RS2GPU_BENCH_COMMIT", "")
    run_date = datetime.now(timezone.utc).isoformat(timespec="seconds")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "half-products.md").write_text(table(rows, device, commit))
    if commit:
        update_history(args.out / "history.csv", history_rows(rows, commit, run_date))
    return 0 if all(r["within_bound"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
