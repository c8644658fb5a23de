"""The heat equation on a grid split into chunks of rows, through rs2gpu.dask.call: a Python time loop,
one lazy call of `heat_step` per step, computed at the end by the Dask workers.

    python examples/heat/heat.py --rows 4096 --width 4096 --steps 50 --chunk-rows 512             # cpu backend
    python examples/heat/heat.py --rows 163840 --width 65536 --steps 4 --chunk-rows 2048 --cuda  # dask-cuda

With --cuda each GPU of the machine runs one worker (dask_cuda.LocalCUDACluster) and the chunks are cupy
arrays, so the grid may be larger than one GPU's memory (the second line's is 86 GB): a worker holds a few
chunks at a time, and the total heat is summed on the workers, chunk by chunk. --check brings the whole grid
back and compares it with one plain call of `heat_steps` (the whole time loop in one kernel) on the whole
grid, which must agree bitwise, so it needs a grid that fits.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import dask.array as da
import numpy as np

import rs2gpu
import rs2gpu.dask

HERE = Path(__file__).resolve().parent


def initial(rows: int, width: int, chunk_rows: int, xp=np):
    """A cold plate whose top edge is held at 1.0, as a Dask array of `chunk_rows`-row chunks."""
    def block(block_info=None):
        (start, stop), _ = block_info[None]["array-location"]
        out = xp.zeros((stop - start, width))
        if start == 0:
            out[0, :] = 1.0
        return out

    return da.map_blocks(block, chunks=(_row_chunks(rows, chunk_rows), (width,)), dtype=np.float64,
                         meta=xp.empty((0, 0)))


def _row_chunks(rows: int, chunk_rows: int) -> tuple[int, ...]:
    return (chunk_rows,) * (rows // chunk_rows) + ((rows % chunk_rows,) if rows % chunk_rows else ())


def run(kernels, grid, steps: int, alpha: float):
    """`steps` steps from `grid`: each call writes the interior of a new grid with the old one's boundary."""
    width = grid.shape[1]
    for _ in range(steps):
        (grid,) = rs2gpu.dask.call(kernels.heat_step, grid, grid, width, alpha)
    return grid


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=20, help="an even number, for --check")
    parser.add_argument("--chunk-rows", type=int, default=128)
    parser.add_argument("--alpha", type=float, default=0.2, help="stable up to 0.25")
    parser.add_argument("--cuda", action="store_true", help="dask-cuda workers and cupy chunks")
    parser.add_argument("--check", action="store_true", help="compare with one plain call on the whole grid")
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    if args.cuda:
        import cupy
        from dask_cuda import LocalCUDACluster

        cluster, backend, xp = LocalCUDACluster(), "cuda", cupy
    else:
        cluster, backend, xp = LocalCluster(), "cpu", np
    with cluster, Client(cluster):
        kernels = rs2gpu.load(HERE, backend=backend)
        grid = run(kernels, initial(args.rows, args.width, args.chunk_rows, xp), args.steps, args.alpha)
        started = time.perf_counter()
        result = grid.compute() if args.check else None
        total = float(result.sum() if args.check else grid.sum().compute())
        seconds = time.perf_counter() - started
    size = f"{args.rows * args.width * 8 / 1e9:.1f} GB a grid"
    if args.cuda:
        size += f", {xp.cuda.Device().mem_info[1] / 1e9:.1f} GB on one GPU"
    print(f"{args.steps} steps on {args.rows}×{args.width} ({size}) in chunks of {args.chunk_rows} rows: "
          f"total heat {total:.6f}, {seconds:.1f} s")
    if args.check:
        a = initial(args.rows, args.width, args.rows, xp).compute().reshape(-1)
        kernels.heat_steps(a, a.copy(), args.width, args.alpha, args.steps // 2)
        same = bool((a.reshape(result.shape) == result).all())
        print("one plain call agrees bitwise" if same else "one plain call DISAGREES")
        raise SystemExit(0 if same else 1)


if __name__ == "__main__":
    main()
