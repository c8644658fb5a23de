"""A matrix product's two tiled entry points (`emit.tiling`): the host runs the tiles entry point, whose
128 x 128 tiles give every multiprocessor one, where the product has at least 8 iterations per thread the
device holds, and the covering entry point's 128 x 64 tiles below that; both compute rustc's result bit for
bit (tests/cases/shapes.rs). On the emulated device (one multiprocessor, 2048 threads) the tiles entry point
takes products of 16384 outputs or more.

Tests that take `device` run on the emulated device (the generated CUDA compiled by g++, each block's
threads real threads meeting at its barriers) and, under `-m gpu`, on the GPU."""
from __future__ import annotations

import numpy as np
import pytest

from tests.support.paths import CASES

SOURCE = CASES / "shapes.rs"
TILE_ITERATIONS_PER_THREAD = 8  # 128 x 128 iterations a block, against a multiprocessor's 2048 threads


def entry_for(device, m: int, p: int) -> str:
    large = m * p >= TILE_ITERATIONS_PER_THREAD * device.grid_threads()
    return "tiles" if large else "covering"


@pytest.mark.parametrize("m, n, p", [(127, 5, 129), (128, 3, 128), (130, 9, 131)],
                         ids=["just below", "exactly one tile a multiprocessor", "above, across the tiles' edges"])
def test_a_product_runs_on_the_larger_tiles_where_they_fill_the_device(device, rust, kernels, m, n, p) -> None:
    rng = np.random.default_rng([m, n, p])
    a, b = rng.standard_normal(m * n), rng.standard_normal(n * p)
    want = np.full(m * p, np.nan)
    rust.matmul_fused(want, a, b, 0, m, n, p)
    got = device.to_device(np.full(m * p, np.nan))
    kernels.matmul_fused(got, device.to_device(a), device.to_device(b), 0, m, n, p)
    assert kernels.matmul_fused.last_variants == [f"rs2gpu_matmul_fused_0_{entry_for(device, m, p)}"]
    assert device.to_host(got).tobytes() == want.tobytes()
