"""Matrix products of half values into f32 sums (`emit.tensor`): where the product fills the device, the
tiles entry point runs it on the tensor cores' 16 x 8 x 16 tiles, whose sums are a float reduction's, within
n·ε·Σ|aₖbₖ| of rustc's (ε = 2⁻²³, docs/kernels.md); where the GPU has no tensor cores (the emulated device,
HIP) the same tiles add the terms lane by lane in k order, as rustc does, bit for bit. Below the fill the
covering entry point runs one thread per output, bit for bit too. A product with `mul_add` is a chain Rust
fixes, never reassociated.

Tests that take `device` run on the emulated device and, under `-m gpu`, on the GPU."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ml_dtypes = pytest.importorskip("ml_dtypes")

SOURCE = Path(__file__).parent / "kernels" / "products.rs"
TILE_ITERATIONS_PER_THREAD = 8  # 128 x 128 iterations a block, against a multiprocessor's 2048 threads
EPSILON = 2.0 ** -23


def entry_for(device, outputs: int) -> str:
    return "tiles" if outputs >= TILE_ITERATIONS_PER_THREAD * device.grid_threads() else "covering"


def halves(dtype, count: int, seed) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(count).astype(dtype)


def assert_within_reduction_bound(got: np.ndarray, want: np.ndarray, magnitudes: np.ndarray, n: int) -> None:
    """`got` within n·ε·Σ|aₖbₖ| of `want`, element by element (`magnitudes`: Σ|aₖbₖ|)."""
    error = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(error <= n * EPSILON * magnitudes), float(np.max(error / np.maximum(magnitudes, 1e-300)))


def magnitudes_nt(a: np.ndarray, b: np.ndarray, m: int, n: int, p: int) -> np.ndarray:
    wide = lambda x: np.abs(x.astype(np.float64))  # noqa: E731
    return (wide(a).reshape(m, n) @ wide(b).reshape(p, n).T).ravel()


@pytest.mark.parametrize("m, n, p", [(128, 48, 127), (130, 37, 131), (200, 100, 96)],
                         ids=["just below one tile a multiprocessor", "across the tiles' and k's edges",
                              "several tiles, k past three slices"])
def test_a_bf16_product_into_f32_is_within_the_reduction_bound_of_rustcs(device, rust, kernels, m, n, p) -> None:
    a, b = halves(ml_dtypes.bfloat16, m * n, [m, n]), halves(ml_dtypes.bfloat16, p * n, [p, n])
    want, got = np.full(m * p, np.nan, np.float32), np.full(m * p, np.nan, np.float32)
    rust.product_nt(want, a, b, 0, m, n, p)
    kernels.product_nt(got, a, b, 0, m, n, p)
    assert kernels.product_nt.last_variants == [f"rs2gpu_product_nt_0_{entry_for(device, m * p)}"]
    assert_within_reduction_bound(got, want, magnitudes_nt(a, b, m, n, p), n)


def test_the_lane_by_lane_tiles_add_in_rusts_order(emulated_device, rust) -> None:
    m, n, p = 130, 37, 131
    kernels = emulated_device.load(SOURCE)
    a, b = halves(ml_dtypes.bfloat16, m * n, 1), halves(ml_dtypes.bfloat16, p * n, 2)
    want, got = np.full(m * p, np.nan, np.float32), np.full(m * p, np.nan, np.float32)
    rust.product_nt(want, a, b, 0, m, n, p)
    kernels.product_nt(got, a, b, 0, m, n, p)
    assert kernels.product_nt.last_variants == ["rs2gpu_product_nt_0_tiles"]
    assert got.tobytes() == want.tobytes()
    heads, tokens, width = 2, 130, 40
    q, k = halves(ml_dtypes.bfloat16, tokens * heads * width, 3), halves(ml_dtypes.bfloat16, tokens * heads * width, 4)
    want = np.full(heads * tokens * tokens, np.nan, np.float32)
    got = np.full(heads * tokens * tokens, np.nan, np.float32)
    rust.scores_per_head(want, q, k, heads, width)
    kernels.scores_per_head(got, q, k, heads, width)
    assert kernels.scores_per_head.last_variants == ["rs2gpu_scores_per_head_0_tiles"]
    assert got.tobytes() == want.tobytes()


def test_a_product_from_a_later_first_row_writes_only_its_rows(device, rust, kernels) -> None:
    first, m, n, p = 70, 200, 33, 129
    a, b = halves(ml_dtypes.bfloat16, m * n, 3), halves(ml_dtypes.bfloat16, p * n, 4)
    want, got = np.full(m * p, 7, np.float32), np.full(m * p, 7, np.float32)
    rust.product_nt(want, a, b, first, m, n, p)
    kernels.product_nt(got, a, b, first, m, n, p)
    assert np.all(got[:first * p] == 7)
    assert_within_reduction_bound(got[first * p:], want[first * p:],
                                  magnitudes_nt(a, b, m, n, p)[first * p:], n)


def test_an_f16_product_with_strided_columns_rounds_each_sum_once_to_f16(device, rust, kernels) -> None:
    m, n, p = 150, 45, 140
    a, b = halves(np.float16, m * n, 5), halves(np.float16, n * p, 6)
    want, got = np.zeros(m * p, np.float16), np.zeros(m * p, np.float16)
    rust.product_nn(want, a, b, m, n, p)
    kernels.product_nn(got, a, b, m, n, p)
    assert kernels.product_nn.last_variants == [f"rs2gpu_product_nn_0_{entry_for(device, m * p)}"]
    # each f16 result is the f32 sum rounded once: within the bound plus half an f16 ulp of the sum
    sums = np.abs(a.astype(np.float64)).reshape(m, n) @ np.abs(b.astype(np.float64)).reshape(n, p)
    ulp = np.spacing(np.abs(want).astype(np.float16)).astype(np.float64)
    error = np.abs(got.astype(np.float64) - want.astype(np.float64))
    assert np.all(error <= n * EPSILON * sums.ravel() + ulp)


def test_a_product_of_transposed_operands_is_within_the_reduction_bound(device, rust, kernels) -> None:
    m, n, p = 140, 50, 135
    a, b = halves(ml_dtypes.bfloat16, n * m, 7), halves(ml_dtypes.bfloat16, n * p, 8)
    want, got = np.full(m * p, np.nan, np.float32), np.full(m * p, np.nan, np.float32)
    rust.product_tn(want, a, b, m, n, p)
    kernels.product_tn(got, a, b, m, n, p)
    wide = lambda x: np.abs(x.astype(np.float64))  # noqa: E731
    assert_within_reduction_bound(got, want, (wide(a).reshape(n, m).T @ wide(b).reshape(n, p)).ravel(), n)


def test_a_product_per_head_runs_on_the_tiles_of_each_head(device, rust, kernels) -> None:
    heads, tokens, width = 2, 130, 40  # 2 x 130² outputs; k ends inside a slice
    q, k = (halves(ml_dtypes.bfloat16, tokens * heads * width, seed) for seed in (13, 14))
    want = np.full(heads * tokens * tokens, np.nan, np.float32)
    got = np.full(heads * tokens * tokens, np.nan, np.float32)
    rust.scores_per_head(want, q, k, heads, width)
    kernels.scores_per_head(got, q, k, heads, width)
    assert kernels.scores_per_head.last_variants == [f"rs2gpu_scores_per_head_0_{entry_for(device, got.size)}"]
    wide = lambda x: np.abs(x.astype(np.float64)).reshape(tokens, heads, width).transpose(1, 0, 2)  # noqa: E731
    magnitudes = np.einsum("htd,hsd->hts", wide(q), wide(k)).ravel()
    assert_within_reduction_bound(got, want, magnitudes, width)


def test_a_fused_product_is_no_reduction_and_stays_rustcs_bit_for_bit(device, rust, kernels) -> None:
    m, n, p = 130, 37, 131
    a, b = halves(ml_dtypes.bfloat16, m * n, 9), halves(ml_dtypes.bfloat16, p * n, 10)
    want, got = np.full(m * p, np.nan, np.float32), np.full(m * p, np.nan, np.float32)
    rust.product_fused(want, a, b, m, n, p)
    kernels.product_fused(got, a, b, m, n, p)
    assert all("tiles" not in name for name in kernels.product_fused.last_variants)
    assert got.tobytes() == want.tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("kernel, dtype", [("product_nt", "bfloat16"), ("product_tn", "bfloat16")])
def test_on_the_gpu_a_product_that_fills_it_runs_on_the_tensor_cores_within_the_bound(rust, kernel, dtype) -> None:
    from tests.support.devices import CudaDevice
    device = CudaDevice()
    kernels = device.load(SOURCE)
    m, n, p = 1536, 40, 1536  # 8 outputs per thread an H100 or H200 holds; k ends inside a slice
    a, b = halves(getattr(ml_dtypes, dtype), m * n, 11), halves(getattr(ml_dtypes, dtype), n * p, 12)
    want, got = np.full(m * p, np.nan, np.float32), np.full(m * p, np.nan, np.float32)
    arguments = (a, b, 0, m, n, p) if kernel == "product_nt" else (a, b, m, n, p)
    getattr(rust, kernel)(want, *arguments)
    getattr(kernels, kernel)(got, *arguments)
    assert getattr(kernels, kernel).last_variants == [f"rs2gpu_{kernel}_0_tiles"]
    wide = lambda x: np.abs(x.astype(np.float64))  # noqa: E731
    magnitudes = (wide(a).reshape(m, n) @ wide(b).reshape(p, n).T if kernel == "product_nt"
                  else wide(a).reshape(n, m).T @ wide(b).reshape(n, p)).ravel()
    assert_within_reduction_bound(got, want, magnitudes, n)
