"""The kernel shapes the launch distinguishes, on the cuda backend against rustc's build (the cpu backend),
bit for bit: small arrays passed by value (from numpy and from cupy), loop nests at sizes that are no
multiple of the block and beyond the grid's y/z limits (the covering entry point, and the general one where
no grid covers the nest), and plain matrix products (tiled through shared memory) of many shapes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import rs2gpu

pytestmark = pytest.mark.gpu

CASES = Path(__file__).resolve().parents[1] / "cases"


@pytest.fixture(scope="module")
def shapes():
    return rs2gpu.load(CASES / "shapes.rs", backend="cpu"), rs2gpu.load(CASES / "shapes.rs", backend="cuda")


@pytest.fixture(scope="module")
def semantics():
    return rs2gpu.load(CASES / "semantics.rs", backend="cpu"), rs2gpu.load(CASES / "semantics.rs", backend="cuda")


def taps_arguments(n: int):
    rng = np.random.default_rng(n)
    return rng.standard_normal(n + 3), rng.standard_normal(4), np.array([5, -7, 11], dtype=np.int32)


def test_arrays_passed_by_value_from_numpy(semantics) -> None:
    cpu, cuda = semantics
    x, w, bias = taps_arguments(1000)
    want, got = np.zeros(1000), np.zeros(1000)
    cpu.taps(want, x, w, bias)
    cuda.taps(got, x, w, bias)
    assert got.tobytes() == want.tobytes()
    assert {t.param for t in cuda.taps.last_transfers} == {"x", "out"}  # w and bias travel in the arguments


def test_arrays_passed_by_value_from_cupy_are_read_back_first(semantics) -> None:
    import cupy as cp

    cpu, cuda = semantics
    x, w, bias = taps_arguments(4099)
    want = np.zeros(4099)
    cpu.taps(want, x, w, bias)
    got = cp.zeros(4099)
    cuda.taps(got, cp.asarray(x), cp.asarray(w), cp.asarray(bias))
    assert cp.asnumpy(got).tobytes() == want.tobytes()
    assert sorted((t.param, t.direction, t.nbytes) for t in cuda.taps.last_transfers) == [("bias", "d2h", 12),
                                                                                           ("w", "d2h", 32)]


@pytest.mark.parametrize(("first", "rows", "cols"), [
    (0, 1, 1), (0, 9, 70), (3, 257, 33), (0, 70_000, 3),   # covered: 70000 rows take 8750 blocks of 8
    (0, 600_000, 2),                                       # no grid covers 600000 rows: the general entry point
])
def test_2d_nest_matches_rustc(shapes, first, rows, cols) -> None:
    cpu, cuda = shapes
    want, got = np.full(rows * cols, -1.0), np.full(rows * cols, -1.0)
    cpu.plane(want, first, rows, cols)
    cuda.plane(got, first, rows, cols)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize(("nk", "nj", "ni"), [
    (1, 1, 1), (3, 5, 37), (100, 100, 100), (70_000, 2, 3),  # covered: z of 70000 in blocks of 8 planes
    (600_000, 1, 1),                                        # beyond 65535 blocks of 8 planes: the general one
])
def test_3d_nest_with_continue_matches_rustc(shapes, nk, nj, ni) -> None:
    cpu, cuda = shapes
    want, got = np.full(nk * nj * ni, 7, dtype=np.uint32), np.full(nk * nj * ni, 7, dtype=np.uint32)
    cpu.volume(want, nk, nj, ni)
    cuda.volume(got, nk, nj, ni)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize(("m", "n", "p"), [
    (1, 1, 1), (15, 15, 15), (16, 16, 16), (17, 17, 17), (100, 100, 100), (1000, 1000, 1000),
    (33, 20, 18), (1000, 3, 7), (5, 1000, 3), (7, 0, 9), (1, 4099, 1),
])
def test_matrix_product_is_rustcs_bit_for_bit(shapes, m, n, p) -> None:
    cpu, cuda = shapes
    rng = np.random.default_rng([m, n, p])
    a, b = rng.standard_normal(m * n), rng.standard_normal(n * p)
    want, got = np.full(m * p, np.nan), np.full(m * p, np.nan)
    cpu.matmul(want, a, b, m, n, p)
    cuda.matmul(got, a, b, m, n, p)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize(("m", "n", "p"), [(17, 33, 5), (64, 2, 64), (3, 1, 3)])
def test_f32_product_from_an_initial_value_is_rustcs_bit_for_bit(shapes, m, n, p) -> None:
    cpu, cuda = shapes
    rng = np.random.default_rng([m, n, p, 32])
    a, b = rng.standard_normal(m * n).astype(np.float32), rng.standard_normal(n * p).astype(np.float32)
    want, got = np.zeros(m * p, dtype=np.float32), np.zeros(m * p, dtype=np.float32)
    cpu.matmul_from_bias(want, a, b, m, n, p, 0.1)
    cuda.matmul_from_bias(got, a, b, m, n, p, 0.1)
    assert got.tobytes() == want.tobytes()


# 1500 x 1500 outputs are at least 8 per thread an H100 or H200 holds: the tiles entry point's larger tiles
@pytest.mark.parametrize(("first", "m", "n", "p"), [(0, 1, 1, 1), (0, 130, 17, 129), (5, 1000, 999, 1001),
                                                    (0, 1500, 7, 1500)])
def test_fused_product_is_rustcs_bit_for_bit(shapes, first, m, n, p) -> None:
    cpu, cuda = shapes
    rng = np.random.default_rng([first, m, n, p])
    a, b = rng.standard_normal(m * n), rng.standard_normal(n * p)
    want, got = np.full(m * p, np.nan), np.full(m * p, np.nan)
    cpu.matmul_fused(want, a, b, first, m, n, p)
    cuda.matmul_fused(got, a, b, first, m, n, p)
    assert got.tobytes() == want.tobytes()


@pytest.mark.parametrize(("first", "rows", "cols"),
                         [(0, 1, 1), (0, 32, 32), (2, 33, 31), (0, 1000, 3), (7, 4097, 1023)])
def test_transpose_matches_rustc(shapes, first, rows, cols) -> None:
    cpu, cuda = shapes
    a = np.arange(rows * cols, dtype=np.uint32)
    want, got = np.full(rows * cols, 7, dtype=np.uint32), np.full(rows * cols, 7, dtype=np.uint32)
    cpu.transpose(want, a, first, rows, cols)
    cuda.transpose(got, a, first, rows, cols)
    assert np.array_equal(got, want)


@pytest.mark.parametrize("n", [2, 33, 256, 257, 1_000_003])
def test_a_loop_from_one_on_warps_aligned_to_its_stores_matches_rustc(shapes, n) -> None:
    import cupy as cp

    cpu, cuda = shapes
    rng = np.random.default_rng(n)
    z, y, xin = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n - 1)
    want = np.full(n, -1.0)
    cpu.eliminate(want, xin, y, z)
    got = cp.full(n, -1.0)
    cuda.eliminate(got, cp.asarray(xin), cp.asarray(y), cp.asarray(z))
    # one idle thread first, so that thread t runs iteration t: at n = 257 it and the 256 iterations take two blocks
    assert cuda.eliminate.last_variants == ["rs2gpu_eliminate_0_covering"]
    assert cp.asnumpy(got).tobytes() == want.tobytes()
