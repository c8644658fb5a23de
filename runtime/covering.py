"""Grid and block for a covering entry point (see `emit/covering.py`): one thread per iteration.

A loop nest of two or three dimensions has a second entry point that runs each iteration in its own
thread behind one `if`, with 32-bit thread coordinates. It is correct only on a grid that covers the
iteration space, so a launch uses it when one exists: every count below the entry point's limit and
every axis's block count within the hardware's. The block is the entry point's own where its body needs
one shape (a tiled product), else the shape that launches the fewest idle threads: blocks of 256
threads (fewer only where the extents are smaller), x a multiple of a warp; among equals, the narrowest
x and then the tallest y, as RAJAPerf's 32 x 8 for a 100-wide plane.

The Rust module's runtime (rs2gpu/rust/src/rs2gpu_runtime.rs, `covering_geometry`) makes the same choice.
"""
from __future__ import annotations

from functools import lru_cache

from rs2gpu.ir.abi import BLOCK_SIZE

WIDTHS = (32, 64, 128, 256)

Dim3 = tuple[int, int, int]


@lru_cache(maxsize=1024)
def covering_geometry(counts: Dim3, dims: int, block: Dim3 | None, count_limit: int,
                      grid_limits: Dim3) -> tuple[Dim3, Dim3] | None:
    """(grid, block) for `counts` (x, y, z; 1 beyond `dims`) that covers them, or None when none can."""
    if any(c >= count_limit for c in counts):
        return None
    shapes = [block] if block is not None else _shapes(counts, dims)
    best = None
    for shape in shapes:
        grid = tuple(-(-c // b) for c, b in zip(counts, shape))
        if any(g > limit for g, limit in zip(grid, grid_limits)):
            continue
        launched = grid[0] * shape[0] * grid[1] * shape[1] * grid[2] * shape[2]
        rank = (launched, -shape[0] * shape[1] * shape[2], shape[0], -shape[1])
        if best is None or rank < best[0]:
            best = (rank, grid, shape)
    return None if best is None else (best[1], best[2])


def _shapes(counts: Dim3, dims: int) -> list[Dim3]:
    """The candidate blocks: x a warp multiple, y and z powers of two no taller than their extents need."""
    _, cy, cz = counts
    out = []
    for bx in WIDTHS:
        ys = [by for by in _powers_of_two(BLOCK_SIZE // bx) if by <= _ceil_pow2(cy)]
        if dims == 2:
            out.append((bx, ys[-1], 1))
            continue
        for by in ys:
            out.append((bx, by, min(BLOCK_SIZE // (bx * by), _ceil_pow2(cz))))
    return out


def _powers_of_two(limit: int) -> list[int]:
    return [1 << k for k in range(limit.bit_length()) if 1 << k <= limit]


def _ceil_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())
