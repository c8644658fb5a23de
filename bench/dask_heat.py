"""The cost of the Dask path: the heat example's time loop through rs2gpu.dask.call against one plain call.

On a machine with an NVIDIA GPU (dask-cuda, cupy; bench/dask-requirements.txt):

    python3 bench/dask_heat.py --out bench/results/dask-heat.json

1. One plain call: `heat_steps` on the whole grid as cupy arrays (the time loop inside the kernel, the data
   on the GPU from the first step to the last), cuda backend.
2. The Dask path: the grid as cupy-backed chunks of rows on one dask-cuda worker
   (`LocalCUDACluster(n_workers=1)`), one `rs2gpu.dask.call(heat_step, ...)` per step, persisted on the
   worker. The default grid's chunks are 256 MiB each.

Both start from the same grid and run the same steps; their results must agree bitwise. Each is timed after
a warm-up run (compilation, the workers' first load), median of --reps runs. The ratio dask/plain is the
overhead of the Dask path. `--small --backend cpu` runs the same comparison on numpy arrays and the cpu
backend with an in-process `distributed.LocalCluster`, on a machine without a GPU.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HEAT = ROOT / "examples" / "heat"


def initial(rows: int, width: int, chunk_rows: int, xp):
    """The plate of examples/heat/heat.py (its own function): cold, its top edge at 1.0, made on the workers
    chunk by chunk."""
    spec = importlib.util.spec_from_file_location("heat", HEAT / "heat.py")
    heat = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(heat)
    return heat.initial(rows, width, chunk_rows, xp)


def plain(kernels, rows: int, width: int, steps: int, alpha: float, xp, sync) -> tuple[float, object]:
    """One call of `heat_steps` on the whole grid: its time, and the result."""
    a = xp.zeros(rows * width)
    a[:width] = 1.0
    b = a.copy()
    sync()
    start = time.perf_counter()
    kernels.heat_steps(a, b, width, alpha, steps // 2)
    sync()
    return time.perf_counter() - start, a.reshape(rows, width)


def dask_path(kernels, rows: int, width: int, chunk_rows: int, steps: int, alpha: float, xp) -> tuple[float, object]:
    """The time loop through rs2gpu.dask.call, persisted on the workers: its time, and the result."""
    import rs2gpu.dask
    from distributed import wait

    grid = initial(rows, width, chunk_rows, xp).persist()
    wait(grid)
    start = time.perf_counter()
    for _ in range(steps):
        (grid,) = rs2gpu.dask.call(kernels.heat_step, grid, grid, width, alpha)
    grid = grid.persist()
    wait(grid)
    return time.perf_counter() - start, grid


def measure(args) -> dict:
    import rs2gpu

    if args.backend == "cuda":
        import cupy
        from dask_cuda import LocalCUDACluster

        xp, cluster = cupy, LocalCUDACluster(n_workers=1)
        sync = cupy.cuda.get_current_stream().synchronize
        to_host = cupy.asnumpy
    else:
        from distributed import LocalCluster

        xp, cluster = np, LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
        sync, to_host = (lambda: None), np.asarray
    from distributed import Client

    kernels = rs2gpu.load(HEAT, backend=args.backend)
    plain_times, dask_times = [], []
    with cluster, Client(cluster):
        for rep in range(args.reps + 1):  # the first run warms up (compilation, the worker's first load)
            seconds, want = plain(kernels, args.rows, args.width, args.steps, args.alpha, xp, sync)
            want = to_host(want)
            plain_times.append(seconds)
            seconds, grid = dask_path(kernels, args.rows, args.width, args.chunk_rows, args.steps, args.alpha, xp)
            dask_times.append(seconds)
            got = to_host(grid.compute())
            del grid
            if got.tobytes() != want.tobytes():
                raise SystemExit(f"run {rep}: the Dask path's grid differs from the plain call's")
            del got, want
    plain_s, dask_s = statistics.median(plain_times[1:]), statistics.median(dask_times[1:])
    return {"backend": args.backend, "rows": args.rows, "width": args.width, "steps": args.steps,
            "chunk_rows": args.chunk_rows, "chunk_bytes": args.chunk_rows * args.width * 8,
            "grid_bytes": args.rows * args.width * 8, "reps": args.reps, "bitwise_equal": True,
            "plain_s": plain_times[1:], "dask_s": dask_times[1:], "plain_median_s": plain_s,
            "dask_median_s": dask_s, "ratio": dask_s / plain_s}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--small", action="store_true", help="a 256×128 grid in chunks of 32 rows, 4 steps")
    parser.add_argument("--rows", type=int, default=32768)
    parser.add_argument("--width", type=int, default=16384)
    parser.add_argument("--chunk-rows", type=int, default=2048, help="rows per chunk (2048 × 16384 f64: 256 MiB)")
    parser.add_argument("--steps", type=int, default=20, help="an even number: heat_steps runs them in pairs")
    parser.add_argument("--alpha", type=float, default=0.2)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True, help="the JSON file of timings and the ratio")
    args = parser.parse_args(argv)
    if args.small:
        args.rows, args.width, args.chunk_rows, args.steps, args.reps = 256, 128, 32, 4, 1
    if args.steps % 2:
        parser.error("--steps must be even")
    result = measure(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"heat {args.rows}×{args.width}, {args.steps} steps, chunks of {args.chunk_rows} rows "
          f"({result['chunk_bytes'] / 2**20:.0f} MiB), {args.backend}: plain {result['plain_median_s']:.4f} s, "
          f"dask {result['dask_median_s']:.4f} s, ratio {result['ratio']:.2f} (bitwise equal)")
    return result


if __name__ == "__main__":
    main()
